//! The workloads behind `warpmc bench flame` and `warpmc bench
//! shuffle-diversity`: the GPU flame renderer's speed beside the CPU
//! backend, and the point-shuffle question of Steven Robertson's cuburn
//! asked on real genomes (how much image noise each chaos-game variant
//! adds at equal sample counts).
//!
//! Each function measures one genome and returns its row, so that a caller
//! can print rows as they come.

use std::path::{Path, PathBuf};
use std::time::Instant;

use serde::Serialize;
use warpmc_flame::genome::{Flame, ParseOptions, parse_file};
use warpmc_flame::image::{Bits, PngCompression, psnr_pixels, quantized_pixels, write_png, write_png_with};
use warpmc_flame::render::cuda::{Accumulation, CudaRenderer, IterationOptions, Selection, Shuffle};
use warpmc_flame::render::{RenderSettings, RenderedFrame, render};
use warpmc_gpu::Gpu;

use crate::error::{Result, ensure};
use crate::point_shuffle::{StudyShuffle, diversity};

/// The sample genomes: the flam3-only ones in examples/flames (relative to
/// the current directory, i.e. run from the repository), sorted.
pub fn default_genomes() -> Vec<PathBuf> {
    let dir = Path::new("examples/flames");
    let mut v: Vec<PathBuf> =
        std::fs::read_dir(dir).map(|d| d.filter_map(|e| e.ok().map(|e| e.path())).collect()).unwrap_or_default();
    v.retain(|p| p.extension().is_some_and(|e| e == "flam3"));
    v.sort();
    v
}

/// The flames of a genome file (at least one).
pub fn load(path: &Path) -> Result<Vec<Flame>> {
    let parsed = parse_file(path, &ParseOptions::default())?;
    ensure(!parsed.flames.is_empty(), || format!("{}: no <flame> elements", path.display()))?;
    Ok(parsed.flames)
}

/// A genome's name in the tables: its file name without the extension.
pub fn genome_name(path: &Path) -> String {
    path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default()
}

/// The flame resized to `width × height` (camera scale follows the width,
/// as flam3's size scale does) at `quality` samples per pixel.
pub fn resized(f: &Flame, width: u32, height: u32, quality: f64) -> Flame {
    let mut f = f.clone();
    f.scale *= f64::from(width) / f64::from(f.width);
    f.width = width;
    f.height = height;
    f.quality = quality;
    f
}

