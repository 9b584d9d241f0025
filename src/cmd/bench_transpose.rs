//! `warpmc bench transpose`: the table of Harris's transpose article for
//! every kernel and element type, each output checked against the CPU
//! (the workload: warpmc_bench::transpose).

use anyhow::{Context, bail};
use clap::Args;
use warpmc_bench::transpose::{
    MatrixCase, Routine, TransposeBenchConfig, TransposeReport, TransposeRow, TransposeType, run_transpose_bench,
};
use warpmc_prims::{CudaPrims, MatrixShape};

/// Matrix transpose: the kernels of Harris, "An Efficient Matrix Transpose
/// in CUDA C/C++" (NVIDIA, 2013) (copy, shared-memory copy, naive,
/// coalesced, conflict-free) and warpmc's two: the word kernel (word-wide
/// accesses, register transposes) and the sector-aligned kernel (its
/// stores cover whole 32-byte sectors where rows are not aligned to them);
/// "best" runs whichever measured faster for the shape (the sector kernel
/// for large misaligned matrices and large u8/u16 ones, the row says
/// which), for each element type, printed as the article's table:
/// effective bandwidth = 2 × matrix bytes / time (each element read once
/// and written once).
///
/// The copy kernel is the yardstick a transpose should reach; the
/// device-to-device memcpy of the same bytes, measured in the same run, is
/// printed too. Every output is downloaded and compared bit for bit with
/// the CPU transpose, as the article's postprocess does. The default shapes
/// are far beyond the L2 cache (16384² f32 is 1 GiB), one that is not a
/// multiple of 32, and the article's 1024². Each row is timed over a second
/// or more of back-to-back calls (--min-time) and the median batch kept:
/// once the board reaches its power cap the GPU lowers its clocks in short
/// cycles, and a shorter timing would land in one phase or the other. A
/// run takes a few minutes.
///
/// Example: warpmc bench transpose --shapes 16384x16384 --types f32,u8 --kernels conflict-free,best
#[derive(Debug, Args)]
pub(crate) struct TransposeArgs {
    /// Matrix shapes ROWSxCOLS, comma separated.
    #[arg(long, value_delimiter = ',', default_value = "16384x16384,16383x16383,1024x1024")]
    shapes: Vec<String>,
    /// Matrices per call (a batch, transposed by one launch).
    #[arg(long, default_value_t = 1)]
    batch: usize,
    /// Element types, comma separated: u8, u16, f32, f64, b16 (16-byte
    /// structs).
    #[arg(long, value_delimiter = ',', default_value = "u8,u16,f32,f64,b16")]
    types: Vec<TransposeType>,
    /// Kernels, comma separated: copy, copy-shared, naive, coalesced,
    /// conflict-free, best (what the library runs: the word kernel with its
    /// default word size, or the sector kernel for matrices of 2^24
    /// elements or more whose rows are not 32-byte aligned, and for u8/u16
    /// ones of 2^27 or more), best-w4, best-w8, best-w16 (the word kernel with a given
    /// word size; skipped where it does not apply), sector (the
    /// sector-aligned kernel, any shape), in-place (square shapes only).
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "copy,copy-shared,naive,coalesced,conflict-free,best,sector,in-place"
    )]
    kernels: Vec<String>,
    /// Timed batches per row, at the least: each batch is calls back to
    /// back for 4 ms or more, and the median batch gives the time per call
    #[arg(long, default_value_t = 20)]
    runs: usize,
    /// Seconds of device time each row is timed over, at the least (more
    /// batches than --runs where needed). Under full memory traffic the GPU
    /// reaches its power cap and its clocks dip in cycles of about a
    /// second; a short timing lands in one phase or the other, a longer one
    /// gives the common phase. 0 times just --runs batches
    #[arg(long, default_value_t = 1.0)]
    min_time: f64,
    /// Print one JSON object per row instead of a table.
    #[arg(long)]
    json: bool,
}

