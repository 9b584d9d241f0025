//! `warpmc bench flame` and `warpmc bench shuffle-diversity`: the GPU flame
//! renderer's speed beside the CPU backend (and flam3-render when it is
//! installed), and cuburn's point-shuffle experiment rerun, first as its
//! notes ran it and then as image noise on real genomes.

use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{Context, bail};
use clap::Args;
use warpmc_bench::point_shuffle::{StudyShuffle, diversity};
use warpmc_flame::genome::{Flame, ParseOptions, parse_file};
use warpmc_flame::image::{Bits, psnr_pixels, quantize, write_png};
use warpmc_flame::render::cuda::{Accumulation, CudaRenderer, IterationOptions, Selection, Shuffle};
use warpmc_flame::render::{RenderSettings, RenderedFrame, render};

/// Default genomes: the flam3-only ones shipped in examples/flames.
fn default_genomes() -> Vec<PathBuf> {
    let dir = Path::new("examples/flames");
    let mut v: Vec<PathBuf> =
        std::fs::read_dir(dir).map(|d| d.filter_map(|e| e.ok().map(|e| e.path())).collect()).unwrap_or_default();
    v.retain(|p| p.extension().is_some_and(|e| e == "flam3"));
    v.sort();
    v
}

fn load(path: &Path) -> anyhow::Result<Vec<Flame>> {
    let parsed = parse_file(path, &ParseOptions::default())?;
    if parsed.flames.is_empty() {
        bail!("{}: no <flame> elements", path.display());
    }
    Ok(parsed.flames)
}

fn name(path: &Path) -> String {
    path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default()
}

/// The flame resized to `width × height` (camera scale follows the width,
/// as flam3's size scale does) at `quality` samples per pixel.
fn resized(f: &Flame, width: u32, height: u32, quality: f64) -> Flame {
    let mut f = f.clone();
    f.scale *= f64::from(width) / f64::from(f.width);
    f.width = width;
    f.height = height;
    f.quality = quality;
    f
}

/// GPU fractal flames: iterations per second and time to a finished PNG.
///
/// For each genome (default: the .flam3 files in examples/flames), resized
/// to --width x --height at --quality samples per pixel (flam3's quality):
/// the render on the GPU is timed end to end (genome read, kernel
/// generation and compilation, chaos game, density estimation, filtering,
/// tone mapping, PNG written), twice: the first run compiles the kernel
/// (NVRTC; later runs find it in the disk cache). Beside it: the CPU
/// backend on all cores at a lower quality, and flam3-render on one core if
/// it is installed. The bar of the issue: at least 10^10 iterations/s on an
/// H200 for genomes of at most 6 xforms, and a 1920x1080 quality-1000 PNG
/// in under 2 s.
///
/// --modes also times every chaos-game variant (xform choice per warp or
/// per thread, shuffles, plain or warp-aggregated atomics) on each genome.
///
/// Example: warpmc bench flame --quality 1000 --out-dir /tmp/flames
#[derive(Debug, Args)]
pub(crate) struct FlameBenchArgs {
    /// Genome files (the first flame of each is rendered).
    #[arg(long, value_delimiter = ',')]
    genomes: Vec<PathBuf>,
    /// Image width.
    #[arg(long, default_value_t = 1920)]
    width: u32,
    /// Image height.
    #[arg(long, default_value_t = 1080)]
    height: u32,
    /// Samples per pixel (flam3's quality).
    #[arg(long, default_value_t = 1000.0)]
    quality: f64,
    /// Quality of the CPU backend's run (its rate is what is compared).
    #[arg(long, default_value_t = 5.0)]
    cpu_quality: f64,
    /// Skip the CPU backend.
    #[arg(long)]
    no_cpu: bool,
    /// Time every chaos-game variant too.
    #[arg(long)]
    modes: bool,
    /// Where the PNGs go (default: a temporary directory).
    #[arg(long)]
    out_dir: Option<PathBuf>,
}

fn variants() -> Vec<(&'static str, IterationOptions)> {
    let d = IterationOptions::default();
    let mk = |selection, shuffle, accumulation| IterationOptions { selection, shuffle, accumulation, ..d.clone() };
    vec![
        ("thread+shared-cache (default)", d.clone()),
        ("thread+plain", mk(Selection::PerThread, Shuffle::None, Accumulation::Plain)),
        ("warp+better+plain", mk(Selection::WarpUniform, Shuffle::Better, Accumulation::Plain)),
        ("warp+simple+plain", mk(Selection::WarpUniform, Shuffle::Simple, Accumulation::Plain)),
        ("warp+none+plain", mk(Selection::WarpUniform, Shuffle::None, Accumulation::Plain)),
        ("warp+better+aggregated", mk(Selection::WarpUniform, Shuffle::Better, Accumulation::WarpAggregated)),
        ("thread+aggregated", mk(Selection::PerThread, Shuffle::None, Accumulation::WarpAggregated)),
        ("warp+better+shared-cache", mk(Selection::WarpUniform, Shuffle::Better, Accumulation::SharedCache)),
    ]
}

