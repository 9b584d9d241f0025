//! Wolff single-cluster updates (Wolff 1989) on the CPU.
//!
//! One cluster: a seed site i is chosen uniformly, and a new state s′,
//! uniform over the q − 1 states other than the seed's s. The cluster
//! grows from the seed: each bond from a cluster site to a neighbour still
//! in state s joins that neighbour with probability p = 1 − e^{−J/T}, and
//! every site that joins is set to s′. (Setting the state as a site joins
//! is what marks it: a neighbour is a candidate only while it is in s.)
//! For H = −J Σ δ(sᵢ, sⱼ) this satisfies detailed balance, J > 0 and no
//! field.
//!
//! # What a sweep is
//!
//! A sweep is n_c clusters, with n_c = max(1, round(N/⟨|C|⟩)) for a
//! lattice of N sites and ⟨|C|⟩ the mean cluster size at the temperature
//! ([`clusters_per_sweep`]): a sweep flips N sites on average, about the
//! work of a Metropolis sweep, so autocorrelation times in sweeps compare
//! the algorithms at equal work per site. (Wolff's own unit, one cluster,
//! is 1/n_c of a sweep.)
//!
//! n_c must not depend on the chain. Ending a sweep once its clusters total
//! N sites would measure the lattice at times chosen by its own cluster
//! sizes: the last cluster of a sweep is then likely a large one, found
//! where the lattice is ordered, and the energy at T_c comes out low by
//! some thirty standard errors (16², q = 2). So ⟨|C|⟩ is measured once per
//! temperature on a calibration chain of its own: from the state of the
//! phase that is stable at the temperature ([`calibration_start`]: ordered
//! at and below T_c, random above), clusters until they total 10 N sites
//! (or 10⁶ clusters), then the mean size of those that follow until they
//! total 20 N more (or 10⁶). Its
//! random numbers are those of a cluster run with seed 0 on the stream no
//! protocol chain uses (`Domain::Potts`, index 2⁴⁸ − 1), so n_c is a
//! function of the model and the temperature only: the same on every
//! machine, for every seed, and after a resume.
//!
//! # Random numbers
//!
//! Cluster k of sweep t draws from the Philox block (seed, chain stream,
//! t·2³² + k): words w₀ and w₁ give the seed site ⌊(w₀ + 2³²·w₁)·N / 2⁶⁴⌋,
//! and (w₂, w₃) seed a multiply-with-carry generator (the multiplier of
//! [`algorithm`](crate::algorithm)). Its first word r gives the new state
//! s′ = (s + 1 + ⌊r·(q − 1)/2³²⌋) mod q, and then one word per bond tried,
//! in the order of growth: sites are taken from a stack (last in, first
//! out), each trying its neighbours right, left, down, up; a bond whose
//! word is below ⌊p·2³²⌋ joins the neighbour (Swendsen–Wang's threshold,
//! [`bond_threshold`](crate::swendsen_wang::bond_threshold)). Every number
//! is thus a function of (seed, chain, sweep, cluster, bond tried), so a
//! run is the same on any machine and continues bit for bit from a
//! checkpoint, which stores only the sweep number. Cluster numbers take 32
//! bits: a lattice may have at most 2³² sites ([`check_size`]).

use warpmc_rng::mwc::seed_state;
use warpmc_rng::{Mwc, RandomSource, philox_block};

use crate::algorithm::{MAX_SWEEPS_PER_CHAIN, MWC_MULTIPLIER};
use crate::error::{PottsError, Result};
use crate::lattice::{InitialState, Lattice};
use crate::model::PottsModel;

/// Most sites of a lattice Wolff updates: cluster numbers within a sweep
/// take 32 bits.
pub const MAX_SITES: u64 = 1 << 32;

/// Checks that Wolff's cluster numbers can address `model`.
pub fn check_size(model: &PottsModel) -> Result<()> {
    if model.sites() as u64 > MAX_SITES {
        return Err(PottsError::InvalidInput(format!(
            "the wolff algorithm numbers a sweep's clusters in 32 bits: at most 2^32 sites, got {} × {}",
            model.width(),
            model.height()
        )));
    }
    Ok(())
}

/// The Philox counter of cluster `cluster` of sweep `sweep`.
#[inline]
pub fn cluster_counter(sweep: u64, cluster: u64) -> u64 {
    (sweep << 32) | cluster
}

