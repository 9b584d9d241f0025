//! Checkpoints: a run's complete state in one file, written atomically.
//!
//! Layout (all integers little-endian):
//!
//! | bytes | content |
//! |---|---|
//! | 8 | magic `WMCPOTTS` |
//! | 4 | format version (10; versions 3 to 9 are read too: versions 3 to 5 hold one byte per site, versions 3 and 4 hold Metropolis runs, and version 3 holds at most one chain under way;
//! |   | versions 1 and 2 were written by earlier random-number assignments, whose runs cannot be continued bit for bit; versions before 7 of an ordered start under a field h < 0 are refused, as their start differs; versions before 8 keyed the random numbers by the seed alone, and only their finished runs are read; versions before 10 calibrated Wolff's sweep from the ordered state at every temperature, and their unfinished Wolff runs with a temperature above T_c are refused) |
//! | 8 | length J of the JSON header |
//! | J | JSON: protocol, position, measurements so far, timing |
//! | N each | lattices, row-major, packed at b = 1, 2, 4 or 8 bits per site (the fewest that hold q − 1), lowest bits first, each lattice padded with zero bits to whole bytes: those of the chains under way (`current` of them, in run order from the position), then each saved sample state, then (version 9, `last`) a finished run's last lattice, kept for its snapshot |
//! | 8 | FNV-1a 64 of everything before |
//!
//! Random numbers need no saved state: they are a function of (seed, chain,
//! sweep, site), and the position says which sweep comes next. A resumed
//! run therefore continues bit for bit.

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::error::{PottsError, Result};
use crate::lattice::Lattice;
use crate::observables::Measurement;
use crate::protocol::{ProtocolConfig, RunState, SizeRecord, Timing};
use crate::tempering::{Replicas, TemperingState};

const MAGIC: &[u8; 8] = b"WMCPOTTS";
/// Version 6 packs the lattices at the bits a spin needs (a 65536² Ising
/// checkpoint is 512 MiB, not 4 GiB). Version 5 recorded the update
/// algorithm in the protocol: a warpmc that reads only version 4 would
/// continue a heat-bath or cluster run with Metropolis, so it must refuse
/// the file. Version 7 starts an ordered lattice under a field h < 0 in
/// state 1, which the field favours, where earlier versions used state 0:
/// such a run of an earlier version cannot be continued bit for bit (its
/// chains not yet started would start otherwise), and is refused. Version
/// 8 keys each chain's random numbers by the model, the lattice's size and
/// the temperature as well as the seed ([`ProtocolConfig::chain`]): a run of
/// an earlier version cannot be continued bit for bit, and only a finished
/// one (whose results need no random numbers) is read. Version 9 may keep
/// a finished run's last lattice (`last`), for its snapshot. Version 10
/// calibrates a Wolff sweep above T_c from a random start
/// ([`crate::wolff::calibration_start`]): an earlier version's unfinished
/// Wolff run with a temperature above T_c would continue with sweeps of
/// another number of clusters, and is refused.
const VERSION: u32 = 10;
/// The last version whose Wolff calibration started ordered at every
/// temperature.
const LAST_WOLFF_FROM_ORDERED: u32 = 9;
/// The first version that may keep a finished run's last lattice.
const FIRST_WITH_LAST_LATTICE: u32 = 9;
/// The last version whose random numbers were keyed by the seed alone.
const LAST_SEED_ALONE: u32 = 7;
/// The last version whose ordered start under h < 0 was state 0.
const LAST_ORDERED_AT_ZERO: u32 = 6;
/// The last version of one byte per site.
const LAST_BYTE_PER_SITE: u32 = 5;
/// The oldest version read: versions 3 and 4 hold Metropolis runs (their
/// protocol has no algorithm), and version 3 says whether one chain is
/// under way (`has_current`) rather than how many (`current`).
const OLDEST_READ: u32 = 3;