/// The chaos-game variants compared, each with its label; the default
/// options first.
pub fn variants() -> Vec<(&'static str, IterationOptions)> {
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

/// Iterations per second of the chaos game of a render.
fn iteration_rate(frame: &RenderedFrame) -> f64 {
    frame.stats.iterations as f64 / frame.stats.iterate_seconds
}

/// Writes the frame as an 8-bit PNG with its sample count.
fn write(frame: &RenderedFrame, out: &Path) -> Result<()> {
    write_png(frame, Bits::Eight, out, &[("flam3_samples".into(), format!("{:e}", frame.stats.iterations as f64))])?;
    Ok(())
}

/// What `warpmc bench flame` renders.
#[derive(Clone, Debug)]
pub struct FlameBenchConfig {
    /// Image width.
    pub width: u32,
    /// Image height.
    pub height: u32,
    /// Samples per pixel of the GPU renders (flam3's quality).
    pub quality: f64,
    /// Samples per pixel of the CPU backend's render (`None`: no CPU run).
    pub cpu_quality: Option<f64>,
    /// Time every chaos-game variant of [`variants`] too.
    pub modes: bool,
    /// Where the PNGs go.
    pub out_dir: PathBuf,
}

/// One genome's speed.
#[derive(Clone, Debug, Serialize)]
pub struct FlameBenchRow {
    /// The genome's name.
    pub genome: String,
    /// Xforms, the final xform included.
    pub xforms: usize,
    /// Iterations of the GPU render.
    pub iterations: u64,
    /// Chaos-game iterations per second on the GPU.
    pub gpu_rate: f64,
    /// Seconds in the chaos game.
    pub iterate_seconds: f64,
    /// Seconds in the finishing stages (density estimation, filter, tone
    /// map).
    pub finish_seconds: f64,
    /// Seconds from the genome file to the PNG written, the first time
    /// (the kernel compiled).
    pub first_png_seconds: f64,
    /// The same, the second time (the kernel found in the cache).
    pub second_png_seconds: f64,
    /// Iterations per second of the CPU backend on all cores, if run.
    pub cpu_rate: Option<f64>,
    /// The variants' speeds, with [`FlameBenchConfig::modes`].
    pub modes: Vec<ModeRow>,
}

/// One chaos-game variant's speed on a genome.
#[derive(Clone, Debug, Serialize)]
pub struct ModeRow {
    /// The variant's label (see [`variants`]).
    pub label: &'static str,
    /// Iterations per second.
    pub rate: f64,
    /// Seconds in the chaos game.
    pub iterate_seconds: f64,
}

/// Times the first flame of the genome at `path` on `gpu` (its PNG goes to
/// the output directory as `NAME.gpu.png`, the CPU's as `NAME.cpu.png`).
///
/// The GPU render is timed end to end (genome read, kernel generation and
/// compilation, chaos game, density estimation, filtering, tone mapping,
/// PNG written) twice: the first run compiles the kernel (NVRTC; later runs
/// find it in the disk cache).
pub fn bench_genome(gpu: &Gpu, path: &Path, config: &FlameBenchConfig) -> Result<FlameBenchRow> {
    let renderer = CudaRenderer::new(gpu.clone());
    let settings = RenderSettings::default();
    let (width, height) = (config.width, config.height);
    let flames = load(path)?;
    let f = resized(&flames[0], width, height, config.quality);
    let name = genome_name(path);
    let out = config.out_dir.join(format!("{name}.gpu.png"));
    let mut ends = Vec::new();
    let mut frame = None;
    for _ in 0..2 {
        let t0 = Instant::now();
        let g = resized(&load(path)?[0], width, height, config.quality);
        let fr = renderer.render(std::slice::from_ref(&g), g.time, &settings)?;
        write(&fr, &out)?;
        ends.push(t0.elapsed().as_secs_f64());
        frame = Some(fr);
    }
    let fr = frame.expect("two runs");
    let cpu_rate = match config.cpu_quality {
        None => None,
        Some(q) => {
            let c = resized(&flames[0], width, height, q);
            let cf = render(std::slice::from_ref(&c), c.time, &settings)?;
            write(&cf, &config.out_dir.join(format!("{name}.cpu.png")))?;
            Some(iteration_rate(&cf))
        }
    };
    let modes = if config.modes { mode_rows(gpu, &f, &settings)? } else { Vec::new() };
    Ok(FlameBenchRow {
        genome: name,
        xforms: f.xforms.len() + usize::from(f.final_xform.is_some()),
        iterations: fr.stats.iterations,
        gpu_rate: iteration_rate(&fr),
        iterate_seconds: fr.stats.iterate_seconds,
        finish_seconds: fr.stats.filter_seconds,
        first_png_seconds: ends[0],
        second_png_seconds: ends[1],
        cpu_rate,
        modes,
    })
}

/// Every variant on `f`: the first render compiles the variant's kernel
/// (inside the chaos game's time), the second is timed.
fn mode_rows(gpu: &Gpu, f: &Flame, settings: &RenderSettings) -> Result<Vec<ModeRow>> {
    let mut rows = Vec::new();
    for (label, o) in variants() {
        let r = CudaRenderer::new(gpu.clone()).with_options(o)?;
        r.render(std::slice::from_ref(f), f.time, settings)?;
        let m = r.render(std::slice::from_ref(f), f.time, settings)?;
        rows.push(ModeRow { label, rate: iteration_rate(&m), iterate_seconds: m.stats.iterate_seconds });
    }
    Ok(rows)
}

/// One row of cuburn's shuffle experiment ([`diversity`]): a block
/// geometry and the diversity under each shuffle.
#[derive(Clone, Debug, Serialize)]
pub struct DiversityRow {
    /// Lanes per warp.
    pub lanes: usize,
    /// Warps per block.
    pub warps: usize,
    /// Diversity with each of [`StudyShuffle::ALL`], in order.
    pub shuffles: [f64; 4],
    /// Diversity with one map per thread (warp width 1), no shuffle.
    pub per_thread: f64,
}

/// cuburn's experiment on the block geometries 16×16, 32×8, 32×16 and
/// 32×32 (lanes × warps), `rounds` measured rounds from `seed`.
pub fn diversity_table(rounds: usize, seed: u64) -> Result<Vec<DiversityRow>> {
    ensure(rounds > 0, || "the experiment needs at least one round".to_string())?;
    Ok([(16usize, 256usize), (32, 256), (32, 512), (32, 1024)]
        .into_iter()
        .map(|(w, t)| DiversityRow {
            lanes: w,
            warps: t / w,
            shuffles: StudyShuffle::ALL.map(|s| diversity(t, w, w, s, rounds, seed)),
            per_thread: diversity(t, w, 1, StudyShuffle::None, rounds, seed),
        })
        .collect())
}

/// What the image-noise comparison renders.
#[derive(Clone, Debug)]
pub struct NoiseConfig {
    /// Size scale of the renders.
    pub size_scale: f64,
    /// Samples per pixel of the compared renders.
    pub quality: f64,
    /// Samples per pixel of the reference.
    pub reference_quality: f64,
}

/// One genome's image noise under each variant.
#[derive(Clone, Debug, Serialize)]
pub struct NoiseRow {
    /// The genome's name.
    pub genome: String,
    /// PSNR (dB) of each variant of [`variants`], in order, against the
    /// reference.
    pub psnr: Vec<f64>,
}

/// The first flame of the genome at `path` rendered with every variant at
/// [`NoiseConfig::quality`] (seed 2) and compared (PSNR) with a reference
/// rendered with per-thread choice at the reference quality (seed 1).
/// Equal sample counts, so a higher PSNR means less noise per sample.
pub fn shuffle_noise(gpu: &Gpu, path: &Path, config: &NoiseConfig) -> Result<NoiseRow> {
    let flames = load(path)?;
    let mut f = flames[0].clone();
    f.quality = config.reference_quality;
    let reference_opts =
        IterationOptions { selection: Selection::PerThread, shuffle: Shuffle::None, ..IterationOptions::default() };
    let r = CudaRenderer::new(gpu.clone()).with_options(reference_opts)?;
    let s = RenderSettings { size_scale: config.size_scale, seed: 1, ..RenderSettings::default() };
    let reference = quantized_pixels(&r.render(std::slice::from_ref(&f), f.time, &s)?);
    f.quality = config.quality;
    let mut psnr = Vec::new();
    for (_, o) in variants() {
        let r = CudaRenderer::new(gpu.clone()).with_options(o)?;
        let s = RenderSettings { size_scale: config.size_scale, seed: 2, ..RenderSettings::default() };
        let fr = r.render(std::slice::from_ref(&f), f.time, &s)?;
        psnr.push(psnr_pixels(&quantized_pixels(&fr), &reference)?);
    }
    Ok(NoiseRow { genome: genome_name(path), psnr })
}

/// Writes an animation frame as an 8-bit PNG with fast compression (as
/// `warpmc flame animate` does by default).
fn write_frame(frame: &RenderedFrame, out: &Path) -> Result<()> {
    let text = [("flam3_samples".to_string(), format!("{:e}", frame.stats.iterations as f64))];
    write_png_with(frame, Bits::Eight, out, &text, &[], PngCompression::Fast)?;
    Ok(())
}

/// What `warpmc bench flame-animate` renders.
#[derive(Clone, Debug)]
pub struct AnimateBenchConfig {
    /// Image width.
    pub width: u32,
    /// Image height.
    pub height: u32,
    /// Samples per pixel (flam3's quality).
    pub quality: f64,
    /// Frames of the animation (spread evenly over the genome's times).
    pub frames: usize,
    /// Frames of the sequential comparison run.
    pub sequential_frames: usize,
    /// Temporal samples per frame (`None`: the genome's).
    pub temporal_samples: Option<u32>,
    /// Threads encoding PNGs beside the renderer.
    pub writers: usize,
    /// Blocks per SM of the chaos game's grid (`None`: the default of
    /// [`IterationOptions`]).
    pub blocks_per_sm: Option<u32>,
    /// Where the PNGs go.
    pub out_dir: PathBuf,
}

/// One genome's animation speed.
#[derive(Clone, Debug, Serialize)]
pub struct AnimateBenchRow {
    /// The genome's name.
    pub genome: String,
    /// Xforms of its first flame, the final xform included.
    pub xforms: usize,
    /// Temporal samples per frame.
    pub temporal_samples: u32,
    /// Blocks per SM of the chaos game's grid.
    pub blocks_per_sm: u32,
    /// Frames written by the pipeline.
    pub frames: usize,
    /// Frames written per second by the pipeline: one renderer keeping its
    /// buffers, PNGs encoded on writer threads while the next frame renders.
    pub frames_per_second: f64,
    /// Frames per second, one frame after the other: a renderer that
    /// allocates per frame, each PNG written before the next render.
    pub sequential_frames_per_second: f64,
    /// Mean seconds per pipeline frame in the chaos game.
    pub iterate_seconds: f64,
    /// Mean seconds per pipeline frame in density estimation, filtering
    /// and tone mapping (the download of the pixels included).
    pub finish_seconds: f64,
    /// Mean seconds per pipeline frame of the render call, end to end.
    pub render_seconds: f64,
    /// Mean seconds a writer thread spent per frame (PNG encoding and
    /// writing).
    pub write_seconds: f64,
    /// Iterations per frame.
    pub iterations: u64,
}

/// The frame times of an animation of `n` frames over the flames' times.
fn frame_times(flames: &[Flame], n: usize) -> Vec<f64> {
    let (t0, t1) = (flames[0].time, flames[flames.len() - 1].time);
    let step = if n > 1 { (t1 - t0) / n as f64 } else { 0.0 };
    (0..n).map(|k| t0 + k as f64 * step).collect()
}

/// Renders `frames` and writes them as PNGs: on `writers` threads fed
/// through a bounded channel when `writers > 0`, else inline. Returns the
/// wall time and the mean seconds a write took.
fn write_animation(
    r: &CudaRenderer,
    flames: &[Flame],
    times: &[f64],
    settings: &RenderSettings,
    writers: usize,
    out: &Path,
    stats: &mut Vec<RenderedFrame>,
) -> Result<(f64, f64)> {
    use std::sync::mpsc::sync_channel;
    use std::sync::{Arc, Mutex};

    let start = Instant::now();
    let path = |k: usize| out.join(format!("frame{k:05}.png"));
    if writers == 0 {
        let mut write_seconds = 0.0;
        for (k, &t) in times.iter().enumerate() {
            let fr = r.render(flames, t, settings)?;
            let w = Instant::now();
            write_frame(&fr, &path(k))?;
            write_seconds += w.elapsed().as_secs_f64();
            stats.push(RenderedFrame { pixels: Vec::new(), ..fr });
        }
        return Ok((start.elapsed().as_secs_f64(), write_seconds / times.len().max(1) as f64));
    }
    let (tx, rx) = sync_channel::<(usize, RenderedFrame)>(writers);
    let rx = Arc::new(Mutex::new(rx));
    let threads: Vec<_> = (0..writers)
        .map(|_| {
            let rx = rx.clone();
            let out = out.to_path_buf();
            std::thread::spawn(move || -> Result<f64> {
                let mut secs = 0.0;
                loop {
                    let next = rx.lock().unwrap_or_else(|e| e.into_inner()).recv();
                    let Ok((k, fr)) = next else { return Ok(secs) };
                    let w = Instant::now();
                    write_frame(&fr, &out.join(format!("frame{k:05}.png")))?;
                    secs += w.elapsed().as_secs_f64();
                }
            })
        })
        .collect();
    let mut result: Result<()> = Ok(());
    for (k, &t) in times.iter().enumerate() {
        match r.render(flames, t, settings) {
            Ok(fr) => {
                stats.push(RenderedFrame { pixels: Vec::new(), stats: fr.stats.clone(), ..fr });
                if tx.send((k, fr)).is_err() {
                    break;
                }
            }
            Err(e) => {
                result = Err(e.into());
                break;
            }
        }
    }
    drop(tx);
    let mut write_seconds = 0.0;
    for t in threads {
        write_seconds += t.join().map_err(|_| crate::error::BenchError::Invalid("a PNG writer panicked".into()))??;
    }
    result?;
    Ok((start.elapsed().as_secs_f64(), write_seconds / times.len().max(1) as f64))
}

/// An animation of the genome at `path` (at least two flames: its frames
/// interpolate between them, with the genome's motion blur) rendered on
/// `gpu` at the configured size and quality and written as PNG files:
/// first through the pipeline (one renderer keeping its buffers, PNGs
/// encoded on writer threads while the next frame renders), then frame
/// after frame for comparison. A first frame is rendered before either
/// run, so that the kernels are compiled.
pub fn bench_animation(gpu: &Gpu, path: &Path, config: &AnimateBenchConfig) -> Result<AnimateBenchRow> {
    let flames: Vec<Flame> =
        load(path)?.iter().map(|f| resized(f, config.width, config.height, config.quality)).collect();
    ensure(flames.len() >= 2, || format!("{}: an animation needs at least two flames", path.display()))?;
    ensure(config.frames > 0, || "no frames to render".to_string())?;
    let temporal = config.temporal_samples.unwrap_or(flames[0].temporal_samples.max(1));
    let settings = RenderSettings { temporal_samples: Some(temporal), ..RenderSettings::default() };
    let times = frame_times(&flames, config.frames);
    let name = genome_name(path);
    let out = config.out_dir.join(format!("{name}.animation"));
    std::fs::create_dir_all(&out).map_err(|e| crate::error::BenchError::Invalid(format!("{}: {e}", out.display())))?;

    let d = IterationOptions::default();
    let options = IterationOptions { blocks_per_sm: config.blocks_per_sm.unwrap_or(d.blocks_per_sm), ..d };
    let pipeline = CudaRenderer::new(gpu.clone()).with_options(options.clone())?.keeping_buffers();
    pipeline.render(&flames, times[0], &settings)?;
    let mut frames = Vec::new();
    let (wall, write_seconds) =
        write_animation(&pipeline, &flames, &times, &settings, config.writers.max(1), &out, &mut frames)?;
    pipeline.release_buffers();

    let sequential = CudaRenderer::new(gpu.clone()).with_options(options.clone())?;
    let n_seq = config.sequential_frames.clamp(1, times.len());
    let mut seq_frames = Vec::new();
    let (seq_wall, _) = write_animation(&sequential, &flames, &times[..n_seq], &settings, 0, &out, &mut seq_frames)?;

    let n = frames.len().max(1) as f64;
    let mean = |f: &dyn Fn(&RenderedFrame) -> f64| frames.iter().map(f).sum::<f64>() / n;
    Ok(AnimateBenchRow {
        genome: name,
        xforms: flames[0].xforms.len() + usize::from(flames[0].final_xform.is_some()),
        temporal_samples: temporal,
        blocks_per_sm: options.blocks_per_sm,
        frames: frames.len(),
        frames_per_second: frames.len() as f64 / wall,
        sequential_frames_per_second: seq_frames.len() as f64 / seq_wall,
        iterate_seconds: mean(&|f| f.stats.iterate_seconds),
        finish_seconds: mean(&|f| f.stats.filter_seconds),
        render_seconds: mean(&|f| f.stats.iterate_seconds + f.stats.filter_seconds),
        write_seconds,
        iterations: frames.first().map_or(0, |f| f.stats.iterations),
    })
}