/// Clusters of the calibration run that measures ⟨|C|⟩: at most this many
/// while it settles, and again while it measures.
const CALIBRATION_CLUSTERS: u64 = 1_000_000;

/// Sites the calibration grows clusters over between looks at the hook
/// of [`crate::interrupt`]: about 20 ms.
const SITES_BETWEEN_STOPS: u64 = 1 << 20;

/// Clusters per sweep at the temperature whose bond threshold is
/// `threshold`: max(1, round(N/⟨|C|⟩)), with ⟨|C|⟩ from the calibration
/// chain described in the module notes. A function of the model and the
/// threshold only.
///
/// It grows about 30 N sites of clusters on one thread (seconds for a
/// 4096² lattice); a hook lent by [`crate::interrupt::with_stop`] is asked
/// every million sites or so (and after each larger cluster), and ends it
/// with [`PottsError::Interrupted`].
pub fn clusters_per_sweep(model: &PottsModel, threshold: u32) -> Result<u64> {
    check_size(model)?;
    // The calibration lattice, and the grid's copy and stack.
    check_memory(model.width(), model.height(), 2 + std::mem::size_of::<u32>() as u64)?;
    let stream = warpmc_rng::Domain::Potts.stream(warpmc_rng::stream::MAX_STREAM_INDEX);
    let mut grid = Grid::new(&Lattice::new(model, calibration_start(model, threshold), 0, stream))?;
    let n = grid.spins.len() as u64;
    let mut k = 0u64;
    let mut every = crate::interrupt::Every::new(SITES_BETWEEN_STOPS);
    let mut run = |sites: u64| {
        let (mut total, mut clusters) = (0u64, 0u64);
        while total < sites && clusters < CALIBRATION_CLUSTERS {
            let size = grid.cluster(threshold, philox_block(0, stream, k));
            if every.stop(size) {
                return Err(PottsError::Interrupted);
            }
            total += size;
            clusters += 1;
            k += 1;
        }
        Ok((total, clusters))
    };
    run(10 * n)?;
    let (total, clusters) = run(20 * n)?;
    Ok(((n as f64 * clusters as f64 / total as f64).round() as u64).max(1))
}

/// The state the calibration of [`clusters_per_sweep`] starts from: that of
/// the phase stable at the temperature whose bond threshold is
/// `threshold`. Ordered where the bond probability p = 1 − e^{−J/T} is at
/// least its value at T_c = J/ln(1 + √q) (self-duality of the square
/// lattice), √q/(1 + √q); random above T_c. Above a first-order T_c (q ≥ 5)
/// the ordered state is metastable and a cluster grown in it is nearly the
/// whole lattice, so a calibration from it stayed ordered and gave one
/// cluster per sweep where the disordered phase needs thousands (q = 10,
/// 128², T = 0.75: sweeps of about one small cluster, e = −0.39 against
/// −0.74).
pub fn calibration_start(model: &PottsModel, threshold: u32) -> InitialState {
    let root_q = f64::from(model.q()).sqrt();
    let critical = root_q / (1.0 + root_q) * 4_294_967_296.0;
    if f64::from(threshold) < critical.floor() { InitialState::Random } else { InitialState::Ordered }
}

/// Wolff sweeps `first .. first + count` of the chain (`seed`, `stream`)
/// on `lattice`, each of `clusters` clusters ([`clusters_per_sweep`]; see
/// the module notes for what a sweep is).
#[allow(clippy::too_many_arguments)]
pub fn sweeps_cpu(
    lattice: &mut Lattice,
    model: &PottsModel,
    threshold: u32,
    clusters: u64,
    seed: u64,
    stream: u64,
    first: u64,
    count: u64,
) -> Result<()> {
    check_size(model)?;
    if clusters == 0 || clusters > MAX_SITES {
        return Err(PottsError::InvalidInput(format!("a wolff sweep has 1 to 2^32 clusters, got {clusters}")));
    }
    if (lattice.width(), lattice.height(), lattice.q()) != (model.width(), model.height(), model.q()) {
        return Err(PottsError::InvalidInput("the lattice does not fit the model".into()));
    }
    if first.checked_add(count).is_none_or(|end| end > MAX_SWEEPS_PER_CHAIN) {
        return Err(PottsError::InvalidInput(format!("a chain runs at most {MAX_SWEEPS_PER_CHAIN} sweeps")));
    }
    let mut grid = Grid::new(lattice)?;
    for sweep in first..first + count {
        for cluster in 0..clusters {
            grid.cluster(threshold, philox_block(seed, stream, cluster_counter(sweep, cluster)));
        }
    }
    *lattice = Lattice::from_spins(grid.width, grid.height, grid.q, grid.spins).expect("clusters keep spins below q");
    Ok(())
}

