//! Observables: what one measurement records and what a temperature's
//! measurements add up to.
//!
//! - energy per site e = H/N;
//! - order parameter m = (q·N_max/N − 1)/(q − 1), N_max the population of
//!   the most populated state (1 when ordered, about 0 when disordered);
//! - the moments ⟨eᵏ⟩, ⟨mᵏ⟩ for k = 1…4;
//! - Binder cumulant U = 1 − ⟨m⁴⟩/(3⟨m²⟩²);
//! - specific heat per site c = N(⟨e²⟩ − ⟨e⟩²)/T²;
//! - susceptibility per site χ = N(⟨m²⟩ − ⟨m⟩²)/T;
//!
//! with errors and integrated autocorrelation times by the Γ-method (see
//! [`stats`](crate::stats)).

use serde::{Deserialize, Serialize};

use crate::lattice::Census;
use crate::model::PottsModel;
use crate::stats::{Estimate, GammaMethod};

/// One measurement of a lattice.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Measurement {
    /// Energy per site.
    pub energy: f64,
    /// Order parameter.
    pub magnetization: f64,
}

impl Measurement {
    /// The measurement a census gives (a census of `model`'s lattice: one
    /// of another model gives numbers that mean nothing).
    pub fn from_census(model: &PottsModel, census: &Census) -> Self {
        let n = model.sites() as f64;
        let q = model.q() as f64;
        let state0 = census.counts().first().copied().unwrap_or(0);
        Measurement {
            energy: model.energy(census.equal_bonds(), state0) / n,
            magnetization: (q * census.max_count() as f64 / n - 1.0) / (q - 1.0),
        }
    }
}

/// Results at one temperature.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TemperatureResult {
    /// L, the lattice width (of a study of several sizes, the size this
    /// result belongs to).
    #[serde(rename = "L", default)]
    pub size: usize,
    /// T.
    pub temperature: f64,
    /// ⟨e⟩.
    pub energy: f64,
    /// Error of ⟨e⟩.
    pub energy_err: f64,
    /// ⟨m⟩.
    pub magnetization: f64,
    /// Error of ⟨m⟩.
    pub magnetization_err: f64,
    /// Binder cumulant.
    pub binder: f64,
    /// Error of the Binder cumulant.
    pub binder_err: f64,
    /// Specific heat per site.
    pub specific_heat: f64,
    /// Error of the specific heat.
    pub specific_heat_err: f64,
    /// Susceptibility per site.
    pub susceptibility: f64,
    /// Error of the susceptibility.
    pub susceptibility_err: f64,
    /// ⟨e⟩, ⟨e²⟩, ⟨e³⟩, ⟨e⁴⟩.
    pub energy_moments: [f64; 4],
    /// Their errors.
    pub energy_moments_err: [f64; 4],
    /// ⟨m⟩ … ⟨m⁴⟩.
    pub magnetization_moments: [f64; 4],
    /// Their errors.
    pub magnetization_moments_err: [f64; 4],
    /// Integrated autocorrelation time of e, in sweeps.
    pub tau_int_energy: f64,
    /// Its statistical error (Madras and Sokal 1988).
    pub tau_int_energy_err: f64,
    /// Integrated autocorrelation time of m, in sweeps.
    pub tau_int_magnetization: f64,
    /// Its statistical error.
    pub tau_int_magnetization_err: f64,
    /// Measurements used (all samples).
    pub measurements: usize,
    /// Sweeps per sample at this temperature (thermalisation + measurement).
    pub sweeps: u64,
    /// Samples.
    pub samples: u32,
    /// Fewer measurements than [`TOO_SHORT_TAUS`] times the larger τ_int of
    /// e and m (or τ_int unknown), or e or m never changed (their error,
    /// then 0, is no error bar), or made fewer than [`MIN_EXCURSIONS`]
    /// excursions to one side of its mean, or `slow_mode`, or `transient`,
    /// or q = 2 Metropolis that rejects too seldom, or with parallel
    /// tempering fewer than [`TOO_SHORT_TAUS`] times
    /// [`replica_tau_int`](Self::replica_tau_int): the errors, and the
    /// derived quantities most of all, are not to be trusted.
    #[serde(default)]
    pub too_short: bool,
    /// The batch means of e, m, the specific heat, the susceptibility or
    /// the Binder cumulant spread more than their autocorrelation functions
    /// allow (a slow mode the run has not resolved: metastable phases,
    /// replicas at a first-order transition); their errors and τ_int were
    /// widened to that spread ([`stats`](crate::stats)), and `too_short` is
    /// set.
    #[serde(default)]
    pub slow_mode: bool,
    /// The first sixteenth of the measurements of e or m (of each sample)
    /// differs from the rest by more than [`TRANSIENT_Z`] errors: most
    /// likely the chain was still leaving its start when measuring began (a
    /// metastable ordered start above a first-order T_c, domains of a
    /// random start below T_c), so every mean, and the derived quantities
    /// most of all, carry that start; `too_short` is set. More
    /// thermalisation (`therm`) cures it. Near a transition about one row
    /// in 1,000 of chains long in equilibrium is flagged by chance
    /// (docs/statistics.md).
    #[serde(default)]
    pub transient: bool,
    /// Site updates per nanosecond over this temperature's sweeps (timing:
    /// the one field that differs between identical runs).
    pub flips_per_ns: f64,
    /// "cpu" or "cuda".
    pub backend: String,
    /// With parallel tempering: the acceptance rate of the replica swaps
    /// offered between this temperature and the next (None for the last,
    /// `null` in JSON lines and empty in CSV; NaN when none was offered).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exchange_acceptance: Option<f64>,
    /// With parallel tempering: the round trips (first → last → first
    /// temperature) all replicas completed in the run (the same on every
    /// row).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub round_trips: Option<u64>,
    /// With parallel tempering: the integrated autocorrelation time, in
    /// sweeps, of the replicas' summed energy (the same on every row; see
    /// [`summed_energy_tau_int`](crate::tempering::summed_energy_tau_int)).
    /// Swaps leave that sum unchanged, so it relaxes only as fast as the
    /// replicas do: at a first-order transition, as fast as the share of
    /// replicas in each phase changes. A run that measured fewer than
    /// [`TOO_SHORT_TAUS`] of it has every row `too_short`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replica_tau_int: Option<f64>,
}

