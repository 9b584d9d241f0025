//! `warpmc bench flame` and `warpmc bench shuffle-diversity`: the GPU flame
//! renderer's speed beside the CPU backend, and the point-shuffle
//! experiment of Steven Robertson's cuburn rerun, first as cuburn's notes
//! ran it and then as image noise on real genomes. The measurements are
//! warpmc_bench::flame's; this parses and prints.

use std::path::PathBuf;

use anyhow::{Context, bail};
use clap::Args;
use warpmc_bench::flame::{
    self as bench, AnimateBenchConfig, DiversityRow, FlameBenchConfig, FlameBenchRow, NoiseConfig, default_genomes,
    diversity_table, shuffle_noise, variants,
};
use warpmc_gpu::{BackendChoice, select};

/// GPU fractal flames: iterations per second and time to a finished PNG.
///
/// For each genome (default: the .flam3 files in examples/flames), resized
/// to --width x --height at --quality samples per pixel (flam3's quality):
/// the render on the GPU is timed end to end (genome read, kernel
/// generation and compilation, chaos game, density estimation, filtering,
/// tone mapping, PNG written), twice: the first run compiles the kernel
/// (NVRTC; later runs find it in the disk cache). Beside it: the CPU
/// backend on all cores at a lower quality (scripts/flame-fidelity.sh
/// times flam3-render). docs/benchmarks/flame.md has an H200's numbers.
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

/// The directory the rendered PNGs go to, made if missing (once a device
/// is there to render them).
fn make_out_dir(dir: &std::path::Path) -> anyhow::Result<()> {
    if dir.exists() && !dir.is_dir() {
        bail!("--out-dir {}: is a file, not a directory", dir.display());
    }
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))
}

pub(crate) fn run_flame(a: FlameBenchArgs) -> anyhow::Result<()> {
    let genomes = if a.genomes.is_empty() { default_genomes() } else { a.genomes.clone() };
    if genomes.is_empty() {
        bail!("no genomes: pass --genomes FILE,… (the default is examples/flames/*.flam3, run from the repository)");
    }
    let out_dir = a.out_dir.clone().unwrap_or_else(|| std::env::temp_dir().join("warpmc-bench-flame"));
    let device = select(BackendChoice::Cuda).context("bench flame needs a CUDA device")?;
    let gpu = device.gpu().context("bench flame needs a CUDA device")?;
    make_out_dir(&out_dir)?;
    let info = gpu.info();
    stdoutln!(
        "# warpmc bench flame — {} ({} SMs), {}x{}, quality {}",
        info.name,
        info.sm_count,
        a.width,
        a.height,
        a.quality
    );
    stdoutln!("# CPU backend: {} threads", rayon::current_num_threads());
    stdoutln!(
        "{:<28} {:>6} {:>10} {:>12} {:>9} {:>9} {:>9} {:>12} {:>12}",
        "genome",
        "xforms",
        "iters",
        "GPU it/s",
        "iter s",
        "finish s",
        "PNG s",
        "PNG s (2nd)",
        "CPU it/s"
    );
    let config = FlameBenchConfig {
        width: a.width,
        height: a.height,
        quality: a.quality,
        cpu_quality: (!a.no_cpu).then_some(a.cpu_quality),
        modes: a.modes,
        out_dir: out_dir.clone(),
    };
    for path in &genomes {
        print_flame_row(&bench::bench_genome(gpu, path, &config)?)?;
    }
    stdoutln!("# PNGs in {}", out_dir.display());
    stdoutln!(
        "# anchors: Fractorium (OpenCL) 0.5-2.8e9 it/s on an R9 280X, ~0.7e9 on an RTX 2060; flam3 ~1e7 per CPU core"
    );
    Ok(())
}

fn print_flame_row(r: &FlameBenchRow) -> anyhow::Result<()> {
    stdoutln!(
        "{:<28} {:>6} {:>10.3e} {:>12.3e} {:>9.3} {:>9.3} {:>9.3} {:>12.3} {:>12.3e}",
        r.genome,
        r.xforms,
        r.iterations as f64,
        r.gpu_rate,
        r.iterate_seconds,
        r.finish_seconds,
        r.first_png_seconds,
        r.second_png_seconds,
        r.cpu_rate.unwrap_or(f64::NAN)
    );
    for m in &r.modes {
        stdoutln!("    {:<30} {:>12.3e} it/s  iterate {:.3} s", m.label, m.rate, m.iterate_seconds);
    }
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
    // 2^32 rounds of the largest geometry already take days.
    if a.rounds == 0 || a.rounds > 1 << 32 {
        bail!("--rounds must be between 1 and 2^32");
    }
    // Named genomes are checked first, whether or not part 2 can run.
    if let Some(bad) = a.genomes.iter().find(|p| !p.is_file()) {
        bail!("--genomes {}: not a file that can be read", bad.display());
    }
    stdoutln!("# part 1: cuburn's shuffle experiment, FUSE = 20, {} rounds, seed {}", a.rounds, a.seed);
    stdoutln!(
        "{:<10} {:>10} {:>10} {:>10} {:>10} {:>12}",
        "geometry",
        "none",
        "full",
        "simple",
        "better",
        "warp width 1"
    );
    for row in diversity_table(a.rounds, a.seed)? {
        print_diversity_row(&row)?;
    }
    if a.no_images {
        return Ok(());
    }
    let device = match select(BackendChoice::Cuda) {
        Ok(d) => d,
        Err(e) => {
            stdoutln!("# part 2 skipped: {e}");
            return Ok(());
        }
    };
    let gpu = device.gpu().context("a CUDA device")?;
    let genomes = if a.genomes.is_empty() { default_genomes() } else { a.genomes.clone() };
    stdoutln!(
        "# part 2: PSNR (dB) against a per-thread reference at quality {}, renders at quality {}, size scale {} — {}",
        a.reference_quality,
        a.quality,
        a.size_scale,
        gpu.info().name
    );
    let mut header = format!("{:<28}", "genome");
    for (label, _) in &variants() {
        header += &format!(" {:>14}", label.split(" (").next().unwrap_or(label));
    }
    stdoutln!("{header}");
    let config = NoiseConfig { size_scale: a.size_scale, quality: a.quality, reference_quality: a.reference_quality };
    for path in &genomes {
        let row = shuffle_noise(gpu, path, &config)?;
        let mut line = format!("{:<28}", row.genome);
        for p in &row.psnr {
            line += &format!(" {p:>14.2}");
        }
        stdoutln!("{line}");
    }
    Ok(())
}

