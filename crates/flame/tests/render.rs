//! The CPU renderer end to end: determinism across thread counts, a known
//! attractor, transparency, errors instead of panics.

use std::sync::Mutex;
use warpmc_flame::genome::{Affine, Flame, XForm};

use warpmc_flame::FlameError;
use warpmc_flame::render::{Precision, RenderSettings, render, render_with_progress};
use warpmc_flame::variations::{VariationKind, VariationSpec};

/// The Sierpinski triangle: three linear maps halving towards the corners
/// (0,0), (1,0), (0,1), each with its own palette colour.
fn sierpinski(width: u32, height: u32) -> Flame {
    let mut f = Flame {
        width,
        height,
        center: [0.5, 0.5],
        scale: f64::from(width.min(height)) * 0.9,
        quality: 50.0,
        estimator_radius: 3.0,
        ..Flame::default()
    };
    for (i, e) in f.palette.entries.iter_mut().enumerate() {
        let t = i as f64 / 255.0;
        *e = [t, 1.0 - t, 0.5, 1.0];
    }
    let linear = VariationKind::from_name("linear").expect("linear exists");
    for (i, (cx, cy)) in [(0.0, 0.0), (0.5, 0.0), (0.0, 0.5)].into_iter().enumerate() {
        let mut x = XForm::flam3_default(i);
        x.weight = 1.0;
        x.color = i as f64 / 2.0;
        x.coefs = Affine::from_xml_order([0.5, 0.0, 0.0, 0.5, cx, cy]);
        x.variations = vec![VariationSpec::new(linear, 1.0)];
        f.xforms.push(x);
    }
    f
}

fn with_threads<T: Send>(n: usize, job: impl FnOnce() -> T + Send) -> T {
    rayon::ThreadPoolBuilder::new().num_threads(n).build().unwrap().install(job)
}

#[test]
fn same_seed_same_image_on_any_thread_count() {
    let flame = sierpinski(67, 45); // awkward sizes
    for precision in [Precision::F32, Precision::F64] {
        let s = RenderSettings { seed: 42, precision, sub_batch_size: 1000, ..RenderSettings::default() };
        let one = with_threads(1, || render(std::slice::from_ref(&flame), 0.0, &s).unwrap());
        for n in [2, 3, 5] {
            let many = with_threads(n, || render(std::slice::from_ref(&flame), 0.0, &s).unwrap());
            assert_eq!(one.pixels, many.pixels, "{precision:?}, {n} threads");
        }
        let other = render(std::slice::from_ref(&flame), 0.0, &RenderSettings { seed: 43, ..s.clone() }).unwrap();
        assert_ne!(one.pixels, other.pixels, "another seed, another sample");
        assert_eq!(one.stats.iterations, (50.0f64 * 67.0 * 45.0).round() as u64);
    }
}

#[test]
fn sierpinski_triangle_is_where_it_should_be() {
    let (w, h) = (120u32, 120u32);
    let flame = sierpinski(w, h);
    let frame = render(std::slice::from_ref(&flame), 0.0, &RenderSettings::default()).unwrap();
    // Plane point (x, y) → pixel: flam3's image rows grow with y.
    let ppu = flame.scale;
    let pixel = |x: f64, y: f64| {
        let i = ((x - flame.center[0]) * ppu + f64::from(w) / 2.0) as usize;
        let j = ((y - flame.center[1]) * ppu + f64::from(h) / 2.0) as usize;
        frame.pixels[j * w as usize + i]
    };
    let lum = |p: [f64; 4]| p[0] + p[1] + p[2];
    // The three corners are on the attractor, the middle hole (0.3, 0.3)
    // and the far corner (0.9, 0.9) are not.
    for (x, y) in [(0.02, 0.02), (0.95, 0.02), (0.02, 0.95), (0.5, 0.02)] {
        assert!(lum(pixel(x, y)) > 30.0, "({x}, {y}) should be lit: {:?}", pixel(x, y));
    }
    for (x, y) in [(0.35, 0.35), (0.9, 0.9), (0.7, 0.7)] {
        assert!(lum(pixel(x, y)) < 5.0, "({x}, {y}) should be dark: {:?}", pixel(x, y));
    }
    // Colours follow the xform that produced the point: the corner of
    // xform 0 (colour 0) is greener than the corner of xform 1 (colour 0.5).
    let g0 = pixel(0.02, 0.02);
    let g1 = pixel(0.95, 0.02);
    assert!(g0[1] / lum(g0) > g1[1] / lum(g1));
}

