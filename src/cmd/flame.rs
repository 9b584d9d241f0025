//! `warpmc flame`: render flam3 genomes, animate sequences, describe
//! genomes, compare images.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use anyhow::{Context, anyhow, bail};
use clap::{Args, Subcommand, ValueEnum};
use indicatif::{ProgressBar, ProgressStyle};
use warpmc_flame::FlameError;
use warpmc_flame::genome::write_flame;
use warpmc_flame::genome::{Flame, ParseOptions, ParsedGenome};
use warpmc_flame::image::{
    Bits, ImageFormat, JPEG_DEFAULT_QUALITY, LoadedImage, MAX_PNG_TEXT_BYTES, PngCompression, encode_jpeg_with,
    encode_png_with, encode_ppm, encoding_bytes, psnr, read_png, write_png,
};
use warpmc_flame::interpolate::{Keyframes, interpolate};
use warpmc_flame::palette::PaletteLibrary;
use warpmc_flame::render::cuda::{Accumulation, CudaRenderer, IterationOptions, Selection, Shuffle};
use warpmc_flame::render::{
    Field, FrameCost, Precision, RenderSettings, RenderedFrame, frame_cost, render_with_progress, with_scales,
};
use warpmc_gpu::{BackendChoice, Device, select};
use warpmc_host::memory::human_bytes;

use super::duration;
use super::flame_animate;

/// Appends a line to a `String` (infallible, unlike `writeln!`'s type
/// says).
macro_rules! outln {
    ($text:expr, $($arg:tt)*) => {{
        $text += &format!($($arg)*);
        $text.push('\n');
    }};
}

#[derive(Debug, Args)]
pub(crate) struct FlameArgs {
    #[command(subcommand)]
    command: FlameCommand,
}

