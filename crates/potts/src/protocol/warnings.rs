//! What a run's configuration should be warned of before it starts: valid
//! runs that are likely not what was meant. The command line prints these
//! lines; the Python package raises them as `RuntimeWarning`s.

use crate::Algorithm;
use crate::lattice::InitialState;

use super::ProtocolConfig;

/// Above this acceptance of the costliest flip, q = 2 Metropolis flips most
/// sites at every sweep and flips them back at the next.
pub const ALTERNATING_ACCEPTANCE: f64 = 0.8;

/// A temperature for messages: as written for ordinary values, in
/// scientific notation for tiny or huge ones (1e-300, not 300 zeros).
pub fn temperature_text(t: f64) -> String {
    if (1e-4..1e6).contains(&t.abs()) { format!("{t}") } else { format!("{t:.4e}") }
}

impl ProtocolConfig {
    /// The warnings for this run before it starts (`resuming`: continued
    /// from a checkpoint, whose start is past), each one line without a
    /// "warning:" prefix:
    ///
    /// - q = 2 Metropolis at temperatures where even the costliest flip is
    ///   made with probability above [`ALTERNATING_ACCEPTANCE`]: each sweep
    ///   nearly inverts the lattice and the next nearly restores it, so the
    ///   chain decorrelates very slowly (valid, only slow to mix; heat-bath
    ///   is not affected);
    /// - Wolff from a random start below T_c: a sweep is the clusters that
    ///   flip N sites in equilibrium, but a random lattice's clusters hold a
    ///   few sites each and its ordered domains grow slowly, so `therm`
    ///   counts far less work than it says (on 1024², T = 1, q = 2, m was
    ///   still 0.007 after 15,000 sweeps);
    /// - a temperature listed more than once without `continue` (with it a
    ///   repeat is a return trip, as in a hysteresis loop): each copy runs
    ///   a chain of its own, and the rows do not tell them apart.
    pub fn start_warnings(&self, resuming: bool) -> Vec<String> {
        [self.alternation_warning(), self.wolff_start_warning(resuming), self.repeated_temperatures_warning()]
            .into_iter()
            .flatten()
            .collect()
    }

    fn alternation_warning(&self) -> Option<String> {
        alternation_warning(self.algorithm(), self.q(), self.coupling(), self.field(), self.temperatures())
    }

    fn wolff_start_warning(&self, resuming: bool) -> Option<String> {
        let below = self.coupling() > 0.0
            && self
                .temperatures()
                .iter()
                .any(|&t| t < self.coupling() * crate::exact::potts_critical_temperature(self.q()));
        if resuming || self.algorithm() != Algorithm::Wolff || self.init() != InitialState::Random || !below {
            return None;
        }
        Some(
            "wolff from a random start below T_c: a sweep is as many clusters as flip N sites in equilibrium, but a \
             random lattice's clusters are far smaller, so the thermalisation sweeps can leave it far from \
             equilibrium; start it ordered (init = ordered), or make sure the results no longer drift with more \
             thermalisation sweeps"
                .to_string(),
        )
    }

    fn repeated_temperatures_warning(&self) -> Option<String> {
        if self.continue_from_previous() {
            return None;
        }
        // Sorted, so that millions of temperatures take no longer to check.
        let mut sorted = self.temperatures().to_vec();
        sorted.sort_by(f64::total_cmp);
        let mut repeated: Vec<f64> = sorted.windows(2).filter(|w| w[0] == w[1]).map(|w| w[0]).collect();
        repeated.dedup();
        const SHOWN: usize = 5;
        let mut shown: Vec<String> = repeated.iter().take(SHOWN).map(|&t| temperature_text(t)).collect();
        if repeated.len() > SHOWN {
            shown.push(format!("… ({} in all)", repeated.len()));
        }
        let which = match shown.as_slice() {
            [] => return None,
            [one] => format!("temperature {one} is"),
            many => format!("temperatures {} are", many.join(", ")),
        };
        Some(format!(
            "{which} listed more than once: each copy runs a chain of its own and gives a row of its own, which \
             nothing tells apart from the others' (--samples N runs N chains at each temperature and pools them \
             into one row)"
        ))
    }
}

/// The warning of [`ProtocolConfig::start_warnings`] for q = 2 Metropolis
/// (`algorithm`, `q` states, coupling J, field h) at temperatures where
/// even the costliest flip is made with probability above
/// [`ALTERNATING_ACCEPTANCE`]; `None` where there is none (for a
/// [`Simulation`](crate::Simulation) too).
pub fn alternation_warning(
    algorithm: Algorithm,
    q: u32,
    coupling: f64,
    field: f64,
    temperatures: &[f64],
) -> Option<String> {
    if algorithm != Algorithm::Metropolis || q != 2 {
        return None;
    }
    // The costliest flip: four equal neighbours made unequal, plus the field.
    let cost = 4.0 * coupling.abs() + field.abs();
    let hot: Vec<f64> = temperatures.iter().copied().filter(|&t| (-cost / t).exp() > ALTERNATING_ACCEPTANCE).collect();
    let t = hot.iter().copied().reduce(f64::min)?;
    let shown = temperature_text(t);
    let which =
        if hot.len() > 1 { format!("T ≥ {shown} ({} temperatures)", hot.len()) } else { format!("T = {shown}") };
    Some(format!(
        "{which}: q = 2 Metropolis makes even the costliest flip with probability at least {}, so each sweep flips \
         most sites and the next flips them back: the chain mixes very slowly there; the heat-bath algorithm does \
         not",
        // Rounded down: "at least 1.00" would say every flip is made.
        ((-cost / t).exp() * 1000.0).floor() / 1000.0
    ))
}