/// Analyses the measurement series of one temperature (one series per
/// sample, measurements `measure_every` sweeps apart): every mean and
/// derived quantity with its error by the Γ-method (see [`stats`](crate::stats)).
pub fn analyze(model: &PottsModel, temperature: f64, series: &[Vec<Measurement>], measure_every: u64) -> Analysis {
    // Columns e, e², e³, e⁴, m, m², m³, m⁴ of each sample, then d and d²
    // for d = e − e₀ (e₀ the first energy measured): the specific heat's
    // variance from d, whose moments do not cancel where e is large and
    // nearly constant (a frozen lattice of large J: ⟨e²⟩ − ⟨e⟩² from e's
    // own moments came out negative).
    let e0 = series.iter().find_map(|s| s.first()).map_or(0.0, |x| x.energy);
    let replicas: Vec<Vec<Vec<f64>>> = series
        .iter()
        .map(|s| {
            let column = |k: usize, x: &Measurement| match k {
                0..4 => x.energy.powi(k as i32 + 1),
                4..8 => x.magnetization.powi(k as i32 - 3),
                _ => (x.energy - e0).powi(k as i32 - 7),
            };
            (0..10).map(|k| s.iter().map(|x| column(k, x)).collect()).collect()
        })
        .collect();
    let g = GammaMethod::new(replicas);
    let n = model.sites() as f64;
    let t = temperature;
    let energy = g.analyze(|v| v[0]);
    let magnetization = g.analyze(|v| v[4]);
    // Divided by T twice: T² underflows to zero below T ≈ 1e-154.
    let mut specific_heat = g.analyze(|v| n * (v[9] - v[8] * v[8]) / t / t);
    let mut susceptibility = g.analyze(|v| n * (v[5] - v[4] * v[4]) / t);
    // A variance taken about the estimated mean is low by that mean's own
    // variance, σ²(ē) = 2τ_int·σ²/N, which the Γ-method has just given:
    // added back, the specific heat and χ are unbiased to first order
    // (docs/statistics.md, step 7).
    specific_heat.value += unbiasing(energy.error) * n / t / t;
    susceptibility.value += unbiasing(magnetization.error) * n / t;
    let binder = g.analyze(|v| 1.0 - v[7] / (3.0 * v[5] * v[5]));
    // The Binder cumulant is checked too: a mode that only changes the
    // shape of m's distribution (⟨m⁴⟩ at fixed ⟨m²⟩) shows in no other.
    let slow_mode = energy.slow_mode
        || magnetization.slow_mode
        || specific_heat.slow_mode
        || susceptibility.slow_mode
        || binder.slow_mode;
    let transient = still_leaving_the_start(series);
    let moment = |i: usize| if i == 0 { energy.estimate() } else { g.estimate(move |v| v[i]) };
    let m_moment = |i: usize| if i == 4 { magnetization.estimate() } else { g.estimate(move |v| v[i]) };
    Analysis {
        energy: [0, 1, 2, 3].map(moment),
        magnetization: [4, 5, 6, 7].map(m_moment),
        binder: binder.estimate(),
        specific_heat: specific_heat.estimate(),
        susceptibility: susceptibility.estimate(),
        tau_int_energy: energy.tau_int * measure_every as f64,
        tau_int_energy_err: energy.tau_int_err * measure_every as f64,
        tau_int_magnetization: magnetization.tau_int * measure_every as f64,
        tau_int_magnetization_err: magnetization.tau_int_err * measure_every as f64,
        measurements: g.measurements(),
        // A series that never changed has no error bar to give (the 0 it
        // reports is not one): the run saw no fluctuation to measure.
        too_short: slow_mode
            || transient
            || never_changed(&energy)
            || never_changed(&magnetization)
            || too_few_excursions(series)
            || spans_too_few_taus(
                g.measurements(),
                measure_every,
                energy.tau_int.max(magnetization.tau_int) * measure_every as f64,
            ),
        slow_mode,
        transient,
    }
}

