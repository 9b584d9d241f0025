//! `warpmc rng`: raw output for statistical test batteries, and the MWC
//! multiplier table.

use std::io::{self, Write};
use std::path::PathBuf;

use anyhow::{Context, bail, ensure};
use clap::{Args, Subcommand, ValueEnum};
use indicatif::{ProgressBar, ProgressStyle};
use warpmc_potts::algorithm::{UNIT_COLS, UNIT_ROWS, unit_generators};
use warpmc_rng::multipliers::{self, SEARCH_START, TABLE_LEN};
use warpmc_rng::stream::MAX_STREAM_INDEX;
use warpmc_rng::{Domain, Mwc, PhiloxStream, RandomSource};

use super::parse_u64;

#[derive(Debug, Args)]
pub(crate) struct RngArgs {
    #[command(subcommand)]
    command: RngCommand,
}

#[derive(Debug, Subcommand)]
enum RngCommand {
    /// Write raw 32-bit outputs (little-endian) to stdout, forever or
    /// --count words.
    ///
    /// Made for statistical batteries that read raw binary input, e.g.
    ///
    ///   warpmc rng dump --generator philox --seed 1 | dieharder -a -g 200
    ///
    /// With --streams K the words are taken round-robin from K consecutive
    /// streams (Philox) or work units (MWC), one word each in turn, which tests
    /// the independence of neighbouring streams rather than one stream alone.
    Dump(DumpArgs),
    /// Search for good multiply-with-carry multipliers (a·2³²−1 and
    /// a·2³¹−1 both prime) counting down, with deterministic Miller–Rabin.
    ///
    /// Without --out the multipliers are printed in decimal, one per line.
    /// With --out FILE they are written as little-endian u32, the format of
    /// crates/rng/data/mwc-multipliers.u32le; regenerate that table with
    ///
    ///   warpmc rng multipliers --out crates/rng/data/mwc-multipliers.u32le
    Multipliers(MultipliersArgs),
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum Generator {
    /// Philox4x32-10, counter-based: stream ids name independent streams.
    Philox,
    /// Multiply-with-carry, one per work unit, multiplier from the table.
    Mwc,
    /// The words of the Potts update (warpmc-potts) under the
    /// one-word-per-site rule: unit after unit of sweep 0, colour 0 of chain
    /// stream --stream, each unit's 64 words in the order its sites use them
    /// (8 rows, each from its parity's Philox-seeded multiply-with-carry
    /// generator).
    Potts,
    /// The words of the bit-sliced Potts update: unit after unit of sweep
    /// 0, colour 0 of chain stream --stream, the first 16 words of each of
    /// the unit's 8 row generators in turn (a row uses about 10: the
    /// proposal's and the acceptance's).
    PottsSliced,
}

/// The bit-sliced update's row words, unit by unit (see
/// `Generator::PottsSliced`).
struct PottsSlicedUnits {
    seed: u64,
    stream: u64,
    unit: u64,
    gens: [Mwc; 8],
    used: usize,
}

impl PottsSlicedUnits {
    /// Words taken from each row generator.
    const PER_ROW: usize = 16;

    fn new(seed: u64, stream: u64) -> Self {
        PottsSlicedUnits { seed, stream, unit: 0, gens: Self::generators(seed, stream, 0), used: 0 }
    }

    /// Units past 2³⁰ − 1 continue in the next sweep (the block counter
    /// holds 4·unit + r/2 in its low 32 bits).
    fn generators(seed: u64, stream: u64, unit: u64) -> [Mwc; 8] {
        warpmc_potts::sliced::unit_generators(seed, stream, unit >> 30, 0, unit & 0x3fff_ffff)
    }
}

impl RandomSource for PottsSlicedUnits {
    fn next_u32(&mut self) -> u32 {
        if self.used == 8 * Self::PER_ROW {
            self.unit += 1;
            self.gens = Self::generators(self.seed, self.stream, self.unit);
            self.used = 0;
        }
        let row = self.used / Self::PER_ROW;
        self.used += 1;
        self.gens[row].next_u32()
    }
}

/// The Potts update's words, unit by unit (see `Generator::Potts`).
struct PottsUnits {
    seed: u64,
    stream: u64,
    unit: u64,
    gens: [Mwc; 2],
    used: usize,
}

impl PottsUnits {
    fn new(seed: u64, stream: u64) -> Self {
        PottsUnits { seed, stream, unit: 0, gens: Self::generators(seed, stream, 0), used: 0 }
    }

