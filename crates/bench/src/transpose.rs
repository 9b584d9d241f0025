//! The workload behind `warpmc bench transpose`: the table of Harris, "An
//! Efficient Matrix Transpose in CUDA C/C++" (NVIDIA, 2013), for every
//! kernel and element type, each output checked bit for bit against the
//! CPU transpose, as the article's postprocess does.
//!
//! Effective bandwidth = 2 × matrix bytes / time (each element read once
//! and written once), timed under sustained load
//! ([`crate::timing::sustained_ms`]), beside the copy kernel of the same
//! table and the device-to-device memcpy of the same bytes.

use std::fmt;
use std::str::FromStr;

use serde::Serialize;
use warpmc_gpu::DeviceBuffer;
use warpmc_prims::{Bytes16, CpuPrims, CudaPrims, MatrixShape, Pod, Primitives, TransposeKernel, as_bytes};

use crate::error::{BenchError, Result, ensure};
use crate::timing::sustained_ms;

/// The element types of the table.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub enum TransposeType {
    /// 1 byte.
    U8,
    /// 2 bytes.
    U16,
    /// 4 bytes.
    F32,
    /// 8 bytes.
    F64,
    /// 16 bytes ([`Bytes16`]).
    B16,
}

impl TransposeType {
    /// Every type, smallest first.
    pub const ALL: [TransposeType; 5] =
        [TransposeType::U8, TransposeType::U16, TransposeType::F32, TransposeType::F64, TransposeType::B16];

    /// `u8`, `u16`, `f32`, `f64`, `b16`.
    pub fn name(self) -> &'static str {
        match self {
            TransposeType::U8 => "u8",
            TransposeType::U16 => "u16",
            TransposeType::F32 => "f32",
            TransposeType::F64 => "f64",
            TransposeType::B16 => "b16",
        }
    }
}

impl fmt::Display for TransposeType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for TransposeType {
    type Err = BenchError;

    fn from_str(s: &str) -> Result<Self> {
        TransposeType::ALL
            .into_iter()
            .find(|t| t.name() == s)
            .ok_or_else(|| BenchError::Invalid(format!("unknown element type '{s}' (u8, u16, f32, f64 or b16)")))
    }
}

/// A row of the table: one of the kernels, or the in-place transpose.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub enum Routine {
    /// A kernel run by [`CudaPrims::transpose_into`].
    Kernel(TransposeKernel),
    /// [`Primitives::transpose_in_place`] (square shapes only).
    InPlace,
}

impl Routine {
    /// The names the table's kernels go by, in its order.
    pub const NAMES: [&'static str; 11] = [
        "copy",
        "copy-shared",
        "naive",
        "coalesced",
        "conflict-free",
        "best",
        "best-w4",
        "best-w8",
        "best-w16",
        "sector",
        "in-place",
    ];
}

impl FromStr for Routine {
    type Err = BenchError;

    /// `copy`, `copy-shared`, `naive`, `coalesced`, `conflict-free`, `best`,
    /// `best-w4`, `best-w8`, `best-w16`, `sector` or `in-place`.
    fn from_str(s: &str) -> Result<Self> {
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
            _ => {
                return Err(BenchError::Invalid(format!("unknown kernel '{s}' ({})", Routine::NAMES.join(", "))));
            }
        })
    }
}

/// The row label of the table for `kernel` on `elem_bytes`-byte elements
/// of `shape`: Harris's names, and for the library's kernels the kernel
/// and word size that run.
pub fn kernel_label(kernel: TransposeKernel, elem_bytes: usize, shape: MatrixShape) -> String {
    let word = kernel.word_bytes(elem_bytes, shape);
    match kernel {
        TransposeKernel::Copy => "copy".into(),
        TransposeKernel::CopyShared => "shared memory copy".into(),
        TransposeKernel::Naive => "naive transpose".into(),
        TransposeKernel::Coalesced => "coalesced transpose".into(),
        TransposeKernel::ConflictFree => "conflict-free transpose".into(),
        TransposeKernel::Best(None) if kernel.resolve(elem_bytes, shape) == TransposeKernel::Sector => {
            format!("best transpose (sector, {word}-byte words)")
        }
        TransposeKernel::Best(_) => format!("best transpose ({word}-byte words)"),
        TransposeKernel::Sector => format!("sector-aligned ({word}-byte words)"),
    }
}

/// What one table covers.
#[derive(Clone, Debug, PartialEq)]
pub struct TransposeBenchConfig {
    /// The matrices of each table, transposed by one launch per call (rows
    /// and columns from 1 to 2^32 − 1, at least one matrix).
    pub shapes: Vec<MatrixShape>,
    /// Element types.
    pub types: Vec<TransposeType>,
    /// Rows of each table, in order; a `Best(Some(w))` the shape does not
    /// support and an in-place transpose of a non-square shape are skipped.
    pub routines: Vec<Routine>,
    /// Timed batches per row, at the least (see
    /// [`crate::timing::sustained_ms`]).
    pub runs: usize,
    /// Seconds of device time each row is timed over, at the least.
    pub min_seconds: f64,
}

