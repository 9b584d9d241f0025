//! Exact results the Monte Carlo is validated against.
//!
//! Four kinds of reference, each exact rather than itself a simulation:
//!
//! * [`density_of_states`]: the number of configurations of a small periodic
//!   lattice with each number of equal-neighbour bonds, computed by a row
//!   transfer matrix. From it [`DensityOfStates::moments`] gives the energy
//!   and specific heat of that finite lattice at any temperature, which a
//!   correct sampler must reproduce within its statistical error (no
//!   finite-size extrapolation involved).
//! * [`ising_torus`]: the same two numbers for q = 2 on tori of any size
//!   (16², 512², … up to sides of 2^24), from Kaufman's partition function
//!   (Kaufman 1949; Ferdinand and Fisher 1969).
//! * Onsager's energy and Yang's spontaneous magnetization of the infinite
//!   square-lattice Ising model, rewritten for the q = 2 Potts model
//!   ([`ising_energy_per_site`], [`ising_magnetization`]).
//! * Baxter's results at the transition of the q-state Potts model: the
//!   critical temperature ([`potts_critical_temperature`]) and, for q ≥ 5
//!   where the transition is first order, the energies of the coexisting
//!   ordered and disordered phases ([`potts_transition_energies`]).
//!
//! Conventions throughout: H = −J Σ_⟨ij⟩ δ(sᵢ, sⱼ) over the 2N bonds of a
//! periodic lattice (each site has a bond to its right and one to its lower
//! neighbour, with wrap-around), k_B = 1, energies per site.

use rayon::prelude::*;

use crate::error::{PottsError, Result};
use crate::model::check_temperature;

/// Largest number of row states, q^min(width, height), that
/// [`density_of_states`] accepts.
pub const MAX_ROW_STATES: usize = 4096;

/// The exact density of states of the q-state Potts model on a small periodic
/// lattice: `counts[k]` configurations have exactly k equal-neighbour bonds.
#[derive(Clone, Debug, PartialEq)]
pub struct DensityOfStates {
    /// Number of sites N = width · height.
    pub sites: usize,
    /// Number of bonds, 2N (k runs over 0..=bonds).
    pub bonds: usize,
    /// `counts[k]`: number of configurations with k equal-neighbour bonds,
    /// exact; `bonds + 1` entries summing to q^N.
    pub counts: Vec<u128>,
}

/// Thermal averages of a finite lattice computed from its exact density of
/// states.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ExactMoments {
    /// ⟨e⟩, the mean energy per site.
    pub energy: f64,
    /// ⟨e²⟩, the mean square of the energy per site.
    pub energy_sq: f64,
    /// Specific heat per site, c = N (⟨e²⟩ − ⟨e⟩²) / T².
    pub specific_heat: f64,
}

/// Counts the configurations of the q-state Potts model on a periodic
/// `width` × `height` lattice by their number of equal-neighbour bonds,
/// exactly.
///
/// The bonds are those a simulation sums over: for every site (x, y) the bond
/// to ((x + 1) mod W, y) and the bond to (x, (y + 1) mod H). So a lattice of
/// width 2 has two bonds between the two sites of each row (width 1: a bond
/// from each site to itself, always equal), and likewise for height. Neither
/// dimension needs to be even here.
///
/// Method: a transfer matrix along the longer side, over rows of the
/// shorter one (the bonds are symmetric under transposing the torus), with
/// integer counts. For a fixed first row, the counts of partial lattices
/// are carried as polynomials in the number of equal bonds, indexed by the
/// q^W states of a *broken row* (the new row's first x sites, the previous
/// row's others): appending one site adds its bond to the site above, to
/// its left neighbour, and at the row's end the wrap bond to the row's
/// first site. The bonds from the last row back to the first close the
/// torus. A first row's counts do not change when its states are permuted
/// or the row is shifted or reflected (the whole torus maps onto itself),
/// so only one row of each such class is followed, weighted by the size of
/// its class (33 classes of the 4096 rows for q = 4, W = 6). Cost about
/// classes · H · W · q^(W+1) · 2N additions: a second for q = 4 on 6 × 6.
///
/// # Panics
///
/// If `q`, `width` or `height` is 0, if q^min(width, height) exceeds
/// [`MAX_ROW_STATES`], or if q^(width·height) does not fit in 128 bits.
///
/// ```
/// let dos = warpmc_potts::exact::density_of_states(2, 4, 4);
/// assert_eq!(dos.counts.iter().sum::<u128>(), 65536);
/// assert_eq!(dos.counts[32], 2); // the two ground states
/// let q4 = warpmc_potts::exact::density_of_states(4, 6, 6);
/// assert_eq!(q4.counts.iter().sum::<u128>(), 4u128.pow(36));
/// ```
pub fn density_of_states(q: u32, width: usize, height: usize) -> DensityOfStates {
    assert!(q >= 1 && width >= 1 && height >= 1, "density_of_states needs q, width and height ≥ 1");
    assert!(q <= crate::model::MAX_Q, "density_of_states counts spins in bytes: q ≤ {}", crate::model::MAX_Q);
    // Rows along the shorter side.
    let (w, h) = (width.min(height), width.max(height));
    let qs = q as usize;
    let rows =
        u32::try_from(w).ok().and_then(|e| qs.checked_pow(e)).filter(|&r| r <= MAX_ROW_STATES).unwrap_or_else(|| {
            panic!(
                "density_of_states: q^min(width, height) must be at most {MAX_ROW_STATES} (q = {q}, {width} × {height})"
            )
        });
    let sites = width * height;
    u32::try_from(sites).ok().and_then(|n| u128::from(q).checked_pow(n)).unwrap_or_else(|| {
        panic!("density_of_states: q^(width·height) must fit in 128 bits (q = {q}, {width} × {height})")
    });
    let bonds = 2 * sites;
    let len = bonds + 1;
    let digits: Vec<u8> = (0..rows).flat_map(|r| (0..w).map(move |x| ((r / qs.pow(x as u32)) % qs) as u8)).collect();
    let digit = |r: usize, x: usize| digits[r * w + x];
    let powers: Vec<usize> = (0..w).map(|x| qs.pow(x as u32)).collect();

    // One first row per class, and the class sizes.
    let mut classes: Vec<(usize, u128)> = Vec::new();
    let mut class_of = std::collections::HashMap::new();
    for r in 0..rows {
        let key = canonical_row(&digits[r * w..(r + 1) * w]);
        let i = *class_of.entry(key).or_insert_with(|| {
            classes.push((r, 0));
            classes.len() - 1
        });
        classes[i].1 += 1;
    }

    let counts = classes
        .par_iter()
        .map(|&(first, weight)| {
            // dp[s * len + k]: partial lattices whose broken row is s, with k
            // equal bonds so far.
            let mut dp = vec![0u128; rows * len];
            let mut next = vec![0u128; rows * len];
            let horizontal = (0..w).filter(|&x| digit(first, x) == digit(first, (x + 1) % w)).count();
            dp[first * len + horizontal] = 1;
            let mut degree = horizontal; // highest k that can be nonzero
            for _ in 1..h {
                for (x, &power) in powers.iter().enumerate() {
                    next.fill(0);
                    for s in 0..rows {
                        let src = &dp[s * len..s * len + degree + 1];
                        if src.iter().all(|&v| v == 0) {
                            continue;
                        }
                        let above = digit(s, x);
                        let base = s - above as usize * power;
                        for c in 0..q as u8 {
                            let mut add = (c == above) as usize;
                            if x > 0 {
                                add += (c == digit(s, x - 1)) as usize;
                            }
                            if x + 1 == w {
                                // The wrap bond to the row's first site (itself when w = 1).
                                add += if w == 1 { 1 } else { (c == digit(s, 0)) as usize };
                            }
                            let to = (base + c as usize * power) * len + add;
                            for (dst, &v) in next[to..to + src.len()].iter_mut().zip(src) {
                                *dst += v;
                            }
                        }
                    }
                    std::mem::swap(&mut dp, &mut next);
                    // The most bonds this site can add: up, left, and the wrap bond.
                    degree += match (w, x) {
                        (1, _) => 2,
                        (_, 0) => 1,
                        _ if x + 1 == w => 3,
                        _ => 2,
                    };
                }
            }
            // Close the torus: bonds from the last row down to the first.
            let mut out = vec![0u128; len];
            for s in 0..rows {
                let shift = (0..w).filter(|&x| digit(s, x) == digit(first, x)).count();
                for (k, &v) in dp[s * len..s * len + degree + 1].iter().enumerate() {
                    if v != 0 {
                        out[k + shift] += v * weight;
                    }
                }
            }
            out
        })
        .reduce(
            || vec![0u128; len],
            |mut a, b| {
                a.iter_mut().zip(&b).for_each(|(x, y)| *x += y);
                a
            },
        );

    DensityOfStates { sites, bonds, counts }
}

/// The smallest of a row's shifts and reflections, each with its states
/// renamed in order of first appearance: equal for rows that one such map
/// and a permutation of the states carry into each other.
fn canonical_row(row: &[u8]) -> Vec<u8> {
    let w = row.len();
    let mut best: Option<Vec<u8>> = None;
    for shift in 0..w {
        for reflect in [false, true] {
            let mut names = [u8::MAX; 256];
            let mut next = 0u8;
            let form: Vec<u8> = (0..w)
                .map(|i| {
                    let x = if reflect { (shift + w - i) % w } else { (shift + i) % w };
                    let d = row[x] as usize;
                    if names[d] == u8::MAX {
                        names[d] = next;
                        next += 1;
                    }
                    names[d]
                })
                .collect();
            if best.as_ref().is_none_or(|b| form < *b) {
                best = Some(form);
            }
        }
    }
    best.unwrap_or_default()
}