fn write(frame: &RenderedFrame, out: &Path) -> anyhow::Result<()> {
    write_png(frame, Bits::Eight, out, &[("flam3_samples".into(), format!("{:e}", frame.stats.iterations as f64))])?;
    Ok(())
}

pub(crate) fn run_flame(a: FlameBenchArgs) -> anyhow::Result<()> {
    let genomes = if a.genomes.is_empty() { default_genomes() } else { a.genomes.clone() };
    if genomes.is_empty() {
        bail!("no genomes: pass --genomes FILE,… (the default is examples/flames/*.flam3, run from the repository)");
    }
    let out_dir = a.out_dir.clone().unwrap_or_else(|| std::env::temp_dir().join("warpmc-bench-flame"));
    std::fs::create_dir_all(&out_dir).with_context(|| format!("creating {}", out_dir.display()))?;
    let renderer = CudaRenderer::open(0)?;
    let info = renderer.gpu().info().clone();
    println!(
        "# warpmc bench flame — {} ({} SMs), {}x{}, quality {}",
        info.name, info.sm_count, a.width, a.height, a.quality
    );
    println!("# CPU backend: {} threads", rayon::current_num_threads());
    println!(
        "{:<28} {:>6} {:>10} {:>12} {:>9} {:>9} {:>9} {:>12} {:>12}",
        "genome", "xforms", "iters", "GPU it/s", "iter s", "finish s", "PNG s", "PNG s (2nd)", "CPU it/s"
    );
    let settings = RenderSettings::default();
    let quiet = |_: f64| {};
    for path in &genomes {
        let flames = load(path)?;
        let f = resized(&flames[0], a.width, a.height, a.quality);
        let n = name(path);
        let out = out_dir.join(format!("{n}.gpu.png"));
        // End to end, twice: parse, generate, compile (cached the second
        // time), render, write.
        let mut ends = Vec::new();
        let mut frame = None;
        for _ in 0..2 {
            let t0 = Instant::now();
            let g = resized(&load(path)?[0], a.width, a.height, a.quality);
            let fr = renderer.render(std::slice::from_ref(&g), g.time, &settings, &quiet)?;
            write(&fr, &out)?;
            ends.push(t0.elapsed().as_secs_f64());
            frame = Some(fr);
        }
        let fr = frame.expect("two runs");
        let gpu_rate = fr.stats.iterations as f64 / fr.stats.iterate_seconds;
        let cpu_rate = if a.no_cpu {
            f64::NAN
        } else {
            let c = resized(&flames[0], a.width, a.height, a.cpu_quality);
            let cf = render(std::slice::from_ref(&c), c.time, &settings, &quiet)?;
            write(&cf, &out_dir.join(format!("{n}.cpu.png")))?;
            cf.stats.iterations as f64 / cf.stats.iterate_seconds
        };
        println!(
            "{:<28} {:>6} {:>10.3e} {:>12.3e} {:>9.3} {:>9.3} {:>9.3} {:>12.3} {:>12.3e}",
            n,
            f.xforms.len() + usize::from(f.final_xform.is_some()),
            fr.stats.iterations as f64,
            gpu_rate,
            fr.stats.iterate_seconds,
            fr.stats.filter_seconds,
            ends[0],
            ends[1],
            cpu_rate
        );
        if a.modes {
            for (label, o) in variants() {
                let r = CudaRenderer::with_gpu(renderer.gpu().clone()).with_options(o)?;
                // The first render compiles this variant's kernel (inside
                // the chaos game's time): time the second.
                r.render(std::slice::from_ref(&f), f.time, &settings, &quiet)?;
                let m = r.render(std::slice::from_ref(&f), f.time, &settings, &quiet)?;
                println!(
                    "    {:<30} {:>12.3e} it/s  iterate {:.3} s",
                    label,
                    m.stats.iterations as f64 / m.stats.iterate_seconds,
                    m.stats.iterate_seconds
                );
            }
        }
    }
    println!("# PNGs in {}", out_dir.display());
    println!(
        "# anchors: Fractorium (OpenCL) 0.5-2.8e9 it/s on an R9 280X, ~0.7e9 on an RTX 2060; flam3 ~1e7 per CPU core"
    );
    Ok(())
}

