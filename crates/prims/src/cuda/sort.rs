//! Radix sort on the GPU: least significant digit first, 8-bit digits,
//! Onesweep passes (`kernels/sort.cu`).
//!
//! A sort of `n` keys is
//!
//! 1. a memset of the small digit-count buffer,
//! 2. `sort_histogram`: one read of every key, counting the digits of every
//!    pass at once (and zeroing the first pass's look-back status words),
//! 3. one `sort_onesweep` launch per pass (4 for 32-bit keys, 8 for 64-bit):
//!    each block takes the next tile of 4096 keys (an atomic counter, so
//!    tiles start in order), ranks its keys by digit in shared memory, finds
//!    the keys of each digit before it with a decoupled look-back over the
//!    earlier tiles' per-digit counts, and writes its keys (and values) to
//!    their places in sorted runs.
//!
//! Traffic per key and pass is one read and one write (plus one read in
//! the histogram for the whole sort), against three for a
//! reduce-then-scan pass. The passes ping-pong between the caller's buffer
//! and a scratch buffer; both pass counts are even, so the result always
//! ends in the caller's buffer.

use std::mem::size_of;

use warpmc_gpu::{DeviceBuffer, KernelSource, LaunchConfig};

use super::CudaPrims;
use crate::element::{Element, SortKey};
use crate::error::{PrimsError, Result, ensure};

const SORT_CU: &str = include_str!("../../kernels/sort.cu");

/// Threads per block (= digits per pass, one thread per digit).
const BLOCK: u32 = 256;
/// Keys per thread of a tile.
const ITEMS: usize = 16;
/// Keys per tile: 256 threads × 16 keys.
const TILE: usize = BLOCK as usize * ITEMS;
/// Bits per digit.
const RADIX_BITS: usize = 8;
/// Digits per pass.
const RADIX: usize = 1 << RADIX_BITS;
/// Passes of 64-bit keys, the most any sort makes.
const MAX_PASSES: usize = 8;
/// The digit counts of every pass, then one tile counter per pass.
const HIST_WORDS: usize = MAX_PASSES * RADIX + MAX_PASSES;
/// Histogram blocks per SM (enough to fill it; more only adds flushes).
const HIST_BLOCKS_PER_SM: usize = 8;

/// See [`CudaPrims::MAX_SORT_LEN`].
const MAX_SORT_LEN: usize = i32::MAX as usize;

/// The source of the module for one combination of key width, key
/// transform and value width (0 = keys only).
fn source(key_bits: u32, transform: u32, value_bytes: usize) -> KernelSource {
    KernelSource::new("sort.cu", SORT_CU)
        .option(format!("-DPRIMS_SORT_KEY_BITS={key_bits}"))
        .option(format!("-DPRIMS_SORT_KEY_TRANSFORM={transform}"))
        .option(format!("-DPRIMS_SORT_VALUE_BYTES={value_bytes}"))
        .option(format!("-DPRIMS_SORT_BLOCK={BLOCK}"))
        .option(format!("-DPRIMS_SORT_ITEMS={ITEMS}"))
        .option(format!("-DPRIMS_SORT_RADIX_BITS={RADIX_BITS}"))
        .option(format!("-DPRIMS_SORT_MAX_PASSES={MAX_PASSES}"))
}

/// The sort kernel sources, one per module the sort can build, for compile
/// checks.
pub(crate) fn sources() -> Vec<KernelSource> {
    let mut v = Vec::new();
    for key_bits in [32, 64] {
        for transform in 0..3 {
            for value_bytes in [0, 4, 8] {
                v.push(source(key_bits, transform, value_bytes));
            }
        }
    }
    v
}

/// Launch geometry of one sort: pure arithmetic, tested without a GPU.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Plan {
    n: u32,
    passes: usize,
    tiles: u32,
    /// Status words of one pass: one per tile and digit.
    status_words: u32,
    hist_blocks: u32,
}

/// Tiles for `n` keys (at least one, so that scratch is never empty).
fn tiles_for(n: usize) -> usize {
    n.div_ceil(TILE).max(1)
}

