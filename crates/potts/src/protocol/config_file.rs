//! [`ConfigFile`], the TOML form of a run, and the error messages that
//! point at the line of a bad value.

use std::path::Path;

use serde::{Deserialize, Serialize};

use warpmc_gpu::BackendChoice;

use crate::algorithm::MAX_CHAIN_INDEX;
use crate::error::{PottsError, Result};
use crate::lattice::InitialState;
use crate::model::check_temperature;
use crate::update::Algorithm;

use super::{ProtocolConfig, Temperatures};

/// The largest configuration file read: a list of a million temperatures
/// is about 10 MiB.
pub const MAX_CONFIG_BYTES: u64 = 64 << 20;

/// The bytes of the configuration file `path`: an error naming it when it
/// cannot be read or holds more than [`MAX_CONFIG_BYTES`] (a device such as
/// /dev/zero is one error, not a process that grows until it is killed).
/// `-` is standard input.
pub fn read_config_bytes(path: &Path) -> Result<Vec<u8>> {
    use std::io::Read;
    let io = |e| PottsError::io(path, e);
    let too_large = || PottsError::Config {
        path: path.to_path_buf(),
        message: format!(
            "more than {}, the most warpmc reads as a configuration file; is this the right file?",
            warpmc_host::memory::human_bytes(MAX_CONFIG_BYTES)
        ),
    };
    let mut bytes = Vec::new();
    if path.as_os_str() == "-" {
        std::io::stdin().lock().take(MAX_CONFIG_BYTES + 1).read_to_end(&mut bytes).map_err(io)?;
    } else {
        let file = std::fs::File::open(path).map_err(io)?;
        // A regular file too large is refused before it is read; a device
        // or a pipe says its size only by being read.
        if file.metadata().is_ok_and(|m| m.is_file() && m.len() > MAX_CONFIG_BYTES) {
            return Err(too_large());
        }
        file.take(MAX_CONFIG_BYTES + 1).read_to_end(&mut bytes).map_err(io)?;
    }
    if bytes.len() as u64 > MAX_CONFIG_BYTES {
        return Err(too_large());
    }
    Ok(bytes)
}

/// The TOML form of a run. Every key is optional here; missing ones come
/// from the command line or defaults. Unknown keys are an error.
///
/// ```toml
/// q = 9
/// size = 2048                         # or size = [16, 32, 64]: one run per size
/// temps = "0.7212:0.721347:0.00001"   # or temps = [0.70, 0.72], or temp = 0.72
/// init = "ordered"
/// therm = 100000
/// sweeps = 10000
/// measure_every = 500
/// samples = 1
/// seed = 1
/// continue = true
/// algorithm = "metropolis"            # or "heat-bath", "swendsen-wang", "wolff"
/// ```
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "TomlConfig")]
pub struct ConfigFile {
    /// q.
    pub q: Option<u32>,
    /// L.
    pub size: Option<usize>,
    /// Several sizes L, run one after another (a finite-size-scaling study
    /// of square lattices; `size = [16, 32]` in TOML). Resolve it with
    /// [`ConfigFile::resolve_sizes`].
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sizes: Option<Vec<usize>>,
    /// L'.
    pub height: Option<usize>,
    /// J.
    pub coupling: Option<f64>,
    /// h.
    pub field: Option<f64>,
    /// A single temperature.
    pub temp: Option<f64>,
    /// A range string or a list.
    pub temps: Option<Temperatures>,
    /// "ordered" or "random".
    pub init: Option<InitialState>,
    /// Thermalisation sweeps.
    pub therm: Option<u64>,
    /// Measurement sweeps.
    pub sweeps: Option<u64>,
    /// Sweeps between measurements.
    pub measure_every: Option<u64>,
    /// Independent repetitions.
    pub samples: Option<u32>,
    /// Seed.
    pub seed: Option<u64>,
    /// Continue from the previous temperature's state.
    #[serde(rename = "continue")]
    pub continue_from_previous: Option<bool>,
    /// "auto", "cpu" or "cuda".
    pub backend: Option<BackendChoice>,
    /// "metropolis", "heat-bath", "swendsen-wang" or "wolff".
    pub algorithm: Option<Algorithm>,
    /// Parallel tempering: replica exchange between neighbouring
    /// temperatures.
    pub tempering: Option<bool>,
    /// Sweeps between exchange rounds (with `tempering`; default 10).
    pub exchange_every: Option<u64>,
}

