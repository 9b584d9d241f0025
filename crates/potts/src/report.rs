//! The JSON form of a run's results: one object per temperature, the
//! [`TemperatureResult`]'s fields followed by the run's [`Provenance`]
//! under `run`. `warpmc potts run --json` prints these lines, and the
//! Python package returns them parsed, so both give the same keys and the
//! same numbers.
//!
//! ```
//! use warpmc_potts::report::JsonLines;
//! use warpmc_potts::{BackendChoice, ConfigFile, Provenance, Runner};
//!
//! let cfg = ConfigFile {
//!     q: Some(2),
//!     size: Some(8),
//!     temp: Some(1.0),
//!     therm: Some(10),
//!     sweeps: Some(20),
//!     backend: Some(BackendChoice::Cpu),
//!     ..Default::default()
//! }
//! .resolve()?;
//! let mut runner = Runner::new(cfg.clone())?;
//! let json = JsonLines::new(&Provenance::new(&cfg, runner.backend_description(), None)?);
//! let line = json.line(&runner.run_all()?[0]);
//! let v: serde_json::Value = serde_json::from_str(&line).unwrap();
//! assert_eq!(v["temperature"], 1.0);
//! assert_eq!(v["run"]["q"], 2);
//! # Ok::<(), warpmc_potts::PottsError>(())
//! ```

use crate::observables::TemperatureResult;
use crate::provenance::Provenance;

/// Temperature lists longer than this are summarised in the `run` object of
/// each JSON line (first, last and count), so that a run of millions of
/// temperatures does not repeat its whole list on every line; the CSV's
/// header and the checkpoint keep the full list.
pub const JSON_TEMPERATURES_IN_FULL: usize = 64;

/// Makes the JSON line of each result of one run; the `run` object is
/// serialized once.
#[derive(Clone, Debug)]
pub struct JsonLines {
    run: String,
}

impl JsonLines {
    /// The lines of a run with this provenance.
    pub fn new(provenance: &Provenance) -> Self {
        let mut run = serde_json::to_value(provenance).expect("provenance serializes: plain fields and a config");
        if let Some(list) = run.pointer_mut("/config/temperatures")
            && let Some(ts) = list.as_array()
            && ts.len() > JSON_TEMPERATURES_IN_FULL
        {
            let summary = serde_json::json!({ "count": ts.len(), "first": ts[0], "last": ts[ts.len() - 1] });
            *list = summary;
        }
        JsonLines { run: serde_json::to_string(&run).expect("a JSON value serializes") }
    }

    /// The `run` object, as it ends every line.
    pub fn run_object(&self) -> &str {
        &self.run
    }

    /// One line (without its newline): `result`'s fields, then `"run"`.
    pub fn line(&self, result: &TemperatureResult) -> String {
        let fields = serde_json::to_string(result).expect("a result serializes: plain fields");
        let fields = fields.strip_suffix('}').expect("a result serializes as a JSON object");
        // Every row of a tempering run has the key (null for the last
        // temperature, which has no pair above it), so readers can index it.
        let last_pair = if result.round_trips.is_some() && result.exchange_acceptance.is_none() {
            ",\"exchange_acceptance\":null"
        } else {
            ""
        };
        format!("{fields}{last_pair},\"run\":{}}}", self.run)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{BackendChoice, ConfigFile, Runner, Temperatures};

    fn lines(temps: Temperatures) -> Vec<serde_json::Value> {
        let cfg = ConfigFile {
            q: Some(3),
            size: Some(8),
            temps: Some(temps),
            therm: Some(4),
            sweeps: Some(8),
            measure_every: Some(2),
            backend: Some(BackendChoice::Cpu),
            ..Default::default()
        }
        .resolve()
        .unwrap();
        let mut runner = Runner::new(cfg.clone()).unwrap();
        let json = JsonLines::new(&Provenance::new(&cfg, runner.backend_description(), Some("abc")).unwrap());
        runner.run_all().unwrap().iter().map(|r| serde_json::from_str(&json.line(r)).unwrap()).collect()
    }

    #[test]
    fn a_line_is_the_result_then_the_run() {
        let v = lines(Temperatures::List(vec![0.5, 2.0]));
        assert_eq!(v.len(), 2);
        assert_eq!(v[1]["temperature"], 2.0);
        assert_eq!(v[1]["L"], 8);
        assert_eq!(v[0]["run"]["commit"], "abc");
        assert_eq!(v[0]["run"]["config"]["temperatures"], serde_json::json!([0.5, 2.0]));
        assert!(v[0]["energy"].is_f64() && v[0]["run"].is_object());
    }

    #[test]
    fn long_temperature_lists_are_summarised_in_the_run_object() {
        let n = JSON_TEMPERATURES_IN_FULL + 1;
        let v = lines(Temperatures::List((0..n).map(|i| 1.0 + i as f64 / 100.0).collect()));
        assert_eq!(v.len(), n);
        let summary = &v[0]["run"]["config"]["temperatures"];
        assert_eq!(summary["count"], n);
        assert_eq!(summary["first"], 1.0);
        assert_eq!(summary["last"], 1.0 + (n - 1) as f64 / 100.0);
    }
}