#[test]
fn pixel_aspect_stretches_the_flame_as_flam3_does() {
    // flam3-render's pixel_aspect a: pixels a times as wide as high, so the
    // flame is drawn 1/a times wider in pixels (ppux = ppu / a), with the
    // brightness of square pixels (the area in flam3's k2 takes a too).
    // A 240 × 120 frame at a = 0.5 covers the plane of a 120 × 120 one.
    let square = sierpinski(120, 120);
    let wide = Flame { width: 240, ..square.clone() };
    let render_at = |f: &Flame, a: f64| {
        let s = RenderSettings { pixel_aspect: a, seed: 9, ..RenderSettings::default() };
        render(std::slice::from_ref(f), 0.0, &s).unwrap()
    };
    let (sq, st) = (render_at(&square, 1.0), render_at(&wide, 0.5));
    let lum = |p: [f64; 4]| p[0] + p[1] + p[2];
    let ppu = square.scale;
    for (x, y, lit) in
        [(0.02, 0.02, true), (0.95, 0.02, true), (0.02, 0.95, true), (0.35, 0.35, false), (0.7, 0.7, false)]
    {
        let i = ((x - 0.5) * ppu / 0.5 + 120.0) as usize;
        let j = ((y - 0.5) * ppu + 60.0) as usize;
        let l = lum(st.pixels[j * 240 + i]);
        assert_eq!(l > 30.0, lit, "({x}, {y}) at pixel ({i}, {j}): {l}");
        assert!(lit || l < 5.0, "({x}, {y}) should be dark: {l}");
    }
    let mean = |px: &[[f64; 4]]| px.iter().map(|&p| lum(p)).sum::<f64>() / px.len() as f64;
    let (m_sq, m_st) = (mean(&sq.pixels), mean(&st.pixels));
    println!("mean luminance: square pixels {m_sq:.2}, stretched {m_st:.2}");
    // (The stretched frame resolves the attractor twice as finely across,
    // which brightens it by 2 % here; the area left out of k2 would darken
    // it by 5 %.)
    assert!((m_st / m_sq - 1.0).abs() < 0.03, "mean luminance {m_st} against {m_sq} for square pixels");
    // flam3 refuses a pixel aspect that is not positive.
    for a in [0.0, -1.0, f64::NAN, f64::INFINITY] {
        let s = RenderSettings { pixel_aspect: a, ..RenderSettings::default() };
        let e = render(std::slice::from_ref(&square), 0.0, &s).unwrap_err();
        assert!(e.to_string().contains("pixel aspect ratio must be positive"), "{a}: {e}");
    }
}

#[test]
fn transparent_frames_carry_alpha() {
    let flame = sierpinski(40, 40);
    let s = RenderSettings { transparent: true, ..RenderSettings::default() };
    let frame = render(std::slice::from_ref(&flame), 0.0, &s).unwrap();
    assert!(frame.transparent);
    assert!(frame.pixels.iter().any(|p| p[3] == 0.0));
    assert!(frame.pixels.iter().any(|p| p[3] > 0.5));
    assert!(frame.pixels.iter().all(|p| (0.0..=1.0).contains(&p[3])));
}

#[test]
fn bad_settings_are_errors_not_panics() {
    let mut flame = sierpinski(10, 10);
    let s = RenderSettings::default();
    let err = |f: &Flame, s: &RenderSettings| match render(std::slice::from_ref(f), 0.0, s) {
        Err(e) => e,
        Ok(_) => panic!("expected an error"),
    };
    // All weights zero.
    for x in &mut flame.xforms {
        x.weight = 0.0;
    }
    assert!(err(&flame, &s).to_string().contains("zero"));
    let flame = sierpinski(10, 10);
    // Zero quality.
    let mut q = flame.clone();
    q.quality = 0.0;
    assert!(err(&q, &s).to_string().contains("quality"));
    // A negative quality scale.
    let bad = RenderSettings { quality_scale: -1.0, ..RenderSettings::default() };
    assert!(err(&flame, &bad).to_string().contains("quality scale"));
    // An image too large for memory: a clean error, no abort.
    let mut huge = flame.clone();
    huge.width = 4_000_000;
    huge.height = 4_000_000;
    // (Where no memory budget can be read, the CPU renderer's 2^32-cell
    // index refuses it.)
    assert!(matches!(err(&huge, &s), FlameError::OutOfHostMemory(_) | FlameError::Invalid(_)));
    // A negative estimator minimum, and one above its radius (flam3
    // refuses both).
    for minimum in [-1.0, 5.0] {
        let mut de = flame.clone();
        de.estimator_minimum = minimum;
        assert!(err(&de, &s).to_string().contains("estimator"));
    }
    assert!(render(&[], 0.0, &s).is_err());
}

