//! The GPU layer: discovery without a GPU, and on a GPU compilation, the
//! caches, error reporting, launches and timing.

use warpmc_gpu::{Gpu, GpuError, KernelCache, KernelSource, grid_1d, probe};

/// Discovery answers with reasons, never a panic, whatever the machine has.
#[test]
fn probe_never_panics_and_agrees_with_open() {
    let p = probe();
    match (p.unusable_reason(), Gpu::open_default()) {
        (None, Ok(gpu)) => assert!(!gpu.info().name.is_empty()),
        (Some(reason), Err(GpuError::NoDevice(r))) => {
            assert!(!reason.is_empty());
            assert!(!r.is_empty());
        }
        (reason, opened) => panic!("probe says {reason:?} but open says {:?}", opened.map(|g| g.info().name.clone())),
    }
}

#[test]
fn no_device_error_reads_as_one_clear_line() {
    let e = GpuError::NoDevice("the driver reports no devices".into());
    assert_eq!(e.to_string(), "no CUDA device (the driver reports no devices)");
}

#[test]
fn a_missing_device_ordinal_is_an_error_not_a_panic() {
    match Gpu::open(10_000) {
        Err(GpuError::InvalidArgument(m)) => assert!(m.contains("10000"), "{m}"),
        Err(GpuError::NoDevice(_)) => {} // no GPU here at all
        other => panic!("unexpected: {:?}", other.map(|g| g.info().ordinal)),
    }
}

const SQUARES: &str = r#"
#include "helpers.cuh"
extern "C" __global__ void squares(const unsigned* in, unsigned* out, unsigned n) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = square(in[i]) + OFFSET;
}
"#;

fn squares_source(offset: u32) -> KernelSource {
    KernelSource::new("squares.cu", SQUARES)
        .header("helpers.cuh", "#pragma once\n__device__ unsigned square(unsigned x) { return x * x; }\n")
        .option(format!("-DOFFSET={offset}u"))
}

#[test]
fn kernels_compile_launch_and_match_the_cpu() {
    let Some(gpu) = warpmc_testkit::gpu_or_skip("kernels_compile_launch_and_match_the_cpu") else { return };
    let gpu = gpu.with_kernel_cache(KernelCache::MemoryOnly);
    let kernel = gpu.module(&squares_source(7)).unwrap().kernel("squares").unwrap();
    for n in [1usize, 31, 33, 1023, (1 << 20) + 7] {
        let input: Vec<u32> = (0..n as u32).map(|i| i.wrapping_mul(2_654_435_761)).collect();
        let din = gpu.upload(&input).unwrap();
        let mut out = gpu.alloc_zeros::<u32>(n).unwrap();
        gpu.memset_bytes(&mut out, 0xff).unwrap();
        let n32 = n as u32;
        // SAFETY: squares(const unsigned*, unsigned*, unsigned) reads and
        // writes n elements.
        unsafe { gpu.launch(&kernel).buf(&din).buf_mut(&mut out).arg(&n32).run(grid_1d(n, 256)).unwrap() };
        let got = gpu.download(&out).unwrap();
        let want: Vec<u32> = input.iter().map(|x| x.wrapping_mul(*x).wrapping_add(7)).collect();
        assert_eq!(got, want, "n = {n}");
    }
    // The same source again is a memory-cache hit; another option is a new
    // compilation.
    gpu.module(&squares_source(7)).unwrap();
    gpu.module(&squares_source(8)).unwrap();
    let s = gpu.cache_stats();
    assert_eq!((s.compiles, s.memory_hits, s.disk_hits), (2, 1, 0), "{s:?}");
}

