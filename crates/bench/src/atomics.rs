//! The workloads of `warpmc bench atomics`, and their timing.
//!
//! - [`CellBox`]: the experiment of Westphal, "Voting and Shuffling to
//!   Optimize Atomic Operations" (NVIDIA, 2015). A box of `edge³` cells with
//!   `per_cell` particles each; the key of a particle is its cell's index
//!   `x + edge·(y + edge·z)`, its value a particle quantity. Three key
//!   orders: sorted by cell; partially sorted (the sorted particles
//!   displaced a little, keys recomputed, order kept); random (shuffled).
//! - [`Flame`]: a fractal-flame-like image: points of a chaotic map (a
//!   Sierpinski-like iterated function system, many chains run side by side
//!   as a GPU renderer runs them, written step by step), the pixel index as
//!   key, RGB plus a hit count as value (`Vector<f32, 4>`). Points off the
//!   screen get an out-of-range key, which the kernels ignore.
//! - [`small_keys`]: keys into few bins (a 256-bin histogram), where the
//!   bins fit in shared memory.
//!
//! [`run_atomics_bench`] runs them all, every strategy, each result checked
//! against the CPU's sums (`warpmc_testkit::atomics::Reference`).

use rayon::prelude::*;
use serde::Serialize;
use warpmc_gpu::DeviceBuffer;

use warpmc_prims::atomics::{AtomicAdd, AtomicScalar, AtomicStrategy, AtomicValue, KeyOrder, Vector};
use warpmc_prims::{AtomicsConfig, CpuPrims, CudaPrims, Element, Primitives};

use warpmc_testkit::atomics::Reference;

use crate::error::{BenchError, Result, ensure};
use crate::timing::median;

/// A small, fast, seedable generator (SplitMix64) for the inputs.
#[derive(Clone, Debug)]
struct Rng(u64);

impl Rng {
    fn new(seed: u64, stream: u64) -> Self {
        let mut r = Rng(seed ^ stream.wrapping_mul(0xd1b5_4a32_d192_ed03));
        r.next_u64();
        r
    }

    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in [0, 1).
    fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// Uniform in 0..n (n > 0), with the negligible bias of a 64-bit modulo.
    fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n
    }
}

/// Shuffles `xs` (Fisher–Yates).
fn shuffle<T>(xs: &mut [T], rng: &mut Rng) {
    for i in (1..xs.len()).rev() {
        let j = rng.below(i as u64 + 1) as usize;
        xs.swap(i, j);
    }
}

/// Westphal's particle box.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct CellBox {
    /// Cells along each edge (Westphal: 100).
    pub edge: u32,
    /// Particles per cell (Westphal: 10).
    pub per_cell: u32,
    /// For [`KeyOrder::PartiallySorted`]: the largest displacement of a
    /// particle along each axis, in cell widths (uniform in ±this).
    pub displacement: f64,
}

impl Default for CellBox {
    fn default() -> Self {
        CellBox { edge: 100, per_cell: 10, displacement: 0.25 }
    }
}

impl CellBox {
    /// Cells (`edge³`): the bins.
    pub fn nbins(&self) -> usize {
        (self.edge as usize).pow(3)
    }

    /// Particles.
    pub fn n(&self) -> usize {
        self.nbins() * self.per_cell as usize
    }

