//! `warpmc bench shuffle`: the timing experiments of "Shuffle: Tips and
//! Tricks" (Julien Demouth, GTC 2013) on this machine's GPU, every result
//! checked against a CPU emulation.

use std::io::Write;

use anyhow::bail;
use warpmc_bench::shuffle::{ElemType, Experiment, ShuffleBenchConfig, ShuffleRow, Variant, run_shuffle_bench};

/// Demouth's shuffle experiments: shared memory versus shuffles, timed and verified.
///
/// "Shuffle: Tips and Tricks" (Julien Demouth, GTC 2013), slides 7–21: each
/// experiment is a warp operation run --reps times in a loop inside one
/// kernel (input read once, result written once), in four ways:
///
///   SMEM                 through shared memory with __syncthreads()
///   SMEM (unsafe)        volatile shared memory, no barrier: the slides'
///                        warp-synchronous trick, a data race since Volta
///   SMEM + __syncwarp()  the correct modern form of that trick
///   SHFL                 the *_sync shuffle intrinsics, no shared memory
///
/// plus slide 16's inline-PTX scan with the shuffle's predicate (fp32, int32).
///
/// Experiments: neighbour (take lane+1's value), broadcast (from lane 0),
/// reduce (xor butterfly), scan (shfl_up), sort (slide 19's bitonic network
/// on 32 keys), transpose (7 words per lane, coalesced layout to one
/// structure per lane); in fp32, fp64 and int32.
///
/// Every launch's output is compared bit for bit with a CPU emulation; the
/// table says "verified" or "MISMATCH". A mismatch of SMEM (unsafe) is a
/// finding (the race bit); one of any other variant is a bug, and the
/// command then fails.
///
/// Examples:
///   warpmc bench shuffle
///   warpmc bench shuffle --experiments scan,sort --types fp32 --runs 11
///   warpmc bench shuffle --json > shuffle.jsonl
#[derive(Debug, clap::Args)]
#[command(verbatim_doc_comment)]
pub(crate) struct ShuffleArgs {
    /// Repetitions of the warp operation inside each kernel: the slides'
    /// `for (i = 0; i < 4096; ++i) x = op(x);`. More repetitions make the
    /// launch overhead smaller next to the work; the CPU check emulates the
    /// scan's repetitions one by one, so very large values check slowly.
    #[arg(long, value_name = "N", default_value_t = 4096)]
    reps: u32,
    /// Timed launches per kernel, after one untimed warm-up; the table shows
    /// their median (device time from CUDA events around each launch).
    #[arg(long, value_name = "N", default_value_t = 5)]
    runs: u32,
    /// Blocks per SM. Default: as many as fill an SM: 2 blocks of 1024
    /// threads, and 8 of 256 for the transpose, on SMs of 2048 threads. On
    /// the 13 SMs of the slides' K20 that is their 26 and 104 blocks.
    #[arg(long, value_name = "N")]
    blocks_per_sm: Option<u32>,
    /// Experiments, comma separated, from: neighbour, broadcast, reduce,
    /// scan, sort, transpose (default: all, in the slides' order).
    #[arg(long, value_name = "LIST", value_delimiter = ',')]
    experiments: Vec<Experiment>,
    /// Element types, comma separated, from: fp32, fp64, int32 (default:
    /// all). The transpose moves 7 words of the type per lane.
    #[arg(long, value_name = "LIST", value_delimiter = ',')]
    types: Vec<ElemType>,
    /// Seed of the inputs (small integers, the same for every type, chosen
    /// so that no value ever rounds or overflows).
    #[arg(long, value_name = "S", default_value_t = 1)]
    seed: u64,
    /// Print one JSON object per kernel (with the device and the grid)
    /// instead of the table.
    #[arg(long)]
    json: bool,
}

