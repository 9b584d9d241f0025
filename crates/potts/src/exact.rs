//! Exact results the Monte Carlo is validated against.
//!
//! Three kinds of reference, each exact rather than itself a simulation:
//!
//! * [`density_of_states`]: the number of configurations of a small periodic
//!   lattice with each number of equal-neighbour bonds, computed by a row
//!   transfer matrix. From it [`DensityOfStates::moments`] gives the energy
//!   and specific heat of that finite lattice at any temperature, which a
//!   correct sampler must reproduce within its statistical error (no
//!   finite-size extrapolation involved).
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

/// Largest number of row states, q^width, that [`density_of_states`]
/// accepts.
pub const MAX_ROW_STATES: usize = 4096;

/// The exact density of states of the q-state Potts model on a small periodic
/// lattice: `counts[k]` configurations have exactly k equal-neighbour bonds.
#[derive(Clone, Debug, PartialEq)]
pub struct DensityOfStates {
    /// Number of sites N = width · height.
    pub sites: usize,
    /// Number of bonds, 2N (k runs over 0..=bonds).
    pub bonds: usize,
    /// `counts[k]`: number of configurations with k equal-neighbour bonds;
    /// `bonds + 1` entries summing to q^N.
    pub counts: Vec<f64>,
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
/// `width` × `height` lattice by their number of equal-neighbour bonds.
///
/// The bonds are those a simulation sums over: for every site (x, y) the bond
/// to ((x + 1) mod W, y) and the bond to (x, (y + 1) mod H). So a lattice of
/// width 2 has two bonds between the two sites of each row (width 1: a bond
/// from each site to itself, always equal), and likewise for height. Neither
/// dimension needs to be even here.
///
/// Method: a transfer matrix over rows. Rows are numbered in base q (q^W row
/// states). For each choice of first row the counts of partial lattices are
/// carried row by row as a polynomial in the number of equal bonds, indexed
/// by the current row; the horizontal bonds of a row (wrap bond included) and
/// the vertical bonds to the row above are added as each row is appended, and
/// the bonds from the last row back to the first close the torus. The first
/// rows are processed in parallel. Cost O(q^(3W) · H · W · H) additions and
/// memory O(q^(2W) + q^W · W · H): instant for q^W ≤ 100 or so (q = 2 up to
/// width 6, q = 3 up to width 4), slow well before the hard limit.
///
/// Counts are held as `f64`; they are exact integers while q^(W·H) ≤ 2⁵³
/// (e.g. q = 3 on 4 × 4, q = 2 on 6 × 6 or 6 × 8) and correctly rounded
/// approximations beyond.
///
/// # Panics
///
/// If `q`, `width` or `height` is 0, or q^width exceeds [`MAX_ROW_STATES`].
///
/// ```
/// let dos = warpmc_potts::exact::density_of_states(2, 4, 4);
/// assert_eq!(dos.counts.iter().sum::<f64>(), 65536.0);
/// assert_eq!(dos.counts[32], 2.0); // the two ground states
/// ```
pub fn density_of_states(q: u32, width: usize, height: usize) -> DensityOfStates {
    assert!(q >= 1 && width >= 1 && height >= 1, "density_of_states needs q, width and height ≥ 1");
    let qs = q as usize;
    let rows =
        u32::try_from(width).ok().and_then(|w| qs.checked_pow(w)).filter(|&r| r <= MAX_ROW_STATES).unwrap_or_else(
            || panic!("density_of_states: q^width must be at most {MAX_ROW_STATES} (q = {q}, width = {width})"),
        );

    let digits = |mut c: usize| -> Vec<usize> {
        (0..width)
            .map(|_| {
                let d = c % qs;
                c /= qs;
                d
            })
            .collect()
    };
    let row_digits: Vec<Vec<usize>> = (0..rows).map(digits).collect();
    // Equal horizontal bonds within a row, wrap bond included.
    let horizontal: Vec<usize> =
        row_digits.iter().map(|d| (0..width).filter(|&x| d[x] == d[(x + 1) % width]).count()).collect();
    // Equal vertical bonds between row a (above) and row b (below).
    let vertical: Vec<u8> = row_digits
        .iter()
        .flat_map(|a| row_digits.iter().map(move |b| a.iter().zip(b).filter(|(u, v)| u == v).count() as u8))
        .collect();

    let sites = width * height;
    let bonds = 2 * sites;
    let len = bonds + 1;

    let counts = (0..rows)
        .into_par_iter()
        .map(|first| {
            // dp[c * len + k]: partial lattices of the rows so far whose last
            // row is c and which have k equal bonds so far.
            let mut dp = vec![0.0f64; rows * len];
            let mut next = vec![0.0f64; rows * len];
            dp[first * len + horizontal[first]] = 1.0;
            let mut degree = horizontal[first]; // highest k that can be nonzero
            for _ in 1..height {
                next.fill(0.0);
                for c in 0..rows {
                    let src = &dp[c * len..c * len + degree + 1];
                    if src.iter().all(|&v| v == 0.0) {
                        continue;
                    }
                    let vrow = &vertical[c * rows..(c + 1) * rows];
                    for (n, (&h, &v)) in horizontal.iter().zip(vrow).enumerate() {
                        let start = n * len + h + v as usize;
                        for (dst, &s) in next[start..start + src.len()].iter_mut().zip(src) {
                            *dst += s;
                        }
                    }
                }
                std::mem::swap(&mut dp, &mut next);
                degree += 2 * width;
            }
            // Close the torus: bonds from the last row down to the first.
            let mut out = vec![0.0f64; len];
            for c in 0..rows {
                let shift = vertical[c * rows + first] as usize;
                for (k, &s) in dp[c * len..c * len + degree + 1].iter().enumerate() {
                    if s != 0.0 {
                        out[k + shift] += s;
                    }
                }
            }
            out
        })
        .reduce(
            || vec![0.0f64; len],
            |mut a, b| {
                a.iter_mut().zip(&b).for_each(|(x, y)| *x += y);
                a
            },
        );

    DensityOfStates { sites, bonds, counts }
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
        let terms: Vec<(f64, f64)> = self
            .counts
            .iter()
            .enumerate()
            .filter(|&(_, &c)| c > 0.0)
            .map(|(k, &c)| (-coupling * k as f64 / n, c.ln() + coupling * k as f64 / temperature))
            .collect();
        let max = terms.iter().map(|&(_, lw)| lw).fold(f64::NEG_INFINITY, f64::max);
        let (mut z, mut s1, mut s2) = (0.0, 0.0, 0.0);
        for &(e, lw) in &terms {
            let w = (lw - max).exp();
            z += w;
            s1 += w * e;
            s2 += w * e * e;
        }
        let energy = s1 / z;
        let energy_sq = s2 / z;
        // Variance from centred terms: no cancellation between ⟨e²⟩ and ⟨e⟩².
        let variance = terms.iter().map(|&(e, lw)| (lw - max).exp() * (e - energy) * (e - energy)).sum::<f64>() / z;
        ExactMoments { energy, energy_sq, specific_heat: n * variance / (temperature * temperature) }
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Counts by brute force over all q^(W·H) configurations, each site
    /// contributing its bonds to (x+1 mod W, y) and (x, y+1 mod H).
    fn brute_force(q: u32, width: usize, height: usize) -> Vec<f64> {
        let n = width * height;
        let mut counts = vec![0.0; 2 * n + 1];
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
            counts[k] += 1.0;
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
        assert_eq!(dos.counts.iter().sum::<f64>(), 65536.0);
        assert_eq!(dos.counts[32], 2.0);
        // Bipartite lattice: two antiferromagnetic (checkerboard) states have no equal bond.
        assert_eq!(dos.counts[0], 2.0);

        let dos = density_of_states(3, 4, 4);
        assert_eq!(dos.counts.iter().sum::<f64>(), 3f64.powi(16));
        assert_eq!(dos.counts[32], 3.0);
        // One flipped spin breaks 4 bonds: 3 ground states · 16 sites · 2 other states.
        assert_eq!(dos.counts[28], 96.0);

        let dos = density_of_states(2, 6, 6);
        assert_eq!(dos.counts.iter().sum::<f64>(), 2f64.powi(36));
        // Ising symmetry k ↔ 2N − k on a bipartite lattice for q = 2.
        let rev: Vec<f64> = dos.counts.iter().rev().copied().collect();
        assert_eq!(dos.counts, rev);
    }

    #[test]
    #[should_panic(expected = "q^width")]
    fn too_wide_panics() {
        density_of_states(3, 8, 2);
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
            let wgt = c * (-n * e / t).exp();
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
