//! The update algorithms a run can use, and what each needs at one
//! temperature.
//!
//! | algorithm | what a sweep is | where it runs |
//! |---|---|---|
//! | [`Algorithm::Metropolis`] | checkerboard Metropolis ([`algorithm`](crate::algorithm), [`sliced`](crate::sliced)) | CPU, CUDA |
//! | [`Algorithm::HeatBath`] | checkerboard heat-bath (Gibbs) ([`heat_bath`](crate::heat_bath)) | CPU, CUDA |
//! | [`Algorithm::SwendsenWang`] | one Swendsen–Wang update of the whole lattice ([`swendsen_wang`](crate::swendsen_wang)) | CPU, CUDA |
//! | [`Algorithm::Wolff`] | round(N/⟨\|C\|⟩) single clusters, N sites flipped on average ([`wolff`](crate::wolff)) | CPU |
//!
//! Every algorithm names its random numbers by (seed, chain stream, sweep,
//! …), never by threads, so a run gives the same bits on every backend
//! and continues bit for bit from a checkpoint, which stores only the sweep
//! number. The cluster algorithms need a ferromagnetic coupling (J > 0) and
//! no field.
//!
//! An [`Update`] is an algorithm with its integer tables for one model at
//! one temperature, computed on the host: what a [`Backend`](crate::Backend)
//! or an [`Ensemble`](crate::Ensemble) is given before it sweeps.

use serde::{Deserialize, Serialize};

use crate::algorithm::{AcceptanceTable, Scheme};
use crate::error::{PottsError, Result};
use crate::heat_bath::HeatBathTable;
use crate::lattice::Lattice;
use crate::model::{PottsModel, check_temperature};
use crate::swendsen_wang::bond_threshold;

/// An update algorithm. Metropolis is the default.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Algorithm {
    /// Checkerboard Metropolis: a proposal uniform over the other q − 1
    /// states, accepted with min(1, e^{−ΔE/T}).
    #[default]
    Metropolis,
    /// Checkerboard heat-bath (Gibbs): each site draws its state from its
    /// conditional distribution given its neighbours.
    HeatBath,
    /// Swendsen–Wang (1987): bonds between equal neighbours activated with
    /// probability 1 − e^{−J/T}, every cluster given a new uniform state.
    SwendsenWang,
    /// Wolff (1989): one cluster at a time grown from a random site and
    /// given another state; a sweep is a fixed number of clusters per
    /// temperature, which flip N sites on average.
    Wolff,
}

/// Tori of at most this many sites refuse a run of checkerboard
/// Metropolis with q = 2 and no field ([`Algorithm::check_ergodic`]).
/// There every move with ΔE = 0 is made (the proposal is always the
/// flip), so a checkerboard sweep is deterministic on such sites and
/// closed classes of states appear that a chain never enters: on 2 × 2, 4
/// of the 16 states, which moves ⟨e⟩ at T = 2 from −1.536 to −1.627; on
/// 2 × 4 and 4 × 2, 4 of 256 (χ about 1 % low). On larger tori the classes
/// left out weigh too little to see (on 2 × 8, 4 of 65,536 states, χ moved
/// by 10⁻⁵; on 4 × 4, 36 states, ⟨e⟩ by 6·10⁻⁵ at T = 2), and heat-bath,
/// Swendsen–Wang and Wolff, a field or q ≥ 3 have no such classes.
pub const METROPOLIS_NON_ERGODIC_SITES: usize = 8;

/// Every algorithm, in the order `--help` lists them.
pub const ALGORITHMS: [Algorithm; 4] =
    [Algorithm::Metropolis, Algorithm::HeatBath, Algorithm::SwendsenWang, Algorithm::Wolff];