fn plan(n: usize, key_bits: u32, sm_count: u32) -> Result<Plan> {
    ensure(n <= MAX_SORT_LEN, || format!("the GPU sort takes at most {MAX_SORT_LEN} keys, not {n}"))?;
    ensure(key_bits == 32 || key_bits == 64, || format!("the GPU sort takes 32- or 64-bit keys, not {key_bits}-bit"))?;
    let tiles = tiles_for(n);
    // The histogram reads 16 bytes per thread and iteration.
    let vectors = n / (16 / (key_bits as usize / 8));
    let hist_blocks = vectors.div_ceil(BLOCK as usize).clamp(1, HIST_BLOCKS_PER_SM * sm_count.max(1) as usize);
    Ok(Plan {
        n: n as u32,
        passes: key_bits as usize / RADIX_BITS,
        tiles: tiles as u32,
        status_words: (tiles * RADIX) as u32,
        hist_blocks: hist_blocks as u32,
    })
}

/// Whether pass `pass` reads the caller's buffer (and writes the scratch
/// one); odd passes go the other way.
fn reads_caller(pass: usize) -> bool {
    pass.is_multiple_of(2)
}

fn blocks(n: u32) -> LaunchConfig {
    LaunchConfig { grid_dim: (n, 1, 1), block_dim: (BLOCK, 1, 1), shared_mem_bytes: 0 }
}

/// Device memory for a GPU radix sort, allocated once and reused, so that a
/// benchmark's timing leaves out allocation (and a loop of sorts allocates
/// nothing).
///
/// Made by [`CudaPrims::sort_keys_scratch`] or
/// [`CudaPrims::sort_pairs_scratch`] for at most `capacity` keys of one
/// width (and values of one width); used by [`CudaPrims::sort_keys_with`]
/// and [`CudaPrims::sort_pairs_with`] for any sort that fits. It holds a
/// second buffer for the keys (and one for the values) that the passes
/// alternate with, the digit counts, and two arrays of look-back status
/// words (1 KiB per tile of 4096 keys each): about `capacity` × (key +
/// value bytes) + `capacity` / 2 bytes.
#[derive(Debug)]
pub struct SortScratch {
    capacity: usize,
    key_bytes: usize,
    value_bytes: usize,
    /// The ping-pong partner of the keys (raw 32-bit words).
    keys_alt: DeviceBuffer<u32>,
    /// The ping-pong partner of the values, for pair sorts.
    values_alt: Option<DeviceBuffer<u32>>,
    /// Digit counts and tile counters (HIST_WORDS), zeroed by every sort.
    hist: DeviceBuffer<u32>,
    /// Look-back status words of even and odd passes. Each pass zeroes the
    /// other array for the next, and the histogram zeroes the first, so
    /// neither needs a memset.
    status: [DeviceBuffer<u32>; 2],
}

impl SortScratch {
    /// The most keys it can sort.
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// The widest key, in bytes, it can sort.
    pub fn key_bytes(&self) -> usize {
        self.key_bytes
    }

    /// The widest value, in bytes, it can move (0: keys only).
    pub fn value_bytes(&self) -> usize {
        self.value_bytes
    }

    /// Why it cannot sort `n` keys of `key_bytes` with values of
    /// `value_bytes` (0: none), if it cannot.
    fn check(&self, n: usize, key_bytes: usize, value_bytes: usize) -> Result<()> {
        ensure(n <= self.capacity, || format!("sort scratch for {} keys used for {n}", self.capacity))?;
        ensure(key_bytes <= self.key_bytes, || {
            format!("sort scratch for {}-byte keys used for {key_bytes}-byte keys", self.key_bytes)
        })?;
        ensure(value_bytes <= self.value_bytes, || {
            if self.value_bytes == 0 {
                "sort scratch made for keys only used for a sort of pairs".to_string()
            } else {
                format!("sort scratch for {}-byte values used for {value_bytes}-byte values", self.value_bytes)
            }
        })
    }
}

impl CudaPrims {
    /// The most keys one GPU sort takes: 2³¹ − 1 (longer inputs are
    /// [`PrimsError::InvalidArgument`]). The kernels index with 32-bit
    /// integers and the look-back status words hold 31-bit counts.
    pub const MAX_SORT_LEN: usize = MAX_SORT_LEN;

    /// Scratch for sorting up to `n` keys of type `K` alone, for
    /// [`CudaPrims::sort_keys_with`]. Scratch for 64-bit keys also sorts
    /// 32-bit keys.
    ///
    /// ```no_run
    /// # fn main() -> warpmc_prims::Result<()> {
    /// use warpmc_prims::{CudaPrims, Primitives};
    /// let prims = CudaPrims::new(warpmc_gpu::Gpu::open_default()?);
    /// let mut keys = prims.upload(&[3u32, 1, 2])?;
    /// let mut scratch = prims.sort_keys_scratch::<u32>(keys.len())?;
    /// prims.sort_keys_with(&mut keys, &mut scratch)?;
    /// assert_eq!(prims.download(&keys)?, vec![1, 2, 3]);
    /// # Ok(()) }
    /// ```
    pub fn sort_keys_scratch<K: SortKey>(&self, n: usize) -> Result<SortScratch> {
        self.new_sort_scratch::<K, u32>(n, false)
    }