pub(crate) fn run(args: ShuffleArgs) -> anyhow::Result<()> {
    if args.reps == 0 || args.reps > i32::MAX as u32 {
        bail!("--reps must be between 1 and {}", i32::MAX);
    }
    if args.runs == 0 {
        bail!("--runs must be at least 1");
    }
    if args.blocks_per_sm == Some(0) {
        bail!("--blocks-per-sm must be at least 1");
    }
    let gpu = super::bench::cuda_device("shuffle")?;
    let defaults = ShuffleBenchConfig::default();
    let cfg = ShuffleBenchConfig {
        reps: args.reps,
        timed_runs: args.runs,
        blocks_per_sm: args.blocks_per_sm,
        experiments: if args.experiments.is_empty() { defaults.experiments.clone() } else { args.experiments },
        types: if args.types.is_empty() { defaults.types.clone() } else { args.types },
        ..defaults
    };
    let info = gpu.info().clone();
    let one_word = cfg.grid(&gpu, Experiment::Neighbour);
    let transpose = cfg.grid(&gpu, Experiment::Transpose);

    let mut stdout = super::Stdout::lock();
    if !args.json {
        writeln!(
            stdout,
            "# {}: {} SMs, compute capability {}.{}, {} threads per SM",
            info.name, info.sm_count, info.compute_capability.0, info.compute_capability.1, info.max_threads_per_sm
        )?;
        writeln!(
            stdout,
            "# grid: {} blocks x {} threads ({} per SM); transpose: {} x {} ({} per SM). Demouth: 26 x 1024 \
             and 104 x 256 on a K20 (13 SMs)",
            one_word.blocks,
            one_word.threads_per_block,
            one_word.blocks / info.sm_count.max(1),
            transpose.blocks,
            transpose.threads_per_block,
            transpose.blocks / info.sm_count.max(1)
        )?;
        writeln!(
            stdout,
            "# {} repetitions per kernel; time: median of {} timed launches after a warm-up",
            cfg.reps, cfg.timed_runs
        )?;
        let checks: Vec<String> = cfg.check_reps.iter().map(u32::to_string).collect();
        writeln!(
            stdout,
            "# verified: the output of every launch (also at {} repetitions) equals a CPU emulation bit for bit",
            checks.join(" and ")
        )?;
        writeln!(
            stdout,
            "{:<10} {:<5} {:<21} {:>10} {:>11} {:>8}  result",
            "experiment", "type", "variant", "time (ms)", "SMEM/block", "vs SHFL"
        )?;
        stdout.flush()?;
    }

    noteln!(
        "bench shuffle: kernels compile on first use (then come from the cache); every output is checked on the CPU"
    );
    let mut last_group: Option<(&'static str, &'static str)> = None;
    let mut write_error: Option<std::io::Error> = None;
    let rows = run_shuffle_bench(&gpu, &cfg, |row| {
        if write_error.is_some() {
            return;
        }
        let result = if args.json {
            print_json(&mut stdout, row, &info.name, info.sm_count)
        } else {
            let group = (row.experiment, row.ty);
            let gap = last_group.is_some_and(|g| g != group);
            last_group = Some(group);
            print_row(&mut stdout, row, gap)
        };
        if let Err(e) = result.and_then(|()| stdout.flush()) {
            write_error = Some(e);
        }
    })?;
    if let Some(e) = write_error {
        return Err(e.into());
    }

    let racy_wrong = rows.iter().filter(|r| r.racy && !r.verified).count();
    let racy_total = rows.iter().filter(|r| r.racy).count();
    let bugs: Vec<&ShuffleRow> = rows.iter().filter(|r| !r.racy && !r.verified).collect();
    if !args.json {
        writeln!(stdout)?;
        if racy_total > 0 {
            if racy_wrong == 0 {
                writeln!(
                    stdout,
                    "note: {} gave the right results in all {racy_total} kernels here, but it is a data race on \
                     Volta and newer GPUs (independent thread scheduling): nothing guarantees them; {} is its \
                     correct form",
                    Variant::SmemUnsafe.name(),
                    Variant::SmemSyncwarp.name()
                )?;
            } else {
                writeln!(
                    stdout,
                    "note: {} gave wrong results in {racy_wrong} of {racy_total} kernels: the warp-synchronous \
                     trick is a data race on Volta and newer GPUs; {} is its correct form",
                    Variant::SmemUnsafe.name(),
                    Variant::SmemSyncwarp.name()
                )?;
            }
        }
        writeln!(
            stdout,
            "note: SMEM/block is the static shared memory the kernel declares (the GPU reserves 1 KB more per \
             block on sm_80 and newer)"
        )?;
    }
    stdout.flush()?;
    if !bugs.is_empty() {
        let names: Vec<String> = bugs.iter().map(|r| format!("{} ({})", r.kernel, r.ty)).collect();
        bail!("{} kernel(s) that must be exact did not match the CPU emulation: {}", bugs.len(), names.join(", "));
    }
    Ok(())
}