/// Lattices up to this many bytes of Wolff's storage are not checked
/// against the memory budget: reading it costs more than a small
/// lattice's sweep.
const SMALL_BYTES: u64 = 1 << 26;

/// Fails with [`PottsError::OutOfHostMemory`] unless `per_site` bytes for
/// each site of a `w × h` lattice fit in what the process may still
/// allocate.
fn check_memory(w: usize, h: usize, per_site: u64) -> Result<()> {
    let bytes = (w as u64).saturating_mul(h as u64).saturating_mul(per_site);
    if bytes > SMALL_BYTES {
        warpmc_host::check_allocation(&format!("Wolff on a {w} × {h} lattice"), bytes)
            .map_err(PottsError::OutOfHostMemory)?;
    }
    Ok(())
}

/// A row-major lattice and the growth stack.
struct Grid {
    spins: Vec<u8>,
    width: usize,
    height: usize,
    q: u32,
    stack: Vec<u32>,
}

impl Grid {
    /// A copy of `lattice` and a stack that holds every site, so that no
    /// cluster, not even one as large as the lattice, grows it: what the
    /// process may still allocate is checked for both first.
    fn new(lattice: &Lattice) -> Result<Self> {
        let n = lattice.spins().len();
        let (w, h) = (lattice.width(), lattice.height());
        check_memory(w, h, 1 + std::mem::size_of::<u32>() as u64)?;
        let mut stack = Vec::new();
        stack.try_reserve_exact(n).map_err(|_| {
            PottsError::OutOfHostMemory(format!("Wolff on a {w} × {h} lattice: no memory for its cluster stack"))
        })?;
        Ok(Grid { spins: lattice.spins().to_vec(), width: w, height: h, q: lattice.q(), stack })
    }