    /// Units past 2³² − 1 continue in the next sweep (the block counter
    /// holds the unit in its low 32 bits).
    fn generators(seed: u64, stream: u64, unit: u64) -> [Mwc; 2] {
        unit_generators(seed, stream, unit >> 32, 0, unit & 0xffff_ffff)
    }
}

impl RandomSource for PottsUnits {
    fn next_u32(&mut self) -> u32 {
        let per_unit = UNIT_ROWS * UNIT_COLS;
        if self.used == per_unit {
            self.unit += 1;
            self.gens = Self::generators(self.seed, self.stream, self.unit);
            self.used = 0;
        }
        let row = self.used / UNIT_COLS;
        self.used += 1;
        self.gens[row & 1].next_u32()
    }
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum DumpFormat {
    /// Little-endian 32-bit words (what `dieharder -g 200` reads).
    Raw,
    /// One 8-digit hex word per line, for reading by eye.
    Hex,
}

#[derive(Debug, Args)]
struct DumpArgs {
    /// Which generator to dump.
    #[arg(long, short, value_enum)]
    generator: Generator,
    /// Key of the generators (decimal or 0x-hex); a `potts run --seed S`
    /// chain's key is mixed from S, the model, the size and the temperature
    /// (ProtocolConfig::chain).
    #[arg(long, default_value = "0", value_parser = parse_u64)]
    seed: u64,
    /// First stream id (Philox, in the user domain), work unit (MWC) or
    /// chain stream index (Potts).
    #[arg(long, default_value = "0", value_parser = parse_u64)]
    stream: u64,
    /// Number of consecutive streams to interleave, one word each in turn.
    #[arg(long, default_value_t = 1)]
    streams: u32,
    /// Stop after this many 32-bit words (default: run until the reader
    /// closes the pipe).
    #[arg(long, value_parser = parse_u64)]
    count: Option<u64>,
    /// Output format.
    #[arg(long, value_enum, default_value = "raw")]
    format: DumpFormat,
}

#[derive(Debug, Args)]
struct MultipliersArgs {
    /// How many multipliers to find.
    #[arg(long, default_value_t = TABLE_LEN)]
    count: usize,
    /// Start the downward search here (inclusive; decimal or 0x-hex).
    #[arg(long, default_value_t = u64::from(SEARCH_START), value_parser = parse_u64)]
    start: u64,
    /// Write the table here (little-endian u32), atomically.
    #[arg(long, value_name = "FILE")]
    out: Option<PathBuf>,
    /// Compare the result with the table built into warpmc and fail on any
    /// difference.
    #[arg(long)]
    verify: bool,
}

pub(crate) fn run(args: RngArgs) -> anyhow::Result<()> {
    match args.command {
        RngCommand::Dump(a) => dump(a),
        RngCommand::Multipliers(a) => multipliers_cmd(a),
    }
}

fn dump(args: DumpArgs) -> anyhow::Result<()> {
    ensure!(args.streams >= 1, "--streams must be at least 1");
    let last = args.stream.checked_add(u64::from(args.streams) - 1);
    match last {
        Some(last) if last <= MAX_STREAM_INDEX => {}
        _ => bail!("--stream + --streams - 1 must not exceed {MAX_STREAM_INDEX} (2^48 - 1)"),
    }
    // Each stream's generator state, boxed: at most about 128 bytes.
    let bytes = u64::from(args.streams) * 128;
    warpmc_host::check_allocation(&format!("the state of {} streams", args.streams), bytes)
        .map_err(anyhow::Error::msg)?;
    let mut sources: Vec<Box<dyn RandomSource>> = (0..u64::from(args.streams))
        .map(|i| -> Box<dyn RandomSource> {
            let id = args.stream + i;
            match args.generator {
                Generator::Philox => Box::new(PhiloxStream::new(args.seed, Domain::User.stream(id))),
                Generator::Mwc => Box::new(Mwc::for_unit(args.seed, id)),
                Generator::Potts => Box::new(PottsUnits::new(args.seed, Domain::Potts.stream(id))),
                Generator::PottsSliced => Box::new(PottsSlicedUnits::new(args.seed, Domain::Potts.stream(id))),
            }
        })
        .collect();

    let stdout = io::stdout();
    let mut out = io::BufWriter::with_capacity(1 << 20, stdout.lock());
    let mut remaining = args.count.unwrap_or(u64::MAX);
    let mut words = vec![0u32; 1 << 14];
    let mut bytes = Vec::with_capacity(words.len() * 9);
    let mut next_source = 0usize;
    while remaining > 0 {
        let n = words.len().min(usize::try_from(remaining).unwrap_or(usize::MAX));
        if sources.len() == 1 {
            words[..n].iter_mut().for_each(|w| *w = sources[0].next_u32());
        } else {
            for w in &mut words[..n] {
                *w = sources[next_source].next_u32();
                next_source = (next_source + 1) % sources.len();
            }
        }
        bytes.clear();
        match args.format {
            DumpFormat::Raw => words[..n].iter().for_each(|w| bytes.extend_from_slice(&w.to_le_bytes())),
            DumpFormat::Hex => {
                for w in &words[..n] {
                    writeln!(bytes, "{w:08x}").expect("writing to a Vec cannot fail");
                }
            }
        }
        if let Err(e) = out.write_all(&bytes) {
            return quiet_on_broken_pipe(e);
        }
        remaining -= n as u64;
    }
    out.flush().or_else(quiet_on_broken_pipe)
}

/// A reader that stops early (dieharder, `head`) closes the pipe: that is the
/// normal end of an unbounded dump, not an error.
fn quiet_on_broken_pipe(e: io::Error) -> anyhow::Result<()> {
    if e.kind() == io::ErrorKind::BrokenPipe { Ok(()) } else { Err(e).context("writing to stdout") }
}

fn multipliers_cmd(args: MultipliersArgs) -> anyhow::Result<()> {
    let Ok(start) = u32::try_from(args.start) else {
        anyhow::bail!("--start {} must be below 2^32 = 4294967296", args.start);
    };
    ensure!(args.count >= 1, "--count must be at least 1");
    ensure!(args.count <= MOST_MULTIPLIERS, "--count must be at most {MOST_MULTIPLIERS}");
    if let Some(path) = &args.out {
        // Found before the search, not after it.
        super::check_output("--out", path)?;
    }
    let bar = ProgressBar::new(args.count as u64).with_style(
        ProgressStyle::with_template("{elapsed_precise} [{bar:40}] {pos}/{len} multipliers, eta {eta}")
            .expect("static template")
            .progress_chars("=> "),
    );
    let found = multipliers::search(start, args.count, |n| bar.set_position(n as u64));
    bar.finish_and_clear();
    // A short table is not the table asked for: it is printed (without
    // --out) but never replaces a file, and the command fails.
    let short = (found.len() < args.count)
        .then(|| format!("only {} good multipliers exist at or below {start}, not {}", found.len(), args.count));
    if let (Some(short), Some(_)) = (&short, &args.out) {
        bail!("{short}; nothing written");
    }
    if short.is_none() {
        noteln!(
            "found {} multipliers from {} down to {}",
            found.len(),
            found.first().copied().unwrap_or(0),
            found.last().copied().unwrap_or(0)
        );
    }

    if args.verify {
        verify_against_table(&found)?;
    }

    match args.out {
        Some(path) => warpmc_host::output::write_bytes(&path, &multipliers::to_le_bytes(&found))?,
        None if !args.verify => {
            let stdout = io::stdout();
            let mut out = io::BufWriter::new(stdout.lock());
            for a in &found {
                if let Err(e) = writeln!(out, "{a}") {
                    return quiet_on_broken_pipe(e);
                }
            }
            out.flush().or_else(quiet_on_broken_pipe)?;
        }
        None => {}
    }
    match short {
        Some(short) => bail!("{short}"),
        None => Ok(()),
    }
}

/// The most multipliers `rng multipliers` searches for: more than exist
/// below 2^32 (about 10^7: a·2^31 − 1 and a·2^32 − 1 are odd, and each is
/// prime with probability about 2 / ln 2^63).
const MOST_MULTIPLIERS: usize = 1 << 25;

/// Both lists are runs of consecutive good multipliers in decreasing order,
/// so on the range of values they share they must be equal.
fn verify_against_table(found: &[u32]) -> anyhow::Result<()> {
    let table = multipliers::table();
    let (Some(&t_hi), Some(&t_lo), Some(&f_hi), Some(&f_lo)) =
        (table.first(), table.last(), found.first(), found.last())
    else {
        bail!("nothing to verify");
    };
    let (lo, hi) = (t_lo.max(f_lo), t_hi.min(f_hi));
    if lo > hi {
        bail!("the searched range {f_lo}..={f_hi} does not overlap the built-in table's {t_lo}..={t_hi}");
    }
    let ours: Vec<u32> = found.iter().copied().filter(|a| (lo..=hi).contains(a)).collect();
    let theirs: Vec<u32> = table.iter().copied().filter(|a| (lo..=hi).contains(a)).collect();
    if let Some(i) = (0..ours.len().min(theirs.len())).find(|&i| ours[i] != theirs[i]) {
        bail!(
            "the built-in table differs from the search near {}: generated {}, table has {}",
            ours[i],
            ours[i],
            theirs[i]
        );
    }
    if ours.len() != theirs.len() {
        bail!(
            "between {lo} and {hi} the search finds {} multipliers, the built-in table has {}",
            ours.len(),
            theirs.len()
        );
    }
    noteln!("verified: {} multipliers equal the built-in table between {lo} and {hi}", ours.len());
    Ok(())
}