/// A header's configuration as written, its values not yet checked.
fn unchecked_config<'de, D: serde::Deserializer<'de>>(d: D) -> std::result::Result<ProtocolConfig, D::Error> {
    Ok(<crate::protocol::UncheckedConfig as Deserialize>::deserialize(d)?.unchecked())
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Header {
    /// Read unchecked: [`decode_parts`] validates it, naming a problem as
    /// the protocol's.
    #[serde(deserialize_with = "unchecked_config")]
    config: ProtocolConfig,
    temp_index: usize,
    sample: u32,
    sweep: u64,
    /// Version 3: whether one chain is under way.
    #[serde(default, skip_serializing)]
    has_current: bool,
    /// Version 4: how many chains are under way (their lattices follow).
    #[serde(default)]
    current: usize,
    saved: Vec<bool>,
    series: Vec<Vec<Vec<Measurement>>>,
    timing: Vec<Timing>,
    backends: Vec<String>,
    /// A tempering run under way: its replicas, measurements and timing
    /// (every replica's lattice follows, counted in `current`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    tempering: Option<TemperingHeader>,
    /// The finished sizes of a study of several sizes.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    earlier: Vec<SizeRecord>,
    /// The backend that ran the size under way, as its runner described it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    backend_description: Option<String>,
    /// Seconds between periodic checkpoints, if the run was given them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    checkpoint_every: Option<f64>,
    /// Version 9: whether a finished run's last lattice follows the others.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    last: bool,
}

/// The part of a tempering run's state that is not a lattice.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct TemperingHeader {
    sweep: u64,
    replicas: Replicas,
    series: Vec<Vec<Vec<Measurement>>>,
    timing: Timing,
}

fn fnv1a64(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        h ^= b as u64;
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

/// Bits per site in a checkpoint: the fewest of 1, 2, 4 and 8 that hold
/// every spin of a q-state lattice.
fn bits_per_site(q: u32) -> u32 {
    match q {
        0..=2 => 1,
        3..=4 => 2,
        5..=16 => 4,
        _ => 8,
    }
}

/// Bytes of `sites` spins packed at `bits` each.
fn packed_len(sites: usize, bits: u32) -> usize {
    sites.div_ceil(8 / bits as usize)
}

/// Appends `spins` packed at `bits` (1, 2, 4 or 8) each, lowest bits first.
fn pack(spins: &[u8], bits: u32, out: &mut Vec<u8>) {
    if bits == 8 {
        out.extend_from_slice(spins);
        return;
    }
    let per_byte = 8 / bits as usize;
    out.extend(spins.chunks(per_byte).map(|c| c.iter().rev().fold(0u8, |b, &s| (b << bits) | s)));
}

/// `sites` spins unpacked from `bytes` (packed by [`pack`]).
fn unpack(bytes: &[u8], bits: u32, sites: usize) -> Vec<u8> {
    if bits == 8 {
        return bytes[..sites.min(bytes.len())].to_vec();
    }
    let per_byte = 8 / bits as usize;
    let mask = ((1u16 << bits) - 1) as u8;
    let mut spins = Vec::with_capacity(bytes.len() * per_byte);
    for &b in bytes {
        spins.extend((0..per_byte).map(|j| (b >> (j as u32 * bits)) & mask));
    }
    spins.truncate(sites);
    spins
}

/// Serialises a run state.
pub fn encode(cfg: &ProtocolConfig, state: &RunState) -> Vec<u8> {
    let tempering = state.tempering.as_ref();
    let under_way: &[Lattice] = match tempering {
        Some(t) => &t.lattices,
        None => &state.current,
    };
    let header = Header {
        config: cfg.clone(),
        temp_index: state.temp_index,
        sample: state.sample,
        sweep: state.sweep,
        has_current: false,
        current: under_way.len(),
        saved: state.saved.iter().map(Option::is_some).collect(),
        series: state.series.clone(),
        timing: state.timing.clone(),
        backends: state.backends.clone(),
        tempering: tempering.map(|t| TemperingHeader {
            sweep: t.sweep,
            replicas: t.replicas.clone(),
            series: t.series.clone(),
            timing: t.timing,
        }),
        earlier: state.earlier.clone(),
        backend_description: state.backend_description.clone(),
        checkpoint_every: state.checkpoint_every,
        last: state.last_lattice.is_some(),
    };
    let json = serde_json::to_vec(&header).expect("checkpoint header serialises");
    // Exactly the size written: a buffer that grew by doubling could need
    // twice a large lattice's bytes on top of what the run holds.
    let bits = bits_per_site(cfg.q());
    let all = || under_way.iter().chain(state.saved.iter().flatten()).chain(&state.last_lattice);
    let lattices: usize = all().map(|l| packed_len(l.spins().len(), bits)).sum();
    let mut out = Vec::with_capacity(MAGIC.len() + 4 + 8 + json.len() + lattices + 8);
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&VERSION.to_le_bytes());
    out.extend_from_slice(&(json.len() as u64).to_le_bytes());
    out.extend_from_slice(&json);
    for l in all() {
        pack(l.spins(), bits, &mut out);
    }
    let sum = fnv1a64(&out);
    out.extend_from_slice(&sum.to_le_bytes());
    out
}