    /// Every particle's cell index, in `order` ([`KeyOrder::Unknown`] gives
    /// the sorted keys).
    ///
    /// Partially sorted: the particles, sorted by cell and placed uniformly
    /// inside their cells, each move by up to ±`displacement` cell widths
    /// along each axis (periodic box); their keys are recomputed and their
    /// order kept — as in a particle code some steps after a sort.
    ///
    /// Warps of 32 consecutive keys of the default box (100³ cells, 10 per
    /// cell) hold on average: sorted, 4 distinct keys in 4 runs;
    /// partially sorted with displacement 0.25 (a third of the particles
    /// change cells), 10.7 distinct keys in 18.9 runs; random, 32 and 32.
    pub fn keys(&self, order: KeyOrder, seed: u64) -> Result<Vec<u32>> {
        ensure(self.edge >= 1 && self.per_cell >= 1, || "the cell box needs at least one cell and particle".into())?;
        ensure(self.nbins() <= u32::MAX as usize && self.n() <= u32::MAX as usize, || {
            format!("{}³ cells × {} particles: too many for u32 keys", self.edge, self.per_cell)
        })?;
        ensure(self.displacement.is_finite() && self.displacement >= 0.0, || {
            format!("displacement {} must be finite and not negative", self.displacement)
        })?;
        let per = self.per_cell as usize;
        let sorted = || (0..self.n()).map(|i| (i / per) as u32).collect::<Vec<u32>>();
        Ok(match order {
            KeyOrder::Sorted | KeyOrder::Unknown => sorted(),
            KeyOrder::Random => {
                let mut k = sorted();
                shuffle(&mut k, &mut Rng::new(seed, 1));
                k
            }
            KeyOrder::PartiallySorted => {
                let e = self.edge as usize;
                let edge = f64::from(self.edge);
                let d = self.displacement;
                // One generator per cell: the same keys for any thread count.
                let mut keys = vec![0u32; self.n()];
                keys.par_chunks_mut(per).enumerate().for_each(|(cell, out)| {
                    let mut rng = Rng::new(seed, 2 + cell as u64);
                    let home = [(cell % e) as f64, ((cell / e) % e) as f64, (cell / (e * e)) as f64];
                    for k in out.iter_mut() {
                        let mut idx = [0usize; 3];
                        for a in 0..3 {
                            let p = home[a] + rng.unit() + d * (2.0 * rng.unit() - 1.0);
                            let wrapped = p.rem_euclid(edge);
                            idx[a] = (wrapped as usize).min(e - 1);
                        }
                        *k = (idx[0] + e * (idx[1] + e * idx[2])) as u32;
                    }
                });
                keys
            }
        })
    }
}

/// `n` particle quantities: uniform in [−1, 1) for floats (a velocity
/// component), in 0..1000 for integers.
pub fn particle_values<S: Element>(n: usize, seed: u64) -> Vec<S> {
    let mut rng = Rng::new(seed, 3);
    (0..n)
        .map(|_| if S::FLOAT { S::from_f64(2.0 * rng.unit() - 1.0) } else { S::from_f64(rng.below(1000) as f64) })
        .collect()
}

/// Keys into `nbins` bins, uniform; sorted for [`KeyOrder::Sorted`] (and
/// for partially sorted: sorted, then each key moved to a random place at
/// most 32 positions away with probability 1/4).
pub fn small_keys(n: usize, nbins: u32, order: KeyOrder, seed: u64) -> Vec<u32> {
    let mut rng = Rng::new(seed, 4);
    let mut keys: Vec<u32> = (0..n).map(|_| rng.below(u64::from(nbins.max(1))) as u32).collect();
    if matches!(order, KeyOrder::Sorted | KeyOrder::PartiallySorted) {
        keys.sort_unstable();
    }
    if order == KeyOrder::PartiallySorted {
        for i in 0..n {
            if rng.below(4) == 0 {
                let j = (i + rng.below(32) as usize).min(n - 1);
                keys.swap(i, j);
            }
        }
    }
    keys
}

/// A fractal-flame-like image.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Flame {
    /// Pixels across.
    pub width: u32,
    /// Pixels down.
    pub height: u32,
    /// Points plotted.
    pub points: usize,
}

impl Default for Flame {
    fn default() -> Self {
        Flame { width: 1920, height: 1080, points: 1 << 24 }
    }
}

/// Chains iterated side by side: point `s·CHAINS + c` is step `s` of chain
/// `c`, as a GPU renderer with one chain per thread writes them.
const FLAME_CHAINS: usize = 16384;
/// Steps of each chain before its points are plotted (the chaos game's
/// transient).
const FLAME_BURN_IN: usize = 20;

/// The maps: p ↦ ½·R(θ)·p + ½·v, contractions towards the corners v of a
/// triangle, slightly rotated, with the colour each pulls towards.
const FLAME_MAPS: [(f64, [f64; 2], f64); 3] =
    [(0.12, [0.0, 1.0], 0.0), (-0.08, [-0.866, -0.5], 0.5), (0.05, [0.866, -0.5], 1.0)];

impl Flame {
    /// Pixels: the bins.
    pub fn nbins(&self) -> usize {
        self.width as usize * self.height as usize
    }