impl DensityOfStates {
    /// Canonical averages at `temperature` T > 0 for coupling J: the energy
    /// per site of a configuration with k equal bonds is e = −J·k/N and its
    /// weight `counts[k]`·exp(J·k/T). Weights are combined in log space
    /// (log-sum-exp), so large lattices, low temperatures and negative J do
    /// not overflow.
    ///
    /// ```
    /// let dos = warpmc_potts::exact::density_of_states(2, 4, 4);
    /// let m = dos.moments(1.0, 1.0);
    /// assert!(m.energy < -1.0 && m.energy > -2.0 && m.specific_heat > 0.0);
    /// ```
    pub fn moments(&self, temperature: f64, coupling: f64) -> ExactMoments {
        let n = self.sites as f64;
        // Levels are at least one bond apart, so beyond |J|/T = SATURATED_BETA
        // only the ground level has weight in f64; clamping keeps J/T · k
        // finite at the smallest temperatures.
        let beta = (coupling / temperature).clamp(-SATURATED_BETA, SATURATED_BETA);
        // Moments of the equal-bond count k, then scaled by J: with J and T
        // both tiny (1e-200) the energies' squares would underflow.
        let terms: Vec<(f64, f64)> = self
            .counts
            .iter()
            .enumerate()
            .filter(|&(_, &c)| c > 0)
            .map(|(k, &c)| (k as f64, (c as f64).ln() + beta * k as f64))
            .collect();
        let max = terms.iter().map(|&(_, lw)| lw).fold(f64::NEG_INFINITY, f64::max);
        let (mut z, mut s1) = (0.0, 0.0);
        for &(k, lw) in &terms {
            let w = (lw - max).exp();
            z += w;
            s1 += w * k;
        }
        let mean_k = s1 / z;
        // Variance from centred terms: no cancellation between ⟨k²⟩ and ⟨k⟩².
        let var_k = terms.iter().map(|&(k, lw)| (lw - max).exp() * (k - mean_k) * (k - mean_k)).sum::<f64>() / z;
        let energy = -coupling * (mean_k / n);
        let energy_sq = energy * energy + (coupling / n) * (coupling / n) * var_k;
        // c = N·Var(e)/T² = (J/T)²·Var(k)/N; beyond SATURATED_BETA Var(k) is 0.
        ExactMoments { energy, energy_sq, specific_heat: beta * beta * var_k / n }
    }
}

/// |J|/T (and K) beyond which an exact sum is its ground state's term alone:
/// the next level is at least one bond (one 2K) higher, and e^-2000 is far
/// below the smallest f64.
const SATURATED_BETA: f64 = 1000.0;

/// The longest side [`ising_torus`] takes, 2^24: its sums have a term per
/// row and column, and take about 3 s at this size.
pub const MAX_KAUFMAN_SIDE: usize = 1 << 24;

/// The sides [`ising_torus`] takes.
fn check_kaufman_sides(width: usize, height: usize) -> Result<()> {
    if width == 0 || height == 0 {
        return Err(PottsError::InvalidInput(format!("the torus needs both sides ≥ 1, got {width} × {height}")));
    }
    if width.max(height) > MAX_KAUFMAN_SIDE {
        return Err(PottsError::InvalidInput(format!(
            "the exact torus result takes sides up to {MAX_KAUFMAN_SIDE} (its sums have a term per row and \
             column: seconds at that size), got {width} × {height}"
        )));
    }
    Ok(())
}

/// Exact energy and specific heat of the q = 2 Potts model (the Ising
/// model) on a periodic `width` × `height` lattice at `temperature` T with
/// coupling J, for lattices far too large to enumerate.
///
/// The partition function is Kaufman's (1949), in the form of Ferdinand and
/// Fisher (1969) for an n × m torus (n = `width` spins per row, m =
/// `height` rows) of the Ising model H_I = −J_I Σ σᵢσⱼ at K = J_I/T:
///
/// Z = ½ (2 sinh 2K)^{nm/2} (Z₁ + Z₂ + Z₃ + Z₄),
/// Z₁ = Π_{r=0}^{n−1} 2 cosh(m γ_{2r+1}/2),  Z₂ = Π 2 sinh(m γ_{2r+1}/2),
/// Z₃ = Π_{r=0}^{n−1} 2 cosh(m γ_{2r}/2),    Z₄ = Π 2 sinh(m γ_{2r}/2),
///
/// with cosh γ_l = cosh 2K coth 2K − cos(πl/n) for l ≥ 1 (γ_l > 0) and
/// γ₀ = 2K + ln tanh K, which keeps its sign: negative above the critical
/// point, where it makes Z₄ negative. ⟨e⟩ and c follow from the first and
/// second derivatives of ln Z in K, taken analytically (each product's
/// logarithm is a sum over l of tanh or coth terms times dγ_l/dK), and the
/// four terms are combined relative to the largest, so nothing overflows
/// (lattices of 512² and beyond, T from far below to far above T_c). The
/// sinh(m γ₀/2) factor, which vanishes at T_c, is kept as a factor rather
/// than a logarithm, so T_c itself is no special case.
///
/// The q = 2 Potts model H = −J Σ δ(sᵢ, sⱼ) is this Ising model with
/// δ = (1 + σᵢσⱼ)/2: J_I = J/2 (so K = J/(2T), and T_c = J/ln(1 + √2) is
/// half the Ising 2J_I/ln(1 + √2)), and with B = Σ σᵢσⱼ over the 2N bonds,
/// e = −J − (J/2)·B/N per site; c = N(⟨e²⟩ − ⟨e⟩²)/T² = K²·Var(B)/N is
/// the same number for both models. These are the conventions of
/// [`density_of_states`] (the same bonds, doubled on a side of length 2)
/// and of [`ising_energy_per_site`], which this approaches as both sides
/// grow.
///
/// Accuracy: within 10⁻¹¹ relative of the exact enumeration of small tori
/// (10⁻¹³ for J > 0). Far above T_c (K < 0.2) the sums take another form
/// that keeps the small numbers there, e + J and c: within 10⁻⁸ relative
/// of the enumeration up to T = 10⁶ J, and on the high-temperature series
/// to T = 10¹⁰⁰ J. At the smallest temperatures the result is the ground
/// state's, c = 0.
///
/// # Errors
///
/// [`PottsError::InvalidInput`] for a side of 0 or above [`MAX_KAUFMAN_SIDE`], a temperature that is not
/// positive and finite, a coupling that is not finite, or J < 0 with an
/// odd side (the antiferromagnet is the ferromagnet with one sublattice's
/// spins flipped only when both sides are even).
///
/// ```
/// use warpmc_potts::exact::{density_of_states, ising_torus};
///
/// let exact = ising_torus(4, 4, 1.2, 1.0)?;
/// let enumerated = density_of_states(2, 4, 4).moments(1.2, 1.0);
/// assert!((exact.energy - enumerated.energy).abs() < 1e-12);
/// assert!((exact.specific_heat - enumerated.specific_heat).abs() < 1e-11);
///
/// let large = ising_torus(512, 512, 1.0, 1.0)?; // no enumeration reaches this
/// assert!(large.energy < -1.8 && large.specific_heat > 0.0);
/// # Ok::<(), warpmc_potts::PottsError>(())
/// ```
pub fn ising_torus(width: usize, height: usize, temperature: f64, coupling: f64) -> Result<ExactMoments> {
    ising_torus_or_stop(width, height, temperature, coupling, &mut || false)
}

/// Kaufman's sums look at their [`Stop`] hook once per this many terms:
/// about every 5 ms, so a hook that polls a clock costs nothing.
const TERMS_BETWEEN_STOPS: usize = 1 << 16;

/// Asked during long exact computations, on the calling thread, whether to
/// give up: `true` ends the computation with [`PottsError::Interrupted`].
/// It is asked between tori and temperatures and every 65,536 terms of
/// Kaufman's sums (a torus of side 2^24 takes seconds per temperature). Counting a torus for q ≠ 2 is not
/// interrupted: [`MAX_ENUMERATION_WORK`] keeps it to about a second.
pub type Stop<'a> = &'a mut dyn FnMut() -> bool;

/// [`ising_torus`], giving up when `stop` says so.
fn ising_torus_or_stop(
    width: usize,
    height: usize,
    temperature: f64,
    coupling: f64,
    stop: Stop<'_>,
) -> Result<ExactMoments> {
    check_kaufman_sides(width, height)?;
    let t = check_temperature(temperature)?;
    if !coupling.is_finite() {
        return Err(PottsError::InvalidInput(format!("the coupling J must be finite, got {coupling}")));
    }
    if frustrated(width, height, coupling) {
        let reach = (1..).take_while(|&l| enumeration_reaches(2, l, l)).last().unwrap_or(1);
        return Err(PottsError::InvalidInput(format!(
            "the exact torus result for J < 0 needs both sides even, or a torus small enough to count (up to \
             {reach} × {reach}): a frustrated {width} × {height} antiferromagnet has no Kaufman solution"
        )));
    }
    let sites = (width * height) as f64;
    if coupling == 0.0 {
        return Ok(ExactMoments { energy: 0.0, energy_sq: 0.0, specific_heat: 0.0 });
    }
    if width == 1 && height == 1 {
        // Both bonds join the one spin to itself: always equal.
        let e = -2.0 * coupling;
        return Ok(ExactMoments { energy: e, energy_sq: e * e, specific_heat: 0.0 });
    }
    // The sums lose digits at high temperature with a single row (m = 1):
    // the torus is the same with its sides swapped.
    let (width, height) = if height == 1 { (height, width) } else { (width, height) };
    let k = coupling / (2.0 * t);
    // A bipartite torus maps K to −K by flipping one sublattice: B → −B.
    // Beyond SATURATED_BETA every excitation's weight is below f64's range:
    // the sums see the ground state alone, whatever K is (and K itself may
    // be infinite at the smallest temperatures).
    // Below SMALLEST_K the sums take K = SMALLEST_K: what that changes in
    // ⟨B⟩ and Var(B) is of relative order K, far below f64's resolution.
    let bonds = IsingBonds::kaufman(width, height, k.abs().clamp(SMALLEST_K, SATURATED_BETA), stop)?;
    let mean_b = bonds.mean.copysign(k);
    let energy = -coupling - 0.5 * coupling * mean_b / sites;
    let saturated = k.abs() >= SATURATED_BETA;
    let specific_heat = if saturated { 0.0 } else { k * k * bonds.variance / sites };
    // Var(e) = (J/2N)²·Var(B), without K² (which underflows at large T).
    let variance = if saturated { 0.0 } else { 0.25 * coupling * coupling * bonds.variance / sites / sites };
    Ok(ExactMoments { energy, energy_sq: energy * energy + variance, specific_heat })
}

/// Whether the Ising torus of coupling J is a frustrated antiferromagnet:
/// J < 0 with an odd side, which Kaufman's solution does not cover.
fn frustrated(width: usize, height: usize, coupling: f64) -> bool {
    coupling < 0.0 && (!width.is_multiple_of(2) || !height.is_multiple_of(2))
}

/// The most work [`ExactTorus::new`] gives an enumeration: q^(w+1)·w·h·2N
/// additions before the saving from symmetric first rows (q = 4 on 6 × 6 is
/// 4.2·10⁷, about a second on two cores).
pub const MAX_ENUMERATION_WORK: f64 = 1.5e8;

/// Whether [`density_of_states`] counts q states on `width` × `height`
/// within its limits (it asserts the first two) and
/// [`MAX_ENUMERATION_WORK`].
fn enumeration_reaches(q: u32, width: usize, height: usize) -> bool {
    let rows = u32::try_from(width.min(height)).ok().and_then(|e| (q as usize).checked_pow(e));
    let all = width.checked_mul(height).and_then(|n| u32::try_from(n).ok()).and_then(|n| u128::from(q).checked_pow(n));
    let sites = (width as f64) * (height as f64);
    let work = f64::from(q).powf(width.min(height) as f64 + 1.0) * sites * 2.0 * sites;
    rows.is_some_and(|r| r <= MAX_ROW_STATES) && all.is_some() && work <= MAX_ENUMERATION_WORK
}

