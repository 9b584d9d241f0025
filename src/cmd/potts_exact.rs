//! `warpmc potts exact`: exact energies and specific heats of finite tori,
//! the numbers a run on the same torus must reproduce within its errors.

use std::path::PathBuf;

use anyhow::bail;
use clap::Args;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use indicatif::{ProgressBar, ProgressStyle};
use warpmc_potts::exact::{ExactRow, for_each_exact_row};
use warpmc_potts::{PottsError, Temperatures};

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
        // The table printed on standard output, when that is the same file.
        let files: Vec<_> = warpmc_host::output::standard_output()
            .into_iter()
            .chain([warpmc_host::output::NamedFile::output("--out", path)])
            .collect();
        warpmc_host::output::check_distinct(&files).map_err(anyhow::Error::msg)?;
    }
    // Held to the end: no run writes the file meanwhile (nor this while
    // a run holds it).
    let _claim = match &a.out {
        Some(path) => warpmc_host::output::Claim::take(path, "--out file")?,
        None => None,
    };
    super::potts::no_repeats("--size", &a.size)?;
    let tori: Vec<(usize, usize)> = a.size.iter().map(|&l| (l, a.height.unwrap_or(l))).collect();
    // Ctrl-C (or a batch system's SIGTERM) stops between values or inside a
    // long one: the values computed are kept (printed as they came, and
    // written to --out). A second Ctrl-C ends the process at once.
    let interrupted = Arc::new(AtomicBool::new(false));
    super::stop_on_signals(interrupted.clone(), || {
        noteln!("interrupted again: stopping at once (--out is not written)");
        warpmc_host::output::remove_unfinished();
        std::process::exit(super::interrupted_status());
    })?;
    let commit = option_env!("WARPMC_COMMIT").filter(|c| !c.is_empty());
    let count = tori.len() * temperatures.len();
    // A bar on a terminal, for values that take seconds each (Kaufman's
    // sums on sides near 2^24, transfer matrices of the largest tori).
    let bar = ProgressBar::new(count as u64);
    bar.set_style(
        ProgressStyle::with_template("exact values {pos}/{len} [{bar:30}]  elapsed {elapsed}  eta {eta}")
            .expect("static template")
            .progress_chars("=> "),
    );
    let mut rows: Vec<ExactRow> = Vec::new();
    let mut shown: anyhow::Result<()> = Ok(());
    // Set when standard output fails: without --out the values left would
    // go nowhere, and the work stops.
    let unshown = std::cell::Cell::new(false);
    let computed = for_each_exact_row(
        a.q,
        &tori,
        &temperatures,
        a.coupling,
        TEXT_BYTES_PER_ROW,
        &mut || interrupted.load(Ordering::SeqCst) || (unshown.get() && a.out.is_none()),
        &mut |r| {
            bar.inc(1);
            if shown.is_ok() {
                shown = bar.suspend(|| show(&a, &r, rows.is_empty(), tori.len(), temperatures.len(), commit));
                unshown.set(shown.is_err());
            }
            rows.push(r);
        },
    );
    bar.finish_and_clear();
    let stopped = match computed {
        Ok(()) => false,
        Err(PottsError::Interrupted) => true,
        Err(e) => return Err(e.into()),
    };
    // A reader that went away (`| head`) ends the work quietly; --out is
    // written first.
    let shown = match shown {
        Err(e) if a.out.is_none() => return Err(e),
        shown => shown,
    };
    if let Some(path) = &a.out
        && !rows.is_empty()
    {
        let method = rows[0].method;
        let mut text = format!(
            "# warpmc {}{}\n# exact values per site of the q = {} Potts model, H = -J sum delta(s_i, s_j), J = {}, \
             on periodic tori: {method}\n",
            env!("CARGO_PKG_VERSION"),
            commit.map(|c| format!(" (commit {c})")).unwrap_or_default(),
            a.q,
            a.coupling,
        );
        if stopped {
            text += &format!("# interrupted: {} of the {count} values\n", rows.len());
        }
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
    if stopped {
        let kept = match &a.out {
            Some(p) if rows.is_empty() => format!("; {} is as it was", p.display()),
            Some(p) => format!("; {} holds them", p.display()),
            None => String::new(),
        };
        noteln!("interrupted: {} of the {count} values were computed{kept}", rows.len());
        return Err(super::QuietExit(super::interrupted_status()).into());
    }
    shown
}

/// Prints a value as it comes: a JSON object, or a row of the table (after
/// the table's heading, for the first).
fn show(
    a: &ExactArgs,
    r: &ExactRow,
    first: bool,
    tori: usize,
    temperatures: usize,
    commit: Option<&str>,
) -> anyhow::Result<()> {
    if a.json {
        let mut v = serde_json::to_value(r)?;
        v["warpmc"] = env!("CARGO_PKG_VERSION").into();
        v["commit"] = commit.into();
        stdoutln!("{v}");
        return Ok(());
    }
    if first {
        stdoutln!(
            "exact: q = {}, J = {}, {tori} torus(es), {temperatures} temperature(s); {}",
            a.q,
            temperature_text(a.coupling),
            r.method
        );
        stdoutln!("{:>6} {:>6} {:>12} {:>20} {:>20}", "L", "L'", "T", "energy", "specific heat");
    }
    stdoutln!(
        "{:>6} {:>6} {:>12} {:>20} {:>20}",
        r.width,
        r.height,
        temperature_text(r.temperature),
        table_value(r.energy),
        table_value(r.specific_heat)
    );
    Ok(())
}

/// A value for the table: 12 decimals, or 12 significant digits in
/// scientific notation where decimals would hide them (a specific heat of
/// 6.8e-15 at low temperature is not 0.000000000000). CSV and JSON carry
/// every digit.
fn table_value(x: f64) -> String {
    if x != 0.0 && x.is_finite() && (x.abs() < 1e-3 || x.abs() >= 1e8) {
        format!("{x:.11e}")
    } else {
        format!("{x:.12}")
    }
}

/// A temperature as given, to every digit: plainly for ordinary values, in
/// scientific notation for tiny or huge ones (1e-300, not 300 zeros).
fn temperature_text(t: f64) -> String {
    if t == 0.0 {
        // Either sign: J = 0.
        "0".to_string()
    } else if (1e-4..1e9).contains(&t.abs()) {
        format!("{t}")
    } else {
        format!("{t:e}")
    }
}