    /// The points' pixel indices (`y·width + x`; `u32::MAX` for points off
    /// the screen, which is a little smaller than the attractor) and values
    /// (RGB from a palette of the point's colour coordinate, then 1: the
    /// hit count).
    pub fn generate(&self, seed: u64) -> Result<(Vec<u32>, Vec<Vector<f32, 4>>)> {
        ensure(self.width >= 1 && self.height >= 1, || "the flame image needs at least one pixel".into())?;
        ensure(self.nbins() < u32::MAX as usize, || format!("{}x{} pixels: too many", self.width, self.height))?;
        let n = self.points;
        let mut keys = vec![0u32; n];
        let mut values = vec![Vector::<f32, 4>::default(); n];
        // Chain state: position, colour coordinate, generator.
        let mut chains: Vec<([f64; 2], f64, Rng)> = (0..FLAME_CHAINS.min(n.max(1)))
            .map(|c| {
                let mut rng = Rng::new(seed, 5 + c as u64);
                let mut p = [2.0 * rng.unit() - 1.0, 2.0 * rng.unit() - 1.0];
                let mut colour = rng.unit();
                for _ in 0..FLAME_BURN_IN {
                    flame_step(&mut p, &mut colour, &mut rng);
                }
                (p, colour, rng)
            })
            .collect();
        let (w, h) = (f64::from(self.width), f64::from(self.height));
        let width = self.width;
        // The triangle spans y in [-0.5, 1]: scaled so that its top corner
        // leaves the screen.
        let scale = h / 1.4;
        let chunk = chains.len();
        for (kc, vc) in keys.chunks_mut(chunk).zip(values.chunks_mut(chunk)) {
            kc.par_iter_mut().zip(vc.par_iter_mut()).zip(chains.par_iter_mut()).for_each(|((k, v), state)| {
                let (p, colour, rng) = state;
                flame_step(p, colour, rng);
                let px = (w / 2.0 + p[0] * scale).floor();
                let py = (h * 0.62 - p[1] * scale).floor();
                *k =
                    if px >= 0.0 && px < w && py >= 0.0 && py < h { (py as u32) * width + px as u32 } else { u32::MAX };
                let c = *colour;
                *v = Vector([c as f32, (1.0 - (2.0 * c - 1.0).abs()) as f32, (1.0 - c) as f32, 1.0]);
            });
        }
        Ok((keys, values))
    }
}

/// One step of the chaos game: a random map, applied to the point and its
/// colour coordinate.
fn flame_step(p: &mut [f64; 2], colour: &mut f64, rng: &mut Rng) {
    let (theta, v, c) = FLAME_MAPS[rng.below(FLAME_MAPS.len() as u64) as usize];
    let (s, co) = theta.sin_cos();
    let (x, y) = (p[0], p[1]);
    *p = [0.5 * (co * x - s * y + v[0]), 0.5 * (s * x + co * y + v[1])];
    *colour = 0.5 * (*colour + c);
}

/// One strategy's timing on one workload.
#[derive(Clone, Debug, Serialize)]
pub struct Timing {
    /// The strategy asked for.
    pub strategy: AtomicStrategy,
    /// The strategy that ran (what `Auto` picked).
    pub ran: AtomicStrategy,
    /// Device time of one call, in ms: the median over the samples.
    pub ms: f64,
    /// `None` when the result matched the CPU reference; what differed
    /// otherwise.
    pub mismatch: Option<String>,
}

/// A strategy left out of a workload, and why.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SkippedStrategy {
    /// The strategy.
    pub strategy: AtomicStrategy,
    /// Why it did not run.
    pub why: String,
}

/// Strategies left out of a workload.
pub type Skipped = Vec<SkippedStrategy>;

/// One workload's timings.
#[derive(Clone, Debug, Serialize)]
pub struct WorkloadResult {
    /// `cells`, `flame` or `small`.
    pub workload: String,
    /// The key order.
    pub order: KeyOrder,
    /// The value type (`f32`, `f64`, `f32x4`, `count` for histograms).
    pub value: String,
    /// The atomic add.
    pub add: AtomicAdd,
    /// Elements.
    pub n: usize,
    /// Bins.
    pub nbins: usize,
    /// Strategies left out, and why.
    pub skipped: Skipped,
    /// One per strategy run, in the order asked.
    pub timings: Vec<Timing>,
}

impl WorkloadResult {
    /// The fastest concrete strategy.
    pub fn best(&self) -> Option<&Timing> {
        self.timings.iter().filter(|t| t.strategy != AtomicStrategy::Auto).min_by(|a, b| a.ms.total_cmp(&b.ms))
    }

