//! `warpmc flame genome`: flam3-genome's operations (random, mutate, cross,
//! sequence, rotate, inter, clone, strip, animate), writing flam3 XML.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use anyhow::{Context, bail};
use clap::{Args, Subcommand, ValueEnum};
use warpmc_flame::genome::tools::{
    CrossMethod, DEFAULT_TRIES, Editor, GenomeRng, MAX_VARIATIONS, MutateMethod, Operation, Parent, RandomOptions,
    Template, Tested, animate_frames, cross, default_variations, frame_flame, inter, mutate, printf_g, printf_g_digits,
    random_tested, record_edit, rotate, sequence_frames, strip, truncate_variations, until_it_passes,
};
use warpmc_flame::genome::{Document, Flame, ParseOptions, ParsedGenome, parse_file, parse_str};
use warpmc_flame::input::{MAX_GENOME_BYTES, read_bounded, read_file, too_large};
use warpmc_flame::palette::PaletteLibrary;
use warpmc_flame::variations::VariationKind;

#[derive(Debug, Args)]
pub(crate) struct GenomeArgs {
    #[command(subcommand)]
    command: GenomeCommand,
}

/// flam3-genome's operations. Each writes flam3 XML (to standard output,
/// or to -o FILE) that warpmc and flam3-render both read; the same --seed
/// gives the same bytes. A flame with a <symmetry> element is written with
/// the xforms it stands for and without the element: flam3-genome writes
/// both, so that reading its file back adds the symmetry's xforms twice.
#[derive(Debug, Subcommand)]
enum GenomeCommand {
    /// New random flames, as flam3-genome makes them with no input.
    ///
    /// Examples:
    ///   warpmc flame genome random --seed 7 -o new.flam3
    ///   warpmc flame genome random --repeat 10 --template vidres.flam3 --symmetry 3 > pick.flam3
    ///   warpmc flame genome random --vars julian,spherical,linear --xforms 3
    #[command(verbatim_doc_comment)]
    Random(RandomArgs),
    /// Mutations of a flame picked from a file (flam3-genome's mutate=).
    /// As flam3-genome, half the time the camera is framed anew on the
    /// attractor, each xform keeps its five heaviest variations, and a
    /// mutant is made again (from a flame picked anew) until it passes the
    /// test render (see --tries). The final xform is one of the xforms
    /// that the methods change, pick or delete, as in flam3.
    ///
    /// Example: warpmc flame genome mutate parent.flam3 --method post_xforms --repeat 5
    Mutate(MutateArgs),
    /// Children of a flame from each of two files (flam3-genome's
    /// cross0=/cross1=). Framing and variations as for mutate, except
    /// with --at; each child is made again (from parents picked anew) until
    /// it passes the test render (see --tries).
    ///
    /// Example: warpmc flame genome cross a.flam3 b.flam3 --method interpolate --at 0.3
    Cross(CrossArgs),
    /// An animation: each flame turning a full circle, then a transition to
    /// the next (flam3-genome's sequence=). Render it with `flame animate`.
    ///
    /// Example: warpmc flame genome sequence keys.flam3 --nframes 100 -o seq.flam3
    Sequence(SequenceArgs),
    /// Frame FRAME of a flame turning once in NFRAMES frames, with the
    /// frames before and after it for motion blur (flam3-genome's rotate=).
    ///
    /// Example: warpmc flame genome rotate one.flam3 --frame 10 --nframes 100
    Rotate(RotateArgs),
    /// Frame FRAME of the transition between the two flames of a file in
    /// NFRAMES frames, with the frames before and after it for motion blur
    /// (flam3-genome's inter=; a sequence's transitions, one frame at a
    /// time).
    ///
    /// Example: warpmc flame genome inter pair.flam3 --frame 10 --nframes 20 -o inter10.flam3
    Inter(InterArgs),
    /// The flames of a file, through a template's render settings
    /// (flam3-genome's clone_all=), or flames picked at random from it
    /// (--pick, flam3-genome's clone=). clone_all= writes no edit record;
    /// --edits adds one (action "clone") to each flame here.
    ///
    /// Example: warpmc flame genome clone sheep.flam3 --template hd.flam3 -o hd-sheep.flam3
    Clone(CloneArgs),
    /// The flame at each whole time from --begin to --end between the
    /// control points of a file (flam3-genome's animate=): the genomes
    /// `flame animate` renders at those times, one flame per frame, timed
    /// by its time, for another renderer or to edit a frame by hand. As in
    /// flam3-genome, the control points must be in time order, their
    /// <motion> elements are dropped, a frame at a control point's time is
    /// that control point, and a frame whose next time is not a control
    /// point's has its interpolation_type (of affine maps) set to linear.
    ///
    /// Example: warpmc flame genome animate keys.flam3 --begin 0 --end 99 -o frames.flam3
    Animate(AnimateArgs),
    /// A flame cut into horizontal strips whose images stacked give the
    /// flame's image, to render images too large for memory a strip at a
    /// time (flam3-genome's strip=). Each strip keeps the flame's quality
    /// per pixel, but most of its samples land outside it: render strips
    /// with --quality-scale NSTRIPS for the noise of the whole image.
    ///
    /// Example: warpmc flame genome strip poster.flam3 --nstrips 4 -o strips.flam3
    Strip(StripArgs),
}

#[derive(Debug, Args)]
struct Common {
    /// Seed of every random choice: the same seed gives the same output.
    #[arg(long, default_value_t = 0, value_parser = super::parse_u64)]
    seed: u64,
    /// Output file (default, or -: standard output). An existing file is
    /// replaced, as `flame render` replaces its image.
    #[arg(long, short = 'o', value_name = "FILE")]
    out: Option<PathBuf>,
    /// A flam3 genome whose render settings (size, quality, filters, …) the
    /// output flames take (flam3-genome's template=). As in flam3-genome,
    /// a template also makes interpolation linear and sets
    /// palette_interpolation and hsv_rgb_palette_blend to its own values,
    /// or where it gives none to flam3's defaults (hsv_circular, 0).
    #[arg(long, value_name = "FILE")]
    template: Option<PathBuf>,
    /// flam3-palettes.xml, for random palettes and numbered palettes
    /// (default: $FLAM3_PALETTES, /usr/share/flam3/flam3-palettes.xml).
    #[arg(long, value_name = "FILE")]
    palettes: Option<PathBuf>,
}

/// flam3-genome's edit records, asked for.
#[derive(Debug, Args)]
struct History {
    /// Give each flame written flam3-genome's edit record: an <edit> with
    /// the date (local time; $SOURCE_DATE_EPOCH, in UTC, where set) and
    /// what was done, holding the records of the flames it was made from,
    /// each with its file and index. Without it the flames made here carry
    /// no record (a record read with a parent is the parent's history, and
    /// flam3-render fails on a file where only some flames have one),
    /// clones keep theirs, and the same --seed gives the same bytes.
    #[arg(long)]
    edits: bool,
    /// With --edits: the nickname each record names (flam3-genome's nick=).
    #[arg(long, requires = "edits")]
    nick: Option<String>,
    /// With --edits: the web address each record names (flam3-genome's
    /// url=).
    #[arg(long, requires = "edits")]
    url: Option<String>,
    /// With --edits: the identifier each record names (flam3-genome's
    /// id=).
    #[arg(long, requires = "edits")]
    id: Option<String>,
    /// With --edits: XML content added to each record after its parents'
    /// records (flam3-genome's comment=): plain text, with & and < written
    /// as &amp; and &lt;, or elements, e.g. '<note>for the 2027 show</note>'.
    #[arg(long, requires = "edits", value_name = "XML")]
    comment: Option<String>,
}

