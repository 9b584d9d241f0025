//! Swendsen–Wang cluster updates (Swendsen and Wang 1987) for the
//! ferromagnetic Potts model without a field, and the rule that assigns
//! their random numbers.
//!
//! # One sweep
//!
//! 1. **Bonds.** Every bond whose two spins are equal is activated with
//!    probability p = 1 − e^{−J/T}; bonds between unequal spins never are.
//! 2. **Clusters.** The sites joined by active bonds form clusters
//!    (connected components, periodic boundaries).
//! 3. **New states.** Every cluster takes a state drawn uniformly from the
//!    q states, independently of the others.
//!
//! This is the Fortuin–Kasteleyn representation sampled in turn over bonds
//! and spins; it satisfies detailed balance for H = −J Σ δ(sᵢ, sⱼ) with
//! J > 0 and h = 0 ([`bond_threshold`] refuses other models). One sweep
//! updates every site once, so site updates per second are sites × sweeps
//! per second, as for Metropolis.
//!
//! # Lattices
//!
//! Sites are numbered row-major, i = y·W + x, on a periodic W × H lattice of
//! any size W, H ≥ 1 (no checkerboard is involved, so odd sizes are
//! fine): the lattice's own size is used and the model gives q and J. Site
//! i has two bonds, as in the census: bond 2i to its right neighbour
//! ((x + 1) mod W, y) and bond 2i + 1 to its lower neighbour
//! (x, (y + 1) mod H). On a lattice one site wide a site's right bond joins
//! it to itself (it changes no cluster); on a lattice two sites wide each
//! row's two sites are joined by two bonds, each activated on its own, as
//! both count in the energy.
//!
//! # Random numbers
//!
//! A chain's stream s is moved into two domains of its own
//! ([`bond_stream`], [`cluster_stream`]: the domain bits of s are changed
//! from `Domain::Potts` to `Domain::SwendsenWangBonds` or
//! `Domain::SwendsenWangClusters` by an XOR, a one-to-one map, so distinct
//! chains never share a word and no Metropolis or start-state number is
//! reused).
//!
//! - In sweep t, bonds 4k … 4k + 3 — the right and lower bonds of sites 2k
//!   and 2k + 1 — take words 0 … 3 of the Philox block (seed, bond stream,
//!   t·2³³ + k) ([`bond_words`]). A bond is active iff its spins are equal
//!   and its word is below [`bond_threshold`].
//! - In sweep t, a cluster's new state comes from its *canonical label* r,
//!   the smallest site index in it: word r mod 4 of the Philox block
//!   (seed, cluster stream, t·2³² + ⌊r/4⌋), w, gives the state ⌊w·q / 2³²⌋
//!   ([`cluster_state`]; bias below q·2⁻³²).
//!
//! Every number is thus a function of (seed, chain, sweep, bond) or (seed,
//! chain, sweep, cluster label) only, and the label does not depend on the
//! order in which a labelling algorithm visits sites. The CPU reference
//! below and the CUDA backend (`CudaSwendsenWang`, with the `cuda`
//! feature) therefore produce the same lattice bit for bit. With at most 2³⁴ sites
//! the counters stay within 64 bits for every sweep below
//! [`MAX_SWEEPS_PER_CHAIN`].
//!
//! # The CPU reference
//!
//! Union–find in which a union always hangs the larger root under the
//! smaller, so every tree's root is the smallest index in it and a parent
//! never exceeds its child. Bonds are drawn in parallel; horizontal bands
//! of rows are labelled in parallel, each on its own part of the parent
//! array; the bonds between bands are joined afterwards; one pass in
//! increasing site order then points every site at its root, and the new
//! states are drawn in parallel.

use rayon::prelude::*;
use warpmc_rng::stream::STREAM_INDEX_BITS;
use warpmc_rng::{Domain, philox_block};

use crate::algorithm::MAX_SWEEPS_PER_CHAIN;
use crate::error::{PottsError, Result};
use crate::lattice::Lattice;
use crate::model::{PottsModel, check_temperature};

/// Bit of a site's bond mask: its right bond is active.
const RIGHT: u8 = 1;
/// Bit of a site's bond mask: its lower bond is active.
const DOWN: u8 = 2;

