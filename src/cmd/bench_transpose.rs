//! `warpmc bench transpose`: the table of NVIDIA's transpose study for
//! every kernel and element type, each output checked against the CPU.

use anyhow::{Context, bail};
use clap::Args;
use warpmc_bench::prims as bench;
use warpmc_gpu::{DeviceBuffer, Gpu};
use warpmc_prims::transpose::{
    Transposable, as_bytes, best_uses_sector, best_word_bytes, pseudo_random, sector_params, word_fits,
};
use warpmc_prims::{Bytes16, CpuPrims, CudaPrims, TransposeKernel};

/// Matrix transpose: the kernels of NVIDIA's transpose study (copy,
/// shared-memory copy, naive, coalesced, conflict-free) and warpmc's two:
/// the word kernel (word-wide accesses, register transposes) and the
/// sector-aligned kernel (its stores cover whole 32-byte sectors where rows
/// are not aligned to them); "best" runs whichever measured faster for the
/// shape (the sector kernel for large misaligned matrices and large u8/u16
/// ones, the row says which), for each element
/// type, printed as the study's table: effective bandwidth
/// = 2 × matrix bytes / time (each element read once and written once).
///
/// The copy kernel is the yardstick a transpose should reach; the
/// device-to-device memcpy of the same bytes, measured in the same run, is
/// printed too. Every output is downloaded and compared bit for bit with
/// the CPU transpose, as the study's postprocess does. The default shapes
/// are far beyond the L2 cache (16384² f32 is 1 GiB), one that is not a
/// multiple of 32, and the study's 1024². Each row is timed over a second
/// or more of back-to-back calls (--min-time) and the median batch kept:
/// once the board reaches its power cap the GPU lowers its clocks in short
/// cycles, and a shorter timing would land in one phase or the other. A
/// run takes a few minutes.
///
/// Example: warpmc bench transpose --shapes 16384x16384 --types f32,u8 --kernels conflict-free,best
#[derive(Debug, Args)]
pub(crate) struct TransposeArgs {
    /// Matrix shapes ROWSxCOLS, comma separated.
    #[arg(long, value_delimiter = ',', default_values_t = ["16384x16384".to_string(), "16383x16383".to_string(), "1024x1024".to_string()])]
    shapes: Vec<String>,
    /// Matrices per call (a batch, transposed by one launch).
    #[arg(long, default_value_t = 1)]
    batch: usize,
    /// Element types, comma separated: u8, u16, f32, f64, b16 (16-byte
    /// structs).
    #[arg(long, value_delimiter = ',', default_values_t = ["u8".to_string(), "u16".to_string(), "f32".to_string(), "f64".to_string(), "b16".to_string()])]
    types: Vec<String>,
    /// Kernels, comma separated: copy, copy-shared, naive, coalesced,
    /// conflict-free, best (what the library runs: the word kernel with its
    /// default word size, or the sector kernel for matrices of 2^24
    /// elements or more whose rows are not 32-byte aligned, and for u8/u16
    /// ones of 2^27 or more), best-w4, best-w8, best-w16 (the word kernel with a given
    /// word size; skipped where it does not apply), sector (the
    /// sector-aligned kernel, any shape), in-place (square shapes only).
    #[arg(long, value_delimiter = ',', default_values_t = ["copy", "copy-shared", "naive", "coalesced", "conflict-free", "best", "sector", "in-place"].map(String::from))]
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

/// A row of the table: one of the kernels, or the in-place transpose.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Routine {
    Kernel(TransposeKernel),
    InPlace,
}