impl History {
    /// Who signs the records, and when, where they are asked for.
    fn editor(&self) -> anyhow::Result<Option<Editor>> {
        if !self.edits {
            return Ok(None);
        }
        if let Some(c) = &self.comment {
            Editor::check_comment(c).map_err(|e| anyhow::anyhow!("--comment is not XML content ({e}): {c}"))?;
        }
        let (seconds, utc) = match std::env::var("SOURCE_DATE_EPOCH") {
            Ok(v) => (
                v.trim()
                    .parse::<i64>()
                    .ok()
                    .with_context(|| format!("SOURCE_DATE_EPOCH={v:?} is not a whole number of seconds since 1970"))?,
                true,
            ),
            Err(_) => (
                std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs() as i64),
                false,
            ),
        };
        let date = flam3_date(seconds, utc).with_context(|| format!("the date of {seconds} seconds since 1970"))?;
        Ok(Some(Editor {
            date,
            nick: self.nick.clone(),
            url: self.url.clone(),
            id: self.id.clone(),
            comment: self.comment.clone(),
        }))
    }
}

/// `seconds` since 1970 as flam3-genome dates its records (strftime's
/// "%a %b %e %H:%M:%S %z %Y"), in local time or UTC.
fn flam3_date(seconds: i64, utc: bool) -> Option<String> {
    let t = libc::time_t::try_from(seconds).ok()?;
    // SAFETY: tm is plain data that localtime_r/gmtime_r fill (or leave,
    // returning null); strftime writes at most buf.len() bytes, NUL
    // included, and returns how many it wrote before the NUL (0: none).
    unsafe {
        let mut tm: libc::tm = std::mem::zeroed();
        let filled = if utc { libc::gmtime_r(&t, &mut tm) } else { libc::localtime_r(&t, &mut tm) };
        if filled.is_null() {
            return None;
        }
        let mut buf = [0u8; 100];
        let n = libc::strftime(buf.as_mut_ptr().cast(), buf.len(), c"%a %b %e %H:%M:%S %z %Y".as_ptr(), &tm);
        (n > 0).then(|| String::from_utf8_lossy(&buf[..n]).into_owned())
    }
}

/// A file as edit records name it: its name without the directories, as
/// flam3-genome writes it.
fn record_name(path: &Path) -> String {
    path.file_name().map_or_else(|| path.display().to_string(), |n| n.to_string_lossy().into_owned())
}

/// `flame`, one of `flames` read from the file `file`, as a parent.
fn parent<'a>(flames: &'a [Flame], file: &'a str, flame: &'a Flame) -> Parent<'a> {
    Parent { flame, file, index: flames.iter().position(|f| std::ptr::eq(f, flame)).unwrap_or(0) }
}

#[derive(Debug, Args)]
struct Variety {
    /// Only these variations in random parts (names or flam3 numbers,
    /// comma-separated; flam3-genome's use_vars). As in flam3, a random
    /// final xform also keeps the linear every new xform starts with.
    #[arg(long, value_name = "LIST", conflicts_with = "no_vars")]
    vars: Option<String>,
    /// All variations but these (flam3-genome's dont_use_vars; default, as
    /// Debian's flam3-genome: noise, blur, gaussian_blur, radial_blur, rays,
    /// cross, pre_blur, separation, split, splits).
    #[arg(long, value_name = "LIST")]
    no_vars: Option<String>,
    /// Symmetry group added: 0 random (by `random` a quarter of the time,
    /// by mutate's add-symmetry always), 1 none, K > 1 K-fold rotation,
    /// K < 0 with a mirror.
    #[arg(long, default_value_t = 0, allow_negative_numbers = true, value_parser = clap::value_parser!(i64).range(-1000..=1000))]
    symmetry: i64,
}

/// flam3-genome's subpixel jitter of the flames written.
#[derive(Debug, Args)]
struct Offset {
    /// Move the image of each flame written by X:Y pixels of its
    /// supersampled grid (fractions allowed, e.g. 0.5:0.5), as
    /// flam3-genome's offset= does: the center moves by X / (scale ×
    /// supersample) in x and Y / (scale × supersample) in y, after the
    /// template. For frames rendered several times with small offsets and
    /// averaged.
    #[arg(long, value_name = "X:Y", value_parser = parse_offset, allow_hyphen_values = true)]
    offset: Option<[f64; 2]>,
}

impl Offset {
    /// Moves `f`'s center by the offset, if one was given.
    fn apply(&self, f: &mut Flame) {
        if let Some([x, y]) = self.offset {
            let per_pixel = f.scale * f64::from(f.supersample.max(1));
            f.center[0] += x / per_pixel;
            f.center[1] += y / per_pixel;
        }
    }
}

/// "X:Y", two finite numbers of pixels.
fn parse_offset(s: &str) -> Result<[f64; 2], String> {
    let bad = || format!("'{s}': give X:Y, two numbers of pixels such as 0.5:-0.25");
    let (x, y) = s.split_once(':').ok_or_else(bad)?;
    let number = |v: &str| v.trim().parse::<f64>().ok().filter(|v| v.is_finite());
    Ok([number(x).ok_or_else(bad)?, number(y).ok_or_else(bad)?])
}

#[derive(Debug, Args)]
struct RandomArgs {
    #[command(flatten)]
    common: Common,
    #[command(flatten)]
    history: History,
    #[command(flatten)]
    variety: Variety,
    /// How many flames.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..))]
    repeat: u32,
    /// Standard xforms per flame (default: 2 to 6 at random, sometimes with
    /// a final xform).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=1000))]
    xforms: Option<u32>,
    #[command(flatten)]
    tries: Tries,
}

/// flam3-genome's test render, for random, mutate and cross.
#[derive(Debug, Args)]
struct Tries {
    /// The most flames made for each one written (flam3-genome's tries,
    /// 50 as in the flam3-genome Debian ships and flam3's documentation):
    /// each is test-rendered as flam3-genome does (128 × 128 at quality 1,
    /// centred on the origin) and the first that averages at least 20
    /// with at least 1 % black and at most 5 % white pixels is written;
    /// when none does, the last is, with a warning. 0 writes the first
    /// without rendering it.
    #[arg(long, default_value_t = DEFAULT_TRIES)]
    tries: u32,
}

impl Tries {
    /// Says so when flame `rep`'s tries all failed the test render.
    fn report<T>(&self, what: &str, rep: u32, t: &Tested<T>) {
        if t.passed == Some(false) {
            noteln!(
                "warning: {what} {rep}: none of {} tries passed the test render (too dark, too empty or too \
                 white); the last is kept, as flam3-genome keeps it",
                t.tries
            );
        }
    }
}