/// `size = L` or `size = [L1, L2, …]`.
#[derive(Deserialize)]
#[serde(untagged)]
enum SizeOrSizes {
    One(usize),
    Many(Vec<usize>),
}

/// What a TOML file holds: [`ConfigFile`] with `size` a number or a list.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TomlConfig {
    q: Option<u32>,
    size: Option<SizeOrSizes>,
    height: Option<usize>,
    coupling: Option<f64>,
    field: Option<f64>,
    temp: Option<f64>,
    temps: Option<Temperatures>,
    init: Option<InitialState>,
    therm: Option<u64>,
    sweeps: Option<u64>,
    measure_every: Option<u64>,
    samples: Option<u32>,
    seed: Option<u64>,
    #[serde(rename = "continue")]
    continue_from_previous: Option<bool>,
    backend: Option<BackendChoice>,
    algorithm: Option<Algorithm>,
    tempering: Option<bool>,
    exchange_every: Option<u64>,
}

impl TryFrom<TomlConfig> for ConfigFile {
    type Error = String;
    fn try_from(t: TomlConfig) -> std::result::Result<Self, String> {
        let (size, sizes) = match t.size {
            None => (None, None),
            Some(SizeOrSizes::One(l)) => (Some(l), None),
            Some(SizeOrSizes::Many(v)) if v.is_empty() => return Err("size = [] lists no size".into()),
            Some(SizeOrSizes::Many(v)) if v.len() == 1 => (Some(v[0]), None),
            Some(SizeOrSizes::Many(v)) => (None, Some(v)),
        };
        Ok(ConfigFile {
            q: t.q,
            size,
            sizes,
            height: t.height,
            coupling: t.coupling,
            field: t.field,
            temp: t.temp,
            temps: t.temps,
            init: t.init,
            therm: t.therm,
            sweeps: t.sweeps,
            measure_every: t.measure_every,
            samples: t.samples,
            seed: t.seed,
            continue_from_previous: t.continue_from_previous,
            backend: t.backend,
            algorithm: t.algorithm,
            tempering: t.tempering,
            exchange_every: t.exchange_every,
        })
    }
}

/// serde's message about the value of `key` in words for a user, e.g.
/// "q = -1: expected a whole number from 0 to 4294967295" for "invalid
/// value: integer `-1`, expected u32". Messages it does not know (an unknown
/// key or variant, a range check) keep their words, after the key.
pub fn describe_value_error(key: &str, message: &str) -> String {
    if message.starts_with("unknown field") || message.starts_with(key) {
        return message.to_string();
    }
    // The keys that take a word: serde's message for a number, boolean or
    // list there ("invalid type: unit variant, expected string only") names
    // no word.
    const WORDS: [(&str, &str); 3] = [
        ("init", "\"ordered\" or \"random\""),
        ("backend", "\"auto\", \"cpu\" or \"cuda\""),
        ("algorithm", "\"metropolis\", \"heat-bath\", \"swendsen-wang\" or \"wolff\""),
    ];
    if let Some((_, words)) = WORDS.iter().find(|(k, _)| *k == key)
        && message.contains("invalid type")
    {
        return format!("{key}: expected {words} (a string)");
    }
    const EXPECTED: [(&str, &str); 8] = [
        ("expected u32", "a whole number from 0 to 4294967295"),
        ("expected u64", "a whole number from 0 to 18446744073709551615"),
        ("expected usize", "a whole number from 0 to 18446744073709551615"),
        ("expected f64", "a number"),
        ("expected a boolean", "true or false"),
        ("expected a string", "a string"),
        ("untagged enum SizeOrSizes", "a width or a list of widths (whole numbers)"),
        ("untagged enum Temperatures", "a list of numbers or a range \"T0:T1:DT\""),
    ];
    let Some((_, what)) = EXPECTED.iter().find(|(pattern, _)| message.contains(pattern)) else {
        return format!("{key}: {message}");
    };
    // The type's range would mislead where the key's own is narrower.
    let own_range = match key {
        "q" => Some(format!("a whole number from 2 to {}", crate::model::MAX_Q)),
        "samples" => Some(format!("a whole number from 1 to {}", MAX_CHAIN_INDEX - 1)),
        _ => None,
    };
    let what = own_range.as_deref().unwrap_or(what);
    // serde names the value it got as `value` (numbers) or "value" (strings).
    let got =
        message.split_once('`').and_then(|(_, rest)| rest.split_once('`')).map(|(v, _)| v.to_string()).or_else(|| {
            message
                .split_once("string \"")
                .and_then(|(_, rest)| rest.rsplit_once("\", "))
                .map(|(v, _)| format!("\"{v}\""))
        });
    match got {
        Some(v) => format!("{key} = {v}: expected {what}"),
        None => format!("{key}: expected {what}"),
    }
}