    /// Grows and flips one cluster from its Philox block; returns its size.
    fn cluster(&mut self, threshold: u32, w: [u32; 4]) -> u64 {
        let (width, height) = (self.width, self.height);
        let n = self.spins.len() as u128;
        let site = (((u128::from(w[0]) | (u128::from(w[1]) << 32)) * n) >> 64) as usize;
        let mut rng = Mwc::from_state(MWC_MULTIPLIER, seed_state(MWC_MULTIPLIER, w[2], w[3])).expect("valid state");
        let old = self.spins[site];
        let step = ((u64::from(rng.next_u32()) * u64::from(self.q - 1)) >> 32) as u32;
        let sum = u32::from(old) + 1 + step;
        let new = (if sum >= self.q { sum - self.q } else { sum }) as u8;
        self.spins[site] = new;
        self.stack.clear();
        self.stack.push(site as u32);
        let mut size = 1u64;
        while let Some(i) = self.stack.pop() {
            let i = i as usize;
            let (x, y) = (i % width, i / width);
            let right = if x + 1 == width { i + 1 - width } else { i + 1 };
            let left = if x == 0 { i + width - 1 } else { i - 1 };
            let down = if y + 1 == height { x } else { i + width };
            let up = if y == 0 { i + (height - 1) * width } else { i - width };
            for j in [right, left, down, up] {
                if self.spins[j] == old && rng.next_u32() < threshold {
                    self.spins[j] = new;
                    self.stack.push(j as u32);
                    size += 1;
                }
            }
        }
        size
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lattice::InitialState;
    use crate::swendsen_wang::bond_threshold;

    #[test]
    fn a_sweep_flips_n_sites_on_average() {
        // At T → ∞ (p = 0) every cluster is its seed alone: N clusters per
        // sweep, each changing its site.
        let m = PottsModel::new(3, 6, 4).unwrap();
        assert_eq!(clusters_per_sweep(&m, 0).unwrap(), 24);
        let mut l = Lattice::new(&m, InitialState::Random, 5, 0);
        let before = l.clone();
        sweeps_cpu(&mut l, &m, 0, 1, 1, 2, 0, 1).unwrap();
        assert_eq!(l.spins().iter().zip(before.spins()).filter(|(a, b)| a != b).count(), 1);
        // At T → 0 (p = 1) a cluster is the whole same-state region: from
        // the ordered state, the whole lattice, one cluster per sweep.
        assert_eq!(clusters_per_sweep(&m, u32::MAX).unwrap(), 1);
        let mut l = Lattice::new(&m, InitialState::Ordered, 0, 0);
        sweeps_cpu(&mut l, &m, u32::MAX, 1, 1, 2, 0, 1).unwrap();
        let s = l.spins()[0];
        assert!(s != 0 && l.spins().iter().all(|&v| v == s));
        // Between, n_c falls as the clusters grow towards T_c.
        let m = PottsModel::new(2, 32, 32).unwrap();
        let n_c = |t: f64| clusters_per_sweep(&m, bond_threshold(&m, t).unwrap()).unwrap();
        let (hot, near, cold) = (n_c(3.0), n_c(1.2), n_c(0.8));
        assert!(hot > near && near > cold && cold <= 2 && hot > 100, "{hot} {near} {cold}");
        assert_eq!(n_c(1.2), near, "a function of the model and temperature only");
    }

    /// Above a first-order T_c the calibration starts disordered: from the
    /// ordered state, metastable there, a cluster is nearly the whole
    /// lattice and a sweep was one cluster; the chain then hardly moved
    /// from a random start in hundreds of sweeps. Wolff's energy now
    /// agrees with Swendsen–Wang's.
    #[test]
    fn above_a_first_order_transition_a_sweep_still_flips_n_sites() {
        use crate::{Algorithm, Simulation};
        let m = PottsModel::new(10, 32, 32).unwrap();
        let t_c = 1.0 / (1.0 + 10f64.sqrt()).ln();
        let th = |t: f64| bond_threshold(&m, t).unwrap();
        assert_eq!(calibration_start(&m, th(0.99 * t_c)), InitialState::Ordered);
        assert_eq!(calibration_start(&m, th(1.01 * t_c)), InitialState::Random);
        let n_c = clusters_per_sweep(&m, th(0.75)).unwrap();
        assert!(n_c > 100, "{n_c} clusters per sweep at T = 0.75");
        assert!(clusters_per_sweep(&m, th(0.65)).unwrap() <= 2);
        let mean_energy = |algorithm: Algorithm| {
            let mut sim = Simulation::on_cpu_with(m.clone(), algorithm, 0.75).unwrap().with_seed(3);
            sim.start(InitialState::Random).unwrap();
            sim.sweeps(100).unwrap();
            let mut sum = 0.0;
            for _ in 0..200 {
                sum += sim.sweeps(1).unwrap().energy().unwrap();
            }
            sum / 200.0
        };
        let (wolff, sw) = (mean_energy(Algorithm::Wolff), mean_energy(Algorithm::SwendsenWang));
        // The disordered phase's e ≈ −0.74 with a spread of about 0.02 per
        // measurement on 32²; a random start is at −0.1.
        assert!((wolff - sw).abs() < 0.02, "Wolff {wolff}, Swendsen–Wang {sw}");
    }

    #[test]
    fn sweeps_in_pieces_equal_sweeps_at_once() {
        let m = PottsModel::new(4, 10, 6).unwrap();
        let th = bond_threshold(&m, 0.9).unwrap();
        let start = Lattice::new(&m, InitialState::Random, 3, 4);
        let (mut a, mut b) = (start.clone(), start);
        sweeps_cpu(&mut a, &m, th, 3, 7, 9, 0, 12).unwrap();
        sweeps_cpu(&mut b, &m, th, 3, 7, 9, 0, 5).unwrap();
        sweeps_cpu(&mut b, &m, th, 3, 7, 9, 5, 7).unwrap();
        assert_eq!(a, b);
        let mut c = Lattice::new(&m, InitialState::Random, 3, 4);
        sweeps_cpu(&mut c, &m, th, 3, 8, 9, 0, 12).unwrap();
        assert_ne!(a, c);
        assert!(sweeps_cpu(&mut c, &m, th, 0, 8, 9, 0, 1).is_err());
    }
}