/// One `ROWSxCOLS` matrix.
fn parse_shape(s: &str) -> anyhow::Result<MatrixShape> {
    let parse = || -> Option<(usize, usize)> {
        let (r, c) = s.split_once('x')?;
        Some((r.trim().parse().ok()?, c.trim().parse().ok()?))
    };
    match parse() {
        Some((r, c)) if r >= 1 && c >= 1 && r <= u32::MAX as usize && c <= u32::MAX as usize => {
            Ok(MatrixShape::new(r, c))
        }
        _ => bail!("bad shape '{s}': expected ROWSxCOLS with both between 1 and 2^32 - 1, e.g. 16384x16384"),
    }
}

fn config(args: &TransposeArgs) -> anyhow::Result<TransposeBenchConfig> {
    let shapes =
        args.shapes.iter().map(|s| Ok(parse_shape(s)?.batched(args.batch))).collect::<anyhow::Result<Vec<_>>>()?;
    let routines = args.kernels.iter().map(|s| s.parse::<Routine>()).collect::<Result<Vec<_>, _>>()?;
    if args.batch == 0 || args.runs == 0 {
        bail!("--batch and --runs must be at least 1");
    }
    if !(args.min_time.is_finite() && (0.0..=3600.0).contains(&args.min_time)) {
        bail!("--min-time must be between 0 and 3600 seconds");
    }
    Ok(TransposeBenchConfig {
        shapes,
        types: args.types.clone(),
        routines,
        runs: args.runs,
        min_seconds: args.min_time,
    })
}

pub(crate) fn run(args: TransposeArgs) -> anyhow::Result<()> {
    let cfg = config(&args)?;
    let p = CudaPrims::new(super::bench::cuda_device("transpose")?);
    if !args.json {
        let i = p.gpu().info();
        stdoutln!("device: {} ({} SMs, {}), {} MiB L2", i.name, i.sm_count, i.arch(), i.l2_cache >> 20);
        stdoutln!(
            "block: 32 x 8 threads; effective bandwidth = 2 x bytes / time; time per call: the median of {}+ \
             batches of back-to-back calls over {} s or more",
            args.runs,
            args.min_time
        );
    }
    let failures = run_transpose_bench(&p, &cfg, |report| {
        match report {
            TransposeReport::Case(case) if !args.json => print_case(case)?,
            TransposeReport::Case(_) => {}
            TransposeReport::Row(row) if args.json => {
                stdoutln!("{}", serde_json::to_value(row).context("writing the results")?)
            }
            TransposeReport::Row(row) => print_row(row)?,
        }
        anyhow::Ok(())
    })?;
    if failures > 0 {
        bail!("{failures} kernel outputs differed from the CPU transpose");
    }
    Ok(())
}

fn print_case(case: &MatrixCase) -> anyhow::Result<()> {
    let shape = case.shape;
    stdoutln!();
    stdoutln!(
        "matrix {} x {} {} ({:.1} MiB{}); device memcpy {:.1} GB/s",
        shape.rows,
        shape.cols,
        case.ty,
        case.bytes as f64 / (1 << 20) as f64,
        if shape.batch > 1 { format!(", {} matrices", shape.batch) } else { String::new() },
        case.memcpy_gbs
    );
    stdoutln!("{:>38} {:>16} {:>9} {:>10} {:>9}  check", "Routine", "Bandwidth (GB/s)", "of copy", "of memcpy", "ms");
    Ok(())
}

fn print_row(row: &TransposeRow) -> anyhow::Result<()> {
    stdoutln!(
        "{:>38} {:>16.1} {:>9} {:>9.1}% {:>9.3}  {}",
        row.routine,
        row.gbs,
        row.of_copy_kernel.map_or("-".to_string(), |f| format!("{:.1}%", 100.0 * f)),
        100.0 * row.of_memcpy,
        row.ms,
        if row.check { "ok" } else { "*** FAILED ***" }
    );
    Ok(())
}