/// Where byte `at` of `text` is, for a syntax error: " at line N: the
/// line" (the line shortened when long).
fn at_line(text: &str, at: usize) -> String {
    let at = at.min(text.len());
    let Some(before) = text.get(..at) else { return format!(" (at byte {at})") };
    let number = before.matches('\n').count() + 1;
    let start = before.rfind('\n').map_or(0, |i| i + 1);
    let line = text[start..].lines().next().unwrap_or("").trim();
    let line: String =
        if line.chars().count() > 60 { line.chars().take(60).collect::<String>() + "…" } else { line.into() };
    format!(" at line {number}: {line}")
}

/// The message for an integer beyond TOML's (signed 64-bit) range, e.g.
/// `seed = 18446744073709551615`, which toml reports at the value as "value
/// was too large" or, beyond u64, as an i128 of invalid type; `None` for any
/// other error.
fn integer_too_large(text: &str, message: &str, at: usize) -> Option<String> {
    if !["too large", "too small", "as i128"].iter().any(|m| message.contains(m)) {
        return None;
    }
    let line_start = text.get(..at)?.rfind('\n').map_or(0, |i| i + 1);
    let line = text[line_start..].lines().next()?;
    let (key, value) = line.split_once('=')?;
    let (key, value) = (key.trim(), value.split('#').next()?.trim());
    let seed = if key == "seed" { " (a larger seed can be given as --seed)" } else { "" };
    Some(format!("{key} = {value}: TOML integers run from -2^63 to 2^63 - 1 = 9223372036854775807{seed}"))
}

/// Every key of a resolved protocol: the configuration that resolves to it
/// again (a study of several sizes as its list of sizes).
impl From<&ProtocolConfig> for ConfigFile {
    fn from(c: &ProtocolConfig) -> Self {
        let study = c.sizes.len() > 1;
        ConfigFile {
            q: Some(c.q),
            size: (!study).then_some(c.size),
            sizes: study.then(|| c.sizes.clone()),
            height: (!study).then_some(c.height),
            coupling: Some(c.coupling),
            field: Some(c.field),
            temp: None,
            temps: Some(Temperatures::List(c.temperatures.clone())),
            init: Some(c.init),
            therm: Some(c.therm),
            sweeps: Some(c.sweeps),
            measure_every: Some(c.measure_every),
            samples: Some(c.samples),
            seed: Some(c.seed),
            continue_from_previous: Some(c.continue_from_previous),
            backend: Some(c.backend),
            algorithm: Some(c.algorithm),
            tempering: Some(c.exchange_every.is_some()),
            exchange_every: c.exchange_every,
        }
    }
}

impl ConfigFile {
    /// Parses TOML text (`path` only names the file in errors). A value of
    /// the wrong kind is reported with its key, in words
    /// ([`describe_value_error`]).
    pub fn parse(text: &str, path: &Path) -> Result<Self> {
        let config_error = |message: String| PottsError::Config { path: path.to_path_buf(), message };
        let syntax = |e: toml::de::Error| {
            if let Some(m) = e.span().and_then(|span| integer_too_large(text, e.message(), span.start)) {
                return config_error(m);
            }
            config_error(e.message().to_string() + &e.span().map(|s| at_line(text, s.start)).unwrap_or_default())
        };
        let table: toml::Table = toml::from_str(text).map_err(syntax)?;
        // Each key on its own first, so that an error can name it (every
        // key is optional, so a table of one key is a configuration).
        for (key, value) in &table {
            let one = toml::Table::from_iter([(key.clone(), value.clone())]);
            if let Err(e) = toml::Value::Table(one).try_into::<ConfigFile>() {
                return Err(config_error(describe_value_error(key, e.message())));
            }
        }
        toml::Value::Table(table).try_into().map_err(syntax)
    }

