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
//! ([`warpmc_potts::stats`]), e's window no shorter than m's (as in the
//! protocol's results). A pilot run, doubled until it spans 100 of
//! its own τ_int (or a quarter of the time budget), sizes the main run to a
//! number of τ_int, within a time budget per row; the rows report how many
//! τ_int of e each run covered.
//!
//! The literature's z for local updates is that of the slowest mode (the
//! order parameter's exponential time); τ_int of the energy couples to it
//! weakly, and on lattices up to a few hundred sites a side its fitted
//! exponent comes out well below it.
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
    /// Length of each main run in units of the pilot's τ_int.
    pub taus: f64,
    /// Fewest measured sweeps of a main run.
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

/// One chain of `algorithm` on an L × L lattice: a pilot run, then a run
/// of about `cfg.taus` τ_int.
fn measure(cfg: &AutocorrelationConfig, algorithm: Algorithm, l: usize) -> Result<TauRow> {
    let model = PottsModel::new(cfg.q, l, l)?;
    let t = bench_temperature(cfg.q);
    let mut sim = Simulation::with_algorithm(model.clone(), algorithm, t, &cfg.device)?.with_seed(cfg.seed);
    // Pilot: a first τ and the speed, from a run doubled until it spans 100
    // of its τ (or a quarter of the budget).
    let pilot_therm = 200u64;
    sim.sweeps(pilot_therm)?;
    let started = Instant::now();
    let mut pilot = series(&mut sim, 1000)?;
    let mut tau0 = tau(&pilot).max(1.0);
    while (pilot.0.len() as f64) < 100.0 * tau0 && started.elapsed().as_secs_f64() < 0.25 * cfg.max_seconds {
        let more = series(&mut sim, pilot.0.len() as u64)?;
        pilot.0.extend(more.0);
        pilot.1.extend(more.1);
        tau0 = tau(&pilot).max(1.0);
    }
    let per_sweep = started.elapsed().as_secs_f64() / pilot.0.len() as f64;
    // (The pilot has thermalised the chain for well over 20 of its τ.)
    let budget = (cfg.max_seconds / per_sweep.max(1e-9)) as u64;
    let sweeps = ((cfg.taus * tau0) as u64).max(cfg.min_sweeps).min(budget.max(1000));
    let started = Instant::now();
    let (e, m) = series(&mut sim, sweeps)?;
    let seconds = started.elapsed().as_secs_f64();
    // Both series in one analysis, as the protocol's results do: e's
    // window is then no shorter than m's, so the slow mode that the
    // energy couples to weakly is summed over rather than cut off.
    let both = GammaMethod::new(vec![vec![e, m]]);
    let (g, gm) = (both.analyze(|v| v[0]), both.analyze(|v| v[1]));
    Ok(TauRow {
        algorithm: algorithm.name().to_string(),
        size: l,
        backend: sim.backend_name().to_string(),
        therm: pilot_therm + pilot.0.len() as u64,
        sweeps,
        tau_int: g.tau_int,
        tau_int_err: g.tau_int_err,
        tau_int_m: gm.tau_int,
        tau_int_m_err: gm.tau_int_err,
        taus: sweeps as f64 / g.tau_int,
        energy: g.value,
        energy_err: g.error,
        seconds,
        updates_per_ns: (sweeps * model.sites() as u64) as f64 / (seconds * 1e9),
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

/// τ_int of e, its window at least m's.
fn tau((e, m): &(Vec<f64>, Vec<f64>)) -> f64 {
    GammaMethod::new(vec![vec![e.clone(), m.clone()]]).analyze(|v| v[0]).tau_int
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