/// Exact energy and specific heat of one torus at any temperature, by the
/// method that reaches it: Kaufman's solution for q = 2 (sides up to 2^24,
/// [`ising_torus`]), the enumeration of [`density_of_states`] for other q on
/// lattices small enough for it (counted once, then evaluated at each
/// temperature).
///
/// ```
/// use warpmc_potts::exact::ExactTorus;
///
/// let ising = ExactTorus::new(2, 32, 32)?;
/// assert!(ising.moments(1.0, 1.0)?.energy < -1.8);
/// let three = ExactTorus::new(3, 4, 4)?;
/// assert!(three.moments(1.0, 1.0)?.specific_heat > 0.0);
/// assert!(ExactTorus::new(3, 64, 64).is_err()); // no exact method reaches it
/// # Ok::<(), warpmc_potts::PottsError>(())
/// ```
#[derive(Clone, Debug)]
pub enum ExactTorus {
    /// q = 2: Kaufman (1949) in the form of Ferdinand and Fisher (1969).
    Kaufman {
        /// Sites per row.
        width: usize,
        /// Rows.
        height: usize,
        /// For J < 0 on a torus with an odd side (a frustrated
        /// antiferromagnet, which Kaufman's solution does not cover): its
        /// configurations counted, when first asked for and small enough.
        counted: std::sync::OnceLock<DensityOfStates>,
    },
    /// Any q on a small torus: its counted density of states.
    Enumerated(DensityOfStates),
}

impl ExactTorus {
    /// Whether an exact method reaches the q-state model on a `width` ×
    /// `height` torus (cheap: nothing is counted), or why not.
    pub fn check(q: u32, width: usize, height: usize) -> Result<()> {
        if width == 0 || height == 0 {
            return Err(PottsError::InvalidInput(format!("the torus needs both sides ≥ 1, got {width} × {height}")));
        }
        // Spins are bytes, in the simulations as in the counting.
        if !(2..=crate::model::MAX_Q).contains(&q) {
            return Err(PottsError::InvalidInput(format!("q must be from 2 to {}, got {q}", crate::model::MAX_Q)));
        }
        if q == 2 {
            return check_kaufman_sides(width, height);
        }
        if !enumeration_reaches(q, width, height) {
            let reach = match (1..).take_while(|&l| enumeration_reaches(q, l, l)).last() {
                Some(l) => format!("{l} × {l}"),
                None => "no torus".to_string(),
            };
            return Err(PottsError::InvalidInput(format!(
                "no exact result for q = {q} on {width} × {height}: only q = 2 has a closed form (Kaufman 1949); \
                 other q are counted exactly by a transfer matrix, which reaches {reach} for q = {q} \
                 (q^min(L, L') ≤ {MAX_ROW_STATES}, q^(L·L') < 2^128)"
            )));
        }
        Ok(())
    }

    /// The exact method for the q-state model on a `width` × `height`
    /// torus (for q ≠ 2 this counts its configurations: up to a few seconds),
    /// or an error saying why none reaches it.
    pub fn new(q: u32, width: usize, height: usize) -> Result<ExactTorus> {
        Self::check(q, width, height)?;
        if q == 2 {
            return Ok(ExactTorus::Kaufman { width, height, counted: std::sync::OnceLock::new() });
        }
        Ok(ExactTorus::Enumerated(density_of_states(q, width, height)))
    }

    /// How the values are obtained, for output headers.
    pub fn method(&self) -> &'static str {
        self.method_for(1.0)
    }

    /// How the values for coupling J are obtained: the frustrated Ising
    /// antiferromagnet (J < 0, an odd side) is counted.
    pub fn method_for(&self, coupling: f64) -> &'static str {
        match self {
            ExactTorus::Kaufman { width, height, .. } if !frustrated(*width, *height, coupling) => {
                "Kaufman 1949 (Ferdinand and Fisher 1969 torus form)"
            }
            _ => "exact enumeration (transfer matrix over rows)",
        }
    }

    /// Energy per site and specific heat per site at `temperature` for
    /// coupling J.
    pub fn moments(&self, temperature: f64, coupling: f64) -> Result<ExactMoments> {
        self.moments_or_stop(temperature, coupling, &mut || false)
    }

    /// [`ExactTorus::moments`], giving up when `stop` says so.
    fn moments_or_stop(&self, temperature: f64, coupling: f64, stop: Stop<'_>) -> Result<ExactMoments> {
        match self {
            ExactTorus::Kaufman { width, height, counted }
                if frustrated(*width, *height, coupling) && enumeration_reaches(2, *width, *height) =>
            {
                let t = check_temperature(temperature)?;
                Ok(counted.get_or_init(|| density_of_states(2, *width, *height)).moments(t, coupling))
            }
            ExactTorus::Kaufman { width, height, .. } => {
                ising_torus_or_stop(*width, *height, temperature, coupling, stop)
            }
            ExactTorus::Enumerated(dos) => {
                let t = check_temperature(temperature)?;
                if !coupling.is_finite() {
                    return Err(PottsError::InvalidInput(format!("the coupling J must be finite, got {coupling}")));
                }
                Ok(dos.moments(t, coupling))
            }
        }
    }
}

/// Mean and variance of B = Σ σᵢσⱼ over the bonds of the Ising torus: the
/// first two derivatives of ln Z in K.
struct IsingBonds {
    mean: f64,
    variance: f64,
}

/// A quantity with its first two derivatives in K.
#[derive(Clone, Copy, Debug, Default)]
struct Taylor {
    v: f64,
    d1: f64,
    d2: f64,
}

/// A compensated (Neumaier) sum of [`Taylor`] terms. The Kaufman products'
/// logarithms are sums of up to 2^25 terms reaching ~10¹⁴ on the largest
/// tori, where plain summation loses whole units and the four products'
/// weights with them; each component here keeps its rounding error apart.
#[derive(Clone, Copy, Debug, Default)]
struct TaylorSum {
    sum: Taylor,
    carry: Taylor,
}

impl TaylorSum {
    fn add(&mut self, o: Taylor) {
        let add = |sum: &mut f64, carry: &mut f64, x: f64| {
            let t = *sum + x;
            *carry += if sum.abs() >= x.abs() { (*sum - t) + x } else { (x - t) + *sum };
            *sum = t;
        };
        add(&mut self.sum.v, &mut self.carry.v, o.v);
        add(&mut self.sum.d1, &mut self.carry.d1, o.d1);
        add(&mut self.sum.d2, &mut self.carry.d2, o.d2);
    }

    fn total(&self) -> Taylor {
        Taylor { v: self.sum.v + self.carry.v, d1: self.sum.d1 + self.carry.d1, d2: self.sum.d2 + self.carry.d2 }
    }
}

/// Kaufman's γ_l (l ≥ 1) with its derivatives in K, from γ₀'s.
///
/// With δ = 2 sin²(πl/2n), cosh γ_l = cosh γ₀ + δ, so
/// γ_l′ = γ₀′ sinh γ₀ / sinh γ_l and, differentiating twice,
/// γ_l″ = γ₀′² δ (cosh γ_l cosh γ₀ + 1)/sinh³ γ_l + γ₀″ sinh γ₀ / sinh γ_l:
/// no difference of nearly equal numbers, even where γ_l is small (near
/// T_c, small l). For large |γ₀| (low temperatures, or extremely high ones)
/// the hyperbolic functions are carried scaled by e^{−|γ₀|}.
fn kaufman_gamma(g0: Taylor, delta: f64) -> Taylor {
    let a = g0.v.abs();
    let (gamma, ratio, curvature) = if a < 20.0 {
        let d = 2.0 * (0.5 * g0.v).sinh().powi(2) + delta; // cosh γ_l − 1
        let sh = (d * (2.0 + d)).sqrt();
        let gamma = (d + sh).ln_1p();
        let (ch0, sh0) = (g0.v.cosh(), g0.v.sinh());
        (gamma, sh0 / sh, delta * ((1.0 + d) * ch0 + 1.0) / sh.powi(3))
    } else {
        let ea = (-a).exp();
        let ch0 = 0.5 * (1.0 + ea * ea); // cosh γ₀ · e^{−|γ₀|}
        let sh0 = (0.5 * (1.0 - ea * ea)).copysign(g0.v);
        let c = ch0 + delta * ea; // cosh γ_l · e^{−|γ₀|}
        let sh = ((c - ea) * (c + ea)).sqrt();
        (a + (c + sh).ln(), sh0 / sh, delta * (c * ch0 + ea * ea) * ea / sh.powi(3))
    };
    Taylor { v: gamma, d1: g0.d1 * ratio, d2: g0.d1 * g0.d1 * curvature + g0.d2 * ratio }
}

/// ln(2 cosh x) for x = m γ/2, with its derivatives in K.
fn log_2cosh(x: Taylor) -> Taylor {
    let e = (-2.0 * x.v.abs()).exp();
    let th = x.v.tanh();
    let sech2 = 4.0 * e / ((1.0 + e) * (1.0 + e));
    Taylor { v: x.v.abs() + e.ln_1p(), d1: th * x.d1, d2: sech2 * x.d1 * x.d1 + th * x.d2 }
}

/// ln(2 sinh x) for x > 0, with its derivatives in K.
fn log_2sinh(x: Taylor) -> Taylor {
    let e = (-2.0 * x.v).exp();
    let one_minus = -(-2.0 * x.v).exp_m1(); // 1 − e^{−2x}, exact for small x
    let coth = (1.0 + e) / one_minus;
    let csch2 = 4.0 * e / (one_minus * one_minus);
    Taylor { v: x.v + one_minus.ln(), d1: coth * x.d1, d2: -csch2 * x.d1 * x.d1 + coth * x.d2 }
}