/// The mutations, named with hyphens or, as flam3-genome spells them, with
/// underscores (all_vars, post_xforms, …).
#[derive(Debug, Clone, Copy, ValueEnum)]
enum MutateArg {
    /// Every xform, the final one too, takes the variations of the
    /// matching xform of a random flame.
    #[value(alias = "all_vars")]
    AllVars,
    /// One xform, possibly the final one, gets a random affine map (its
    /// translation only when there are at most two xforms).
    #[value(alias = "one_xform")]
    OneXform,
    /// A symmetry group is added: --symmetry's, or a random one.
    #[value(alias = "add_symmetry")]
    AddSymmetry,
    /// Pre maps are turned, scaled or moved and post maps undo part of it.
    #[value(alias = "post_xforms")]
    PostXforms,
    /// A new random palette, turned by the flame's hue (flam3's "mutate
    /// color palette"; flam3's other branches, which try new colour
    /// coordinates, change nothing and are left out).
    #[value(alias = "color_palette")]
    ColorPalette,
    /// One xform, possibly the final one, is removed.
    #[value(alias = "delete_xform")]
    DeleteXform,
    /// Every affine coefficient, the final xform's too, moves by --speed
    /// times a random one.
    #[value(alias = "all_coefs")]
    AllCoefs,
}

