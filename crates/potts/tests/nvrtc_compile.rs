//! The Potts kernels compile with NVRTC for sm_90 for every q a module is
//! built for — checked wherever NVRTC loads, GPU or not
//! (`WARPMC_NVRTC=/path/libnvrtc.so.13`), so a kernel typo shows up before
//! a GPU run. Skipped with a printed reason where NVRTC is missing.
#![cfg(feature = "cuda")]

use warpmc_gpu::{GpuError, Target, compile};
use warpmc_potts::cuda::kernel_source;

#[test]
fn potts_kernels_compile_for_every_q() {
    let target = Target::Cubin { arch: 90 };
    for q in [2, 3, 4, 5, 8, 9, 16, 17, 255] {
        match compile(&kernel_source(q), &target) {
            Ok(image) => assert!(!image.is_empty(), "q = {q}: empty image"),
            Err(GpuError::NoDevice(why)) => {
                use std::io::Write;
                let _ = writeln!(std::io::stderr().lock(), "SKIPPED potts_kernels_compile_for_every_q: {why}");
                return;
            }
            Err(e) => panic!("q = {q}: {e}"),
        }
    }
}

#[test]
fn potts_ensemble_kernels_compile_for_every_q() {
    let target = Target::Cubin { arch: 90 };
    for q in [2, 3, 4, 5, 9, 16, 17, 255] {
        match compile(&warpmc_potts::cuda_ensemble::kernel_source(q), &target) {
            Ok(image) => assert!(!image.is_empty(), "q = {q}: empty image"),
            Err(GpuError::NoDevice(why)) => {
                use std::io::Write;
                let _ = writeln!(std::io::stderr().lock(), "SKIPPED potts_ensemble_kernels_compile_for_every_q: {why}");
                return;
            }
            Err(e) => panic!("q = {q}: {e}"),
        }
    }
}

#[test]
fn potts_strip_kernels_compile_for_every_q() {
    let target = Target::Cubin { arch: 90 };
    for q in [2, 3, 9, 16, 255] {
        match compile(&warpmc_potts::cuda_strip::kernel_source(q), &target) {
            Ok(image) => assert!(!image.is_empty(), "q = {q}: empty image"),
            Err(GpuError::NoDevice(why)) => {
                use std::io::Write;
                let _ = writeln!(std::io::stderr().lock(), "SKIPPED potts_strip_kernels_compile_for_every_q: {why}");
                return;
            }
            Err(e) => panic!("q = {q}: {e}"),
        }
    }
}
