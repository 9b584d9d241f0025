//! `warpmc bench`: the benchmarks, each printed beside a yardstick measured
//! in the same run (the device's copy bandwidth, a baseline kernel, or a
//! peer library). The workloads are in warpmc-bench; this parses, runs them
//! and prints.

use anyhow::{Context, bail};
use clap::{Args, Subcommand};
use warpmc_bench::prims::{self as bench, NumberType, ScanKind, StreamRow};
use warpmc_gpu::{BackendChoice, Device, Gpu};
use warpmc_prims::{CudaPrims, Op};

use super::{bench_atomics, bench_flame, bench_shuffle, bench_transpose};

#[derive(Debug, Args)]
pub(crate) struct BenchArgs {
    #[command(subcommand)]
    command: BenchCommand,
}

#[derive(Debug, Subcommand)]
enum BenchCommand {
    // The help text is ShuffleArgs' own doc comment.
    Shuffle(bench_shuffle::ShuffleArgs),
    /// Device-wide reduction: GB/s of input read, beside the copy bandwidth.
    ///
    /// Example: warpmc bench reduce --types f32,f64 --ops sum,max
    Reduce(StreamArgs),
    /// Single-pass device-wide scan: GB/s of input read plus output written,
    /// beside the copy bandwidth (which also reads and writes every byte
    /// once, so 100 % is the ceiling).
    ///
    /// Example: warpmc bench scan --types u32,f64 --exclusive
    Scan(StreamArgs),
    /// Radix sort of random keys: keys per second and GB/s (keys read and
    /// written once, a lower bound on any sort's traffic), beside the copy
    /// bandwidth. scripts/bench-vs-cupy.py runs this and CuPy's sort (CUB)
    /// in one script and prints the ratio.
    ///
    /// Example: warpmc bench sort --keys u32,u64,f32 --values
    Sort(SortArgs),
    // Help texts: the Args types' own doc comments.
    Transpose(bench_transpose::TransposeArgs),
    Atomics(bench_atomics::AtomicsArgs),
    /// The Potts benchmark (same as `warpmc potts bench`).
    Potts(super::potts_bench::BenchArgs),
    // Help texts: the Args types' own doc comments.
    Flame(bench_flame::FlameBenchArgs),
    FlameAnimate(bench_flame::AnimateBenchArgs),
    ShuffleDiversity(bench_flame::DiversityArgs),
}

#[derive(Debug, Args)]
struct StreamArgs {
    /// Elements per input (default 2^28: 1 GiB of f32, far beyond the
    /// 50–60 MB L2 caches of current GPUs).
    #[arg(long, default_value_t = 1 << 28)]
    n: usize,
    /// Element types, comma separated: i32, u32, i64, u64, f32, f64.
    #[arg(long, value_delimiter = ',', default_value = "f32,f64,u32")]
    types: Vec<NumberType>,
    /// Operators, comma separated: sum, min, max.
    #[arg(long, value_delimiter = ',', default_value = "sum")]
    ops: Vec<Op>,
    /// Exclusive instead of inclusive scans (scan only).
    #[arg(long)]
    exclusive: bool,
    /// Timed calls per row (the median is printed).
    #[arg(long, default_value_t = 20)]
    runs: usize,
    /// Print one JSON object per row instead of a table.
    #[arg(long)]
    json: bool,
}

#[derive(Debug, Args)]
struct SortArgs {
    /// Keys per sort (default 2^28, 1 GiB of u32 keys).
    #[arg(long, default_value_t = 1 << 28)]
    n: usize,
    /// Key types, comma separated: u32, u64, f32, i32, i64, f64.
    #[arg(long, value_delimiter = ',', default_value = "u32")]
    keys: Vec<NumberType>,
    /// Sort key–value pairs (u32 values) as well as keys alone.
    #[arg(long)]
    values: bool,
    /// Timed sorts per row (the median is printed).
    #[arg(long, default_value_t = 10)]
    runs: usize,
    /// Print one JSON object per row instead of a table.
    #[arg(long)]
    json: bool,
}

