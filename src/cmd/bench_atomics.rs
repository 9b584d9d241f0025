//! `warpmc bench atomics`: reduce by key and histograms with plain,
//! warp-aggregated and shared-memory atomics, on the workloads of "Voting
//! and Shuffling to Optimize Atomic Operations" (Elmar Westphal, NVIDIA,
//! 2015), a fractal-flame image and a small histogram; every result checked
//! against the CPU.

use std::io::Write;

use anyhow::{Context, bail};
use clap::Args;
use warpmc_bench::atomics::{
    AtomicsBenchConfig, CellBox, CellValue, Flame, SmallHistogram, Timing, WorkloadResult, run_atomics_bench,
};
use warpmc_prims::CudaPrims;
use warpmc_prims::atomics::{AtomicStrategy, KeyOrder};

/// Reduce by key and histograms with warp-aggregated atomics: Westphal's experiment, timed and verified.
///
/// "Voting and Shuffling to Optimize Atomic Operations" (Westphal, NVIDIA,
/// 2015): adding values into bins by key, where the lanes of a warp often
/// share a key, goes faster when each warp first sums its lanes with equal
/// keys and does one atomic per key. Workloads:
///
///   cells   Westphal's experiment: a box of 100x100x100 cells with 10
///           particles per cell (10^7 elements, 10^6 bins), the cell index
///           as key, a value per particle; keys sorted, partially sorted
///           (particles displaced a little after the sort, order kept) or
///           random; f32 and f64 with hardware atomics, and f64 with the
///           compare-and-swap loop Westphal measured (f64-cas)
///   flame   a fractal-flame-like image: 1920x1080 bins, 2^24 points of a
///           chaotic map (Sierpinski-like, 16384 chains side by side), RGB
///           plus a hit count per point (4 x f32); points off the screen
///           have out-of-range keys, which the kernels skip
///   small   a histogram of 2^24 keys into 256 bins (fits in shared memory),
///           keys random and sorted
///
/// Strategies (kernel names in crates/prims/kernels/atomics.cu):
///
///   plain        one atomic per element
///   ballot       aggregated; peers from Westphal's ballot loop
///   match        aggregated; peers from __match_any_sync
///   runs         aggregated over runs of equal neighbouring keys
///   adaptive     runs or match per warp, from the runs in its keys
///   shared       bins privatized per block in shared memory (small only)
///   shared-runs  privatized bins, run-aggregated shared atomics
///   auto         what Auto picks (shown as "auto>runs"); with no hint
///                about the key order unless --hint is given
///
/// Time: device time per call, the median of --runs samples of 10 calls
/// back to back (bins not re-zeroed: accumulating costs the same). "vs
/// plain" is plain atomics' time over this one's (above 1: faster). Every
/// result is checked against the CPU's sequential sums: integers exactly,
/// floats within m*eps*sum|x| per bin of m values (the bound for two sums
/// of the same values in different orders). A mismatch fails the command.
/// At the end, auto's time beside the fastest strategy's, per workload.
///
/// Examples:
///   warpmc bench atomics
///   warpmc bench atomics --workloads cells --types f64,f64-cas --orders sorted
///   warpmc bench atomics --hint --json > atomics.jsonl
#[derive(Debug, Args)]
#[command(verbatim_doc_comment)]
pub(crate) struct AtomicsArgs {
    /// Workloads, comma separated, from: cells, flame, small (default: all).
    #[arg(long, value_name = "LIST", value_delimiter = ',', value_parser = clap::builder::PossibleValuesParser::new(WORKLOADS))]
    workloads: Vec<String>,
    /// Value types of the cell box, comma separated, from: f32, f64, f64-cas
    /// (default: all).
    #[arg(long, value_name = "LIST", value_delimiter = ',')]
    types: Vec<CellValue>,
    /// Key orders of the cell box, comma separated, from: sorted, partial,
    /// random (default: all).
    #[arg(long, value_name = "LIST", value_delimiter = ',', value_parser = parse_order)]
    orders: Vec<KeyOrder>,
    /// Strategies, comma separated, from: plain, ballot, match, runs,
    /// adaptive, shared, shared-runs, auto (default: all). Shared ones run
    /// only where the bins fit in shared memory.
    #[arg(long, value_name = "LIST", value_delimiter = ',')]
    strategies: Vec<AtomicStrategy>,
    /// Cells along each edge of the box (Westphal: 100).
    #[arg(long, value_name = "N", default_value_t = 100)]
    edge: u32,
    /// Particles per cell (Westphal: 10).
    #[arg(long, value_name = "N", default_value_t = 10)]
    per_cell: u32,
    /// Partially sorted keys: how far each particle moves from its sorted
    /// place, at most, along each axis, in cell widths. At 0.25 about a
    /// third of them change cells.
    #[arg(long, value_name = "CELLS", default_value_t = 0.25)]
    displacement: f64,
    /// Flame image size, WIDTHxHEIGHT.
    #[arg(long, value_name = "WxH", default_value = "1920x1080", value_parser = parse_size)]
    flame_size: (u32, u32),
    /// Points plotted into the flame image.
    #[arg(long, value_name = "N", default_value_t = 1 << 24)]
    flame_points: usize,
    /// Keys of the small-bins histogram.
    #[arg(long, value_name = "N", default_value_t = 1 << 24)]
    small_n: usize,
    /// Bins of the small-bins histogram.
    #[arg(long, value_name = "N", default_value_t = 256)]
    small_bins: u32,
    /// Tell auto the true key order (sorted, partial, random) instead of
    /// nothing.
    #[arg(long)]
    hint: bool,
    /// Timed samples per strategy (10 calls each; the median is printed).
    #[arg(long, value_name = "N", default_value_t = 10)]
    runs: usize,
    /// Seed of the inputs.
    #[arg(long, value_name = "S", default_value_t = 1)]
    seed: u64,
    /// Print one JSON object per strategy and workload instead of the table.
    #[arg(long)]
    json: bool,
}

