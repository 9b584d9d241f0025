//! The timing experiments of "Shuffle: Tips and Tricks" (Julien Demouth,
//! NVIDIA, GTC 2013), slides 7–21, reproduced on the current device and
//! checked against a CPU emulation.
//!
//! Six experiments, each a warp operation applied `reps` times (4096 in the
//! slides) in a loop inside one kernel, input read once and result written
//! once:
//!
//! | experiment | one iteration | slides |
//! | --- | --- | --- |
//! | `neighbour` | `x` = `x` of lane (lane + 1) % 32 | slides 7–12 |
//! | `broadcast` | `x = x + (c − 2·(x of lane 0))` | slide 13 |
//! | `reduce` | `x = x + (c − 2·m)`, `m` = (xor-butterfly sum)/32 | slide 14 |
//! | `scan` | `x = (shfl_up inclusive scan) − b` | slides 15–16 |
//! | `sort` | `x = −(bitonic sort of 32 keys)` (slide 19's network) | slides 17–19 |
//! | `transpose` | 7 words per lane: coalesced layout → each lane its structure | slides 20–21 |
//!
//! `c` and `b` are per-thread constants (read once from an `aux` array);
//! with them, and with the negation of the sort, every iteration changes the
//! values while keeping them small and exactly representable, so the result
//! after any number of iterations is known exactly and a stale read, a lost
//! iteration or an overflow cannot hide: a wrong value is not forgotten by
//! the iterations that follow (`kernels/shuffle_bench.cu` explains the
//! choice per experiment). They cost at most three arithmetic instructions
//! per iteration, the same in every variant.
//!
//! Variants ([`Variant`]): shared memory with `__syncthreads()` (SMEM),
//! volatile shared memory with no barrier (the slides' warp-synchronous
//! "unsafe" version, a data race since Volta), shared memory with
//! `__syncwarp()` (its correct modern form), the `*_sync` shuffle
//! intrinsics (SHFL), and for the fp32 and int32 scan slide 16's inline-PTX
//! shuffle with predicate.
//!
//! Grid: as Demouth's 26 blocks of 1024 threads and 104 blocks of 256
//! (transpose) on the 13 SMs of a K20 — blocks enough to fill every SM
//! ([`ShuffleBenchConfig::grid_for`]).
//!
//! Every launch's output (one warm-up, the timed runs, and extra launches at
//! a few small repetition counts) is compared bit for bit with
//! [`cpu_expected`], an emulation of the same operations in the same order
//! and type; every variant must give the same bits. A mismatch of the
//! unsafe variant is a finding about the hardware, not an error.

use rayon::prelude::*;
use serde::Serialize;
use warpmc_gpu::{DeviceBuffer, Gpu, KernelSource, LaunchConfig};

use warpmc_prims::Element;

use crate::error::{BenchError, Result, ensure};

/// Lanes in a warp.
pub const WARP: usize = 32;
/// Threads per block of the one-word experiments (Demouth's 1024).
pub const THREADS: u32 = 1024;
/// Threads per block of the transpose (Demouth's 256).
pub const TRANSPOSE_THREADS: u32 = 256;
/// Words per lane of the transpose ("7*int32", slide 21).
pub const TRANSPOSE_WORDS: usize = 7;
/// Threads per SM the kernels are built to keep resident (through
/// `__launch_bounds__`): 2 blocks of 1024, 8 of 256; 2048 is the maximum
/// on every GPU since Kepler's K20 except a few consumer parts.
pub const RESIDENT_THREADS_PER_SM: u32 = 2048;

/// One of Demouth's experiments.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Experiment {
    /// Each thread takes its right neighbour's value (slides 7–12).
    Neighbour,
    /// Every lane reads lane 0's value (slide 13).
    Broadcast,
    /// Xor-butterfly sum of the warp (slide 14).
    Reduce,
    /// Inclusive scan with `shfl_up` (slides 15–16).
    Scan,
    /// Bitonic sort of the warp's 32 keys (slides 17–19).
    Sort,
    /// Transpose of 7 words per lane between the coalesced layout and one
    /// structure per lane (slides 20–21).
    Transpose,
}

impl Experiment {
    /// Every experiment, in the slides' order.
    pub const ALL: [Experiment; 6] = [
        Experiment::Neighbour,
        Experiment::Broadcast,
        Experiment::Reduce,
        Experiment::Scan,
        Experiment::Sort,
        Experiment::Transpose,
    ];

    /// The lower-case name, used in kernel names and on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Experiment::Neighbour => "neighbour",
            Experiment::Broadcast => "broadcast",
            Experiment::Reduce => "reduce",
            Experiment::Scan => "scan",
            Experiment::Sort => "sort",
            Experiment::Transpose => "transpose",
        }
    }

    /// The experiment called `name` (as [`Experiment::name`]; "neighbor" is
    /// accepted too).
    pub fn from_name(name: &str) -> Option<Self> {
        let name = name.trim().to_ascii_lowercase();
        if name == "neighbor" {
            return Some(Experiment::Neighbour);
        }
        Experiment::ALL.into_iter().find(|e| e.name() == name)
    }

    /// Words each thread holds: 7 for the transpose, 1 otherwise.
    pub fn words(self) -> usize {
        match self {
            Experiment::Transpose => TRANSPOSE_WORDS,
            _ => 1,
        }
    }

    /// Threads per block: 256 for the transpose, 1024 otherwise.
    pub fn threads_per_block(self) -> u32 {
        match self {
            Experiment::Transpose => TRANSPOSE_THREADS,
            _ => THREADS,
        }
    }

    /// The experiment's variants for element type `ty`, in the order of the
    /// slides' charts (the predicate scan only for fp32 and int32).
    pub fn variants(self, ty: ElemType) -> Vec<Variant> {
        let mut v = vec![Variant::Smem, Variant::SmemUnsafe, Variant::SmemSyncwarp, Variant::Shfl];
        if self == Experiment::Scan && ty.has_predicate_scan() {
            v.push(Variant::ShflPredicate);
        }
        v
    }
}

impl std::str::FromStr for Experiment {
    type Err = BenchError;

    /// See [`Experiment::from_name`].
    fn from_str(s: &str) -> Result<Self> {
        Experiment::from_name(s).ok_or_else(|| {
            BenchError::Invalid(format!(
                "unknown experiment '{s}' (neighbour, broadcast, reduce, scan, sort or transpose)"
            ))
        })
    }
}