impl IsingBonds {
    /// From Kaufman's Z at K > 0 on `n` (spins per row) × `m` (rows).
    fn kaufman(n: usize, m: usize, k: f64, stop: Stop<'_>) -> Result<Self> {
        if k < SMALL_K {
            return Self::kaufman_small_k(n, m, k, stop);
        }
        let half_m = 0.5 * m as f64;
        let scaled = |g: Taylor| Taylor { v: half_m * g.v, d1: half_m * g.d1, d2: half_m * g.d2 };
        // γ₀ = 2K + ln tanh K = 2(K − K*) with K* the dual coupling.
        // coth 2K as 1/tanh 2K: sinh 2K and cosh 2K overflow together at low T.
        let (s2k, coth2k) = ((2.0 * k).sinh(), 1.0 / (2.0 * k).tanh());
        let g0 = Taylor { v: 2.0 * k + k.tanh().ln(), d1: 2.0 + 2.0 / s2k, d2: -4.0 * coth2k / s2k };
        let x0 = scaled(g0);

        // The regular logarithms of the four products: [Z₁, Z₂, Z₃, Z₄ without sinh(x₀)].
        let mut logs = [TaylorSum::default(); 4];
        logs[2].add(log_2cosh(x0));
        for l in 1..2 * n {
            if (l + 1) % TERMS_BETWEEN_STOPS == 0 && stop() {
                return Err(PottsError::Interrupted);
            }
            let delta = 2.0 * (std::f64::consts::FRAC_PI_2 * l as f64 / n as f64).sin().powi(2);
            let x = scaled(kaufman_gamma(g0, delta));
            let odd = l % 2;
            logs[2 * (1 - odd)].add(log_2cosh(x));
            logs[2 * (1 - odd) + 1].add(log_2sinh(x));
        }
        // Z₄'s factor 2 sinh x₀ = e^{|x₀|}·g with g = sign(x₀)(1 − e^{−2|x₀|}):
        // the exponential joins the logarithm, g stays a factor (0 at T_c).
        let s = if x0.v < 0.0 { -1.0 } else { 1.0 };
        logs[3].add(Taylor { v: x0.v.abs(), d1: s * x0.d1, d2: s * x0.d2 });
        let e = (-2.0 * x0.v.abs()).exp();
        let g4 = Taylor { v: s * (1.0 - e), d1: 2.0 * x0.d1 * e, d2: 2.0 * e * (x0.d2 - 2.0 * s * x0.d1 * x0.d1) };
        let (d, second) = log_sum_derivatives(&logs.map(|l| l.total()), &g4);
        // The prefactor (2 sinh 2K)^{N/2}: N coth 2K and −2N/sinh² 2K.
        let sites = (n * m) as f64;
        // A variance rounds below zero only where it is ~10⁻¹⁶ of N anyway.
        let variance = (second - 2.0 * sites / (s2k * s2k)).max(0.0);
        Ok(IsingBonds { mean: sites * coth2k + d, variance })
    }

    /// [`IsingBonds::kaufman`] for K < [`SMALL_K`] (high temperatures).
    ///
    /// There the prefactor's derivatives, N coth 2K ≈ N/2K and
    /// −2N/sinh² 2K, cancel against the products' to leave about 2NK and 2N:
    /// a loss of log₁₀(1/K²) digits (all of them by K ~ 10⁻⁸). So the
    /// prefactor goes into the factors instead: each of a product's n
    /// factors takes (2 sinh 2K)^{m/2}, and with S = 2 sinh 2K,
    /// (2 sinh 2K)^{m/2} · 2 cosh(mγ/2) = e^{mφ/2}(1 + e^{−m|γ|}) where
    /// φ = |γ| + ln S = ln(P + √(P² − S²)), P = S cosh γ_l.
    /// With cosh γ_l = cosh γ₀ + δ_l and S cosh γ₀ = 2 cosh² 2K − 2 sinh 2K,
    /// P = 2 cosh² 2K − 2(1 − δ_l) sinh 2K: about 2 as K → 0, with every
    /// derivative of order one. The remaining terms, e^{−m|γ|}, are small.
    fn kaufman_small_k(n: usize, m: usize, k: f64, stop: Stop<'_>) -> Result<Self> {
        let half_m = 0.5 * m as f64;
        let (c, s) = ((2.0 * k).cosh(), (2.0 * k).sinh());
        let big_s = Taylor { v: 2.0 * s, d1: 4.0 * c, d2: 8.0 * s };
        let ln_s = Taylor { v: big_s.v.ln(), d1: 2.0 * c / s, d2: -4.0 / (s * s) };
        // (φ_l, |γ_l|) for δ_l = 2 sin²(πl/2n).
        let phi_and_gamma = |delta: f64| {
            let a = 1.0 - delta;
            let p = Taylor {
                v: 2.0 * c * c - 2.0 * a * s,
                d1: 8.0 * c * s - 4.0 * a * c,
                d2: 16.0 * (s * s + c * c) - 8.0 * a * s,
            };
            let r = (p.v * p.v - big_s.v * big_s.v).sqrt();
            let rr = p.v * p.d1 - big_s.v * big_s.d1; // r r′
            let r1 = rr / r;
            let r2 = (p.d1 * p.d1 + p.v * p.d2 - big_s.d1 * big_s.d1 - big_s.v * big_s.d2) / r - rr * rr / (r * r * r);
            let w = p.v + r;
            let f1 = (p.d1 + r1) / w;
            let phi = Taylor { v: w.ln(), d1: f1, d2: (p.d2 + r2) / w - f1 * f1 };
            let gamma = Taylor { v: phi.v - ln_s.v, d1: phi.d1 - ln_s.d1, d2: phi.d2 - ln_s.d2 };
            (phi, gamma)
        };
        let scaled = |g: Taylor| Taylor { v: half_m * g.v, d1: half_m * g.d1, d2: half_m * g.d2 };

        // The logarithms of [Z₁, Z₂, Z₃, Z₄ without the sign of sinh(x₀)],
        // each with its share of the prefactor.
        let mut logs = [TaylorSum::default(); 4];
        for l in 0..2 * n {
            if (l + 1) % TERMS_BETWEEN_STOPS == 0 && stop() {
                return Err(PottsError::Interrupted);
            }
            let delta = 2.0 * (std::f64::consts::FRAC_PI_2 * l as f64 / n as f64).sin().powi(2);
            let (phi, gamma) = phi_and_gamma(delta);
            let (base, x) = (scaled(phi), scaled(gamma)); // x = m|γ|/2
            // Odd l: Z₁ (cosh) and Z₂ (sinh); even l: Z₃ and Z₄.
            let cosh_product = 2 * (1 - l % 2);
            logs[cosh_product].add(base);
            logs[cosh_product].add(log_1p_exp_m2(x, 1.0));
            logs[cosh_product + 1].add(base);
            logs[cosh_product + 1].add(log_1p_exp_m2(x, -1.0));
        }
        // l = 0: γ₀ = 2K + ln tanh K < 0 here, so Z₄'s factor 2 sinh(mγ₀/2)
        // is −e^{m|γ₀|/2}(1 − e^{−m|γ₀|}): its sign joins the factor g4
        // (the logarithm above took ln(1 − e^{−m|γ₀|})).
        let minus = Taylor { v: -1.0, d1: 0.0, d2: 0.0 };
        let (d, variance) = log_sum_derivatives(&logs.map(|l| l.total()), &minus);
        Ok(IsingBonds { mean: d, variance: variance.max(0.0) })
    }
}

/// The smallest K the Kaufman sums are taken at ([`ising_torus`]): below
/// about 10⁻¹⁵⁰ their derivatives (of order 1/K²) overflow and lose the
/// terms they would cancel.
const SMALLEST_K: f64 = 1e-100;

/// Below this K the Kaufman sums take the prefactor into each factor
/// ([`IsingBonds::kaufman_small_k`]); above it, where T approaches T_c
/// (K_c = 0.4407) and γ₀ → 0, the form with γ₀ kept apart.
const SMALL_K: f64 = 0.2;

/// ln(1 ± e^{−2x}) for x > 0 (`sign` = ±1), with its derivatives in K.
/// With E = ±e^{−2x}: d/dx = −2E/(1 + E), d²/dx² = 4E/(1 + E)².
fn log_1p_exp_m2(x: Taylor, sign: f64) -> Taylor {
    let e = sign * (-2.0 * x.v).exp();
    let one = if sign > 0.0 { 1.0 + e } else { -(-2.0 * x.v).exp_m1() };
    let (a, b) = (-2.0 * e / one, 4.0 * e / (one * one));
    Taylor { v: one.ln(), d1: a * x.d1, d2: b * x.d1 * x.d1 + a * x.d2 }
}

/// First and second derivatives in K of ln Σᵢ e^{Lᵢ}·gᵢ, where L = `logs`
/// and g = (1, 1, 1, `g4`): the four Kaufman products.
///
/// Each Zᵢ = e^{Lᵢ}·gᵢ is taken relative to the largest e^{Lᵢ}:
/// Z′/Z = Σ e^{Lᵢ}(g L′ + g′) / Σ e^{Lᵢ} g, and (ln Z)″ from the centred
/// sum Σ e^{Lᵢ}[g(L″ + (L′ − D)²) + 2g′(L′ − D) + g″] / Z with D = Z′/Z,
/// which cancels nothing large.
fn log_sum_derivatives(logs: &[Taylor; 4], g4: &Taylor) -> (f64, f64) {
    let one = Taylor { v: 1.0, d1: 0.0, d2: 0.0 };
    let factors = [one, one, one, *g4];
    let top = logs.iter().map(|l| l.v).fold(f64::NEG_INFINITY, f64::max);
    let weights: Vec<f64> = logs.iter().map(|l| (l.v - top).exp()).collect();
    let (mut z, mut z1) = (0.0, 0.0);
    for ((w, l), g) in weights.iter().zip(logs).zip(&factors) {
        z += w * g.v;
        z1 += w * (g.v * l.d1 + g.d1);
    }
    let d = z1 / z;
    let mut z2 = 0.0;
    for ((w, l), g) in weights.iter().zip(logs).zip(&factors) {
        let u = l.d1 - d;
        z2 += w * (g.v * (l.d2 + u * u) + 2.0 * g.d1 * u + g.d2);
    }
    (d, z2 / z)
}

/// Arithmetic–geometric mean of two non-negative numbers (0 if either is).
fn agm(mut a: f64, mut b: f64) -> f64 {
    if a == 0.0 || b == 0.0 {
        return 0.0;
    }
    for _ in 0..64 {
        if (a - b).abs() <= 1e-16 * a {
            break;
        }
        (a, b) = (0.5 * (a + b), (a * b).sqrt());
    }
    a
}

/// Complete elliptic integral of the first kind K(k) (modulus k, 0 ≤ k ≤ 1):
/// K(k) = π / (2 AGM(1, √(1 − k²))). Infinite at k = 1.
fn elliptic_k(k: f64) -> f64 {
    let kp = (1.0 - k * k).max(0.0).sqrt();
    std::f64::consts::FRAC_PI_2 / agm(1.0, kp)
}