impl Algorithm {
    /// The name used in configuration files and on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Algorithm::Metropolis => "metropolis",
            Algorithm::HeatBath => "heat-bath",
            Algorithm::SwendsenWang => "swendsen-wang",
            Algorithm::Wolff => "wolff",
        }
    }

    /// Whether this is a cluster algorithm (Swendsen–Wang or Wolff), which
    /// needs J > 0 and no field.
    pub fn is_cluster(self) -> bool {
        matches!(self, Algorithm::SwendsenWang | Algorithm::Wolff)
    }

    /// Whether a CUDA device can run it (Wolff's single clusters run on the
    /// CPU, whatever the device).
    pub fn runs_on_gpu(self) -> bool {
        self != Algorithm::Wolff
    }

    /// Checks that `model` can run under this algorithm: the cluster
    /// algorithms need a ferromagnetic coupling and no field, and Wolff's
    /// cluster numbers need at most 2³² sites.
    pub fn check(self, model: &PottsModel) -> Result<()> {
        if self.is_cluster() {
            if model.coupling() <= 0.0 {
                return Err(PottsError::InvalidInput(format!(
                    "the {} algorithm needs a ferromagnetic coupling J > 0, got J = {:?}",
                    self.name(),
                    model.coupling()
                )));
            }
            if model.field() != 0.0 {
                return Err(PottsError::InvalidInput(format!(
                    "the {} algorithm runs without a field, got h = {:?}",
                    self.name(),
                    model.field()
                )));
            }
        }
        if self == Algorithm::Wolff {
            crate::wolff::check_size(model)?;
        }
        Ok(())
    }

    /// Checks that a chain of this algorithm on `model` can reach every
    /// state, as a run's averages need: checkerboard Metropolis with q = 2
    /// and no field cannot on a torus of at most
    /// [`METROPOLIS_NON_ERGODIC_SITES`] sites, nor on any torus without a
    /// coupling (J = 0: every flip is free and always made, so a sweep
    /// flips every site and the chain alternates between two states).
    /// (The backends run such a lattice all the same: their sweeps are well
    /// defined, and the tests compare them on it.)
    pub fn check_ergodic(self, model: &PottsModel) -> Result<()> {
        if self == Algorithm::Metropolis && model.q() == 2 && model.field() == 0.0 && model.coupling() == 0.0 {
            return Err(PottsError::InvalidInput(
                "checkerboard Metropolis with q = 2, J = 0 and no field flips every site at every sweep (a flip \
                 that costs no energy is always made), so the chain never leaves the pair of states it starts \
                 in: use the heat-bath algorithm"
                    .into(),
            ));
        }
        if self == Algorithm::Metropolis
            && model.q() == 2
            && model.field() == 0.0
            && model.sites() <= METROPOLIS_NON_ERGODIC_SITES
        {
            return Err(PottsError::InvalidInput(format!(
                "checkerboard Metropolis with q = 2 and no field cannot reach every state of a {} × {} torus \
                 (a flip that costs no energy is always made, so under the checkerboard order some states are \
                 never visited and the averages are wrong): use the heat-bath algorithm, or a torus of more \
                 than {METROPOLIS_NON_ERGODIC_SITES} sites",
                model.width(),
                model.height()
            )));
        }
        Ok(())
    }

    /// One line saying what a sweep of this algorithm does on `model`, and
    /// how it draws its random numbers (for provenance).
    pub fn describe(self, model: &PottsModel) -> String {
        match self {
            Algorithm::Metropolis => {
                let rule = match Scheme::for_model(model) {
                    Scheme::Sliced => "bit-sliced rule: 32 sites per word, random bits drawn most significant first",
                    Scheme::SiteWords => "one random word per site",
                };
                format!("checkerboard Metropolis, {rule}")
            }
            Algorithm::HeatBath => "checkerboard heat-bath (Gibbs), one random word per site".into(),
            Algorithm::SwendsenWang => {
                "Swendsen-Wang clusters, bond words keyed by bond, cluster states by the cluster's smallest site".into()
            }
            Algorithm::Wolff => {
                "Wolff single clusters (a sweep: round(N/<|C|>) clusters, N sites flipped on average)".into()
            }
        }
    }
}

impl std::fmt::Display for Algorithm {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for Algorithm {
    type Err = PottsError;
    fn from_str(s: &str) -> Result<Self> {
        ALGORITHMS.into_iter().find(|a| a.name() == s).ok_or_else(|| {
            PottsError::InvalidInput(format!(
                "unknown algorithm '{s}' (expected {})",
                ALGORITHMS.map(Algorithm::name).join(", ")
            ))
        })
    }
}

/// An algorithm with its tables for one model at one temperature, all
/// integers computed on the host (no floating point reaches a lattice).
// An update is made once per temperature and lives beside lattices of
// kilobytes to gigabytes: its size does not matter, boxing would only add
// indirection to the API.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Update {
    /// Metropolis acceptance thresholds.
    Metropolis(AcceptanceTable),
    /// Heat-bath weights.
    HeatBath(HeatBathTable),
    /// Swendsen–Wang: a bond is active iff its 32-bit word is below
    /// `bond_threshold` = ⌊(1 − e^{−J/T})·2³²⌋
    /// ([`swendsen_wang::bond_threshold`](crate::swendsen_wang::bond_threshold)).
    SwendsenWang {
        /// The bond threshold.
        bond_threshold: u32,
    },
    /// Wolff: a bond is added iff its 32-bit word is below `bond_threshold`
    /// (the same threshold as Swendsen–Wang's); a sweep is
    /// `clusters_per_sweep` clusters
    /// ([`wolff::clusters_per_sweep`](crate::wolff::clusters_per_sweep)).
    Wolff {
        /// The bond threshold.
        bond_threshold: u32,
        /// Clusters per sweep at this temperature.
        clusters_per_sweep: u64,
    },
}

