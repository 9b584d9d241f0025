//! The CUDA backend against the CPU backend: on the sample genomes the GPU
//! image must sit within the Monte Carlo noise of the CPU's (the PSNR
//! between two CPU renders with different seeds), for every chaos-game
//! variant. Skipped with a printed reason where there is no GPU.

use std::path::Path;

use warpmc_flame::genome::{Flame, ParseOptions, parse_file};
use warpmc_flame::image::{psnr_pixels, quantized_pixels};
use warpmc_flame::render::cuda::{Accumulation, CudaRenderer, IterationOptions, Selection, Shuffle};
use warpmc_flame::render::{Precision, RenderSettings, render};

/// Parse options that find flam3-palettes.xml next to the checkout
/// (../shared/palettes) when it is there, and in the usual places otherwise:
/// the GPU machines have no flam3 installed, and this test runs from the
/// crate's directory, where the relative default does not reach.
fn options(skip_unknown_variations: bool) -> ParseOptions {
    let shared = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/palettes/flam3-palettes.xml");
    ParseOptions { skip_unknown_variations, palette_file: shared.exists().then_some(shared) }
}

fn genome(name: &str) -> Flame {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/flames").join(name);
    parse_file(&path, &options(false)).unwrap().flames.remove(0)
}

fn settings(seed: u64, size_scale: f64, quality_scale: f64) -> RenderSettings {
    RenderSettings { seed, size_scale, quality_scale, ..RenderSettings::default() }
}

/// PSNR of the GPU render against CPU render A, and the noise floor (CPU A
/// against CPU B).
fn gap(r: &CudaRenderer, f: &Flame, s: f64, q: f64, precision: Precision) -> (f64, f64) {
    let one = std::slice::from_ref(f);
    let cpu_a = render(one, f.time, &RenderSettings { precision, ..settings(1, s, q) }).unwrap();
    let cpu_b = render(one, f.time, &RenderSettings { precision, ..settings(2, s, q) }).unwrap();
    let gpu = r.render(one, f.time, &RenderSettings { precision, ..settings(3, s, q) }).unwrap();
    let (a, b, g) = (quantized_pixels(&cpu_a), quantized_pixels(&cpu_b), quantized_pixels(&gpu));
    let ratio = gpu.stats.iterations as f64 / cpu_a.stats.iterations as f64;
    assert!((ratio - 1.0).abs() < 0.02, "GPU did {} iterations, CPU {}", gpu.stats.iterations, cpu_a.stats.iterations);
    (psnr_pixels(&g, &a), psnr_pixels(&b, &a))
}

#[test]
fn gpu_renders_within_the_cpu_noise_floor() {
    let Some(gpu) = warpmc_testkit::gpu_or_skip("gpu_renders_within_the_cpu_noise_floor") else { return };
    let r = CudaRenderer::new(gpu);
    for name in [
        "test.flam3",
        "electricsheep.244.00216.flam3",
        "electricsheep.244.80674.flam3",
        "electricsheep.244.80692.flam3",
        "electricsheep.244.80725.flam3",
    ] {
        let f = genome(name);
        let (p, floor) = gap(&r, &f, 0.25, 0.2, Precision::F32);
        println!("{name}: GPU vs CPU {p:.2} dB, CPU vs CPU {floor:.2} dB");
        assert!(p > floor - 0.5, "{name}: GPU {p:.2} dB against a noise floor of {floor:.2} dB");
    }
}

#[test]
fn every_gpu_variant_renders_within_the_noise_floor() {
    let Some(gpu) = warpmc_testkit::gpu_or_skip("every_gpu_variant_renders_within_the_noise_floor") else {
        return;
    };
    let f = genome("electricsheep.244.80692.flam3");
    let d = IterationOptions::default();
    let variants = [
        IterationOptions { selection: Selection::PerThread, shuffle: Shuffle::None, ..d.clone() },
        IterationOptions { selection: Selection::WarpUniform, shuffle: Shuffle::Simple, ..d.clone() },
        IterationOptions { selection: Selection::WarpUniform, shuffle: Shuffle::Better, ..d.clone() },
        IterationOptions { accumulation: Accumulation::WarpAggregated, ..d.clone() },
        IterationOptions { accumulation: Accumulation::Plain, ..d.clone() },
        IterationOptions { accumulation: Accumulation::SharedCache, real: Precision::F64, block: 1024, ..d.clone() },
        IterationOptions { real: Precision::F64, block: 512, ..d.clone() },
        IterationOptions { block: 1024, iters_per_launch: 7, blocks_per_sm: 1, ..d.clone() },
        // Strips: the histogram is about 890 × 690 cells here, so this is
        // two strips in f32 buckets and four or five in f64 (each keeps
        // some 150 rows of margins for density estimation and the filter).
        IterationOptions { max_buffer_bytes: Some(17_000_000), ..d.clone() },
    ];
    for o in variants {
        let r = CudaRenderer::new(gpu.clone()).with_options(o.clone()).unwrap();
        for precision in [Precision::F32, Precision::F64] {
            let (p, floor) = gap(&r, &f, 0.25, 0.2, precision);
            println!("{o:?} {precision:?}: GPU vs CPU {p:.2} dB, CPU vs CPU {floor:.2} dB");
            // Warp-uniform choice is measurably noisier at equal samples
            // (docs/benchmarks/flame.md); per-thread choice must sit on the
            // floor.
            let slack = if o.selection == Selection::WarpUniform { 1.5 } else { 0.5 };
            assert!(p > floor - slack, "{o:?}: GPU {p:.2} dB against a noise floor of {floor:.2} dB");
        }
    }
    // Warp-uniform choice without any shuffle is the variant the shuffle
    // exists for: it must still render, if noisier.
    let r = CudaRenderer::new(gpu)
        .with_options(IterationOptions {
            selection: Selection::WarpUniform,
            shuffle: Shuffle::None,
            ..IterationOptions::default()
        })
        .unwrap();
    let (p, floor) = gap(&r, &f, 0.25, 0.2, Precision::F32);
    println!("warp choice, no shuffle: GPU vs CPU {p:.2} dB, CPU vs CPU {floor:.2} dB");
    assert!(p > floor - 6.0);
}