    /// The plain-atomics timing.
    pub fn plain(&self) -> Option<&Timing> {
        self.timings.iter().find(|t| t.strategy == AtomicStrategy::Plain)
    }
}

/// Which strategies to time on one input, and how.
#[derive(Clone, Copy, Debug)]
pub struct StrategyRuns<'a> {
    /// The strategies, in order.
    pub strategies: &'a [AtomicStrategy],
    /// The hint given to `Auto` ([`KeyOrder::Unknown`] for none).
    pub order: KeyOrder,
    /// Hardware atomics or the compare-and-swap loop.
    pub add: AtomicAdd,
    /// Timed samples of [`CALLS_PER_SAMPLE`] calls per strategy.
    pub runs: usize,
}

/// Times the strategies of `how` on one input: per strategy one checked
/// call into zeroed bins, then `runs` timed samples of [`CALLS_PER_SAMPLE`]
/// calls each (back to back, so launch latency hides behind the previous
/// call); the median sample's time per call. Strategies whose bins do not
/// fit in shared memory are skipped.
pub fn time_reduce_by_key<V: AtomicValue>(
    p: &CudaPrims,
    keys: &DeviceBuffer<u32>,
    values: &DeviceBuffer<V>,
    reference: &Reference<V>,
    how: StrategyRuns<'_>,
) -> Result<(Vec<Timing>, Skipped)> {
    let nbins = reference.sums().len();
    let mut bins = p.gpu().alloc_zeros::<V>(nbins)?;
    time_strategies(
        p,
        how,
        &mut bins,
        |bins, config| Ok(p.reduce_by_key_dense_into(keys, values, bins, config)?),
        |got| reference.check(got).err().map(|m| m.to_string()),
    )
}

/// [`time_reduce_by_key`] for histograms, checked against `reference`
/// (exact counts).
pub fn time_histogram(
    p: &CudaPrims,
    keys: &DeviceBuffer<u32>,
    reference: &[u32],
    how: StrategyRuns<'_>,
) -> Result<(Vec<Timing>, Skipped)> {
    let nbins = reference.len();
    let mut bins = p.gpu().alloc_zeros::<u32>(nbins)?;
    time_strategies(
        p,
        how,
        &mut bins,
        |bins, config| Ok(p.histogram_into(keys, bins, config)?),
        |got| {
            let bad = got.iter().zip(reference).filter(|(g, w)| g != w).count();
            got.iter()
                .zip(reference)
                .position(|(g, w)| g != w)
                .map(|i| format!("bin {i}: {} instead of {} ({bad} bins differ)", got[i], reference[i]))
        },
    )
}

/// Calls per timed sample.
pub const CALLS_PER_SAMPLE: usize = 10;

fn time_strategies<V: AtomicValue>(
    p: &CudaPrims,
    how: StrategyRuns<'_>,
    bins: &mut DeviceBuffer<V>,
    mut call: impl FnMut(&mut DeviceBuffer<V>, AtomicsConfig) -> Result<AtomicStrategy>,
    check: impl Fn(&[V]) -> Option<String>,
) -> Result<(Vec<Timing>, Skipped)> {
    let gpu = p.gpu();
    let limit = gpu.info().max_shared_per_block_optin as usize;
    let bin_bytes = bins.len() * size_of::<V>();
    let mut timings = Vec::new();
    let mut skipped = Vec::new();
    for &strategy in how.strategies {
        if strategy.is_shared() && bin_bytes > limit {
            let why = format!("the bins take {bin_bytes} bytes, shared memory {limit}");
            skipped.push(SkippedStrategy { strategy, why });
            continue;
        }
        let config = AtomicsConfig { strategy, order: how.order, add: how.add };
        // The checked call also compiles the module and warms the caches.
        gpu.memset_bytes(bins, 0)?;
        let ran = call(bins, config)?;
        let mismatch = check(&gpu.download(bins)?);
        // Calls back to back, so that the host's launch latency overlaps the
        // previous kernel; the bins keep accumulating, which costs the same.
        let mut times = Vec::with_capacity(how.runs.max(1));
        for _ in 0..how.runs.max(1) {
            let timer = gpu.start_timer()?;
            for _ in 0..CALLS_PER_SAMPLE {
                call(bins, config)?;
            }
            times.push(timer.stop_ms()? / CALLS_PER_SAMPLE as f64);
        }
        timings.push(Timing { strategy, ran, ms: median(&mut times), mismatch });
    }
    Ok((timings, skipped))
}