impl Update {
    /// The tables of `algorithm` for `model` at `temperature`.
    pub fn new(algorithm: Algorithm, model: &PottsModel, temperature: f64) -> Result<Update> {
        let t = check_temperature(temperature)?;
        algorithm.check(model)?;
        Ok(match algorithm {
            Algorithm::Metropolis => Update::Metropolis(AcceptanceTable::metropolis(model, t)),
            Algorithm::HeatBath => Update::HeatBath(HeatBathTable::new(model, t)),
            Algorithm::SwendsenWang => Update::SwendsenWang { bond_threshold: bond_threshold(model, t)? },
            Algorithm::Wolff => {
                let bond_threshold = bond_threshold(model, t)?;
                Update::Wolff {
                    bond_threshold,
                    clusters_per_sweep: crate::wolff::clusters_per_sweep(model, bond_threshold)?,
                }
            }
        })
    }

    /// The algorithm these tables are for.
    pub fn algorithm(&self) -> Algorithm {
        match self {
            Update::Metropolis(_) => Algorithm::Metropolis,
            Update::HeatBath(_) => Algorithm::HeatBath,
            Update::SwendsenWang { .. } => Algorithm::SwendsenWang,
            Update::Wolff { .. } => Algorithm::Wolff,
        }
    }
}

/// Cluster sweeps `first .. first + count` of the chain (`seed`, `stream`)
/// on a row-major lattice on the CPU: the one place the CPU backend reaches
/// the cluster algorithms.
pub(crate) fn cluster_sweeps_cpu(
    update: &Update,
    lattice: &mut Lattice,
    model: &PottsModel,
    chain: (u64, u64),
    first: u64,
    count: u64,
) -> Result<()> {
    let (seed, stream) = chain;
    match *update {
        Update::Wolff { bond_threshold, clusters_per_sweep } => {
            crate::wolff::sweeps_cpu(lattice, model, bond_threshold, clusters_per_sweep, seed, stream, first, count)
        }
        Update::SwendsenWang { bond_threshold } => {
            crate::swendsen_wang::sweeps_cpu(lattice, model, bond_threshold, seed, stream, first, count)
        }
        ref other => {
            Err(PottsError::InvalidInput(format!("internal error: {} is not a cluster algorithm", other.algorithm())))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_through_text_and_serde() {
        for a in ALGORITHMS {
            assert_eq!(a.name().parse::<Algorithm>().unwrap(), a);
            assert_eq!(serde_json::to_string(&a).unwrap(), format!("\"{}\"", a.name()));
            assert_eq!(serde_json::from_str::<Algorithm>(&format!("\"{a}\"")).unwrap(), a);
        }
        let e = "heatbath".parse::<Algorithm>().unwrap_err().to_string();
        assert!(e.contains("metropolis, heat-bath, swendsen-wang, wolff"), "{e}");
        assert_eq!(Algorithm::default(), Algorithm::Metropolis);
    }

    #[test]
    fn cluster_algorithms_refuse_fields_and_other_couplings() {
        let m = PottsModel::new(3, 8, 8).unwrap();
        for a in [Algorithm::SwendsenWang, Algorithm::Wolff] {
            assert!(Update::new(a, &m, 1.0).is_ok());
            let e = Update::new(a, &m.clone().with_field(0.1).unwrap(), 1.0).unwrap_err().to_string();
            assert!(e.contains("field"), "{e}");
            for j in [0.0, -1.0] {
                let e = Update::new(a, &m.clone().with_coupling(j).unwrap(), 1.0).unwrap_err().to_string();
                assert!(e.contains("J > 0"), "{e}");
            }
        }
        for a in [Algorithm::Metropolis, Algorithm::HeatBath] {
            let m = m.clone().with_field(0.1).unwrap().with_coupling(-1.0).unwrap();
            assert_eq!(Update::new(a, &m, 1.0).unwrap().algorithm(), a);
        }
        assert!(Update::new(Algorithm::HeatBath, &m, 0.0).is_err());
    }
}