/// xaos (each xform's choice weights depend on the previous xform) and a
/// final xform, on Fractorium's sample genomes (their non-flam3 variations
/// dropped: both backends render the same parsed flame).
#[test]
fn xaos_genomes_render_within_the_cpu_noise_floor() {
    let Some(gpu) = warpmc_testkit::gpu_or_skip("xaos_genomes_render_within_the_cpu_noise_floor") else {
        return;
    };
    let r = CudaRenderer::new(gpu);
    let opts = options(true);
    for name in [
        "fractorium-bench-tatasz_springcrown_manysimplexforms.flame",
        "fractorium-bench-zy0rg_six_bigcomplexcode.flame",
    ] {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/flames").join(name);
        let f = parse_file(&path, &opts).unwrap().flames.remove(0);
        let xaos = f.xforms.iter().any(|x| x.chaos.iter().any(|&c| c != 1.0));
        assert!(xaos, "{name} was expected to use xaos");
        let (p, floor) = gap(&r, &f, 0.25, 0.1, Precision::F32);
        println!("{name}: GPU vs CPU {p:.2} dB, CPU vs CPU {floor:.2} dB (final xform: {})", f.final_xform.is_some());
        assert!(p > floor - 0.5, "{name}: GPU {p:.2} dB against a noise floor of {floor:.2} dB");
    }
}

/// A frame of which not even one strip fits in the device memory allowed is
/// one error naming the GPU memory needed and free; a frame larger than the
/// device's memory is planned in strips, its host memory counted.
#[test]
fn frames_beyond_gpu_memory_are_refused_or_split() {
    let Some(gpu) = warpmc_testkit::gpu_or_skip("frames_beyond_gpu_memory_are_refused_or_split") else { return };
    let f = genome("test.flam3");
    let one = std::slice::from_ref(&f);
    let tight = IterationOptions { max_buffer_bytes: Some(4096), ..IterationOptions::default() };
    let r = CudaRenderer::new(gpu.clone()).with_options(tight).unwrap();
    let e = r.render(one, f.time, &settings(1, 0.25, 0.01)).unwrap_err();
    assert!(matches!(e, warpmc_flame::FlameError::OutOfDeviceMemory { .. }), "{e}");
    let e = e.to_string();
    assert!(e.starts_with("one strip of the 160 × 120 frame (") && e.contains(" of GPU memory but only "), "{e}");

    // 64 times the area of the device's memory in histogram cells.
    let free = gpu.memory_info().unwrap().free;
    let side = ((free as f64 * 64.0 / 36.0).sqrt() / 640.0).ceil();
    let cost = CudaRenderer::new(gpu).frame_cost(one, f.time, &settings(1, side, 1e-6)).unwrap();
    assert!(cost.strips > 1 && cost.device_bytes <= free, "{cost:?}");
    assert!(cost.host_bytes >= u64::from(cost.width) * u64::from(cost.height) * 32, "{cost:?}");
}

/// Frames of an animation (two flames, many temporal samples: each pass
/// runs one job per sample, launched without waiting) on a renderer that
/// keeps its buffers between frames, against the CPU's noise floor; a
/// frame of another size in between must not disturb the next.
#[test]
fn animation_frames_on_kept_buffers_render_within_the_cpu_noise_floor() {
    let name = "animation_frames_on_kept_buffers_render_within_the_cpu_noise_floor";
    let Some(gpu) = warpmc_testkit::gpu_or_skip(name) else { return };
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/flames/test.flam3");
    let flames = parse_file(&path, &options(false)).unwrap().flames;
    assert!(flames.len() >= 2);
    let r = CudaRenderer::new(gpu).keeping_buffers();
    let anim = |seed: u64, size_scale: f64, temporal: u32| RenderSettings {
        temporal_samples: Some(temporal),
        ..settings(seed, size_scale, 2.0)
    };
    for (time, temporal, size) in [(30.0, 100, 0.5), (31.0, 1000, 0.5), (32.0, 7, 0.37), (33.0, 1000, 0.5)] {
        let cpu_a = render(&flames, time, &anim(1, size, temporal)).unwrap();
        let cpu_b = render(&flames, time, &anim(2, size, temporal)).unwrap();
        let g = r.render(&flames, time, &anim(3, size, temporal)).unwrap();
        assert_eq!((g.width, g.height), (cpu_a.width, cpu_a.height));
        // Each job overshoots by less than a block of threads; the points'
        // first 15 iterations (the fuse) are not plotted, 2 % of these
        // small frames.
        let ratio = g.stats.iterations as f64 / cpu_a.stats.iterations as f64;
        assert!(
            (0.96..1.02).contains(&ratio),
            "GPU did {} iterations, CPU {}",
            g.stats.iterations,
            cpu_a.stats.iterations
        );
        let (a, b, q) = (quantized_pixels(&cpu_a), quantized_pixels(&cpu_b), quantized_pixels(&g));
        let (p, floor) = (psnr_pixels(&q, &a), psnr_pixels(&b, &a));
        println!("t = {time}, {temporal} temporal samples: GPU vs CPU {p:.2} dB, CPU vs CPU {floor:.2} dB");
        assert!(p > floor - 0.5, "t = {time}: GPU {p:.2} dB against a noise floor of {floor:.2} dB");
    }
}