pub(crate) fn run(args: BenchArgs) -> anyhow::Result<()> {
    match args.command {
        BenchCommand::Shuffle(a) => bench_shuffle::run(a),
        BenchCommand::Reduce(a) => run_stream(a, false),
        BenchCommand::Scan(a) => run_stream(a, true),
        BenchCommand::Sort(a) => run_sort(a),
        BenchCommand::Transpose(a) => bench_transpose::run(a),
        BenchCommand::Atomics(a) => bench_atomics::run(a),
        BenchCommand::Potts(a) => super::potts_bench::run_bench(a),
        BenchCommand::Flame(a) => bench_flame::run_flame(a),
        BenchCommand::FlameAnimate(a) => bench_flame::run_animate(a),
        BenchCommand::ShuffleDiversity(a) => bench_flame::run_diversity(a),
    }
}

/// The CUDA device `WARPMC_DEVICE` names (see `warpmc_gpu::select`), or one
/// line saying that `bench <what>` needs one.
pub(super) fn cuda_device(what: &str) -> anyhow::Result<Gpu> {
    match warpmc_gpu::select(BackendChoice::Cuda).with_context(|| format!("bench {what} needs a CUDA device"))? {
        Device::Cuda(gpu) => Ok(gpu),
        Device::Cpu { .. } => bail!("bench {what} needs a CUDA device"),
    }
}

fn print_row(row: &StreamRow, json: bool) -> anyhow::Result<()> {
    if json {
        stdoutln!("{}", serde_json::to_value(row)?);
    } else {
        stdoutln!(
            "{:<34} {:>11} {:>9.3} {:>9.1} {:>9.1} {:>7.1}% {:>9.2}",
            row.label,
            row.elements,
            row.ms,
            row.gbs,
            row.copy_gbs,
            100.0 * row.of_copy,
            row.giga_elements_per_s
        );
    }
    Ok(())
}

fn header(p: &CudaPrims, json: bool) -> anyhow::Result<()> {
    if json {
        return Ok(());
    }
    let i = p.gpu().info();
    stdoutln!("device: {} ({} SMs, {}), {} MiB L2", i.name, i.sm_count, i.arch(), i.l2_cache >> 20);
    stdoutln!(
        "{:<34} {:>11} {:>9} {:>9} {:>9} {:>8} {:>9}",
        "operation",
        "elements",
        "ms",
        "GB/s",
        "copy GB/s",
        "of copy",
        "Gelem/s"
    );
    Ok(())
}

fn run_stream(args: StreamArgs, scan: bool) -> anyhow::Result<()> {
    let what = if scan { "scan" } else { "reduce" };
    if args.n == 0 {
        bail!("--n must be at least 1");
    }
    if args.exclusive && !scan {
        bail!("--exclusive applies to `bench scan` only");
    }
    let p = CudaPrims::new(cuda_device(what)?);
    header(&p, args.json)?;
    let kind = if args.exclusive { ScanKind::Exclusive } else { ScanKind::Inclusive };
    for &ty in &args.types {
        for &op in &args.ops {
            let row = if scan {
                bench::scan(&p, ty, args.n, op, kind, args.runs)?
            } else {
                bench::reduce(&p, ty, args.n, op, args.runs)?
            };
            print_row(&row, args.json)?;
        }
    }
    Ok(())
}

fn run_sort(args: SortArgs) -> anyhow::Result<()> {
    if args.n == 0 {
        bail!("--n must be at least 1");
    }
    let p = CudaPrims::new(cuda_device("sort")?);
    header(&p, args.json)?;
    for &ty in &args.keys {
        for with_values in if args.values { vec![false, true] } else { vec![false] } {
            print_row(&bench::sort(&p, ty, args.n, with_values, args.runs)?, args.json)?;
        }
    }
    Ok(())
}