    /// [`ConfigFile::parse`], or, where `text` is a results file warpmc
    /// wrote (a CSV file, whose `# provenance:` line records the study, or
    /// the JSON lines of `--json`, whose `run` objects do), the study it
    /// records: every key given, so that the same run is made again (keys
    /// of another configuration, such as the command line's flags, laid
    /// over it with [`ConfigFile::or`] change it: another seed, more
    /// sweeps).
    pub fn parse_or_results(text: &str, path: &Path) -> Result<Self> {
        match Self::recorded_in(text, path) {
            Some(recorded) => recorded,
            None => Self::parse(text, path),
        }
    }

    /// The study the results file `text` records (every key given), or
    /// `None` for text that is not one (`path` only names the file in
    /// errors).
    pub fn recorded_in(text: &str, path: &Path) -> Option<Result<Self>> {
        let config_error = |what: &str, e: String| PottsError::Config {
            path: path.to_path_buf(),
            message: format!("{what} holds no configuration warpmc can read: {e}"),
        };
        let (what, config) = if let Some(line) = text.lines().find_map(|l| l.strip_prefix("# provenance: ")) {
            let config = serde_json::from_str::<serde_json::Value>(line)
                .map_err(|e| e.to_string())
                .and_then(|v| v.get("config").cloned().ok_or_else(|| "no \"config\" in it".to_string()));
            ("its \"# provenance:\" line", config)
        } else if text.trim_start().starts_with('{') {
            let first = text.trim_start().lines().next().unwrap_or_default();
            let config = serde_json::from_str::<serde_json::Value>(first).map_err(|e| e.to_string()).and_then(|v| {
                v.get("run")
                    .and_then(|r| r.get("config"))
                    .cloned()
                    .ok_or_else(|| "no \"run\" with a \"config\"".to_string())
            });
            ("its first JSON line", config)
        } else {
            return None;
        };
        let config = config.and_then(|c| serde_json::from_value::<ProtocolConfig>(c).map_err(|e| e.to_string()));
        Some(config.map(|c| ConfigFile::from(&c)).map_err(|e| config_error(what, e)))
    }

    /// Reads and parses a TOML file (of at most [`MAX_CONFIG_BYTES`]).
    pub fn read(path: &Path) -> Result<Self> {
        let text = String::from_utf8(read_config_bytes(path)?).map_err(|_| {
            PottsError::io(
                path,
                std::io::Error::new(std::io::ErrorKind::InvalidData, "stream did not contain valid UTF-8"),
            )
        })?;
        Self::parse(&text, path)
    }

    /// Fills every key missing here from `other` (the command line wins by
    /// being `self`).
    pub fn or(self, other: ConfigFile) -> ConfigFile {
        // A temperature given on one side replaces both forms on the other.
        let (temp, temps) = if self.temp.is_some() || self.temps.is_some() {
            (self.temp, self.temps)
        } else {
            (other.temp, other.temps)
        };
        // So does a size or a list of sizes.
        let (size, sizes) = if self.size.is_some() || self.sizes.is_some() {
            (self.size, self.sizes)
        } else {
            (other.size, other.sizes)
        };
        ConfigFile {
            q: self.q.or(other.q),
            size,
            sizes,
            height: self.height.or(other.height),
            coupling: self.coupling.or(other.coupling),
            field: self.field.or(other.field),
            temp,
            temps,
            init: self.init.or(other.init),
            therm: self.therm.or(other.therm),
            sweeps: self.sweeps.or(other.sweeps),
            measure_every: self.measure_every.or(other.measure_every),
            samples: self.samples.or(other.samples),
            seed: self.seed.or(other.seed),
            continue_from_previous: self.continue_from_previous.or(other.continue_from_previous),
            backend: self.backend.or(other.backend),
            algorithm: self.algorithm.or(other.algorithm),
            tempering: self.tempering.or(other.tempering),
            exchange_every: self.exchange_every.or(other.exchange_every),
        }
    }