/// The value types of the cell-box workloads.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum CellValue {
    /// `f32`, hardware atomics.
    F32,
    /// `f64`, hardware atomics.
    F64,
    /// `f64`, compare-and-swap loop (the double add Westphal measured).
    F64Cas,
}

impl CellValue {
    /// `f32`, `f64`, `f64-cas`.
    pub fn name(self) -> &'static str {
        match self {
            CellValue::F32 => "f32",
            CellValue::F64 => "f64",
            CellValue::F64Cas => "f64-cas",
        }
    }
}

impl std::str::FromStr for CellValue {
    type Err = BenchError;

    /// The value type called `s` (see [`CellValue::name`]).
    fn from_str(s: &str) -> Result<Self> {
        [CellValue::F32, CellValue::F64, CellValue::F64Cas]
            .into_iter()
            .find(|v| v.name() == s)
            .ok_or_else(|| BenchError::Invalid(format!("unknown value type '{s}' (f32, f64 or f64-cas)")))
    }
}

/// The small-bins workload: a histogram of `n` keys into `nbins` bins (few
/// enough to fit in shared memory), keys from [`small_keys`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct SmallHistogram {
    /// Keys.
    pub n: usize,
    /// Bins.
    pub nbins: u32,
}

/// What `warpmc bench atomics` runs.
#[derive(Clone, Debug)]
pub struct AtomicsBenchConfig {
    /// The particle box (`None`: skip).
    pub cells: Option<CellBox>,
    /// Key orders of the cell box.
    pub orders: Vec<KeyOrder>,
    /// Value types of the cell box.
    pub cell_values: Vec<CellValue>,
    /// The flame image (`None`: skip).
    pub flame: Option<Flame>,
    /// The small-bins histogram (`None`: skip).
    pub small: Option<SmallHistogram>,
    /// Key orders of the small-bins histogram.
    pub small_orders: Vec<KeyOrder>,
    /// Strategies to time (plain first, so speed-ups can refer to it).
    pub strategies: Vec<AtomicStrategy>,
    /// Give `Auto` the true key order as a hint (otherwise none).
    pub hint: bool,
    /// Timed calls per strategy.
    pub runs: usize,
    /// Seed of the inputs.
    pub seed: u64,
}

impl Default for AtomicsBenchConfig {
    fn default() -> Self {
        AtomicsBenchConfig {
            cells: Some(CellBox::default()),
            orders: vec![KeyOrder::Sorted, KeyOrder::PartiallySorted, KeyOrder::Random],
            cell_values: vec![CellValue::F32, CellValue::F64, CellValue::F64Cas],
            flame: Some(Flame::default()),
            small: Some(SmallHistogram { n: 1 << 24, nbins: 256 }),
            small_orders: vec![KeyOrder::Random, KeyOrder::Sorted],
            strategies: AtomicStrategy::CONCRETE.into_iter().chain([AtomicStrategy::Auto]).collect(),
            hint: false,
            runs: 20,
            seed: 1,
        }
    }
}

/// Runs every workload of `cfg`, handing each result to `report` as soon as
/// it is measured (the first error, of the bench or of `report`, stops it).
pub fn run_atomics_bench<E: From<BenchError>>(
    p: &CudaPrims,
    cfg: &AtomicsBenchConfig,
    mut report: impl FnMut(&WorkloadResult) -> std::result::Result<(), E>,
) -> std::result::Result<(), E> {
    if let Some(cells) = &cfg.cells {
        for &order in &cfg.orders {
            let keys_host = cells.keys(order, cfg.seed)?;
            let keys = p.upload(&keys_host).map_err(BenchError::from)?;
            for &kind in &cfg.cell_values {
                report(&measure_cells(p, cfg, cells, order, kind, &keys, &keys_host)?)?;
            }
        }
    }
    if let Some(flame) = &cfg.flame {
        report(&measure_flame(p, cfg, flame)?)?;
    }
    if let Some(small) = cfg.small {
        for &order in &cfg.small_orders {
            report(&measure_small(p, cfg, small, order)?)?;
        }
    }
    Ok(())
}

/// The hint `Auto` gets for keys in `order`.
fn hint(cfg: &AtomicsBenchConfig, order: KeyOrder) -> KeyOrder {
    if cfg.hint { order } else { KeyOrder::Unknown }
}