#[derive(Debug, Args)]
struct MutateArgs {
    /// The genome file (one of its flames is picked at random; - reads
    /// standard input).
    input: PathBuf,
    #[command(flatten)]
    common: Common,
    #[command(flatten)]
    history: History,
    #[command(flatten)]
    variety: Variety,
    /// The mutation (default: flam3's random choice); flam3-genome's
    /// spellings with underscores (post_xforms) are accepted too.
    #[arg(long, value_enum)]
    method: Option<MutateArg>,
    /// How far all-coefs moves the coefficients (flam3-genome's speed; a
    /// finite number).
    #[arg(long, default_value_t = 0.1, allow_negative_numbers = true)]
    speed: f64,
    /// How many mutants.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..))]
    repeat: u32,
    #[command(flatten)]
    tries: Tries,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum CrossArg {
    Union,
    Interpolate,
    Alternate,
}

#[derive(Debug, Args)]
struct CrossArgs {
    /// The first parent's file (a flame picked at random).
    first: PathBuf,
    /// The second parent's file.
    second: PathBuf,
    #[command(flatten)]
    common: Common,
    #[command(flatten)]
    history: History,
    /// The crossing (default: flam3's random choice).
    #[arg(long, value_enum)]
    method: Option<CrossArg>,
    /// With --method interpolate: where between the parents (0 is the
    /// first, 1 the second; default random).
    #[arg(long, requires = "method")]
    at: Option<f64>,
    /// How many children.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..))]
    repeat: u32,
    #[command(flatten)]
    tries: Tries,
}

#[derive(Debug, Args)]
struct SequenceArgs {
    /// The keyframes' file (- reads standard input).
    input: PathBuf,
    #[command(flatten)]
    common: Common,
    #[command(flatten)]
    offset: Offset,
    #[command(flatten)]
    history: History,
    /// Frames per loop and per transition.
    #[arg(long, default_value_t = 100, value_parser = clap::value_parser!(u32).range(1..))]
    nframes: u32,
    /// Full turns of each keyframe (0: transitions only). flam3-genome
    /// 3.1.1 makes one turn for any loops other than 0; here 2 makes two.
    #[arg(long, default_value_t = 1)]
    loops: u32,
    /// Spread of the xforms' transitions over the segment (0 to 1).
    #[arg(long, default_value_t = 0.0)]
    stagger: f64,
}

#[derive(Debug, Args)]
struct RotateArgs {
    /// A file with one flame (- reads standard input).
    input: PathBuf,
    #[command(flatten)]
    common: Common,
    #[command(flatten)]
    offset: Offset,
    #[command(flatten)]
    history: History,
    /// The frame (its neighbours are written too, and all three times are
    /// flam3's C ints).
    #[arg(long, default_value_t = 0, allow_negative_numbers = true, value_parser = clap::value_parser!(i64).range(-2147483647..=2147483646))]
    frame: i64,
    /// Frames per full turn.
    #[arg(long, default_value_t = 100, value_parser = clap::value_parser!(u32).range(1..))]
    nframes: u32,
}

#[derive(Debug, Args)]
struct InterArgs {
    /// A file with two flames (- reads standard input).
    input: PathBuf,
    #[command(flatten)]
    common: Common,
    #[command(flatten)]
    offset: Offset,
    #[command(flatten)]
    history: History,
    /// The frame (0 is the first flame, NFRAMES the second; its neighbours
    /// are written too, and all three times are flam3's C ints).
    #[arg(long, default_value_t = 0, allow_negative_numbers = true, value_parser = clap::value_parser!(i64).range(-2147483647..=2147483646))]
    frame: i64,
    /// Frames of the transition.
    #[arg(long, default_value_t = 100, value_parser = clap::value_parser!(u32).range(1..))]
    nframes: u32,
    /// Spread of the xforms' transitions over the transition (0 to 1).
    #[arg(long, default_value_t = 0.0)]
    stagger: f64,
}

#[derive(Debug, Args)]
struct CloneArgs {
    /// The genome file (- reads standard input).
    input: PathBuf,
    #[command(flatten)]
    common: Common,
    #[command(flatten)]
    offset: Offset,
    #[command(flatten)]
    history: History,
    /// Only the flame with this index (default: all, as clone_all=).
    #[arg(long)]
    flame: Option<usize>,
    /// Flames picked at random (flam3-genome's clone=): as there, each
    /// loses its xforms of weight below 0.001 and all but its 5 strongest
    /// variations per xform, and the picks are numbered by time 0, 1, …
    #[arg(long, conflicts_with = "flame")]
    pick: bool,
    /// How many flames --pick writes.
    #[arg(long, default_value_t = 1, requires = "pick", value_parser = clap::value_parser!(u32).range(1..))]
    repeat: u32,
}

#[derive(Debug, Args)]
struct AnimateArgs {
    /// The control points (- reads standard input).
    input: PathBuf,
    #[command(flatten)]
    common: Common,
    /// The first frame's time (default: the first control point's, as a
    /// C int).
    #[arg(long, allow_negative_numbers = true, value_parser = clap::value_parser!(i64).range(-2147483647..=2147483646))]
    begin: Option<i64>,
    /// The last frame's time (default: the last control point's; one
    /// before --begin is taken as --begin, as flam3-genome does).
    #[arg(long, allow_negative_numbers = true, value_parser = clap::value_parser!(i64).range(-2147483647..=2147483646))]
    end: Option<i64>,
    /// Spread of the xforms' transitions over each segment (0 to 1).
    #[arg(long, default_value_t = 0.0)]
    stagger: f64,
}

#[derive(Debug, Args)]
struct StripArgs {
    /// The genome file (- reads standard input); every flame is cut.
    input: PathBuf,
    #[command(flatten)]
    common: Common,
    #[command(flatten)]
    offset: Offset,
    /// How many strips (flam3-genome's strip= takes them from nframes=).
    /// Each is height / N rows high (whole rows, as flam3-genome cuts them),
    /// and together they are centred on the image: a height N does not
    /// divide leaves its remainder out, half at the top and half at the
    /// bottom (an odd remainder shifts the strips by half a row), with a
    /// warning.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..))]
    nstrips: u32,
    /// Only strip K, 0 being the top (flam3-genome's frame=; default:
    /// every strip, one flame each).
    #[arg(long, value_name = "K")]
    strip: Option<u32>,
}

pub(crate) fn run(args: GenomeArgs) -> anyhow::Result<()> {
    match args.command {
        GenomeCommand::Random(a) => run_random(a),
        GenomeCommand::Mutate(a) => run_mutate(a),
        GenomeCommand::Cross(a) => run_cross(a),
        GenomeCommand::Sequence(a) => run_sequence(a),
        GenomeCommand::Rotate(a) => run_rotate(a),
        GenomeCommand::Inter(a) => run_inter(a),
        GenomeCommand::Clone(a) => run_clone(a),
        GenomeCommand::Strip(a) => run_strip(a),
        GenomeCommand::Animate(a) => run_animate(a),
    }
}

/// Reads a genome from `path`, or standard input for `-`; variations
/// outside the reader's set are dropped with the reader's warnings.
pub(crate) fn read_input(path: &Path, opts: &ParseOptions) -> anyhow::Result<ParsedGenome> {
    let parsed =
        if path.as_os_str() == "-" { parse_str(&stdin_text()?, "<stdin>", opts)? } else { parse_file(path, opts)? };
    Ok(parsed)
}

/// The genome on standard input, as text.
fn stdin_text() -> anyhow::Result<String> {
    let bytes = read_bounded(std::io::stdin().lock(), MAX_GENOME_BYTES)
        .context("reading the genome from standard input")?
        .ok_or_else(|| too_large("standard input", MAX_GENOME_BYTES, "genome"))?;
    String::from_utf8(bytes).context("reading the genome from standard input: not UTF-8")
}

/// [`read_input`] twice: leniently, and the error a strict read
/// (`--strict`) gives, if any. Standard input is read once for both; a file
/// is read again.
pub(crate) fn read_input_lenient_and_strict(
    path: &Path,
    palette_file: Option<PathBuf>,
) -> anyhow::Result<(ParsedGenome, Option<warpmc_flame::FlameError>)> {
    let lenient = ParseOptions { strict: false, palette_file: palette_file.clone() };
    let strict = ParseOptions { strict: true, palette_file };
    if path.as_os_str() == "-" {
        let text = stdin_text()?;
        Ok((parse_str(&text, "<stdin>", &lenient)?, parse_str(&text, "<stdin>", &strict).err()))
    } else {
        Ok((parse_file(path, &lenient)?, parse_file(path, &strict).err()))
    }
}

/// The flames of an input file, warnings printed; at least one.
fn load(path: &Path, c: &Common) -> anyhow::Result<Vec<Flame>> {
    let opts = ParseOptions { strict: false, palette_file: c.palettes.clone() };
    let parsed = read_input(path, &opts)?;
    for w in &parsed.warnings {
        noteln!("warning: {w}");
    }
    if !parsed.not_written.is_empty() {
        // The flame's own name is kept; the one dropped is an xform's label.
        let names: Vec<&str> =
            parsed.not_written.iter().map(|n| if n == "name" { "xform name" } else { n.as_str() }).collect();
        noteln!(
            "note: {}: attributes that change nothing warpmc or flam3 draws are not carried into the output, as in \
             flam3-genome's: {}",
            path.display(),
            names.join(", ")
        );
    }
    if !parsed.skipped.is_empty() {
        noteln!(
            "note: {}: what warpmc does not implement (warned of above) is not carried into the output either: {}",
            path.display(),
            parsed.skipped.join(", ")
        );
    }
    if parsed.flames.is_empty() {
        bail!("{}: no <flame> elements", path.display());
    }
    Ok(parsed.flames)
}

/// Refuses parents that cannot be rendered (all weights zero, a negative
/// weight, no xforms): their children mostly could not be either, and a
/// file of them would only fail later, in `flame render`.
fn check_parents(path: &Path, flames: &[Flame]) -> anyhow::Result<()> {
    for (i, f) in flames.iter().enumerate() {
        if let Err(e) = warpmc_flame::render::check_iterable(f) {
            bail!("{}: flame {} cannot be a parent: {e}", path.display(), f.label(i));
        }
    }
    Ok(())
}

/// Checks what the flags name before any work: the output can be
/// written and is none of the files read (`inputs`, the argument that
/// names each and its path; `-` is standard input), the palette file (when
/// named) exists, the template reads.
fn prepare(c: &Common, inputs: &[(&str, &Path)]) -> anyhow::Result<Option<Template>> {
    let from_stdin: Vec<&str> = inputs.iter().filter(|(_, p)| p.as_os_str() == "-").map(|&(o, _)| o).collect();
    if from_stdin.len() > 1 {
        bail!(
            "{} both read standard input (-), which can be read only once; save it to a file and name that",
            from_stdin.join(" and ")
        );
    }
    if let Some(out) = output(c) {
        super::check_output("--out", out)?;
        use warpmc_host::output::NamedFile;
        let palettes = PaletteLibrary::locate_path(c.palettes.as_deref()).ok();
        // `-` is standard input: the file behind it, if any, is an input too.
        let stdin = super::flame::stdin_file();
        let mut files: Vec<NamedFile<'_>> = inputs
            .iter()
            .filter_map(|&(option, path)| {
                if path.as_os_str() == "-" {
                    stdin.as_deref().map(|p| NamedFile::input(option, p))
                } else {
                    Some(NamedFile::input(option, path))
                }
            })
            .collect();
        files.extend(c.template.as_deref().map(|t| NamedFile::input("--template", t)));
        files.extend(palettes.as_deref().map(|p| NamedFile::input("the palette file", p)));
        files.push(NamedFile::output("--out", out));
        warpmc_host::output::check_distinct(&files).map_err(anyhow::Error::msg)?;
    }
    PaletteLibrary::check_named(c.palettes.as_deref())?;
    let Some(t) = &c.template else { return Ok(None) };
    let bytes = read_file(t, MAX_GENOME_BYTES, "template").map_err(|e| match e {
        warpmc_flame::FlameError::Io { error, .. } => {
            anyhow::anyhow!("{}: cannot read the template: {error}", t.display())
        }
        e => e.into(),
    })?;
    let text = String::from_utf8(bytes).map_err(|_| anyhow::anyhow!("{}: the template is not UTF-8", t.display()))?;
    let opts = ParseOptions { strict: false, palette_file: c.palettes.clone() };
    let template = Template::from_xml(&text, &t.display().to_string(), &opts)?;
    if template.ignored_flames() > 0 {
        noteln!(
            "warning: {}: the template has {} flames; the first is used and the others are ignored (as flam3-genome \
             does)",
            t.display(),
            template.ignored_flames() + 1
        );
    }
    Ok(Some(template))
}

/// The palette library for random palettes: the file --palettes or the
/// environment names (an error when it cannot be read or holds no
/// palette), else the installed one if there is one.
fn library(c: &Common) -> anyhow::Result<Option<PaletteLibrary>> {
    // prepare() has checked that a file named is there: an error here
    // means that none is named and none is installed.
    let Ok(path) = PaletteLibrary::locate_path(c.palettes.as_deref()) else { return Ok(None) };
    let lib = PaletteLibrary::load(&path)?;
    if lib.is_empty() {
        bail!("{}: no <palette> elements; flam3's palette file is flam3-palettes.xml", path.display());
    }
    Ok(Some(lib))
}

/// The output file, or `None` for standard output (no -o, or -o -).
fn output(c: &Common) -> Option<&Path> {
    c.out.as_deref().filter(|p| p.as_os_str() != "-")
}

/// Ctrl-C (or SIGTERM, …) while a tool makes flames one after another
/// (each may take many test renders): the tool stops after the flame under
/// way and [`emit_made`] writes those made. A second Ctrl-C ends it at
/// once, writing nothing.
fn stop_between_flames() -> anyhow::Result<Arc<AtomicBool>> {
    let stop = Arc::new(AtomicBool::new(false));
    super::stop_on_signals(stop.clone(), || {
        noteln!("interrupted again: stopping at once, nothing written");
        warpmc_host::output::remove_unfinished();
        std::process::exit(super::interrupted_status());
    })?;
    Ok(stop)
}

/// Writes the flames made, as [`emit`]; when `stop` cut the tool short of
/// the `wanted` flames, says how many were written where and ends with
/// the signal's exit status.
fn emit_made(c: &Common, made: &[Flame], wanted: u32, stop: &AtomicBool, what: &str) -> anyhow::Result<()> {
    // A signal after the last flame was made cut nothing short.
    if !stop.load(Ordering::SeqCst) || made.len() == wanted as usize {
        return emit(c, made, "pick");
    }
    if made.is_empty() {
        noteln!("interrupted before the first of {wanted} {what} was made: nothing written");
    } else {
        emit(c, made, "pick")?;
        let place = output(c).map_or_else(|| "standard output".to_string(), |p| p.display().to_string());
        noteln!("interrupted: the first {} of {wanted} {what} were written to {place}", made.len());
    }
    std::process::exit(super::interrupted_status());
}

/// Writes the flames as one document.
fn emit(c: &Common, flames: &[Flame], root: &str) -> anyhow::Result<()> {
    let version = format!("WARPMC-{}", env!("CARGO_PKG_VERSION"));
    let doc = Document::new(root, Some(&version));
    // What the reader would refuse is not written: extreme inputs can make
    // a number infinite or NaN (a mutation with --speed 1e308, an
    // interpolation between coefficients near 1e308, a strip of a flame
    // with scale 0), and a genome holding one renders nowhere. Each flame
    // is read back alone, so that only one is held twice at a time.
    let mut text = doc.start();
    for (index, f) in flames.iter().enumerate() {
        let flame = doc.flame(f);
        read_back(&flame, index).map_err(|e| anyhow::anyhow!("{e}; nothing was written"))?;
        text += &flame;
    }
    text += &doc.end();
    match output(c) {
        Some(out) => warpmc_host::output::write_bytes(out, text.as_bytes())?,
        None => super::write_stdout(format_args!("{text}"))?,
    }
    Ok(())
}

/// Reads back one flame of a result as a reader would (`xml` the flame's
/// element alone), so that a flame the reader would refuse is never
/// written. An error names the flame by its place in the whole result.
fn read_back(xml: &str, index: usize) -> anyhow::Result<()> {
    const SOURCE: &str = "the result";
    parse_str(xml, SOURCE, &ParseOptions::default()).map(drop).map_err(|e| {
        // Read alone, an unnamed flame is the reader's flame #0.
        let text = e.to_string();
        match text.strip_prefix(&format!("{SOURCE}: flame #0")) {
            Some(rest) => anyhow::anyhow!("{SOURCE}: flame #{index}{rest}"),
            None => e.into(),
        }
    })
}

/// Writes the flames as [`emit`] does, one at a time as they are made, for
/// documents too long to hold. Each flame is checked as `emit` checks the
/// whole: a flame the reader would refuse leaves a file output as it was,
/// and ends standard output before that flame. `frame_bytes` is about the
/// largest flame's size as text, to check the disk's room.
fn emit_frames(
    c: &Common,
    mut frames: impl ExactSizeIterator<Item = Flame>,
    frame_bytes: usize,
    root: &str,
) -> anyhow::Result<()> {
    use std::io::Write;
    let count = frames.len();
    let Some(first) = frames.next() else { bail!("no flames to write") };
    if count == 1 {
        return emit(c, &[first], root);
    }
    let version = format!("WARPMC-{}", env!("CARGO_PKG_VERSION"));
    let doc = Document::new(root, Some(&version));
    let checked = |f: &Flame, index: usize| -> anyhow::Result<String> {
        let text = doc.flame(f);
        read_back(&text, index)?;
        Ok(text)
    };
    let first = checked(&first, 0)?;
    let mut failed = None;
    let mut body = |w: &mut dyn Write| -> std::io::Result<()> {
        w.write_all(doc.start().as_bytes())?;
        w.write_all(first.as_bytes())?;
        for (index, f) in (1..).zip(frames.by_ref()) {
            match checked(&f, index) {
                Ok(text) => w.write_all(text.as_bytes())?,
                Err(e) => {
                    failed = Some(e);
                    return Err(std::io::Error::other("a frame was refused"));
                }
            }
        }
        w.write_all(doc.end().as_bytes())
    };
    match output(c) {
        Some(out) => {
            let bytes = (frame_bytes.max(first.len()) as u64).saturating_mul(count as u64);
            warpmc_host::output::check_space(out, bytes)?;
            let written = warpmc_host::output::write(out, &mut body);
            if let Some(e) = failed {
                bail!("{e}; nothing was written");
            }
            written?;
        }
        None => {
            let mut w = std::io::BufWriter::new(std::io::stdout().lock());
            let written = body(&mut w).and_then(|()| w.flush());
            if let Some(e) = failed {
                bail!("{e}; the output ends before this flame");
            }
            match written {
                Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => return Err(super::QuietExit(0).into()),
                written => written.context("writing to standard output")?,
            }
        }
    }
    Ok(())
}

/// Checks, before they are made, that `count` flames like `sample` fit in
/// memory with the XML they are written as (`what`: "writing 10
/// mutations").
fn check_flames_fit(what: &str, count: f64, sample: &Flame) -> anyhow::Result<()> {
    // The flame itself (its palette is 8 KiB), its xforms and their
    // variations, and its text, which is larger than all of these.
    let text = warpmc_flame::genome::write_flame(sample).len() as f64;
    let per_flame = 2.0 * text + std::mem::size_of::<Flame>() as f64 + 8192.0;
    let bytes = count * per_flame;
    let bytes = if bytes < 1.8e19 { bytes as u64 } else { u64::MAX };
    warpmc_host::check_allocation(what, bytes).map_err(anyhow::Error::msg)
}

/// A list of variations by name or flam3 number.
fn variation_list(s: &str) -> anyhow::Result<Vec<VariationKind>> {
    s.split(',')
        .map(str::trim)
        .filter(|w| !w.is_empty())
        .map(|w| {
            // flam3 numbers its own variations only (0 to 98); warpmc's
            // further ones have names alone.
            let k = match w.parse::<i64>() {
                Ok(i) if !(0..warpmc_flame::variations::VARIATION_COUNT as i64).contains(&i) => bail!(
                    "unknown variation number {i}: flam3 numbers its variations 0 to {} (give others by name)",
                    warpmc_flame::variations::VARIATION_COUNT - 1
                ),
                Ok(i) => VariationKind::from_index(i as usize),
                Err(_) => VariationKind::from_name(w),
            };
            k.with_context(|| format!("unknown variation '{w}'"))
        })
        .collect()
}

fn random_options(v: &Variety, xforms: Option<u32>, tries: u32) -> anyhow::Result<RandomOptions> {
    let variations = match (&v.vars, &v.no_vars) {
        (Some(list), _) => variation_list(list)?,
        (None, Some(list)) => {
            let out = variation_list(list)?;
            VariationKind::all().take(99).filter(|k| !out.contains(k)).collect()
        }
        (None, None) => default_variations(),
    };
    if variations.is_empty() {
        bail!("no variations left to choose from");
    }
    Ok(RandomOptions { xforms: xforms.map(|n| n as usize), variations, symmetry: v.symmetry, tries })
}

/// A flame of `flames` at random.
fn pick<'a>(flames: &'a [Flame], rng: &mut GenomeRng) -> &'a Flame {
    &flames[rng.below(flames.len())]
}