/// Exact energy per site of the q = 2 Potts model (J = 1) on the infinite
/// square lattice at temperature `t`, from Onsager's solution.
///
/// The q = 2 Potts model is the Ising model at T_I = 2t (Ising coupling 1),
/// with e_Potts = −1 + e_I / 2, where with K = 1/T_I
/// e_I = −coth 2K · [1 + (2/π)(2 tanh² 2K − 1) K₁(κ)], κ = 2 sinh 2K / cosh² 2K.
/// Continuous at the critical point (the K₁ term vanishes there); −2 at
/// t = 0, → −1 as t → ∞; NaN for negative or NaN `t`.
///
/// ```
/// let e = warpmc_potts::exact::ising_energy_per_site(0.75);
/// assert!((e + 1.975558).abs() < 1e-6);
/// ```
pub fn ising_energy_per_site(t: f64) -> f64 {
    if t.is_nan() || t < 0.0 {
        return f64::NAN;
    }
    if t == 0.0 {
        return -2.0;
    }
    if t.is_infinite() {
        return -1.0;
    }
    let two_k = 2.0 / (2.0 * t); // 2K with K = 1/T_I = 1/(2t)
    let th = two_k.tanh();
    // 2 sinh/cosh² written as 2 tanh/cosh: no overflow at low temperature.
    let kappa = (2.0 * th / two_k.cosh()).min(1.0);
    let coefficient = 2.0 * th * th - 1.0;
    let elliptic = if coefficient == 0.0 { 0.0 } else { coefficient * elliptic_k(kappa) };
    // At the critical point κ = 1 and K₁ diverges only logarithmically while
    // the coefficient vanishes linearly: the product's limit is 0.
    let elliptic = if elliptic.is_finite() { elliptic } else { 0.0 };
    let e_ising = -(1.0 / th) * (1.0 + std::f64::consts::FRAC_2_PI * elliptic);
    -1.0 + 0.5 * e_ising
}

/// Exact spontaneous magnetization of the q = 2 Potts model (J = 1) on the
/// infinite square lattice at temperature `t` (Yang):
/// m = (1 − sinh(2K)⁻⁴)^(1/8) with K = 1/(2t) below t_c = 1/ln(1 + √2), 0 at
/// and above it; 1 at t = 0, NaN for negative or NaN `t`.
///
/// This is the Ising |⟨σ⟩|, which equals the Potts order parameter
/// (q·n_max/N − 1)/(q − 1) for q = 2.
///
/// ```
/// let m = warpmc_potts::exact::ising_magnetization(0.75);
/// assert!((m - 0.98650).abs() < 1e-5);
/// assert_eq!(warpmc_potts::exact::ising_magnetization(2.0), 0.0);
/// ```
pub fn ising_magnetization(t: f64) -> f64 {
    if t.is_nan() || t < 0.0 {
        return f64::NAN;
    }
    if t == 0.0 {
        return 1.0;
    }
    let s = (1.0 / t).sinh(); // sinh 2K
    let x = 1.0 - s.powi(-4);
    if x <= 0.0 { 0.0 } else { x.powf(0.125) }
}

/// Critical temperature of the q-state Potts model on the square lattice with
/// J = 1 (self-duality): T_c = 1 / ln(1 + √q). Continuous transition for
/// q ≤ 4, first order for q ≥ 5.
///
/// ```
/// let tc = warpmc_potts::exact::potts_critical_temperature(2);
/// assert!((tc - 1.134592).abs() < 1e-6); // half the Ising T_c
/// ```
pub fn potts_critical_temperature(q: u32) -> f64 {
    1.0 / (1.0 + (q as f64).sqrt()).ln()
}

/// Energies per site (J = 1) of the ordered and disordered phases that
/// coexist at T_c for q ≥ 5, as `(e_ordered, e_disordered)`; `None` for
/// q ≤ 4, where the transition is continuous.
///
/// Baxter (1973): the mean of the two is e_mid = −(1 + 1/√q) and the latent
/// heat per site is L = 2(1 + 1/√q) · tanh(Θ/2) · Π_{n≥1} tanh²(nΘ) with
/// 2 cosh Θ = √q (Wu, Rev. Mod. Phys. 54, 235 (1982), with two bonds per
/// site); e_o = e_mid − L/2, e_d = e_mid + L/2. For q = 10: L ≈ 0.6961.
///
/// ```
/// let e = warpmc_potts::exact::potts_transition_energies(9).unwrap();
/// assert!((e.ordered + 1.633167).abs() < 1e-6 && (e.disordered + 1.033499).abs() < 1e-6);
/// assert!(warpmc_potts::exact::potts_transition_energies(4).is_none());
/// ```
pub fn potts_transition_energies(q: u32) -> Option<TransitionEnergies> {
    if q < 5 {
        return None;
    }
    let sq = (q as f64).sqrt();
    let theta = (sq / 2.0).acosh();
    let mut product = 1.0;
    for n in 1..=100_000u32 {
        let t = (n as f64 * theta).tanh();
        if t >= 1.0 {
            break;
        }
        product *= t * t;
    }
    let e_mid = -(1.0 + 1.0 / sq);
    let latent = 2.0 * (1.0 + 1.0 / sq) * (theta / 2.0).tanh() * product;
    Some(TransitionEnergies { ordered: e_mid - latent / 2.0, disordered: e_mid + latent / 2.0 })
}

/// The energies per site of the two phases that coexist at a first-order
/// transition.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TransitionEnergies {
    /// e_o, of the ordered phase.
    pub ordered: f64,
    /// e_d, of the disordered phase.
    pub disordered: f64,
}

/// One torus at one temperature, as `warpmc potts exact` and
/// `warpmc.potts.exact` report it.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct ExactRow {
    /// q.
    pub q: u32,
    /// J.
    pub coupling: f64,
    /// Sites per row.
    #[serde(rename = "L")]
    pub width: usize,
    /// Rows.
    pub height: usize,
    /// T.
    pub temperature: f64,
    /// ⟨e⟩ per site.
    pub energy: f64,
    /// Specific heat per site.
    pub specific_heat: f64,
    /// [`ExactTorus::method`].
    pub method: &'static str,
}

/// The exact values of every torus (width, height) at every temperature,
/// torus by torus. Every torus is checked before any is counted, so a bad
/// one late in the list costs no enumeration, and so is the memory the
/// rows take ([`PottsError::OutOfHostMemory`] rather than an abort).
pub fn exact_rows(q: u32, tori: &[(usize, usize)], temperatures: &[f64], coupling: f64) -> Result<Vec<ExactRow>> {
    exact_rows_or_stop(q, tori, temperatures, coupling, 0, &mut || false)
}

/// [`exact_rows`], for a caller that keeps `more_bytes_per_row` of its own
/// for each row (checked with the rows' memory, before any is computed),
/// giving up with [`PottsError::Interrupted`] when `stop` says so (see
/// [`Stop`]).
///
/// ```
/// use warpmc_potts::PottsError;
/// use warpmc_potts::exact::exact_rows_or_stop;
///
/// let rows = exact_rows_or_stop(2, &[(16, 16)], &[1.0, 2.0], 1.0, 0, &mut || false)?;
/// assert_eq!(rows.len(), 2);
/// let stopped = exact_rows_or_stop(2, &[(16, 16)], &[1.0, 2.0], 1.0, 0, &mut || true);
/// assert!(matches!(stopped, Err(PottsError::Interrupted)));
/// # Ok::<(), PottsError>(())
/// ```
pub fn exact_rows_or_stop(
    q: u32,
    tori: &[(usize, usize)],
    temperatures: &[f64],
    coupling: f64,
    more_bytes_per_row: u64,
    stop: Stop<'_>,
) -> Result<Vec<ExactRow>> {
    let mut rows = Vec::new();
    for_each_exact_row(q, tori, temperatures, coupling, more_bytes_per_row, stop, &mut |r| rows.push(r))?;
    Ok(rows)
}