#[derive(Debug, Subcommand)]
enum FlameCommand {
    /// Render the flames of a genome file to PNG (or JPEG, PPM), as
    /// flam3-render does.
    ///
    /// Size, quality, filters and colours come from the genome; the
    /// options scale them. A file with several <flame> elements gives one
    /// image per flame (NAME.00000.png, …) unless --flame or --name picks one.
    ///
    /// Example: warpmc flame render sheep.flam3 -o sheep.png --quality-scale 0.1
    Render(RenderArgs),
    /// Render the frames of an animation between the flames of a file, as
    /// flam3-animate does: frame t is the flame interpolated at time t, with
    /// the genome's temporal samples for motion blur.
    Animate(AnimateArgs),
    /// Summarise a genome file: flames, sizes, xforms, variations used and
    /// whether warpmc supports them all (how many genomes have every
    /// variation implemented, which variations the others lack).
    Info(InfoArgs),
    /// PSNR in dB between two PNG images of the same size (RGB, 8-bit
    /// scale, as they show over black), printed as a bare number (inf for
    /// identical pixels); optionally a side-by-side picture. PNG only:
    /// convert a JPEG or PPM render to PNG first (`ffmpeg -i x.jpg x.png`).
    Compare(CompareArgs),
    /// Make and change genomes as flam3-genome does: random, mutate, cross,
    /// sequence, rotate, inter, clone, strip, animate.
    Genome(super::flame_genome::GenomeArgs),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum SelectionArg {
    /// One xform per warp, no divergence (cuburn).
    Warp,
    /// One xform per thread, as the CPU.
    Thread,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum ShuffleArg {
    /// Points stay in their thread.
    None,
    /// cuburn's fixed exchange through shared memory.
    Simple,
    /// A random rotation of each warp's lanes, then the simple exchange.
    Better,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum AccumulationArg {
    /// One vector atomic per run of samples a thread puts in one cell
    Plain,
    /// Warp-aggregated atomics (match_any, one atomic per cell and warp).
    Aggregated,
    /// Runs summed through a per-block cache of hot cells in shared memory
    Shared,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum PngCompressionArg {
    Fast,
    Balanced,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum PrecisionArg {
    F32,
    F64,
}

#[derive(Debug, Args)]
struct GenomeArgs {
    /// A flam3 genome file (.flam3, .flame: XML with one or more <flame>);
    /// - reads it from standard input.
    genome: PathBuf,
    /// flam3-palettes.xml, for genomes with numbered palettes (default:
    /// $FLAM3_PALETTES, /usr/share/flam3/flam3-palettes.xml).
    #[arg(long, value_name = "FILE")]
    palettes: Option<PathBuf>,
    /// Fail when a genome uses a variation or xform attribute warpmc does
    /// not know, or a keyword flam3 does not know (filter_shape="sinc"),
    /// instead of dropping it or keeping the default with a warning (the
    /// default, as flam3-render does); also fail, as flam3 does, on a palette
    /// of more than 256 colours (Fractorium's; otherwise averaged to 256) and
    /// on a chaos row that gives every xform zero weight (otherwise xform 0
    /// follows, as in Fractorium).
    #[arg(long)]
    strict: bool,
    /// Accepted for older scripts; unknown variations are dropped by
    /// default now.
    #[arg(long, hide = true)]
    skip_unknown_variations: bool,
}

#[derive(Debug, Args)]
struct RenderOpts {
    /// Multiply the genome's quality (samples per pixel).
    #[arg(long, short = 'q', default_value_t = 1.0, value_name = "QS", value_parser = positive_finite("quality scale"))]
    quality_scale: f64,
    /// Multiply the image size (and the camera scale with it).
    #[arg(long, short = 's', default_value_t = 1.0, value_name = "SS", value_parser = positive_finite("size scale"))]
    size_scale: f64,
    /// Seed of the random streams: the same seed gives the same image.
    #[arg(long, default_value_t = 0, value_parser = super::parse_u64)]
    seed: u64,
    /// Bits per channel of PNG and PPM images: 8 or 16.
    #[arg(long, default_value_t = 8, value_parser = parse_bits)]
    bits: u8,
    /// Quality of JPEG output (.jpg, .jpeg), 1 to 100; flam3's default 75
    /// (libjpeg's), with chroma at half resolution (4:2:0) as flam3 writes it.
    #[arg(long, value_parser = clap::value_parser!(u8).range(1..=100))]
    jpeg_quality: Option<u8>,
    /// Transparent background (RGBA PNG; with `flame animate --video`, a
    /// .mov in ProRes 4444 with alpha or a .webm in VP9 with alpha) instead
    /// of the genome's colour.
    #[arg(long)]
    transparent: bool,
    /// Tone-map and clip each supersampled cell before the spatial filter
    /// (flam3-render's and flam3-animate's earlyclip=1): bright edges stay
    /// smooth instead of ringing. Discards 100 iterations after each
    /// restart of the chaos game instead of 15, as flam3 does then.
    #[arg(long)]
    early_clip: bool,
    /// Width over height of each output pixel (flam3-render's and
    /// flam3-animate's pixel_aspect), for video shown on non-square pixels,
    /// e.g. 0.90909 for NTSC: the flame is drawn stretched so that it looks
    /// right on them. The default 1 is square pixels.
    #[arg(
        long,
        value_name = "R",
        default_value_t = 1.0,
        allow_negative_numbers = true,
        value_parser = positive_finite("pixel aspect ratio")
    )]
    pixel_aspect: f64,
    /// Where to render: auto (CUDA when a device is usable, else all CPU
    /// cores), cpu, or cuda (an error when there is no device). The GPU is
    /// the one WARPMC_DEVICE names (0 by default).
    #[arg(long, default_value = "auto", value_name = "B")]
    backend: BackendChoice,
    /// Histogram precision. f32: on the CPU, flam3-render's default
    /// histogram of unsigned 32-bit counts (exact, held at 2^32 - 1 as
    /// flam3's); on the GPU, floats, exact to about 66,000 hits per cell
    /// (the brightest cells of a very long render can drift by a few
    /// levels). f64: doubles on both, twice the memory, exact to the last
    /// hit. Floats and doubles are read held at 2^32 - 1, as flam3 holds
    /// its counts.
    #[arg(long, value_enum, default_value = "f32")]
    precision: PrecisionArg,
    /// GPU: how xforms are chosen (per warp, points must move between warps
    /// after each iteration, --shuffle, or each warp's points stay on one
    /// path of the chaos game).
    #[arg(long, value_enum, default_value = "thread", help_heading = "GPU tuning")]
    selection: SelectionArg,
    /// GPU: how points move between warps after each iteration (with
    /// --selection warp).
    #[arg(long, value_enum, default_value = "better", help_heading = "GPU tuning")]
    shuffle: ShuffleArg,
    /// GPU: how samples are added into the histogram.
    #[arg(long, value_enum, default_value = "shared", help_heading = "GPU tuning")]
    accumulation: AccumulationArg,
    /// GPU: chaos-game arithmetic (f32 is the fast default).
    #[arg(long, value_enum, default_value = "f32", help_heading = "GPU tuning")]
    gpu_arithmetic: PrecisionArg,
    /// No progress bar.
    #[arg(long)]
    quiet: bool,
}

#[derive(Debug, Args)]
struct RenderArgs {
    #[command(flatten)]
    genome: GenomeArgs,
    /// Output image: .png, .jpg/.jpeg for JPEG, or .ppm for binary PPM
    /// (default: the genome's file name with .png, in the current
    /// directory, flame.png for standard input; with several flames,
    /// NAME.00000.png, …). An existing directory takes the default names.
    #[arg(long, short = 'o', value_name = "OUT.png")]
    out: Option<PathBuf>,
    /// Render only the flame with this index (0-based, file order).
    #[arg(long, conflicts_with = "name")]
    flame: Option<usize>,
    /// Render only the flame with this name attribute.
    #[arg(long)]
    name: Option<String>,
    #[command(flatten)]
    opts: RenderOpts,
}

// --jpeg-quality comes with the render options but is refused here (frames
// are PNG or video): kept out of this command's --help.
#[derive(Debug, Args)]
#[command(mut_arg("jpeg_quality", |a| a.hide(true)))]
struct AnimateArgs {
    #[command(flatten)]
    genome: GenomeArgs,
    /// First frame time, a whole number as in flam3-animate (default: the
    /// first flame's time, truncated).
    #[arg(long, value_parser = parse_frame_time)]
    begin: Option<i64>,
    /// Last frame time, a whole number (default: the last flame's time,
    /// truncated, less one, as flam3-animate: in a looping sequence the
    /// last flame's frame is the first of the next loop).
    #[arg(long, value_parser = parse_frame_time)]
    end: Option<i64>,
    /// Time step between frames, a whole number.
    #[arg(long, default_value_t = 1, value_parser = parse_frame_time)]
    dtime: i64,
    /// Output file prefix; frames are PREFIXNNNNN.png [default: frame].
    /// Not used with --video, which writes no frame files.
    #[arg(long, short = 'o', value_name = "PREFIX")]
    prefix: Option<String>,
    /// Encode the frames into this video (e.g. out.mp4: H.264; out.webm:
    /// VP9; with
    /// --transparent, out.mov: ProRes 4444 with alpha, or out.webm: VP9
    /// with alpha) through ffmpeg
    /// instead of writing PNG files (ffmpeg must be on the PATH; without it
    /// the command stops before rendering). Interrupted, the frames so far
    /// are kept as OUT.frames-FIRST-LAST.mp4; a process killed outright
    /// (kill -9, out of memory, a lost node) leaves no OUT.mp4, only a
    /// hidden .warpmc-…-partial-OUT.mp4 beside it (as large as the frames
    /// encoded; a later warpmc on the same host writing there removes it
    /// once it has lain untouched for 15 minutes), so for long renders
    /// write PNG frames (--skip-existing resumes them) and encode them
    /// afterwards, with even sides and BT.709 colours as --video writes
    /// them (frames of times 0 to 99999): `ffmpeg -framerate 30
    /// -pattern_type glob -i 'frame*.png' -vf
    /// 'pad=ceil(iw/2)*2:ceil(ih/2)*2,scale=out_color_matrix=bt709:out_range=tv,format=yuv420p'
    /// -colorspace bt709 -color_primaries bt709 -color_trc bt709 out.mp4`.
    /// In the video warpmc writes, odd sides are filled by repeating the last column or
    /// row; --pixel-aspect becomes the video's sample aspect ratio, and
    /// --fields makes it interlaced H.264, top field first.
    #[arg(long, value_name = "OUT.mp4")]
    video: Option<PathBuf>,
    /// Frames per second of the video: a whole number, a decimal (29.97)
    /// or a ratio (30000/1001, NTSC's exact rate).
    #[arg(long, default_value = "30", value_parser = flame_animate::FrameRate::parse)]
    fps: flame_animate::FrameRate,
    /// Constant-quality factor of an H.264 or VP9 (.webm) video (0 best,
    /// 51 worst; 0 is x264's lossless mode, which few players decode, and
    /// the frames are still converted to 4:2:0 colour first).
    #[arg(long, default_value_t = 18, value_parser = clap::value_parser!(u8).range(0..=51))]
    crf: u8,
    /// Compression of PNG frames: fast (files about a third larger,
    /// written some forty times faster) or balanced (as `flame render`)
    /// [default: fast]. Not used with --video.
    #[arg(long, value_enum)]
    png_compression: Option<PngCompressionArg>,
    /// Also write a PNG with a grid of small frames (at most 100, evenly
    /// spaced).
    #[arg(long, value_name = "FILE.png")]
    contact_sheet: Option<PathBuf>,
    /// Temporal samples per frame (default: the genome's temporal_samples
    /// at the frame's time).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..))]
    temporal_samples: Option<u32>,
    /// Interlaced frames for field-based video (flam3-animate's fields=1):
    /// the even rows of frame t show the flame at time t, the odd rows at
    /// time t + 0.5, each field rendered at half the height.
    #[arg(long)]
    fields: bool,
    /// Leave out the frames whose PNG file is already there, finished (a
    /// whole, readable PNG of the frame's size, channels and bits; a file
    /// cut short or damaged is rendered again): an animation stopped by Ctrl-C,
    /// a batch system or a crash, run again with the same command, renders
    /// only what is missing. Frames are written whole or not at all, so a
    /// file at a frame's name is a finished frame; whether it was rendered
    /// with the same genome and options is not checked.
    #[arg(long, conflicts_with = "video")]
    skip_existing: bool,
    #[command(flatten)]
    opts: RenderOpts,
}

impl AnimateArgs {
    /// The frames' file prefix (-o), "frame" when not given.
    fn prefix(&self) -> &str {
        self.prefix.as_deref().unwrap_or("frame")
    }
}

#[derive(Debug, Args)]
struct InfoArgs {
    #[command(flatten)]
    genome: GenomeArgs,
}

#[derive(Debug, Args)]
struct CompareArgs {
    /// First image (PNG).
    a: PathBuf,
    /// Second image (PNG; needed unless --text).
    #[arg(required_unless_present = "text")]
    b: Option<PathBuf>,
    /// Also write a PNG with the first image, the second, and their
    /// difference ×4, side by side.
    #[arg(long, value_name = "OUT.png", conflicts_with = "text")]
    montage: Option<PathBuf>,
    /// Print the PNG text chunk KEY of the first image (e.g. flam3_samples)
    /// instead of comparing.
    #[arg(long, value_name = "KEY")]
    text: Option<String>,
}

/// A parser of a number that must be positive and finite (`what` names it
/// in the error), so that a bad option is blamed on the option rather than
/// on the genome it is applied to.
fn positive_finite(what: &'static str) -> impl Fn(&str) -> Result<f64, String> + Clone + Send + Sync + 'static {
    move |s: &str| match s.trim().parse::<f64>() {
        Ok(x) if x > 0.0 && x.is_finite() => Ok(x),
        Ok(x) => Err(format!("the {what} must be positive and finite, not {x}")),
        Err(_) => Err(format!("the {what} must be a number, not '{s}'")),
    }
}

fn parse_bits(s: &str) -> Result<u8, String> {
    match s {
        "8" => Ok(8),
        "16" => Ok(16),
        _ => Err(format!("bits must be 8 or 16, not '{s}'")),
    }
}

pub(crate) fn run(args: FlameArgs) -> anyhow::Result<()> {
    match args.command {
        FlameCommand::Render(a) => run_render(a),
        FlameCommand::Animate(a) => run_animate(a),
        FlameCommand::Info(a) => run_info(a),
        FlameCommand::Compare(a) => run_compare(a),
        FlameCommand::Genome(a) => super::flame_genome::run(a),
    }
}

/// The genome file read with the palette file --palettes names (which
/// must exist, whether or not the genome needs it) or the environment
/// names. As flam3, the palette file is read only when a flame asks for a
/// numbered palette: a genome with its colours inline renders without one.
fn read_genome(g: &GenomeArgs, strict: bool) -> anyhow::Result<ParsedGenome> {
    if let Some(p) = &g.palettes {
        PaletteLibrary::check_named(Some(p))?;
    }
    let opts = ParseOptions { strict, palette_file: g.palettes.clone() };
    let parsed = super::flame_genome::read_input(&g.genome, &opts).map_err(|e| match e.downcast::<FlameError>() {
        Ok(e @ FlameError::UnknownVariation(_)) => anyhow!("{e} (without --strict they are dropped with a warning)"),
        Ok(e) => e.into(),
        Err(e) => e,
    })?;
    if parsed.flames.is_empty() {
        bail!("{}: no <flame> elements", g.genome.display());
    }
    Ok(parsed)
}

fn load(g: &GenomeArgs) -> anyhow::Result<ParsedGenome> {
    let parsed = read_genome(g, g.strict)?;
    for w in &parsed.warnings {
        noteln!("warning: {w}");
    }
    Ok(parsed)
}

fn precision(p: PrecisionArg) -> Precision {
    match p {
        PrecisionArg::F32 => Precision::F32,
        PrecisionArg::F64 => Precision::F64,
    }
}

/// Where frames are rendered.
enum Engine {
    Cpu,
    /// The GPU.
    Cuda(Box<CudaRenderer>),
}

impl Engine {
    /// The backend `o` asks for (resolved by warpmc_gpu::select); `auto`
    /// falls back to the CPU with the reason printed.
    /// With `keep_buffers`, a GPU keeps its device buffers from one frame
    /// to the next (an animation's frames share a size).
    fn open(o: &RenderOpts, keep_buffers: bool) -> anyhow::Result<Engine> {
        let engine = match select(o.backend)? {
            Device::Cuda(gpu) => {
                let r = CudaRenderer::new(gpu).with_options(iteration_options(o))?;
                Engine::Cuda(Box::new(if keep_buffers { r.keeping_buffers() } else { r }))
            }
            Device::Cpu { fallback } => {
                if let (Some(why), false) = (fallback, o.quiet) {
                    noteln!("backend: cpu, {} ({why})", cpu_threads());
                }
                let ignored = gpu_tuning_set(o);
                if !ignored.is_empty() {
                    noteln!(
                        "warning: {} tune{} the GPU's chaos game; the CPU renders as without {}",
                        ignored.join(", "),
                        if ignored.len() == 1 { "s" } else { "" },
                        if ignored.len() == 1 { "it" } else { "them" }
                    );
                }
                Engine::Cpu
            }
        };
        if let (Engine::Cuda(r), false) = (&engine, o.quiet) {
            noteln!("backend: cuda, {}", r.gpu().info().name);
        }
        Ok(engine)
    }

    fn render(
        &self,
        flames: &[Flame],
        time: f64,
        s: &RenderSettings,
        progress: &(dyn Fn(f64) + Sync),
    ) -> Result<RenderedFrame, FlameError> {
        match self {
            Engine::Cpu => render_with_progress(flames, time, s, progress),
            Engine::Cuda(r) => r.render_with_progress(flames, time, s, progress),
        }
    }

    /// What the frame costs here, checked before anything is allocated:
    /// its iterations can be counted, the render fits in host (and GPU)
    /// memory, and so does encoding it as a PNG of `bits`.
    fn checked_cost(&self, flames: &[Flame], time: f64, s: &RenderSettings, bits: Bits) -> anyhow::Result<FrameCost> {
        let cost = match self {
            Engine::Cpu => frame_cost(flames, time, s)?,
            Engine::Cuda(r) => r.frame_cost(flames, time, s)?,
        };
        cost.check_host_memory()?;
        let (w, h) = (cost.width, cost.height);
        let pixels = (u64::from(w) * u64::from(h)).saturating_mul(32);
        let png = encoding_bytes(w, h, if s.transparent { 4 } else { 3 }, bits).saturating_add(pixels);
        warpmc_host::check_allocation(&format!("encoding the {w} × {h} frame as a PNG"), png)
            .map_err(anyhow::Error::msg)?;
        Ok(cost)
    }

    fn describe(&self) -> String {
        match self {
            Engine::Cpu => cpu_threads(),
            Engine::Cuda(r) => r.gpu().info().name.clone(),
        }
    }
}

/// The GPU tuning flags given other values than their defaults (the
/// values the CPU's chaos game always works as).
fn gpu_tuning_set(o: &RenderOpts) -> Vec<&'static str> {
    [
        (o.selection != SelectionArg::Thread, "--selection"),
        (o.shuffle != ShuffleArg::Better, "--shuffle"),
        (o.accumulation != AccumulationArg::Shared, "--accumulation"),
        (o.gpu_arithmetic != PrecisionArg::F32, "--gpu-arithmetic"),
    ]
    .into_iter()
    .filter_map(|(set, flag)| set.then_some(flag))
    .collect()
}

/// The GPU chaos-game options the flags ask for.
fn iteration_options(o: &RenderOpts) -> IterationOptions {
    IterationOptions {
        selection: match o.selection {
            SelectionArg::Warp => Selection::WarpUniform,
            SelectionArg::Thread => Selection::PerThread,
        },
        shuffle: match o.shuffle {
            ShuffleArg::None => Shuffle::None,
            ShuffleArg::Simple => Shuffle::Simple,
            ShuffleArg::Better => Shuffle::Better,
        },
        accumulation: match o.accumulation {
            AccumulationArg::Plain => Accumulation::Plain,
            AccumulationArg::Aggregated => Accumulation::WarpAggregated,
            AccumulationArg::Shared => Accumulation::SharedCache,
        },
        real: precision(o.gpu_arithmetic),
        ..IterationOptions::default()
    }
}

fn settings(o: &RenderOpts, temporal_samples: Option<u32>) -> anyhow::Result<RenderSettings> {
    Ok(RenderSettings {
        quality_scale: o.quality_scale,
        size_scale: o.size_scale,
        seed: o.seed,
        precision: precision(o.precision),
        transparent: o.transparent,
        temporal_samples,
        early_clip: o.early_clip,
        pixel_aspect: o.pixel_aspect,
        ..RenderSettings::default()
    })
}

fn bits(o: &RenderOpts) -> Bits {
    if o.bits == 16 { Bits::Sixteen } else { Bits::Eight }
}

/// Ends an animation interrupted before the frame of time `t` (its `k`th)
/// was written: the frames handed over are written, a video of them kept
/// under a name of its own ([`flame_animate::Writers::keep`]), and the
/// process ends with the signal's status.
fn stop_interrupted(writers: flame_animate::Writers, k: usize, t: i64, dtime: i64, video: Option<&Path>) -> ! {
    let kept = writers.keep();
    match (k, video, kept) {
        (0, _, _) => noteln!("interrupted at the first frame: nothing was written"),
        (_, Some(v), Some((part, (first, last)))) => noteln!(
            "interrupted at time {t}: {} was not written; the frames of times {first} to {last} are in {} (go on with \
             --begin {next} and join the two videos)",
            v.display(),
            part.display(),
            next = last.saturating_add(dtime)
        ),
        (_, Some(v), None) => noteln!("interrupted at time {t}: {} was not written", v.display()),
        (_, None, _) => noteln!(
            "interrupted: the frames before time {t} were written (go on with --begin {t}, or run the same command \
             with --skip-existing)"
        ),
    }
    std::process::exit(super::interrupted_status());
}

/// Hands a frame to the writers, and gives them back. Where they refuse it
/// (a writer failed, or ffmpeg ended: stopped by a signal of its own, it
/// closed the video of the frames it had read), the video of the frames so
/// far is kept under a name of its own, which the error names; after an
/// interruption the run ends as interruptions do.
fn hand_over(
    mut writers: flame_animate::Writers,
    out: flame_animate::FrameOut,
    s: &RenderSettings,
    b: &ProgressBar,
    dtime: i64,
    video: Option<&Path>,
    skip_existing: bool,
) -> anyhow::Result<flame_animate::Writers> {
    let (k, t) = (out.index, out.time);
    let Err(e) = writers.send(out) else { return Ok(writers) };
    b.finish_and_clear();
    if cancelled(s) {
        stop_interrupted(writers, k, t, dtime, video);
    }
    match writers.keep() {
        Some((part, (first, last))) => Err(anyhow::anyhow!(
            "{e:#}; the frames of times {first} to {last} are in {} (go on with --begin {next} and join the two \
             videos)",
            part.display(),
            next = last.saturating_add(dtime)
        )),
        None if video.is_none() => Err(frames_kept(e, skip_existing)),
        None => Err(e),
    }
}

/// An error of the frame writers with what to do next: the frames written
/// are whole, and `--skip-existing` renders only the others (or, where the
/// contact sheet alone failed, writes it from the frames).
fn frames_kept(e: anyhow::Error, skip_existing: bool) -> anyhow::Error {
    let again = if skip_existing { "the same command" } else { "the same command with --skip-existing" };
    if e.downcast_ref::<flame_animate::SheetNotWritten>().is_some() {
        return anyhow::anyhow!(
            "{e:#}; every frame was written: once that is mended, {again} writes the contact sheet"
        );
    }
    anyhow::anyhow!("{e:#}; the frames written are whole: once that is mended, {again} renders the rest")
}

/// Renders stop at the first Ctrl-C (or SIGTERM) through the settings'
/// cancel flag, at their next check; a second Ctrl-C ends the process at once.
fn stop_on_ctrl_c(s: &mut RenderSettings) -> anyhow::Result<()> {
    let flag = Arc::new(AtomicBool::new(false));
    super::stop_on_signals(flag.clone(), || {
        noteln!("interrupted again: stopping at once");
        warpmc_host::output::remove_unfinished();
        std::process::exit(super::interrupted_status());
    })?;
    s.cancel = Some(flag);
    Ok(())
}

/// Whether Ctrl-C (or SIGTERM) has asked the job to stop.
fn cancelled(s: &RenderSettings) -> bool {
    s.cancel.as_ref().is_some_and(|c| c.load(Ordering::SeqCst))
}

/// Frames of at least this many iterations are announced even with
/// --quiet: they take hours on a CPU and minutes on a GPU.
const ENORMOUS: u64 = 1_000_000_000_000;

/// A frame time or step: a whole number, as flam3-animate's (also when
/// written `2.0` or `1e3`).
fn parse_frame_time(s: &str) -> Result<i64, String> {
    if let Ok(t) = s.trim().parse() {
        return Ok(t);
    }
    // 2⁶³ as f64; every whole f64 below it in magnitude is an i64.
    const LIMIT: f64 = 9_223_372_036_854_775_808.0;
    match s.trim().parse::<f64>() {
        Ok(v) if v.is_finite() && v.fract() != 0.0 => {
            Err(format!("frame times are whole numbers, as in flam3-animate ({} is not)", s.trim()))
        }
        Ok(v) if v.is_finite() && v.abs() < LIMIT => Ok(v as i64),
        Ok(v) if v.is_finite() => Err(format!("{s} is beyond the range of frame times (64-bit integers)")),
        _ => Err(format!("'{s}' is not a whole number")),
    }
}

/// The CPU renderer's threads, in words ("1 thread", "16 threads").
fn cpu_threads() -> String {
    match rayon::current_num_threads() {
        1 => "1 thread".to_string(),
        n => format!("{n} threads"),
    }
}

/// One line on what a frame takes: size, iterations, passes, memory, and
/// the time at `rate` (iterations per second, from the frames before).
fn describe_cost(label: &str, c: &FrameCost, rate: Option<f64>) -> String {
    let mut line = format!("{label}: {} × {} pixels, {:.3e} iterations", c.width, c.height, c.iterations as f64);
    if c.passes > 1 || c.temporal_samples > 1 {
        line += &format!(" in {} pass(es) of {} temporal sample(s)", c.passes, c.temporal_samples);
    }
    line += &format!(", {} of host memory", human_bytes(c.host_bytes));
    if c.device_bytes > 0 {
        line += &format!(", {} of GPU memory", human_bytes(c.device_bytes));
        if c.strips > 1 {
            line += &format!(" in each of {} strips", c.strips);
        }
    }
    if let Some(r) = rate.filter(|r| *r > 0.0) {
        line += &format!("; {} at {r:.2e} it/s", super::about(c.iterations as f64 / r));
    }
    line
}

/// The message and exit status of a render stopped by Ctrl-C.
fn interrupted(out: &Path) -> ! {
    noteln!("interrupted: the render stopped; {} was not written", out.display());
    std::process::exit(super::interrupted_status());
}

fn bar(quiet: bool, label: String, iterations: u64) -> ProgressBar {
    if quiet {
        return ProgressBar::hidden();
    }
    // One step per iteration: the ETA is right from the first rounds, even
    // for renders of years.
    let b = ProgressBar::new(iterations.max(1));
    b.set_style(
        ProgressStyle::with_template("{msg} [{bar:40}] {percent:>3}%  elapsed {elapsed}  eta {eta}")
            .expect("static template")
            .progress_chars("=> "),
    );
    b.set_message(label);
    b
}

/// Renders one frame and writes it; returns the frame for the summary.
/// `cost` is the frame's, checked; `rate` the iterations per second of the
/// frames before, for the estimate.
#[allow(clippy::too_many_arguments)]
fn render_to(
    engine: &Engine,
    flames: &[Flame],
    time: f64,
    s: &RenderSettings,
    o: &RenderOpts,
    out: &Path,
    label: String,
    cost: &FrameCost,
    rate: Option<f64>,
) -> anyhow::Result<RenderedFrame> {
    if !o.quiet || cost.iterations >= ENORMOUS {
        noteln!("{}", describe_cost(&label, cost, rate));
    }
    let b = bar(o.quiet, label.clone(), cost.iterations);
    let len = b.length().unwrap_or(1) as f64;
    let start = Instant::now();
    let log = FrameLog::new(o.quiet, 1);
    let frame = engine.render(flames, time, s, &|f| {
        b.set_position((f * len) as u64);
        log.within(&label, f, 0.0);
    });
    b.finish_and_clear();
    let frame = match frame {
        Err(FlameError::Interrupted) => interrupted(out),
        r => r?,
    };
    let secs = start.elapsed().as_secs_f64();
    let text = vec![
        ("warpmc_version".to_string(), env!("CARGO_PKG_VERSION").to_string()),
        ("warpmc_seed".to_string(), s.seed.to_string()),
        ("flam3_samples".to_string(), format!("{:e}", frame.stats.iterations as f64)),
        (
            "flam3_error_rate".to_string(),
            format!("{}", frame.stats.bad_values as f64 / (frame.stats.iterations.max(1)) as f64),
        ),
        ("warpmc_seconds".to_string(), format!("{secs:.3}")),
    ];
    write_image(&frame, flames, time, s, o, out, &text)?;
    if cancelled(s) {
        // Ctrl-C while the image was encoded: it is whole, but the job
        // stops (a shell loop over genomes sees status 130, or 143 after
        // SIGTERM).
        noteln!("interrupted: {} was written; stopping", out.display());
        std::process::exit(super::interrupted_status());
    }
    let rate = frame.stats.iterations as f64 / frame.stats.iterate_seconds.max(1e-9);
    noteln!(
        "{}: {}x{}, {:.3e} iterations in {:.2} s ({:.3e} it/s on {}; filtering {:.2} s)",
        out.display(),
        frame.width,
        frame.height,
        frame.stats.iterations as f64,
        secs,
        rate,
        engine.describe(),
        frame.stats.filter_seconds
    );
    if frame.stats.strips > 1 {
        noteln!(
            "  (in {} strips: the histogram did not fit in GPU memory; each strip ran the whole chaos game)",
            frame.stats.strips
        );
    }
    Ok(frame)
}

/// Writes a frame as the image `out`'s extension names: a PNG with `text`
/// and the frame's genome in a compressed `flam3_genome` chunk (as
/// flam3-render stores it), a JPEG with them as comments, or a PPM (which
/// holds neither).
fn write_image(
    frame: &RenderedFrame,
    flames: &[Flame],
    time: f64,
    s: &RenderSettings,
    o: &RenderOpts,
    out: &Path,
    text: &[(String, String)],
) -> anyhow::Result<()> {
    let bytes = match ImageFormat::from_path(out)? {
        ImageFormat::Png => {
            let genome = genome_chunk(flames, time, s)?;
            encode_png_with(frame, bits(o), text, &genome, PngCompression::Balanced)?
        }
        ImageFormat::Jpeg => {
            let mut comments = text.to_vec();
            comments.extend(genome_chunk(flames, time, s)?);
            encode_jpeg_with(frame, o.jpeg_quality.unwrap_or(JPEG_DEFAULT_QUALITY), &comments)?
        }
        ImageFormat::Ppm => encode_ppm(frame, bits(o))?,
    };
    warpmc_host::output::write_bytes(out, &bytes)?;
    Ok(())
}

/// The genome of the frame at `time` as it was rendered (quality and size
/// times `s`'s scales, as flam3-render writes it), as flam3 XML.
fn genome(flames: &[Flame], time: f64, s: &RenderSettings) -> anyhow::Result<String> {
    let flames = with_scales(flames, s)?;
    Ok(match &flames[..] {
        [one] => write_flame(one),
        _ => write_flame(&interpolate(&flames, time)),
    })
}

/// The `flam3_genome` text an image stores: none, with a warning, for a
/// genome larger than a PNG read here may hold
/// ([`MAX_PNG_TEXT_BYTES`], less a MiB for the other text), so that
/// `flame compare` and the genome tools still open the image.
fn genome_chunk(flames: &[Flame], time: f64, s: &RenderSettings) -> anyhow::Result<Vec<(String, String)>> {
    let xml = genome(flames, time, s)?;
    if xml.len() > MAX_PNG_TEXT_BYTES - (1 << 20) {
        noteln!(
            "warning: the frame's genome ({}) is too large to keep in the image; it is left out",
            human_bytes(xml.len() as u64)
        );
        return Ok(Vec::new());
    }
    Ok(vec![("flam3_genome".to_string(), xml)])
}

/// An error, before rendering, for an output whose extension warpmc does
/// not write, or a JPEG asked to hold what it cannot.
fn check_format(out: &Path, o: &RenderOpts) -> anyhow::Result<()> {
    let format = ImageFormat::from_path(out)?;
    if format != ImageFormat::Jpeg && o.jpeg_quality.is_some() {
        bail!("{}: --jpeg-quality is for JPEG output (.jpg, .jpeg); this file is not one", out.display());
    }
    match format {
        ImageFormat::Png => {}
        ImageFormat::Jpeg => {
            if o.bits == 16 {
                bail!("{}: JPEG holds 8 bits per channel; use .png or .ppm with --bits 16", out.display());
            }
            if o.transparent {
                bail!("{}: JPEG has no transparency; use .png with --transparent", out.display());
            }
        }
        ImageFormat::Ppm => {
            if o.transparent {
                bail!("{}: PPM has no transparency; use .png with --transparent", out.display());
            }
        }
    }
    Ok(())
}

/// An error for an image or video output named `-`: they go to files (a
/// PNG on a terminal is noise), and a file named "-" is never what was
/// meant.
fn not_standard_output(option: &str, path: &Path) -> anyhow::Result<()> {
    if path.as_os_str() == "-" {
        let (what, example) = if option == "--video" { ("a video is", "out.mp4") } else { ("images are", "out.png") };
        bail!("{option} -: {what} written to a file, not to standard output; name a file such as {example}");
    }
    Ok(())
}

/// An error unless `path` (an output always written as PNG: a contact
/// sheet, a montage) has the extension .png, or none.
fn png_only(option: &str, path: &Path) -> anyhow::Result<()> {
    not_standard_output(option, path)?;
    if ImageFormat::from_path(path).ok() != Some(ImageFormat::Png) {
        bail!("{option} {}: this output is a PNG image; give it the extension .png", path.display());
    }
    Ok(())
}

/// The files a genome command reads: the genome (from standard input, the
/// file redirected into it, if any) and the palette file it would read.
fn genome_inputs(g: &GenomeArgs) -> (Option<PathBuf>, Option<PathBuf>) {
    let genome = if g.genome.as_os_str() == "-" { stdin_file() } else { Some(g.genome.clone()) };
    (genome, PaletteLibrary::locate_path(g.palettes.as_deref()).ok())
}

/// The file standard input reads, when it is one: `< file` makes
/// /dev/stdin a link to the file; a pipe resolves to no path.
pub(crate) fn stdin_file() -> Option<PathBuf> {
    std::fs::canonicalize("/dev/stdin").ok().filter(|p| p.is_file())
}

/// Checks, before any work, that no output is another output or a file
/// the command reads (`outputs` are (option, path) pairs).
fn check_outputs_distinct(g: &GenomeArgs, outputs: &[(String, PathBuf)]) -> anyhow::Result<()> {
    use warpmc_host::output::NamedFile;
    let (genome, palettes) = genome_inputs(g);
    let mut files: Vec<NamedFile<'_>> = Vec::new();
    files.extend(genome.as_deref().map(|p| NamedFile::input("GENOME", p)));
    files.extend(palettes.as_deref().map(|p| NamedFile::input("the palette file", p)));
    files.extend(outputs.iter().map(|(option, path)| NamedFile::output(option, path)));
    warpmc_host::output::check_distinct(&files).map_err(anyhow::Error::msg)
}

/// Iterations per second of a rendered frame's chaos game.
fn rate_of(frame: &RenderedFrame) -> Option<f64> {
    (frame.stats.iterate_seconds > 0.0).then(|| frame.stats.iterations as f64 / frame.stats.iterate_seconds)
}

fn run_render(a: RenderArgs) -> anyhow::Result<()> {
    let parsed = load(&a.genome)?;
    let s = settings(&a.opts, None)?;
    let n = parsed.flames.len();
    let chosen: Vec<usize> = if let Some(i) = a.flame {
        if i >= n {
            bail!("{}: --flame {i}, but the file has {n} flame(s) (0 to {})", a.genome.genome.display(), n - 1);
        }
        vec![i]
    } else if let Some(name) = &a.name {
        let named: Vec<usize> = (0..n).filter(|&i| parsed.flames[i].name.as_deref() == Some(name.as_str())).collect();
        match named[..] {
            [] => bail!("{}: no flame named '{name}'", a.genome.genome.display()),
            [i] => vec![i],
            _ => bail!(
                "{}: {} flames are named '{name}' (flames {}); choose one with --flame",
                a.genome.genome.display(),
                named.len(),
                named.iter().map(usize::to_string).collect::<Vec<_>>().join(", ")
            ),
        }
    } else {
        (0..n).collect()
    };
    let stem = match a.genome.genome.file_stem() {
        Some(s) if a.genome.genome.as_os_str() != "-" => s.to_string_lossy().into_owned(),
        _ => "flame".into(),
    };
    // A directory given as --out holds the files under their default names
    // (numbered beside it, they would land outside it).
    let (out, dir) = match &a.out {
        Some(o) if o.is_dir() => (None, o.clone()),
        o => (o.clone(), PathBuf::new()),
    };
    let outs: Vec<PathBuf> = chosen
        .iter()
        .map(|&i| match (&out, chosen.len()) {
            (Some(o), 1) => o.clone(),
            (Some(o), _) => numbered(o, i),
            (None, 1) => dir.join(format!("{stem}.png")),
            (None, _) => dir.join(format!("{stem}.{i:05}.png")),
        })
        .collect();
    // Every output is checked before the first frame: a render may take
    // hours, and a path that cannot be written must not cost them.
    let option = if a.out.is_some() { "--out" } else { "the default output" };
    for out in &outs {
        not_standard_output("--out", out)?;
        check_format(out, &a.opts)?;
        super::check_output(option, out)?;
    }
    let named: Vec<(String, PathBuf)> = outs.iter().map(|o| (option.to_string(), o.clone())).collect();
    check_outputs_distinct(&a.genome, &named)?;
    let engine = Engine::open(&a.opts, false)?;
    // Every frame's cost too: a file whose last flame cannot be rendered
    // fails before the first is.
    let costs = chosen
        .iter()
        .map(|&i| {
            let flame = &parsed.flames[i];
            engine
                .checked_cost(std::slice::from_ref(flame), flame.time, &s, bits(&a.opts))
                .with_context(|| format!("{}: flame {}", a.genome.genome.display(), flame.label(i)))
        })
        .collect::<anyhow::Result<Vec<FrameCost>>>()?;
    let mut s = s;
    stop_on_ctrl_c(&mut s)?;
    let mut rate = None;
    for ((&i, out), cost) in chosen.iter().zip(&outs).zip(&costs) {
        let flame = &parsed.flames[i];
        let label = format!("flame {}", flame.label(i));
        let frame = render_to(&engine, std::slice::from_ref(flame), flame.time, &s, &a.opts, out, label, cost, rate)
            .with_context(|| format!("{}: flame {}", a.genome.genome.display(), flame.label(i)))?;
        rate = rate_of(&frame);
    }
    Ok(())
}

/// `out.png` → `out.00003.png`.
fn numbered(out: &Path, i: usize) -> PathBuf {
    let stem = out.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    let ext = out.extension().map(|s| s.to_string_lossy().into_owned()).unwrap_or("png".into());
    out.with_file_name(format!("{stem}.{i:05}.{ext}"))
}

fn run_animate(a: AnimateArgs) -> anyhow::Result<()> {
    if a.opts.jpeg_quality.is_some() {
        bail!("--jpeg-quality is for `flame render` to .jpg; an animation writes PNG frames or a video");
    }
    let parsed = load(&a.genome)?;
    let keyframes =
        Keyframes::new(parsed.flames, &a.genome.genome.display().to_string(), a.temporal_samples.is_some())?;
    for w in &keyframes.warnings {
        noteln!("warning: {w}");
    }
    let flames = &keyframes.flames;
    // flam3-animate's default range: from the first flame's time up to the
    // frame before the last flame's (whose frame starts the next loop of a
    // looping sequence); times truncated to whole numbers.
    let t_first = flames[0].time.trunc() as i64;
    let t_last = flames[flames.len() - 1].time.trunc() as i64;
    let begin = a.begin.unwrap_or(t_first);
    let end = a.end.unwrap_or_else(|| t_last.saturating_sub(1).max(begin));
    if a.dtime < 1 {
        bail!("--dtime must be at least 1");
    }
    // flam3-animate's frame times are C ints; beyond them a time would also
    // lose its last digits as the f64 the flames are interpolated at.
    // A default from a time beyond i64 is named by that time, not by the
    // saturated whole number.
    let (first_time, last_time) =
        (warpmc_flame::render::shown(flames[0].time), warpmc_flame::render::shown(flames[flames.len() - 1].time));
    for (option, given, t, default) in [
        ("--begin", a.begin.is_some(), begin, format!("the first flame's time, {first_time}")),
        ("--end", a.end.is_some(), end, format!("one before the last flame's time, {last_time}")),
    ] {
        if i32::try_from(t).is_err() {
            let what = if given { format!("{option} ({t})") } else { format!("the default {option} ({default})") };
            bail!("{what} is beyond the frame times flam3-animate takes (-2147483648 to 2147483647)");
        }
    }
    if end < begin {
        bail!("--end ({end}) is before --begin ({begin})");
    }
    let s = settings(&a.opts, None)?;
    // The size and quality scales applied once, here, as each frame would
    // apply them: the frames then borrow the keyframes instead of copying
    // every one of them (thousands in a flam3-genome sequence) per frame.
    let flames = with_scales(flames, &s)?.into_owned();
    let s = RenderSettings { quality_scale: 1.0, size_scale: 1.0, ..s };
    // Each frame's temporal samples: --temporal-samples, or the genome's
    // value interpolated at the frame's time, as flam3-animate takes it.
    let at_time = |s: &RenderSettings, t: i64| RenderSettings {
        temporal_samples: Some(
            a.temporal_samples.unwrap_or_else(|| interpolate(&flames, t as f64).temporal_samples).max(1),
        ),
        ..s.clone()
    };
    if a.fields && flames.iter().any(|f| f.height < 2) {
        bail!("--fields: an image one pixel high has no field of interlaced rows");
    }
    let frames = FrameTimes { begin, end, dtime: a.dtime };
    if let Some(v) = &a.video {
        not_standard_output("--video", v)?;
        flame_animate::check_video_options(v, a.opts.transparent, bits(&a.opts), a.fields)?;
        super::check_output("--video", v)?;
    }
    let video = &a.video;
    if let Some(sheet) = &a.contact_sheet {
        png_only("--contact-sheet", sheet)?;
    }
    check_outputs_distinct(&a.genome, &animation_outputs(&a, &frames))?;
    // Frames in place of the video asked for would leave a script that goes
    // on to use the video with nothing to use: stop here instead.
    if let Some(v) = video
        && let Err(why) = flame_animate::ffmpeg_runs()
    {
        bail!(
            "--video {} needs ffmpeg, but {why}: install it, or leave out --video to write the frames as \
             {}NNNNN.png",
            v.display(),
            a.prefix()
        );
    }
    let frame_path = |t: i64| flame_animate::Outputs::frame_path(a.prefix(), t);
    // Every output is checked before the first frame is rendered; for long
    // animations the first and the last frame stand for the rest (they
    // share a directory and differ only in an existing file's permissions).
    if let Some(v) = &video {
        super::check_output("--video", v)?;
    } else if frames.count() <= MAX_CHECKED_FRAMES {
        for t in frames.iter() {
            super::check_output("frame", &frame_path(t))?;
        }
    } else {
        super::check_output("frame", &frame_path(frames.begin))?;
        super::check_output("frame", &frame_path(frames.last()))?;
    }
    if let Some(sheet) = &a.contact_sheet {
        super::check_output("--contact-sheet", sheet)?;
    }
    let engine = Engine::open(&a.opts, true)?;
    // The frames' costs, as their files: all of them, or the first and the
    // last of a long animation (each frame is checked again before it is
    // rendered).
    let checked: Vec<i64> =
        if frames.count() <= MAX_CHECKED_FRAMES { frames.iter().collect() } else { vec![frames.begin, frames.last()] };
    let mut iterations = 0.0;
    let mut first_cost = None;
    let at = |t: i64| format!("{}: the frame at time {t}", a.genome.genome.display());
    for &t in &checked {
        let cost = engine.checked_cost(&flames, t as f64, &at_time(&s, t), bits(&a.opts)).with_context(|| at(t))?;
        iterations += cost.iterations as f64;
        first_cost.get_or_insert(cost);
    }
    let first_cost = first_cost.expect("at least one frame");
    let encoding = flame_animate::Encoding {
        transparent: a.opts.transparent,
        fps: a.fps,
        crf: a.crf,
        pixel_aspect: a.opts.pixel_aspect,
        fields: a.fields,
    };
    if !a.opts.quiet
        && let Some(v) = video
        && let Some(note) = flame_animate::padding_note(v, &encoding, first_cost.width, first_cost.height)
    {
        noteln!("{note}");
    }
    let total = iterations / checked.len() as f64 * frames.count() as f64;
    if !a.opts.quiet {
        noteln!("{}", describe_cost(&format!("animation: {} frame(s), each", frames.count()), &first_cost, None));
    }
    // ffmpeg's habits (frame-%04d.png, frame.png) make names such as
    // frame-%04d.png00000.png: said once the frames are known to render,
    // before the first is written.
    if let Some(prefix) = a.prefix.as_deref().filter(|_| video.is_none()) {
        let ext = Path::new(prefix).extension().and_then(|e| e.to_str()).map(str::to_ascii_lowercase);
        if prefix.contains('%') || matches!(ext.as_deref(), Some("png" | "jpg" | "jpeg" | "ppm")) {
            // What was probably meant: the prefix up to the pattern, or
            // without the extension.
            let meant = match prefix.find('%') {
                Some(at) => &prefix[..at],
                None => prefix.rsplit_once('.').map_or(prefix, |(stem, _)| stem),
            };
            noteln!(
                "warning: -o {prefix} is a prefix, to which each frame's number and .png are added ({}, as \
                 flam3-animate names them); -o {meant} gives {}",
                frame_path(frames.begin).display(),
                flame_animate::Outputs::frame_path(meant, frames.begin).display()
            );
        }
    }
    // Ctrl-C is heard from here on: a scratch video that ffmpeg is asked
    // to write (`Video::start`) is removed, not left behind by a process
    // stopped at once.
    let mut s = s;
    stop_on_ctrl_c(&mut s)?;
    let outputs = flame_animate::Outputs {
        png_prefix: video.is_none().then(|| a.prefix().to_string()),
        bits: bits(&a.opts),
        compression: match a.png_compression.unwrap_or(PngCompressionArg::Fast) {
            PngCompressionArg::Fast => PngCompression::Fast,
            PngCompressionArg::Balanced => PngCompression::Balanced,
        },
        video: match &video {
            Some(v) => {
                let started = flame_animate::Video::start(v, first_cost.width, first_cost.height, encoding)?;
                // Once ffmpeg has shown it can write the video: a refused
                // one is the one line of its error.
                if let Some(w) = flame_animate::default_codec_warning(v, a.opts.transparent) {
                    noteln!("{w}");
                }
                for (option, given) in
                    [("-o/--prefix", a.prefix.is_some()), ("--png-compression", a.png_compression.is_some())]
                {
                    if given {
                        noteln!("warning: {option} is not used with --video, which writes no frame files");
                    }
                }
                Some(started)
            }
            None => None,
        },
        sheet: a.contact_sheet.as_ref().map(|p| {
            flame_animate::ContactSheet::new(p, frames.count(), first_cost.width, first_cost.height, a.opts.transparent)
        }),
    };
    // PNG encoding is the slow part of writing: a few threads beside the
    // renderer's.
    let png_threads = std::thread::available_parallelism().map_or(2, |n| n.get()).clamp(2, 6) - 1;
    let mut writers = flame_animate::Writers::start(outputs, png_threads);

    let png_bits = match bits(&a.opts) {
        Bits::Eight => 8,
        Bits::Sixteen => 16,
    };
    // One bar for the whole animation, in iterations of the frames to
    // render: a frame left out (--skip-existing) shortens it, so that the
    // time left is that of the renders alone.
    let b = bar(a.opts.quiet, format!("frame 1/{}", frames.count()), total.min(u64::MAX as f64) as u64);
    let len = b.length().unwrap_or(1) as f64;
    let start = Instant::now();
    let log = FrameLog::new(a.opts.quiet, frames.count());
    let (mut done, mut rendered, mut bad) = (0.0f64, 0u64, 0u64);
    let (mut skipped, mut skipped_share) = (0u64, 0.0f64);
    for (k, t) in frames.iter().enumerate() {
        b.set_message(format!("frame {}/{}", k + 1, frames.count()));
        let st = at_time(&s, t);
        let cost = match engine.checked_cost(&flames, t as f64, &st, bits(&a.opts)) {
            Ok(cost) => cost,
            // Frames still being written hold memory they are about to
            // give back: once they are written, the frame is checked again.
            // (An error returned here still writes them: `Writers` drops.)
            Err(_) => {
                writers.wait_idle();
                engine.checked_cost(&flames, t as f64, &st, bits(&a.opts)).with_context(|| at(t))?
            }
        };
        let share = cost.iterations as f64 / total.max(1.0);
        if a.skip_existing
            && let Some(frame) =
                finished_frame(&frame_path(t), (cost.width, cost.height), a.opts.transparent, png_bits, || {
                    a.contact_sheet.is_some() && flame_animate::ContactSheet::shows(frames.count(), k)
                })
        {
            // Checking a frame reads all of it: thousands of them take a
            // while, and Ctrl-C is heard between them.
            if cancelled(&s) {
                b.finish_and_clear();
                stop_interrupted(writers, k, t, frames.dtime, video.as_deref());
            }
            done += share;
            skipped += 1;
            skipped_share += share;
            b.set_length(((1.0 - skipped_share) * len).max(1.0) as u64);
            if let Some(frame) = frame {
                let (text, compressed) = (Vec::new(), Vec::new());
                let out = flame_animate::FrameOut { time: t, index: k, frame, text, compressed, on_disk: true };
                writers = hand_over(writers, out, &s, &b, frames.dtime, video.as_deref(), a.skip_existing)?;
            }
            continue;
        }
        let frame = if a.fields {
            // flam3-animate: the even field at t, the odd one at t + 0.5,
            // each with the frame's temporal samples.
            let what = format!("frame {}/{} (time {t})", k + 1, frames.count());
            let field = |field, time: f64, half: f64| {
                let st = RenderSettings { field, ..st.clone() };
                engine.render(&flames, time, &st, &|f| {
                    let so_far = done + (half + f / 2.0) * share;
                    b.set_position(((so_far - skipped_share) * len) as u64);
                    log.within(&what, so_far, skipped_share);
                })
            };
            field(Field::Even, t as f64, 0.0)
                .and_then(|even| RenderedFrame::interlace(&even, &field(Field::Odd, t as f64 + 0.5, 0.5)?, cost.height))
        } else {
            let what = format!("frame {}/{} (time {t})", k + 1, frames.count());
            engine.render(&flames, t as f64, &st, &|f| {
                let so_far = done + f * share;
                b.set_position(((so_far - skipped_share) * len) as u64);
                log.within(&what, so_far, skipped_share);
            })
        };
        let frame = match frame {
            Err(FlameError::Interrupted) => {
                b.finish_and_clear();
                stop_interrupted(writers, k, t, frames.dtime, video.as_deref());
            }
            Err(e) => {
                b.finish_and_clear();
                writers.abandon();
                return Err(anyhow::Error::from(e).context(at(t)));
            }
            Ok(f) => f,
        };
        done += share;
        rendered += frame.stats.iterations;
        bad += frame.stats.bad_values;
        let text = frame_text(&s, &frame);
        let compressed = genome_chunk(&flames, t as f64, &st)?;
        let out = flame_animate::FrameOut { time: t, index: k, frame, text, compressed, on_disk: false };
        writers = hand_over(writers, out, &s, &b, frames.dtime, video.as_deref(), a.skip_existing)?;
        log.rendered(k as u64 + 1, t, done, skipped_share);
    }
    let times = writers.finish();
    b.finish_and_clear();
    let times = times.map_err(|e| if video.is_none() { frames_kept(e, a.skip_existing) } else { e })?;
    if cancelled(&s) {
        noteln!("interrupted while the last frames were written: every frame was written; stopping");
        std::process::exit(super::interrupted_status());
    }
    let secs = start.elapsed().as_secs_f64();
    let n = frames.count() - skipped;
    if skipped > 0 {
        noteln!("{skipped} frame(s) already written were left as they were (--skip-existing)");
    }
    if n == 0 {
        noteln!("no frame was left to render");
        if let Some(sheet) = &a.contact_sheet {
            noteln!("contact sheet: {}", sheet.display());
        }
        return Ok(());
    }
    let into = match (&video, &a.contact_sheet) {
        (Some(v), _) => v.display().to_string(),
        (None, _) => format!("{}NNNNN.png", a.prefix()),
    };
    noteln!(
        "{n} frame(s) of {}x{} into {into} in {secs:.2} s ({:.2} frames/s; {:.3e} iterations on {}, {bad} bad values; \
         writing {:.2} s per frame beside the renders)",
        first_cost.width,
        first_cost.height,
        n as f64 / secs.max(1e-9),
        rendered as f64,
        engine.describe(),
        times.seconds / times.frames.max(1) as f64
    );
    if let Some(sheet) = &a.contact_sheet {
        noteln!("contact sheet: {}", sheet.display());
    }
    Ok(())
}

/// With `--skip-existing`: whether the frame's file at `path` is a finished
/// frame of `size`, RGBA when `transparent` (else RGB) of `bits` per
/// sample, read back when `wanted()` (for the contact sheet): `Some(None)`
/// or `Some(Some(frame))`. `None` when the frame is to be rendered: no
/// file, or one that is not a readable PNG of that layout (said in a note;
/// it is then replaced).
fn finished_frame(
    path: &Path,
    size: (u32, u32),
    transparent: bool,
    bits: u8,
    wanted: impl FnOnce() -> bool,
) -> Option<Option<RenderedFrame>> {
    if std::fs::symlink_metadata(path).is_err() {
        return None;
    }
    let render_again = |why: String| {
        let shown = path.display().to_string();
        let why = why.strip_prefix(&format!("{shown}: ")).unwrap_or(&why).to_string();
        noteln!("note: {shown}: {why}; rendering it again");
        None
    };
    // The whole file is decoded: one cut short or damaged in a copy (a
    // frame whose header alone is right) is rendered again.
    let channels = if transparent { 4 } else { 3 };
    match warpmc_flame::image::whole_png_layout(path) {
        Ok(l) if (l.width, l.height) != size => {
            return render_again(format!("{}x{}, not the frame's {}x{}", l.width, l.height, size.0, size.1));
        }
        Ok(l) if l.channels != channels || l.bits != bits => {
            let kind = |c: usize, b: u8| {
                let what = match c {
                    4 => "RGBA",
                    3 => "RGB",
                    2 => "grey and alpha",
                    _ => "grey or palette",
                };
                format!("{what} of {b} bits")
            };
            return render_again(format!("{}, not the frame's {}", kind(l.channels, l.bits), kind(channels, bits)));
        }
        Ok(_) => {}
        Err(e) => return render_again(e.to_string()),
    }
    if !wanted() {
        return Some(None);
    }
    match warpmc_flame::image::read_png(path) {
        Ok(image) => Some(Some(RenderedFrame {
            width: image.width,
            height: image.height,
            pixels: image.pixels,
            transparent,
            stats: Default::default(),
        })),
        Err(e) => render_again(e.to_string()),
    }
}

/// Progress as lines, for a standard error that is not a terminal (a batch
/// job's log, `nohup`), where the progress bar is not drawn: a line after
/// an animation's first frame, then at most one a minute, also while a
/// long frame renders (flam3 prints its progress whatever standard error
/// is).
struct FrameLog {
    frames: u64,
    start: Instant,
    /// When the last line was printed.
    last: std::sync::Mutex<Option<Instant>>,
    on: bool,
}

impl FrameLog {
    const EVERY: std::time::Duration = std::time::Duration::from_secs(60);

    fn new(quiet: bool, frames: u64) -> Self {
        use std::io::IsTerminal;
        FrameLog {
            frames,
            start: Instant::now(),
            last: std::sync::Mutex::new(None),
            on: !quiet && !std::io::stderr().is_terminal(),
        }
    }

    /// Whether a line is due (a minute since the last one, or since the
    /// start; `first` also when none was printed yet), marking it printed.
    fn due(&self, first: bool) -> bool {
        if !self.on {
            return false;
        }
        let Ok(mut last) = self.last.try_lock() else { return false };
        let due = match *last {
            None if first => true,
            since => since.unwrap_or(self.start).elapsed() >= Self::EVERY,
        };
        if due {
            *last = Some(Instant::now());
        }
        due
    }

    /// The time left, from the `share` of the work done, of which
    /// `skipped` took no time (frames already written, `--skip-existing`).
    fn to_go(&self, share: f64, skipped: f64) -> String {
        let secs = self.start.elapsed().as_secs_f64();
        format!("{} to go", super::about(secs * (1.0 - share) / (share - skipped).max(1e-300)))
    }

    /// After frame `done_frames` (time `t`); `share` the fraction of the
    /// whole animation's iterations done.
    fn rendered(&self, done_frames: u64, t: i64, share: f64, skipped: f64) {
        if done_frames == self.frames || !self.due(true) {
            return;
        }
        let secs = self.start.elapsed().as_secs_f64();
        noteln!(
            "frame {done_frames}/{} rendered (time {t}) after {}, {}",
            self.frames,
            duration(secs),
            self.to_go(share, skipped)
        );
    }

    /// While `what` renders, `share` of the whole work done.
    fn within(&self, what: &str, share: f64, skipped: f64) {
        if !self.due(false) {
            return;
        }
        let secs = self.start.elapsed().as_secs_f64();
        noteln!("{what}: {:.0} % done after {}, {}", 100.0 * share, duration(secs), self.to_go(share, skipped));
    }
}

/// What an animation writes, as (option, path) pairs: the video, or the
/// frames' files; the contact sheet. Up to [`MAX_CHECKED_FRAMES`] frames
/// every frame's file; beyond, the first and the last, and any frame whose
/// name another file of the command has (the genome `frame00042.png`
/// among 100 000 frames).
fn animation_outputs(a: &AnimateArgs, frames: &FrameTimes) -> Vec<(String, PathBuf)> {
    let mut out = Vec::new();
    if let Some(v) = &a.video {
        out.push(("--video".to_string(), v.clone()));
    } else {
        let times: Vec<i64> = if frames.count() <= MAX_CHECKED_FRAMES {
            frames.iter().collect()
        } else {
            let (genome, palettes) = genome_inputs(&a.genome);
            let others = genome.into_iter().chain(palettes).chain(a.contact_sheet.clone());
            let mut times = vec![frames.begin, frames.last()];
            times.extend(others.filter_map(|p| frame_time_of(a.prefix(), &p)).filter(|&t| frames.contains(t)));
            times
        };
        for t in times {
            out.push((format!("the frame at time {t}"), flame_animate::Outputs::frame_path(a.prefix(), t)));
        }
    }
    if let Some(sheet) = &a.contact_sheet {
        out.push(("--contact-sheet".to_string(), sheet.clone()));
    }
    out
}

/// The time of the frame whose file name `path`'s has, when it has the
/// form of a frame's name (PREFIXNNNNN.png).
fn frame_time_of(prefix: &str, path: &Path) -> Option<i64> {
    // The part of the prefix in the frames' file names ("" for "out/").
    let stem = prefix.rsplit('/').next().unwrap_or(prefix);
    let name = path.file_name()?.to_string_lossy().into_owned();
    name.strip_prefix(stem)?.strip_suffix(".png")?.parse().ok()
}

/// The PNG text chunks of a frame: versions, seed and sample counts, as
/// flam3 writes them.
fn frame_text(s: &RenderSettings, frame: &RenderedFrame) -> Vec<(String, String)> {
    vec![
        ("warpmc_version".to_string(), env!("CARGO_PKG_VERSION").to_string()),
        ("warpmc_seed".to_string(), s.seed.to_string()),
        ("flam3_samples".to_string(), format!("{:e}", frame.stats.iterations as f64)),
        (
            "flam3_error_rate".to_string(),
            format!("{}", frame.stats.bad_values as f64 / (frame.stats.iterations.max(1)) as f64),
        ),
    ]
}

/// Animations with at most this many frames have every frame's file
/// checked before rendering starts.
const MAX_CHECKED_FRAMES: u64 = 10_000;

/// The frame times `begin, begin + dtime, …` up to `end` (`begin <= end`,
/// `dtime >= 1`).
struct FrameTimes {
    begin: i64,
    end: i64,
    dtime: i64,
}

impl FrameTimes {
    fn count(&self) -> u64 {
        ((i128::from(self.end) - i128::from(self.begin)) / i128::from(self.dtime) + 1) as u64
    }

    fn last(&self) -> i64 {
        (i128::from(self.begin) + i128::from(self.count() - 1) * i128::from(self.dtime)) as i64
    }

    /// Whether `t` is one of the frame times.
    fn contains(&self, t: i64) -> bool {
        (self.begin..=self.end).contains(&t) && (i128::from(t) - i128::from(self.begin)) % i128::from(self.dtime) == 0
    }

    fn iter(&self) -> impl Iterator<Item = i64> + '_ {
        (0..self.count()).map(|k| (i128::from(self.begin) + i128::from(k) * i128::from(self.dtime)) as i64)
    }
}

fn run_info(a: InfoArgs) -> anyhow::Result<()> {
    // Read leniently so that unsupported variations are listed, not fatal.
    let (parsed, strict_error) = if a.genome.strict {
        if let Some(p) = &a.genome.palettes {
            PaletteLibrary::check_named(Some(p))?;
        }
        let (parsed, strict_error) =
            super::flame_genome::read_input_lenient_and_strict(&a.genome.genome, a.genome.palettes.clone())?;
        if parsed.flames.is_empty() {
            bail!("{}: no <flame> elements", a.genome.genome.display());
        }
        (parsed, strict_error)
    } else {
        (read_genome(&a.genome, false)?, None)
    };
    let mut text = String::new();
    outln!(text, "{}: {} flame(s)", a.genome.genome.display(), parsed.flames.len());
    let summaries = parsed.summaries();
    for (i, (f, s)) in parsed.flames.iter().zip(&summaries).enumerate() {
        outln!(
            text,
            "  [{i}] {}: {}x{}, supersample {}, quality {}, {} xform(s){}, time {}",
            f.label(i),
            f.width,
            f.height,
            f.supersample,
            warpmc_flame::render::shown(f.quality),
            f.xforms.len(),
            if f.final_xform.is_some() { " + final" } else { "" },
            warpmc_flame::render::shown(f.time)
        );
        outln!(text, "      variations: {}", s.variations.join(", "));
        if !s.beyond_flam3.is_empty() {
            outln!(text, "      beyond flam3's (flam3-render drops them): {}", s.beyond_flam3.join(", "));
        }
        if s.unsupported.is_empty() {
            outln!(text, "      unsupported: none");
        } else {
            outln!(text, "      unsupported, dropped: {}", s.unsupported.join(", "));
        }
    }
    let iterable: Vec<Result<(), String>> = summaries.iter().map(|s| s.renders.clone()).collect();
    text += &coverage(&parsed.skipped_by_flame, &iterable);
    match iterable.iter().enumerate().find_map(|(i, r)| r.as_ref().err().map(|e| (i, e))) {
        None => outln!(text, "renders: yes"),
        Some((i, e)) => outln!(text, "renders: no (flame {i}: {e})"),
    }
    if parsed.skipped.is_empty() {
        outln!(text, "supported: yes (every variation is implemented)");
    } else {
        outln!(text, "supported: no (dropped: {})", parsed.skipped.join(", "));
    }
    for w in &parsed.warnings {
        outln!(text, "  warning: {w}");
    }
    super::write_stdout(format_args!("{text}"))?;
    if a.genome.strict {
        if !parsed.skipped.is_empty() {
            bail!("{}: unknown variations or attributes (--strict)", a.genome.genome.display());
        }
        // What else --strict refuses (a keyword flam3 does not know): the
        // error `flame render --strict` gives.
        if let Some(e) = strict_error {
            return Err(e.into());
        }
    }
    Ok(())
}

/// How many of the file's genomes render with every variation
/// implemented, and the variations the others lack, each with the number
/// of genomes that use it (most used first). The reader cannot tell an
/// unknown variation from its parameters: a dropped name that extends
/// another dropped name of its genome by `_…` counts as that one's
/// parameter.
fn coverage(skipped_by_flame: &[Vec<String>], iterable: &[Result<(), String>]) -> String {
    let mut text = String::new();
    let rendering = iterable.iter().filter(|r| r.is_ok()).count();
    let complete = skipped_by_flame.iter().zip(iterable).filter(|(s, r)| s.is_empty() && r.is_ok()).count();
    outln!(
        text,
        "genomes: {complete} of {} render with every variation implemented ({rendering} render)",
        skipped_by_flame.len()
    );
    let mut missing: std::collections::BTreeMap<&str, usize> = std::collections::BTreeMap::new();
    for names in skipped_by_flame {
        let all: std::collections::HashSet<&str> = names.iter().map(String::as_str).collect();
        let parameter = |n: &str| n.match_indices('_').any(|(i, _)| all.contains(&n[..i]));
        let variations = names.iter().filter(|n| !parameter(n));
        for n in variations {
            *missing.entry(n.as_str()).or_default() += 1;
        }
    }
    if !missing.is_empty() {
        let mut ranked: Vec<(&str, usize)> = missing.into_iter().collect();
        ranked.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
        let listed: Vec<String> = ranked.iter().map(|(n, k)| format!("{n} ({k})")).collect();
        outln!(text, "missing (genomes using each): {}", listed.join(", "));
    }
    text
}

fn run_compare(a: CompareArgs) -> anyhow::Result<()> {
    if let (Some(out), None) = (&a.montage, &a.text) {
        png_only("--montage", out)?;
        super::check_output("--montage", out)?;
        use warpmc_host::output::NamedFile;
        let mut files = vec![NamedFile::input("A", &a.a), NamedFile::output("--montage", out)];
        files.extend(a.b.as_deref().map(|b| NamedFile::input("B", b)));
        warpmc_host::output::check_distinct(&files).map_err(anyhow::Error::msg)?;
    }
    let x = read_png(&a.a)?;
    if let Some(key) = &a.text {
        let v = x
            .text
            .iter()
            .find(|(k, _)| k == key)
            .with_context(|| format!("{}: no text chunk '{key}'", a.a.display()))?;
        return super::write_stdout(format_args!("{}\n", v.1));
    }
    let b = a.b.as_ref().context("a second image is needed")?;
    let y = read_png(b)?;
    let p = psnr(&x, &y)?;
    super::write_stdout(format_args!("{p:.3}\n"))?;
    if let Some(out) = &a.montage {
        // Three images side by side: checked before they are allocated.
        let width = x.width.checked_mul(3).context("the montage would be wider than a PNG can be")?;
        let pixels = (u64::from(width) * u64::from(x.height)).saturating_mul(32);
        let bytes = pixels.saturating_add(encoding_bytes(width, x.height, 3, Bits::Eight));
        warpmc_host::check_allocation(&format!("the {width} × {} montage", x.height), bytes)
            .map_err(anyhow::Error::msg)?;
        write_png(&montage(&x, &y), Bits::Eight, out, &[])?;
    }
    Ok(())
}

/// Two images of the same size and their difference ×4, side by side.
fn montage(x: &LoadedImage, y: &LoadedImage) -> RenderedFrame {
    let (w, h) = (x.width as usize, x.height as usize);
    let mut pixels = vec![[0.0, 0.0, 0.0, 1.0]; 3 * w * h];
    for j in 0..h {
        for i in 0..w {
            let (p, q) = (x.pixels[j * w + i], y.pixels[j * w + i]);
            pixels[j * 3 * w + i] = p;
            pixels[j * 3 * w + w + i] = q;
            let d = &mut pixels[j * 3 * w + 2 * w + i];
            for k in 0..3 {
                d[k] = ((p[k] - q[k]).abs() * 4.0).min(255.0);
            }
        }
    }
    RenderedFrame { width: 3 * x.width, height: x.height, pixels, transparent: false, stats: Default::default() }
}
