//! Results for the infinite square lattice: Onsager's energy and Yang's
//! spontaneous magnetization (q = 2), Baxter's transition temperature and
//! coexisting energies (any q).

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
pub(super) fn elliptic_k(k: f64) -> f64 {
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
/// q ≤ 4, first order for q ≥ 5. The formula is the self-dual point for
/// any q > 0 (q = 1, bond percolation at p = 1/2, gives 1/ln 2); q = 0
/// gives infinity.
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