/// The part of each sample's measurements that the transient check
/// compares with the rest: the first 1/`TRANSIENT_HEAD`.
pub const TRANSIENT_HEAD: usize = 16;

/// How many errors apart the head's and the rest's means of e or m must be
/// for a row to be flagged `transient`. Far beyond a normal tail: near a
/// transition the order parameter's rare large dips make a head's mean
/// skewed, and chains run long in equilibrium reached 4.5 errors in about
/// one row in 300 (docs/statistics.md has the rates measured), where the
/// starts still being left behind measured 7 to 38.
pub const TRANSIENT_Z: f64 = 5.0;

/// Whether the first 1/[`TRANSIENT_HEAD`] of the samples' measurements of e
/// or m (pooled over samples) differs from the rest by more than
/// [`TRANSIENT_Z`] errors, the errors taken from the rest by the
/// Γ-method. A chain that is still relaxing from its start when measuring
/// begins shows here, though its own autocorrelation time, lengthened by
/// the drift, may let it pass the other checks. Samples of fewer than
/// 2·[`TRANSIENT_HEAD`] measurements are not checked.
fn still_leaving_the_start(series: &[Vec<Measurement>]) -> bool {
    let checked: Vec<&Vec<Measurement>> = series.iter().filter(|s| s.len() >= 2 * TRANSIENT_HEAD).collect();
    if checked.is_empty() {
        return false;
    }
    let head_len = |s: &[Measurement]| s.len() / TRANSIENT_HEAD;
    let rest: Vec<Vec<Vec<f64>>> = checked
        .iter()
        .map(|s| {
            let rest = &s[head_len(s)..];
            vec![rest.iter().map(|x| x.energy).collect(), rest.iter().map(|x| x.magnetization).collect()]
        })
        .collect();
    let g = GammaMethod::new(rest);
    let head_n: usize = checked.iter().map(|s| head_len(s)).sum();
    let rest_n = g.measurements();
    let quantities: [fn(&Measurement) -> f64; 2] = [|x| x.energy, |x| x.magnetization];
    quantities.iter().enumerate().any(|(k, quantity)| {
        let rest = g.analyze(|v| v[k]);
        let head = checked.iter().flat_map(|s| s[..head_len(s)].iter().map(quantity)).sum::<f64>() / head_n as f64;
        let apart = (head - rest.value).abs();
        // σ_head² = C_F/N_head and σ_rest² = C_F/N_rest, C_F = σ_rest²·N_rest.
        // A rest that never changed has no error to compare with (the row
        // is too_short for that already).
        let scale = rest.error * (1.0 + rest_n as f64 / head_n as f64).sqrt();
        scale > 0.0 && apart > TRANSIENT_Z * scale
    })
}