/// The bond probability 1 − e^{−J/T} as an integer threshold: a bond
/// between equal spins is active iff its 32-bit word is below it.
///
/// The threshold is ⌊p·2³²⌋, capped at 2³² − 1 (so p is met within 2⁻³²).
/// Swendsen–Wang needs a ferromagnetic coupling and no field: J ≤ 0, h ≠ 0
/// and a temperature that is not positive and finite are errors.
///
/// ```
/// use warpmc_potts::{PottsModel, swendsen_wang::bond_threshold};
/// let m = PottsModel::new(2, 8, 8)?;
/// let t_c = 1.0 / (1.0 + 2f64.sqrt()).ln();
/// // p = 1 − 1/(1 + √2) ≈ 0.586 at the Ising transition.
/// let th = bond_threshold(&m, t_c)?;
/// assert!((th as f64 / 2f64.powi(32) - 0.5858).abs() < 1e-4);
/// # Ok::<(), warpmc_potts::PottsError>(())
/// ```
pub fn bond_threshold(model: &PottsModel, temperature: f64) -> Result<u32> {
    check_model(model)?;
    let t = check_temperature(temperature)?;
    // −expm1(−J/T) = 1 − e^{−J/T}, accurate also when J/T is tiny.
    let p = -(-model.coupling() / t).exp_m1();
    Ok((p * 4_294_967_296.0).floor().min(u32::MAX as f64) as u32)
}

/// Refuses models Swendsen–Wang does not sample: J ≤ 0 or h ≠ 0.
fn check_model(model: &PottsModel) -> Result<()> {
    if model.coupling() <= 0.0 {
        return Err(PottsError::InvalidInput(format!(
            "Swendsen–Wang needs a ferromagnetic coupling J > 0, got J = {}",
            model.coupling()
        )));
    }
    if model.field() != 0.0 {
        return Err(PottsError::InvalidInput(format!(
            "Swendsen–Wang needs no field (h = 0), got h = {}",
            model.field()
        )));
    }
    Ok(())
}

/// `stream` with its domain bits moved from `Domain::Potts` to `to` (an
/// XOR: one-to-one on all streams).
fn moved(stream: u64, to: Domain) -> u64 {
    stream ^ (((Domain::Potts as u64) ^ (to as u64)) << STREAM_INDEX_BITS)
}

/// The stream the bond words of chain `stream` come from.
pub fn bond_stream(stream: u64) -> u64 {
    moved(stream, Domain::SwendsenWangBonds)
}

/// The stream the cluster states of chain `stream` come from.
pub fn cluster_stream(stream: u64) -> u64 {
    moved(stream, Domain::SwendsenWangClusters)
}

/// The words of bonds 4·`pair` … 4·`pair` + 3 in sweep `sweep` of chain
/// `stream`: the right and lower bonds of site 2·pair, then those of site
/// 2·pair + 1.
#[inline]
pub fn bond_words(seed: u64, stream: u64, sweep: u64, pair: u64) -> [u32; 4] {
    philox_block(seed, bond_stream(stream), (sweep << 33) | pair)
}

/// The new state, in sweep `sweep` of chain `stream`, of the cluster whose
/// smallest site index is `label`.
#[inline]
pub fn cluster_state(seed: u64, stream: u64, sweep: u64, label: u64, q: u32) -> u8 {
    let w = philox_block(seed, cluster_stream(stream), (sweep << 32) | (label >> 2))[(label & 3) as usize];
    ((w as u64 * q as u64) >> 32) as u8
}

/// Checks the arguments of a run of sweeps: the model, the lattice against
/// it, and the sweep range.
pub(crate) fn check_run(lattice_q: u32, sites: usize, model: &PottsModel, first: u64, count: u64) -> Result<()> {
    check_model(model)?;
    if lattice_q != model.q() {
        return Err(PottsError::InvalidInput(format!(
            "the lattice has q = {lattice_q} but the model q = {}",
            model.q()
        )));
    }
    if sites == 0 {
        return Err(PottsError::InvalidInput("Swendsen–Wang needs a lattice of at least one site".into()));
    }
    if sites as u64 > crate::model::MAX_SITES {
        return Err(PottsError::InvalidInput(format!(
            "a lattice of {sites} sites has more than 2^34, the most warpmc addresses"
        )));
    }
    if first.checked_add(count).is_none_or(|end| end > MAX_SWEEPS_PER_CHAIN) {
        return Err(PottsError::InvalidInput(format!(
            "a chain runs at most {MAX_SWEEPS_PER_CHAIN} sweeps; sweeps {first} .. {first} + {count} asked"
        )));
    }
    Ok(())
}

