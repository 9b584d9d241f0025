//! Where a result came from: the program, the model, the random streams, the
//! update rule and the backend, with the whole resolved configuration, so
//! that a results file read years later still says how it was made and how
//! to make it again.
//!
//! The command line writes it as `#` comment lines at the top of a CSV file
//! (`pandas.read_csv(path, comment="#")` skips them), as the `run` object of
//! every JSON line, and as text chunks of a PNG snapshot.

use serde::Serialize;

use crate::Result;
use crate::lattice::InitialState;
use crate::protocol::ProtocolConfig;

/// The provenance of one run's results.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Provenance {
    /// The warpmc version that computed the results.
    pub warpmc: String,
    /// The source commit of that build, where known, with git's `-dirty`
    /// suffix when the build's checkout had uncommitted changes.
    pub commit: Option<String>,
    /// Number of spin states.
    pub q: u32,
    /// The coupling J.
    pub coupling: f64,
    /// The field h on state 0.
    pub field: f64,
    /// Lattice width (sites per row) of the results this provenance goes
    /// with: in a study of several sizes, the row's own (see
    /// [`at_size`](Self::at_size)); in a CSV file's header, the first's.
    pub width: usize,
    /// Lattice height (rows), as `width`.
    pub height: usize,
    /// Every size L of the study, in run order (one for a run of one size).
    pub sizes: Vec<usize>,
    /// Seed of every random stream of the run.
    pub seed: u64,
    /// Start state of the first temperature (and of every temperature that
    /// does not continue from the previous one).
    pub start: InitialState,
    /// The update algorithm and how it assigns random numbers (for
    /// Metropolis, which of the two rules: they give different, equally
    /// valid chains), and parallel tempering if used.
    pub algorithm: String,
    /// The backend and kernel that ran the sweeps.
    pub backend: String,
    /// The full resolved configuration, as a checkpoint stores it.
    pub config: ProtocolConfig,
}

/// The update rule of `config`'s lattice, and parallel tempering if used.
fn algorithm(config: &ProtocolConfig) -> Result<String> {
    let update = config.algorithm().describe(&config.model()?);
    Ok(match config.exchange_every() {
        Some(n) => format!("{update}; parallel tempering, exchanges every {n} sweeps"),
        None => update,
    })
}

impl Provenance {
    /// The provenance of a run of `config` on the backend described by
    /// `backend` (e.g. [`crate::Simulation::backend_description`]), built by
    /// the source commit `commit` if the caller knows it.
    ///
    /// # Errors
    ///
    /// [`crate::PottsError::InvalidInput`] if `config` does not describe a valid
    /// model.
    pub fn new(config: &ProtocolConfig, backend: impl Into<String>, commit: Option<&str>) -> Result<Provenance> {
        Ok(Provenance {
            warpmc: env!("CARGO_PKG_VERSION").to_string(),
            commit: commit.map(str::to_string),
            q: config.q(),
            coupling: config.coupling(),
            field: config.field(),
            width: config.size(),
            height: config.height(),
            sizes: config.study_sizes(),
            seed: config.seed(),
            start: config.init(),
            algorithm: algorithm(config)?,
            backend: backend.into(),
            config: config.clone(),
        })
    }

    /// The provenance of the study's results of size `l`: that lattice's
    /// width and height (square but for the study's own first size, as
    /// [`ProtocolConfig::for_size`] makes them), its configuration (the
    /// study's at that size) and the backend that ran it, where known
    /// (`None` keeps this one's).
    ///
    /// # Errors
    ///
    /// [`crate::PottsError::InvalidInput`] if `l` is not a valid size of the study.
    pub fn at_size(&self, l: usize, backend: Option<&str>) -> Result<Provenance> {
        let cfg = self.config.for_size(l)?;
        Ok(Provenance {
            width: cfg.size(),
            height: cfg.height(),
            // Its own: the rule can depend on the lattice (Metropolis is
            // bit-sliced only where the width is a multiple of 64).
            algorithm: algorithm(&cfg)?,
            backend: backend.map_or_else(|| self.backend.clone(), str::to_string),
            config: cfg,
            ..self.clone()
        })
    }

    /// The lattices of the study, as "8 x 8 torus" or "8 x 8, 16 x 16 tori".
    fn tori(&self) -> String {
        if self.sizes.len() <= 1 {
            return format!("{} x {} torus", self.width, self.height);
        }
        let each: Vec<String> = self
            .sizes
            .iter()
            .map(|&l| {
                self.config
                    .for_size(l)
                    .map_or_else(|_| format!("{l} x {l}"), |c| format!("{} x {}", c.size(), c.height()))
            })
            .collect();
        format!("{} tori", each.join(", "))
    }