/// What a variance about the estimated mean lacks: the squared error of
/// that mean (0 where there is none to give: fewer than two measurements).
fn unbiasing(error_of_mean: f64) -> f64 {
    if error_of_mean.is_finite() { error_of_mean * error_of_mean } else { 0.0 }
}

/// Whether a quantity's measurements were all the same (at least two of
/// them): its error comes out as exactly 0.
fn never_changed(g: &crate::stats::GammaEstimate) -> bool {
    g.error == 0.0
}

/// The fewest excursions e and m must each make to either side of their
/// mean (the runs of measurements on one side, counted within each sample
/// and summed over samples; the side with fewer counts) for a row's errors
/// to be trusted. A series that sat at one value but for a burst or two (a
/// rare excitation at low T: the error a count of few events, far from
/// Gaussian) can pass the τ_int rule, its τ_int estimated from those bursts
/// alone. Independent measurements make about N/4 excursions to each side:
/// at the τ_int rule's least, 50 of them, fewer than 10 in 3 % of runs
/// (normal values; 8.5 % for exponential ones), at 75 or more in none of
/// 20,000; correlated ones that span 100 τ_int make more.
pub const MIN_EXCURSIONS: usize = 10;

/// Whether e or m makes fewer than [`MIN_EXCURSIONS`] excursions to one
/// side of its mean (pooled over samples). A sample ends its runs: samples
/// of one measurement each are as many excursions.
fn too_few_excursions(series: &[Vec<Measurement>]) -> bool {
    let count: usize = series.iter().map(Vec::len).sum();
    if count < 2 {
        return false;
    }
    let quantities: [fn(&Measurement) -> f64; 2] = [|x| x.energy, |x| x.magnetization];
    quantities.iter().any(|quantity| {
        let mean = series.iter().flatten().map(quantity).sum::<f64>() / count as f64;
        // Runs above and below the mean (values at the mean belong to the
        // run they interrupt).
        let mut runs = [0usize; 2];
        for s in series {
            let mut side = None;
            for x in s {
                let d = quantity(x) - mean;
                if d == 0.0 {
                    continue;
                }
                let now = usize::from(d > 0.0);
                if side != Some(now) {
                    runs[now] += 1;
                    side = Some(now);
                }
            }
        }
        runs[0].min(runs[1]) < MIN_EXCURSIONS
    })
}

/// Measurements (all samples together) a temperature needs, in units of its
/// slower integrated autocorrelation time, before its error bars are
/// trusted (the errors of moment ratios such as the Binder cumulant are
/// 20–30 % small in variance below about 150 τ_int; docs/statistics.md).
pub const TOO_SHORT_TAUS: f64 = 100.0;

/// Whether `measurements` (pooled over samples), `measure_every` sweeps
/// apart, span fewer than [`TOO_SHORT_TAUS`] times `tau_int` (in sweeps;
/// NaN when it could not be estimated).
pub fn spans_too_few_taus(measurements: usize, measure_every: u64, tau_int: f64) -> bool {
    !tau_int.is_finite() || (measurements as f64) * (measure_every as f64) < TOO_SHORT_TAUS * tau_int
}