/// What flam3-genome does after a mutation or a crossing: half the time
/// the camera is framed anew on the attractor, then the variations are
/// truncated. Returns the truncation's notes for the edit record.
fn reframe(f: &mut Flame, rng: &mut GenomeRng) -> String {
    if rng.bit() {
        frame_flame(f, rng);
    }
    truncate_variations(f, MAX_VARIATIONS)
}

fn finish(mut f: Flame, t: Option<&Template>, time: f64) -> Flame {
    if let Some(t) = t {
        t.apply(&mut f);
    }
    f.time = time;
    f
}

fn run_random(a: RandomArgs) -> anyhow::Result<()> {
    let t = prepare(&a.common, &[])?;
    let opts = random_options(&a.variety, a.xforms, a.tries.tries)?;
    let lib = library(&a.common)?;
    let editor = a.history.editor()?;
    // Made and framed at flam3-genome's size and quality (100 × 100,
    // quality 1, what it writes without a template), then given the
    // template's settings, as flam3-genome does (its scale then follows the
    // template's height).
    let base = Flame { width: 100, height: 100, quality: 1.0, ..Flame::default() };
    let stop = stop_between_flames()?;
    let mut out = Vec::new();
    for rep in 0..a.repeat {
        if stop.load(Ordering::SeqCst) {
            break;
        }
        let mut rng = GenomeRng::new(a.common.seed, Operation::Random, u64::from(rep));
        let tested = random_tested(&base, &opts, lib.as_ref(), &mut rng)?;
        a.tries.report("flame", rep, &tested);
        let (mut f, notes) = (tested.flame, tested.made_with);
        if let Some(editor) = &editor {
            record_edit(&mut f, editor, &format!("random{notes}"), &[]);
        }
        if rep == 0 {
            check_flames_fit(&format!("writing {} random flames", a.repeat), f64::from(a.repeat), &f)?;
        }
        out.push(finish(f, t.as_ref(), f64::from(rep)));
    }
    emit_made(&a.common, &out, a.repeat, &stop, "flames")
}