/// An estimator radius equal to its minimum leaves one kernel, and flam3
/// then skips density estimation: the image is the one of radius 0.
#[test]
fn a_radius_at_its_minimum_estimates_no_density() {
    let s = RenderSettings { seed: 7, ..RenderSettings::default() };
    let image = |radius: f64, minimum: f64, supersample: u32| {
        let f = Flame { estimator_radius: radius, estimator_minimum: minimum, supersample, ..sierpinski(40, 30) };
        render(std::slice::from_ref(&f), 0.0, &s).unwrap().pixels
    };
    for supersample in [1, 2] {
        let plain = image(0.0, 0.0, supersample);
        for (radius, minimum) in [(3.0, 3.0), (9.0, 9.0), (0.5, 0.5)] {
            assert!(image(radius, minimum, supersample) == plain, "{radius}/{minimum}, supersample {supersample}");
        }
        assert!(image(3.0, 2.9, supersample) != plain, "a radius above the minimum estimates");
    }
}

#[test]
fn progress_rises_to_one() {
    let flame = sierpinski(40, 30);
    let seen = Mutex::new(Vec::new());
    // 1.2 million iterations: 2,400 sub-batches, several rounds of them
    // (4 per thread a round) even on a 128-thread machine.
    let s = RenderSettings { sub_batch_size: 500, quality_scale: 20.0, ..RenderSettings::default() };
    let frame = render_with_progress(std::slice::from_ref(&flame), 0.0, &s, &|f| seen.lock().unwrap().push(f)).unwrap();
    let seen = seen.into_inner().unwrap();
    assert!(seen.len() > 2, "{seen:?}");
    assert!(seen.windows(2).all(|w| w[0] <= w[1]), "{seen:?}");
    assert_eq!(seen.last(), Some(&1.0));
    // With or without an observer, the same image.
    assert_eq!(render(std::slice::from_ref(&flame), 0.0, &s).unwrap().pixels, frame.pixels);
}

#[test]
fn a_negative_opacity_draws_nothing() {
    // flam3's visibility formula is NaN below zero; the xform's points are
    // left out, exactly as at opacity 0 (no NaN reaches the image).
    let s = RenderSettings { seed: 5, sub_batch_size: 1000, ..RenderSettings::default() };
    let image = |opacity: f64| {
        let mut f = sierpinski(40, 30);
        f.xforms[1].opacity = opacity;
        render(std::slice::from_ref(&f), 0.0, &s).unwrap()
    };
    let (negative, zero) = (image(-0.5), image(0.0));
    assert!(negative.pixels.iter().flatten().all(|v| v.is_finite()));
    assert_eq!(negative.pixels, zero.pixels);
    assert_ne!(image(1.0).pixels, zero.pixels);
}

/// A cell hit a million times: the CPU's histogram counts every hit (flam3's
/// unsigned integers), so its 32-bit render is the 64-bit one. Floats of
/// 32 bits would have rounded each of the last ~990,000 additions (past
/// 2²⁴) and shifted the pixel's colour by a few levels.
#[test]
fn a_cell_of_a_million_hits_keeps_its_colour() {
    let xml = r#"<flame size="8 8" center="0.013 0.011" scale="4" quality="16000" brightness="0.5" gamma="1"
        vibrancy="1" estimator_radius="0">
      <xform weight="0.5" color="0" color_speed="1" linear="1" coefs="0.5 0 0 0.5 0 0"/>
      <xform weight="0.5" color="0" color_speed="1" linear="1" coefs="0.4 0.1 -0.1 0.4 0 0"/>
      <color index="0" rgb="163 100 37"/>
    </flame>"#;
    let opts = warpmc_flame::genome::ParseOptions::default();
    let f = warpmc_flame::genome::parse_str(xml, "hot.flam3", &opts).unwrap().flames.remove(0);
    let image = |precision| {
        let s = RenderSettings { seed: 3, precision, ..RenderSettings::default() };
        render(std::slice::from_ref(&f), 0.0, &s).unwrap()
    };
    let (single, double) = (image(Precision::F32), image(Precision::F64));
    assert!(single.stats.iterations >= 1_000_000, "{:?}", single.stats);
    let hot = (0..double.pixels.len()).max_by(|&a, &b| double.pixels[a][1].total_cmp(&double.pixels[b][1])).unwrap();
    for c in 0..3 {
        let (s, d) = (single.pixels[hot][c], double.pixels[hot][c]);
        assert!((s - d).abs() < 1e-4 * d.abs().max(1.0), "channel {c}: {s} against {d}");
    }
}