/// The statistics of one temperature, before timing and run metadata.
#[derive(Clone, Debug, PartialEq)]
pub struct Analysis {
    /// ⟨eᵏ⟩, k = 1…4.
    pub energy: [Estimate; 4],
    /// ⟨mᵏ⟩, k = 1…4.
    pub magnetization: [Estimate; 4],
    /// Binder cumulant.
    pub binder: Estimate,
    /// Specific heat per site.
    pub specific_heat: Estimate,
    /// Susceptibility per site.
    pub susceptibility: Estimate,
    /// τ_int of e in sweeps.
    pub tau_int_energy: f64,
    /// Its statistical error.
    pub tau_int_energy_err: f64,
    /// τ_int of m in sweeps.
    pub tau_int_magnetization: f64,
    /// Its statistical error.
    pub tau_int_magnetization_err: f64,
    /// Measurements.
    pub measurements: usize,
    /// See [`TemperatureResult::too_short`].
    pub too_short: bool,
    /// See [`TemperatureResult::slow_mode`].
    pub slow_mode: bool,
    /// See [`TemperatureResult::transient`].
    pub transient: bool,
}

/// What a result row records besides the statistics: how the temperature
/// was run.
#[derive(Clone, Copy, Debug)]
pub struct RunFacts<'a> {
    /// L.
    pub size: usize,
    /// T.
    pub temperature: f64,
    /// Sweeps per sample (thermalisation and measurement).
    pub sweeps: u64,
    /// Samples.
    pub samples: u32,
    /// Site updates per nanosecond.
    pub flips_per_ns: f64,
    /// "cpu" or "cuda".
    pub backend: &'a str,
}

impl Analysis {
    /// The full result row.
    pub fn into_result(self, facts: &RunFacts<'_>) -> TemperatureResult {
        let RunFacts { size, temperature, sweeps, samples, flips_per_ns, backend } = *facts;
        TemperatureResult {
            size,
            temperature,
            energy: self.energy[0].value,
            energy_err: self.energy[0].error,
            magnetization: self.magnetization[0].value,
            magnetization_err: self.magnetization[0].error,
            binder: self.binder.value,
            binder_err: self.binder.error,
            specific_heat: self.specific_heat.value,
            specific_heat_err: self.specific_heat.error,
            susceptibility: self.susceptibility.value,
            susceptibility_err: self.susceptibility.error,
            energy_moments: self.energy.map(|e| e.value),
            energy_moments_err: self.energy.map(|e| e.error),
            magnetization_moments: self.magnetization.map(|e| e.value),
            magnetization_moments_err: self.magnetization.map(|e| e.error),
            tau_int_energy: self.tau_int_energy,
            tau_int_energy_err: self.tau_int_energy_err,
            tau_int_magnetization: self.tau_int_magnetization,
            tau_int_magnetization_err: self.tau_int_magnetization_err,
            measurements: self.measurements,
            sweeps,
            samples,
            too_short: self.too_short,
            slow_mode: self.slow_mode,
            transient: self.transient,
            flips_per_ns,
            backend: backend.to_string(),
            exchange_acceptance: None,
            round_trips: None,
            replica_tau_int: None,
        }
    }
}

/// Columns a tempering run's CSV adds after [`CSV_COLUMNS`].
pub const TEMPERING_CSV_COLUMNS: &[&str] = &["exchange_acceptance", "round_trips", "replica_tau_int"];

/// Column names of the CSV output, in order (the scalar fields of
/// [`TemperatureResult`]; moments are expanded as energy_moment2 etc.).
pub const CSV_COLUMNS: &[&str] = &[
    "L",
    "temperature",
    "energy",
    "energy_err",
    "magnetization",
    "magnetization_err",
    "binder",
    "binder_err",
    "specific_heat",
    "specific_heat_err",
    "susceptibility",
    "susceptibility_err",
    "energy_moment2",
    "energy_moment2_err",
    "energy_moment3",
    "energy_moment3_err",
    "energy_moment4",
    "energy_moment4_err",
    "magnetization_moment2",
    "magnetization_moment2_err",
    "magnetization_moment3",
    "magnetization_moment3_err",
    "magnetization_moment4",
    "magnetization_moment4_err",
    "tau_int_energy",
    "tau_int_energy_err",
    "tau_int_magnetization",
    "tau_int_magnetization_err",
    "measurements",
    "sweeps",
    "samples",
    "too_short",
    "slow_mode",
    "transient",
    "flips_per_ns",
    "backend",
];

