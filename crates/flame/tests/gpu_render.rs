//! The CUDA backend against the CPU backend: on the sample genomes the GPU
//! image must sit within the Monte Carlo noise of the CPU's (the PSNR
//! between two CPU renders with different seeds), for every chaos-game
//! variant. Skipped with a printed reason where there is no GPU.

use std::path::Path;

use warpmc_flame::genome::{Flame, ParseOptions, parse_file};
use warpmc_flame::image::{psnr_pixels, quantized_pixels};
use warpmc_flame::render::cuda::{Accumulation, CudaRenderer, IterationOptions, Selection, Shuffle};
use warpmc_flame::render::{Field, Precision, RenderSettings, RenderedFrame, render};

/// Parse options that find flam3-palettes.xml next to the checkout
/// (../shared/palettes) when it is there, and in the usual places otherwise:
/// the GPU machines have no flam3 installed, and this test runs from the
/// crate's directory, where the relative default does not reach.
fn options(strict: bool) -> ParseOptions {
    let shared = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/palettes/flam3-palettes.xml");
    ParseOptions { strict, palette_file: shared.exists().then_some(shared) }
}

fn genome(name: &str) -> Flame {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/flames").join(name);
    parse_file(&path, &options(true)).unwrap().flames.remove(0)
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
    (psnr_pixels(&g, &a).unwrap(), psnr_pixels(&b, &a).unwrap())
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
fn pixel_aspect_renders_within_the_cpu_noise_floor() {
    let Some(gpu) = warpmc_testkit::gpu_or_skip("pixel_aspect_renders_within_the_cpu_noise_floor") else { return };
    let r = CudaRenderer::new(gpu);
    let f = genome("electricsheep.244.80692.flam3");
    let one = std::slice::from_ref(&f);
    for aspect in [0.5, 1.7] {
        let s = |seed| RenderSettings { pixel_aspect: aspect, ..settings(seed, 0.25, 0.2) };
        let (cpu_a, cpu_b) = (render(one, f.time, &s(1)).unwrap(), render(one, f.time, &s(2)).unwrap());
        let gpu = r.render(one, f.time, &s(3)).unwrap();
        let (a, b, g) = (quantized_pixels(&cpu_a), quantized_pixels(&cpu_b), quantized_pixels(&gpu));
        let (p, floor) = (psnr_pixels(&g, &a).unwrap(), psnr_pixels(&b, &a).unwrap());
        // Against the square-pixel render: far outside the noise.
        let square = quantized_pixels(&render(one, f.time, &settings(1, 0.25, 0.2)).unwrap());
        let off = psnr_pixels(&g, &square).unwrap();
        println!(
            "pixel aspect {aspect}: GPU vs CPU {p:.2} dB, CPU vs CPU {floor:.2} dB, GPU vs square pixels {off:.2} dB"
        );
        assert!(p > floor - 0.5, "pixel aspect {aspect}: GPU {p:.2} dB against a noise floor of {floor:.2} dB");
        assert!(off < floor - 6.0, "pixel aspect {aspect}: the GPU image is as close to square pixels' ({off:.2} dB)");
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
/// final xform, on Fractorium's sample genomes (with its plugin variations:
/// crop and its pre_/post_ forms, pre_disc, pre_gaussian_blur, flatten).
#[test]
fn xaos_genomes_render_within_the_cpu_noise_floor() {
    let Some(gpu) = warpmc_testkit::gpu_or_skip("xaos_genomes_render_within_the_cpu_noise_floor") else {
        return;
    };
    let r = CudaRenderer::new(gpu);
    let opts = options(false);
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
        let (p, floor) = (psnr_pixels(&q, &a).unwrap(), psnr_pixels(&b, &a).unwrap());
        println!("t = {time}, {temporal} temporal samples: GPU vs CPU {p:.2} dB, CPU vs CPU {floor:.2} dB");
        assert!(p > floor - 0.5, "t = {time}: GPU {p:.2} dB against a noise floor of {floor:.2} dB");
    }
}

/// A genome whose xforms and final xform often produce bad values
/// (`cpow_power="0"` divides by zero, as in random genomes of
/// flam3-genome): both backends restart the point as flam3 does (a random
/// point, the iteration retried up to four times, no new fuse; the final
/// xform's bad value becomes a random point), so the GPU renders within the
/// CPU's noise floor and meets bad values as often per iteration.
#[test]
fn bad_values_restart_as_on_the_cpu() {
    let Some(gpu) = warpmc_testkit::gpu_or_skip("bad_values_restart_as_on_the_cpu") else { return };
    let xml = r#"<flame name="bad" size="320 240" scale="80" quality="20" oversample="1" filter="0.5" brightness="8"
        estimator_radius="0" temporal_samples="1">
      <xform weight="0.4" color="0" coefs="0.5 0 0 0.5 0 0" linear="1"/>
      <xform weight="0.3" color="0.5" coefs="0.5 0 0 0.5 0.5 0" linear="0.7" spherical="0.3"/>
      <xform weight="0.3" color="1" coefs="0.8 0.2 -0.2 0.8 0 0.5" cpow="1" cpow_r="1" cpow_i="0.2" cpow_power="0"/>
      <finalxform color="0.3" color_speed="0" opacity="0.5" coefs="1 0 0 1 0 0" linear="1" cpow="0.01" cpow_power="0"/>
      <palette count="2" format="RGB">FF2000 20A0FF</palette>
    </flame>"#;
    let f = warpmc_flame::genome::parse_str(xml, "bad.flam3", &options(true)).unwrap().flames.remove(0);
    let one = std::slice::from_ref(&f);
    for precision in [Precision::F32, Precision::F64] {
        let cpu_a = render(one, f.time, &RenderSettings { precision, ..settings(1, 1.0, 1.0) }).unwrap();
        let cpu_b = render(one, f.time, &RenderSettings { precision, ..settings(2, 1.0, 1.0) }).unwrap();
        let gpu_opts = IterationOptions { real: precision, ..IterationOptions::default() };
        let g = CudaRenderer::new(gpu.clone()).with_options(gpu_opts).unwrap();
        let out = g.render(one, f.time, &RenderSettings { precision, ..settings(3, 1.0, 1.0) }).unwrap();
        let (a, b, o) = (quantized_pixels(&cpu_a), quantized_pixels(&cpu_b), quantized_pixels(&out));
        let (p, floor) = (psnr_pixels(&o, &a).unwrap(), psnr_pixels(&b, &a).unwrap());
        let rate = |s: &warpmc_flame::render::RenderedFrame| s.stats.bad_values as f64 / s.stats.iterations as f64;
        let (rc, rg) = (rate(&cpu_a), rate(&out));
        println!(
            "{precision:?}: GPU vs CPU {p:.2} dB, CPU vs CPU {floor:.2} dB; bad values per iteration CPU {rc:.4}, GPU {rg:.4}"
        );
        assert!(rc > 0.05, "the genome should meet bad values often (CPU: {rc})");
        assert!((rg / rc - 1.0).abs() < 0.03, "bad values per iteration: GPU {rg}, CPU {rc}");
        assert!(p > floor - 0.5, "{precision:?}: GPU {p:.2} dB against a noise floor of {floor:.2} dB");
    }
}

/// Fractorium's crackle (Voronoi cells of a jittered grid, drawn inside the
/// variation) on both backends: Fractorium's sample genome.
#[test]
fn crackle_genome_renders_within_the_cpu_noise_floor() {
    let Some(gpu) = warpmc_testkit::gpu_or_skip("crackle_genome_renders_within_the_cpu_noise_floor") else {
        return;
    };
    let r = CudaRenderer::new(gpu);
    let f = genome("fractorium-bench-golubaja_rippingfrominside_complexcode.flame");
    assert!(f.xforms.iter().any(|x| x.variations.iter().any(|v| v.kind.name() == "crackle")));
    let (p, floor) = gap(&r, &f, 0.25, 0.1, Precision::F32);
    println!("golubaja (crackle): GPU vs CPU {p:.2} dB, CPU vs CPU {floor:.2} dB");
    assert!(p > floor - 0.5, "GPU {p:.2} dB against a noise floor of {floor:.2} dB");
}

/// Genomes in Fractorium's style written for the tests
/// (data/fractorium/variations.flame: post_smartcrop, Mobius,
/// hypertile2, bwraps, hexes, tile_log, eJulia, circlecrop, glynnia,
/// smartshape, pre_/post_ forms …) on the GPU, in float and double, within
/// the CPU's noise floor.
///
/// The smartcrop genome's centre is off the origin by a fraction of a
/// pixel: centred, its crop square's edges and the origin, where cropmode 0
/// sends points, fall exactly on pixel boundaries, so the pixel such a
/// point lands in is decided by the last bit of its coordinates, which f32
/// and f64 (and two libms) round differently. On an H200 that alone put the
/// f32 image 8.5 dB below the CPU's noise floor at quality 25 (and, with
/// cropmode 1, which puts points on the edges, f32 26 dB and f64 4.7 dB
/// below); centred at (0.0137, 0.0071) both forms are within 0.1 dB of it.
#[test]
fn fractorium_variations_render_within_the_cpu_noise_floor() {
    let Some(gpu) = warpmc_testkit::gpu_or_skip("fractorium_variations_render_within_the_cpu_noise_floor") else {
        return;
    };
    let r = CudaRenderer::new(gpu);
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/fractorium/variations.flame");
    // Every genome is measured before the verdict, so one run shows them all.
    let mut below = Vec::new();
    for f in parse_file(&path, &options(true)).unwrap().flames {
        let name = f.name.clone().unwrap_or_default();
        for precision in [Precision::F32, Precision::F64] {
            let (p, floor) = gap(&r, &f, 2.0, 2.5, precision);
            println!("{name} ({precision:?}): GPU vs CPU {p:.2} dB, CPU vs CPU {floor:.2} dB");
            if p <= floor - 0.5 {
                below.push(format!("{name} ({precision:?}): GPU {p:.2} dB against a noise floor of {floor:.2} dB"));
            }
        }
    }
    assert!(below.is_empty(), "below the CPU's noise floor:\n{}", below.join("\n"));
}

/// A colour coordinate that settles a hair below a palette entry's edge
/// (colour 0.875 at colour_speed 0.425 gives 0.8749999999999998): in step
/// mode the GPU's double build takes flam3's entry, 223, as the CPU does,
/// not the 224 a float would round it to.
#[test]
fn a_colour_just_below_a_palette_edge_selects_flam3s_entry() {
    let Some(gpu) = warpmc_testkit::gpu_or_skip("a_colour_just_below_a_palette_edge_selects_flam3s_entry") else {
        return;
    };
    let r = CudaRenderer::new(gpu);
    let mut colours = String::new();
    for i in 0..256 {
        let (red, blue) = if i % 2 == 0 { (255, 0) } else { (0, 255) };
        colours += &format!(r#"<color index="{i}" rgb="{red} 0 {blue}"/>"#);
    }
    let xml = format!(
        r#"<flame size="160 120" center="0 0" scale="40" quality="30" palette_mode="step">
  <xform weight="1" color="0" color_speed="0" linear="1" coefs="-0.38 0.92 -0.92 -0.38 0 0"/>
  <xform weight="0.625" color="0.875" color_speed="0.425" spherical="0.25" swirl="0.75" coefs="0.383876 0.320374 -0.320374 0.383876 0.225 0.075"/>
  {colours}</flame>"#
    );
    let f = warpmc_flame::genome::parse_str(&xml, "edge.flam3", &options(true)).unwrap().flames.remove(0);
    let one = std::slice::from_ref(&f);
    let settings = RenderSettings { precision: Precision::F64, ..settings(1, 1.0, 1.0) };
    let gpu_frame = r.render(one, f.time, &settings).unwrap();
    let cpu_frame = render(one, f.time, &RenderSettings { seed: 2, ..settings.clone() }).unwrap();
    // Entry 223 is blue, 224 red: the image is mostly blue on both (the
    // red is the points still on their way to the settled colour; with
    // the rounded coordinate the image is almost all red).
    let colour = |frame: &RenderedFrame| frame.pixels.iter().fold([0.0f64; 2], |[r, b], p| [r + p[0], b + p[2]]);
    for (name, frame) in [("GPU", &gpu_frame), ("CPU", &cpu_frame)] {
        let [red, blue] = colour(frame);
        println!("{name}: red {red:.3e}, blue {blue:.3e}");
        assert!(blue > 3.0 * red, "{name}: red {red:.3e} against blue {blue:.3e}");
    }
}

/// An xform whose circlecrop or mirror_x comes before other variations:
/// the GPU applies them in the file's order (Fractorium's) as the CPU
/// does, so what follows the crop is kept.
#[test]
fn variations_after_circlecrop_and_mirror_x_render_as_on_the_cpu() {
    let Some(gpu) = warpmc_testkit::gpu_or_skip("variations_after_circlecrop_and_mirror_x_render_as_on_the_cpu") else {
        return;
    };
    let r = CudaRenderer::new(gpu);
    let xml = r#"<flame version="EMBER-LNX-23.23.8.101" size="128 96" center="0.02 0.01" scale="30" quality="40">
  <xform weight="1" color="0" square="4" coefs="1 0 0 1 0 0" chaos="0 1 1"/>
  <xform weight="1" color="1" circlecrop="1" circlecrop_radius="0.8" linear="0.5" coefs="1 0 0 1 0 0" chaos="1 0 0"/>
  <xform weight="1" color="0.5" mirror_x="1" spherical="0.3" linear="0.4" coefs="0.9 0.1 -0.1 0.9 0.2 0" chaos="1 0 0"/>
  <color index="0" rgb="255 0 0"/><color index="255" rgb="0 0 255"/>
</flame>"#;
    let f = warpmc_flame::genome::parse_str(xml, "order.flame", &options(true)).unwrap().flames.remove(0);
    let names: Vec<&str> = f.xforms[1].variations.iter().map(|v| v.kind.name()).collect();
    assert_eq!(names, ["circlecrop", "linear"]);
    for precision in [Precision::F32, Precision::F64] {
        let (p, floor) = gap(&r, &f, 1.0, 1.0, precision);
        println!("{precision:?}: GPU vs CPU {p:.2} dB, CPU vs CPU {floor:.2} dB");
        assert!(p > floor - 0.5, "{precision:?}: GPU {p:.2} dB against a noise floor of {floor:.2} dB");
    }
}

/// Colour coordinates off the palette (color_speed 1 puts every point at
/// the xforms' colour): beyond int's range entry 0 as in flam3, just below
/// 0 linear mode's negative fraction, both backends alike.
#[test]
fn colour_coordinates_off_the_palette_look_up_as_on_the_cpu() {
    let Some(gpu) = warpmc_testkit::gpu_or_skip("colour_coordinates_off_the_palette_look_up_as_on_the_cpu") else {
        return;
    };
    let r = CudaRenderer::new(gpu);
    for mode in ["linear", "step"] {
        for colour in ["1e7", "3e6", "-1e300", "-0.001953125", "0.5"] {
            let xml = format!(
                r#"<flame size="160 120" center="0.5 0.5" scale="100" quality="50" estimator_radius="0" palette_mode="{mode}">
  <xform weight="1" color="{colour}" color_speed="1" linear="1" coefs="0.5 0 0 0.5 0 0"/>
  <xform weight="1" color="{colour}" color_speed="1" linear="1" coefs="0.5 0 0 0.5 0.5 0"/>
  <xform weight="1" color="{colour}" color_speed="1" linear="1" coefs="0.5 0 0 0.5 0.25 0.5"/>
  <color index="0" rgb="100 0 0"/>
  <color index="1" rgb="0 100 0"/>
  <color index="128" rgb="60 60 60"/>
  <color index="255" rgb="0 0 200"/>
</flame>"#
            );
            let f = warpmc_flame::genome::parse_str(&xml, "colour.flam3", &options(true)).unwrap().flames.remove(0);
            let (p, floor) = gap(&r, &f, 1.0, 1.0, Precision::F32);
            println!("{mode} {colour}: GPU vs CPU {p:.2} dB, CPU vs CPU {floor:.2} dB");
            assert!(p > floor - 0.5, "{mode} {colour}: GPU {p:.2} dB against a noise floor of {floor:.2} dB");
        }
    }
}

/// A field of an interlaced frame (half the rows, twice as tall, the view
/// moved by half a pixel) on both backends, with pixels that are not
/// square.
#[test]
fn fields_render_within_the_cpu_noise_floor() {
    let Some(gpu) = warpmc_testkit::gpu_or_skip("fields_render_within_the_cpu_noise_floor") else { return };
    let r = CudaRenderer::new(gpu);
    let f = genome("electricsheep.244.80692.flam3");
    let one = std::slice::from_ref(&f);
    for field in [Field::Even, Field::Odd] {
        let at = |seed| RenderSettings { field, pixel_aspect: 0.9, ..settings(seed, 0.25, 0.2) };
        let cpu_a = render(one, f.time, &at(1)).unwrap();
        let cpu_b = render(one, f.time, &at(2)).unwrap();
        let gpu = r.render(one, f.time, &at(3)).unwrap();
        assert_eq!((gpu.width, gpu.height), (cpu_a.width, cpu_a.height));
        assert_eq!(cpu_a.height, (f64::from(f.height) * 0.25) as u32 / 2);
        let (a, b, g) = (quantized_pixels(&cpu_a), quantized_pixels(&cpu_b), quantized_pixels(&gpu));
        let (p, floor) = (psnr_pixels(&g, &a).unwrap(), psnr_pixels(&b, &a).unwrap());
        println!("{field:?}: GPU vs CPU {p:.2} dB, CPU vs CPU {floor:.2} dB");
        assert!(p > floor - 0.5, "{field:?}: GPU {p:.2} dB against a noise floor of {floor:.2} dB");
    }
}

/// Fractorium's colour curves on the GPU's frames: the same seed with an
/// overall curve y = 1 − x gives the inverted image (to the curve tables'
/// resolution), on kept buffers (the animation path) as on fresh ones.
#[test]
fn colour_curves_apply_to_gpu_frames() {
    let Some(gpu) = warpmc_testkit::gpu_or_skip("colour_curves_apply_to_gpu_frames") else { return };
    let f = genome("test.flam3");
    let inverted = Flame {
        curves: Some(warpmc_flame::genome::Curves {
            points: [
                vec![[0.0, 1.0], [1.0, 0.0]],
                warpmc_flame::genome::Curves::DEFAULT.to_vec(),
                warpmc_flame::genome::Curves::DEFAULT.to_vec(),
                warpmc_flame::genome::Curves::DEFAULT.to_vec(),
            ],
        }),
        ..f.clone()
    };
    for r in [CudaRenderer::new(gpu.clone()), CudaRenderer::new(gpu.clone()).keeping_buffers()] {
        let s = settings(5, 0.2, 0.1);
        let plain = r.render(std::slice::from_ref(&f), f.time, &s).unwrap();
        let inv = r.render(std::slice::from_ref(&inverted), f.time, &s).unwrap();
        let lit = plain.pixels.iter().filter(|p| p[0] + p[1] + p[2] > 30.0).count();
        assert!(lit > 100, "only {lit} pixels lit");
        // The tables' two truncating lookups (2/65535 of the range), and the
        // order of the GPU's float atomics, which may differ between runs.
        for (p, q) in plain.pixels.iter().zip(&inv.pixels) {
            for k in 0..3 {
                assert!((q[k] - (255.0 - p[k])).abs() <= 0.05, "{p:?} → {q:?}");
            }
        }
    }
}