/// Each periodic checkpoint holds every measurement so far, so a write
/// takes longer as a run goes on: the next one is due `every` after it, or
/// ten times as long as it took if that is longer, so that saving never
/// takes more than about a tenth of a run however short `every` is.
pub fn next_interval(every: std::time::Duration, took: std::time::Duration) -> std::time::Duration {
    every.max(took.saturating_mul(10))
}

/// Writes a checkpoint atomically (see [`warpmc_host::output::write`]): a
/// crash leaves either the old or the new file, never half of one; a
/// symlink is written through, keeping the link.
pub fn write(path: &Path, cfg: &ProtocolConfig, state: &RunState) -> Result<()> {
    Ok(warpmc_host::output::write_bytes(path, &encode(cfg, state))?)
}

/// A run read back from a checkpoint: its protocol and where it stands.
#[derive(Clone, Debug, PartialEq)]
pub struct Checkpoint {
    /// The protocol.
    pub config: ProtocolConfig,
    /// Where the run stands.
    pub state: RunState,
}

/// What is at a path a run would write its checkpoints to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FileContents {
    /// Nothing, or an empty file: free to use.
    Nothing,
    /// A warpmc Potts checkpoint (of some run; it may be damaged).
    Checkpoint,
    /// Something else.
    Other,
}

/// Looks at what `path` holds without changing it (a device such as
/// `/dev/null` counts as holding nothing).
pub fn probe(path: &Path) -> Result<FileContents> {
    use std::io::Read;
    let meta = match std::fs::metadata(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(FileContents::Nothing),
        Err(e) => return Err(PottsError::io(path, e)),
        Ok(m) => m,
    };
    if !meta.is_file() || meta.len() == 0 {
        return Ok(FileContents::Nothing);
    }
    let mut head = Vec::with_capacity(MAGIC.len());
    let file = std::fs::File::open(path).map_err(|e| PottsError::io(path, e))?;
    file.take(MAGIC.len() as u64).read_to_end(&mut head).map_err(|e| PottsError::io(path, e))?;
    Ok(if head == MAGIC { FileContents::Checkpoint } else { FileContents::Other })
}

/// Reads and checks a checkpoint.
pub fn read(path: &Path) -> Result<Checkpoint> {
    let bytes = read_bytes(path)?;
    decode(&bytes).map_err(|e| match e {
        PottsError::BadCheckpoint(message) => PottsError::Checkpoint { path: path.to_path_buf(), message },
        other => other,
    })
}

