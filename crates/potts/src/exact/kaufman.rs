//! Kaufman's exact partition function of the Ising torus (Kaufman 1949, in
//! the form of Ferdinand and Fisher 1969), differentiated twice for the
//! energy and specific heat of tori of any size.

use crate::error::{PottsError, Result};
use crate::model::check_temperature;

use super::{ExactMoments, SATURATED_BETA, Stop, check_frustrated, frustrated};

/// The longest side [`ising_torus`] takes, 2^24: its sums have a term per
/// row and column, and take about 3 s at this size.
pub const MAX_KAUFMAN_SIDE: usize = 1 << 24;

/// The sides [`ising_torus`] takes.
pub(super) fn check_kaufman_sides(width: usize, height: usize) -> Result<()> {
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
/// [`density_of_states`](super::density_of_states) (the same bonds,
/// doubled on a side of length 2) and of
/// [`ising_energy_per_site`](super::ising_energy_per_site), which this
/// approaches as both sides grow.
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

/// [`ising_torus`], giving up when `stop` says so.
pub(super) fn ising_torus_or_stop(
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
        // ExactTorus counts it where it is small enough.
        check_frustrated(width, height, coupling)?;
        return Err(PottsError::InvalidInput(format!(
            "Kaufman's solution does not cover a frustrated {width} × {height} Ising antiferromagnet (J < 0, an odd \
             side); ExactTorus counts it"
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
        let (d, second) = log_sum_derivatives(&logs, &g4);
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
        let (d, variance) = log_sum_derivatives(&logs, &minus);
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
pub(super) const SMALL_K: f64 = 0.2;

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
/// Each Zᵢ = e^{Lᵢ}·gᵢ is taken relative to the largest, t:
/// with wᵢ = e^{Lᵢ − Lₜ} and δᵢ = Lᵢ′ − Lₜ′,
/// Z′/Z = Lₜ′ + Σ wᵢ(gᵢδᵢ + gᵢ′) / Σ wᵢgᵢ, and (ln Z)″ from the centred
/// sum Σ wᵢ[gᵢ(Lᵢ″ + uᵢ²) + 2gᵢ′uᵢ + gᵢ″] / Σ wᵢgᵢ with uᵢ = Lᵢ′ − Z′/Z,
/// which cancels nothing large. The differences Lᵢ − Lₜ and δᵢ are taken
/// from the compensated sums before they are rounded: each Lᵢ is about
/// N, so rounded first they would carry an error of N ulps into the
/// weights (near T_c, where the products compete, 10⁻⁹ of the specific
/// heat at L = 65536).
fn log_sum_derivatives(logs: &[TaylorSum; 4], g4: &Taylor) -> (f64, f64) {
    let one = Taylor { v: 1.0, d1: 0.0, d2: 0.0 };
    let factors = [one, one, one, *g4];
    let top = (0..4).max_by(|&a, &b| logs[a].total().v.total_cmp(&logs[b].total().v)).unwrap_or(0);
    let t = &logs[top];
    let minus_top =
        |l: &TaylorSum, part: fn(&Taylor) -> f64| (part(&l.sum) - part(&t.sum)) + (part(&l.carry) - part(&t.carry));
    let weights: Vec<f64> = logs.iter().map(|l| minus_top(l, |x| x.v).exp()).collect();
    let deltas: Vec<f64> = logs.iter().map(|l| minus_top(l, |x| x.d1)).collect();
    let (mut z, mut z1) = (0.0, 0.0);
    for ((w, delta), g) in weights.iter().zip(&deltas).zip(&factors) {
        z += w * g.v;
        z1 += w * (g.v * delta + g.d1);
    }
    let shift = z1 / z;
    let mut z2 = 0.0;
    for (((w, delta), l), g) in weights.iter().zip(&deltas).zip(logs).zip(&factors) {
        let u = delta - shift;
        z2 += w * (g.v * (l.total().d2 + u * u) + 2.0 * g.d1 * u + g.d2);
    }
    (t.total().d1 + shift, z2 / z)
}