fn print_diversity_row(r: &DiversityRow) -> anyhow::Result<()> {
    let mut line = format!("{:<10}", format!("{}x{}", r.lanes, r.warps));
    for d in r.shuffles {
        line += &format!(" {d:>10.4}");
    }
    line += &format!(" {:>12.4}", r.per_thread);
    stdoutln!("{line}");
    Ok(())
}

/// GPU fractal-flame animation: frames written per second.
///
/// The genome's flames (at least two) are resized to --width x --height at
/// --quality samples per pixel and --frames frames are rendered between
/// their times, with the genome's temporal samples (motion blur) unless
/// --temporal-samples says otherwise, and written as PNG files. The
/// pipeline (one renderer keeping its device buffers, PNGs encoded on
/// --writers threads while the next frame renders) is timed end to end,
/// beside --sequential-frames rendered and written one after the other by
/// a renderer that allocates per frame.
///
/// Example: warpmc bench flame-animate --genomes examples/flames/test.flam3
#[derive(Debug, Args)]
pub(crate) struct AnimateBenchArgs {
    /// Genome files with two or more flames (default: examples/flames/test.flam3).
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
    /// Frames of the animation.
    #[arg(long, default_value_t = 100)]
    frames: usize,
    /// Frames of the one-after-the-other comparison.
    #[arg(long, default_value_t = 10)]
    sequential_frames: usize,
    /// Temporal samples per frame (default: the genome's).
    #[arg(long)]
    temporal_samples: Option<u32>,
    /// PNG writer threads.
    #[arg(long, default_value_t = 4)]
    writers: usize,
    /// Blocks per SM of the chaos game's grid (default: the renderer's).
    #[arg(long)]
    blocks_per_sm: Option<u32>,
    /// Where the PNGs go (default: a temporary directory).
    #[arg(long)]
    out_dir: Option<PathBuf>,
}

pub(crate) fn run_animate(a: AnimateBenchArgs) -> anyhow::Result<()> {
    let genomes = if a.genomes.is_empty() { vec![PathBuf::from("examples/flames/test.flam3")] } else { a.genomes };
    let out_dir = a.out_dir.unwrap_or_else(|| std::env::temp_dir().join("warpmc-bench-flame-animate"));
    let device = select(BackendChoice::Cuda).context("bench flame-animate needs a CUDA device")?;
    let gpu = device.gpu().context("bench flame-animate needs a CUDA device")?;
    make_out_dir(&out_dir)?;
    let info = gpu.info();
    stdoutln!(
        "# warpmc bench flame-animate — {} ({} SMs), {}x{}, quality {}, {} frames, {} PNG writer thread(s)",
        info.name,
        info.sm_count,
        a.width,
        a.height,
        a.quality,
        a.frames,
        a.writers
    );
    stdoutln!(
        "{:<28} {:>6} {:>9} {:>7} {:>10} {:>10} {:>12} {:>9} {:>9} {:>9} {:>9} {:>8}",
        "genome",
        "xforms",
        "temporal",
        "blk/SM",
        "iters",
        "frames/s",
        "one-by-one",
        "ratio",
        "iter s",
        "finish s",
        "render s",
        "PNG s"
    );
    let config = AnimateBenchConfig {
        width: a.width,
        height: a.height,
        quality: a.quality,
        frames: a.frames,
        sequential_frames: a.sequential_frames,
        temporal_samples: a.temporal_samples,
        writers: a.writers,
        blocks_per_sm: a.blocks_per_sm,
        out_dir: out_dir.clone(),
    };
    for path in &genomes {
        let r = bench::bench_animation(gpu, path, &config)?;
        stdoutln!(
            "{:<28} {:>6} {:>9} {:>7} {:>10.3e} {:>10.2} {:>12.2} {:>9.2} {:>9.4} {:>9.4} {:>9.4} {:>8.4}",
            r.genome,
            r.xforms,
            r.temporal_samples,
            r.blocks_per_sm,
            r.iterations as f64,
            r.frames_per_second,
            r.sequential_frames_per_second,
            r.frames_per_second / r.sequential_frames_per_second,
            r.iterate_seconds,
            r.finish_seconds,
            r.render_seconds,
            r.write_seconds
        );
    }
    stdoutln!("# columns: frames/s written by the pipeline; one-by-one: the same frames rendered and written in turn,");
    stdoutln!(
        "# a new renderer's buffers per frame; ratio = pipeline / one-by-one; seconds are means per pipeline frame"
    );
    stdoutln!("# PNGs in {}", out_dir.display());
    Ok(())
}