    /// Scratch for sorting up to `n` keys of type `K` with values of type
    /// `V`, for [`CudaPrims::sort_pairs_with`] (and
    /// [`CudaPrims::sort_keys_with`]). Scratch for 64-bit keys also sorts
    /// 32-bit keys, and scratch for 64-bit values also moves 32-bit values.
    pub fn sort_pairs_scratch<K: SortKey, V: Element>(&self, n: usize) -> Result<SortScratch> {
        self.new_sort_scratch::<K, V>(n, true)
    }

    fn new_sort_scratch<K: SortKey, V: Element>(&self, n: usize, with_values: bool) -> Result<SortScratch> {
        plan(n, K::BITS, 1)?;
        let key_bytes = size_of::<K>();
        let value_bytes = if with_values { size_of::<V>() } else { 0 };
        ensure(key_bytes * 8 == K::BITS as usize, || format!("{} keys are not {} bits wide", K::NAME, K::BITS))?;
        ensure(value_bytes % 4 == 0 && value_bytes <= 8, || {
            format!("the GPU sort moves 4- or 8-byte values, not {value_bytes}-byte {}", V::NAME)
        })?;
        let words = |bytes: usize| (n.max(1) * bytes).div_ceil(4);
        let status_words = tiles_for(n) * RADIX;
        let gpu = self.gpu();
        // Scratch that the sort writes before it reads: no memset needed.
        let uninit = |words: usize| {
            // SAFETY: of a sort of m <= n keys, pass p writes entries 0..m of
            // the key (value) buffer that pass p + 1 reads, and reads only
            // entries 0..m of the one pass p - 1 wrote (pass 0 reads the
            // caller's); the histogram kernel zeroes status[0] and pass p
            // zeroes rows 0..tiles(m) of status[(p + 1) % 2] before any pass
            // reads those rows, and no pass reads other rows.
            unsafe { gpu.alloc_uninit::<u32>(words) }
        };
        let keys_alt = uninit(words(key_bytes))?;
        let values_alt = if with_values { Some(uninit(words(value_bytes))?) } else { None };
        let status = [uninit(status_words)?, uninit(status_words)?];
        let hist = gpu.alloc_zeros::<u32>(HIST_WORDS)?;
        Ok(SortScratch { capacity: n, key_bytes, value_bytes, keys_alt, values_alt, hist, status })
    }

    /// Sorts `keys` in place as [`crate::Primitives::sort_keys`] does, with
    /// `scratch` (from [`CudaPrims::sort_keys_scratch`] or
    /// [`CudaPrims::sort_pairs_scratch`]) instead of allocating:
    /// only kernel launches and one small memset are issued, so device
    /// timing of the call is the sort alone.
    pub fn sort_keys_with<K: SortKey>(&self, keys: &mut DeviceBuffer<K>, scratch: &mut SortScratch) -> Result<()> {
        self.sort_run::<K, u32>(keys, None, scratch)
    }

    /// Sorts `keys` in place and applies the same permutation to `values`,
    /// stably, as [`crate::Primitives::sort_pairs`] does, with `scratch`
    /// (from [`CudaPrims::sort_pairs_scratch`]) instead of allocating.
    pub fn sort_pairs_with<K: SortKey, V: Element>(
        &self,
        keys: &mut DeviceBuffer<K>,
        values: &mut DeviceBuffer<V>,
        scratch: &mut SortScratch,
    ) -> Result<()> {
        self.sort_run(keys, Some(values), scratch)
    }

    /// A sort with scratch of its own: what [`crate::Primitives::sort_keys`]
    /// and [`crate::Primitives::sort_pairs`] run.
    pub(crate) fn sort_allocating<K: SortKey, V: Element>(
        &self,
        keys: &mut DeviceBuffer<K>,
        values: Option<&mut DeviceBuffer<V>>,
    ) -> Result<()> {
        check_lengths(keys.len(), values.as_ref().map(|v| v.len()))?;
        plan(keys.len(), K::BITS, 1)?;
        if keys.len() <= 1 {
            return Ok(());
        }
        let mut scratch = self.new_sort_scratch::<K, V>(keys.len(), values.is_some())?;
        self.sort_run(keys, values, &mut scratch)
    }

