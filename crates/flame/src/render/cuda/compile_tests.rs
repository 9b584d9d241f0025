//! Every kernel the renderer can build compiles with NVRTC (no GPU needed;
//! skipped with a printed reason where NVRTC does not load, e.g. set
//! WARPMC_NVRTC to a libnvrtc): the chaos-game kernel of every genome in
//! examples/flames and tests/data, in both precisions, for every
//! combination of selection, shuffle and accumulation, and the finishing
//! kernels.
//!
//! Every distinct generated source goes through NVRTC's front end (PTX),
//! with the histogram in the chaos game's precision; the default options
//! and the variant with the most shared memory (the "better" shuffle and
//! the block cache, 1024 threads), with either histogram, go on to machine
//! code for sm_90, which also checks that the shared memory fits.

use std::collections::HashSet;
use std::io::Write;
use std::path::{Path, PathBuf};

use rayon::prelude::*;
use warpmc_gpu::{GpuError, KernelSource, Target, compile};

use super::codegen::generate;
use super::finish::finish_source;
use super::{Accumulation, IterationOptions, Selection, Shuffle};
use crate::genome::{Flame, ParseOptions, parse_file};
use crate::render::Precision;

/// A palette file with palettes 0 to 700 (all grey; flam3 numbers its own 0 to 700), for the test genomes
/// with numbered palettes: the palette does not change the kernel.
fn stand_in_palettes() -> PathBuf {
    let path = warpmc_testkit::scratch_dir("flame-compile").join("palettes.xml");
    let data = "00808080".repeat(256);
    let palettes: String =
        (0..=700).map(|n| format!("<palette number=\"{n}\" name=\"grey\" data=\"{data}\"/>\n")).collect();
    std::fs::write(&path, format!("<palettes>\n{palettes}</palettes>\n")).unwrap();
    path
}

/// Every flame of the sample genomes and of the test genomes (the inputs of
/// the interpolation tests; their outputs are flam3-genome's printouts).
fn genomes() -> Vec<(String, Flame)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut paths = Vec::new();
    for (dir, suffixes) in [
        (root.join("../../examples/flames"), [".flam3", ".flame"]),
        (root.join("tests/data/genomes"), [".flam3", ".flame"]),
        (root.join("tests/data/interpolate"), [".in.flam3", ".in.flam3"]),
    ] {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let p = entry.unwrap().path();
            if suffixes.iter().any(|s| p.to_string_lossy().ends_with(s)) {
                paths.push(p);
            }
        }
    }
    paths.sort();
    let opts = ParseOptions { strict: false, palette_file: Some(stand_in_palettes()) };
    let mut out = Vec::new();
    for p in paths {
        let parsed = parse_file(&p, &opts).unwrap_or_else(|e| panic!("{e}"));
        let name = p.file_name().unwrap().to_string_lossy().into_owned();
        out.extend(parsed.flames.into_iter().enumerate().map(|(i, f)| (format!("{name} #{i}"), f)));
    }
    assert!(out.len() >= 40, "{} flames: genomes missing", out.len());
    out
}

/// Every (selection, shuffle, accumulation) in `real` precision.
fn all_options(real: Precision) -> Vec<IterationOptions> {
    let block = if real == Precision::F64 { 1024 } else { 256 };
    let mut out = Vec::new();
    for selection in [Selection::PerThread, Selection::WarpUniform] {
        for shuffle in [Shuffle::None, Shuffle::Simple, Shuffle::Better] {
            for accumulation in [Accumulation::Plain, Accumulation::WarpAggregated, Accumulation::SharedCache] {
                out.push(IterationOptions {
                    selection,
                    shuffle,
                    accumulation,
                    real,
                    block,
                    ..IterationOptions::default()
                });
            }
        }
    }
    out
}

/// The variant with the most shared memory.
fn largest(real: Precision) -> IterationOptions {
    IterationOptions {
        selection: Selection::WarpUniform,
        shuffle: Shuffle::Better,
        accumulation: Accumulation::SharedCache,
        real,
        block: 1024,
        ..IterationOptions::default()
    }
}

/// A kernel to compile and what it stands for (for the failure message).
struct Job {
    what: String,
    source: KernelSource,
    code: String,
    target: Target,
}

#[test]
fn every_kernel_compiles_with_nvrtc() {
    const NAME: &str = "every_kernel_compiles_with_nvrtc";
    let (ptx, cubin) = (Target::Ptx { arch: 90 }, Target::Cubin { arch: 90 });
    let mut jobs = Vec::new();
    let mut seen = HashSet::new();
    for (name, cp) in genomes() {
        let count = super::backend::needs_count(std::slice::from_ref(&cp));
        for real in [Precision::F32, Precision::F64] {
            // Every variant with the histogram in the chaos game's
            // precision, to PTX.
            let variants = all_options(real).into_iter().map(|o| (o, real, ptx));
            // The default and the largest with either histogram, to
            // machine code.
            let full = [IterationOptions { real, ..IterationOptions::default() }, largest(real)];
            let full = full.into_iter().flat_map(|o| [Precision::F32, Precision::F64].map(|b| (o.clone(), b, cubin)));
            for (o, bucket, target) in variants.chain(full) {
                let g = generate(&cp, &o, bucket, count);
                if !seen.insert((g.code.clone(), o.real, o.block, target.name())) {
                    continue;
                }
                let what = format!("{name}, {o:?}, {bucket:?} histogram, {}", target.name());
                jobs.push(Job { what, source: g.source, code: g.code, target });
            }
        }
    }
    for bucket in [Precision::F32, Precision::F64] {
        let source = finish_source(bucket);
        jobs.push(Job { what: format!("finishing kernels, {bucket:?}"), source, code: String::new(), target: cubin });
    }
    let n = jobs.len();
    let failures: Vec<String> = jobs
        .par_iter()
        .filter_map(|job| match compile(&job.source, &job.target) {
            Ok(image) if !image.is_empty() => None,
            Ok(_) => Some(format!("{}: empty image", job.what)),
            Err(GpuError::NoDevice(why)) => Some(format!("SKIP {why}")),
            Err(e) => Some(format!("{}: {e}\n{}", job.what, job.code)),
        })
        .collect();
    // Written past the test harness's capture, as the GPU tests' skips are.
    let mut stderr = std::io::stderr().lock();
    if let Some(skip) = failures.iter().find(|f| f.starts_with("SKIP ")) {
        let _ = writeln!(stderr, "SKIPPED {NAME}: {}", &skip[5..]);
        return;
    }
    assert!(failures.is_empty(), "{} of {n} kernels failed:\n{}", failures.len(), failures.join("\n\n"));
    let _ = writeln!(stderr, "{NAME}: {n} kernels compiled");
}