/// How an experiment exchanges values between the lanes of a warp.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub enum Variant {
    /// Shared memory: store, `__syncthreads()`, load, `__syncthreads()`
    /// (the second barrier keeps the next iteration's stores from
    /// overwriting slots a slower warp has not read yet).
    Smem,
    /// Volatile shared memory and no barrier: the slides' warp-synchronous
    /// version. A data race on Volta and newer GPUs, whose lanes are not
    /// guaranteed to run in lockstep (independent thread scheduling).
    SmemUnsafe,
    /// Shared memory with `__syncwarp()` in place of the barriers: the
    /// correct form of the warp-synchronous version.
    SmemSyncwarp,
    /// The `*_sync` shuffle intrinsics; no shared memory.
    Shfl,
    /// Scan only, fp32 and int32: slide 16's inline PTX,
    /// `shfl.sync.up.b32 r|p …; @p add …`, the shuffle's predicate
    /// replacing the lane comparison.
    ShflPredicate,
}

impl Variant {
    /// Every variant.
    pub const ALL: [Variant; 5] =
        [Variant::Smem, Variant::SmemUnsafe, Variant::SmemSyncwarp, Variant::Shfl, Variant::ShflPredicate];

    /// The name in the slides' charts (plus the two additions).
    pub fn name(self) -> &'static str {
        match self {
            Variant::Smem => "SMEM",
            Variant::SmemUnsafe => "SMEM (unsafe)",
            Variant::SmemSyncwarp => "SMEM + __syncwarp()",
            Variant::Shfl => "SHFL",
            Variant::ShflPredicate => "SHFL (predicate PTX)",
        }
    }

    /// The kernel name's suffix: `<experiment>_<suffix>`.
    pub fn suffix(self) -> &'static str {
        match self {
            Variant::Smem => "smem",
            Variant::SmemUnsafe => "smem_unsafe",
            Variant::SmemSyncwarp => "smem_syncwarp",
            Variant::Shfl => "shfl",
            Variant::ShflPredicate => "shfl_pred",
        }
    }

    /// Whether the variant is a data race under the CUDA memory model (its
    /// results may be wrong on Volta and newer).
    pub fn racy(self) -> bool {
        self == Variant::SmemUnsafe
    }

    /// Whether the variant exchanges through shared memory.
    pub fn uses_smem(self) -> bool {
        matches!(self, Variant::Smem | Variant::SmemUnsafe | Variant::SmemSyncwarp)
    }
}

/// The element types of the experiments.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub enum ElemType {
    /// `float`.
    F32,
    /// `double` (a shuffle moves 32 bits: two per value).
    F64,
    /// `int`.
    I32,
}

impl ElemType {
    /// Every type, in the slides' order.
    pub const ALL: [ElemType; 3] = [ElemType::F32, ElemType::F64, ElemType::I32];

    /// "fp32", "fp64" or "int32", as the slides' charts say.
    pub fn name(self) -> &'static str {
        match self {
            ElemType::F32 => "fp32",
            ElemType::F64 => "fp64",
            ElemType::I32 => "int32",
        }
    }

    /// The type called `name` ("fp32", "f32", "float", …).
    pub fn from_name(name: &str) -> Option<Self> {
        match name.trim().to_ascii_lowercase().as_str() {
            "fp32" | "f32" | "float" => Some(ElemType::F32),
            "fp64" | "f64" | "double" => Some(ElemType::F64),
            "int32" | "i32" | "int" => Some(ElemType::I32),
            _ => None,
        }
    }

    /// Whether slide 16's predicate scan exists for the type (32-bit types).
    pub fn has_predicate_scan(self) -> bool {
        self != ElemType::F64
    }

    /// Bytes per value.
    pub fn size(self) -> usize {
        match self {
            ElemType::F64 => 8,
            _ => 4,
        }
    }
}

impl std::str::FromStr for ElemType {
    type Err = BenchError;

    /// See [`ElemType::from_name`].
    fn from_str(s: &str) -> Result<Self> {
        ElemType::from_name(s)
            .ok_or_else(|| BenchError::Invalid(format!("unknown element type '{s}' (fp32, fp64 or int32)")))
    }
}

/// An element type of the experiments, with the arithmetic the kernels do,
/// exactly as they do it (wrapping for `i32`).
pub trait ShuffleElement: Element {
    /// Which type this is.
    const TYPE: ElemType;
    /// `v` as this type (exact for |v| < 2²⁴).
    fn from_i32(v: i32) -> Self;
    /// `self + o`.
    fn plus(self, o: Self) -> Self;
    /// `self − o`.
    fn minus(self, o: Self) -> Self;
    /// `−self`.
    fn negated(self) -> Self;
    /// A sum divided by 32 as the reduce experiment does it: `× 0.03125`
    /// for floats, `>> 5` (arithmetic) for `i32`.
    fn div32(self) -> Self;
    /// The bit pattern, for exact comparisons (NaN included).
    fn bits(self) -> u64;
}

impl ShuffleElement for f32 {
    const TYPE: ElemType = ElemType::F32;
    fn from_i32(v: i32) -> Self {
        v as f32
    }
    fn plus(self, o: Self) -> Self {
        self + o
    }
    fn minus(self, o: Self) -> Self {
        self - o
    }
    fn negated(self) -> Self {
        -self
    }
    fn div32(self) -> Self {
        self * 0.03125
    }
    fn bits(self) -> u64 {
        u64::from(self.to_bits())
    }
}

impl ShuffleElement for f64 {
    const TYPE: ElemType = ElemType::F64;
    fn from_i32(v: i32) -> Self {
        f64::from(v)
    }
    fn plus(self, o: Self) -> Self {
        self + o
    }
    fn minus(self, o: Self) -> Self {
        self - o
    }
    fn negated(self) -> Self {
        -self
    }
    fn div32(self) -> Self {
        self * 0.03125
    }
    fn bits(self) -> u64 {
        self.to_bits()
    }
}

impl ShuffleElement for i32 {
    const TYPE: ElemType = ElemType::I32;
    fn from_i32(v: i32) -> Self {
        v
    }
    fn plus(self, o: Self) -> Self {
        self.wrapping_add(o)
    }
    fn minus(self, o: Self) -> Self {
        self.wrapping_sub(o)
    }
    fn negated(self) -> Self {
        self.wrapping_neg()
    }
    fn div32(self) -> Self {
        self >> 5
    }
    fn bits(self) -> u64 {
        u64::from(self as u32)
    }
}