fn run_mutate(a: MutateArgs) -> anyhow::Result<()> {
    let t = prepare(&a.common, &[("INPUT", &a.input)])?;
    let flames = load(&a.input, &a.common)?;
    check_parents(&a.input, &flames)?;
    if !a.speed.is_finite() {
        bail!("--speed {} is not a finite number", a.speed);
    }
    let opts = random_options(&a.variety, None, 0)?;
    let lib = library(&a.common)?;
    let method = a.method.map(|m| match m {
        MutateArg::AllVars => MutateMethod::AllVariations,
        MutateArg::OneXform => MutateMethod::OneXformCoefs,
        MutateArg::AddSymmetry => MutateMethod::AddSymmetry,
        MutateArg::PostXforms => MutateMethod::PostXforms,
        MutateArg::ColorPalette => MutateMethod::ColorPalette,
        MutateArg::DeleteXform => MutateMethod::DeleteXform,
        MutateArg::AllCoefs => MutateMethod::AllCoefs,
    });
    let largest = flames.iter().max_by_key(|f| f.xforms.len()).expect("at least one flame");
    check_flames_fit(&format!("writing {} mutations", a.repeat), f64::from(a.repeat), largest)?;
    let editor = a.history.editor()?;
    let file = record_name(&a.input);
    let stop = stop_between_flames()?;
    let mut out = Vec::new();
    for rep in 0..a.repeat {
        if stop.load(Ordering::SeqCst) {
            break;
        }
        let mut rng = GenomeRng::new(a.common.seed, Operation::Mutate, u64::from(rep));
        // As flam3-genome, each try picks its parent anew.
        let tested = until_it_passes(a.tries.tries, &mut rng, |rng| {
            let parent = pick(&flames, rng);
            let (mut f, used) = mutate(parent, method, &opts, a.speed, lib.as_ref(), rng)?;
            let notes = reframe(&mut f, rng);
            Ok((f, (parent, used, notes)))
        })?;
        a.tries.report("mutation", rep, &tested);
        let (mut f, (parent, used, notes)) = (tested.flame, tested.made_with);
        // flam3-genome's name (flam3-render's name_enable makes it a file
        // name); a parent without a name gives a child without one.
        f.name = parent.name.as_ref().map(|p| format!("mutation {rep} of {p}"));
        if let Some(editor) = &editor {
            // flam3-genome's words (it adds the xform's number to some).
            let words = match used {
                MutateMethod::AllVariations => "all variations",
                MutateMethod::OneXformCoefs => "xform",
                MutateMethod::AddSymmetry => "symmetry",
                MutateMethod::PostXforms => "post xforms",
                MutateMethod::ColorPalette => "color palette",
                MutateMethod::DeleteXform => "delete xform",
                MutateMethod::AllCoefs => "all coefs",
            };
            let action = format!("mutate {words}{notes}");
            record_edit(&mut f, editor, &action, &[self::parent(&flames, &file, parent)]);
        } else {
            // The parent's record is not the child's history.
            f.edits = None;
        }
        out.push(finish(f, t.as_ref(), f64::from(rep)));
    }
    emit_made(&a.common, &out, a.repeat, &stop, "mutations")
}

