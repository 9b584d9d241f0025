//! Measurements behind `warpmc bench reduce|scan|sort|transpose`: device time of one
//! call, and the bytes it must move, so that speed reads as a fraction of the
//! device's copy bandwidth measured in the same run
//! ([`warpmc_gpu::Gpu::copy_bandwidth_gbs`]).

use serde::Serialize;
use warpmc_gpu::{DeviceBuffer, Gpu};

use warpmc_prims::{CudaPrims, Element, Op, SortKey, Transposable, TransposeKernel};

use crate::error::Result;

/// One timed operation.
#[derive(Clone, Debug, Serialize)]
pub struct Measured {
    /// What was timed, e.g. `reduce sum f32`.
    pub label: String,
    /// Elements processed.
    pub elements: usize,
    /// Bytes the operation must move at the least: reduce reads its input
    /// once; scan reads it and writes the result; sort reads and writes
    /// the keys (and values) once — a lower bound no sort reaches, which
    /// makes the fraction of copy bandwidth a conservative figure.
    pub bytes: f64,
    /// Median device time of one call in milliseconds.
    pub ms: f64,
}

impl Measured {
    /// Bytes that must move divided by time, in GB/s.
    pub fn gbs(&self) -> f64 {
        self.bytes / (self.ms * 1e-3) / 1e9
    }

    /// Elements per second, in units of 10^9.
    pub fn giga_elements_per_s(&self) -> f64 {
        self.elements as f64 / (self.ms * 1e-3) / 1e9
    }
}

/// Calls of at least this many milliseconds in all make one timed batch
/// of [`sustained_ms`].
const BATCH_MS: f64 = 4.0;

/// Median device time per call of `f` in ms under sustained load, and the
/// number of calls made (some operations, such as an in-place transpose,
/// leave a result that depends on it).
///
/// After one untimed call (compilation, memory-pool growth) and one that
/// sizes the batches, calls run back to back in batches of at least
/// `BATCH_MS` (4 ms), each batch timed by events around it, until there
/// are at least `batches` batches and `min_ms` of device time in all; the
/// result is the median batch divided by its calls. Why: under full
/// memory traffic an H200 reaches its 700 W power cap and its power
/// management lowers the SM clocks in cycles (measured with a transpose:
/// dips of about 200 ms, 10 % slower, about once a second). Twenty calls
/// of half a millisecond each fall wholly into one phase or the other, so
/// the same kernel measured 3350 or 3720 GB/s depending on when it ran; a
/// median over a whole second of batches lands in the common phase.
pub fn sustained_ms(gpu: &Gpu, batches: usize, min_ms: f64, mut f: impl FnMut() -> Result<()>) -> Result<(f64, usize)> {
    f()?;
    gpu.synchronize()?;
    let timer = gpu.start_timer()?;
    f()?;
    let one = timer.stop_ms()?;
    let per_batch = (BATCH_MS / one.max(1e-4)).ceil().clamp(1.0, 100_000.0) as usize;
    let mut calls = 2;
    let mut times = Vec::new();
    let mut total = 0.0;
    while times.len() < batches.max(1) || total < min_ms {
        let timer = gpu.start_timer()?;
        for _ in 0..per_batch {
            f()?;
        }
        let ms = timer.stop_ms()?;
        calls += per_batch;
        total += ms;
        times.push(ms / per_batch as f64);
    }
    times.sort_by(f64::total_cmp);
    Ok((times[times.len() / 2], calls))
}