const WORKLOADS: [&str; 3] = ["cells", "flame", "small"];

/// A key order of the cell box: any but `unknown` (which is no order).
fn parse_order(s: &str) -> anyhow::Result<KeyOrder> {
    match s.parse::<KeyOrder>() {
        Ok(o) if o != KeyOrder::Unknown => Ok(o),
        _ => bail!("unknown key order '{s}' (sorted, partial or random)"),
    }
}

fn parse_size(s: &str) -> anyhow::Result<(u32, u32)> {
    let bad = || anyhow::anyhow!("'{s}' is not a size like 1920x1080");
    let (w, h) = s.split_once('x').ok_or_else(bad)?;
    let (w, h) = (w.parse::<u32>().map_err(|_| bad())?, h.parse::<u32>().map_err(|_| bad())?);
    if w == 0 || h == 0 {
        bail!("the flame image {s} has no pixels");
    }
    Ok((w, h))
}

fn config(args: &AtomicsArgs) -> anyhow::Result<AtomicsBenchConfig> {
    let d = AtomicsBenchConfig::default();
    let on = |w: &str| args.workloads.is_empty() || args.workloads.iter().any(|x| x == w);
    if args.runs == 0 {
        bail!("--runs must be at least 1");
    }
    if args.edge == 0 || args.per_cell == 0 {
        bail!("--edge and --per-cell must be at least 1");
    }
    let particles = u64::from(args.edge).pow(3).saturating_mul(u64::from(args.per_cell));
    if particles > u64::from(u32::MAX) {
        bail!("--edge {}^3 x --per-cell {} = {particles} particles: at most 2^32 - 1", args.edge, args.per_cell);
    }
    if !args.displacement.is_finite() || args.displacement < 0.0 {
        bail!("--displacement must be a finite number of cell widths, not negative");
    }
    if args.flame_points == 0 || args.small_n == 0 || args.small_bins == 0 {
        bail!("--flame-points, --small-n and --small-bins must be at least 1");
    }
    let (w, h) = args.flame_size;
    if u64::from(w) * u64::from(h) >= u64::from(u32::MAX) {
        bail!("--flame-size {w}x{h}: too many pixels");
    }
    Ok(AtomicsBenchConfig {
        cells: on("cells").then_some(CellBox {
            edge: args.edge,
            per_cell: args.per_cell,
            displacement: args.displacement,
        }),
        orders: if args.orders.is_empty() { d.orders } else { args.orders.clone() },
        cell_values: if args.types.is_empty() { d.cell_values } else { args.types.clone() },
        flame: on("flame").then_some(Flame { width: w, height: h, points: args.flame_points }),
        small: on("small").then_some(SmallHistogram { n: args.small_n, nbins: args.small_bins }),
        small_orders: d.small_orders,
        strategies: if args.strategies.is_empty() { d.strategies } else { args.strategies.clone() },
        hint: args.hint,
        runs: args.runs,
        seed: args.seed,
    })
}