/// The bytes of the checkpoint file `path`, not yet decoded: an error naming it
/// when it cannot be read, is not a regular file, or does not fit in the
/// memory the process may still allocate.
pub fn read_bytes(path: &Path) -> Result<Vec<u8>> {
    let bad = |message: String| PottsError::Checkpoint { path: path.to_path_buf(), message };
    // Checkpoints are regular files that warpmc wrote whole; a device
    // (/dev/zero) would be read until memory runs out, and opening a FIFO
    // waits for a writer: both are refused before the file is opened.
    let meta = std::fs::metadata(path).map_err(|e| match warpmc_host::output::claimed_elsewhere(path) {
        // A run started with this --checkpoint that has not yet saved
        // its first state: "No such file" alone would send the user
        // looking for a lost file.
        Some(lock) if e.kind() == std::io::ErrorKind::NotFound => bad(format!(
            "not written yet: another run holds it ({}) and has not written it; a run saves its first \
             checkpoint after --checkpoint-every seconds, or when it is stopped",
            lock.display()
        )),
        _ => PottsError::io(path, e),
    })?;
    if !meta.is_file() {
        return Err(bad("not a regular file, as warpmc writes checkpoints".into()));
    }
    let mut file = std::fs::File::open(path).map_err(|e| PottsError::io(path, e))?;
    let len = file.metadata().map_err(|e| PottsError::io(path, e))?.len();
    // Another file (a disk image given by mistake) is named as such before
    // it is read whole.
    let mut head = Vec::with_capacity(MAGIC.len());
    std::io::Read::read_to_end(&mut std::io::Read::take(&mut file, MAGIC.len() as u64), &mut head)
        .map_err(|e| PottsError::io(path, e))?;
    if head != MAGIC {
        return Err(bad(not_a_checkpoint(&head)));
    }
    let what = format!("reading checkpoint {}", path.display());
    warpmc_host::check_allocation(&what, len).map_err(PottsError::OutOfHostMemory)?;
    // Exactly the file's length: a growing vector would ask for up to
    // twice that.
    let mut bytes = Vec::new();
    bytes.try_reserve_exact(len as usize).map_err(|_| {
        PottsError::OutOfHostMemory(format!("{what}: cannot allocate {}", warpmc_host::memory::human_bytes(len)))
    })?;
    bytes.extend_from_slice(&head);
    std::io::Read::read_to_end(&mut std::io::Read::take(file, len - head.len() as u64), &mut bytes)
        .map_err(|e| PottsError::io(path, e))?;
    Ok(bytes)
}

/// The format version checkpoint bytes say they are in, if they begin as
/// a checkpoint does (the rest unchecked: see [`decode`]).
pub fn format_version(bytes: &[u8]) -> Option<u32> {
    (bytes.len() >= 12 && &bytes[..8] == MAGIC).then(|| u32::from_le_bytes(bytes[8..12].try_into().unwrap()))
}

/// What a file whose first bytes (`head`, at most the magic's length) are
/// not a checkpoint's is: empty, or cut inside the magic (a copy or a save
/// cut short on a full disk), or some other file.
fn not_a_checkpoint(head: &[u8]) -> String {
    if head.is_empty() {
        "empty: no checkpoint was written into it (a copy or a save cut short?)".into()
    } else if MAGIC.starts_with(head) {
        "truncated: the file ends inside a checkpoint's first bytes".into()
    } else {
        "not a warpmc Potts checkpoint".into()
    }
}

/// Parses checkpoint bytes; a [`PottsError::BadCheckpoint`] says what is
/// wrong.
pub fn decode(bytes: &[u8]) -> Result<Checkpoint> {
    decode_parts(bytes).map(|(config, state)| Checkpoint { config, state }).map_err(PottsError::BadCheckpoint)
}