/// Median device time of `f` in ms over `runs` calls, after one untimed
/// call (compilation, memory-pool growth).
pub fn median_ms(gpu: &Gpu, runs: usize, mut f: impl FnMut() -> Result<()>) -> Result<f64> {
    f()?;
    gpu.synchronize()?;
    let mut times = Vec::with_capacity(runs.max(1));
    for _ in 0..runs.max(1) {
        let timer = gpu.start_timer()?;
        f()?;
        times.push(timer.stop_ms()?);
    }
    times.sort_by(f64::total_cmp);
    Ok(times[times.len() / 2])
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

/// Times a device reduction of `n` elements of `T`.
pub fn reduce<T: Element>(p: &CudaPrims, n: usize, op: Op, runs: usize) -> Result<Measured> {
    let x = p.gpu().upload(&small_values::<T>(n))?;
    let mut out: DeviceBuffer<T> = p.gpu().alloc_zeros(1)?;
    let ms = median_ms(p.gpu(), runs, || Ok(p.reduce_to(&x, op, &mut out)?))?;
    Ok(Measured {
        label: format!("reduce {} {}", op.name(), T::NAME),
        elements: n,
        bytes: (n * size_of::<T>()) as f64,
        ms,
    })
}

/// Times a single-pass device scan of `n` elements of `T`.
pub fn scan<T: Element>(p: &CudaPrims, n: usize, op: Op, inclusive: bool, runs: usize) -> Result<Measured> {
    let x = p.gpu().upload(&small_values::<T>(n))?;
    // SAFETY: the scan writes every element before anything reads it.
    let mut y: DeviceBuffer<T> = unsafe { p.gpu().alloc_uninit(n)? };
    let ms = median_ms(p.gpu(), runs, || Ok(p.scan_into(&x, &mut y, op, inclusive)?))?;
    let kind = if inclusive { "inclusive" } else { "exclusive" };
    Ok(Measured {
        label: format!("{kind} scan {} {}", op.name(), T::NAME),
        elements: n,
        bytes: (2 * n * size_of::<T>()) as f64,
        ms,
    })
}

/// Keys with uniformly random radix bits (for floats this includes NaNs
/// and infinities, about 0.4 % of them, as a real sort must handle).
pub fn random_keys<K: SortKey>(n: usize, seed: u64) -> Vec<K> {
    let mut s = seed;
    let mask = if K::BITS == 32 { 0xffff_ffff } else { u64::MAX };
    (0..n).map(|_| K::from_radix_bits(splitmix(&mut s) & mask)).collect()
}

/// Times sorting `n` random keys of `K` (keys only, or with `u32` values),
/// with the sort's scratch allocated outside the timing.
pub fn sort<K: SortKey>(p: &CudaPrims, n: usize, with_values: bool, runs: usize) -> Result<Measured> {
    let host = random_keys::<K>(n, 7);
    let original = p.gpu().upload(&host)?;
    let mut keys = p.gpu().upload(&host)?;
    let mut values = p.gpu().upload(&(0..n as u32).collect::<Vec<u32>>())?;
    let mut scratch = p.sort_scratch::<K, u32>(n, with_values)?;
    // Each timed call sorts fresh random keys: restoring them is a device
    // copy outside the timed region.
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
    times.sort_by(f64::total_cmp);
    let per = size_of::<K>() + if with_values { 4 } else { 0 };
    Ok(Measured {
        label: format!("sort {}{}", K::NAME, if with_values { " + u32 values" } else { "" }),
        elements: n,
        bytes: (2 * n * per) as f64,
        ms: times[times.len() / 2],
    })
}

/// Times `kernel` on the `batch` matrices of `rows × cols` in `src` (into
/// `dst`) under sustained load ([`sustained_ms`]: at least `batches`
/// batches and `min_ms` of device time): the study's effective bandwidth
/// counts every element read once and written once.
pub fn transpose<T: Transposable>(
    p: &CudaPrims,
    kernel: TransposeKernel,
    src: &DeviceBuffer<T>,
    dst: &mut DeviceBuffer<T>,
    shape: (usize, usize, usize),
    batches: usize,
    min_ms: f64,
) -> Result<Measured> {
    let (batch, rows, cols) = shape;
    let (ms, _) =
        sustained_ms(p.gpu(), batches, min_ms, || Ok(p.transpose_with(kernel, src, dst, batch, rows, cols)?))?;
    let n = batch * rows * cols;
    Ok(Measured {
        label: format!("{} {}", kernel.label(), T::NAME),
        elements: n,
        bytes: (2 * n * size_of::<T>()) as f64,
        ms,
    })
}