pub(crate) fn run(args: AtomicsArgs) -> anyhow::Result<()> {
    let cfg = config(&args)?;
    let p = CudaPrims::new(super::bench::cuda_device("atomics")?);
    let info = p.gpu().info().clone();
    let mut out = super::Stdout::lock();
    if !args.json {
        writeln!(
            out,
            "# {}: {} SMs, {}, {} MiB L2, {} KiB shared memory per block",
            info.name,
            info.sm_count,
            info.arch(),
            info.l2_cache >> 20,
            info.max_shared_per_block_optin >> 10
        )?;
        writeln!(
            out,
            "# ms: device time per call (median of {} samples of 10 calls); vs plain: plain's time / this one's; \
             auto: {}",
            cfg.runs,
            if cfg.hint { "given the true key order" } else { "no hint about the key order" }
        )?;
        writeln!(
            out,
            "{:<6} {:<8} {:<8} {:>9} {:>8} {:<18} {:>9} {:>8} {:>8}  check",
            "work", "order", "value", "n", "bins", "strategy", "ms", "Gelem/s", "vs plain"
        )?;
        out.flush()?;
    }
    noteln!("bench atomics: inputs are generated and summed on the CPU first; kernels compile on first use");
    let mut mismatches = 0usize;
    let mut summaries = Vec::new();
    run_atomics_bench(&p, &cfg, |w| {
        mismatches += w.timings.iter().filter(|t| t.mismatch.is_some()).count();
        if args.json { print_json(&mut out, w, &info.name) } else { print_table(&mut out, w) }
            .context("writing the results")?;
        summaries.extend(summary(w));
        anyhow::Ok(())
    })?;
    if !args.json && !summaries.is_empty() {
        writeln!(out, "# auto beside the fastest strategy of each workload:")?;
        for s in &summaries {
            writeln!(out, "#   {s}")?;
        }
    }
    if mismatches > 0 {
        bail!("{mismatches} results differed from the CPU reference (see the check column)");
    }
    Ok(())
}

fn strategy_label(t: &Timing) -> String {
    if t.strategy == AtomicStrategy::Auto { format!("auto>{}", t.ran) } else { t.strategy.to_string() }
}

fn gelem_s(w: &WorkloadResult, t: &Timing) -> f64 {
    w.n as f64 / (t.ms * 1e-3) / 1e9
}

fn print_table(out: &mut impl Write, w: &WorkloadResult) -> std::io::Result<()> {
    let plain = w.plain().map(|t| t.ms);
    for t in &w.timings {
        let speedup = plain.map_or_else(|| "-".to_string(), |p| format!("{:.2}x", p / t.ms));
        let check = t.mismatch.as_deref().map_or_else(|| "ok".to_string(), |m| format!("MISMATCH {m}"));
        writeln!(
            out,
            "{:<6} {:<8} {:<8} {:>9} {:>8} {:<18} {:>9.4} {:>8.2} {:>8}  {check}",
            w.workload,
            w.order.name(),
            w.value,
            w.n,
            w.nbins,
            strategy_label(t),
            t.ms,
            gelem_s(w, t),
            speedup
        )?;
    }
    for skipped in &w.skipped {
        writeln!(
            out,
            "{:<6} {:<8} {:<8} {:>9} {:>8} {:<18} skipped: {}",
            w.workload,
            w.order.name(),
            w.value,
            w.n,
            w.nbins,
            skipped.strategy.name(),
            skipped.why
        )?;
    }
    out.flush()
}

fn print_json(out: &mut impl Write, w: &WorkloadResult, device: &str) -> std::io::Result<()> {
    let plain = w.plain().map(|t| t.ms);
    for t in &w.timings {
        let v = serde_json::json!({
            "device": device, "workload": w.workload, "order": w.order.name(), "value": w.value,
            "n": w.n, "nbins": w.nbins, "strategy": t.strategy.name(), "ran": t.ran.name(), "ms": t.ms,
            "giga_elements_per_s": gelem_s(w, t), "speedup_vs_plain": plain.map(|p| p / t.ms),
            "mismatch": t.mismatch,
        });
        writeln!(out, "{v}")?;
    }
    out.flush()
}

/// "cells sorted f64: best runs 0.0810 ms; auto>runs 0.0820 ms (+1.2 %)".
fn summary(w: &WorkloadResult) -> Option<String> {
    let best = w.best()?;
    let auto = w.timings.iter().find(|t| t.strategy == AtomicStrategy::Auto)?;
    Some(format!(
        "{} {} {}: best {} {:.4} ms; auto>{} {:.4} ms ({:+.1} %)",
        w.workload,
        w.order.name(),
        w.value,
        best.strategy,
        best.ms,
        auto.ran,
        auto.ms,
        100.0 * (auto.ms / best.ms - 1.0)
    ))
}
