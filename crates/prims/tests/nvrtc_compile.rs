//! Every kernel source of the crate, and the warp test kernels of
//! warpmc-testkit that exercise its header, compiles with NVRTC for sm_90 —
//! checked wherever NVRTC loads, GPU or not
//! (`WARPMC_NVRTC=/path/libnvrtc.so.13`), so a kernel typo shows up before a
//! GPU run. Skipped with a printed reason where NVRTC is missing.

use warpmc_gpu::{Target, compile};

#[test]
fn every_kernel_compiles_for_sm_90() {
    let target = Target::Cubin { arch: 90 };
    let mut sources = vec![warpmc_prims::kernels::with_warp_header(warpmc_gpu::KernelSource::new(
        "empty.cu",
        "#include \"warp.cuh\"\nextern \"C\" __global__ void empty() {}",
    ))];
    sources.extend(warpmc_prims::kernels::all_sources());
    sources.extend(warpmc_testkit::warp::sources());
    for src in sources {
        match compile(&src, &target) {
            Ok(image) => assert!(!image.is_empty(), "{}: empty image", src.name()),
            Err(warpmc_gpu::GpuError::NoDevice(why)) => {
                use std::io::Write;
                let _ = writeln!(std::io::stderr().lock(), "SKIPPED every_kernel_compiles_for_sm_90: {why}");
                return;
            }
            Err(e) => panic!("{e}"),
        }
        if std::env::var("WARPMC_PRINT_COMPILED").is_ok() {
            println!("compiled {}", src.name());
        }
    }
}
