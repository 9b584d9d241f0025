//! The benchmark kernels (kernels/shuffle_bench.cu, one per element type,
//! and kernels/potts_baseline.cu) compile with NVRTC for sm_90 —
//! checked wherever NVRTC loads, GPU or not
//! (`WARPMC_NVRTC=/path/libnvrtc.so.13`), so a kernel typo shows up before a
//! GPU run. Skipped with a printed reason where NVRTC is missing.

use warpmc_gpu::{Target, compile};

#[test]
fn bench_kernels_compile_for_sm_90() {
    let target = Target::Cubin { arch: 90 };
    let mut sources = warpmc_bench::shuffle::sources();
    sources.push(warpmc_bench::potts_baseline::source());
    for src in sources {
        match compile(&src, &target) {
            Ok(image) => assert!(!image.is_empty(), "{}: empty image", src.name()),
            Err(warpmc_gpu::GpuError::NoDevice(why)) => {
                use std::io::Write;
                let _ = writeln!(std::io::stderr().lock(), "SKIPPED bench_kernels_compile_for_sm_90: {why}");
                return;
            }
            Err(e) => panic!("{e}"),
        }
    }
}