/// [`exact_rows_or_stop`], handing each row to `row` as soon as it is
/// computed (in the same order), for a caller that shows them as they come.
/// Rows handed on before a stop or an error stay valid.
pub fn for_each_exact_row(
    q: u32,
    tori: &[(usize, usize)],
    temperatures: &[f64],
    coupling: f64,
    more_bytes_per_row: u64,
    stop: Stop<'_>,
    row: &mut dyn FnMut(ExactRow),
) -> Result<()> {
    if !coupling.is_finite() {
        return Err(PottsError::InvalidInput(format!("the coupling J must be finite, got {coupling}")));
    }
    // The bound `potts run` keeps (beyond it the sums over bonds and their
    // squares leave f64).
    if 2.0 * coupling.abs() > crate::model::MAX_ENERGY_SCALE {
        return Err(PottsError::InvalidInput(format!(
            "J = {coupling:?} gives energies up to {:e} per site; 2|J| must be at most {:e}, as for a run",
            2.0 * coupling.abs(),
            crate::model::MAX_ENERGY_SCALE
        )));
    }
    for &t in temperatures {
        check_temperature(t)?;
    }
    for &(w, h) in tori {
        ExactTorus::check(q, w, h)?;
    }
    let count = (tori.len() as u64).saturating_mul(temperatures.len() as u64);
    let row_bytes = (size_of::<ExactRow>() as u64).saturating_add(more_bytes_per_row);
    warpmc_host::check_allocation(&format!("keeping the {count} exact values"), count.saturating_mul(row_bytes))
        .map_err(|e| PottsError::OutOfHostMemory(format!("{e}; ask for fewer temperatures or sizes")))?;
    for &(width, height) in tori {
        if stop() {
            return Err(PottsError::Interrupted);
        }
        let exact = ExactTorus::new(q, width, height)?;
        for &temperature in temperatures {
            if stop() {
                return Err(PottsError::Interrupted);
            }
            let m = exact.moments_or_stop(temperature, coupling, stop)?;
            row(ExactRow {
                q,
                coupling,
                width,
                height,
                temperature,
                // + 0.0: an energy of J·0 with J = 0 is 0, not -0.
                energy: m.energy + 0.0,
                specific_heat: m.specific_heat + 0.0,
                method: exact.method_for(coupling),
            });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_coupling_gives_zeros_without_a_sign() {
        for q in [2, 3] {
            let rows = exact_rows(q, &[(3, 3)], &[1.0], 0.0).unwrap();
            assert_eq!(rows[0].energy.to_bits(), 0.0f64.to_bits(), "q = {q}");
            assert_eq!(rows[0].specific_heat.to_bits(), 0.0f64.to_bits(), "q = {q}");
        }
    }

    #[test]
    fn a_stop_is_heard_inside_kaufmans_sums_and_between_temperatures() {
        // 2^20 spins per row: 2^21 terms a temperature, 32 looks at the hook.
        let tori = [(1 << 20, 4)];
        for temperature in [1.0, 100.0] {
            // Asked before the torus, before the temperature, then inside
            // the sums, where the third answer stops it.
            let mut asked = 0;
            let r = exact_rows_or_stop(2, &tori, &[temperature], 1.0, 0, &mut || {
                asked += 1;
                asked == 3
            });
            assert!(matches!(r, Err(PottsError::Interrupted)), "{r:?}");
            assert_eq!(asked, 3);
        }
        let mut asked = 0;
        let rows = exact_rows_or_stop(2, &[(8, 8)], &[1.0, 2.0], 1.0, 0, &mut || {
            asked += 1;
            false
        })
        .unwrap();
        assert_eq!((rows.len(), asked), (2, 3));
        assert_eq!(rows, exact_rows(2, &[(8, 8)], &[1.0, 2.0], 1.0).unwrap());
    }

    /// q beyond a byte was counted as q mod 256 on 1-wide tori (q = 300
    /// gave q = 44's energy); it is refused as the simulations refuse it.
    #[test]
    fn q_beyond_a_byte_is_refused_not_wrapped() {
        assert!(ExactTorus::check(255, 1, 2).is_ok());
        for q in [256, 258, 300, 4096] {
            let e = ExactTorus::check(q, 1, 2).unwrap_err().to_string();
            assert!(e.contains("from 2 to 255"), "{q}: {e}");
            assert!(exact_rows(q, &[(1, 2)], &[1.0], 1.0).is_err(), "{q}");
        }
        // q = 255 on the 1 × 2 torus: each site's horizontal bond is to
        // itself (−J each, always), and two vertical bonds join the two
        // sites (−2J when they agree), so E/N = −1 − ⟨δ⟩ with
        // ⟨δ⟩ = q e^{2βJ} / (q e^{2βJ} + q(q − 1)).
        let m = ExactTorus::new(255, 1, 2).unwrap().moments(1.0, 1.0).unwrap();
        let (q, b) = (255.0f64, 1.0f64);
        let agree = q * (2.0 * b).exp();
        let e = -1.0 - agree / (agree + q * (q - 1.0));
        assert!((m.energy - e).abs() < 1e-12, "{} vs {e}", m.energy);
    }

    #[test]
    fn rows_that_do_not_fit_in_memory_are_refused_before_any_is_computed() {
        let mut asked = false;
        let e = exact_rows_or_stop(3, &[(6, 6)], &[1.0, 2.0], 1.0, 1 << 62, &mut || {
            asked = true;
            false
        })
        .unwrap_err();
        assert!(matches!(e, PottsError::OutOfHostMemory(_)), "{e}");
        assert!(e.to_string().contains("keeping the 2 exact values needs"), "{e}");
        assert!(!asked, "refused before the first torus");
    }

    #[test]
    fn exact_torus_takes_kaufman_for_ising_and_counts_other_q() {
        let k = ExactTorus::new(2, 24, 16).unwrap();
        assert!(matches!(k, ExactTorus::Kaufman { width: 24, height: 16, .. }));
        for (t, j) in [(0.8, 1.0), (1.1346, 1.0), (3.0, 1.0), (1.0, -1.0)] {
            assert_eq!(k.moments(t, j).unwrap(), ising_torus(24, 16, t, j).unwrap());
        }
        for (q, w, h) in [(3, 4, 4), (3, 3, 5), (5, 4, 4), (9, 3, 3), (4, 6, 6)] {
            let e = ExactTorus::new(q, w, h).unwrap();
            let dos = density_of_states(q, w, h);
            for t in [0.3, 0.7, 1.5] {
                assert_eq!(e.moments(t, 1.0).unwrap(), dos.moments(t, 1.0), "q = {q}, {w} × {h}, T = {t}");
            }
            assert!(e.moments(0.0, 1.0).is_err() && e.moments(f64::NAN, 1.0).is_err());
            assert!(e.moments(1.0, f64::INFINITY).is_err());
        }
    }

    /// The frustrated Ising antiferromagnet (J < 0, an odd side) has no
    /// Kaufman solution: small tori are counted, the rest refused.
    #[test]
    fn frustrated_ising_tori_are_counted() {
        for (w, h) in [(3, 3), (5, 4), (3, 7), (1, 5)] {
            let k = ExactTorus::new(2, w, h).unwrap();
            let dos = density_of_states(2, w, h);
            for t in [0.3, 1.0, 4.0] {
                assert_eq!(k.moments(t, -1.0).unwrap(), dos.moments(t, -1.0), "{w} × {h}, T = {t}");
                assert_eq!(k.moments(t, 1.0).unwrap(), ising_torus(w, h, t, 1.0).unwrap(), "{w} × {h}, T = {t}");
            }
            assert!(k.method_for(-1.0).starts_with("exact enumeration") && k.method_for(1.0).starts_with("Kaufman"));
        }
        // Even sides stay Kaufman's, which the count confirms.
        let (k, dos) = (ExactTorus::new(2, 4, 6).unwrap(), density_of_states(2, 4, 6));
        assert!(k.method_for(-0.5).starts_with("Kaufman"));
        let (a, b) = (k.moments(0.7, -0.5).unwrap(), dos.moments(0.7, -0.5));
        assert!(
            (a.energy - b.energy).abs() < 1e-12 && (a.specific_heat - b.specific_heat).abs() < 1e-11,
            "{a:?} {b:?}"
        );
        let e = ExactTorus::new(2, 15, 15).unwrap().moments(1.0, -1.0).unwrap_err().to_string();
        assert!(e.contains("needs both sides even, or a torus small enough to count (up to 11 × 11)"), "{e}");
    }

    /// Tori with both sides near 2^24 (2.8·10¹⁴ sites): away from T_c they
    /// are the infinite lattice to every digit, and the sums, of 2^25 terms
    /// reaching 10¹⁴, must keep them (plainly summed they gave c = 8732
    /// instead of 1.123 at 2^24 × (2^24 − 1)).
    #[test]
    fn the_largest_tori_keep_their_digits() {
        for t in [1.2, 3.0] {
            let reference = ising_torus(1 << 12, 1 << 12, t, 1.0).unwrap();
            for (w, h) in [(1 << 24, (1 << 24) - 1), (16_777_000, (1 << 24) - 1)] {
                let m = ising_torus(w, h, t, 1.0).unwrap();
                let close = |a: f64, b: f64| (a - b).abs() <= 1e-9 * b.abs();
                assert!(close(m.energy, reference.energy), "{w} × {h}, T = {t}: e = {}", m.energy);
                assert!(close(m.specific_heat, reference.specific_heat), "{w} × {h}, T = {t}: c = {}", m.specific_heat);
            }
        }
    }

    /// Tiny J and T: the moments are taken in bonds and scaled, so ⟨e²⟩'s
    /// underflow does not take the specific heat with it.
    #[test]
    fn tiny_couplings_keep_the_specific_heat() {
        let dos = density_of_states(3, 4, 4);
        let one = dos.moments(1.0, 1.0);
        let tiny = dos.moments(1e-200, 1e-200);
        assert!((tiny.specific_heat - one.specific_heat).abs() <= 1e-12 * one.specific_heat);
        assert!((tiny.energy / 1e-200 - one.energy).abs() <= 1e-12);
    }

    #[test]
    fn exact_torus_refuses_what_no_method_reaches_without_panicking() {
        for (q, w, h, largest) in
            [(3, 8, 8, "7 × 7"), (4, 7, 7, "6 × 6"), (9, 4, 4, "3 × 3"), (3, 4, 100, "7 × 7"), (255, 3, 3, "1 × 1")]
        {
            let e = ExactTorus::new(q, w, h).unwrap_err().to_string();
            assert!(e.contains(&format!("q = {q} on {w} × {h}")) && e.contains(largest), "{e}");
        }
        for (q, w, h) in
            [(1, 4, 4), (0, 4, 4), (5000, 1, 1), (3, 0, 4), (2, 4, 0), (3, usize::MAX, 2), (3, usize::MAX, usize::MAX)]
        {
            assert!(ExactTorus::new(q, w, h).is_err(), "q = {q}, {w} × {h}");
        }
        // Kaufman's sums have a term per row and column: sides up to 2^24.
        for (w, h) in [(MAX_KAUFMAN_SIDE + 1, 4), (4, usize::MAX), (usize::MAX, usize::MAX)] {
            let e = ExactTorus::check(2, w, h).unwrap_err().to_string();
            assert!(e.contains("sides up to 16777216"), "{e}");
            assert!(ising_torus(w, h, 1.0, 1.0).is_err());
        }
        assert!(ExactTorus::check(2, 4, MAX_KAUFMAN_SIDE).is_ok());
        // The largest reachable squares are reached.
        for (q, l) in [(3, 7), (4, 6), (5, 5), (8, 4), (16, 3)] {
            assert!(enumeration_reaches(q, l, l) && !enumeration_reaches(q, l + 1, l + 1), "q = {q}, L = {l}");
        }
    }

    /// Counts by brute force over all q^(W·H) configurations, each site
    /// contributing its bonds to (x+1 mod W, y) and (x, y+1 mod H).
    fn brute_force(q: u32, width: usize, height: usize) -> Vec<u128> {
        let n = width * height;
        let mut counts = vec![0u128; 2 * n + 1];
        let total = (q as usize).pow(n as u32);
        let mut spins = vec![0u32; n];
        for mut c in 0..total {
            for s in spins.iter_mut() {
                *s = c as u32 % q;
                c /= q as usize;
            }
            let mut k = 0;
            for y in 0..height {
                for x in 0..width {
                    let s = spins[y * width + x];
                    k += (s == spins[y * width + (x + 1) % width]) as usize;
                    k += (s == spins[((y + 1) % height) * width + x]) as usize;
                }
            }
            counts[k] += 1;
        }
        counts
    }

    #[test]
    fn transfer_matrix_matches_brute_force() {
        for &(q, w, h) in &[
            (2, 4, 4),
            (3, 2, 4),
            (3, 4, 2),
            (2, 2, 2),
            (2, 1, 1),
            (2, 3, 3),
            (3, 3, 2),
            (2, 6, 2),
            (4, 2, 3),
            (2, 2, 6),
            // q = 3 and 4 on square tori, the rows' classes in use; and
            // both orientations of a torus whose sides differ.
            (3, 3, 3),
            (4, 3, 3),
            (3, 4, 3),
            (3, 3, 4),
            (4, 4, 2),
            (3, 4, 4),
            (2, 5, 3),
            (2, 1, 5),
            (5, 2, 2),
        ] {
            let dos = density_of_states(q, w, h);
            assert_eq!(dos.sites, w * h);
            assert_eq!(dos.bonds, 2 * w * h);
            assert_eq!(dos.counts, brute_force(q, w, h), "q={q} {w}x{h}");
        }
    }

    #[test]
    fn totals_and_ground_states() {
        let dos = density_of_states(2, 4, 4);
        assert_eq!(dos.counts.iter().sum::<u128>(), 65536);
        assert_eq!(dos.counts[32], 2);
        // Bipartite lattice: two antiferromagnetic (checkerboard) states have no equal bond.
        assert_eq!(dos.counts[0], 2);

        let dos = density_of_states(3, 4, 4);
        assert_eq!(dos.counts.iter().sum::<u128>(), 3u128.pow(16));
        assert_eq!(dos.counts[32], 3);
        // One flipped spin breaks 4 bonds: 3 ground states · 16 sites · 2 other states.
        assert_eq!(dos.counts[28], 96);

        let dos = density_of_states(2, 6, 6);
        assert_eq!(dos.counts.iter().sum::<u128>(), 2u128.pow(36));
        // Ising symmetry k ↔ 2N − k on a bipartite lattice for q = 2.
        let rev: Vec<u128> = dos.counts.iter().rev().copied().collect();
        assert_eq!(dos.counts, rev);

        // q = 3 and 4 on 6 × 6: q^36 in all, q ground states, and q·N·(q − 1)
        // states one flip above them (4 bonds broken); none with one to
        // three unequal bonds (no domain wall on a torus is that short).
        for q in [3u32, 4] {
            let dos = density_of_states(q, 6, 6);
            let q = u128::from(q);
            assert_eq!(dos.counts.iter().sum::<u128>(), q.pow(36));
            assert_eq!(dos.counts[72], q);
            assert_eq!(dos.counts[68], q * 36 * (q - 1));
            assert_eq!((dos.counts[69], dos.counts[70], dos.counts[71]), (0, 0, 0));
        }
    }

    #[test]
    #[should_panic(expected = "q^min(width, height)")]
    fn too_wide_panics() {
        density_of_states(3, 8, 9);
    }

    #[test]
    #[should_panic(expected = "128 bits")]
    fn too_many_configurations_panic() {
        density_of_states(2, 2, 64);
    }

    #[test]
    fn rows_of_one_class_are_the_same_row() {
        // Shifted, reflected, renamed: one class; a different pattern: another.
        let c = canonical_row(&[2, 0, 0, 1]);
        for r in [[0, 0, 1, 2], [1, 0, 0, 2], [0, 2, 1, 1], [3, 1, 1, 0], [1, 2, 0, 0]] {
            assert_eq!(canonical_row(&r), c, "{r:?}");
        }
        assert_ne!(canonical_row(&[0, 1, 0, 2]), c);
        assert_eq!(canonical_row(&[5]), vec![0]);
    }

    #[test]
    fn moments_limits_and_derivative() {
        let dos = density_of_states(2, 4, 4);
        // Infinite temperature: each bond equal with probability 1/q.
        let m = dos.moments(f64::INFINITY, 1.0);
        assert!((m.energy + 1.0).abs() < 1e-12);
        // Very low temperature: ground state.
        let m = dos.moments(0.02, 1.0);
        assert!((m.energy + 2.0).abs() < 1e-12);
        assert!(m.specific_heat.abs() < 1e-6);
        // c = d⟨e⟩/dT.
        let t = 1.2;
        let h = 1e-5;
        let de = (dos.moments(t + h, 1.0).energy - dos.moments(t - h, 1.0).energy) / (2.0 * h);
        let m = dos.moments(t, 1.0);
        assert!((de - m.specific_heat).abs() < 1e-6, "{de} vs {}", m.specific_heat);
        assert!((m.energy_sq - m.energy * m.energy - m.specific_heat * t * t / 16.0).abs() < 1e-12);
        // No overflow at large J/T.
        let m = dos.moments(1e-3, 5.0);
        assert!((m.energy + 10.0).abs() < 1e-12);
    }

    #[test]
    fn moments_match_direct_sum_q3() {
        // Direct Boltzmann sum over all 3^8 configurations of a 4 × 2 lattice.
        let (q, w, h, t, j) = (3u32, 4usize, 2usize, 0.9, 1.3);
        let counts = brute_force(q, w, h);
        let n = (w * h) as f64;
        let (mut z, mut e1, mut e2) = (0.0, 0.0, 0.0);
        for (k, &c) in counts.iter().enumerate() {
            let e = -j * k as f64 / n;
            let wgt = c as f64 * (-n * e / t).exp();
            z += wgt;
            e1 += wgt * e;
            e2 += wgt * e * e;
        }
        let m = density_of_states(q, w, h).moments(t, j);
        assert!((m.energy - e1 / z).abs() < 1e-12);
        assert!((m.energy_sq - e2 / z).abs() < 1e-12);
        assert!((m.specific_heat - n * (e2 / z - (e1 / z).powi(2)) / (t * t)).abs() < 1e-9);
    }

    #[test]
    fn kaufman_torus_matches_enumeration() {
        let mut worst: f64 = 0.0;
        for &(w, h) in &[(4, 4), (4, 6), (6, 4), (6, 6), (2, 2), (2, 4), (4, 2), (3, 3), (3, 5), (5, 2), (6, 8), (8, 4)]
        {
            let dos = density_of_states(2, w, h);
            for i in 0..60 {
                let t = 0.3 + 0.1 * i as f64;
                let antiferro = if w % 2 == 0 && h % 2 == 0 { -1.0 } else { 0.7 };
                for j in [1.0, antiferro] {
                    let a = ising_torus(w, h, t, j).unwrap();
                    let b = dos.moments(t, j);
                    let re = ((a.energy - b.energy) / b.energy).abs();
                    let rc = ((a.specific_heat - b.specific_heat) / b.specific_heat).abs();
                    let r2 = ((a.energy_sq - b.energy_sq) / b.energy_sq).abs();
                    worst = worst.max(re).max(rc).max(r2);
                    assert!(re < 1e-10 && rc < 1e-10 && r2 < 1e-10, "{w}x{h} T={t} J={j}: {a:?} vs {b:?}");
                }
            }
        }
        eprintln!("worst relative difference {worst:e}");
    }

    /// ⟨e⟩ at infinite temperature: each bond to another spin equal half
    /// the time, a bond of a spin to itself (a side of 1) always.
    fn limit_energy(w: usize, h: usize) -> f64 {
        let bond = |side: usize| if side == 1 { -1.0 } else { -0.5 };
        bond(w) + bond(h)
    }

    #[test]
    fn kaufman_torus_keeps_its_digits_at_high_temperature() {
        // Far above T_c the energy's distance from −J and the specific heat
        // are small numbers; they must come out to many digits, not as the
        // rounding left of two large cancelling terms. Against the
        // enumeration (exact sums of positive terms) up to T = 10⁶ ...
        for &(w, h) in &[(4, 4), (2, 6), (3, 5), (6, 6), (4, 1), (1, 4), (1, 1), (2, 2)] {
            let dos = density_of_states(2, w, h);
            // Var(e), on to f64's largest T (a single row, m = 1, is where
            // the sums lose the most digits).
            let limit = dos.moments(1e12, 1.0);
            let limit = limit.energy_sq - limit.energy * limit.energy;
            for t in [1e12, 1e50, 1e100, 1e200, f64::MAX] {
                let a = ising_torus(w, h, t, 1.0).unwrap();
                let got = a.energy_sq - a.energy * a.energy;
                assert!((got - limit).abs() <= 1e-9 * limit + 1e-15, "{w}x{h} T={t:e}: Var(e) {got} vs {limit}");
                assert!(t < 1e20 || (a.energy - limit_energy(w, h)).abs() < 1e-12, "{w}x{h} T={t:e}: {a:?}");
            }
            if w * h == 1 {
                // Nothing fluctuates: e = −2J, c = 0 (checked above).
                continue;
            }
            // The first two on either side of K = SMALL_K, where the sums
            // change form.
            let switch = 0.5 / SMALL_K;
            for t in [switch * (1.0 - 1e-9), switch * (1.0 + 1e-9), 2.6, 4.0, 10.0, 100.0, 1e3, 1e4, 1e5, 1e6] {
                let (a, b) = (ising_torus(w, h, t, 1.0).unwrap(), dos.moments(t, 1.0));
                let re = (a.energy / b.energy - 1.0).abs();
                let rd = ((a.energy + 1.0) / (b.energy + 1.0) - 1.0).abs();
                let rc = (a.specific_heat / b.specific_heat - 1.0).abs();
                assert!(re < 1e-13 && rd < 1e-8 && rc < 1e-8, "{w}x{h} T={t}: {a:?} vs {b:?}");
                if t < 3.0 {
                    assert!(rc < 1e-12, "{w}x{h} T={t}: {a:?} vs {b:?}");
                }
            }
        }
        // ... and against the high-temperature series beyond, where the
        // torus is the infinite lattice to this order (its shortest winding
        // loop is L bonds long): with t = tanh K, K = J/2T,
        // e + 1 = −t − 2t³(1 − t²) + O(t⁵) and c = 2K²(1 − t²) + O(K⁴).
        for l in [16, 64, 1024] {
            for t in [1e3, 1e5, 1e8, 1e12, 1e15, 1e100] {
                let m = ising_torus(l, l, t, 1.0).unwrap();
                let k: f64 = 0.5 / t;
                let th = k.tanh();
                let series_e = -th - 2.0 * th.powi(3);
                let series_c = 2.0 * k * k * (1.0 - th * th);
                // (e itself holds e + 1 to f64's spacing near 1.)
                assert!((m.energy + 1.0 - series_e).abs() < 1e-6 * series_e.abs() + 4e-16, "L={l} T={t:e}: {m:?}");
                assert!((m.specific_heat / series_c - 1.0).abs() < 1e-5, "L={l} T={t:e}: {m:?}");
            }
            // Var(e) = c·T²/N = J²(1 − t²)/2N, also where K² and c
            // underflow (and K itself, beyond T ≈ 10³⁰⁸).
            for t in [1e3, 1e100, 1e200, 1e300, f64::MAX] {
                let m = ising_torus(l, l, t, 1.0).unwrap();
                let th = (0.5 / t).tanh();
                let variance = (1.0 - th * th) / (2.0 * (l * l) as f64);
                let got = m.energy_sq - m.energy * m.energy;
                assert!((got / variance - 1.0).abs() < 1e-5, "L={l} T={t:e}: Var(e) {got} vs {variance}");
                assert!(m.energy == -1.0 || t < 1e20, "L={l} T={t:e}: {m:?}");
            }
        }
    }

    #[test]
    fn kaufman_torus_approaches_onsager_away_from_tc() {
        // The finite-size corrections of a torus decay as e^{−L/ξ} away from
        // T_c: at L = 512 they are below rounding from T = 0.5 to 5.
        for t in [0.5, 0.7, 0.9, 1.0, 1.3, 1.6, 2.0, 3.0, 5.0] {
            let e = ising_torus(512, 512, t, 1.0).unwrap().energy;
            assert!((e - ising_energy_per_site(t)).abs() < 1e-11, "T={t}: {e} vs {}", ising_energy_per_site(t));
        }
        // Smaller tori converge to the same values from a distance.
        let t = 1.5;
        let diffs: Vec<f64> = [8, 16, 32]
            .iter()
            .map(|&l| (ising_torus(l, l, t, 1.0).unwrap().energy - ising_energy_per_site(t)).abs())
            .collect();
        assert!(diffs[0] > diffs[1] && diffs[1] > diffs[2], "{diffs:?}");
    }

    #[test]
    fn kaufman_torus_at_tc_has_the_finite_size_laws_of_ferdinand_and_fisher() {
        // At T_c the energy approaches Onsager's as 1/L and the specific heat
        // grows as A₀ ln L with A₀ = (8/π) K_c² = (2/π) ln²(1 + √2) (Ising
        // K_c = ln(1 + √2)/2; c per site is the same for the Potts form).
        let tc = potts_critical_temperature(2);
        let ec = ising_energy_per_site(tc);
        let a0 = 2.0 / std::f64::consts::PI * (1.0 + 2f64.sqrt()).ln().powi(2);
        let at = |l: usize| ising_torus(l, l, tc, 1.0).unwrap();
        for l in [64, 128, 256] {
            let (small, large) = (at(l), at(2 * l));
            let ratio = (small.energy - ec) / (large.energy - ec);
            assert!((ratio - 2.0).abs() < 1e-3, "L={l}: energy corrections shrink by {ratio}");
            let step = large.specific_heat - small.specific_heat;
            assert!((step / (a0 * 2f64.ln()) - 1.0).abs() < 0.01, "L={l}: c grows by {step}");
        }
    }

    /// The temperature of the specific-heat maximum of an L × L torus, by
    /// golden-section search.
    fn specific_heat_peak(l: usize) -> (f64, f64) {
        let c = |t: f64| ising_torus(l, l, t, 1.0).unwrap().specific_heat;
        let r = (5f64.sqrt() - 1.0) / 2.0;
        let (mut a, mut b) = (0.9, 1.6);
        let (mut x1, mut x2) = (b - r * (b - a), a + r * (b - a));
        let (mut c1, mut c2) = (c(x1), c(x2));
        while b - a > 1e-9 {
            if c1 > c2 {
                b = x2;
                (x2, c2) = (x1, c1);
                x1 = b - r * (b - a);
                c1 = c(x1);
            } else {
                a = x1;
                (x1, c1) = (x2, c2);
                x2 = a + r * (b - a);
                c2 = c(x2);
            }
        }
        let t = 0.5 * (a + b);
        (t, c(t))
    }

    #[test]
    fn kaufman_torus_specific_heat_peak_moves_to_tc() {
        let tc = potts_critical_temperature(2);
        let mut last = (f64::INFINITY, 0.0);
        for l in [8, 16, 32, 64, 128] {
            let (t, c) = specific_heat_peak(l);
            let shift = t - tc;
            // Above T_c on a torus, closer with each doubling (by about half:
            // the shift scales as 1/L), and the peak is finite but growing.
            assert!(shift > 0.0 && shift < last.0 * 0.6, "L={l}: peak at {t}, shift {shift} after {}", last.0);
            assert!(c.is_finite() && c > last.1, "L={l}: peak height {c} after {}", last.1);
            last = (shift, c);
        }
        assert!(last.0 < 0.01 * tc);
    }

    #[test]
    fn kaufman_torus_is_symmetric_in_its_sides() {
        for &(w, h) in &[(8, 32), (3, 17), (64, 256), (2, 100), (511, 6)] {
            for t in [0.6, 1.0, 1.134, 1.2, 2.5] {
                let (a, b) = (ising_torus(w, h, t, 1.0).unwrap(), ising_torus(h, w, t, 1.0).unwrap());
                assert!((a.energy - b.energy).abs() < 1e-12 * a.energy.abs(), "{w}x{h} T={t}: {a:?} {b:?}");
                assert!(
                    (a.specific_heat - b.specific_heat).abs() < 1e-10 * a.specific_heat,
                    "{w}x{h} T={t}: {a:?} {b:?}"
                );
            }
        }
    }

    #[test]
    fn exact_tori_reach_their_ground_state_at_the_smallest_temperatures() {
        // J/T · k and K² overflow long before T reaches f64's smallest
        // normal number; the answer there is the ground state, C = 0.
        let tiny = [1e-3, 1e-100, 1e-160, 1e-200, 1e-300, f64::MIN_POSITIVE];
        for t in tiny {
            for (j, ground) in [(1.0, -2.0), (10.0, -20.0), (-1.0, 0.0)] {
                for l in [4, 16, 64] {
                    let m = ising_torus(l, l, t, j).unwrap();
                    assert_eq!((m.energy, m.specific_heat), (ground, 0.0), "L={l} T={t:e} J={j}: {m:?}");
                    assert!(m.energy_sq.is_finite(), "L={l} T={t:e} J={j}: {m:?}");
                }
                for q in [2, 3] {
                    let m = ExactTorus::new(q, 4, 4).unwrap().moments(t, j).unwrap();
                    assert_eq!((m.energy, m.specific_heat), (ground, 0.0), "q={q} T={t:e} J={j}: {m:?}");
                }
            }
        }
    }

    #[test]
    fn kaufman_torus_is_finite_everywhere_and_refuses_bad_input() {
        for l in [2, 16, 512, 2048] {
            for t in [1e-3, 0.05, 0.3, 0.5, 1.0, potts_critical_temperature(2), 2.0, 5.0, 100.0, 1e6] {
                let m = ising_torus(l, l, t, 1.0).unwrap();
                assert!(
                    m.energy.is_finite() && m.energy_sq.is_finite() && m.specific_heat >= 0.0,
                    "L={l} T={t}: {m:?}"
                );
                assert!((-2.0..=-1.0).contains(&m.energy), "L={l} T={t}: {m:?}");
            }
        }
        // Scale invariance: only J/T matters, and J = 0 has no energy.
        let (a, b) = (ising_torus(32, 16, 1.1, 1.0).unwrap(), ising_torus(32, 16, 2.2, 2.0).unwrap());
        assert!((2.0 * a.energy - b.energy).abs() < 1e-12 && (a.specific_heat - b.specific_heat).abs() < 1e-12);
        let zero = ising_torus(8, 8, 1.0, 0.0).unwrap();
        assert_eq!((zero.energy, zero.specific_heat), (0.0, 0.0));
        assert!(ising_torus(0, 4, 1.0, 1.0).is_err());
        assert!(ising_torus(4, 4, 0.0, 1.0).is_err());
        assert!(ising_torus(4, 4, f64::NAN, 1.0).is_err());
        assert!(ising_torus(4, 4, 1.0, f64::INFINITY).is_err());
        assert!(ising_torus(4, 3, 1.0, -1.0).unwrap_err().to_string().contains("even"));
    }

    #[test]
    fn elliptic_integral() {
        assert!((elliptic_k(0.0) - std::f64::consts::FRAC_PI_2).abs() < 1e-15);
        // K(1/√2) = Γ(1/4)² / (4√π).
        assert!((elliptic_k(std::f64::consts::FRAC_1_SQRT_2) - 1.854_074_677_301_372).abs() < 1e-14);
        assert!(elliptic_k(1.0).is_infinite());
    }

    #[test]
    fn onsager_and_yang() {
        assert!((ising_energy_per_site(0.75) + 1.975558).abs() < 1e-6, "{}", ising_energy_per_site(0.75));
        assert!((ising_magnetization(0.75) - 0.98650).abs() < 1e-5, "{}", ising_magnetization(0.75));
        let tc = potts_critical_temperature(2);
        assert!((tc - 1.0 / (1.0 + 2f64.sqrt()).ln()).abs() < 1e-15);
        assert!(ising_magnetization(tc) < 1e-3);
        assert!(ising_magnetization(tc * (1.0 - 1e-12)) < 0.1);
        assert!(ising_magnetization(tc * 0.999) > 0.3);
        assert_eq!(ising_magnetization(tc * 1.001), 0.0);
        // Energy at T_c: Ising −√2, i.e. Potts −1 − 1/√2; continuous through T_c.
        let ec = -1.0 - std::f64::consts::FRAC_1_SQRT_2;
        assert!((ising_energy_per_site(tc) - ec).abs() < 1e-9, "{}", ising_energy_per_site(tc));
        assert!((ising_energy_per_site(tc * (1.0 + 1e-9)) - ec).abs() < 1e-6);
        assert!((ising_energy_per_site(tc * (1.0 - 1e-9)) - ec).abs() < 1e-6);
        // Limits.
        assert_eq!(ising_energy_per_site(0.0), -2.0);
        assert!((ising_energy_per_site(1e-3) + 2.0).abs() < 1e-12);
        assert!((ising_energy_per_site(1e6) + 1.0).abs() < 1e-5);
        assert!(ising_energy_per_site(-1.0).is_nan());
        // c = de/dT is positive and peaks near T_c.
        let c = |t: f64| (ising_energy_per_site(t + 1e-6) - ising_energy_per_site(t - 1e-6)) / 2e-6;
        assert!(c(tc * 0.99) > c(tc * 0.9) && c(tc * 1.01) > c(tc * 1.1) && c(0.5) > 0.0);
    }

    #[test]
    fn onsager_matches_large_finite_lattice_far_from_tc() {
        // Away from T_c the finite-size corrections of a 6 × 6 torus are tiny.
        let dos = density_of_states(2, 6, 6);
        for t in [0.5, 0.7, 3.0] {
            let diff = dos.moments(t, 1.0).energy - ising_energy_per_site(t);
            assert!(diff.abs() < 2e-3, "t={t}: {diff}");
        }
    }

    #[test]
    fn baxter_transition() {
        let TransitionEnergies { ordered: eo, disordered: ed } = potts_transition_energies(9).unwrap();
        assert!((eo + 1.633167).abs() < 1e-6, "{eo}");
        assert!((ed + 1.033499).abs() < 1e-6, "{ed}");
        assert!((ed - eo - 0.599668).abs() < 1e-6);
        let TransitionEnergies { ordered: eo, disordered: ed } = potts_transition_energies(10).unwrap();
        // Literature: L ≈ 0.696 for q = 10 (e.g. Baxter 1973; Janke & Kappler's simulations).
        assert!((ed - eo - 0.696049).abs() < 1e-6, "{}", ed - eo);
        assert!((eo + 1.664252).abs() < 1e-6 && (ed + 0.968203).abs() < 1e-6, "{eo} {ed}");
        for q in 2..5 {
            assert!(potts_transition_energies(q).is_none());
        }
        // The latent heat grows with q and vanishes as q → 4⁺.
        let l = |q| potts_transition_energies(q).map(|e| e.disordered - e.ordered).unwrap();
        assert!(l(5) > 0.0 && l(5) < 0.06 && l(6) > l(5) && l(100) > l(20));
        assert!((potts_critical_temperature(10) - 0.701_231).abs() < 1e-6);
    }
}
