//! The autocorrelation study of `warpmc potts bench --autocorrelation`:
//! the integrated autocorrelation time of the energy, τ_int(e), of each
//! update algorithm at the transition of the q-state model, for a range of
//! lattice sizes, and the dynamic exponent z of τ_int ∝ L^z fitted to them;
//! the same for the order parameter m beside it.
//!
//! τ is counted in sweeps, each algorithm's own (for Wolff, round(N/⟨|C|⟩)
//! clusters, N sites flipped on average: [`warpmc_potts::wolff`]), so the
//! numbers compare the algorithms at about equal work per site. Every run
//! starts ordered, is thermalised, and measures the energy after every
//! sweep; τ_int and its error come from the Γ-method with Sokal's window
//! ([`warpmc_potts::stats`]), each series over its own window. The run
//! doubles until it spans `taus` of the larger of the two τ_int (estimates
//! from short runs come out low, so a run stops only once it is long by
//! its own measure) or the row's time budget is spent; its first tenth is
//! then dropped as thermalisation, and the row reports how many τ_int of
//! each the rest covered.
//!
//! The literature's z for local updates is that of the slowest mode (the
//! order parameter's exponential time). The energy couples to that mode
//! weakly: its Sokal window stops before the weak slow tail, and on
//! lattices up to a few hundred sites a side its fitted exponent comes out
//! well below the order parameter's.
//!
//! Literature for the 2D Ising model (q = 2): local updates have
//! z ≈ 2.17 (Nightingale and Blöte 1996); Swendsen–Wang about 0.2–0.3
//! (or a logarithm; Swendsen and Wang 1987, Baillie and Coddington 1991);
//! Wolff, counted in sweeps, about 0.25 (Wolff 1989, Coddington and
//! Baillie 1992).

use std::time::Instant;

use serde::Serialize;
use warpmc_gpu::Device;
use warpmc_potts::stats::GammaMethod;
use warpmc_potts::{Algorithm, PottsModel, Simulation};

use crate::error::{BenchError, Result};
use crate::potts::bench_temperature;

/// What to measure.
#[derive(Clone, Debug)]
pub struct AutocorrelationConfig {
    /// q of the model (at its transition temperature 1/ln(1 + √q)).
    pub q: u32,
    /// Square lattice sizes L.
    pub sizes: Vec<usize>,
    /// The algorithms, one row each per size.
    pub algorithms: Vec<Algorithm>,
    /// Where to run (Wolff runs on the CPU in any case).
    pub device: Device,
    /// Length of each run in units of its larger τ_int (of e and m).
    pub taus: f64,
    /// Fewest sweeps of a run (before the thermalisation is dropped).
    pub min_sweeps: u64,
    /// Most seconds a row may take (the run is shortened to fit, and the
    /// row says how many τ_int it covered).
    pub max_seconds: f64,
    /// Seed of every chain.
    pub seed: u64,
}

/// τ_int of one algorithm at one size.
#[derive(Clone, Debug, Serialize)]
pub struct TauRow {
    /// The algorithm's name.
    pub algorithm: String,
    /// L.
    pub size: usize,
    /// Where it ran.
    pub backend: String,
    /// Thermalisation sweeps.
    pub therm: u64,
    /// Sweeps measured (one measurement each).
    pub sweeps: u64,
    /// τ_int of the energy per site, in sweeps.
    pub tau_int: f64,
    /// Its statistical error.
    pub tau_int_err: f64,
    /// τ_int of the order parameter, in sweeps.
    pub tau_int_m: f64,
    /// Its statistical error.
    pub tau_int_m_err: f64,
    /// Measured sweeps per τ_int of the energy.
    pub taus: f64,
    /// Measured sweeps per τ_int of the order parameter.
    pub taus_m: f64,
    /// ⟨e⟩ and its error (a check: the same for every algorithm).
    pub energy: f64,
    /// Error of ⟨e⟩.
    pub energy_err: f64,
    /// Seconds of the main run.
    pub seconds: f64,
    /// Site updates (sites × sweeps) per nanosecond, measurements included.
    pub updates_per_ns: f64,
}

/// The dynamic exponents of one algorithm: τ_int ∝ L^z, fitted by weighted
/// least squares to ln τ_int against ln L.
#[derive(Clone, Debug, Serialize)]
pub struct ExponentFit {
    /// The algorithm's name.
    pub algorithm: String,
    /// z of the energy's τ_int.
    pub z: f64,
    /// Its standard error (from the τ_int errors).
    pub z_err: f64,
    /// z of the order parameter's τ_int.
    pub z_m: f64,
    /// Its standard error.
    pub z_m_err: f64,
    /// The sizes fitted.
    pub sizes: Vec<usize>,
}

/// Measures every (algorithm, size) of `cfg`, handing each row to `report`
/// as it is done, and returns each algorithm's fitted exponent (with two
/// sizes or more).
pub fn run_autocorrelation_study<E: From<BenchError>>(
    cfg: &AutocorrelationConfig,
    mut report: impl FnMut(&TauRow) -> std::result::Result<(), E>,
) -> std::result::Result<Vec<ExponentFit>, E> {
    if cfg.sizes.is_empty() || cfg.algorithms.is_empty() {
        return Err(BenchError::Invalid("the autocorrelation study needs sizes and algorithms".into()).into());
    }
    if !(cfg.taus > 0.0 && cfg.max_seconds > 0.0) {
        return Err(BenchError::Invalid("the run length and time budget must be positive".into()).into());
    }
    let mut fits = Vec::new();
    for &algorithm in &cfg.algorithms {
        let mut rows = Vec::new();
        for &l in &cfg.sizes {
            let row = measure(cfg, algorithm, l)?;
            report(&row)?;
            rows.push(row);
        }
        if rows.len() >= 2 {
            fits.push(fit_exponent(algorithm, &rows));
        }
    }
    Ok(fits)
}