fn print_row(out: &mut impl Write, r: &ShuffleRow, gap: bool) -> std::io::Result<()> {
    if gap {
        writeln!(out)?;
    }
    let smem = if r.smem_bytes_per_block == 0 {
        "0".to_string()
    } else {
        format!("{:.1} KB", r.smem_bytes_per_block as f64 / 1024.0)
    };
    let ratio = if r.vs_shfl.is_finite() { format!("{:.2}x", r.vs_shfl) } else { "-".to_string() };
    let result = match (r.verified, r.racy) {
        (true, _) => "verified".to_string(),
        (false, true) => format!("MISMATCH (racy; {} of {} launches)", r.mismatched_launches, r.checked_launches),
        (false, false) => format!("MISMATCH ({} of {} launches)", r.mismatched_launches, r.checked_launches),
    };
    writeln!(
        out,
        "{:<10} {:<5} {:<21} {:>10.3} {:>11} {:>8}  {}",
        r.experiment, r.ty, r.variant, r.ms, smem, ratio, result
    )?;
    if let Some(first) = &r.first_mismatch {
        writeln!(out, "{:>17} {} wrong elements in all; first: {first}", "", r.mismatches)?;
    }
    Ok(())
}

fn print_json(out: &mut impl Write, r: &ShuffleRow, device: &str, sm_count: u32) -> std::io::Result<()> {
    let mut v = serde_json::to_value(r).map_err(std::io::Error::other)?;
    v["device"] = serde_json::json!(device);
    v["sm_count"] = serde_json::json!(sm_count);
    writeln!(out, "{v}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(variant: Variant, verified: bool) -> ShuffleRow {
        ShuffleRow {
            experiment: "scan",
            variant: variant.name(),
            ty: "fp32",
            kernel: format!("scan_{}", variant.suffix()),
            racy: variant.racy(),
            ms: 1.25,
            runs_ms: vec![1.25; 5],
            vs_shfl: 2.5,
            smem_bytes_per_block: if variant.uses_smem() { 4096 } else { 0 },
            blocks: 264,
            threads_per_block: 1024,
            reps: 4096,
            verified,
            checked_launches: 8,
            mismatched_launches: if verified { 0 } else { 3 },
            mismatches: if verified { 0 } else { 17 },
            first_mismatch: (!verified).then(|| "element 5 (warp 0 lane 5): got 1.0, expected 2.0".to_string()),
        }
    }

    fn printed(r: &ShuffleRow) -> String {
        let mut out = Vec::new();
        print_row(&mut out, r, false).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn rows_print_time_smem_ratio_and_result() {
        let s = printed(&row(Variant::Smem, true));
        assert!(s.contains("SMEM") && s.contains("1.250") && s.contains("4.0 KB") && s.contains("2.50x"), "{s}");
        assert!(s.trim_end().ends_with("verified"), "{s}");
        let s = printed(&row(Variant::SmemUnsafe, false));
        assert!(s.contains("MISMATCH (racy; 3 of 8 launches)") && s.contains("17 wrong elements"), "{s}");
        let s = printed(&row(Variant::Shfl, true));
        assert!(s.contains(" 0 ") && !s.contains("KB"), "{s}");
    }

    #[test]
    fn json_rows_carry_the_device() {
        let mut out = Vec::new();
        print_json(&mut out, &row(Variant::Shfl, true), "NVIDIA H200", 132).unwrap();
        let v: serde_json::Value = serde_json::from_slice(&out).unwrap();
        assert_eq!(v["device"], "NVIDIA H200");
        assert_eq!(v["sm_count"], 132);
        assert_eq!(v["variant"], "SHFL");
        assert_eq!(v["verified"], true);
    }

    #[test]
    fn names_parse() {
        assert_eq!("transpose".parse::<Experiment>().unwrap(), Experiment::Transpose);
        assert!("gather".parse::<Experiment>().unwrap_err().to_string().contains("unknown experiment 'gather'"));
        assert_eq!("int32".parse::<ElemType>().unwrap(), ElemType::I32);
        assert!("fp16".parse::<ElemType>().is_err());
    }
}
