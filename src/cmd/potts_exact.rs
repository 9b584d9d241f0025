//! `warpmc potts exact`: exact energies and specific heats of finite tori,
//! the numbers a run on the same torus must reproduce within its errors.

use std::path::PathBuf;

use anyhow::bail;
use clap::Args;
use warpmc_potts::Temperatures;
use warpmc_potts::exact::exact_rows_or_stop;

/// Bytes of CSV or JSON text a row may take besides itself, checked with the
/// rows' memory before any is computed.
const TEXT_BYTES_PER_ROW: u64 = 256;

#[derive(Debug, Args)]
pub(crate) struct ExactArgs {
    /// Number of states q (default 2: Kaufman's solution, sides up to 2^24; other
    /// q are counted exactly on small tori, up to 7×7 for q = 3, 6×6 for
    /// q = 4, 5×5 for q = 5).
    #[arg(long, value_name = "Q", default_value_t = 2)]
    q: u32,
    /// Lattice width L, or a comma list L1,L2,… of square tori.
    #[arg(long, value_name = "L", value_delimiter = ',', required = true, action = clap::ArgAction::Set)]
    size: Vec<usize>,
    /// Lattice height L' (default L).
    #[arg(long, value_name = "L2")]
    height: Option<usize>,
    /// Coupling J (default 1; for q = 2, J < 0 on a torus with an odd side,
    /// a frustrated antiferromagnet, is counted: up to 11×11).
    #[arg(long, value_name = "J", default_value_t = 1.0, allow_negative_numbers = true)]
    coupling: f64,
    /// A single temperature.
    #[arg(long, value_name = "T", conflicts_with = "temps", allow_negative_numbers = true)]
    temp: Option<f64>,
    /// Temperatures: T0:T1:DT (inclusive range) or a comma list T1,T2,….
    #[arg(long, value_name = "T0:T1:DT", allow_hyphen_values = true)]
    temps: Option<String>,
    /// Write the values as CSV (columns L, height, temperature, energy,
    /// specific_heat), opening with `#` lines that say what they are
    /// (pandas: `read_csv(FILE, comment="#")`).
    #[arg(long, value_name = "FILE")]
    out: Option<PathBuf>,
    /// Print one JSON object per torus and temperature instead of a table.
    #[arg(long)]
    json: bool,
    /// Let --out replace a file that holds a run's checkpoint.
    #[arg(long)]
    force: bool,
}

/// Columns of the CSV, in order (named as in `warpmc potts run`'s).
const COLUMNS: [&str; 5] = ["L", "height", "temperature", "energy", "specific_heat"];

pub(crate) fn run(a: ExactArgs) -> anyhow::Result<()> {
    let temperatures = match (&a.temps, a.temp) {
        (Some(s), _) => super::potts::temperatures_flag(s)?,
        (None, Some(t)) => Temperatures::List(vec![t]),
        (None, None) => bail!("missing --temp or --temps"),
    }
    .expand()?;
    // The values take up to minutes to compute: an output that cannot be
    // written is refused first, not after them.
    if let Some(path) = &a.out {
        if path.as_os_str() == "-" {
            bail!(
                "--out -: this output is written to a file; name one (without --out the values go to standard output)"
            );
        }
        super::potts::refuse_checkpoint("--out", path, a.force)?;
        warpmc_host::output::check_writable(path)?;
    }
    // Held to the end: no run writes the file meanwhile (nor this while
    // a run holds it).
    let _claim = match &a.out {
        Some(path) => warpmc_host::output::Claim::take(path, "--out file")?,
        None => None,
    };
    super::potts::no_repeats("--size", &a.size)?;
    let tori: Vec<(usize, usize)> = a.size.iter().map(|&l| (l, a.height.unwrap_or(l))).collect();
    // Ctrl-C ends the process as it is (no handler): nothing is written
    // before every row is computed.
    let rows = exact_rows_or_stop(a.q, &tori, &temperatures, a.coupling, TEXT_BYTES_PER_ROW, &mut || false)?;
    let method = rows.first().map_or("", |r| r.method);
    let commit = option_env!("WARPMC_COMMIT").filter(|c| !c.is_empty());
    if let Some(path) = &a.out {
        let mut text = format!(
            "# warpmc {}{}\n# exact values per site of the q = {} Potts model, H = -J sum delta(s_i, s_j), J = {}, \
             on periodic tori: {method}\n",
            env!("CARGO_PKG_VERSION"),
            commit.map(|c| format!(" (commit {c})")).unwrap_or_default(),
            a.q,
            a.coupling,
        );
        text += &COLUMNS.join(",");
        text.push('\n');
        for r in &rows {
            text += &format!(
                "{},{},{},{},{}\n",
                r.width,
                r.height,
                temperature_text(r.temperature),
                r.energy,
                r.specific_heat
            );
        }
        warpmc_host::output::write_bytes(path, text.as_bytes())?;
    }
    if a.json {
        for r in &rows {
            let mut v = serde_json::to_value(r)?;
            v["warpmc"] = env!("CARGO_PKG_VERSION").into();
            v["commit"] = commit.into();
            stdoutln!("{v}");
        }
        return Ok(());
    }
    stdoutln!(
        "exact: q = {}, J = {}, {} torus(es), {} temperature(s); {method}",
        a.q,
        temperature_text(a.coupling),
        tori.len(),
        temperatures.len()
    );
    stdoutln!("{:>6} {:>6} {:>12} {:>20} {:>20}", "L", "L'", "T", "energy", "specific heat");
    for r in &rows {
        stdoutln!(
            "{:>6} {:>6} {:>12} {:>20.12} {:>20.12}",
            r.width,
            r.height,
            temperature_text(r.temperature),
            r.energy,
            r.specific_heat
        );
    }
    Ok(())
}

/// A temperature as given, to every digit: plainly for ordinary values, in
/// scientific notation for tiny or huge ones (1e-300, not 300 zeros).
fn temperature_text(t: f64) -> String {
    if (1e-4..1e9).contains(&t.abs()) { format!("{t}") } else { format!("{t:e}") }
}