fn decode_parts(bytes: &[u8]) -> std::result::Result<(ProtocolConfig, RunState), String> {
    if bytes.len() < MAGIC.len() || &bytes[..MAGIC.len()] != MAGIC {
        return Err(not_a_checkpoint(bytes));
    }
    // The magic, the version, the header's length and the checksum.
    if bytes.len() < 28 {
        return Err("truncated: the file ends before a checkpoint's first fields".into());
    }
    let version = u32::from_le_bytes(bytes[8..12].try_into().unwrap());
    let (body, sum) = bytes.split_at(bytes.len() - 8);
    let intact = fnv1a64(body) == u64::from_le_bytes(sum.try_into().unwrap());
    if !(OLDEST_READ..=VERSION).contains(&version) {
        // The version field may itself be what was damaged.
        let damaged = if intact { "" } else { " (or the file is damaged: its checksum does not match either)" };
        if version < OLDEST_READ {
            return Err(format!(
                "format version {version} was written by an older warpmc whose random-number assignment differs; \
                 it cannot be continued bit for bit — start the run again{damaged}"
            ));
        }
        return Err(format!("format version {version}, this warpmc reads version {VERSION}{damaged}"));
    }
    if !intact {
        return Err("checksum mismatch: the file is damaged or truncated".into());
    }
    let json_len = u64::from_le_bytes(body[12..20].try_into().unwrap());
    let json_end = 20usize.checked_add(json_len as usize).filter(|&e| e <= body.len()).ok_or("truncated header")?;
    let header: Header = serde_json::from_slice(&body[20..json_end]).map_err(|e| format!("unreadable header: {e}"))?;
    let cfg = header.config;
    cfg.validate().map_err(|e| format!("invalid protocol: {e}"))?;
    if version <= LAST_ORDERED_AT_ZERO && cfg.field() < 0.0 && cfg.init() == crate::InitialState::Ordered {
        return Err(format!(
            "format version {version} started ordered lattices under h = {} < 0 in state 0, which this warpmc \
             starts in state 1 (the state the field favours): the run cannot be continued bit for bit; finish it \
             with the warpmc that wrote it, or start it again",
            cfg.field()
        ));
    }
    let finished_study = header.temp_index >= cfg.temperatures().len() && cfg.study_sizes().last() == Some(&cfg.size());
    if version <= LAST_SEED_ALONE && !finished_study {
        return Err(format!(
            "format version {version} keyed its random numbers by the seed alone (sizes, and separate runs at \
             other temperatures, drew the same numbers); this warpmc keys them by the model, the size and the \
             temperature too, so the unfinished run cannot be continued bit for bit: finish it with the warpmc \
             that wrote it, or start it again"
        ));
    }
    let n = cfg.size() * cfg.height();
    if version <= LAST_WOLFF_FROM_ORDERED && cfg.algorithm() == crate::Algorithm::Wolff && !finished_study {
        // The temperatures still to run: those after the position, or every
        // one while a later size of the study follows.
        let later_size = cfg.study_sizes().last() != Some(&cfg.size());
        let left = if later_size {
            cfg.temperatures()
        } else {
            &cfg.temperatures()[header.temp_index.min(cfg.temperatures().len())..]
        };
        let model = cfg.model().map_err(|e| format!("invalid protocol: {e}"))?;
        let calibrated_random = |t: f64| {
            crate::swendsen_wang::bond_threshold(&model, t)
                .is_ok_and(|th| crate::wolff::calibration_start(&model, th) == crate::InitialState::Random)
        };
        let t_c = cfg.coupling() * crate::exact::potts_critical_temperature(cfg.q());
        if let Some(&t) = left.iter().find(|&&t| calibrated_random(t)) {
            return Err(format!(
                "format version {version} measured the clusters of a Wolff sweep from the ordered state, which at \
                 T = {t} (above T_c = {t_c:.6}) is metastable: this warpmc measures them from a random start \
                 there, so the unfinished run cannot be continued bit for bit; finish it with the warpmc that wrote \
                 it, or start it again"
            ));
        }
    }
    let bits = if version <= LAST_BYTE_PER_SITE { 8 } else { bits_per_site(cfg.q()) };
    let per_lattice = packed_len(n, bits);
    let under_way = if version == 3 { header.has_current as usize } else { header.current };
    let lattices = under_way
        .checked_add(header.saved.iter().filter(|&&b| b).count())
        .and_then(|n| n.checked_add(header.last as usize))
        .ok_or("too many lattices")?;
    if lattices.checked_mul(per_lattice).is_none_or(|b| b != body.len() - json_end) {
        return Err(format!("expected {lattices} lattices of {per_lattice} bytes"));
    }
    let mut chunks = body[json_end..].chunks_exact(per_lattice.max(1));
    let mut next = || -> std::result::Result<Lattice, String> {
        let spins = unpack(chunks.next().ok_or("missing lattice")?, bits, n);
        Lattice::from_spins(cfg.size(), cfg.height(), cfg.q(), spins).ok_or_else(|| "a lattice holds spins ≥ q".into())
    };
    let current = (0..under_way).map(|_| next()).collect::<Result<Vec<_>, _>>()?;
    let saved = header.saved.iter().map(|&p| if p { next().map(Some) } else { Ok(None) }).collect::<Result<_, _>>()?;
    let last_lattice = if header.last { Some(next()?) } else { None };
    let temps = cfg.temperatures().len();
    let consistent = header.temp_index <= temps
        && header.sample <= cfg.samples()
        && header.sweep <= cfg.sweeps_per_chain()
        && (header.sweep == 0 || under_way > 0)
        && (header.temp_index as u64 * cfg.samples() as u64 + header.sample as u64)
            .checked_add(under_way as u64)
            .is_some_and(|end| end <= temps as u64 * cfg.samples() as u64)
        && header.series.len() == header.timing.len()
        && header.series.len() == header.backends.len()
        && header.series.len() >= header.temp_index
        && header.series.len() <= temps
        && header.series.iter().all(|s| s.len() == cfg.samples() as usize);
    if !consistent || header.saved.len() != RunState::new(&cfg).saved.len() {
        return Err("inconsistent run position".into());
    }
    if header.last && version < FIRST_WITH_LAST_LATTICE {
        return Err(format!("a last lattice in a checkpoint of format {version}, which keeps none"));
    }
    if header.last && !finished_study {
        return Err("a last lattice in the checkpoint of a run that is not finished".into());
    }
    // Backend names are warpmc's own words ("cpu", "cuda"); they land in
    // CSV and JSON as they are.
    let plain = |b: &String| {
        !b.is_empty() && b.len() <= 64 && b.bytes().all(|c| c.is_ascii_alphanumeric() || b"-_+.".contains(&c))
    };
    if !header.backends.iter().chain(header.earlier.iter().flat_map(|r| &r.backends)).all(plain) {
        return Err("a backend name that no backend has".into());
    }
    // Descriptions ("2 lattices side by side on CPU, 2 threads, …") are
    // one printable line each: they land in CSV comment lines.
    let one_line = |d: &String| !d.is_empty() && d.len() <= 512 && d.chars().all(|c| !c.is_control());
    let descriptions = header.earlier.iter().filter_map(|r| r.backend_description.as_ref());
    if !descriptions.chain(header.backend_description.as_ref()).all(one_line) {
        return Err("a backend description that is not one line of text".into());
    }
    if header.checkpoint_every.is_some_and(|s| !s.is_finite() || s <= 0.0) {
        return Err("a time between checkpoints that is not a positive number of seconds".into());
    }
    // Time, and site updates of at most the whole run on a lattice of
    // `sites` (the run adds to them as it goes on).
    let timing_fits = |t: &Timing, sites: u128| {
        let run_updates = cfg.sweeps_per_chain() as u128 * sites * temps as u128 * cfg.samples() as u128;
        t.seconds >= 0.0 && t.seconds.is_finite() && t.updates as u128 <= run_updates
    };
    if !header.timing.iter().all(|t| timing_fits(t, n as u128))
        || !header.earlier.iter().all(|r| r.timing.iter().all(|t| timing_fits(t, r.size as u128 * r.size as u128)))
        || header.tempering.as_ref().is_some_and(|t| !timing_fits(&t.timing, n as u128))
    {
        return Err("inconsistent timing".into());
    }
    // Every chain's measurements so far: all of a finished chain's, those
    // up to `sweep` of a chain under way, none of a chain not yet started
    // (chains run temperature by temperature, samples within).
    let full = cfg.measurements_per_chain() as usize;
    let taken_by = |sweep: u64| (sweep.saturating_sub(cfg.therm()) / cfg.measure_every()) as usize;
    let first_under_way = header.temp_index * cfg.samples() as usize + header.sample as usize;
    let expected = |t: usize, s: usize| match t * cfg.samples() as usize + s {
        c if c < first_under_way => full,
        c if c < first_under_way + under_way => taken_by(header.sweep),
        _ => 0,
    };
    let series_fit = |series: &[Vec<Vec<Measurement>>], expected: &dyn Fn(usize, usize) -> usize| {
        series.iter().enumerate().all(|(t, per)| per.iter().enumerate().all(|(s, m)| m.len() == expected(t, s)))
    };
    // The measurements are a lattice's energy per site and order parameter:
    // a file edited to hold others (its checksum made anew) would give
    // averages that no lattice of the run has.
    let model = cfg.model().map_err(|e| e.to_string())?;
    let bound = (2.0 * model.coupling().abs() + model.field().abs()) * (1.0 + 1e-12);
    let sane = |m: &Measurement| m.energy.abs() <= bound && (-1e-12..=1.0 + 1e-12).contains(&m.magnetization);
    let all_sane = |series: &[Vec<Vec<Measurement>>]| series.iter().flatten().flatten().all(sane);
    if !all_sane(&header.series)
        || !header.earlier.iter().all(|r| all_sane(&r.series))
        || header.tempering.as_ref().is_some_and(|t| !all_sane(&t.series))
    {
        return Err("a measurement that no lattice of the run can give".into());
    }
    // A tempering run writes its checkpoints from inside the exchange loop,
    // so every one of them carries the tempering block.
    if cfg.exchange_every().is_some() && header.tempering.is_none() {
        return Err("a tempering run's checkpoint without its replicas".into());
    }
    if header.tempering.is_none() && !series_fit(&header.series, &expected) {
        return Err("the measurements do not match the run position".into());
    }
    let study = cfg.study_sizes();
    let whole = |r: &SizeRecord| {
        r.series.len() == temps
            && r.timing.len() == temps
            && r.backends.len() == temps
            && r.series.iter().all(|s| s.len() == cfg.samples() as usize)
            && series_fit(&r.series, &|_, _| full)
    };
    let sizes_done: Vec<usize> = header.earlier.iter().map(|r| r.size).collect();
    if study.iter().position(|&l| l == cfg.size()) != Some(sizes_done.len())
        || study[..sizes_done.len()] != sizes_done[..]
        || !header.earlier.iter().all(whole)
    {
        return Err("inconsistent record of the study's earlier sizes".into());
    }
    if let Some(mut t) = header.tempering {
        let finished = header.temp_index == temps && t.sweep == cfg.sweeps_per_chain();
        // A finished run of an earlier format keyed its exchanges by the
        // seed alone; it makes no more of them.
        if version <= LAST_SEED_ALONE && finished {
            t.replicas = t.replicas.rekeyed(cfg.model_key());
        }
        // One exchange round at most every `exchange_every` sweeps, each
        // offering every pair at most once per sample and completing at
        // most one round trip per sample.
        let stats = t.replicas.stats();
        let per_rounds = stats.rounds.saturating_mul(cfg.samples() as u64);
        let counts_fit = cfg.exchange_every().is_some_and(|every| stats.rounds <= t.sweep / every)
            && stats.attempts.iter().all(|&a| a <= per_rounds)
            && stats.round_trips <= per_rounds;
        let fits = cfg.exchange_every().is_some()
            && t.replicas.fits(&cfg)
            && counts_fit
            && (current.len() == t.replicas.members() || finished && current.is_empty())
            && (header.temp_index == 0 || finished)
            && t.sweep <= cfg.sweeps_per_chain()
            && t.series.len() == temps
            && t.series.iter().all(|s| s.len() == cfg.samples() as usize)
            && series_fit(&t.series, &|_, _| taken_by(t.sweep))
            && (header.series.is_empty() || finished && series_fit(&header.series, &|_, _| full));
        if !fits {
            return Err("inconsistent tempering state".into());
        }
        let mut state = RunState::new(&cfg);
        state.temp_index = header.temp_index;
        state.series = header.series;
        state.timing = header.timing;
        state.backends = header.backends;
        state.earlier = header.earlier;
        state.backend_description = header.backend_description;
        state.checkpoint_every = header.checkpoint_every;
        state.last_lattice = last_lattice;
        state.tempering = Some(TemperingState::restored(t.sweep, t.replicas, current, t.series, t.timing));
        return Ok((cfg, state));
    }
    let state = RunState {
        temp_index: header.temp_index,
        sample: header.sample,
        sweep: header.sweep,
        group: current.len(),
        current,
        saved,
        series: header.series,
        timing: header.timing,
        backends: header.backends,
        tempering: None,
        earlier: header.earlier,
        backend_description: header.backend_description,
        checkpoint_every: header.checkpoint_every,
        last_lattice,
    };
    Ok((cfg, state))
}