fn measure_cells(
    p: &CudaPrims,
    cfg: &AtomicsBenchConfig,
    cells: &CellBox,
    order: KeyOrder,
    kind: CellValue,
    keys: &DeviceBuffer<u32>,
    keys_host: &[u32],
) -> Result<WorkloadResult> {
    let (timings, skipped, add) = match kind {
        CellValue::F32 => {
            let (t, s) = cells_f::<f32>(p, cfg, cells, keys, keys_host, hint(cfg, order), AtomicAdd::Hardware)?;
            (t, s, AtomicAdd::Hardware)
        }
        CellValue::F64 => {
            let (t, s) = cells_f::<f64>(p, cfg, cells, keys, keys_host, hint(cfg, order), AtomicAdd::Hardware)?;
            (t, s, AtomicAdd::Hardware)
        }
        CellValue::F64Cas => {
            let (t, s) = cells_f::<f64>(p, cfg, cells, keys, keys_host, hint(cfg, order), AtomicAdd::CasLoop)?;
            (t, s, AtomicAdd::CasLoop)
        }
    };
    Ok(WorkloadResult {
        workload: "cells".into(),
        order,
        value: kind.name().into(),
        add,
        n: cells.n(),
        nbins: cells.nbins(),
        skipped,
        timings,
    })
}

fn measure_flame(p: &CudaPrims, cfg: &AtomicsBenchConfig, flame: &Flame) -> Result<WorkloadResult> {
    let (keys_host, values_host) = flame.generate(cfg.seed)?;
    let reference = Reference::new(&keys_host, &values_host, flame.nbins())?;
    let keys = p.upload(&keys_host)?;
    let values = p.upload(&values_host)?;
    let how = StrategyRuns {
        strategies: &cfg.strategies,
        order: hint(cfg, KeyOrder::Random),
        add: AtomicAdd::Hardware,
        runs: cfg.runs,
    };
    let (timings, skipped) = time_reduce_by_key(p, &keys, &values, &reference, how)?;
    Ok(WorkloadResult {
        workload: "flame".into(),
        order: KeyOrder::Random,
        value: <Vector<f32, 4>>::type_name(),
        add: AtomicAdd::Hardware,
        n: flame.points,
        nbins: flame.nbins(),
        skipped,
        timings,
    })
}

fn measure_small(
    p: &CudaPrims,
    cfg: &AtomicsBenchConfig,
    small: SmallHistogram,
    order: KeyOrder,
) -> Result<WorkloadResult> {
    let SmallHistogram { n, nbins } = small;
    let keys_host = small_keys(n, nbins, order, cfg.seed);
    let reference = CpuPrims.histogram(&keys_host, nbins as usize, AtomicsConfig::default())?;
    let keys = p.upload(&keys_host)?;
    let how =
        StrategyRuns { strategies: &cfg.strategies, order: hint(cfg, order), add: AtomicAdd::Hardware, runs: cfg.runs };
    let (timings, skipped) = time_histogram(p, &keys, &reference, how)?;
    Ok(WorkloadResult {
        workload: "small".into(),
        order,
        value: "count".into(),
        add: AtomicAdd::Hardware,
        n,
        nbins: nbins as usize,
        skipped,
        timings,
    })
}

