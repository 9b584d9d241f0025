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
//! with jackknife errors over blocks and integrated autocorrelation times
//! (see [`stats`](crate::stats)).

use serde::{Deserialize, Serialize};

use crate::lattice::Census;
use crate::model::PottsModel;
use crate::stats::{BLOCK_TAUS, Estimate, Jackknife, integrated_time};

/// One measurement of a lattice.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Measurement {
    /// Energy per site.
    pub energy: f64,
    /// Order parameter.
    pub magnetization: f64,
}

impl Measurement {
    /// The measurement a census gives.
    pub fn from_census(model: &PottsModel, census: &Census) -> Self {
        let n = model.sites() as f64;
        let q = model.q() as f64;
        Measurement {
            energy: model.energy(census.equal_bonds(), census.counts()[0]) / n,
            magnetization: (q * census.max_count() as f64 / n - 1.0) / (q - 1.0),
        }
    }
}

/// Results at one temperature.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TemperatureResult {
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
    /// Integrated autocorrelation time of m, in sweeps.
    pub tau_int_magnetization: f64,
    /// Measurements used (all samples).
    pub measurements: usize,
    /// Jackknife blocks.
    pub blocks: usize,
    /// Sweeps per sample at this temperature (thermalisation + measurement).
    pub sweeps: u64,
    /// Samples.
    pub samples: u32,
    /// Site updates per nanosecond over this temperature's sweeps (timing:
    /// the one field that differs between identical runs).
    pub flips_per_ns: f64,
    /// "cpu" or "cuda".
    pub backend: String,
}

/// Analyses the measurement series of one temperature (one series per
/// sample, measurements `measure_every` sweeps apart).
pub fn analyze(model: &PottsModel, temperature: f64, series: &[Vec<Measurement>], measure_every: u64) -> Analysis {
    let e: Vec<Vec<f64>> = series.iter().map(|s| s.iter().map(|m| m.energy).collect()).collect();
    let m: Vec<Vec<f64>> = series.iter().map(|s| s.iter().map(|m| m.magnetization).collect()).collect();
    let tau_e = integrated_time(&e.iter().map(Vec::as_slice).collect::<Vec<_>>());
    let tau_m = integrated_time(&m.iter().map(Vec::as_slice).collect::<Vec<_>>());
    let shortest = series.iter().map(Vec::len).min().unwrap_or(0);
    // Blocks several τ long, but at least 4 per sample where the series allows.
    let block = ((BLOCK_TAUS * tau_e.max(tau_m)).ceil() as usize).clamp(1, (shortest / 4).max(1));
    let rows: Vec<Vec<Vec<f64>>> = series
        .iter()
        .map(|s| {
            s.iter()
                .map(|x| {
                    let (e, m) = (x.energy, x.magnetization);
                    vec![e, e * e, e * e * e, e * e * e * e, m, m * m, m * m * m, m * m * m * m]
                })
                .collect()
        })
        .collect();
    let jk = Jackknife::new(&rows, block);
    let n = model.sites() as f64;
    let t = temperature;
    let moment = |i: usize| jk.estimate(move |v| v[i]);
    let e_mom: Vec<Estimate> = (0..4).map(moment).collect();
    let m_mom: Vec<Estimate> = (4..8).map(moment).collect();
    Analysis {
        energy: e_mom.clone().try_into().expect("four moments"),
        magnetization: m_mom.clone().try_into().expect("four moments"),
        binder: jk.estimate(|v| 1.0 - v[7] / (3.0 * v[5] * v[5])),
        specific_heat: jk.estimate(|v| n * (v[1] - v[0] * v[0]) / (t * t)),
        susceptibility: jk.estimate(|v| n * (v[5] - v[4] * v[4]) / t),
        tau_int_energy: tau_e * measure_every as f64,
        tau_int_magnetization: tau_m * measure_every as f64,
        measurements: jk.measurements(),
        blocks: jk.blocks(),
    }
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
    /// τ_int of m in sweeps.
    pub tau_int_magnetization: f64,
    /// Measurements.
    pub measurements: usize,
    /// Jackknife blocks.
    pub blocks: usize,
}

/// What a result row records besides the statistics: how the temperature
/// was run.
#[derive(Clone, Copy, Debug)]
pub struct RunFacts<'a> {
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
        let RunFacts { temperature, sweeps, samples, flips_per_ns, backend } = *facts;
        TemperatureResult {
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
            tau_int_magnetization: self.tau_int_magnetization,
            measurements: self.measurements,
            blocks: self.blocks,
            sweeps,
            samples,
            flips_per_ns,
            backend: backend.to_string(),
        }
    }
}

/// Column names of the CSV output, in order (the scalar fields of
/// [`TemperatureResult`]; moments are expanded as energy_moment2 etc.).
pub const CSV_COLUMNS: &[&str] = &[
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
    "tau_int_magnetization",
    "measurements",
    "blocks",
    "sweeps",
    "samples",
    "flips_per_ns",
    "backend",
];

impl TemperatureResult {
    /// One CSV row in the order of [`CSV_COLUMNS`]; floats printed with
    /// full round-trip precision.
    pub fn csv_row(&self) -> String {
        let f = |x: f64| format!("{x:?}");
        let mut v = vec![
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
            f(self.tau_int_magnetization),
            self.measurements.to_string(),
            self.blocks.to_string(),
            self.sweeps.to_string(),
            self.samples.to_string(),
            f(self.flips_per_ns),
            self.backend.clone(),
        ]);
        v.join(",")
    }
}