    /// The provenance as one line of JSON.
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("provenance serializes: plain fields and a serializable config")
    }

    /// `#` comment lines for the head of a CSV file, each ending in a
    /// newline: a readable summary, then the whole provenance as JSON.
    pub fn comment_lines(&self) -> String {
        let commit = self.commit.as_deref().map(|c| format!(" (commit {c})")).unwrap_or_default();
        let start = match self.start {
            InitialState::Ordered => "ordered",
            InitialState::Random => "random",
        };
        format!(
            "# warpmc {}{commit}\n# q = {}, J = {}, h = {}, {}, seed {}, {start} start\n\
             # {}; backend: {}\n# provenance: {}\n",
            self.warpmc,
            self.q,
            self.coupling,
            self.field,
            self.tori(),
            self.seed,
            self.algorithm,
            self.backend,
            self.to_json()
        )
    }

    /// [`comment_lines`](Self::comment_lines) for a CSV file of every size
    /// of the study: where it has several, the line of the update rule and
    /// the backend is given for each size, as both can differ between
    /// sizes (Metropolis is bit-sliced only where the width is a multiple
    /// of 64). `backends` names the backend that ran each size, where one
    /// has; the JSON line stays this provenance's (the first size's).
    pub fn study_comment_lines(&self, backends: &[(usize, String)]) -> String {
        let lines = self.comment_lines();
        if self.sizes.len() <= 1 {
            return lines;
        }
        let mut out = String::new();
        for line in lines.lines() {
            if line == format!("# {}; backend: {}", self.algorithm, self.backend) {
                for &l in &self.sizes {
                    let ran = backends.iter().find(|(size, _)| *size == l).map(|(_, b)| b.as_str());
                    let rule = self.config.for_size(l).and_then(|c| algorithm(&c));
                    let rule = rule.unwrap_or_else(|_| self.algorithm.clone());
                    out += &format!("# L = {l}: {rule}; backend: {}\n", ran.unwrap_or("not run yet"));
                }
            } else {
                out += line;
                out.push('\n');
            }
        }
        out
    }

    /// Key and value pairs for PNG text chunks.
    pub fn text_chunks(&self) -> Vec<(String, String)> {
        vec![
            ("Software".to_string(), format!("warpmc {}", self.warpmc)),
            ("warpmc-provenance".to_string(), self.to_json()),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ConfigFile;

    fn config() -> ProtocolConfig {
        ConfigFile { q: Some(3), size: Some(64), temp: Some(1.0), seed: Some(42), ..Default::default() }
            .resolve()
            .unwrap()
    }

    #[test]
    fn every_field_a_reader_needs_is_recorded() {
        let p = Provenance::new(&config(), "CPU, 2 threads", Some("abc123")).unwrap();
        let v = serde_json::from_str::<serde_json::Value>(&p.to_json()).unwrap();
        for key in ["warpmc", "commit", "q", "coupling", "field", "width", "height", "seed", "start", "algorithm"] {
            assert!(v.get(key).is_some(), "{key} missing from {v}");
        }
        assert_eq!(v["q"], 3);
        assert_eq!(v["seed"], 42);
        assert_eq!(v["backend"], "CPU, 2 threads");
        assert_eq!(v["config"]["size"], 64);
        assert!(v["algorithm"].as_str().unwrap().starts_with("checkerboard Metropolis"));
        assert_eq!(v["config"]["algorithm"], "metropolis");
    }

    #[test]
    fn the_algorithm_recorded_is_the_one_run() {
        let cfg = ConfigFile {
            q: Some(3),
            size: Some(64),
            temp: Some(1.0),
            algorithm: Some(crate::Algorithm::HeatBath),
            ..Default::default()
        }
        .resolve()
        .unwrap();
        let v =
            serde_json::from_str::<serde_json::Value>(&Provenance::new(&cfg, "CPU", None).unwrap().to_json()).unwrap();
        assert!(v["algorithm"].as_str().unwrap().starts_with("checkerboard heat-bath"), "{v}");
        assert_eq!(v["config"]["algorithm"], "heat-bath");
    }

    #[test]
    fn a_study_header_gives_each_sizes_rule_and_backend() {
        let study = ConfigFile { q: Some(3), sizes: Some(vec![32, 64, 128]), temp: Some(1.0), ..Default::default() }
            .resolve_sizes()
            .unwrap();
        let p = Provenance::new(&study[0], "CPU one", None).unwrap();
        let lines = p.study_comment_lines(&[(32, "CPU one".into()), (64, "CPU two".into())]);
        assert!(lines.lines().all(|l| l.starts_with('#')), "{lines}");
        let of = |l: usize| lines.lines().find(|x| x.starts_with(&format!("# L = {l}: "))).unwrap().to_string();
        assert!(of(32).contains("one random word per site") && of(32).ends_with("backend: CPU one"), "{lines}");
        assert!(of(64).contains("bit-sliced") && of(64).ends_with("backend: CPU two"), "{lines}");
        assert!(of(128).ends_with("backend: not run yet"), "{lines}");
        // One size: the lines of the run itself.
        let one = Provenance::new(&config(), "CPU", None).unwrap();
        assert_eq!(one.study_comment_lines(&[]), one.comment_lines());
    }

    #[test]
    fn comment_lines_are_all_comments_and_end_in_the_json() {
        let p = Provenance::new(&config(), "CPU", None).unwrap();
        let text = p.comment_lines();
        assert!(text.ends_with('\n'));
        assert!(text.lines().all(|l| l.starts_with("# ")), "{text}");
        let json = text.lines().last().unwrap().strip_prefix("# provenance: ").unwrap();
        assert_eq!(serde_json::from_str::<serde_json::Value>(json).unwrap()["commit"], serde_json::Value::Null);
        assert!(!text.contains("(commit"));
    }
}