fn run_cross(a: CrossArgs) -> anyhow::Result<()> {
    let t = prepare(&a.common, &[("FIRST", &a.first), ("SECOND", &a.second)])?;
    let first = load(&a.first, &a.common)?;
    check_parents(&a.first, &first)?;
    let second = load(&a.second, &a.common)?;
    check_parents(&a.second, &second)?;
    let method = a.method.map(|m| match m {
        CrossArg::Union => CrossMethod::Union,
        CrossArg::Interpolate => CrossMethod::Interpolate,
        CrossArg::Alternate => CrossMethod::Alternate,
    });
    if a.at.is_some() && !matches!(method, Some(CrossMethod::Interpolate)) {
        bail!("--at goes with --method interpolate");
    }
    // Beyond the parents the weights extrapolate, negative ones among
    // them, which no renderer draws.
    if let Some(x) = a.at.filter(|x| !(0.0..=1.0).contains(x)) {
        bail!("--at must be between 0 (the first parent) and 1 (the second), not {}", warpmc_flame::render::shown(x));
    }
    // A child has at most the xforms of both parents.
    let largest = |fs: &[Flame]| fs.iter().max_by_key(|f| f.xforms.len()).expect("at least one flame").clone();
    let mut both = largest(&first);
    both.xforms.extend(largest(&second).xforms);
    check_flames_fit(&format!("writing {} children", a.repeat), f64::from(a.repeat), &both)?;
    let editor = a.history.editor()?;
    let (file0, file1) = (record_name(&a.first), record_name(&a.second));
    let stop = stop_between_flames()?;
    let mut out = Vec::new();
    for rep in 0..a.repeat {
        if stop.load(Ordering::SeqCst) {
            break;
        }
        let mut rng = GenomeRng::new(a.common.seed, Operation::Cross, u64::from(rep));
        // As flam3-genome, each try picks its parents anew.
        let tested = until_it_passes(a.tries.tries, &mut rng, |rng| {
            let p0 = pick(&first, rng);
            let p1 = pick(&second, rng);
            let crossed = cross(p0, p1, method, a.at, rng)?;
            let mut f = crossed.flame;
            // An interpolation at a chosen point is left as it is.
            let notes = if a.at.is_none() { reframe(&mut f, rng) } else { String::new() };
            Ok((f, (p0, p1, crossed.method, crossed.at, notes)))
        })?;
        a.tries.report("child", rep, &tested);
        let (mut f, (p0, p1, used, at, notes)) = (tested.flame, tested.made_with);
        if p0.name.is_some() || p1.name.is_some() {
            let n = |p: &Flame| p.name.clone().unwrap_or_default();
            f.name = Some(format!("{rep} of {} x {}", n(p0), n(p1)));
        }
        if let Some(editor) = &editor {
            let action = match used {
                CrossMethod::Union => "cross union".to_string(),
                // flam3-genome's "%7.5g" of the point.
                CrossMethod::Interpolate => {
                    format!("cross interpolate {:>7}", printf_g_digits(at.unwrap_or_default(), 5))
                }
                CrossMethod::Alternate => "cross alternate".to_string(),
            };
            let action = action + &notes;
            record_edit(&mut f, editor, &action, &[parent(&first, &file0, p0), parent(&second, &file1, p1)]);
        } else {
            f.edits = None;
        }
        out.push(finish(f, t.as_ref(), f64::from(rep)));
    }
    emit_made(&a.common, &out, a.repeat, &stop, "children")
}

fn run_sequence(a: SequenceArgs) -> anyhow::Result<()> {
    let t = prepare(&a.common, &[("INPUT", &a.input)])?;
    let flames = load(&a.input, &a.common)?;
    if !(0.0..=1.0).contains(&a.stagger) {
        bail!("--stagger must be between 0 and 1, not {}", warpmc_flame::render::shown(a.stagger));
    }
    // Made and written one frame at a time, as flam3-genome does: a long
    // sequence (each frame's XML holds a whole palette) need not fit in
    // memory. A frame is at most as large as the keyframe of most xforms
    // (with the template's settings).
    let largest = flames.iter().max_by_key(|f| f.xforms.len()).expect("at least one flame");
    let largest = sequence_frames(std::slice::from_ref(largest), 1, 0, 0.0, t.as_ref())?.next();
    let frame_bytes = largest.map_or(0, |f| warpmc_flame::genome::write_flame(&f).len());
    let frames = sequence_frames(&flames, a.nframes, a.loops, a.stagger, t.as_ref())?;
    let editor = a.history.editor()?;
    let file = record_name(&a.input);
    // A record holds its parents' records: a frame is larger by theirs.
    let record_bytes = if editor.is_some() {
        2 * flames.iter().map(|f| f.edits.as_ref().map_or(0, String::len)).max().unwrap_or(0) + 256 + 2 * file.len()
    } else {
        0
    };
    let frame_bytes = frame_bytes + record_bytes;
    let (keys, nframes, loops) = (flames.len(), u64::from(a.nframes), u64::from(a.loops));
    let count = frames.len() as u64;
    let flames = &flames;
    let offset = &a.offset;
    let frames = frames.enumerate().map(move |(k, mut f)| {
        offset.apply(&mut f);
        if let Some(editor) = &editor {
            let (action, from) = sequence_step(k as u64, count, keys, nframes, loops);
            let parents: Vec<Parent<'_>> = from.iter().map(|&i| parent(flames, &file, &flames[i])).collect();
            record_edit(&mut f, editor, &action, &parents);
        } else {
            f.edits = None;
        }
        f
    });
    // Frame times are flam3's C ints (flame animate takes no others).
    if frames.len() > i32::MAX as usize + 1 {
        bail!(
            "a sequence of {} frames has frame times beyond flam3's (0 to 2147483647); use fewer --loops or \
             --nframes",
            frames.len()
        );
    }
    emit_frames(&a.common, frames, frame_bytes, "sequence")
}

/// What frame `k` of a sequence of `count` frames of `keys` keyframes did,
/// as flam3-genome records it, and the keyframes it was made from: a turn
/// of one keyframe ("rotate" and the angle in degrees) or a step of the
/// transition to the next ("interpolate" and 360 times the step's
/// fraction, as flam3-genome writes it). The frames run as
/// [`sequence_frames`] makes them: each keyframe's `loops` turns of
/// `nframes` frames, then its transition, and the last keyframe once more.
fn sequence_step(k: u64, count: u64, keys: usize, nframes: u64, loops: u64) -> (String, Vec<usize>) {
    let loop_frames = loops * nframes;
    let stride = loop_frames + nframes;
    if k + 1 == count {
        return ("rotate 0".into(), vec![keys - 1]);
    }
    let (i, r) = ((k / stride) as usize, k % stride);
    if r < loop_frames {
        let turn = (r % nframes) as f64 / nframes as f64;
        (format!("rotate {}", printf_g(turn * 360.0)), vec![i])
    } else {
        let step = (r - loop_frames) as f64 / nframes as f64;
        (format!("interpolate {}", printf_g(step * 360.0)), vec![i, i + 1])
    }
}