/// cuburn's point-shuffle experiment, then the same question as image noise.
///
/// Part 1 reruns the Monte Carlo experiment of cuburn's notes on the point
/// shuffle: 1-D points in a block of warps, one affine map x -> A x + B
/// chosen per warp each round (the notes' four maps and probabilities),
/// FUSE = 20 discarded rounds, then --rounds measured rounds; the
/// "diversity" printed is the mean over rounds of the summed standard
/// deviations of each map's outputs (larger: more distinct samples). Rows:
/// block geometries 16x16, 32x8, 32x16, 32x32 (lanes x warps); columns: no
/// shuffle, a full random permutation, cuburn's simple shuffle, the
/// "better" shuffle (random lane rotation first), and one map per thread
/// (warp width 1).
///
/// Part 2 (needs a GPU) asks the same on real genomes: each is rendered
/// with every chaos-game variant at --quality samples per pixel and
/// compared (PSNR) with a reference rendered with per-thread choice at
/// --reference-quality. Equal sample counts, so higher PSNR means less
/// noise per sample: the shuffle we ship is the one these numbers favour.
///
/// Example: warpmc bench shuffle-diversity --rounds 1000
#[derive(Debug, Args)]
pub(crate) struct DiversityArgs {
    /// Measured rounds of the experiment.
    #[arg(long, default_value_t = 1000)]
    rounds: usize,
    /// Seed of the experiment.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Genome files for part 2 (default: examples/flames/*.flam3).
    #[arg(long, value_delimiter = ',')]
    genomes: Vec<PathBuf>,
    /// Size scale of the part-2 renders.
    #[arg(long, default_value_t = 0.5)]
    size_scale: f64,
    /// Samples per pixel of the compared renders.
    #[arg(long, default_value_t = 50.0)]
    quality: f64,
    /// Samples per pixel of the reference.
    #[arg(long, default_value_t = 3000.0)]
    reference_quality: f64,
    /// Only part 1 (no GPU needed).
    #[arg(long)]
    no_images: bool,
}

pub(crate) fn run_diversity(a: DiversityArgs) -> anyhow::Result<()> {
    if a.rounds == 0 {
        bail!("--rounds must be at least 1");
    }
    println!("# part 1: cuburn's shuffle experiment, FUSE = 20, {} rounds, seed {}", a.rounds, a.seed);
    println!(
        "{:<10} {:>10} {:>10} {:>10} {:>10} {:>12}",
        "geometry", "none", "full", "simple", "better", "warp width 1"
    );
    for (w, t) in [(16usize, 256usize), (32, 256), (32, 512), (32, 1024)] {
        let mut row = format!("{:<10}", format!("{w}x{}", t / w));
        for s in StudyShuffle::ALL {
            row += &format!(" {:>10.4}", diversity(t, w, w, s, a.rounds, a.seed));
        }
        row += &format!(" {:>12.4}", diversity(t, w, 1, StudyShuffle::None, a.rounds, a.seed));
        println!("{row}");
    }
    if a.no_images {
        return Ok(());
    }
    let renderer = match CudaRenderer::open(0) {
        Ok(r) => r,
        Err(e) => {
            println!("# part 2 skipped: {e}");
            return Ok(());
        }
    };
    let genomes = if a.genomes.is_empty() { default_genomes() } else { a.genomes.clone() };
    println!(
        "# part 2: PSNR (dB) against a per-thread reference at quality {}, renders at quality {}, size scale {} — {}",
        a.reference_quality,
        a.quality,
        a.size_scale,
        renderer.gpu().info().name
    );
    let quiet = |_: f64| {};
    let mut header = format!("{:<28}", "genome");
    let vs = variants();
    for (label, _) in &vs {
        header += &format!(" {:>14}", label.split(" (").next().unwrap_or(label));
    }
    println!("{header}");
    for path in &genomes {
        let flames = load(path)?;
        let mut f = flames[0].clone();
        f.quality = a.reference_quality;
        let reference_opts =
            IterationOptions { selection: Selection::PerThread, shuffle: Shuffle::None, ..IterationOptions::default() };
        let r = CudaRenderer::with_gpu(renderer.gpu().clone()).with_options(reference_opts)?;
        let s = RenderSettings { size_scale: a.size_scale, seed: 1, ..RenderSettings::default() };
        let reference = r.render(std::slice::from_ref(&f), f.time, &s, &quiet)?;
        let ref_px = quantized(&reference);
        f.quality = a.quality;
        let mut row = format!("{:<28}", name(path));
        for (_, o) in &vs {
            let r = CudaRenderer::with_gpu(renderer.gpu().clone()).with_options(o.clone())?;
            let s = RenderSettings { size_scale: a.size_scale, seed: 2, ..RenderSettings::default() };
            let fr = r.render(std::slice::from_ref(&f), f.time, &s, &quiet)?;
            row += &format!(" {:>14.2}", psnr_pixels(&quantized(&fr), &ref_px));
        }
        println!("{row}");
    }
    Ok(())
}

/// The 8-bit image as written to PNG, as pixels for the PSNR.
fn quantized(frame: &RenderedFrame) -> Vec<[f64; 4]> {
    let (q, channels) = quantize(frame, Bits::Eight);
    q.chunks(channels).map(|c| [f64::from(c[0]), f64::from(c[1]), f64::from(c[2]), 0.0]).collect()
}
