//! `warpmc bench`: the benchmarks, each printed beside a yardstick measured
//! in the same run (the device's copy bandwidth, the seed document's
//! baseline, or a peer library).

use anyhow::{Context, bail};
use clap::{Args, Subcommand};
use warpmc_bench::prims::{self as bench, Measured};
use warpmc_gpu::Gpu;
use warpmc_prims::{CudaPrims, Element, Op, SortKey};

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
    Potts(super::potts::BenchArgs),
    // Help texts: the Args types' own doc comments.
    Flame(bench_flame::FlameBenchArgs),
    ShuffleDiversity(bench_flame::DiversityArgs),
}

#[derive(Debug, Args)]
struct StreamArgs {
    /// Elements per input (default 2^28: 1 GiB of f32, far beyond the
    /// 50–60 MB L2 caches of current GPUs).
    #[arg(long, default_value_t = 1 << 28)]
    n: usize,
    /// Element types, comma separated: i32, u32, i64, u64, f32, f64.
    #[arg(long, value_delimiter = ',', default_values_t = ["f32".to_string(), "f64".to_string(), "u32".to_string()])]
    types: Vec<String>,
    /// Operators, comma separated: sum, min, max.
    #[arg(long, value_delimiter = ',', default_values_t = ["sum".to_string()])]
    ops: Vec<String>,
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
    /// Keys per sort (default 2^28, the benchmark size).
    #[arg(long, default_value_t = 1 << 28)]
    n: usize,
    /// Key types, comma separated: u32, u64, f32, i32, i64, f64.
    #[arg(long, value_delimiter = ',', default_values_t = ["u32".to_string()])]
    keys: Vec<String>,
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
        BenchCommand::Potts(a) => super::potts::run_bench(a),
        BenchCommand::Flame(a) => bench_flame::run_flame(a),
        BenchCommand::ShuffleDiversity(a) => bench_flame::run_diversity(a),
    }
}

fn open_gpu(what: &str) -> anyhow::Result<CudaPrims> {
    let gpu = Gpu::open_default().with_context(|| format!("bench {what} needs a CUDA device"))?;
    Ok(CudaPrims::new(gpu))
}

fn parse_op(s: &str) -> anyhow::Result<Op> {
    Op::ALL.into_iter().find(|o| o.name() == s).with_context(|| format!("unknown operator '{s}' (sum, min or max)"))
}

/// One printed row: the measurement and the copy bandwidth over the same
/// number of input bytes.
struct Row {
    m: Measured,
    copy_gbs: f64,
}

impl Row {
    fn new(p: &CudaPrims, m: Measured, input_bytes: usize) -> anyhow::Result<Self> {
        let copy_gbs = p.gpu().copy_bandwidth_gbs(input_bytes.max(1 << 20))?;
        Ok(Row { m, copy_gbs })
    }

    fn print(&self, json: bool) {
        let m = &self.m;
        if json {
            let v = serde_json::json!({
                "label": m.label, "elements": m.elements, "ms": m.ms, "gbs": m.gbs(),
                "giga_elements_per_s": m.giga_elements_per_s(), "copy_gbs": self.copy_gbs,
                "of_copy": m.gbs() / self.copy_gbs,
            });
            println!("{v}");
        } else {
            println!(
                "{:<34} {:>11} {:>9.3} {:>9.1} {:>9.1} {:>7.1}% {:>9.2}",
                m.label,
                m.elements,
                m.ms,
                m.gbs(),
                self.copy_gbs,
                100.0 * m.gbs() / self.copy_gbs,
                m.giga_elements_per_s()
            );
        }
    }
}

fn header(p: &CudaPrims, json: bool) {
    if json {
        return;
    }
    let i = p.gpu().info();
    println!("device: {} ({} SMs, {}), {} MiB L2", i.name, i.sm_count, i.arch(), i.l2_cache >> 20);
    println!(
        "{:<34} {:>11} {:>9} {:>9} {:>9} {:>8} {:>9}",
        "operation", "elements", "ms", "GB/s", "copy GB/s", "of copy", "Gelem/s"
    );
}

fn run_stream(args: StreamArgs, scan: bool) -> anyhow::Result<()> {
    let what = if scan { "scan" } else { "reduce" };
    if args.n == 0 {
        bail!("--n must be at least 1");
    }
    if args.exclusive && !scan {
        bail!("--exclusive applies to `bench scan` only");
    }
    let ops = args.ops.iter().map(|s| parse_op(s)).collect::<anyhow::Result<Vec<_>>>()?;
    for t in &args.types {
        if !["i32", "u32", "i64", "u64", "f32", "f64"].contains(&t.as_str()) {
            bail!("unknown element type '{t}' (i32, u32, i64, u64, f32 or f64)");
        }
    }
    let p = open_gpu(what)?;
    header(&p, args.json);
    fn one<T: Element>(p: &CudaPrims, a: &StreamArgs, scan: bool, op: Op) -> anyhow::Result<()> {
        let m = if scan {
            bench::scan::<T>(p, a.n, op, !a.exclusive, a.runs)?
        } else {
            bench::reduce::<T>(p, a.n, op, a.runs)?
        };
        Row::new(p, m, a.n * size_of::<T>())?.print(a.json);
        Ok(())
    }
    for t in &args.types {
        for &op in &ops {
            match t.as_str() {
                "i32" => one::<i32>(&p, &args, scan, op)?,
                "u32" => one::<u32>(&p, &args, scan, op)?,
                "i64" => one::<i64>(&p, &args, scan, op)?,
                "u64" => one::<u64>(&p, &args, scan, op)?,
                "f32" => one::<f32>(&p, &args, scan, op)?,
                _ => one::<f64>(&p, &args, scan, op)?,
            }
        }
    }
    Ok(())
}

fn run_sort(args: SortArgs) -> anyhow::Result<()> {
    if args.n == 0 {
        bail!("--n must be at least 1");
    }
    for k in &args.keys {
        if !["i32", "u32", "i64", "u64", "f32", "f64"].contains(&k.as_str()) {
            bail!("unknown key type '{k}' (u32, u64, f32, i32, i64 or f64)");
        }
    }
    let p = open_gpu("sort")?;
    header(&p, args.json);
    fn one<K: SortKey>(p: &CudaPrims, a: &SortArgs) -> anyhow::Result<()> {
        for with_values in if a.values { vec![false, true] } else { vec![false] } {
            let m = bench::sort::<K>(p, a.n, with_values, a.runs)?;
            Row::new(p, m, a.n * size_of::<K>())?.print(a.json);
        }
        Ok(())
    }
    for k in &args.keys {
        match k.as_str() {
            "i32" => one::<i32>(&p, &args)?,
            "u32" => one::<u32>(&p, &args)?,
            "i64" => one::<i64>(&p, &args)?,
            "u64" => one::<u64>(&p, &args)?,
            "f32" => one::<f32>(&p, &args)?,
            _ => one::<f64>(&p, &args)?,
        }
    }
    Ok(())
}
