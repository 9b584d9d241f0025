//! `warpmc potts inspect`: what a checkpoint holds and how far its run has
//! got, read without running anything or changing the file.

use std::path::PathBuf;

use anyhow::Context;
use clap::Args;
use serde_json::json;
use warpmc_potts::checkpoint;
use warpmc_potts::protocol::{sci, temperature_text};

#[derive(Debug, Args)]
pub(crate) struct InspectArgs {
    /// The checkpoint file (--checkpoint of `warpmc potts run`).
    #[arg(value_name = "CHECKPOINT")]
    checkpoint: PathBuf,
    /// Print one JSON object instead of text.
    #[arg(long)]
    json: bool,
}

pub(crate) fn run(a: InspectArgs) -> anyhow::Result<()> {
    let path = &a.checkpoint;
    if path.as_os_str() == "-" {
        anyhow::bail!("inspect -: name the checkpoint file (it tells how to resume from that file)");
    }
    let bytes = checkpoint::read_bytes(path).context("inspect")?;
    let version = checkpoint::format_version(&bytes);
    let checkpoint::Checkpoint { config: cfg, state } = checkpoint::decode(&bytes).map_err(|e| match e {
        warpmc_potts::PottsError::BadCheckpoint(message) => {
            warpmc_potts::PottsError::Checkpoint { path: path.clone(), message }
        }
        other => other,
    })?;
    let sizes = cfg.study_sizes();
    let size_index = state.sizes_finished();
    let finished = state.finished(&cfg) && size_index + 1 == sizes.len();
    let temps = cfg.temperatures();
    let (chains, at_sweep) = state.under_way();
    let done = state.sweeps_done(&cfg);
    let total = cfg.total_sweeps();
    let ran_on = state.recorded_backend().unwrap_or_default().to_string();
    let resume = format!("warpmc potts run --resume {}", path.display());
    if a.json {
        let object = json!({
            "file": path.display().to_string(),
            "format": version,
            "finished": finished,
            "size": cfg.size(),
            "height": cfg.height(),
            "sizes": sizes,
            "sizes_finished": size_index,
            "temperatures": temps.len(),
            "temperatures_finished": state.temperatures_finished(&cfg),
            "chains_under_way": chains,
            "sweep_of_chains_under_way": at_sweep,
            "sweeps_per_chain": cfg.sweeps_per_chain(),
            "sweeps_done": done,
            "sweeps_total": total,
            "measurements": state.series().iter().flatten().map(Vec::len).sum::<usize>(),
            "backend": (!ran_on.is_empty()).then_some(ran_on),
            "checkpoint_every": state.checkpoint_every(),
            "last_lattice": state.last_lattice().is_some(),
            "config": cfg,
        });
        stdoutln!("{object}");
        return Ok(());
    }
    let mut out = String::new();
    let line = |out: &mut String, text: String| {
        out.push_str(&text);
        out.push('\n');
    };
    line(
        &mut out,
        format!(
            "{}: a warpmc Potts checkpoint (format {})",
            path.display(),
            version.map_or_else(|| "?".into(), |v| v.to_string())
        ),
    );
    let range = match temps {
        [one] => format!("T = {}", temperature_text(*one)),
        [first, .., last] => {
            format!("{} temperatures, {} … {}", temps.len(), temperature_text(*first), temperature_text(*last))
        }
        [] => "no temperature".into(),
    };
    let tempering = cfg.exchange_every().map(|n| format!(", parallel tempering every {n} sweeps")).unwrap_or_default();
    line(
        &mut out,
        format!(
            "run: q = {}, J = {}, h = {}, {} × {}, {range}, {} sample(s), {} + {} {} sweeps each{tempering}, {} start{}, \
             seed {}",
            cfg.q(),
            cfg.coupling(),
            cfg.field(),
            cfg.size(),
            cfg.height(),
            cfg.samples(),
            cfg.therm(),
            cfg.sweeps(),
            cfg.algorithm(),
            match cfg.init() {
                warpmc_potts::InitialState::Ordered => "ordered",
                warpmc_potts::InitialState::Random => "random",
            },
            if cfg.continue_from_previous() { ", each temperature continuing from the last" } else { "" },
            cfg.seed()
        ),
    );
    if sizes.len() > 1 {
        let list: Vec<String> = sizes.iter().map(usize::to_string).collect();
        line(
            &mut out,
            format!(
                "study of sizes {}: at L = {}, size {} of {}",
                list.join(", "),
                cfg.size(),
                size_index + 1,
                sizes.len()
            ),
        );
    }
    if finished {
        line(&mut out, "progress: finished".into());
    } else {
        let under_way = match chains {
            0 => String::new(),
            n => format!("; {n} chain(s) under way, at sweep {} of {}", at_sweep, cfg.sweeps_per_chain()),
        };
        line(
            &mut out,
            format!(
                "progress: {} of {} temperatures finished{under_way}; {:.1} % of this size's {} sweeps",
                state.temperatures_finished(&cfg),
                temps.len(),
                100.0 * done as f64 / total.max(1) as f64,
                sci(total as f64)
            ),
        );
    }
    if !ran_on.is_empty() {
        line(&mut out, format!("backend: {ran_on}"));
    }
    if let Some(s) = state.checkpoint_every() {
        line(&mut out, format!("saved every {s} s"));
    }
    if finished {
        let kept = if state.last_lattice().is_some() { " (--snapshot FILE writes its last lattice)" } else { "" };
        line(&mut out, format!("its results: {resume}{kept}"));
    } else {
        line(&mut out, format!("continue with: {resume} (and the run's output flags: --out, --series, --snapshot)"));
    }
    super::write_stdout(format_args!("{out}"))
}
