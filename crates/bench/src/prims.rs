//! The workloads behind `warpmc bench reduce|scan|sort`: device time of one
//! call, and the bytes it must move, beside the device's copy bandwidth
//! measured in the same run ([`warpmc_gpu::Gpu::copy_bandwidth_gbs`]) over
//! as many bytes as the input.

use std::fmt;
use std::str::FromStr;

use serde::Serialize;
use warpmc_gpu::DeviceBuffer;
use warpmc_prims::{CudaPrims, Element, Op, Primitives, SortKey};

use crate::error::{BenchError, Result, ensure};
use crate::timing::{median, median_ms};

/// One printed row: an operation's speed beside the copy bandwidth.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct StreamRow {
    /// What was timed, e.g. `reduce sum f32`.
    pub label: String,
    /// Elements processed.
    pub elements: usize,
    /// Median device time of one call in milliseconds.
    pub ms: f64,
    /// Bytes the operation must move at the least, over the time, in GB/s:
    /// reduce reads its input once; scan reads it and writes the result;
    /// sort reads and writes the keys (and values) once — a lower bound no
    /// sort reaches, which makes the fraction of the copy bandwidth a
    /// conservative figure.
    pub gbs: f64,
    /// Elements per second, in units of 10^9.
    pub giga_elements_per_s: f64,
    /// The device's copy bandwidth over the input's bytes (at least 1 MiB),
    /// measured right after the operation.
    pub copy_gbs: f64,
    /// `gbs / copy_gbs`.
    pub of_copy: f64,
}

impl StreamRow {
    /// The row for `label`, timed at `ms` per call over `elements` that
    /// must move `bytes`, beside the copy bandwidth over `input_bytes`.
    fn measured(
        p: &CudaPrims,
        label: String,
        elements: usize,
        bytes: f64,
        ms: f64,
        input_bytes: usize,
    ) -> Result<Self> {
        let gbs = bytes / (ms * 1e-3) / 1e9;
        let copy_gbs = p.gpu().copy_bandwidth_gbs(input_bytes.max(1 << 20))?;
        Ok(StreamRow {
            label,
            elements,
            ms,
            gbs,
            giga_elements_per_s: elements as f64 / (ms * 1e-3) / 1e9,
            copy_gbs,
            of_copy: gbs / copy_gbs,
        })
    }
}

/// The element and key types of the benchmarks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub enum NumberType {
    /// `i32`.
    I32,
    /// `u32`.
    U32,
    /// `i64`.
    I64,
    /// `u64`.
    U64,
    /// `f32`.
    F32,
    /// `f64`.
    F64,
}

impl NumberType {
    /// Every type.
    pub const ALL: [NumberType; 6] =
        [NumberType::I32, NumberType::U32, NumberType::I64, NumberType::U64, NumberType::F32, NumberType::F64];

    /// `i32`, `u32`, ….
    pub fn name(self) -> &'static str {
        match self {
            NumberType::I32 => "i32",
            NumberType::U32 => "u32",
            NumberType::I64 => "i64",
            NumberType::U64 => "u64",
            NumberType::F32 => "f32",
            NumberType::F64 => "f64",
        }
    }
}

impl fmt::Display for NumberType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for NumberType {
    type Err = BenchError;

    fn from_str(s: &str) -> Result<Self> {
        NumberType::ALL
            .into_iter()
            .find(|t| t.name() == s)
            .ok_or_else(|| BenchError::Invalid(format!("unknown element type '{s}' (i32, u32, i64, u64, f32 or f64)")))
    }
}

/// Calls `$f::<T>($args)` with `T` the Rust type of `$ty`.
macro_rules! by_type {
    ($ty:expr, $f:ident($($args:expr),*)) => {
        match $ty {
            NumberType::I32 => $f::<i32>($($args),*),
            NumberType::U32 => $f::<u32>($($args),*),
            NumberType::I64 => $f::<i64>($($args),*),
            NumberType::U64 => $f::<u64>($($args),*),
            NumberType::F32 => $f::<f32>($($args),*),
            NumberType::F64 => $f::<f64>($($args),*),
        }
    };
}

/// Deterministic pseudo-random elements: small integers (so float sums
/// stay exact) for reduce and scan; full-range bits for sort keys.
fn splitmix(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

fn small_values<T: Element>(n: usize) -> Vec<T> {
    let mut s = 1;
    (0..n).map(|_| T::from_f64((splitmix(&mut s) % 16) as f64)).collect()
}

/// Times a device reduction of `n` elements of type `ty` (the median of
/// `runs` calls).
pub fn reduce(p: &CudaPrims, ty: NumberType, n: usize, op: Op, runs: usize) -> Result<StreamRow> {
    ensure(n >= 1, || "a reduction benchmark needs at least one element".into())?;
    by_type!(ty, reduce_of(p, n, op, runs))
}

fn reduce_of<T: Element>(p: &CudaPrims, n: usize, op: Op, runs: usize) -> Result<StreamRow> {
    let x = p.upload(&small_values::<T>(n))?;
    let mut out: DeviceBuffer<T> = p.gpu().alloc_zeros(1)?;
    let ms = median_ms(p.gpu(), runs, || Ok(p.reduce_into(&x, &mut out, op)?))?;
    let bytes = n * size_of::<T>();
    StreamRow::measured(p, format!("reduce {} {}", op.name(), T::NAME), n, bytes as f64, ms, bytes)
}

/// Which scan.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub enum ScanKind {
    /// `out[i]` includes `x[i]`.
    Inclusive,
    /// `out[i]` stops before `x[i]`.
    Exclusive,
}