impl TemperatureResult {
    /// One CSV row in the order of [`CSV_COLUMNS`], then those of
    /// [`TEMPERING_CSV_COLUMNS`] for a tempering run (the last row's
    /// acceptance empty); floats printed with full round-trip precision.
    pub fn csv_row(&self) -> String {
        let f = |x: f64| format!("{x:?}");
        let mut v = vec![
            self.size.to_string(),
            f(self.temperature),
            f(self.energy),
            f(self.energy_err),
            f(self.magnetization),
            f(self.magnetization_err),
            f(self.binder),
            f(self.binder_err),
            f(self.specific_heat),
            f(self.specific_heat_err),
            f(self.susceptibility),
            f(self.susceptibility_err),
        ];
        for k in 1..4 {
            v.push(f(self.energy_moments[k]));
            v.push(f(self.energy_moments_err[k]));
        }
        for k in 1..4 {
            v.push(f(self.magnetization_moments[k]));
            v.push(f(self.magnetization_moments_err[k]));
        }
        v.extend([
            f(self.tau_int_energy),
            f(self.tau_int_energy_err),
            f(self.tau_int_magnetization),
            f(self.tau_int_magnetization_err),
            self.measurements.to_string(),
            self.sweeps.to_string(),
            self.samples.to_string(),
            self.too_short.to_string(),
            self.slow_mode.to_string(),
            self.transient.to_string(),
            f(self.flips_per_ns),
            self.backend.clone(),
        ]);
        if let Some(trips) = self.round_trips {
            v.push(self.exchange_acceptance.map(f).unwrap_or_default());
            v.push(trips.to_string());
            v.push(self.replica_tau_int.map(f).unwrap_or_default());
        }
        v.join(",")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use warpmc_rng::{PhiloxStream, RandomSource};

    /// Measurements whose |m| is c√(1 ± s), the sign of the ± at random,
    /// where s alternates between `spreads.0` and `spreads.1` every
    /// `regime` measurements: ⟨m²⟩ is c² in both regimes, ⟨m⁴⟩ is not. e is
    /// uniform noise, and m's sign is random at every measurement. With
    /// `regime` = 1 the regimes alternate measurement by measurement: no
    /// slow mode.
    fn shape_mode(n: usize, regime: usize, spreads: (f64, f64), seed: u64) -> Vec<Measurement> {
        let mut r = PhiloxStream::new(seed, warpmc_rng::Domain::Test.stream(3));
        let c = 0.6f64;
        (0..n)
            .map(|i| {
                let s = if (i / regime).is_multiple_of(2) { spreads.0 } else { spreads.1 };
                let size = c * (1.0 + if r.next_f64() < 0.5 { -s } else { s }).sqrt();
                let sign = if r.next_f64() < 0.5 { -1.0 } else { 1.0 };
                Measurement { energy: -1.0 - r.next_f64(), magnetization: sign * size }
            })
            .collect()
    }

    /// An AR(1) series of τ_int ≈ 5 (x' = 0.82 x + noise, started from
    /// its stationary distribution) as e, m = 0.5 + x/10; plus, for
    /// `offset` ≠ 0, a start relaxing as offset·e^{−i/50}.
    fn relaxing(n: usize, offset: f64, seed: u64) -> Vec<Measurement> {
        let mut r = PhiloxStream::new(seed, warpmc_rng::Domain::Test.stream(4));
        let mut normal = || {
            let (u, v) = (r.next_f64().max(1e-300), r.next_f64());
            (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
        };
        let a = 0.82f64;
        let mut x = normal() / (1.0 - a * a).sqrt();
        (0..n)
            .map(|i| {
                x = a * x + normal();
                let e = x + offset * (-(i as f64) / 50.0).exp();
                Measurement { energy: e, magnetization: 0.5 + e / 10.0 }
            })
            .collect()
    }

    /// A start the chain is still leaving when measuring begins, shifting
    /// the mean of the first 250 of 4,000 measurements by about 14 of its
    /// errors, flags the row (and too_short); the same chains in
    /// equilibrium do not.
    #[test]
    fn a_start_still_being_left_behind_flags_the_row() {
        let model = PottsModel::new(3, 8, 8).unwrap();
        let mut false_alarms = 0;
        for seed in 0..40 {
            let left = analyze(&model, 1.0, &[relaxing(4000, 25.0, seed)], 10);
            assert!(left.transient && left.too_short, "seed {seed}: {left:?}");
            let settled = analyze(&model, 1.0, &[relaxing(4000, 0.0, seed)], 10);
            false_alarms += usize::from(settled.transient);
            // Samples pooled: one sample leaving its start among eight.
            let mut samples: Vec<_> = (0..8).map(|k| relaxing(4000, 0.0, 100 * seed + k)).collect();
            assert!(!analyze(&model, 1.0, &samples, 10).transient, "seed {seed}");
            samples[3] = relaxing(4000, 40.0, 100 * seed + 3);
            assert!(analyze(&model, 1.0, &samples, 10).transient, "seed {seed}");
        }
        assert_eq!(false_alarms, 0);
        // Too short to check: 31 measurements.
        assert!(!analyze(&model, 1.0, &[relaxing(31, 10.0, 1)], 10).transient);
    }

    /// A slow mode in the shape of m's distribution alone (⟨m⁴⟩ at fixed
    /// ⟨m²⟩), a small part of the Binder cumulant's variance, shows in no
    /// other quantity: the cumulant's batch means flag the row and widen its
    /// error. (Seed 0 is left out: its e alone trips the batch check, as 2
    /// series in 1,000 of uniform noise do.)
    #[test]
    fn a_slow_mode_only_the_binder_cumulant_sees_flags_the_row() {
        let model = PottsModel::new(3, 16, 16).unwrap();
        for seed in 1..=8 {
            let slow = analyze(&model, 1.0, &[shape_mode(40_000, 5_000, (0.5, 0.55), seed)], 1);
            let fast = analyze(&model, 1.0, &[shape_mode(40_000, 1, (0.5, 0.55), seed)], 1);
            let what = format!("seed {seed}: {slow:?}, without the mode {fast:?}");
            assert!(slow.slow_mode && slow.too_short, "not flagged: {what}");
            assert!(!fast.too_short && !fast.slow_mode, "flagged without a slow mode: {what}");
            assert!(slow.binder.error > 4.0 * fast.binder.error, "{what}");
        }
    }

    /// A run whose e (or m) never changed reports an error of 0, which is
    /// no error bar: the row is too short, however many measurements.
    #[test]
    fn a_series_that_never_changed_is_too_short() {
        let model = PottsModel::new(2, 16, 16).unwrap();
        let frozen = vec![Measurement { energy: -2.0, magnetization: 1.0 }; 100_000];
        let a = analyze(&model, 0.3, &[frozen.clone(), frozen], 10);
        assert_eq!((a.energy[0].error, a.magnetization[0].error), (0.0, 0.0));
        assert!(a.too_short && !a.slow_mode, "{a:?}");
        // One that moves is not flagged at that length.
        let mut r = PhiloxStream::new(5, warpmc_rng::Domain::Test.stream(4));
        let moving: Vec<Measurement> = (0..100_000)
            .map(|_| Measurement { energy: -2.0 + 0.01 * r.next_f64(), magnetization: 1.0 - 0.01 * r.next_f64() })
            .collect();
        assert!(!analyze(&model, 0.3, std::slice::from_ref(&moving), 10).too_short);
        // One that left its value in a few bursts only (a rare excitation):
        // its error is a count of four events.
        let mut bursts = vec![Measurement { energy: -2.0, magnetization: 1.0 }; 100_000];
        for start in [10_000, 40_000, 70_000, 90_000] {
            for (k, x) in bursts[start..start + 3].iter_mut().enumerate() {
                *x = Measurement { energy: -2.0 + 0.25 * (k + 1) as f64, magnetization: 0.9 };
            }
        }
        let a = analyze(&model, 0.3, &[bursts.clone()], 10);
        assert!(a.energy[0].error > 0.0 && a.too_short && !a.slow_mode && !a.transient, "{a:?}");
        // Split among samples, the count is the same; ten bursts are
        // trusted (the τ_int rule then decides).
        let halves = [bursts[..50_000].to_vec(), bursts[50_000..].to_vec()];
        assert!(analyze(&model, 0.3, &halves, 10).too_short);
        let one_burst = &bursts[..20_000];
        assert!(too_few_excursions(&vec![one_burst.to_vec(); 9]));
        assert!(!too_few_excursions(&vec![one_burst.to_vec(); 10]));
        // A hundred independent measurements make about 25 excursions to
        // each side; as a hundred samples of one measurement, as many.
        assert!(!too_few_excursions(&[moving[..100].to_vec()]));
        let singles: Vec<Vec<Measurement>> = moving[..100].iter().map(|x| vec![*x]).collect();
        assert!(!too_few_excursions(&singles));
        // Nine samples of one measurement cannot make ten excursions.
        assert!(too_few_excursions(&singles[..9]));
        // Frozen at m = 0 (an antiferromagnet's ground state): the Binder
        // cumulant is 0/0, and so is its error, not 0.
        let zero = vec![Measurement { energy: 2.0, magnetization: 0.0 }; 1000];
        let a = analyze(&model, 0.05, &[zero], 1);
        assert!(a.binder.value.is_nan() && a.binder.error.is_nan(), "{:?}", a.binder);
    }

    /// The specific heat of energies that are large and nearly constant (a
    /// lattice of J = 1e10, frozen but for rare flips) is the variance of
    /// their small changes, not what is left of ⟨e²⟩ − ⟨e⟩² after rounding
    /// (which was −1.3e7 for a frozen 8 × 8 lattice).
    #[test]
    fn the_specific_heat_of_large_energies_does_not_cancel() {
        let model = PottsModel::new(3, 8, 8).unwrap();
        let frozen = vec![Measurement { energy: -2e10, magnetization: 1.0 }; 1000];
        assert_eq!(analyze(&model, 1.0, &[frozen], 1).specific_heat.value, 0.0);
        // Two levels 1e10 · 2/64 apart, one in ten measurements high: the
        // exact variance of the series, to rounding.
        let (low, step) = (-2e10, 2e10 / 32.0);
        let series: Vec<Measurement> = (0..1000)
            .map(|i| Measurement { energy: if i % 10 == 0 { low + step } else { low }, magnetization: 1.0 })
            .collect();
        let a = analyze(&model, 1.0, &[series], 1);
        // The series' variance, plus the squared error of its mean (the
        // bias of a variance about an estimated mean).
        let exact = 64.0 * (0.1 * 0.9 * step * step + a.energy[0].error.powi(2));
        let c = a.specific_heat.value;
        assert!((c - exact).abs() <= 1e-12 * exact, "{c} against {exact}");
    }

    /// Over many short correlated series (AR(1), τ_int = 5, 200
    /// measurements: the plain variance is low by 2τ_int/N = 5 %) the mean
    /// specific heat and χ are the true variance within 1.5 %.
    #[test]
    fn variances_are_unbiased_for_short_correlated_series() {
        let model = PottsModel::new(2, 4, 4).unwrap();
        let rho: f64 = 9.0 / 11.0; // τ_int = (1 + ρ)/(2(1 − ρ)) = 5
        let truth = 1.0 / (1.0 - rho * rho);
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut uniform = || {
            // splitmix64
            state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = state;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            ((z ^ (z >> 31)) >> 11) as f64 / (1u64 << 53) as f64
        };
        let mut normal = || {
            let (u, v) = (uniform().max(1e-300), uniform());
            (-2.0 * u.ln()).sqrt() * (2.0 * std::f64::consts::PI * v).cos()
        };
        let trials = 2000;
        let (mut c_sum, mut chi_sum) = (0.0, 0.0);
        for _ in 0..trials {
            let (mut e, mut m) = (normal() * truth.sqrt(), normal() * truth.sqrt());
            let series: Vec<Measurement> = (0..200)
                .map(|_| {
                    e = rho * e + normal();
                    m = rho * m + normal();
                    Measurement { energy: e, magnetization: m }
                })
                .collect();
            let a = analyze(&model, 1.0, &[series], 1);
            c_sum += a.specific_heat.value / 16.0;
            chi_sum += a.susceptibility.value / 16.0;
        }
        for (name, sum) in [("c", c_sum), ("χ", chi_sum)] {
            let ratio = sum / trials as f64 / truth;
            assert!((ratio - 1.0).abs() < 0.015, "{name}: mean over {trials} series / truth = {ratio}");
        }
    }
}