#[cfg(test)]
mod tests {

    #[test]
    fn periodic_saves_never_take_more_than_a_tenth_of_the_time() {
        use std::time::Duration;
        let s = Duration::from_secs;
        assert_eq!(next_interval(s(300), s(1)), s(300));
        assert_eq!(next_interval(Duration::from_nanos(1), Duration::from_millis(20)), Duration::from_millis(200));
        assert_eq!(next_interval(Duration::MAX, s(5)), Duration::MAX);
        assert_eq!(next_interval(s(1), Duration::MAX), Duration::MAX);
    }

    use super::*;

    #[test]
    fn packing_keeps_every_spin() {
        for (q, bits) in [(1, 1), (2, 1), (3, 2), (4, 2), (5, 4), (9, 4), (16, 4), (17, 8), (255, 8)] {
            assert_eq!(bits_per_site(q), bits);
            // Awkward lengths: empty, shorter than a byte, one past a byte.
            for sites in [0usize, 1, 3, 7, 8, 9, 31, 1000] {
                let spins: Vec<u8> = (0..sites).map(|i| ((i * 7919 + 13) % q as usize) as u8).collect();
                let mut packed = Vec::new();
                pack(&spins, bits, &mut packed);
                assert_eq!(packed.len(), packed_len(sites, bits), "q={q} sites={sites}");
                assert_eq!(unpack(&packed, bits, sites), spins, "q={q} sites={sites}");
            }
        }
        // The lowest bits hold the first site; padding bits are zero.
        let mut packed = Vec::new();
        pack(&[1, 0, 1], 1, &mut packed);
        assert_eq!(packed, [0b101]);
        packed.clear();
        pack(&[3, 1, 2], 2, &mut packed);
        assert_eq!(packed, [0b10_01_11]);
    }