impl TransposeBenchConfig {
    fn validate(&self) -> Result<()> {
        ensure(self.runs >= 1, || "the timed batches per row must be at least 1".into())?;
        ensure(self.min_seconds.is_finite() && (0.0..=3600.0).contains(&self.min_seconds), || {
            format!("the minimum time per row must be between 0 and 3600 seconds, not {}", self.min_seconds)
        })?;
        for &MatrixShape { batch, rows, cols } in &self.shapes {
            let dim = 1..=u32::MAX as usize;
            ensure(dim.contains(&rows) && dim.contains(&cols) && dim.contains(&batch), || {
                format!("{batch} matrices of {rows} x {cols}: each must be between 1 and 2^32 - 1")
            })?;
        }
        Ok(())
    }
}

/// One table's heading: the matrices and the memcpy yardstick.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct MatrixCase {
    /// The element type.
    pub ty: TransposeType,
    /// The matrices.
    pub shape: MatrixShape,
    /// Bytes of all the matrices.
    pub bytes: usize,
    /// Device-to-device memcpy of as many bytes (at least 1 MiB), GB/s.
    pub memcpy_gbs: f64,
}

/// One row of a table, in the field names of `--json`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TransposeRow {
    /// The routine's label ([`kernel_label`], or `in-place transpose`).
    pub routine: String,
    /// The element type's name.
    #[serde(rename = "type")]
    pub ty: &'static str,
    /// Rows of each matrix.
    pub rows: usize,
    /// Columns of each matrix.
    pub cols: usize,
    /// Matrices.
    pub batch: usize,
    /// Device time per call in ms.
    pub ms: f64,
    /// Effective bandwidth, GB/s: 2 × bytes / time.
    pub gbs: f64,
    /// `gbs` over the copy kernel's in the same table (when it ran first).
    pub of_copy_kernel: Option<f64>,
    /// The table's memcpy bandwidth.
    pub memcpy_gbs: f64,
    /// `gbs / memcpy_gbs`.
    pub of_memcpy: f64,
    /// Whether the output equals the CPU's bit for bit.
    pub check: bool,
}