#[test]
fn compiled_kernels_are_reused_from_the_disk_cache() {
    let Some(gpu) = warpmc_testkit::gpu_or_skip("compiled_kernels_are_reused_from_the_disk_cache") else {
        return;
    };
    let dir = warpmc_testkit::scratch_dir("disk-cache").join("cache");
    let _ = std::fs::remove_dir_all(&dir);
    let gpu = gpu.with_kernel_cache(KernelCache::Disk(dir.clone()));
    gpu.module(&squares_source(1)).unwrap();
    assert_eq!(gpu.cache_stats().compiles, 1);
    let files: Vec<_> = std::fs::read_dir(&dir).unwrap().flatten().collect();
    assert_eq!(files.len(), 1, "one cache file expected: {files:?}");
    let file = files[0].path();
    let name = file.file_name().unwrap().to_string_lossy().into_owned();
    assert!(name.starts_with("squares_cu-") && (name.ends_with(".cubin") || name.ends_with(".ptx")), "{name}");

    // A fresh handle (as in a new process) finds it on disk.
    let again = Gpu::open_default().unwrap().with_kernel_cache(KernelCache::Disk(dir.clone()));
    let kernel = again.module(&squares_source(1)).unwrap().kernel("squares").unwrap();
    let s = again.cache_stats();
    assert_eq!((s.compiles, s.disk_hits), (0, 1), "{s:?}");
    drop(kernel);

    // A damaged cache file is detected by the driver, recompiled and
    // replaced.
    std::fs::write(&file, b"not a cubin").unwrap();
    let third = Gpu::open_default().unwrap().with_kernel_cache(KernelCache::Disk(dir.clone()));
    third.module(&squares_source(1)).unwrap().kernel("squares").unwrap();
    assert_eq!(third.cache_stats().compiles, 1);
    assert_ne!(std::fs::read(&file).unwrap(), b"not a cubin");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn compile_errors_show_the_nvrtc_log_with_file_names() {
    let Some(gpu) = warpmc_testkit::gpu_or_skip("compile_errors_show_the_nvrtc_log_with_file_names") else {
        return;
    };
    let gpu = gpu.with_kernel_cache(KernelCache::MemoryOnly);
    let broken =
        KernelSource::new("broken_kernel.cu", "#include \"bad_header.cuh\"\nextern \"C\" __global__ void k() {}\n")
            .header("bad_header.cuh", "#pragma once\n__device__ int f() { return undefined_name; }\n");
    match gpu.module(&broken) {
        Err(GpuError::Compile { name, target, log }) => {
            assert_eq!(name, "broken_kernel.cu");
            assert!(target.starts_with("sm_") || target.starts_with("compute_"));
            assert!(log.contains("bad_header.cuh"), "log lacks the header's name:\n{log}");
            assert!(log.contains("undefined_name"), "log lacks the error:\n{log}");
            let shown = GpuError::Compile { name, target, log }.to_string();
            assert!(shown.starts_with("NVRTC could not compile broken_kernel.cu"), "{shown}");
        }
        Err(e) => panic!("expected a compile error, got {e}"),
        Ok(_) => panic!("a broken kernel compiled"),
    }
}

#[test]
fn a_missing_kernel_name_is_reported() {
    let Some(gpu) = warpmc_testkit::gpu_or_skip("a_missing_kernel_name_is_reported") else { return };
    let module = gpu.module(&squares_source(0)).unwrap();
    match module.kernel("cubes") {
        Err(GpuError::MissingKernel { kernel, module }) => {
            assert_eq!((kernel.as_str(), module.as_str()), ("cubes", "squares.cu"))
        }
        other => panic!("unexpected {other:?}"),
    }
}

#[test]
fn event_timer_measures_device_time() {
    let Some(gpu) = warpmc_testkit::gpu_or_skip("event_timer_measures_device_time") else { return };
    let spin = KernelSource::new(
        "spin.cu",
        "extern \"C\" __global__ void spin(long long cycles, unsigned* out) {
             long long start = clock64();
             while (clock64() - start < cycles) {}
             if (threadIdx.x == 0) out[blockIdx.x] = 1;
         }",
    );
    let kernel = gpu.module(&spin).unwrap().kernel("spin").unwrap();
    let mut out = gpu.alloc_zeros::<u32>(1).unwrap();
    let time = |cycles: i64, out: &mut warpmc_gpu::DeviceBuffer<u32>| {
        let timer = gpu.start_timer().unwrap();
        // SAFETY: spin(long long, unsigned*) writes out[0] from one block.
        unsafe { gpu.launch(&kernel).arg(&cycles).buf_mut(out).run(grid_1d(1, 32)).unwrap() };
        timer.stop_ms().unwrap()
    };
    time(1000, &mut out); // warm-up
    let short = time(1_000_000, &mut out);
    let long = time(20_000_000, &mut out);
    // At 1-2 GHz, 2·10⁷ cycles take 10-20 ms; the ratio is what matters.
    assert!(short > 0.0 && long > 5.0 * short, "short {short} ms, long {long} ms");
    assert_eq!(gpu.download(&out).unwrap(), vec![1]);
}