/// Times a single-pass device scan of `n` elements of type `ty` (the median
/// of `runs` calls).
pub fn scan(p: &CudaPrims, ty: NumberType, n: usize, op: Op, kind: ScanKind, runs: usize) -> Result<StreamRow> {
    ensure(n >= 1, || "a scan benchmark needs at least one element".into())?;
    by_type!(ty, scan_of(p, n, op, kind, runs))
}

fn scan_of<T: Element>(p: &CudaPrims, n: usize, op: Op, kind: ScanKind, runs: usize) -> Result<StreamRow> {
    let x = p.upload(&small_values::<T>(n))?;
    // SAFETY: the scan writes every element before anything reads it.
    let mut y: DeviceBuffer<T> = unsafe { p.gpu().alloc_uninit(n)? };
    let ms = median_ms(p.gpu(), runs, || {
        match kind {
            ScanKind::Inclusive => p.inclusive_scan_into(&x, &mut y, op)?,
            ScanKind::Exclusive => p.exclusive_scan_into(&x, &mut y, op)?,
        }
        Ok(())
    })?;
    let name = if kind == ScanKind::Inclusive { "inclusive" } else { "exclusive" };
    let label = format!("{name} scan {} {}", op.name(), T::NAME);
    let bytes = n * size_of::<T>();
    StreamRow::measured(p, label, n, (2 * bytes) as f64, ms, bytes)
}

/// Keys with uniformly random radix bits (for floats this includes NaNs
/// and infinities, about 0.4 % of them, as a real sort must handle).
pub fn random_keys<K: SortKey>(n: usize, seed: u64) -> Vec<K> {
    let mut s = seed;
    let mask = if K::BITS == 32 { 0xffff_ffff } else { u64::MAX };
    (0..n).map(|_| K::from_radix_bits(splitmix(&mut s) & mask)).collect()
}

/// Times sorting `n` random keys of type `ty` (keys only, or with `u32`
/// values), with the sort's scratch allocated outside the timing: the
/// median of `runs` sorts, each of a fresh copy of the keys.
pub fn sort(p: &CudaPrims, ty: NumberType, n: usize, with_values: bool, runs: usize) -> Result<StreamRow> {
    ensure(n >= 1, || "a sort benchmark needs at least one key".into())?;
    by_type!(ty, sort_of(p, n, with_values, runs))
}

fn sort_of<K: SortKey>(p: &CudaPrims, n: usize, with_values: bool, runs: usize) -> Result<StreamRow> {
    let host = random_keys::<K>(n, 7);
    let original = p.upload(&host)?;
    let mut keys = p.upload(&host)?;
    let mut values = p.upload(&(0..n as u32).collect::<Vec<u32>>())?;
    let mut scratch = if with_values { p.sort_pairs_scratch::<K, u32>(n)? } else { p.sort_keys_scratch::<K>(n)? };
    // Each timed call sorts fresh random keys: restoring them is a device
    // copy outside the timed region. The first sort (compilation) is not
    // counted.
    let gpu = p.gpu();
    let mut times = Vec::new();
    for run in 0..=runs.max(1) {
        gpu.copy_device(&original, &mut keys)?;
        let timer = gpu.start_timer()?;
        if with_values {
            p.sort_pairs_with(&mut keys, &mut values, &mut scratch)?;
        } else {
            p.sort_keys_with(&mut keys, &mut scratch)?;
        }
        let ms = timer.stop_ms()?;
        if run > 0 {
            times.push(ms);
        }
    }
    let per = size_of::<K>() + if with_values { 4 } else { 0 };
    let label = format!("sort {}{}", K::NAME, if with_values { " + u32 values" } else { "" });
    StreamRow::measured(p, label, n, (2 * n * per) as f64, median(&mut times), n * size_of::<K>())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn types_parse_by_name_with_a_plain_error() {
        for t in NumberType::ALL {
            assert_eq!(t.name().parse::<NumberType>().unwrap(), t);
        }
        let e = "f16".parse::<NumberType>().unwrap_err().to_string();
        assert!(e.contains("unknown element type 'f16'") && !e.contains("--"), "{e}");
    }

    #[test]
    fn random_keys_cover_the_radix_range() {
        let k = random_keys::<u32>(10_000, 7);
        assert!(k.iter().any(|&x| x > u32::MAX / 2) && k.iter().any(|&x| x < u32::MAX / 2));
        let f = random_keys::<f32>(10_000, 7);
        assert!(f.iter().any(|x| x.is_sign_negative()) && f.iter().any(|x| x.is_sign_positive()));
    }
}