/// Swendsen–Wang sweeps `first .. first + count` of the chain (`seed`,
/// `stream`) on the CPU, with bonds active below `threshold`
/// ([`bond_threshold`]).
///
/// The lattice may have any size (see the module documentation); the model
/// gives q (which must match the lattice's) and J > 0, h = 0.
///
/// ```
/// use warpmc_potts::{InitialState, Lattice, PottsModel, swendsen_wang};
/// let m = PottsModel::new(2, 32, 32)?;
/// let mut l = Lattice::new(&m, InitialState::Random, 1, 0);
/// let th = swendsen_wang::bond_threshold(&m, 0.8)?;
/// swendsen_wang::sweeps_cpu(&mut l, &m, th, 1, 0, 0, 20)?;
/// // Well below T_c ≈ 1.13: nearly ordered after a few cluster sweeps.
/// assert!(l.census().max_count() > 1000);
/// # Ok::<(), warpmc_potts::PottsError>(())
/// ```
pub fn sweeps_cpu(
    lattice: &mut Lattice,
    model: &PottsModel,
    threshold: u32,
    seed: u64,
    stream: u64,
    first: u64,
    count: u64,
) -> Result<()> {
    let (w, h, q) = (lattice.width(), lattice.height(), lattice.q());
    check_run(q, w * h, model, first, count)?;
    if count == 0 {
        return Ok(());
    }
    let n = w * h;
    if n as u64 <= 1 << 32 {
        run::<u32>(lattice, threshold, seed, stream, first, count)
    } else {
        run::<u64>(lattice, threshold, seed, stream, first, count)
    }
}

/// The canonical label (smallest site index of its cluster) of every site
/// for the bonds of sweep `sweep` of the chain (`seed`, `stream`) on
/// `lattice`: what a sweep's new states are keyed by, for tests and for
/// comparison with other labelling algorithms.
pub fn cluster_labels(lattice: &Lattice, threshold: u32, seed: u64, stream: u64, sweep: u64) -> Result<Vec<u64>> {
    let (w, h) = (lattice.width(), lattice.height());
    if w * h == 0 {
        return Err(PottsError::InvalidInput("Swendsen–Wang needs a lattice of at least one site".into()));
    }
    let mut bonds = vec![0u8; w * h];
    activate(&mut bonds, lattice.spins(), w, h, threshold, seed, stream, sweep);
    let mut parent = vec![0u64; w * h];
    label(&bonds, &mut parent, w, h);
    Ok(parent)
}

/// Site indices of the union–find parent array: u32 where the sites fit
/// (half the memory), u64 beyond.
trait SiteIndex: Copy + Send + Sync + 'static {
    fn of(i: usize) -> Self;
    fn get(self) -> usize;
}

impl SiteIndex for u32 {
    #[inline(always)]
    fn of(i: usize) -> Self {
        i as u32
    }
    #[inline(always)]
    fn get(self) -> usize {
        self as usize
    }
}

impl SiteIndex for u64 {
    #[inline(always)]
    fn of(i: usize) -> Self {
        i as u64
    }
    #[inline(always)]
    fn get(self) -> usize {
        self as usize
    }
}

/// The sweeps of [`sweeps_cpu`] with parent indices of type `I`.
fn run<I: SiteIndex>(
    lattice: &mut Lattice,
    threshold: u32,
    seed: u64,
    stream: u64,
    first: u64,
    count: u64,
) -> Result<()> {
    let (w, h, q) = (lattice.width(), lattice.height(), lattice.q());
    let n = w * h;
    // The spins, the bond masks, the parents and the roots' new states.
    let bytes = n as u64 * (3 + std::mem::size_of::<I>() as u64);
    // Reading the memory budget costs more than a small lattice's sweep.
    if bytes > SMALL_BYTES {
        warpmc_host::check_allocation(&format!("Swendsen–Wang on a {w} × {h} lattice"), bytes)
            .map_err(PottsError::OutOfHostMemory)?;
    }
    let mut spins = lattice.spins().to_vec();
    let mut bonds = vec![0u8; n];
    let mut parent = vec![I::of(0); n];
    let mut fresh = vec![0u8; n];
    for sweep in first..first + count {
        activate(&mut bonds, &spins, w, h, threshold, seed, stream, sweep);
        label(&bonds, &mut parent, w, h);
        // Each root draws its cluster's state; every site then takes its root's.
        for_chunks(&mut fresh, |c, out| {
            for (k, s) in out.iter_mut().enumerate() {
                let i = c * CHUNK + k;
                if parent[i].get() == i {
                    *s = cluster_state(seed, stream, sweep, i as u64, q);
                }
            }
        });
        for_chunks(&mut spins, |c, out| {
            for (k, s) in out.iter_mut().enumerate() {
                *s = fresh[parent[c * CHUNK + k].get()];
            }
        });
    }
    *lattice = Lattice::from_spins(w, h, q, spins)
        .ok_or_else(|| PottsError::InvalidInput("internal error: a cluster state not below q".into()))?;
    Ok(())
}

/// Scratch memory allocated without asking the system first.
const SMALL_BYTES: u64 = 1 << 26;

/// Sites per parallel task of the site-wise passes (even, so that a task
/// holds whole bond blocks).
const CHUNK: usize = 1 << 14;