    /// The validated protocol. `q`, `size` and a temperature are required
    /// ([`PottsError::Missing`] names the key otherwise); the rest defaults
    /// to: J = 1, h = 0, ordered start, therm = 1000, sweeps = 1000,
    /// measure_every = 10, samples = 1, seed = 1, no continuation, backend
    /// auto, Metropolis, no tempering (exchanges every 10 sweeps with it).
    pub fn resolve(&self) -> Result<ProtocolConfig> {
        let size = match (&self.size, self.sizes.as_deref()) {
            (_, Some([l])) => *l,
            (_, Some(list)) if !list.is_empty() => {
                return Err(PottsError::InvalidInput(format!(
                    "{} lattice sizes given: a study of several sizes is one protocol per size \
                     (ConfigFile::resolve_sizes)",
                    list.len()
                )));
            }
            (Some(l), _) => *l,
            (None, _) => return Err(PottsError::Missing("size")),
        };
        let temperatures = match (&self.temp, &self.temps) {
            (Some(_), Some(_)) => {
                return Err(PottsError::InvalidInput("give either temp or temps, not both".into()));
            }
            (Some(t), None) => vec![check_temperature(*t)?],
            (None, Some(ts)) => ts.expand()?,
            (None, None) => return Err(PottsError::Missing("temp")),
        };
        let cfg = ProtocolConfig {
            q: self.q.ok_or(PottsError::Missing("q"))?,
            size,
            height: self.height.unwrap_or(size),
            coupling: self.coupling.unwrap_or(1.0),
            field: self.field.unwrap_or(0.0),
            temperatures,
            init: self.init.unwrap_or(InitialState::Ordered),
            therm: self.therm.unwrap_or(1000),
            sweeps: self.sweeps.unwrap_or(1000),
            measure_every: self.measure_every.unwrap_or(10),
            samples: self.samples.unwrap_or(1),
            seed: self.seed.unwrap_or(1),
            continue_from_previous: self.continue_from_previous.unwrap_or(false),
            backend: self.backend.unwrap_or(BackendChoice::Auto),
            algorithm: self.algorithm.unwrap_or_default(),
            exchange_every: match (self.tempering.unwrap_or(false), self.exchange_every) {
                (true, every) => Some(every.unwrap_or(10)),
                (false, None) => None,
                (false, Some(_)) => {
                    return Err(PottsError::InvalidInput(
                        "the sweeps between replica exchanges (exchange_every, --exchange-every) are given but tempering (--tempering) is not on".into(),
                    ));
                }
            },
            sizes: Vec::new(),
        };
        cfg.validate()?;
        Ok(cfg)
    }

    /// One validated protocol per size, in run order: the list of sizes
    /// (square lattices, so no height), or the one size. Each records the
    /// whole list ([`ProtocolConfig::study_sizes`]).
    ///
    /// ```
    /// use warpmc_potts::{ConfigFile, Temperatures};
    /// let study = ConfigFile {
    ///     q: Some(2),
    ///     sizes: Some(vec![16, 32]),
    ///     temp: Some(1.0),
    ///     ..Default::default()
    /// }
    /// .resolve_sizes()?;
    /// assert_eq!(study.iter().map(|c| c.size()).collect::<Vec<_>>(), [16, 32]);
    /// assert_eq!(study[1].study_sizes(), [16, 32]);
    /// # Ok::<(), warpmc_potts::PottsError>(())
    /// ```
    pub fn resolve_sizes(&self) -> Result<Vec<ProtocolConfig>> {
        let list = match self.sizes.as_deref() {
            Some(list) if list.len() > 1 => list.to_vec(),
            _ => return Ok(vec![self.resolve()?]),
        };
        if self.height.is_some() {
            return Err(PottsError::InvalidInput(
                "a study of several sizes runs square lattices; give no separate height".into(),
            ));
        }
        list.iter()
            .map(|&l| {
                let mut cfg = ConfigFile { size: Some(l), sizes: None, ..self.clone() }.resolve()?;
                cfg.sizes = list.clone();
                cfg.validate()?;
                Ok(cfg)
            })
            .collect()
    }
}