    /// [`Self::sort_run_aligned`] of keys and values wherever they start.
    fn sort_run<K: SortKey, V: Element>(
        &self,
        keys: &mut DeviceBuffer<K>,
        values: Option<&mut DeviceBuffer<V>>,
        scratch: &mut SortScratch,
    ) -> Result<()> {
        self.with_aligned_output(keys, true, |keys| match values {
            Some(values) => {
                self.with_aligned_output(values, true, |values| self.sort_run_aligned(keys, Some(values), scratch))
            }
            None => self.sort_run_aligned::<K, V>(keys, None, scratch),
        })
    }

    /// The sort of keys (and values) that start on
    /// [`super::KERNEL_ALIGNMENT`].
    fn sort_run_aligned<K: SortKey, V: Element>(
        &self,
        keys: &mut DeviceBuffer<K>,
        mut values: Option<&mut DeviceBuffer<V>>,
        scratch: &mut SortScratch,
    ) -> Result<()> {
        let n = keys.len();
        check_lengths(n, values.as_ref().map(|v| v.len()))?;
        let value_bytes = if values.is_some() { size_of::<V>() } else { 0 };
        ensure(value_bytes % 4 == 0 && value_bytes <= 8, || {
            format!("the GPU sort moves 4- or 8-byte values, not {value_bytes}-byte {}", V::NAME)
        })?;
        ensure(size_of::<K>() * 8 == K::BITS as usize, || format!("{} keys are not {} bits wide", K::NAME, K::BITS))?;
        let plan = plan(n, K::BITS, self.gpu().info().sm_count)?;
        scratch.check(n, size_of::<K>(), value_bytes)?;
        if n <= 1 {
            return Ok(());
        }

        let key = format!("sort-k{}-t{}-v{value_bytes}", K::BITS, K::TRANSFORM);
        let module = self.module(|| source(K::BITS, K::TRANSFORM, value_bytes), &key)?;
        let histogram = module.kernel("sort_histogram")?;
        let onesweep = module.kernel("sort_onesweep")?;
        let gpu = self.gpu();
        let SortScratch { keys_alt, values_alt, hist, status, .. } = scratch;
        let [status_even, status_odd] = status;

        gpu.memset_bytes(hist, 0)?;
        // SAFETY: sort_histogram(const key*, unsigned n, unsigned *hist,
        // unsigned *status, unsigned status_words): `keys` holds n keys of
        // the module's width (16-byte loads stay below n, and cuMemAlloc
        // memory is 256-byte aligned); `hist` holds HIST_WORDS words and the
        // kernel touches the first PASSES * 256; `status_even` holds at least
        // tiles(n) * 256 = status_words words.
        unsafe {
            gpu.launch(&histogram)
                .buf(&*keys)
                .arg(&plan.n)
                .buf_mut(&mut *hist)
                .buf_mut(&mut *status_even)
                .arg(&plan.status_words)
                .run(blocks(plan.hist_blocks))?;
        }

        // Null value pointers for a keys-only module, which never reads them.
        let null = 0u64;
        for pass in 0..plan.passes {
            let pass_arg = pass as u32;
            let (status_cur, status_next) = if pass % 2 == 0 {
                (&mut *status_even, &mut *status_odd)
            } else {
                (&mut *status_odd, &mut *status_even)
            };
            let launch = gpu.launch(&onesweep);
            let launch = if reads_caller(pass) {
                launch.buf(&*keys).buf_mut(&mut *keys_alt)
            } else {
                launch.buf(&*keys_alt).buf_mut(&mut *keys)
            };
            let launch = match values.as_deref_mut() {
                Some(v) => {
                    let alt = values_alt.as_mut().ok_or_else(|| {
                        PrimsError::InvalidArgument("sort scratch made for keys only used for a sort of pairs".into())
                    })?;
                    if reads_caller(pass) { launch.buf(&*v).buf_mut(alt) } else { launch.buf(&*alt).buf_mut(v) }
                }
                None => launch.arg(&null).arg(&null),
            };
            // SAFETY: sort_onesweep(const key *kin, key *kout, const val
            // *vin, val *vout, unsigned *hist, unsigned *status, unsigned
            // *status_next, unsigned n, unsigned pass) with keys of the
            // module's width: the caller's keys and `keys_alt` both hold at
            // least n keys (checked above), likewise the values and
            // `values_alt` when the module moves values (VAL_BYTES = the
            // values' size); a keys-only module ignores its null value
            // pointers. One block per tile: block b touches keys and values
            // below n only, hist words below HIST_WORDS and status rows below
            // tiles(n), which both status arrays hold. pass < PASSES.
            unsafe {
                launch
                    .buf_mut(&mut *hist)
                    .buf_mut(status_cur)
                    .buf_mut(status_next)
                    .arg(&plan.n)
                    .arg(&pass_arg)
                    .run(blocks(plan.tiles))?;
            }
        }
        debug_assert!(reads_caller(plan.passes), "an even number of passes leaves the keys in the caller's buffer");
        Ok(())
    }
}