/// The kernel source for element type `T` (one module per type).
pub fn source<T: ShuffleElement>() -> KernelSource {
    KernelSource::new("shuffle_bench.cu", include_str!("../kernels/shuffle_bench.cu"))
        .option(format!("-DBENCH_SHUFFLE_ELEM={}", T::CUDA))
        .option(format!("-DBENCH_SHUFFLE_BLOCK={THREADS}"))
        .option(format!("-DBENCH_SHUFFLE_MIN_BLOCKS={}", RESIDENT_THREADS_PER_SM / THREADS))
        .option(format!("-DBENCH_SHUFFLE_TRANSPOSE_BLOCK={TRANSPOSE_THREADS}"))
        .option(format!("-DBENCH_SHUFFLE_TRANSPOSE_MIN_BLOCKS={}", RESIDENT_THREADS_PER_SM / TRANSPOSE_THREADS))
        .option(format!("-DBENCH_SHUFFLE_TRANSPOSE_WORDS={TRANSPOSE_WORDS}"))
        .option(format!("-DBENCH_SHUFFLE_PREDICATE_SCAN={}", u8::from(T::TYPE.has_predicate_scan())))
}

/// The experiment kernel sources (one per element type), for compile checks.
pub fn sources() -> Vec<KernelSource> {
    vec![source::<f32>(), source::<f64>(), source::<i32>()]
}

/// What to run.
#[derive(Clone, Debug, PartialEq)]
pub struct ShuffleBenchConfig {
    /// Iterations of the warp operation inside each kernel (Demouth's
    /// 4096). The CPU check emulates the scan's iterations one by one (the
    /// other experiments repeat with a short period), so very large values
    /// make the check slow.
    pub reps: u32,
    /// Timed launches per kernel after one warm-up; the row reports their
    /// median.
    pub timed_runs: u32,
    /// Blocks per SM; `None`: as many as fill an SM (2 of 1024 threads, 8 of
    /// 256 for the transpose, on an SM of 2048 threads).
    pub blocks_per_sm: Option<u32>,
    /// Which experiments, in this order.
    pub experiments: Vec<Experiment>,
    /// Which element types, in this order within each experiment.
    pub types: Vec<ElemType>,
    /// Extra, untimed launches at these repetition counts, each checked: a
    /// small count that is not a multiple of an experiment's period shows a
    /// kernel that skips or repeats iterations (4096 is a multiple of the
    /// periods of neighbour, 32, and of broadcast and reduce, 2, whose
    /// outputs after 4096 iterations are therefore their inputs).
    pub check_reps: Vec<u32>,
    /// Seed of the inputs.
    pub seed: u64,
}

impl Default for ShuffleBenchConfig {
    fn default() -> Self {
        ShuffleBenchConfig {
            reps: 4096,
            timed_runs: 5,
            blocks_per_sm: None,
            experiments: Experiment::ALL.to_vec(),
            types: ElemType::ALL.to_vec(),
            check_reps: vec![1, 7],
            seed: 1,
        }
    }
}

/// A launch shape.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Grid {
    /// Blocks.
    pub blocks: u32,
    /// Threads per block.
    pub threads_per_block: u32,
}

impl Grid {
    /// Threads in the grid.
    pub fn threads(self) -> usize {
        self.blocks as usize * self.threads_per_block as usize
    }
}

impl ShuffleBenchConfig {
    /// The grid of `experiment` on a device with `sm_count` SMs of
    /// `max_threads_per_sm` threads: [`Self::blocks_per_sm`] (default: as
    /// many as fit, at least 1) times the SMs. On a K20 (13 SMs of 2048
    /// threads) this is Demouth's 26 × 1024 and, for the transpose,
    /// 104 × 256.
    pub fn grid_for(&self, sm_count: u32, max_threads_per_sm: u32, experiment: Experiment) -> Grid {
        let threads_per_block = experiment.threads_per_block();
        let per_sm = self.blocks_per_sm.unwrap_or((max_threads_per_sm / threads_per_block).max(1));
        Grid { blocks: per_sm.max(1) * sm_count.max(1), threads_per_block }
    }

    /// [`Self::grid_for`] on `gpu`.
    pub fn grid(&self, gpu: &Gpu, experiment: Experiment) -> Grid {
        let info = gpu.info();
        self.grid_for(info.sm_count, info.max_threads_per_sm, experiment)
    }

    fn validate(&self) -> Result<()> {
        ensure(self.reps >= 1 && self.reps <= i32::MAX as u32, || {
            format!("reps must be between 1 and {} (got {})", i32::MAX, self.reps)
        })?;
        ensure(self.timed_runs >= 1, || "timed_runs must be at least 1".into())?;
        ensure(self.blocks_per_sm != Some(0), || "blocks_per_sm must be at least 1".into())?;
        ensure(self.blocks_per_sm.is_none_or(|b| b <= 64), || {
            "blocks_per_sm above 64 only queues more waves; use at most 64".into()
        })?;
        ensure(self.check_reps.iter().all(|&r| r <= i32::MAX as u32), || "check_reps must fit in an i32".into())?;
        Ok(())
    }
}

/// One kernel's measurement: a bar of the slides' charts.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ShuffleRow {
    /// The experiment ([`Experiment::name`]).
    pub experiment: &'static str,
    /// The variant ([`Variant::name`]).
    pub variant: &'static str,
    /// The element type ([`ElemType::name`]).
    pub ty: &'static str,
    /// The kernel's name in the module.
    pub kernel: String,
    /// Whether the variant is a data race (SMEM (unsafe)): its timing is the
    /// slides', its results are not guaranteed.
    pub racy: bool,
    /// Median device time of the timed launches, in milliseconds (CUDA
    /// events around each launch).
    pub ms: f64,
    /// Every timed launch, in milliseconds, in order.
    pub runs_ms: Vec<f64>,
    /// `ms` over the SHFL kernel's `ms` of the same experiment and type.
    pub vs_shfl: f64,
    /// Shared memory per block in bytes (static; 0 for the shuffles).
    pub smem_bytes_per_block: u32,
    /// Blocks in the grid.
    pub blocks: u32,
    /// Threads per block.
    pub threads_per_block: u32,
    /// Iterations of the operation in each timed launch.
    pub reps: u32,
    /// Whether every checked launch gave exactly the CPU emulation's output.
    pub verified: bool,
    /// Launches whose output was checked (the extra ones at
    /// [`ShuffleBenchConfig::check_reps`], the warm-up, the timed ones).
    pub checked_launches: u32,
    /// Checked launches with at least one wrong element.
    pub mismatched_launches: u32,
    /// Wrong elements, summed over the checked launches.
    pub mismatches: u64,
    /// The first wrong element seen, described.
    pub first_mismatch: Option<String>,
}