/// Calls `f(c, chunk)` for the chunks of [`CHUNK`] elements of `data`, in
/// parallel where there is more than one (a pass over a small lattice costs
/// less than waking the thread pool).
fn for_chunks<T: Send>(data: &mut [T], f: impl Fn(usize, &mut [T]) + Send + Sync) {
    if data.len() <= CHUNK {
        f(0, data);
    } else {
        data.par_chunks_mut(CHUNK).enumerate().for_each(|(c, chunk)| f(c, chunk));
    }
}

/// Writes each site's bond mask ([`RIGHT`], [`DOWN`]) for sweep `sweep`.
#[allow(clippy::too_many_arguments)]
fn activate(bonds: &mut [u8], spins: &[u8], w: usize, h: usize, threshold: u32, seed: u64, stream: u64, sweep: u64) {
    for_chunks(bonds, |c, out| {
        let base = c * CHUNK;
        for (k, pair) in out.chunks_mut(2).enumerate() {
            let i0 = base + 2 * k;
            let words = bond_words(seed, stream, sweep, (i0 / 2) as u64);
            for (j, mask) in pair.iter_mut().enumerate() {
                let i = i0 + j;
                let (right, down) = neighbours(i, w, h);
                let s = spins[i];
                let r = (s == spins[right] && words[2 * j] < threshold) as u8;
                let d = (s == spins[down] && words[2 * j + 1] < threshold) as u8;
                *mask = (r * RIGHT) | (d * DOWN);
            }
        }
    });
}

/// The right and lower neighbours of site `i` on the periodic `w` × `h`
/// lattice.
#[inline(always)]
fn neighbours(i: usize, w: usize, h: usize) -> (usize, usize) {
    let (y, x) = (i / w, i % w);
    let right = if x + 1 == w { i - x } else { i + 1 };
    let down = if y + 1 == h { x } else { i + w };
    (right, down)
}

/// The root of local site `i` in `parent`, whose entries are global indices
/// `offset` above local ones; halves the path on the way.
#[inline(always)]
fn find<I: SiteIndex>(parent: &mut [I], offset: usize, mut i: usize) -> usize {
    loop {
        let p = parent[i].get() - offset;
        if p == i {
            return i;
        }
        let gp = parent[p];
        parent[i] = gp;
        i = gp.get() - offset;
    }
}

/// Joins the trees of local sites `a` and `b`: the larger root goes under
/// the smaller, so a root is always its tree's smallest index.
#[inline(always)]
fn union<I: SiteIndex>(parent: &mut [I], offset: usize, a: usize, b: usize) {
    let (ra, rb) = (find(parent, offset, a), find(parent, offset, b));
    if ra != rb {
        let (lo, hi) = if ra < rb { (ra, rb) } else { (rb, ra) };
        parent[hi] = I::of(lo + offset);
    }
}

/// Points every site at the smallest index of its cluster under the bond
/// masks `bonds`.
fn label<I: SiteIndex>(bonds: &[u8], parent: &mut [I], w: usize, h: usize) {
    for_chunks(parent, |c, p| {
        for (k, v) in p.iter_mut().enumerate() {
            *v = I::of(c * CHUNK + k);
        }
    });
    // Bands of rows, labelled in parallel, each on its own slice (one band
    // on a small lattice).
    let bands = if w * h <= CHUNK { 1 } else { 4 * rayon::current_num_threads() };
    let band_rows = h.div_ceil(bands).max(1);
    let band = |b: usize, local: &mut [I]| {
        let offset = b * band_rows * w;
        let rows = local.len() / w;
        for ly in 0..rows {
            for x in 0..w {
                let li = ly * w + x;
                let m = bonds[offset + li];
                if m & RIGHT != 0 {
                    union(local, offset, li, ly * w + (x + 1) % w);
                }
                if m & DOWN != 0 && ly + 1 < rows {
                    union(local, offset, li, li + w);
                }
            }
        }
    };
    if band_rows >= h {
        band(0, parent);
    } else {
        parent.par_chunks_mut(band_rows * w).enumerate().for_each(|(b, local)| band(b, local));
    }
    // The lower bonds of each band's last row, which reach the next band
    // (or, from the last band, row 0).
    for y in (band_rows - 1..h).step_by(band_rows).chain((!h.is_multiple_of(band_rows)).then_some(h - 1)) {
        for x in 0..w {
            let i = y * w + x;
            if bonds[i] & DOWN != 0 {
                union(parent, 0, i, neighbours(i, w, h).1);
            }
        }
    }
    // parent[i] ≤ i, so in increasing order a site's parent already points
    // at its root.
    for i in 0..parent.len() {
        let p = parent[i].get();
        parent[i] = parent[p];
    }
}