fn parse_kernel(s: &str) -> anyhow::Result<Routine> {
    Ok(match s {
        "copy" => Routine::Kernel(TransposeKernel::Copy),
        "copy-shared" => Routine::Kernel(TransposeKernel::CopyShared),
        "naive" => Routine::Kernel(TransposeKernel::Naive),
        "coalesced" => Routine::Kernel(TransposeKernel::Coalesced),
        "conflict-free" => Routine::Kernel(TransposeKernel::ConflictFree),
        "best" => Routine::Kernel(TransposeKernel::Best(None)),
        "best-w4" => Routine::Kernel(TransposeKernel::Best(Some(4))),
        "best-w8" => Routine::Kernel(TransposeKernel::Best(Some(8))),
        "best-w16" => Routine::Kernel(TransposeKernel::Best(Some(16))),
        "sector" => Routine::Kernel(TransposeKernel::Sector),
        "in-place" => Routine::InPlace,
        _ => bail!(
            "unknown kernel '{s}' (copy, copy-shared, naive, coalesced, conflict-free, best, best-w4, best-w8, best-w16, \
             sector, in-place)"
        ),
    })
}

fn parse_shape(s: &str) -> anyhow::Result<(usize, usize)> {
    let parse = || -> Option<(usize, usize)> {
        let (r, c) = s.split_once('x')?;
        Some((r.trim().parse().ok()?, c.trim().parse().ok()?))
    };
    match parse() {
        Some((r, c)) if r >= 1 && c >= 1 && r <= u32::MAX as usize && c <= u32::MAX as usize => Ok((r, c)),
        _ => bail!("bad shape '{s}': expected ROWSxCOLS with both between 1 and 2^32 - 1, e.g. 16384x16384"),
    }
}

pub(crate) fn run(args: TransposeArgs) -> anyhow::Result<()> {
    let shapes = args.shapes.iter().map(|s| parse_shape(s)).collect::<anyhow::Result<Vec<_>>>()?;
    let routines = args.kernels.iter().map(|s| parse_kernel(s)).collect::<anyhow::Result<Vec<_>>>()?;
    for t in &args.types {
        if !["u8", "u16", "f32", "f64", "b16"].contains(&t.as_str()) {
            bail!("unknown element type '{t}' (u8, u16, f32, f64 or b16)");
        }
    }
    if args.batch == 0 || args.runs == 0 {
        bail!("--batch and --runs must be at least 1");
    }
    if !(args.min_time.is_finite() && (0.0..=3600.0).contains(&args.min_time)) {
        bail!("--min-time must be between 0 and 3600 seconds");
    }
    let gpu = Gpu::open_default().context("bench transpose needs a CUDA device")?;
    let p = CudaPrims::new(gpu);
    if !args.json {
        let i = p.gpu().info();
        println!("device: {} ({} SMs, {}), {} MiB L2", i.name, i.sm_count, i.arch(), i.l2_cache >> 20);
        println!(
            "block: 32 x 8 threads; effective bandwidth = 2 x bytes / time; time per call: the median of {}+ \
             batches of back-to-back calls over {} s or more",
            args.runs, args.min_time
        );
    }
    let mut failures = 0;
    for &(rows, cols) in &shapes {
        for t in &args.types {
            failures += match t.as_str() {
                "u8" => one::<u8>(&p, &args, &routines, rows, cols)?,
                "u16" => one::<u16>(&p, &args, &routines, rows, cols)?,
                "f32" => one::<f32>(&p, &args, &routines, rows, cols)?,
                "f64" => one::<f64>(&p, &args, &routines, rows, cols)?,
                _ => one::<Bytes16>(&p, &args, &routines, rows, cols)?,
            };
        }
    }
    if failures > 0 {
        bail!("{failures} kernel outputs differed from the CPU transpose");
    }
    Ok(())
}