    /// A protocol of one short chain on an 8 × 8 lattice.
    fn small_protocol() -> ProtocolConfig {
        crate::ConfigFile {
            q: Some(3),
            size: Some(8),
            temps: Some(crate::Temperatures::List(vec![1.0])),
            therm: Some(4),
            sweeps: Some(8),
            measure_every: Some(2),
            ..Default::default()
        }
        .resolve()
        .unwrap()
    }

    /// A checkpoint that is whole (its checksum right) but whose protocol
    /// no run can take is refused as an invalid protocol, not as a damaged
    /// file.
    #[test]
    fn a_whole_checkpoint_with_an_invalid_protocol_says_so() {
        let cfg = small_protocol();
        let mut bytes = encode(&cfg, &RunState::new(&cfg));
        let body = bytes.len() - 8;
        let at = bytes.windows(17).position(|w| w == b"\"measure_every\":2").unwrap();
        bytes[at + 16] = b'0';
        let sum = fnv1a64(&bytes[..body]);
        bytes[body..].copy_from_slice(&sum.to_le_bytes());
        let e = decode(&bytes).unwrap_err().to_string();
        assert!(e.contains("invalid protocol: the sweeps between measurements must be at least 1"), "{e}");
    }

    /// Every cut of a checkpoint is refused as one: as empty, truncated or
    /// damaged; anything without the magic as another file.
    #[test]
    fn every_cut_of_a_checkpoint_says_what_it_is() {
        let cfg = small_protocol();
        let bytes = encode(&cfg, &RunState::new(&cfg));
        for cut in 0..bytes.len() {
            let e = decode(&bytes[..cut]).unwrap_err().to_string();
            if cut == 0 {
                assert!(e.contains("empty"), "{cut}: {e}");
            } else {
                assert!(e.contains("truncated") || e.contains("damaged"), "{cut}: {e}");
            }
        }
        assert!(decode(&bytes).is_ok());
        // Anything without the magic is another file.
        let mut other = bytes.clone();
        other[3] ^= 1;
        assert!(decode(&other[..5]).unwrap_err().to_string().contains("not a warpmc Potts checkpoint"));
    }
}