/// Runs the experiments on `gpu` and returns one row per kernel. `progress`
/// sees each row once its experiment and type are done (all variants, so
/// that [`ShuffleRow::vs_shfl`] is known).
///
/// Errors are the GPU's (compilation, launches) and invalid configurations;
/// a wrong result is not an error but a row with `verified: false`.
pub fn run_shuffle_bench(
    gpu: &Gpu,
    cfg: &ShuffleBenchConfig,
    mut progress: impl FnMut(&ShuffleRow),
) -> Result<Vec<ShuffleRow>> {
    cfg.validate()?;
    let mut rows = Vec::new();
    for &experiment in &cfg.experiments {
        for &ty in &cfg.types {
            let group = match ty {
                ElemType::F32 => run_group::<f32>(gpu, cfg, experiment)?,
                ElemType::F64 => run_group::<f64>(gpu, cfg, experiment)?,
                ElemType::I32 => run_group::<i32>(gpu, cfg, experiment)?,
            };
            for row in &group {
                progress(row);
            }
            rows.extend(group);
        }
    }
    Ok(rows)
}

/// Every variant of one experiment for one type.
fn run_group<T: ShuffleElement>(
    gpu: &Gpu,
    cfg: &ShuffleBenchConfig,
    experiment: Experiment,
) -> Result<Vec<ShuffleRow>> {
    let grid = cfg.grid(gpu, experiment);
    let threads = grid.threads();
    ensure(threads * experiment.words() < (1usize << 31), || {
        format!("a grid of {threads} threads is beyond what the kernels index")
    })?;
    let (input, aux) = bench_inputs::<T>(experiment, threads, cfg.seed);

    // The expected outputs, one per repetition count launched.
    let mut counts: Vec<u32> = cfg.check_reps.clone();
    counts.push(cfg.reps);
    counts.sort_unstable();
    counts.dedup();
    let expected: Vec<(u32, Vec<T>)> =
        counts.iter().map(|&r| Ok((r, cpu_expected(experiment, &input, &aux, r)?))).collect::<Result<_>>()?;
    let expected_for = |r: u32| -> &[T] { &expected.iter().find(|(c, _)| *c == r).expect("computed above").1 };

    let module = gpu.module(&source::<T>())?;
    let d_in = gpu.upload(&input)?;
    let d_aux = gpu.upload(&aux)?;
    let mut d_out = gpu.alloc_zeros::<T>(input.len())?;
    let lc =
        LaunchConfig { grid_dim: (grid.blocks, 1, 1), block_dim: (grid.threads_per_block, 1, 1), shared_mem_bytes: 0 };

    let mut rows = Vec::new();
    for variant in experiment.variants(T::TYPE) {
        let name = format!("{}_{}", experiment.name(), variant.suffix());
        let kernel = module.kernel(&name)?;
        let mut check = Check::default();
        let mut poison = 0u32;
        // Fills the output with a poison (alternating, so that an element
        // no launch writes cannot match by chance) and launches.
        let mut launch = |out: &mut DeviceBuffer<T>, reps: u32, timed: bool| -> Result<Option<f64>> {
            poison += 1;
            gpu.memset_bytes(out, if poison.is_multiple_of(2) { 0xff } else { 0xa5 })?;
            let reps = reps as i32;
            let timer = if timed { Some(gpu.start_timer()?) } else { None };
            // SAFETY: every kernel of shuffle_bench.cu takes (const T *in,
            // const T *aux, T *out, int reps) with T this module's element
            // type. Thread t of the grid reads in[t], aux[t] and writes
            // out[t] (one-word experiments), or reads and writes
            // in/out[warp*224 + 32*j + lane], j < 7, and reads no aux
            // (transpose); the buffers hold grid.threads() × words elements
            // and aux grid.threads(), exactly the grid launched. Shared
            // memory is static.
            unsafe { gpu.launch(&kernel).buf(&d_in).buf(&d_aux).buf_mut(out).arg(&reps).run(lc)? };
            Ok(match timer {
                Some(t) => Some(t.stop_ms()?),
                None => None,
            })
        };
        for &r in &cfg.check_reps {
            launch(&mut d_out, r, false)?;
            check.compare(experiment, &gpu.download(&d_out)?, expected_for(r), r);
        }
        // Warm-up (also checked).
        launch(&mut d_out, cfg.reps, false)?;
        check.compare(experiment, &gpu.download(&d_out)?, expected_for(cfg.reps), cfg.reps);
        let mut runs_ms = Vec::new();
        for _ in 0..cfg.timed_runs {
            let ms = launch(&mut d_out, cfg.reps, true)?.expect("timed launch");
            runs_ms.push(ms);
            check.compare(experiment, &gpu.download(&d_out)?, expected_for(cfg.reps), cfg.reps);
        }
        let smem = if variant.uses_smem() {
            (grid.threads_per_block as usize * experiment.words() * size_of::<T>()) as u32
        } else {
            0
        };
        rows.push(ShuffleRow {
            experiment: experiment.name(),
            variant: variant.name(),
            ty: T::TYPE.name(),
            kernel: name,
            racy: variant.racy(),
            ms: median(&runs_ms),
            runs_ms,
            vs_shfl: f64::NAN,
            smem_bytes_per_block: smem,
            blocks: grid.blocks,
            threads_per_block: grid.threads_per_block,
            reps: cfg.reps,
            verified: check.mismatched_launches == 0,
            checked_launches: check.launches,
            mismatched_launches: check.mismatched_launches,
            mismatches: check.mismatches,
            first_mismatch: check.first,
        });
    }
    let shfl_ms = rows.iter().find(|r| r.variant == Variant::Shfl.name()).map(|r| r.ms);
    for r in &mut rows {
        r.vs_shfl = shfl_ms.map_or(f64::NAN, |s| r.ms / s);
    }
    Ok(rows)
}

/// The median of `xs` (mean of the two middle values for an even count).
fn median(xs: &[f64]) -> f64 {
    let mut v = xs.to_vec();
    v.sort_by(f64::total_cmp);
    let n = v.len();
    match n {
        0 => f64::NAN,
        _ if n % 2 == 1 => v[n / 2],
        _ => 0.5 * (v[n / 2 - 1] + v[n / 2]),
    }
}