/// What [`run_transpose_bench`] reports, as it goes.
#[derive(Clone, Copy, Debug)]
pub enum TransposeReport<'a> {
    /// A table begins.
    Case(&'a MatrixCase),
    /// A row of the current table.
    Row(&'a TransposeRow),
}

/// Runs every table of `cfg`, handing each heading and row to `report` as
/// soon as it is measured (the first error, of the bench or of `report`,
/// stops it). Returns the number of rows whose output differed from the
/// CPU transpose (not an error: the rows say so).
pub fn run_transpose_bench<E: From<BenchError>>(
    p: &CudaPrims,
    cfg: &TransposeBenchConfig,
    mut report: impl FnMut(TransposeReport<'_>) -> std::result::Result<(), E>,
) -> std::result::Result<usize, E> {
    cfg.validate()?;
    let mut failures = 0;
    for &shape in &cfg.shapes {
        for &ty in &cfg.types {
            failures += match ty {
                TransposeType::U8 => table::<u8, E>(p, cfg, ty, shape, &mut report)?,
                TransposeType::U16 => table::<u16, E>(p, cfg, ty, shape, &mut report)?,
                TransposeType::F32 => table::<f32, E>(p, cfg, ty, shape, &mut report)?,
                TransposeType::F64 => table::<f64, E>(p, cfg, ty, shape, &mut report)?,
                TransposeType::B16 => table::<Bytes16, E>(p, cfg, ty, shape, &mut report)?,
            };
        }
    }
    Ok(failures)
}

/// The inputs of one table: the matrices on both sides and the CPU's
/// transposes.
struct Inputs<T: Pod> {
    host: Vec<T>,
    want: Vec<T>,
    src: DeviceBuffer<T>,
    dst: DeviceBuffer<T>,
}

/// One table: the heading, then every routine that applies; returns the
/// rows that failed their check.
fn table<T: Pod, E: From<BenchError>>(
    p: &CudaPrims,
    cfg: &TransposeBenchConfig,
    ty: TransposeType,
    shape: MatrixShape,
    report: &mut impl FnMut(TransposeReport<'_>) -> std::result::Result<(), E>,
) -> std::result::Result<usize, E> {
    let n = shape.len().ok_or_else(|| BenchError::Invalid(format!("{shape} matrices are too many elements")))?;
    let bytes = n * size_of::<T>();
    let mut inputs = inputs::<T>(p, shape, n).map_err(E::from)?;
    let memcpy_gbs = p.gpu().copy_bandwidth_gbs(bytes.max(1 << 20)).map_err(BenchError::from)?;
    report(TransposeReport::Case(&MatrixCase { ty, shape, bytes, memcpy_gbs }))?;
    let mut copy_gbs = None;
    let mut failures = 0;
    for &routine in &cfg.routines {
        let Some((routine_label, ms, check)) = time_routine(p, cfg, shape, routine, &mut inputs).map_err(E::from)?
        else {
            continue;
        };
        let gbs = (2 * bytes) as f64 / (ms * 1e-3) / 1e9;
        if routine == Routine::Kernel(TransposeKernel::Copy) {
            copy_gbs = Some(gbs);
        }
        failures += usize::from(!check);
        report(TransposeReport::Row(&TransposeRow {
            routine: routine_label,
            ty: ty.name(),
            rows: shape.rows,
            cols: shape.cols,
            batch: shape.batch,
            ms,
            gbs,
            of_copy_kernel: copy_gbs.map(|c| gbs / c),
            memcpy_gbs,
            of_memcpy: gbs / memcpy_gbs,
            check,
        }))?;
    }
    Ok(failures)
}

fn inputs<T: Pod>(p: &CudaPrims, shape: MatrixShape, n: usize) -> Result<Inputs<T>> {
    let host: Vec<T> = warpmc_testkit::pseudo_random(n, 0x7a5e + shape.rows as u64 * 31 + shape.cols as u64);
    let want = CpuPrims.transpose(&host, shape)?;
    let src = p.upload(&host)?;
    let dst = p.gpu().alloc_zeros(n)?;
    Ok(Inputs { host, want, src, dst })
}

/// Times one routine: its label, ms per call and whether its output matched
/// the CPU; `None` for a routine that does not apply to the shape.
fn time_routine<T: Pod>(
    p: &CudaPrims,
    cfg: &TransposeBenchConfig,
    shape: MatrixShape,
    routine: Routine,
    inputs: &mut Inputs<T>,
) -> Result<Option<(String, f64, bool)>> {
    let e = size_of::<T>();
    let min_ms = 1e3 * cfg.min_seconds;
    let Inputs { host, want, src, dst } = inputs;
    match routine {
        Routine::Kernel(k) => {
            if !k.supports(e, shape) {
                return Ok(None);
            }
            p.gpu().memset_bytes(dst, 0)?;
            let timed = sustained_ms(p.gpu(), cfg.runs, min_ms, || Ok(p.transpose_into(src, dst, shape, k)?))?;
            let got = p.download(dst)?;
            let expect = if k.transposes() { &*want } else { &*host };
            Ok(Some((kernel_label(k, e, shape), timed.ms, as_bytes(&got) == as_bytes(expect))))
        }
        Routine::InPlace => {
            if !shape.is_square() {
                return Ok(None);
            }
            let mut data = p.upload(host)?;
            let timed = sustained_ms(p.gpu(), cfg.runs, min_ms, || Ok(p.transpose_in_place(&mut data, shape)?))?;
            let got = p.download(&data)?;
            // An odd number of transposes leaves the transpose, an even one
            // the input.
            let expect = if timed.calls % 2 == 1 { &*want } else { &*host };
            Ok(Some(("in-place transpose".to_string(), timed.ms, as_bytes(&got) == as_bytes(expect))))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn routines_and_types_parse_by_name() {
        for name in Routine::NAMES {
            assert!(name.parse::<Routine>().is_ok(), "{name}");
        }
        let e = "fastest".parse::<Routine>().unwrap_err().to_string();
        assert!(e.contains("unknown kernel 'fastest'") && e.ends_with("sector, in-place)"), "{e}");
        for t in TransposeType::ALL {
            assert_eq!(t.name().parse::<TransposeType>().unwrap(), t);
        }
        assert!("u32".parse::<TransposeType>().is_err());
    }

    #[test]
    fn labels_name_the_kernel_and_word_that_run() {
        let big = MatrixShape::square(16383);
        let aligned = MatrixShape::square(16384);
        assert_eq!(kernel_label(TransposeKernel::Best(None), 4, big), "best transpose (sector, 8-byte words)");
        assert_eq!(kernel_label(TransposeKernel::Best(None), 4, aligned), "best transpose (8-byte words)");
        assert_eq!(
            kernel_label(TransposeKernel::Best(None), 1, MatrixShape::square(1024)),
            "best transpose (4-byte words)"
        );
        assert_eq!(kernel_label(TransposeKernel::Best(Some(16)), 4, aligned), "best transpose (16-byte words)");
        assert_eq!(kernel_label(TransposeKernel::Sector, 2, aligned), "sector-aligned (4-byte words)");
        assert_eq!(kernel_label(TransposeKernel::CopyShared, 8, aligned), "shared memory copy");
    }

    #[test]
    fn bad_configurations_are_refused_in_plain_words() {
        let ok = TransposeBenchConfig {
            shapes: vec![MatrixShape::new(3, 4)],
            types: vec![TransposeType::U8],
            routines: vec![Routine::InPlace],
            runs: 1,
            min_seconds: 0.0,
        };
        assert!(ok.validate().is_ok());
        for bad in [
            TransposeBenchConfig { shapes: vec![MatrixShape::new(3, 4).batched(0)], ..ok.clone() },
            TransposeBenchConfig { min_seconds: f64::NAN, ..ok.clone() },
            TransposeBenchConfig { shapes: vec![MatrixShape::new(0, 4)], ..ok.clone() },
            TransposeBenchConfig { runs: 0, ..ok.clone() },
        ] {
            let e = bad.validate().unwrap_err().to_string();
            assert!(!e.contains("--"), "{e}");
        }
    }
}