/// Benchmarks every routine on one shape and type; returns the number of
/// outputs that failed the check.
fn one<T: Transposable>(
    p: &CudaPrims,
    args: &TransposeArgs,
    routines: &[Routine],
    rows: usize,
    cols: usize,
) -> anyhow::Result<usize> {
    let batch = args.batch;
    let n = batch
        .checked_mul(rows)
        .and_then(|x| x.checked_mul(cols))
        .with_context(|| format!("{batch} matrices of {rows} x {cols} are too many elements"))?;
    let bytes = n * size_of::<T>();
    let host: Vec<T> = pseudo_random(n, 0x7a5e + rows as u64 * 31 + cols as u64);
    let mut want = vec![T::default(); n];
    CpuPrims.transpose_slices(&host, &mut want, batch, rows, cols)?;
    let src = p.gpu().upload(&host)?;
    let mut dst: DeviceBuffer<T> = p.gpu().alloc_zeros(n)?;
    let memcpy_gbs = p.gpu().copy_bandwidth_gbs(bytes.max(1 << 20))?;
    let e = size_of::<T>();
    if !args.json {
        println!();
        println!(
            "matrix {rows} x {cols} {} ({:.1} MiB{}); device memcpy {memcpy_gbs:.1} GB/s",
            T::NAME,
            bytes as f64 / (1 << 20) as f64,
            if batch > 1 { format!(", {batch} matrices") } else { String::new() }
        );
        println!(
            "{:>38} {:>16} {:>9} {:>10} {:>9}  check",
            "Routine", "Bandwidth (GB/s)", "of copy", "of memcpy", "ms"
        );
    }
    let mut copy_gbs = None;
    let mut failures = 0;
    for &routine in routines {
        let (label, m, ok) = match routine {
            Routine::Kernel(k) => {
                if let TransposeKernel::Best(Some(w)) = k {
                    if !word_fits(w, e, rows, cols) {
                        continue;
                    }
                }
                p.gpu().memset_bytes(&mut dst, 0)?;
                let m = bench::transpose(p, k, &src, &mut dst, (batch, rows, cols), args.runs, 1e3 * args.min_time)?;
                let got = p.gpu().download(&dst)?;
                let expect = if k.transposes() { &want } else { &host };
                let label = match k {
                    TransposeKernel::Best(None) if best_uses_sector(e, rows, cols) => {
                        format!("best transpose (sector, {}-byte words)", sector_params(e).0)
                    }
                    TransposeKernel::Best(None) => {
                        format!("best transpose ({}-byte words)", best_word_bytes(e, rows, cols))
                    }
                    TransposeKernel::Sector => format!("sector-aligned ({}-byte words)", sector_params(e).0),
                    _ => k.label(),
                };
                (label, m, as_bytes(&got) == as_bytes(expect))
            }
            Routine::InPlace => {
                if rows != cols {
                    continue;
                }
                let mut data = p.gpu().upload(&host)?;
                let (ms, calls) = bench::sustained_ms(p.gpu(), args.runs, 1e3 * args.min_time, || {
                    Ok(p.transpose_in_place_on_device(&mut data, batch, rows)?)
                })?;
                let got = p.gpu().download(&data)?;
                // An odd number of transposes leaves the transpose, an even
                // one the input.
                let expect = if calls % 2 == 1 { &want } else { &host };
                let m = bench::Measured {
                    label: format!("in-place transpose {}", T::NAME),
                    elements: n,
                    bytes: (2 * bytes) as f64,
                    ms,
                };
                ("in-place transpose".to_string(), m, as_bytes(&got) == as_bytes(expect))
            }
        };
        if routine == Routine::Kernel(TransposeKernel::Copy) {
            copy_gbs = Some(m.gbs());
        }
        if !ok {
            failures += 1;
        }
        let of_copy = copy_gbs.map(|c| m.gbs() / c);
        if args.json {
            let v = serde_json::json!({
                "routine": label, "type": T::NAME, "rows": rows, "cols": cols, "batch": batch,
                "ms": m.ms, "gbs": m.gbs(), "of_copy_kernel": of_copy, "memcpy_gbs": memcpy_gbs,
                "of_memcpy": m.gbs() / memcpy_gbs, "check": ok,
            });
            println!("{v}");
        } else {
            println!(
                "{label:>38} {:>16.1} {:>9} {:>9.1}% {:>9.3}  {}",
                m.gbs(),
                of_copy.map_or("-".to_string(), |f| format!("{:.1}%", 100.0 * f)),
                100.0 * m.gbs() / memcpy_gbs,
                m.ms,
                if ok { "ok" } else { "*** FAILED ***" }
            );
        }
    }
    Ok(failures)
}