/// Tally of output checks.
#[derive(Debug, Default)]
struct Check {
    launches: u32,
    mismatched_launches: u32,
    mismatches: u64,
    first: Option<String>,
}

impl Check {
    fn compare<T: ShuffleElement>(&mut self, experiment: Experiment, got: &[T], want: &[T], reps: u32) {
        self.launches += 1;
        let (n, first) = count_mismatches(experiment, got, want);
        if n > 0 {
            self.mismatched_launches += 1;
            self.mismatches += n;
            if self.first.is_none() {
                self.first = first.map(|f| format!("{f} after {reps} repetitions"));
            }
        }
    }
}

/// How many elements of `got` differ (bit for bit) from `want`, and where
/// the first one is, described.
pub fn count_mismatches<T: ShuffleElement>(experiment: Experiment, got: &[T], want: &[T]) -> (u64, Option<String>) {
    if got.len() != want.len() {
        return (want.len().max(got.len()) as u64, Some(format!("{} elements, expected {}", got.len(), want.len())));
    }
    let mut n = 0u64;
    let mut first = None;
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        if g.bits() != w.bits() {
            n += 1;
            if first.is_none() {
                let words = experiment.words();
                let (warp, within) = (i / (WARP * words), i % (WARP * words));
                let (word, lane) = (within / WARP, within % WARP);
                let place = if words == 1 {
                    format!("warp {warp} lane {lane}")
                } else {
                    format!("warp {warp} lane {lane} word {word}")
                };
                first = Some(format!("element {i} ({place}): got {g:?}, expected {w:?}"));
            }
        }
    }
    (n, first)
}

// ---------------------------------------------------------------------------
// Inputs.