fn run_rotate(a: RotateArgs) -> anyhow::Result<()> {
    let t = prepare(&a.common, &[("INPUT", &a.input)])?;
    let flames = load(&a.input, &a.common)?;
    if flames.len() != 1 {
        bail!("{}: rotation needs one flame, the file has {}", a.input.display(), flames.len());
    }
    let mut frames = rotate(&flames[0], a.frame, a.nframes, t.as_ref())?;
    frames.iter_mut().for_each(|f| a.offset.apply(f));
    if let Some(editor) = a.history.editor()? {
        let file = record_name(&a.input);
        for (d, f) in (-1..=1).zip(&mut frames) {
            let turn = (a.frame + d) as f64 / f64::from(a.nframes);
            record_edit(
                f,
                &editor,
                &format!("rotate {}", printf_g(turn * 360.0)),
                &[parent(&flames, &file, &flames[0])],
            );
        }
    } else {
        frames.iter_mut().for_each(|f| f.edits = None);
    }
    emit(&a.common, &frames, "pick")
}

fn run_inter(a: InterArgs) -> anyhow::Result<()> {
    if !(0.0..=1.0).contains(&a.stagger) {
        bail!("--stagger must be between 0 and 1, not {}", warpmc_flame::render::shown(a.stagger));
    }
    let t = prepare(&a.common, &[("INPUT", &a.input)])?;
    let flames = load(&a.input, &a.common)?;
    if flames.len() != 2 {
        bail!("{}: a transition needs two flames, the file has {}", a.input.display(), flames.len());
    }
    let mut frames = inter(&flames[0], &flames[1], a.frame, a.nframes, a.stagger, t.as_ref())?;
    frames.iter_mut().for_each(|f| a.offset.apply(f));
    if let Some(editor) = a.history.editor()? {
        let file = record_name(&a.input);
        let parents = [parent(&flames, &file, &flames[0]), parent(&flames, &file, &flames[1])];
        for (d, f) in (-1..=1).zip(&mut frames) {
            let step = (a.frame + d) as f64 / f64::from(a.nframes);
            record_edit(f, &editor, &format!("interpolate {}", printf_g(step * 360.0)), &parents);
        }
    } else {
        frames.iter_mut().for_each(|f| f.edits = None);
    }
    emit(&a.common, &frames, "pick")
}

fn run_clone(a: CloneArgs) -> anyhow::Result<()> {
    let t = prepare(&a.common, &[("INPUT", &a.input)])?;
    let flames = load(&a.input, &a.common)?;
    let editor = a.history.editor()?;
    let file = record_name(&a.input);
    let record = |c: &mut Flame, f: &Flame| {
        if let Some(editor) = &editor {
            record_edit(c, editor, "clone", &[parent(&flames, &file, f)]);
        }
    };
    if a.pick {
        let largest = flames.iter().max_by_key(|f| f.xforms.len()).expect("at least one flame");
        check_flames_fit(&format!("writing {} picks", a.repeat), f64::from(a.repeat), largest)?;
        let mut out = Vec::new();
        for rep in 0..a.repeat {
            let f = pick(&flames, &mut GenomeRng::new(a.common.seed, Operation::Pick, u64::from(rep)));
            let mut c = f.clone();
            let notes = truncate_variations(&mut c, MAX_VARIATIONS);
            if let Some(editor) = &editor {
                record_edit(&mut c, editor, &format!("clone{notes}"), &[parent(&flames, &file, f)]);
            }
            let mut c = finish(c, t.as_ref(), f64::from(rep));
            a.offset.apply(&mut c);
            out.push(c);
        }
        return emit(&a.common, &out, "pick");
    }
    let chosen: Vec<&Flame> = if let Some(i) = a.flame {
        let f = flames.get(i).with_context(|| {
            format!("{}: --flame {i}, but the file has {} flame(s)", a.input.display(), flames.len())
        })?;
        vec![f]
    } else {
        flames.iter().collect()
    };
    if let Some(largest) = chosen.iter().max_by_key(|f| f.xforms.len()) {
        check_flames_fit(&format!("writing {} clones", chosen.len()), chosen.len() as f64, largest)?;
    }
    let out: Vec<Flame> = chosen
        .into_iter()
        .map(|f| {
            let mut c = finish(f.clone(), t.as_ref(), f.time);
            a.offset.apply(&mut c);
            record(&mut c, f);
            c
        })
        .collect();
    emit(&a.common, &out, "clone_all")
}

fn run_animate(a: AnimateArgs) -> anyhow::Result<()> {
    let t = prepare(&a.common, &[("INPUT", &a.input)])?;
    if !(0.0..=1.0).contains(&a.stagger) {
        bail!("--stagger must be between 0 and 1, not {}", warpmc_flame::render::shown(a.stagger));
    }
    let keys = load(&a.input, &a.common)?;
    // Made and written one frame at a time, as for sequence.
    let largest = keys.iter().max_by_key(|f| f.xforms.len()).expect("at least one flame");
    let frame_bytes = warpmc_flame::genome::write_flame(largest).len() + 1024;
    let frames =
        animate_frames(&keys, a.begin, a.end, a.stagger, t.as_ref()).with_context(|| a.input.display().to_string())?;
    emit_frames(&a.common, frames, frame_bytes, "animate")
}

fn run_strip(a: StripArgs) -> anyhow::Result<()> {
    let t = prepare(&a.common, &[("INPUT", &a.input)])?;
    let flames = load(&a.input, &a.common)?;
    if let Some(k) = a.strip.filter(|&k| k >= a.nstrips) {
        bail!("--strip {k}, but there are only {} strips (0 to {})", a.nstrips, a.nstrips - 1);
    }
    // A flame too low for the strips is refused first (a count that large
    // would otherwise be refused for its memory).
    if let Some(f) = flames.iter().find(|f| f.height < a.nstrips) {
        bail!("a flame {} pixels high cannot be cut into {} strips", f.height, a.nstrips);
    }
    if let Some(largest) = flames.iter().max_by_key(|f| f.xforms.len()) {
        // Each flame is cut into all its strips, then those asked for kept.
        let nstrips = f64::from(a.nstrips);
        let kept = if a.strip.is_some() { flames.len() as f64 } else { nstrips * flames.len() as f64 };
        check_flames_fit(&format!("cutting into {} strips", a.nstrips), kept + nstrips, largest)?;
    }
    let mut out = Vec::new();
    for f in &flames {
        // Cut, then the template, as flam3-genome does: a template's size
        // is the strips' size.
        let strips = strip(f, a.nstrips)?;
        let chosen = match a.strip {
            Some(k) => vec![strips[k as usize].clone()],
            None => strips,
        };
        out.extend(chosen.into_iter().map(|s| {
            let mut s = finish(s, t.as_ref(), f.time);
            a.offset.apply(&mut s);
            s
        }));
    }
    // flam3-genome drops the rows the division leaves over; say so once,
    // after every flame is cut (a flame too short to cut is the one error).
    if let Some(f) = flames.iter().find(|f| f.height % a.nstrips != 0) {
        let n = a.nstrips;
        noteln!(
            "warning: {} rows do not divide into {n} strips: each strip is {} rows high, and the strips, centred on \
             the image as flam3-genome cuts them, leave {} out, half at the top and half at the bottom; a height \
             divisible by {n} keeps every row",
            f.height,
            f.height / n,
            match f.height % n {
                1 => "1 row".to_string(),
                r => format!("{r} rows"),
            }
        );
    }
    emit(&a.common, &out, "pick")
}