#[test]
fn memory_info_is_consistent() {
    let Some(gpu) = warpmc_testkit::gpu_or_skip("memory_info_is_consistent") else { return };
    let warpmc_gpu::MemoryInfo { free, total } = gpu.memory_info().unwrap();
    assert!(free <= total && total == gpu.info().total_memory, "{free} {total} {}", gpu.info().total_memory);
    let mut buf = gpu.alloc_zeros::<u8>(0).unwrap();
    assert!(buf.is_empty());
    assert!(matches!(gpu.copy_to_device(&[1u8], &mut buf), Err(GpuError::InvalidArgument(_))));
}

#[test]
fn nccl_sums_and_moves_rows_between_every_gpu() {
    let Some(first) = warpmc_testkit::gpu_or_skip("nccl_sums_and_moves_rows_between_every_gpu") else { return };
    let lib = match warpmc_gpu::nccl::library() {
        Ok(lib) => lib,
        Err(e) => {
            let required = std::env::var("WARPMC_REQUIRE_GPU").is_ok_and(|v| v == "1");
            assert!(!required, "WARPMC_REQUIRE_GPU=1 but {e}");
            eprintln!("SKIPPED nccl_sums_and_moves_rows_between_every_gpu: {e}");
            return;
        }
    };
    assert_eq!(std::env::var("NCCL_NVLS_ENABLE").as_deref(), Ok("0"), "NVLink SHARP must be off before NCCL starts");
    let n = probe().devices.map_or(1, |d| d.len());
    let mut gpus = vec![first];
    gpus.extend((1..n).map(|i| Gpu::open(i).unwrap()));
    eprintln!("NCCL {:?} ({}) over {n} GPU(s)", lib.version(), lib.name());
    let comms = warpmc_gpu::nccl::Communicator::for_devices(&gpus).unwrap();
    // Rank r holds r·1000 + i, plus odd values near the top of u64's range
    // whose sum must come back exact.
    let len = 1037;
    let host = |r: usize| -> Vec<u64> {
        (0..len).map(|i| if i % 7 == 0 { u64::MAX / 8 - i as u64 } else { (r * 1000 + i) as u64 }).collect()
    };
    let mut bufs: Vec<_> = gpus.iter().enumerate().map(|(r, g)| g.upload(&host(r)).unwrap()).collect();
    // Every rank's row to the next rank (a ring; a lone GPU to itself) into
    // a second buffer, and the sum over ranks in place, one group (a
    // thread driving several devices must queue them together).
    let mut rows: Vec<_> = gpus.iter().map(|g| g.alloc_zeros::<u64>(len).unwrap()).collect();
    lib.group(|| {
        for (r, ((c, g), b)) in comms.iter().zip(&gpus).zip(&bufs).enumerate() {
            c.send(g, b, 0..len, (r + 1) % n)?;
        }
        for (r, ((c, g), row)) in comms.iter().zip(&gpus).zip(&mut rows).enumerate() {
            c.recv(g, row, 0..len, (r + n - 1) % n)?;
        }
        Ok(())
    })
    .unwrap();
    lib.group(|| {
        for ((c, g), b) in comms.iter().zip(&gpus).zip(&mut bufs) {
            c.all_reduce_sum(g, b)?;
        }
        Ok(())
    })
    .unwrap();
    let sum: Vec<u64> = (0..len).map(|i| (0..n).map(|r| host(r)[i]).fold(0u64, u64::wrapping_add)).collect();
    for (r, g) in gpus.iter().enumerate() {
        assert_eq!(g.download(&rows[r]).unwrap(), host((r + n - 1) % n), "rank {r}: the row received");
        assert_eq!(g.download(&bufs[r]).unwrap(), sum, "rank {r}: the sum");
        comms[r].async_error().unwrap();
    }
    // Out-of-range rows and peers are errors, not undefined behaviour.
    let e = comms[0].send(&gpus[0], &bufs[0], 0..len + 1, 0).unwrap_err().to_string();
    assert!(e.contains("of a device buffer of 1037"), "{e}");
    let e = comms[0].send(&gpus[0], &bufs[0], 0..1, n).unwrap_err().to_string();
    assert!(e.contains("peer"), "{e}");
}