/// SplitMix64 of `x`: a stateless hash for reproducible inputs.
fn mix(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

/// Integer inputs (input, aux) of `experiment` for `threads` threads; the
/// same numbers for every element type.
fn integer_inputs(experiment: Experiment, threads: usize, seed: u64) -> (Vec<i32>, Vec<i32>) {
    let stream = mix(seed ^ ((experiment as u64 + 1) << 56));
    let draw = |i: usize, salt: u64, lo: i32, hi: i32| -> i32 {
        let r = mix(stream ^ mix(i as u64 ^ (salt << 48)));
        lo + (r % (hi - lo + 1) as u64) as i32
    };
    // Distinct within a warp: a random multiple of 32 plus the lane.
    let distinct = |i: usize| draw(i, 1, -8192, 8191) * 32 + (i % WARP) as i32;
    let n = threads * experiment.words();
    let mut input = vec![0i32; n];
    let mut aux = vec![0i32; threads];
    match experiment {
        Experiment::Neighbour | Experiment::Sort => {
            for (i, x) in input.iter_mut().enumerate() {
                *x = distinct(i);
            }
        }
        Experiment::Broadcast => {
            // c odd and the same in the warp: lane 0 alternates a, c − a
            // (never equal), every lane keeps its own history.
            for i in 0..threads {
                input[i] = distinct(i);
                aux[i] = 2 * draw(i - i % WARP, 2, -500, 500) + 1;
            }
        }
        Experiment::Reduce => {
            // Warp sums that are multiples of 32 make every mean an integer,
            // so int32's >> 5 and the floats' × 1/32 give the same numbers
            // (a check of exactness across types); c as for broadcast.
            for w in 0..threads / WARP {
                let lanes = &mut input[w * WARP..(w + 1) * WARP];
                for (l, x) in lanes.iter_mut().enumerate() {
                    *x = draw(w * WARP + l, 3, -1000, 1000);
                }
                let sum: i32 = lanes.iter().sum();
                lanes[WARP - 1] -= sum.rem_euclid(32);
                let c = 2 * draw(w * WARP, 4, -500, 500) + 1;
                aux[w * WARP..(w + 1) * WARP].fill(c);
            }
        }
        Experiment::Scan => {
            // input = x* + d, aux = b = exclusive scan of x*: then
            // x ↦ scan(x) − b maps x* + d to x* + L·d (L the scan), and with
            // d non-zero only in lanes 30 and 31, lane 31 drifts by d₃₀ per
            // iteration and every other lane stays put: bounded, exact,
            // and the result tells the iteration count.
            for w in 0..threads / WARP {
                let mut prefix = 0i32;
                for l in 0..WARP {
                    let i = w * WARP + l;
                    let star = draw(i, 5, -100, 100);
                    aux[i] = prefix;
                    prefix += star;
                    let d = match l {
                        30 => {
                            let m = draw(i, 6, 1, 4);
                            if draw(i, 7, 0, 1) == 0 { m } else { -m }
                        }
                        31 => draw(i, 8, -4, 4),
                        _ => 0,
                    };
                    input[i] = star + d;
                }
            }
        }
        Experiment::Transpose => {
            for (i, x) in input.iter_mut().enumerate() {
                *x = draw(i, 9, -(1 << 20), 1 << 20);
            }
        }
    }
    (input, aux)
}

/// The inputs the bench uses for `experiment` with `threads` threads
/// (`threads` a multiple of 32): `input` has `threads × words` elements
/// (the transpose: warp `w`'s word `32·j + lane` at `w·224 + 32·j + lane`),
/// `aux` one per thread. Small integers, the same for every type.
pub fn bench_inputs<T: ShuffleElement>(experiment: Experiment, threads: usize, seed: u64) -> (Vec<T>, Vec<T>) {
    let (input, aux) = integer_inputs(experiment, threads, seed);
    (input.into_iter().map(T::from_i32).collect(), aux.into_iter().map(T::from_i32).collect())
}

// ---------------------------------------------------------------------------
// CPU emulation.

/// The lane pattern of slide 19's bitonic network: (xor mask, the two bits
/// of the lane whose xor is the direction; `None` for a single bit).
const BITONIC: [(usize, u32, Option<u32>); 15] = [
    (0x01, 1, Some(0)),
    (0x02, 2, Some(1)),
    (0x01, 2, Some(0)),
    (0x04, 3, Some(2)),
    (0x02, 3, Some(1)),
    (0x01, 3, Some(0)),
    (0x08, 4, Some(3)),
    (0x04, 4, Some(2)),
    (0x02, 4, Some(1)),
    (0x01, 4, Some(0)),
    (0x10, 4, None),
    (0x08, 3, None),
    (0x04, 2, None),
    (0x02, 1, None),
    (0x01, 0, None),
];

/// Slide 19's bitonic sort of one warp's 32 keys, as the kernel runs it.
pub fn bitonic_sort_warp<T: ShuffleElement>(x: &mut [T; WARP]) {
    for &(mask, a, b) in &BITONIC {
        let old = *x;
        for (l, v) in x.iter_mut().enumerate() {
            let bit = |k: u32| ((l >> k) & 1) != 0;
            let dir = bit(a) ^ b.is_some_and(bit);
            let (mine, theirs) = (old[l], old[l ^ mask]);
            *v = if (mine < theirs) == dir { theirs } else { mine };
        }
    }
}

/// One iteration of `experiment` on one warp: `x` the warp's values (32, or
/// 224 in the coalesced layout for the transpose), `aux` its 32 constants.
fn step_warp<T: ShuffleElement>(experiment: Experiment, x: &[T], aux: &[T], out: &mut [T]) {
    match experiment {
        Experiment::Neighbour => {
            for l in 0..WARP {
                out[l] = x[(l + 1) % WARP];
            }
        }
        Experiment::Broadcast => {
            let y = x[0];
            for l in 0..WARP {
                out[l] = x[l].plus(aux[l].minus(y.plus(y)));
            }
        }
        Experiment::Reduce => {
            let mut s: [T; WARP] = x.try_into().expect("one warp");
            for mask in [16, 8, 4, 2, 1] {
                let old = s;
                for l in 0..WARP {
                    s[l] = old[l].plus(old[l ^ mask]);
                }
            }
            for l in 0..WARP {
                let m = s[l].div32();
                out[l] = x[l].plus(aux[l].minus(m.plus(m)));
            }
        }
        Experiment::Scan => {
            let mut s: [T; WARP] = x.try_into().expect("one warp");
            for offset in [1, 2, 4, 8, 16] {
                let old = s;
                for l in offset..WARP {
                    s[l] = old[l].plus(old[l - offset]);
                }
            }
            for l in 0..WARP {
                out[l] = s[l].minus(aux[l]);
            }
        }
        Experiment::Sort => {
            let mut s: [T; WARP] = x.try_into().expect("one warp");
            bitonic_sort_warp(&mut s);
            for l in 0..WARP {
                out[l] = s[l].negated();
            }
        }
        Experiment::Transpose => {
            // Lane L's register k receives word 7L + k, which lies in lane
            // (7L + k) % 32, register (7L + k) / 32.
            for lane in 0..WARP {
                for k in 0..TRANSPOSE_WORDS {
                    let w = TRANSPOSE_WORDS * lane + k;
                    out[k * WARP + lane] = x[(w / WARP) * WARP + w % WARP];
                }
            }
        }
    }
}

fn same_bits<T: ShuffleElement>(a: &[T], b: &[T]) -> bool {
    a.iter().zip(b).all(|(x, y)| x.bits() == y.bits())
}

/// One warp's state after `reps` iterations. The iterations are emulated
/// one by one until the state repeats (Brent's cycle detection, exact on
/// bits), after which the period skips the rest.
fn iterate_warp<T: ShuffleElement>(experiment: Experiment, start: &[T], aux: &[T], reps: u64) -> Vec<T> {
    let mut cur = start.to_vec();
    let mut next = cur.clone();
    let mut saved = cur.clone();
    let (mut saved_at, mut span, mut i) = (0u64, 1u64, 0u64);
    while i < reps {
        step_warp(experiment, &cur, aux, &mut next);
        std::mem::swap(&mut cur, &mut next);
        i += 1;
        if same_bits(&cur, &saved) {
            // state(i) = state(saved_at): the states repeat with this period.
            let period = i - saved_at;
            for _ in 0..(reps - i) % period {
                step_warp(experiment, &cur, aux, &mut next);
                std::mem::swap(&mut cur, &mut next);
            }
            return cur;
        }
        if i - saved_at == span {
            saved.copy_from_slice(&cur);
            saved_at = i;
            span *= 2;
        }
    }
    cur
}

/// What `reps` iterations of `experiment` produce from `input` and `aux` —
/// the same operations in the same order and type as the kernels (so floats
/// round alike, and every variant must match bit for bit). Layout as
/// [`bench_inputs`]: `input.len()` a multiple of 32 × words, `aux` one
/// value per thread.
pub fn cpu_expected<T: ShuffleElement>(experiment: Experiment, input: &[T], aux: &[T], reps: u32) -> Result<Vec<T>> {
    let per_warp = WARP * experiment.words();
    ensure(input.len().is_multiple_of(per_warp), || {
        format!("{} inputs: not a whole number of warps of {per_warp}", input.len())
    })?;
    ensure(aux.len() * experiment.words() == input.len(), || {
        format!("{} aux values for {} threads", aux.len(), input.len() / experiment.words())
    })?;
    let mut out = vec![T::default(); input.len()];
    out.par_chunks_mut(per_warp).zip(input.par_chunks(per_warp)).zip(aux.par_chunks(WARP)).for_each(|((o, x), a)| {
        o.copy_from_slice(&iterate_warp(experiment, x, a, u64::from(reps)));
    });
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The emulation without cycle detection.
    fn naive<T: ShuffleElement>(experiment: Experiment, input: &[T], aux: &[T], reps: u32) -> Vec<T> {
        let per_warp = WARP * experiment.words();
        let mut out = Vec::new();
        for (x, a) in input.chunks(per_warp).zip(aux.chunks(WARP)) {
            let mut cur = x.to_vec();
            let mut next = cur.clone();
            for _ in 0..reps {
                step_warp(experiment, &cur, a, &mut next);
                std::mem::swap(&mut cur, &mut next);
            }
            out.extend(cur);
        }
        out
    }

    fn as_f64<T: ShuffleElement>(v: &[T]) -> Vec<f64> {
        v.iter().map(|x| x.to_f64()).collect()
    }

    #[test]
    fn grid_is_demouths_on_a_k20() {
        let cfg = ShuffleBenchConfig::default();
        assert_eq!(cfg.grid_for(13, 2048, Experiment::Scan), Grid { blocks: 26, threads_per_block: 1024 });
        assert_eq!(cfg.grid_for(13, 2048, Experiment::Transpose), Grid { blocks: 104, threads_per_block: 256 });
        assert_eq!(cfg.grid_for(132, 2048, Experiment::Sort).blocks, 264);
        assert_eq!(cfg.grid_for(84, 1536, Experiment::Reduce).blocks, 84);
        let one = ShuffleBenchConfig { blocks_per_sm: Some(1), ..cfg };
        assert_eq!(one.grid_for(13, 2048, Experiment::Transpose).blocks, 13);
    }

    #[test]
    fn names_round_trip() {
        for e in Experiment::ALL {
            assert_eq!(Experiment::from_name(e.name()), Some(e));
        }
        assert_eq!(Experiment::from_name("Neighbor"), Some(Experiment::Neighbour));
        for t in ElemType::ALL {
            assert_eq!(ElemType::from_name(t.name()), Some(t));
        }
        assert_eq!(Experiment::Scan.variants(ElemType::F32).len(), 5);
        assert_eq!(Experiment::Scan.variants(ElemType::F64).len(), 4);
        assert_eq!(Experiment::Sort.variants(ElemType::I32).len(), 4);
    }

    #[test]
    fn sources_are_one_per_type_with_the_launch_constants() {
        let s = sources();
        assert_eq!(s.len(), 3);
        assert!(s.iter().all(|s| s.name() == "shuffle_bench.cu"));
        let code = include_str!("../kernels/shuffle_bench.cu");
        for e in Experiment::ALL {
            for v in Variant::ALL {
                let kernel = format!("{}_{}", e.name(), v.suffix());
                let defined = match (e, v) {
                    (Experiment::Scan, Variant::ShflPredicate) => {
                        code.contains("void __launch_bounds__(SHFL_BLOCK, SHFL_MINB) scan_shfl_pred(")
                    }
                    (_, Variant::ShflPredicate) => false,
                    (Experiment::Transpose, _) => {
                        code.contains(&format!("{kernel},")) || code.contains(&format!("{kernel}("))
                    }
                    _ => code.contains(&format!("EXPERIMENT({}, ", e.name())),
                };
                assert_eq!(defined, e.variants(ElemType::F32).contains(&v), "{kernel}");
            }
        }
    }

    #[test]
    fn bitonic_network_sorts_ascending() {
        for seed in 0..200u64 {
            let mut x = [0i32; WARP];
            for (l, v) in x.iter_mut().enumerate() {
                // Few distinct values: ties included.
                *v = (mix(seed * 64 + l as u64) % if seed % 2 == 0 { 1000 } else { 5 }) as i32 - 500;
            }
            let mut want = x;
            want.sort();
            bitonic_sort_warp(&mut x);
            assert_eq!(x, want, "seed {seed}");
        }
        let mut f = [0f64; WARP];
        for (l, v) in f.iter_mut().enumerate() {
            *v = ((l * 13) % 32) as f64 * -0.5;
        }
        let mut want = f;
        want.sort_by(f64::total_cmp);
        bitonic_sort_warp(&mut f);
        assert_eq!(f, want);
    }

    #[test]
    fn transpose_gives_each_lane_its_structure() {
        // Word ids as values: register j of lane l holds word 32j + l.
        let x: Vec<i32> = (0..(WARP * TRANSPOSE_WORDS) as i32).collect();
        let mut out = vec![0; x.len()];
        step_warp(Experiment::Transpose, &x, &[0; WARP], &mut out);
        for lane in 0..WARP {
            for j in 0..TRANSPOSE_WORDS {
                assert_eq!(out[j * WARP + lane], (TRANSPOSE_WORDS * lane + j) as i32);
            }
        }
    }

    /// The kernel's shuffle transpose, step by step as shuffle_bench.cu
    /// writes it (renaming, three conditional rotations, seven shuffles),
    /// gives the same permutation as the reference.
    #[test]
    fn shuffle_transpose_algorithm_matches_the_reference() {
        const W: usize = TRANSPOSE_WORDS;
        let x: Vec<i32> = (0..(WARP * W) as i32).map(|v| v * 3 + 1).collect();
        // regs[lane][j]
        let regs: Vec<[i32; W]> = (0..WARP).map(|l| std::array::from_fn(|j| x[j * WARP + l])).collect();
        // In place along the rotation's cycle, as rotate_right_if.
        let rotate_right_if = |u: &mut [i32; W], c: usize, p: bool| {
            let first = u[0];
            let mut k = 0;
            for _ in 0..W - 1 {
                let from = (k + W - c) % W;
                u[k] = if p { u[from] } else { u[k] };
                k = from;
            }
            u[k] = if p { first } else { u[k] };
        };
        let offered: Vec<[i32; W]> = (0..WARP)
            .map(|lane| {
                let rot = lane % W;
                let mut u: [i32; W] = std::array::from_fn(|k| regs[lane][(2 * k) % W]);
                rotate_right_if(&mut u, 1, rot & 1 != 0);
                rotate_right_if(&mut u, 2, rot & 2 != 0);
                rotate_right_if(&mut u, 4, rot & 4 != 0);
                u
            })
            .collect();
        let mut got = vec![0; x.len()];
        for lane in 0..WARP {
            for k in 0..W {
                // x[k] = __shfl_sync(FULL, u[k], (7 * lane + k) & 31)
                got[k * WARP + lane] = offered[(W * lane + k) & 31][k];
            }
        }
        let mut want = vec![0; x.len()];
        step_warp(Experiment::Transpose, &x, &[0; WARP], &mut want);
        assert_eq!(got, want);
    }

    #[test]
    fn cycle_detection_matches_plain_iteration() {
        for e in Experiment::ALL {
            let (input, aux) = bench_inputs::<f32>(e, 3 * WARP, 7);
            for reps in [0, 1, 2, 3, 7, 31, 32, 33, 64, 100, 223, 224, 500] {
                let fast = cpu_expected(e, &input, &aux, reps).unwrap();
                assert!(same_bits(&fast, &naive(e, &input, &aux, reps)), "{e:?} reps {reps}");
            }
            let (input, aux) = bench_inputs::<i32>(e, 2 * WARP, 8);
            for reps in [1, 5, 96, 333] {
                let fast = cpu_expected(e, &input, &aux, reps).unwrap();
                assert_eq!(fast, naive(e, &input, &aux, reps), "{e:?} reps {reps}");
            }
        }
    }

    /// Floats never round: fp32, fp64 and int32 give the same numbers after
    /// every iteration count, so the checks do not depend on rounding.
    #[test]
    fn inputs_keep_every_type_exact() {
        for e in Experiment::ALL {
            for reps in [1, 2, 7, 64, 4096, 4097] {
                let threads = 4 * WARP;
                let (a, aa) = bench_inputs::<f32>(e, threads, 3);
                let (b, ba) = bench_inputs::<f64>(e, threads, 3);
                let (c, ca) = bench_inputs::<i32>(e, threads, 3);
                let fa = as_f64(&cpu_expected(e, &a, &aa, reps).unwrap());
                let fb = as_f64(&cpu_expected(e, &b, &ba, reps).unwrap());
                let fc = as_f64(&cpu_expected(e, &c, &ca, reps).unwrap());
                assert_eq!(fa, fb, "{e:?} reps {reps}: fp32 vs fp64");
                assert_eq!(fb, fc, "{e:?} reps {reps}: fp64 vs int32");
                assert!(fa.iter().all(|v| v.abs() < 1e7), "{e:?}: values stay small");
            }
        }
    }

    /// One more or one fewer iteration changes the output of every warp, so
    /// a kernel that loses or repeats an iteration fails the check.
    #[test]
    fn iteration_count_is_visible() {
        for e in Experiment::ALL {
            let (input, aux) = bench_inputs::<f32>(e, 8 * WARP, 1);
            let per_warp = WARP * e.words();
            for (r1, r2) in [(4096, 4097), (4095, 4096), (1, 2), (7, 8), (0, 1)] {
                let a = cpu_expected(e, &input, &aux, r1).unwrap();
                let b = cpu_expected(e, &input, &aux, r2).unwrap();
                for (w, (x, y)) in a.chunks(per_warp).zip(b.chunks(per_warp)).enumerate() {
                    assert!(!same_bits(x, y), "{e:?} warp {w}: {r1} and {r2} repetitions agree");
                }
            }
        }
        // The neighbour exchange has period 32 (broadcast and reduce 2):
        // 4096 repetitions give back the input, which is why the bench also
        // checks 1 and 7.
        let (input, aux) = bench_inputs::<i32>(Experiment::Neighbour, WARP, 1);
        assert_eq!(cpu_expected(Experiment::Neighbour, &input, &aux, 4096).unwrap(), input);
        let one = cpu_expected(Experiment::Neighbour, &input, &aux, 7).unwrap();
        for l in 0..WARP {
            assert_eq!(one[l], input[(l + 7) % WARP]);
        }
    }

    /// A single wrong value part-way through (what a racy exchange produces)
    /// is still visible after thousands more iterations: the experiments
    /// do not forget errors.
    #[test]
    fn an_error_at_any_iteration_survives_to_the_end() {
        fn check<T: ShuffleElement>() {
            for e in Experiment::ALL {
                let (input, aux) = bench_inputs::<T>(e, WARP, 11);
                let want = naive(e, &input, &aux, 1000);
                for at in [1, 10, 500, 999] {
                    for lane in [0, 5, 31] {
                        let mut cur = input.clone();
                        let mut next = cur.clone();
                        for i in 0..1000 {
                            step_warp(e, &cur, &aux, &mut next);
                            std::mem::swap(&mut cur, &mut next);
                            if i + 1 == at {
                                // A stale value: lane's value replaced by its
                                // neighbour's.
                                cur[lane] = cur[(lane + 1) % WARP];
                            }
                        }
                        assert!(!same_bits(&cur, &want), "{:?} {e:?}: error at {at} in lane {lane} vanished", T::TYPE);
                    }
                }
            }
        }
        check::<f32>();
        check::<f64>();
        check::<i32>();
    }

    #[test]
    fn closed_forms() {
        let reps = 4096u32;
        // Broadcast and reduce: period 2, so odd counts give
        // x + c − 2·(lane 0 / the mean) and even ones the input back.
        for e in [Experiment::Broadcast, Experiment::Reduce] {
            let (input, aux) = bench_inputs::<i32>(e, WARP, 2);
            let y = if e == Experiment::Broadcast { input[0] } else { input.iter().sum::<i32>() / 32 };
            assert!(aux.iter().all(|&c| c == aux[0] && c % 2 != 0));
            for r in [1, 7, 4097] {
                let out = cpu_expected(e, &input, &aux, r).unwrap();
                for l in 0..WARP {
                    assert_eq!(out[l], input[l] + aux[l] - 2 * y, "{e:?}");
                }
            }
            assert_eq!(cpu_expected(e, &input, &aux, reps).unwrap(), input, "{e:?}");
        }
        // Scan: lane 31 drifts by d30 per iteration, the others stay.
        let (input, aux) = bench_inputs::<i32>(Experiment::Scan, WARP, 2);
        let star30 = aux[31] - aux[30];
        let d30 = input[30] - star30;
        assert_ne!(d30, 0);
        let out = cpu_expected(Experiment::Scan, &input, &aux, reps).unwrap();
        assert_eq!(&out[..31], &input[..31]);
        assert_eq!(out[31], input[31] + reps as i32 * d30);
        // Sort: even counts give the keys in descending order.
        let (input, aux) = bench_inputs::<i32>(Experiment::Sort, WARP, 2);
        let mut desc = input.clone();
        desc.sort_by(|a, b| b.cmp(a));
        assert_eq!(cpu_expected(Experiment::Sort, &input, &aux, reps).unwrap(), desc);
    }

    #[test]
    fn mismatches_are_counted_and_placed() {
        let want = vec![1.0f32; 2 * WARP * TRANSPOSE_WORDS];
        let mut got = want.clone();
        got[WARP * TRANSPOSE_WORDS + 3 * WARP + 5] = f32::NAN;
        got[WARP * TRANSPOSE_WORDS + 3 * WARP + 6] = -1.0;
        let (n, first) = count_mismatches(Experiment::Transpose, &got, &want);
        assert_eq!(n, 2);
        assert!(first.unwrap().contains("warp 1 lane 5 word 3"));
        assert_eq!(count_mismatches(Experiment::Transpose, &want, &want), (0, None));
    }

    #[test]
    fn invalid_configurations_are_refused() {
        let ok = ShuffleBenchConfig::default();
        assert!(ok.validate().is_ok());
        assert!(ShuffleBenchConfig { reps: 0, ..ok.clone() }.validate().is_err());
        assert!(ShuffleBenchConfig { timed_runs: 0, ..ok.clone() }.validate().is_err());
        assert!(ShuffleBenchConfig { blocks_per_sm: Some(0), ..ok.clone() }.validate().is_err());
        assert!(cpu_expected(Experiment::Scan, &[0i32; 31], &[0; 31], 1).is_err());
        assert!(cpu_expected(Experiment::Transpose, &[0i32; 224], &[0; 224], 1).is_err());
    }

    #[test]
    fn median_of_odd_and_even_counts() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), 2.5);
    }
}