fn cells_f<S: AtomicScalar + AtomicValue>(
    p: &CudaPrims,
    cfg: &AtomicsBenchConfig,
    cells: &CellBox,
    keys: &DeviceBuffer<u32>,
    keys_host: &[u32],
    order: KeyOrder,
    add: AtomicAdd,
) -> Result<(Vec<Timing>, Skipped)> {
    let values_host = particle_values::<S>(cells.n(), cfg.seed);
    let reference = Reference::new(keys_host, &values_host, cells.nbins())?;
    let values = p.upload(&values_host)?;
    let how = StrategyRuns { strategies: &cfg.strategies, order, add, runs: cfg.runs };
    time_reduce_by_key(p, keys, &values, &reference, how)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cell_keys_cover_every_cell_per_cell_times_when_sorted_or_shuffled() {
        let b = CellBox { edge: 5, per_cell: 3, displacement: 0.25 };
        for order in [KeyOrder::Sorted, KeyOrder::Random] {
            let k = b.keys(order, 9).unwrap();
            assert_eq!(CpuPrims.histogram(&k, b.nbins(), AtomicsConfig::default()).unwrap(), vec![3; 125]);
        }
        let sorted = b.keys(KeyOrder::Sorted, 9).unwrap();
        assert!(sorted.windows(2).all(|w| w[0] <= w[1]));
    }

    #[test]
    fn partially_sorted_keys_stay_near_their_cells() {
        let b = CellBox { edge: 10, per_cell: 10, displacement: 0.25 };
        let k = b.keys(KeyOrder::PartiallySorted, 3).unwrap();
        assert_eq!(k.len(), 10_000);
        let moved = k.iter().enumerate().filter(|&(i, &key)| key as usize != i / 10).count();
        // Each axis: a particle leaves its cell with probability d/2 = 1/8.
        let expected = 1.0 - (1.0 - 0.125f64).powi(3);
        let frac = moved as f64 / k.len() as f64;
        assert!((frac - expected).abs() < 0.03, "{frac} vs {expected}");
        assert!(k.iter().all(|&key| (key as usize) < b.nbins()));
        // Reproducible.
        assert_eq!(k, b.keys(KeyOrder::PartiallySorted, 3).unwrap());
    }

    #[test]
    fn flame_points_fill_part_of_the_screen_and_some_leave_it() {
        let f = Flame { width: 192, height: 108, points: 100_000 };
        let (k, v) = f.generate(1).unwrap();
        assert_eq!((k.len(), v.len()), (100_000, 100_000));
        let off = k.iter().filter(|&&x| x == u32::MAX).count();
        assert!(off > 0 && off < 10_000, "{off} points off screen");
        let counts = CpuPrims.histogram(&k, f.nbins(), AtomicsConfig::default()).unwrap();
        let lit = counts.iter().filter(|&&c| c > 0).count();
        assert!(lit > f.nbins() / 10, "{lit} pixels lit");
        assert!(v.iter().all(|x| x.0[3] == 1.0 && (0.0..=1.0).contains(&x.0[0])));
    }

    #[test]
    fn small_keys_are_in_range_and_sorted_when_asked() {
        let k = small_keys(1000, 256, KeyOrder::Sorted, 1);
        assert!(k.windows(2).all(|w| w[0] <= w[1]) && k.iter().all(|&x| x < 256));
        let r = small_keys(1000, 256, KeyOrder::PartiallySorted, 1);
        assert!(r.iter().all(|&x| x < 256));
    }

    /// A float sum in another order passes the check; a sum missing one
    /// element (of magnitude at least 1) does not; integers are exact.
    #[test]
    fn the_reference_allows_rounding_but_not_lost_elements() {
        let mut rng = Rng::new(5, 0);
        for round in 0..50 {
            let nbins = 1 + rng.below(80) as usize;
            let n = rng.below(300) as usize;
            let keys: Vec<u32> = (0..n).map(|_| rng.below(nbins as u64 + 3) as u32).collect();
            let values: Vec<f32> =
                (0..n).map(|_| (1.0 + 99.0 * rng.unit() as f32) * if rng.below(2) == 0 { -1.0 } else { 1.0 }).collect();
            let reference = Reference::new(&keys, &values, nbins).unwrap();
            let rev_keys: Vec<u32> = keys.iter().rev().copied().collect();
            let rev_values: Vec<f32> = values.iter().rev().copied().collect();
            let reversed =
                CpuPrims.reduce_by_key_dense(&rev_keys, &rev_values, nbins, AtomicsConfig::default()).unwrap();
            assert!(reference.check(&reversed).is_ok(), "round {round}: {:?}", reference.check(&reversed));
            if let Some(i) = (0..n).find(|&i| (keys[i] as usize) < nbins) {
                let mut missing = reference.sums().to_vec();
                missing[keys[i] as usize] -= values[i];
                assert_eq!(reference.check(&missing).unwrap_err().bin, keys[i] as usize, "round {round}");
            }
        }
        let r = Reference::new(&[0u32, 1, 1], &[5u32, u32::MAX, 2], 2).unwrap();
        assert_eq!((r.sums(), r.counts()), (&[5, 1][..], &[1, 2][..]));
        assert!(r.check(&[5, 1]).is_ok());
        let m = r.check(&[5, 2]).unwrap_err();
        assert_eq!((m.bin, m.tolerance, m.bad_bins), (1, 0.0, 1));
        assert!(r.check(&[5]).is_err());
    }
}