/// A field whose every pixel holds its own row number and a tag.
fn field_of_rows(width: u32, height: u32, tag: f64, iterations: u64) -> warpmc_flame::render::RenderedFrame {
    let pixels = (0..width * height).map(|i| [(i / width.max(1)) as f64, tag, 0.0, 1.0]).collect();
    let stats = warpmc_flame::render::RenderStats { iterations, strips: 1, ..Default::default() };
    warpmc_flame::render::RenderedFrame { width, height, pixels, transparent: false, stats }
}

#[test]
fn interlacing_takes_even_rows_from_the_even_field_and_leaves_an_odd_heights_last_row_empty() {
    use warpmc_flame::render::RenderedFrame;
    for (width, height) in [(5, 7), (3, 8), (1, 1), (4, 2), (0, 6), (6, 0)] {
        let (even, odd) = (field_of_rows(width, height / 2, 1.0, 10), field_of_rows(width, height / 2, 2.0, 32));
        let frame = RenderedFrame::interlace(&even, &odd, height).unwrap();
        assert_eq!((frame.width, frame.height), (width, height));
        assert_eq!(frame.pixels.len(), (width * height) as usize);
        assert_eq!(frame.stats.iterations, 42);
        for (i, p) in frame.pixels.iter().enumerate() {
            let y = i as u32 / width;
            if y == height / 2 * 2 {
                assert_eq!(*p, [0.0; 4], "{width} × {height}: row {y} lies outside both fields");
            } else {
                let tag = if y.is_multiple_of(2) { 1.0 } else { 2.0 };
                assert_eq!(*p, [(y / 2) as f64, tag, 0.0, 1.0], "{width} × {height}: row {y}");
            }
        }
    }
}

#[test]
fn fields_that_do_not_make_the_frame_are_an_error() {
    use warpmc_flame::render::RenderedFrame;
    let (even, odd) = (field_of_rows(4, 2, 1.0, 1), field_of_rows(4, 2, 2.0, 1));
    // A height the fields do not have (one of 2^32 - 1 rows would have
    // allocated hundreds of GiB), fields of other widths, and pixels that
    // are not the size the field says.
    let mut short = field_of_rows(4, 2, 2.0, 1);
    short.pixels.truncate(3);
    for (a, b, height) in [
        (&even, &odd, u32::MAX),
        (&even, &odd, 8),
        (&even, &field_of_rows(3, 2, 2.0, 1), 4),
        (&field_of_rows(4, 1, 1.0, 1), &odd, 4),
        (&even, &short, 4),
    ] {
        let e = RenderedFrame::interlace(a, b, height).unwrap_err();
        assert!(e.to_string().contains("interlacing a frame of"), "{e}");
    }
    assert!(RenderedFrame::interlace(&even, &odd, 5).is_ok());
}

/// Values a flame built in code may hold but a genome cannot are errors
/// that say what is wrong: a time that is not finite, a weight that is
/// not a number, colour curves out of their form (rendered as Fractorium
/// would read them, not a panic).
#[test]
fn a_flame_built_in_code_with_bad_values_is_an_error_or_renders() {
    let settings = RenderSettings::default();
    let f = sierpinski(16, 12);
    for time in [f64::NAN, f64::INFINITY] {
        let e = render(std::slice::from_ref(&f), time, &settings).unwrap_err();
        assert!(e.to_string().contains("time must be finite"), "{e}");
    }
    let mut nan_weight = f.clone();
    nan_weight.xforms[1].weight = f64::NAN;
    let e = render(std::slice::from_ref(&nan_weight), 0.0, &settings).unwrap_err();
    assert!(e.to_string().contains("xform 1: weight (or a chaos entry) is negative, infinite or not a number"), "{e}");
    let mut curved = f.clone();
    let nan = f64::NAN;
    curved.curves =
        Some(warpmc_flame::genome::Curves { points: [vec![], vec![[nan, 0.5], [0.2, nan]], vec![[0.5, 0.5]], vec![]] });
    assert!(render(std::slice::from_ref(&curved), 0.0, &settings).is_ok());
}