/// One chain of `algorithm` on an L × L lattice, doubled until it spans
/// `cfg.taus` of its τ_int or the budget is spent.
fn measure(cfg: &AutocorrelationConfig, algorithm: Algorithm, l: usize) -> Result<TauRow> {
    let model = PottsModel::new(cfg.q, l, l)?;
    let t = bench_temperature(cfg.q);
    // A key of each size's own, so that the sizes of the fit draw
    // unrelated numbers.
    let key = warpmc_potts::algorithm::mix_key(cfg.seed, &[l as u64]);
    let mut sim = Simulation::with_algorithm(model.clone(), algorithm, t, &cfg.device)?.with_seed(key);
    let started = Instant::now();
    let (mut e, mut m) = series(&mut sim, cfg.min_sweeps.max(100))?;
    loop {
        let kept = e.len() / 10;
        let longest = tau(&e[kept..]).tau_int.max(tau(&m[kept..]).tau_int);
        let spent = started.elapsed().as_secs_f64();
        // Doubling takes as long again as the run so far.
        if (e.len() - kept) as f64 >= cfg.taus * longest || 2.0 * spent > cfg.max_seconds {
            break;
        }
        let more = series(&mut sim, e.len() as u64)?;
        e.extend(more.0);
        m.extend(more.1);
    }
    let seconds = started.elapsed().as_secs_f64();
    let therm = e.len() / 10;
    let (g, gm) = (tau(&e[therm..]), tau(&m[therm..]));
    let sweeps = (e.len() - therm) as u64;
    Ok(TauRow {
        algorithm: algorithm.name().to_string(),
        size: l,
        backend: sim.backend_name().to_string(),
        therm: therm as u64,
        sweeps,
        tau_int: g.tau_int,
        tau_int_err: g.tau_int_err,
        tau_int_m: gm.tau_int,
        tau_int_m_err: gm.tau_int_err,
        taus: sweeps as f64 / g.tau_int,
        taus_m: sweeps as f64 / gm.tau_int,
        energy: g.value,
        energy_err: g.error,
        seconds,
        updates_per_ns: (e.len() as f64 * model.sites() as f64) / (seconds * 1e9),
    })
}

/// `n` sweeps; the energy per site and the order parameter after each.
fn series(sim: &mut Simulation, n: u64) -> Result<(Vec<f64>, Vec<f64>)> {
    let (mut e, mut m) = (Vec::with_capacity(n as usize), Vec::with_capacity(n as usize));
    for _ in 0..n {
        let x = sim.sweeps(1)?.measure()?;
        e.push(x.energy);
        m.push(x.magnetization);
    }
    Ok((e, m))
}

/// The Γ-method's estimate of one series' mean, with its τ_int.
fn tau(series: &[f64]) -> warpmc_potts::stats::GammaEstimate {
    GammaMethod::new(vec![vec![series.to_vec()]]).analyze(|v| v[0])
}

/// Both exponents of one algorithm's rows.
fn fit_exponent(algorithm: Algorithm, rows: &[TauRow]) -> ExponentFit {
    let (z, z_err) = power_law(rows.iter().map(|r| (r.size, r.tau_int, r.tau_int_err)));
    let (z_m, z_m_err) = power_law(rows.iter().map(|r| (r.size, r.tau_int_m, r.tau_int_m_err)));
    ExponentFit {
        algorithm: algorithm.name().to_string(),
        z,
        z_err,
        z_m,
        z_m_err,
        sizes: rows.iter().map(|r| r.size).collect(),
    }
}

/// The slope of ln τ against ln L by weighted least squares (weights 1/σ²,
/// σ the relative error of τ), and its standard error.
fn power_law(points: impl Iterator<Item = (usize, f64, f64)>) -> (f64, f64) {
    let points: Vec<(f64, f64, f64)> =
        points.map(|(l, t, e)| ((l as f64).ln(), t.ln(), (e / t).max(1e-6).powi(-2))).collect();
    let sw: f64 = points.iter().map(|p| p.2).sum();
    let mx = points.iter().map(|p| p.2 * p.0).sum::<f64>() / sw;
    let my = points.iter().map(|p| p.2 * p.1).sum::<f64>() / sw;
    let sxx: f64 = points.iter().map(|p| p.2 * (p.0 - mx).powi(2)).sum();
    let sxy: f64 = points.iter().map(|p| p.2 * (p.0 - mx) * (p.1 - my)).sum();
    (sxy / sxx, sxx.recip().sqrt())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(size: usize, tau_int: f64) -> TauRow {
        TauRow {
            algorithm: "metropolis".into(),
            size,
            backend: "cpu".into(),
            therm: 0,
            sweeps: 0,
            tau_int,
            tau_int_err: 0.05 * tau_int,
            tau_int_m: 2.0 * tau_int,
            tau_int_m_err: 0.1 * tau_int,
            taus: 0.0,
            taus_m: 0.0,
            energy: 0.0,
            energy_err: 0.0,
            seconds: 0.0,
            updates_per_ns: 0.0,
        }
    }

    #[test]
    fn the_fit_recovers_a_power_law() {
        let rows: Vec<TauRow> = [16, 32, 64, 128].iter().map(|&l| row(l, 0.3 * (l as f64).powf(2.17))).collect();
        let fit = fit_exponent(Algorithm::Metropolis, &rows);
        assert!((fit.z - 2.17).abs() < 1e-9 && (fit.z_m - 2.17).abs() < 1e-9, "{fit:?}");
        // Four points with 5 % errors over a factor 8 in L.
        assert!(fit.z_err > 0.01 && fit.z_err < 0.05, "{fit:?}");
    }
}