fn check_lengths(keys: usize, values: Option<usize>) -> Result<()> {
    match values {
        Some(v) => ensure(v == keys, || format!("sort_pairs: {keys} keys but {v} values")),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    //! The host-side bookkeeping, and an emulation of the kernels'
    //! algorithm (ranking, status words, look-back, staging, scatter) on the
    //! CPU, checked against [`CpuPrims`]; the GPU tests are in
    //! tests/sort_gpu.rs.

    use super::*;
    use crate::{CpuPrims, Primitives};

    const WARP_TILE: usize = 32 * ITEMS;
    const ST_PREFIX: u32 = 0x8000_0000;

    fn splitmix(state: &mut u64) -> u64 {
        *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = *state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// `radix_bits` exactly as sort.cu computes it, on raw key bits.
    fn cuda_radix_bits(k: u64, key_bits: u32, transform: u32) -> u64 {
        let mask = if key_bits == 64 { u64::MAX } else { (1u64 << key_bits) - 1 };
        let sign = 1u64 << (key_bits - 1);
        match transform {
            0 => k,
            1 => k ^ sign,
            _ => {
                // (key_t)0 - (k >> (BITS - 1)), in key_t arithmetic.
                let neg = 0u64.wrapping_sub(k >> (key_bits - 1)) & mask;
                k ^ (neg | sign)
            }
        }
    }

    trait Raw: SortKey {
        fn from_raw(bits: u64) -> Self;
        fn raw(self) -> u64;
    }
    macro_rules! raw {
        ($t:ty, $u:ty, $from:expr, $to:expr) => {
            impl Raw for $t {
                fn from_raw(bits: u64) -> Self {
                    $from(bits as $u)
                }
                fn raw(self) -> u64 {
                    $to(self) as u64
                }
            }
        };
    }
    raw!(u32, u32, |b| b, |k| k);
    raw!(i32, u32, |b: u32| b as i32, |k: i32| k as u32);
    raw!(f32, u32, f32::from_bits, f32::to_bits);
    raw!(u64, u64, |b| b, |k| k);
    raw!(i64, u64, |b: u64| b as i64, |k: i64| k as u64);
    raw!(f64, u64, f64::from_bits, f64::to_bits);

    fn specials<K: Raw>() -> Vec<u64> {
        let b = K::BITS;
        let top = 1u64 << (b - 1);
        let all = if b == 64 { u64::MAX } else { (1u64 << b) - 1 };
        let mut v = vec![0, 1, top, top - 1, top + 1, all, all - 1, 0xff, 0x100, all ^ 0xff];
        // ±inf, NaNs of both signs, ±max as raw bits of the width.
        if b == 32 {
            v.extend([0x7f80_0000, 0xff80_0000, 0x7fc0_0000, 0xffc0_0001, 0x7f7f_ffff, 0x0000_0001]);
        } else {
            v.extend([0x7ff0 << 48, 0xfff0 << 48, 0x7ff8 << 48, (0xfff8 << 48) | 1, 1]);
        }
        v
    }

    fn check_transform<K: Raw>() {
        let mut s = 7;
        let mut raws = specials::<K>();
        raws.extend((0..10_000).map(|_| K::from_raw(splitmix(&mut s)).raw()));
        for r in raws {
            let k = K::from_raw(r);
            assert_eq!(cuda_radix_bits(k.raw(), K::BITS, K::TRANSFORM), k.radix_bits(), "{} {r:#x}", K::NAME);
        }
    }

    #[test]
    fn kernel_transform_matches_radix_bits_for_every_key_type() {
        check_transform::<u32>();
        check_transform::<i32>();
        check_transform::<f32>();
        check_transform::<u64>();
        check_transform::<i64>();
        check_transform::<f64>();
    }

    #[test]
    fn plan_counts_passes_tiles_and_refuses_what_it_cannot_index() {
        let p = plan(1 << 28, 32, 132).unwrap();
        assert_eq!((p.passes, p.tiles, p.status_words), (4, 65_536, 65_536 * 256));
        assert_eq!(p.hist_blocks, 132 * 8);
        let p = plan(4097, 64, 132).unwrap();
        assert_eq!((p.passes, p.tiles, p.n), (8, 2, 4097));
        assert_eq!(p.hist_blocks, 8);
        assert_eq!(plan(0, 32, 132).unwrap().tiles, 1);
        let p = plan(MAX_SORT_LEN, 64, 132).unwrap();
        assert_eq!(p.tiles as usize, MAX_SORT_LEN.div_ceil(TILE));
        // Status indices (tile * 256 + digit) and positions fit in u32.
        assert!((p.status_words as u64) < 1 << 32);
        assert!(((p.tiles as u64) * TILE as u64) < 1 << 32);
        assert!(matches!(plan(MAX_SORT_LEN + 1, 32, 132), Err(PrimsError::InvalidArgument(_))));
        assert!(matches!(plan(10, 16, 132), Err(PrimsError::InvalidArgument(_))));
        assert!(matches!(check_lengths(3, Some(4)), Err(PrimsError::InvalidArgument(_))));
        assert!(check_lengths(3, Some(3)).is_ok() && check_lengths(3, None).is_ok());
    }

    #[test]
    fn passes_end_in_the_callers_buffer() {
        for bits in [32, 64] {
            let passes = plan(100, bits, 1).unwrap().passes;
            // Follow the data: pass p reads the caller's buffer iff p is even.
            let mut in_caller = true;
            for pass in 0..passes {
                assert_eq!(reads_caller(pass), in_caller);
                in_caller = !in_caller;
            }
            assert!(in_caller && reads_caller(passes));
        }
    }

    #[test]
    fn kernel_sources_cover_every_module() {
        let names: Vec<String> = sources().iter().map(|s| s.name().to_string()).collect();
        assert_eq!(names.len(), 18);
    }

    /// The histogram kernel: digit counts of every pass, with the
    /// warp-uniform shortcut, warp by warp over 16-byte vectors and a tail.
    fn emulate_histogram(keys: &[u64], key_bits: u32, transform: u32) -> Vec<u32> {
        let passes = key_bits as usize / 8;
        let vec = 16 / (key_bits as usize / 8);
        let mut h = vec![0u32; passes * RADIX];
        let mut count = |group: &[Option<u64>]| {
            for p in 0..passes {
                let d: Vec<usize> = group
                    .iter()
                    .map(|k| k.map_or(RADIX, |k| (cuda_radix_bits(k, key_bits, transform) >> (8 * p)) as usize & 255))
                    .collect();
                if d.iter().all(|&x| x == d[0]) {
                    if d[0] < RADIX {
                        h[p * RADIX + d[0]] += 32;
                    }
                } else {
                    for &x in d.iter().filter(|&&x| x < RADIX) {
                        h[p * RADIX + x] += 1;
                    }
                }
            }
        };
        let nv = keys.len() / vec;
        for warp_first in (0..nv).step_by(32) {
            for e in 0..vec {
                let group: Vec<Option<u64>> =
                    (0..32).map(|l| (warp_first + l < nv).then(|| keys[(warp_first + l) * vec + e])).collect();
                count(&group);
            }
        }
        let tail: Vec<Option<u64>> = (0..32).map(|l| keys.get(nv * vec + l).copied()).collect();
        count(&tail);
        h
    }

    /// One onesweep pass, tile by tile as the blocks do it, with the
    /// look-back run in `order` after every tile has published its counts:
    /// the walks then cross a mix of aggregates and prefixes.
    #[allow(clippy::too_many_arguments)]
    fn emulate_pass(
        kin: &[u64],
        vin: &[u64],
        kout: &mut [u64],
        vout: &mut [u64],
        hist: &[u32],
        key_bits: u32,
        transform: u32,
        shift: u32,
        order: &[usize],
    ) {
        let n = kin.len();
        let digit = |k: u64| (cuda_radix_bits(k, key_bits, transform) >> shift) as usize & 255;
        if hist.iter().any(|&c| c as usize == n) {
            kout.copy_from_slice(kin);
            vout.copy_from_slice(vin);
            return;
        }
        let tiles = tiles_for(n);
        let mut status = vec![0u32; tiles * RADIX];
        struct TileState {
            wcount: Vec<u32>,
            rank: Vec<u32>,
            total: Vec<u32>,
            tile_excl: Vec<u32>,
            global_excl: Vec<u32>,
        }
        let mut states = Vec::new();
        for tile in 0..tiles {
            // Ranking, warp by warp, item by item, with match.any semantics.
            let mut wcount = vec![0u32; 8 * RADIX];
            let mut rank = vec![0u32; TILE];
            for warp in 0..8 {
                for i in 0..ITEMS {
                    let idx = |lane: usize| tile * TILE + warp * WARP_TILE + i * 32 + lane;
                    let d: Vec<usize> = (0..32).map(|l| if idx(l) < n { digit(kin[idx(l)]) } else { RADIX }).collect();
                    let mut new = wcount.clone();
                    for lane in 0..32 {
                        let peers: u32 = (0..32).filter(|&m| d[m] == d[lane]).map(|m| 1u32 << m).sum();
                        let below = (peers & ((1u32 << lane) - 1)).count_ones();
                        if d[lane] < RADIX {
                            let base = wcount[warp * RADIX + d[lane]];
                            if below + 1 == peers.count_ones() {
                                new[warp * RADIX + d[lane]] = base + below + 1;
                            }
                            rank[warp * WARP_TILE + i * 32 + lane] = base + below;
                        }
                    }
                    wcount = new;
                }
            }
            let mut total = vec![0u32; RADIX];
            for d in 0..RADIX {
                let mut sum = 0;
                for w in 0..8 {
                    let c = wcount[w * RADIX + d];
                    wcount[w * RADIX + d] = sum;
                    sum += c;
                }
                total[d] = sum;
                status[tile * RADIX + d] = if tile == 0 { ST_PREFIX | sum } else { sum + 1 };
            }
            let excl = |xs: &[u32]| -> Vec<u32> {
                xs.iter()
                    .scan(0u32, |acc, &x| {
                        let e = *acc;
                        *acc += x;
                        Some(e)
                    })
                    .collect()
            };
            let tile_excl = excl(&total);
            let global_excl = excl(hist);
            states.push(TileState { wcount, rank, total, tile_excl, global_excl });
        }
        for &tile in order {
            let st = &states[tile];
            let mut gbase = vec![0u32; RADIX];
            for d in 0..RADIX {
                let mut prefix = 0u32;
                if tile > 0 {
                    let mut pred = tile - 1;
                    loop {
                        let s = status[pred * RADIX + d];
                        assert_ne!(s, 0, "every tile has published");
                        if s & ST_PREFIX != 0 {
                            prefix += s & !ST_PREFIX;
                            break;
                        }
                        prefix += s - 1;
                        pred -= 1;
                    }
                    status[tile * RADIX + d] = ST_PREFIX | (prefix + st.total[d]);
                }
                gbase[d] = st.global_excl[d].wrapping_add(prefix).wrapping_sub(st.tile_excl[d]);
            }
            // Staging and scatter.
            let mut stage: Vec<Option<(u64, u64)>> = vec![None; TILE];
            for local in 0..TILE {
                let idx = tile * TILE + local;
                if idx < n {
                    let (warp, d) = (local / WARP_TILE, digit(kin[idx]));
                    let p = (st.wcount[warp * RADIX + d] + st.tile_excl[d] + st.rank[local]) as usize;
                    assert!(stage[p].is_none(), "two keys staged at {p}");
                    stage[p] = Some((kin[idx], vin[idx]));
                }
            }
            let valid = n.min((tile + 1) * TILE) - tile * TILE;
            for (j, staged) in stage.iter().enumerate().take(valid) {
                let (k, v) = staged.expect("the staged keys fill the tile's first `valid` places");
                let dst = gbase[digit(k)].wrapping_add(j as u32) as usize;
                kout[dst] = k;
                vout[dst] = v;
            }
        }
    }

    fn emulate_sort<K: Raw>(keys: &[K], seed: u64) -> (Vec<K>, Vec<u64>) {
        let n = keys.len();
        let mut k: Vec<u64> = keys.iter().map(|k| k.raw()).collect();
        let mut v: Vec<u64> = (0..n as u64).collect();
        let mut k2 = vec![u64::MAX; n];
        let mut v2 = vec![u64::MAX; n];
        let hist = emulate_histogram(&k, K::BITS, K::TRANSFORM);
        let passes = K::BITS as usize / 8;
        let mut s = seed;
        for pass in 0..passes {
            let mut order: Vec<usize> = (0..tiles_for(n)).collect();
            for i in (1..order.len()).rev() {
                order.swap(i, splitmix(&mut s) as usize % (i + 1));
            }
            let h = &hist[pass * RADIX..(pass + 1) * RADIX];
            if reads_caller(pass) {
                emulate_pass(&k, &v, &mut k2, &mut v2, h, K::BITS, K::TRANSFORM, 8 * pass as u32, &order);
            } else {
                emulate_pass(&k2, &v2, &mut k, &mut v, h, K::BITS, K::TRANSFORM, 8 * pass as u32, &order);
            }
        }
        (k.into_iter().map(K::from_raw).collect(), v)
    }

    fn check_emulation<K: Raw>(keys: Vec<K>, seed: u64) {
        let mut want_k = keys.clone();
        let mut want_v: Vec<u64> = (0..keys.len() as u64).collect();
        CpuPrims.sort_pairs(&mut want_k, &mut want_v).unwrap();
        let (got_k, got_v) = emulate_sort(&keys, seed);
        let bits = |xs: &[K]| xs.iter().map(|k| k.raw()).collect::<Vec<_>>();
        assert_eq!(bits(&got_k), bits(&want_k), "{} keys, n = {}", K::NAME, keys.len());
        assert_eq!(got_v, want_v, "{} values, n = {}", K::NAME, keys.len());
    }

    fn random<K: Raw>(n: usize, seed: u64) -> Vec<K> {
        let mut s = seed;
        (0..n).map(|_| K::from_raw(splitmix(&mut s))).collect()
    }

    #[test]
    fn emulated_kernels_sort_like_the_cpu() {
        for (i, n) in [2usize, 31, 33, 4096, 4097, 3 * 4096 + 1000].into_iter().enumerate() {
            let seed = 11 + i as u64;
            check_emulation(random::<u32>(n, seed), seed);
            check_emulation(random::<f32>(n, seed), seed);
            check_emulation(random::<i64>(n, seed), seed);
        }
        let n = 5 * 4096 + 123;
        check_emulation(random::<f64>(n, 1), 1);
        check_emulation(random::<i32>(n, 2), 2);
        check_emulation(random::<u64>(n, 3), 3);
    }

    #[test]
    fn emulated_kernels_handle_adversarial_keys() {
        let n = 3 * 4096 + 77;
        // All equal: every pass trivial; stability shows in the values.
        check_emulation(vec![5u32; n], 1);
        check_emulation(vec![-1.5f64; n], 2);
        // Few distinct values: some passes trivial, others not.
        check_emulation((0..n).map(|i| (i % 3) as u32 * 0x0100_0000).collect(), 3);
        check_emulation((0..n).map(|i| (i % 5) as i32 - 2).collect(), 4);
        // Sorted and reversed.
        check_emulation((0..n as u32).collect(), 5);
        check_emulation((0..n as u64).rev().collect(), 6);
        // Float specials, repeated so that equal keys cross tiles.
        let sp = [0.0f32, -0.0, f32::INFINITY, f32::NEG_INFINITY, f32::NAN, -f32::NAN, 1.0, -1.0, f32::MIN_POSITIVE];
        check_emulation((0..n).map(|i| sp[i % sp.len()]).collect(), 7);
        // Half the keys equal, half random: long runs of one digit.
        let mut s = 9;
        check_emulation((0..n).map(|i| if i % 2 == 0 { 77u32 } else { splitmix(&mut s) as u32 }).collect(), 8);
    }

    #[test]
    fn emulated_histogram_counts_every_digit() {
        for n in [0usize, 1, 3, 4, 5, 127, 128, 129, 5000] {
            let keys: Vec<u64> = random::<u32>(n, n as u64).iter().map(|k| k.raw()).collect();
            let h = emulate_histogram(&keys, 32, 0);
            for p in 0..4 {
                let mut want = vec![0u32; RADIX];
                for &k in &keys {
                    want[(k >> (8 * p)) as usize & 255] += 1;
                }
                assert_eq!(&h[p * RADIX..(p + 1) * RADIX], &want[..], "n = {n}, pass {p}");
            }
            let sorted: Vec<u64> = (0..n as u64).map(|i| i / 40).collect();
            let h = emulate_histogram(&sorted, 64, 0);
            assert_eq!(h[0..RADIX].iter().sum::<u32>() as usize, n);
            assert_eq!(h[7 * RADIX] as usize, n);
        }
    }
}
