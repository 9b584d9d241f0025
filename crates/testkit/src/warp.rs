//! Host harness for the warp-level functions of `warp.cuh`, and CPU
//! reference versions of them.
//!
//! [`WarpHarness`] runs each warp function over a buffer of `n = 32·k`
//! lanes in one launch (lane `g` of the launch holds element `g`, warp `w`
//! is elements `32w .. 32w+32`) and returns what every lane ended with.
//! [`reference`](mod@reference) computes the same thing on the CPU, warp by warp; where the
//! result depends on the order of floating-point additions (reductions,
//! scans) the reference follows the kernels' order (butterfly, Hillis–Steele),
//! so it differs from the GPU by rounding at most.
//!
//! The test kernels live in `kernels/warp_test.cu`, compiled once per
//! element type (`TESTKIT_WARP_ELEM`).
//!
//! ```no_run
//! # fn main() -> warpmc_prims::Result<()> {
//! use warpmc_testkit::warp::{WarpHarness, reference};
//! use warpmc_prims::Op;
//! let h = WarpHarness::new(warpmc_gpu::Gpu::open_default()?);
//! let x: Vec<u32> = (0..64).collect();
//! assert_eq!(h.inclusive_scan(&x, Op::Sum)?, reference::inclusive_scan(&x, Op::Sum));
//! # Ok(()) }
//! ```

use warpmc_gpu::{Gpu, Kernel, KernelSource, LaunchConfig, grid_1d};

use warpmc_prims::{CudaPrims, Element, Op, PrimsError, Result, SortKey, kernels};

/// An [`PrimsError::InvalidArgument`] unless `ok`.
fn ensure(ok: bool, message: impl FnOnce() -> String) -> Result<()> {
    if ok { Ok(()) } else { Err(PrimsError::InvalidArgument(message())) }
}

/// Lanes per warp.
pub const WARP: usize = 32;

/// Threads per block of the test launches (4 warps).
const BLOCK: u32 = 128;

/// The largest structure (in words) the structure-exchange kernels are
/// instantiated for.
pub const MAX_STRUCT_WORDS: usize = 8;

/// The test-kernel source for element type `T`.
pub fn source<T: Element>() -> KernelSource {
    kernels::with_warp_header(
        KernelSource::new("warp_test.cu", include_str!("../kernels/warp_test.cu"))
            .option(format!("-DTESTKIT_WARP_ELEM={}", T::CUDA))
            .option(format!("-DTESTKIT_WARP_MAX_STRUCT_WORDS={MAX_STRUCT_WORDS}")),
    )
}

/// The warp test-kernel sources, one per element type, for compile checks.
pub fn sources() -> Vec<KernelSource> {
    vec![source::<i32>(), source::<u32>(), source::<i64>(), source::<u64>(), source::<f32>(), source::<f64>()]
}

/// Both results of `warp_exclusive_scan`.
#[derive(Clone, Debug, PartialEq)]
pub struct ExclusiveScan<T> {
    /// From `warp_exclusive_scan(x, op)`.
    pub values: Vec<T>,
    /// From `warp_exclusive_scan(x, op, &total)` (must equal `values`).
    pub values_with_total: Vec<T>,
    /// The `total` every lane got: its warp's reduction.
    pub totals: Vec<T>,
}

/// What `warp_compact` produced.
#[derive(Clone, Debug, PartialEq)]
pub struct Compacted<T> {
    /// Warp `w` compacts into `values[32w ..]`; the slots past its count
    /// keep their initial zeros.
    pub values: Vec<T>,
    /// Every lane's slot (selected lanes below it), selected or not.
    pub slots: Vec<u32>,
    /// Each warp's count of selected lanes.
    pub counts: Vec<u32>,
}

/// What `warp_append` produced.
#[derive(Clone, Debug, PartialEq)]
pub struct Appended<T> {
    /// The appended values, as long as the final counter.
    pub values: Vec<T>,
    /// `sources[i]`: the lane (index into the input) that wrote `values[i]`.
    pub sources: Vec<u32>,
}

/// Runs the functions of `warp.cuh` on a device, one launch per call.
#[derive(Clone, Debug)]
pub struct WarpHarness {
    gpu: Gpu,
}

impl WarpHarness {
    /// A harness on `gpu`.
    pub fn new(gpu: Gpu) -> Self {
        WarpHarness { gpu }
    }

    /// A harness on the device of `prims`.
    pub fn from_prims(prims: &CudaPrims) -> Self {
        Self::new(prims.gpu().clone())
    }

    /// The device.
    pub fn gpu(&self) -> &Gpu {
        &self.gpu
    }

    /// `kernel` of the module for `T` (compiled on first use; the `Gpu`
    /// caches modules).
    fn kernel<T: Element>(&self, kernel: &str) -> Result<Kernel> {
        Ok(self.gpu.module(&source::<T>())?.kernel(kernel)?)
    }

    /// `x[g]` → `out[g]` through `kernel(const T* x, T* out, [unsigned
    /// scalar,] unsigned nwarps)`.
    fn map<T: Element>(&self, kernel: &str, x: &[T], scalar: Option<u32>) -> Result<Vec<T>> {
        let nwarps = warps(x.len())?;
        if nwarps == 0 {
            return Ok(Vec::new());
        }
        let k = self.kernel::<T>(kernel)?;
        let xd = self.gpu.upload(x)?;
        let mut out = self.gpu.alloc_zeros::<T>(x.len())?;
        let launch = self.gpu.launch(&k).buf(&xd).buf_mut(&mut out);
        let launch = match &scalar {
            Some(s) => launch.arg(s),
            None => launch,
        };
        // SAFETY: the kernel takes (const T*, T*, [unsigned,] unsigned) as
        // pushed; it touches elements g < 32·nwarps = x.len() of both
        // buffers and returns in whole warps past that.
        unsafe { launch.arg(&nwarps).run(config(nwarps))? };
        Ok(self.gpu.download(&out)?)
    }

    /// `shfl(x, src[g])` in every lane `g` (`src` taken modulo 32).
    pub fn shfl<T: Element>(&self, x: &[T], src: &[u32]) -> Result<Vec<T>> {
        let nwarps = warps(x.len())?;
        ensure(src.len() == x.len(), || format!("shfl: {} source lanes for {} lanes", src.len(), x.len()))?;
        if nwarps == 0 {
            return Ok(Vec::new());
        }
        let k = self.kernel::<T>("shfl_idx")?;
        let xd = self.gpu.upload(x)?;
        let sd = self.gpu.upload(src)?;
        let mut out = self.gpu.alloc_zeros::<T>(x.len())?;
        // SAFETY: shfl_idx(const T*, const unsigned*, T*, unsigned), each
        // buffer x.len() long, elements g < 32·nwarps only.
        unsafe { self.gpu.launch(&k).buf(&xd).buf(&sd).buf_mut(&mut out).arg(&nwarps).run(config(nwarps))? };
        Ok(self.gpu.download(&out)?)
    }

    /// `shfl_up(x, delta)` (`delta < 32`).
    pub fn shfl_up<T: Element>(&self, x: &[T], delta: u32) -> Result<Vec<T>> {
        ensure(delta < 32, || format!("shfl_up: delta {delta} is not below 32"))?;
        self.map("shfl_up", x, Some(delta))
    }

    /// `shfl_down(x, delta)` (`delta < 32`).
    pub fn shfl_down<T: Element>(&self, x: &[T], delta: u32) -> Result<Vec<T>> {
        ensure(delta < 32, || format!("shfl_down: delta {delta} is not below 32"))?;
        self.map("shfl_down", x, Some(delta))
    }

    /// `shfl_xor(x, lane_mask)` (`lane_mask < 32`).
    pub fn shfl_xor<T: Element>(&self, x: &[T], lane_mask: u32) -> Result<Vec<T>> {
        ensure(lane_mask < 32, || format!("shfl_xor: lane mask {lane_mask} is not below 32"))?;
        self.map("shfl_xor", x, Some(lane_mask))
    }

    /// `broadcast(x, src[w])` in every lane of warp `w` (`src` has one
    /// lane below 32 per warp).
    pub fn broadcast<T: Element>(&self, x: &[T], src: &[u32]) -> Result<Vec<T>> {
        let nwarps = warps(x.len())?;
        ensure(src.len() == nwarps as usize, || format!("broadcast: {} source lanes for {nwarps} warps", src.len()))?;
        ensure(src.iter().all(|&s| s < 32), || "broadcast: a source lane is not below 32".into())?;
        if nwarps == 0 {
            return Ok(Vec::new());
        }
        let k = self.kernel::<T>("broadcast")?;
        let xd = self.gpu.upload(x)?;
        let sd = self.gpu.upload(src)?;
        let mut out = self.gpu.alloc_zeros::<T>(x.len())?;
        // SAFETY: broadcast(const T*, const unsigned*, T*, unsigned); x and
        // out are 32·nwarps long, src nwarps long, read at g / 32.
        unsafe { self.gpu.launch(&k).buf(&xd).buf(&sd).buf_mut(&mut out).arg(&nwarps).run(config(nwarps))? };
        Ok(self.gpu.download(&out)?)
    }

    /// `broadcast_last(x, pred, &found)`: every lane's result, and each
    /// warp's `found`. An error if the lanes of a warp disagree on `found`.
    pub fn broadcast_last<T: Element>(&self, x: &[T], pred: &[bool]) -> Result<(Vec<T>, Vec<bool>)> {
        let nwarps = warps(x.len())?;
        ensure(pred.len() == x.len(), || format!("broadcast_last: {} predicates for {} lanes", pred.len(), x.len()))?;
        if nwarps == 0 {
            return Ok((Vec::new(), Vec::new()));
        }
        let k = self.kernel::<T>("broadcast_last")?;
        let xd = self.gpu.upload(x)?;
        let pd = self.gpu.upload(&flags(pred))?;
        let mut out = self.gpu.alloc_zeros::<T>(x.len())?;
        let mut found = self.gpu.alloc_zeros::<u32>(nwarps as usize)?;
        // SAFETY: broadcast_last(const T*, const unsigned*, T*, unsigned*,
        // unsigned); x, pred and out are 32·nwarps long, found nwarps long
        // (indexed g / 32).
        unsafe {
            self.gpu
                .launch(&k)
                .buf(&xd)
                .buf(&pd)
                .buf_mut(&mut out)
                .buf_mut(&mut found)
                .arg(&nwarps)
                .run(config(nwarps))?
        };
        let found = self.gpu.download(&found)?;
        // Each lane ORs in 1 for "not found", 2 for "found".
        let found = found
            .iter()
            .enumerate()
            .map(|(w, &f)| match f {
                1 => Ok(false),
                2 => Ok(true),
                _ => Err(PrimsError::InvalidArgument(format!(
                    "broadcast_last: the lanes of warp {w} disagree on found (code {f})"
                ))),
            })
            .collect::<Result<Vec<bool>>>()?;
        Ok((self.gpu.download(&out)?, found))
    }

    /// `warp_reduce(x, op)`: every lane's result (all lanes of a warp
    /// should hold the warp's reduction).
    pub fn reduce<T: Element>(&self, x: &[T], op: Op) -> Result<Vec<T>> {
        self.map(&format!("reduce_{}", op.name()), x, None)
    }

    /// `warp_inclusive_scan(x, op)`.
    pub fn inclusive_scan<T: Element>(&self, x: &[T], op: Op) -> Result<Vec<T>> {
        self.map(&format!("inclusive_scan_{}", op.name()), x, None)
    }

    /// Both overloads of `warp_exclusive_scan(x, op)`.
    pub fn exclusive_scan<T: Element>(&self, x: &[T], op: Op) -> Result<ExclusiveScan<T>> {
        let nwarps = warps(x.len())?;
        if nwarps == 0 {
            return Ok(ExclusiveScan { values: Vec::new(), values_with_total: Vec::new(), totals: Vec::new() });
        }
        let k = self.kernel::<T>(&format!("exclusive_scan_{}", op.name()))?;
        let xd = self.gpu.upload(x)?;
        let mut out = self.gpu.alloc_zeros::<T>(x.len())?;
        let mut out_t = self.gpu.alloc_zeros::<T>(x.len())?;
        let mut totals = self.gpu.alloc_zeros::<T>(x.len())?;
        // SAFETY: exclusive_scan_<op>(const T*, T*, T*, T*, unsigned), every
        // buffer 32·nwarps long.
        unsafe {
            self.gpu
                .launch(&k)
                .buf(&xd)
                .buf_mut(&mut out)
                .buf_mut(&mut out_t)
                .buf_mut(&mut totals)
                .arg(&nwarps)
                .run(config(nwarps))?
        };
        Ok(ExclusiveScan {
            values: self.gpu.download(&out)?,
            values_with_total: self.gpu.download(&out_t)?,
            totals: self.gpu.download(&totals)?,
        })
    }

    /// `warp_inclusive_scan_pred(x)`: the inclusive sum scan with the
    /// shuffle's predicate.
    pub fn scan_pred<T: Element>(&self, x: &[T]) -> Result<Vec<T>> {
        self.map("scan_pred", x, None)
    }

    /// `bitonic_sort(key)`: each warp's keys, ascending.
    pub fn bitonic_sort<K: SortKey>(&self, keys: &[K]) -> Result<Vec<K>> {
        self.map("bitonic_sort", keys, None)
    }

    /// `bitonic_sort_pairs(key, value)`.
    pub fn bitonic_sort_pairs<K: SortKey, V: Element>(&self, keys: &[K], values: &[V]) -> Result<(Vec<K>, Vec<V>)> {
        let nwarps = warps(keys.len())?;
        ensure(values.len() == keys.len(), || {
            format!("bitonic_sort_pairs: {} values for {} keys", values.len(), keys.len())
        })?;
        if nwarps == 0 {
            return Ok((Vec::new(), Vec::new()));
        }
        let k = self.kernel::<K>(&format!("bitonic_sort_pairs_{}", V::NAME))?;
        let kd = self.gpu.upload(keys)?;
        let vd = self.gpu.upload(values)?;
        let mut ko = self.gpu.alloc_zeros::<K>(keys.len())?;
        let mut vo = self.gpu.alloc_zeros::<V>(keys.len())?;
        // SAFETY: bitonic_sort_pairs_<V>(const K*, const V*, K*, V*,
        // unsigned), every buffer 32·nwarps long.
        unsafe {
            self.gpu.launch(&k).buf(&kd).buf(&vd).buf_mut(&mut ko).buf_mut(&mut vo).arg(&nwarps).run(config(nwarps))?
        };
        Ok((self.gpu.download(&ko)?, self.gpu.download(&vo)?))
    }

    /// Runs `kernel(const T* input, T* output, unsigned nwarps)` of the
    /// structure exchange for structures of `m` words.
    fn structs<T: Element>(&self, kernel: &str, m: usize, input: &[T]) -> Result<Vec<T>> {
        ensure((1..=MAX_STRUCT_WORDS).contains(&m), || {
            format!("{kernel}: structures of {m} words (1..={MAX_STRUCT_WORDS} supported)")
        })?;
        ensure(input.len().is_multiple_of(WARP * m), || {
            format!("{kernel}: {} words is not whole warps of {m}-word structures", input.len())
        })?;
        let nwarps = warps(input.len() / m)?;
        if nwarps == 0 {
            return Ok(Vec::new());
        }
        let k = self.kernel::<T>(&format!("{kernel}_m{m}"))?;
        let id = self.gpu.upload(input)?;
        let mut out = self.gpu.alloc_zeros::<T>(input.len())?;
        // SAFETY: <kernel>_m<m>(const T*, T*, unsigned); both buffers hold
        // 32·nwarps structures of m words, and warp w touches only its own
        // 32·m words (or, in the SoA view, index i·n + g for i < m, g < n).
        unsafe { self.gpu.launch(&k).buf(&id).buf_mut(&mut out).arg(&nwarps).run(config(nwarps))? };
        Ok(self.gpu.download(&out)?)
    }

    /// `warp_load_structs::<m>`: loads the structures of `m` words in `aos`
    /// (32 per warp) and returns what each lane ended with, as a structure
    /// of arrays: `soa[i·n + g]` is word `i` of lane `g`'s registers, with
    /// `n = aos.len() / m` (see [`reference::aos_to_soa`]).
    pub fn load_structs<T: Element>(&self, m: usize, aos: &[T]) -> Result<Vec<T>> {
        self.structs("load_structs", m, aos)
    }

    /// `warp_store_structs::<m>`: lane `g` holds word `i` = `soa[i·n + g]`
    /// of its structure and the warp stores the structures; returns the
    /// array of structures.
    pub fn store_structs<T: Element>(&self, m: usize, soa: &[T]) -> Result<Vec<T>> {
        self.structs("store_structs", m, soa)
    }

    /// `warp_load_structs::<m>` then `warp_store_structs::<m>`, registers
    /// only in between: should give `aos` back.
    pub fn roundtrip_structs<T: Element>(&self, m: usize, aos: &[T]) -> Result<Vec<T>> {
        self.structs("roundtrip_structs", m, aos)
    }

    /// `warp_compact(x, pred, out + 32w)` in every warp `w`.
    pub fn compact<T: Element>(&self, x: &[T], pred: &[bool]) -> Result<Compacted<T>> {
        let nwarps = warps(x.len())?;
        ensure(pred.len() == x.len(), || format!("compact: {} predicates for {} lanes", pred.len(), x.len()))?;
        if nwarps == 0 {
            return Ok(Compacted { values: Vec::new(), slots: Vec::new(), counts: Vec::new() });
        }
        let k = self.kernel::<T>("compact")?;
        let xd = self.gpu.upload(x)?;
        let pd = self.gpu.upload(&flags(pred))?;
        let mut out = self.gpu.alloc_zeros::<T>(x.len())?;
        let mut slots = self.gpu.alloc_zeros::<u32>(x.len())?;
        let mut counts = self.gpu.alloc_zeros::<u32>(nwarps as usize)?;
        // SAFETY: compact(const T*, const unsigned*, T*, unsigned*,
        // unsigned*, unsigned); x, pred, out and slots are 32·nwarps long
        // (warp w writes out[32w + slot], slot < 32), counts nwarps long.
        unsafe {
            self.gpu
                .launch(&k)
                .buf(&xd)
                .buf(&pd)
                .buf_mut(&mut out)
                .buf_mut(&mut slots)
                .buf_mut(&mut counts)
                .arg(&nwarps)
                .run(config(nwarps))?
        };
        Ok(Compacted {
            values: self.gpu.download(&out)?,
            slots: self.gpu.download(&slots)?,
            counts: self.gpu.download(&counts)?,
        })
    }

    /// `warp_append(out, counter, x, pred)` in every lane, all warps
    /// appending to one list.
    pub fn append<T: Element>(&self, x: &[T], pred: &[bool]) -> Result<Appended<T>> {
        let nwarps = warps(x.len())?;
        ensure(pred.len() == x.len(), || format!("append: {} predicates for {} lanes", pred.len(), x.len()))?;
        if nwarps == 0 {
            return Ok(Appended { values: Vec::new(), sources: Vec::new() });
        }
        let k = self.kernel::<T>("append")?;
        let xd = self.gpu.upload(x)?;
        let pd = self.gpu.upload(&flags(pred))?;
        let mut out = self.gpu.alloc_zeros::<T>(x.len())?;
        let mut src = self.gpu.alloc_zeros::<u32>(x.len())?;
        let mut counter = self.gpu.alloc_zeros::<u32>(1)?;
        // SAFETY: append(const T*, const unsigned*, T*, unsigned*, unsigned*,
        // unsigned); at most x.len() lanes append, so the indices handed
        // out by the counter (starting at 0) stay below x.len(), the
        // length of out and src; counter is one element.
        unsafe {
            self.gpu
                .launch(&k)
                .buf(&xd)
                .buf(&pd)
                .buf_mut(&mut out)
                .buf_mut(&mut src)
                .buf_mut(&mut counter)
                .arg(&nwarps)
                .run(config(nwarps))?
        };
        let count = self.gpu.download(&counter)?[0] as usize;
        ensure(count <= x.len(), || format!("append: counter {count} beyond {} lanes", x.len()))?;
        let mut values = self.gpu.download(&out)?;
        let mut sources = self.gpu.download(&src)?;
        values.truncate(count);
        sources.truncate(count);
        Ok(Appended { values, sources })
    }
}

/// The number of warps in `n` lanes, which must be whole warps.
fn warps(n: usize) -> Result<u32> {
    ensure(n.is_multiple_of(WARP), || format!("{n} lanes is not a whole number of warps"))?;
    u32::try_from(n / WARP).map_err(|_| PrimsError::InvalidArgument(format!("{n} lanes is too many for one launch")))
}

fn config(nwarps: u32) -> LaunchConfig {
    grid_1d(nwarps as usize * WARP, BLOCK)
}

fn flags(pred: &[bool]) -> Vec<u32> {
    pred.iter().map(|&p| u32::from(p)).collect()
}

/// CPU versions of the warp functions, warp by warp over slices of whole
/// warps, giving what every lane ends with.
pub mod reference {
    use super::WARP;
    use warpmc_prims::{Element, Op, SortKey};

    fn warps_of<T>(x: &[T]) -> std::slice::Chunks<'_, T> {
        assert!(x.len().is_multiple_of(WARP), "{} lanes is not a whole number of warps", x.len());
        x.chunks(WARP)
    }

    /// `shfl(x, src[g])`: lane `g` gets `x` of lane `src[g] % 32` of its
    /// warp.
    pub fn shfl<T: Copy>(x: &[T], src: &[u32]) -> Vec<T> {
        assert_eq!(x.len(), src.len());
        warps_of(x).zip(src.chunks(WARP)).flat_map(|(w, s)| s.iter().map(move |&l| w[l as usize % WARP])).collect()
    }

    /// `shfl_up(x, delta)`: lane `l` gets lane `l - delta`, lanes below
    /// `delta` keep their own value.
    pub fn shfl_up<T: Copy>(x: &[T], delta: u32) -> Vec<T> {
        let d = delta as usize;
        warps_of(x).flat_map(|w| (0..WARP).map(move |l| if l >= d { w[l - d] } else { w[l] })).collect()
    }

    /// `shfl_down(x, delta)`: lane `l` gets lane `l + delta`, lanes with
    /// `l + delta >= 32` keep their own value.
    pub fn shfl_down<T: Copy>(x: &[T], delta: u32) -> Vec<T> {
        let d = delta as usize;
        warps_of(x).flat_map(|w| (0..WARP).map(move |l| if l + d < WARP { w[l + d] } else { w[l] })).collect()
    }

    /// `shfl_xor(x, lane_mask)`: lane `l` gets lane `l ^ lane_mask`.
    pub fn shfl_xor<T: Copy>(x: &[T], lane_mask: u32) -> Vec<T> {
        let m = lane_mask as usize % WARP;
        warps_of(x).flat_map(|w| (0..WARP).map(move |l| w[l ^ m])).collect()
    }

    /// `broadcast(x, src[w])` in warp `w`.
    pub fn broadcast<T: Copy>(x: &[T], src: &[u32]) -> Vec<T> {
        warps_of(x).zip(src).flat_map(|(w, &s)| std::iter::repeat_n(w[s as usize % WARP], WARP)).collect()
    }

    /// `broadcast_last(x, pred, &found)`: every lane of a warp gets `x` of
    /// the warp's highest lane whose `pred` holds; with none, lanes keep
    /// their own `x` and `found` is false.
    pub fn broadcast_last<T: Copy>(x: &[T], pred: &[bool]) -> (Vec<T>, Vec<bool>) {
        assert_eq!(x.len(), pred.len());
        let mut out = Vec::with_capacity(x.len());
        let mut found = Vec::with_capacity(x.len() / WARP);
        for (w, p) in warps_of(x).zip(pred.chunks(WARP)) {
            match p.iter().rposition(|&b| b) {
                Some(last) => out.extend(std::iter::repeat_n(w[last], WARP)),
                None => out.extend_from_slice(w),
            }
            found.push(p.iter().any(|&b| b));
        }
        (out, found)
    }

    /// `warp_reduce(x, op)` in the kernel's order: a butterfly where lane
    /// `l` computes `op(own, lane l ^ mask)` for masks 16, 8, 4, 2, 1.
    pub fn reduce<T: Element>(x: &[T], op: Op) -> Vec<T> {
        let mut out = Vec::with_capacity(x.len());
        for w in warps_of(x) {
            let mut v = w.to_vec();
            let mut mask = WARP / 2;
            while mask > 0 {
                v = (0..WARP).map(|l| T::combine(op, v[l], v[l ^ mask])).collect();
                mask /= 2;
            }
            out.extend(v);
        }
        out
    }

    /// `warp_inclusive_scan(x, op)` in the kernel's order (Hillis–Steele:
    /// for offsets 1, 2, 4, 8, 16, lane `l >= offset` computes
    /// `op(lane l - offset, own)`).
    pub fn inclusive_scan<T: Element>(x: &[T], op: Op) -> Vec<T> {
        let mut out = Vec::with_capacity(x.len());
        for w in warps_of(x) {
            let mut v = w.to_vec();
            let mut offset = 1;
            while offset < WARP {
                v = (0..WARP).map(|l| if l >= offset { T::combine(op, v[l - offset], v[l]) } else { v[l] }).collect();
                offset *= 2;
            }
            out.extend(v);
        }
        out
    }

    /// `warp_exclusive_scan(x, op, &total)`: the exclusive scan (the
    /// inclusive one moved up a lane, the identity in lane 0) and every
    /// lane's `total` (lane 31's inclusive value).
    pub fn exclusive_scan<T: Element>(x: &[T], op: Op) -> (Vec<T>, Vec<T>) {
        let inclusive = inclusive_scan(x, op);
        let mut values = Vec::with_capacity(x.len());
        let mut totals = Vec::with_capacity(x.len());
        for w in warps_of(&inclusive) {
            values.push(T::identity(op));
            values.extend_from_slice(&w[..WARP - 1]);
            totals.extend(std::iter::repeat_n(w[WARP - 1], WARP));
        }
        (values, totals)
    }

    /// `warp_inclusive_scan_pred(x)`: the inclusive sum scan, same order.
    pub fn scan_pred<T: Element>(x: &[T]) -> Vec<T> {
        inclusive_scan(x, Op::Sum)
    }

    /// `bitonic_sort(key)`: each warp's keys in ascending
    /// [`SortKey::radix_bits`] order (IEEE total order for floats). Keys of
    /// equal order have equal bits, so this is the network's exact output.
    pub fn bitonic_sort<K: SortKey>(keys: &[K]) -> Vec<K> {
        let mut out = keys.to_vec();
        assert!(out.len().is_multiple_of(WARP), "{} lanes is not a whole number of warps", out.len());
        for w in out.chunks_mut(WARP) {
            w.sort_by_key(|k| k.radix_bits());
        }
        out
    }

    /// `bitonic_sort_pairs(key, value)`: the kernel's network simulated on
    /// 32 lanes per warp, so pairs with equal keys come out in the
    /// network's (unstable) order, exactly as on the GPU.
    pub fn bitonic_sort_pairs<K: SortKey, V: Copy>(keys: &[K], values: &[V]) -> (Vec<K>, Vec<V>) {
        assert_eq!(keys.len(), values.len());
        let mut ko = Vec::with_capacity(keys.len());
        let mut vo = Vec::with_capacity(keys.len());
        for (kw, vw) in warps_of(keys).zip(values.chunks(WARP)) {
            let mut k = kw.to_vec();
            let mut v = vw.to_vec();
            let mut size = 2;
            while size <= WARP {
                let mut stride = size / 2;
                while stride > 0 {
                    let (k0, v0) = (k.clone(), v.clone());
                    for l in 0..WARP {
                        let p = l ^ stride;
                        let keeps_max = (l & size != 0) != (l & stride != 0);
                        let (own, other) = (k0[l].radix_bits(), k0[p].radix_bits());
                        let take = if keeps_max { own < other } else { other < own };
                        if take {
                            k[l] = k0[p];
                            v[l] = v0[p];
                        }
                    }
                    stride /= 2;
                }
                size *= 2;
            }
            ko.extend(k);
            vo.extend(v);
        }
        (ko, vo)
    }

    /// Array of structures of `m` words to structure of arrays:
    /// `soa[i·n + g] = aos[g·m + i]`, `n = aos.len() / m`. This is what
    /// `warp_load_structs` leaves in the registers (lane `g` holds structure
    /// `g`), written out by register.
    pub fn aos_to_soa<T: Copy>(m: usize, aos: &[T]) -> Vec<T> {
        assert!(m > 0 && aos.len().is_multiple_of(m));
        let n = aos.len() / m;
        (0..m).flat_map(|i| (0..n).map(move |g| aos[g * m + i])).collect()
    }

    /// The inverse of [`aos_to_soa`]: what `warp_store_structs` writes when
    /// lane `g` holds word `i` = `soa[i·n + g]`.
    pub fn soa_to_aos<T: Copy>(m: usize, soa: &[T]) -> Vec<T> {
        assert!(m > 0 && soa.len().is_multiple_of(m));
        let n = soa.len() / m;
        (0..n).flat_map(|g| (0..m).map(move |i| soa[i * n + g])).collect()
    }

    /// What `warp_compact` gives: per warp, the selected values in lane
    /// order from `values[32w]` (zeros after them), every lane's slot, and
    /// each warp's count.
    pub fn compact<T: Element>(x: &[T], pred: &[bool]) -> super::Compacted<T> {
        assert_eq!(x.len(), pred.len());
        let mut values = vec![T::default(); x.len()];
        let mut slots = Vec::with_capacity(x.len());
        let mut counts = Vec::with_capacity(x.len() / WARP);
        for (w, (xw, pw)) in warps_of(x).zip(pred.chunks(WARP)).enumerate() {
            let mut count = 0u32;
            for (&v, &p) in xw.iter().zip(pw) {
                slots.push(count);
                if p {
                    values[w * WARP + count as usize] = v;
                    count += 1;
                }
            }
            counts.push(count);
        }
        super::Compacted { values, slots, counts }
    }

    // ---- a model of the register-transpose schedule -------------------
    //
    // The functions below follow warp_c2r / warp_r2c of warp.cuh step by
    // step over 32 simulated lanes (lanes[l][j] is register j of lane l),
    // with the same index arithmetic, so tests on the CPU check the
    // schedule itself.

    /// gcd(m, 32).
    pub fn gcd_with_warp(m: usize) -> usize {
        let low = m & m.wrapping_neg();
        low.min(WARP)
    }

    /// Where step 1 of c2r puts register `j` before the lane rotation:
    /// `(32j + floor(j·g/m)) mod m`.
    pub fn transpose_sigma(m: usize, j: usize) -> usize {
        (WARP * j + j * gcd_with_warp(m) / m) % m
    }

    /// The inverse of [`transpose_sigma`], computed as the kernel does.
    pub fn transpose_sigma_inv(m: usize, x: usize) -> usize {
        let g = gcd_with_warp(m);
        let mg = m / g;
        let q = (WARP / g) % mg;
        let inv = (0..mg).find(|v| (q * v) % mg == 1 % mg).unwrap_or(0);
        let t = x % g;
        let u = ((x / g) * inv) % mg;
        u + mg * t
    }

    /// `r[(j + a) mod m] = old r[j]`, as the kernel's barrel shifter does
    /// it: one conditional rotation by each power of two below `m`.
    pub fn rotate_right<W: Copy>(r: &mut [W], a: usize) {
        let m = r.len();
        let mut b = 1;
        while b < m {
            if a & b != 0 {
                let old = r.to_vec();
                for j in 0..m {
                    r[j] = old[(j + m - b) % m];
                }
            }
            b <<= 1;
        }
    }

    /// One shuffle step: lane `l` gets register `c` of lane `src(l)`.
    fn shuffle_row<W: Copy>(lanes: &mut [Vec<W>], from: &[Vec<W>], c: usize, src: impl Fn(usize) -> usize) {
        for (l, lane) in lanes.iter_mut().enumerate() {
            lane[c] = from[src(l) % WARP][c];
        }
    }

    /// warp_c2r on 32 simulated lanes of `m` registers: from lane `s`,
    /// register `j` holding word `s + 32j` to lane `l`, register `i`
    /// holding word `l·m + i`. Returns the number of shuffles used.
    pub fn c2r_model<W: Copy>(lanes: &mut [Vec<W>]) -> usize {
        assert_eq!(lanes.len(), WARP);
        let m = lanes[0].len();
        let g = gcd_with_warp(m);
        // Step 1.
        let mut u: Vec<Vec<W>> = lanes.to_vec();
        for (s, ul) in u.iter_mut().enumerate() {
            let r = lanes[s].clone();
            for (j, &w) in r.iter().enumerate() {
                ul[transpose_sigma(m, j)] = w;
            }
            rotate_right(ul, s % m);
        }
        // Step 2.
        let t = |l: usize| if g == 1 { 0 } else { l / (WARP / g) };
        for c in 0..m {
            shuffle_row(lanes, &u, c, |l| l * m + (c + m - t(l)) % m);
        }
        // Step 3.
        if g > 1 {
            for (l, r) in lanes.iter_mut().enumerate() {
                rotate_right(r, (m - t(l)) % m);
            }
        }
        m
    }

    /// warp_r2c on 32 simulated lanes: the inverse of [`c2r_model`].
    /// Returns the number of shuffles used.
    pub fn r2c_model<W: Copy>(lanes: &mut [Vec<W>]) -> usize {
        assert_eq!(lanes.len(), WARP);
        let m = lanes[0].len();
        let g = gcd_with_warp(m);
        if g > 1 {
            for (l, r) in lanes.iter_mut().enumerate() {
                rotate_right(r, l / (WARP / g));
            }
        }
        let from = lanes.to_vec();
        for c in 0..m {
            shuffle_row(lanes, &from, c, |s| (s + WARP * transpose_sigma_inv(m, (c + m - s % m) % m)) / m);
        }
        for (s, r) in lanes.iter_mut().enumerate() {
            rotate_right(r, (m - s % m) % m);
            let u = r.clone();
            for (j, w) in r.iter_mut().enumerate() {
                *w = u[transpose_sigma(m, j)];
            }
        }
        m
    }
}

#[cfg(test)]
mod tests {
    use super::reference as r;
    use warpmc_prims::Op;

    fn iota(n: u32) -> Vec<u32> {
        (0..n).collect()
    }

    #[test]
    fn reference_shuffles() {
        let x = iota(64);
        let up = r::shfl_up(&x, 1);
        assert_eq!(&up[..4], &[0, 0, 1, 2]);
        assert_eq!(&up[32..35], &[32, 32, 33]);
        let down = r::shfl_down(&x, 2);
        assert_eq!(&down[28..34], &[30, 31, 30, 31, 34, 35]);
        let bfly = r::shfl_xor(&x, 1);
        assert_eq!(&bfly[..4], &[1, 0, 3, 2]);
        assert_eq!(bfly[63], 62);
        let src: Vec<u32> = (0..64).map(|g| 31 - g % 32).collect();
        let rev = r::shfl(&x, &src);
        assert_eq!((rev[0], rev[31], rev[32], rev[63]), (31, 0, 63, 32));
        assert_eq!(r::broadcast(&x, &[5, 31]), [vec![5; 32], vec![63; 32]].concat());
    }

    #[test]
    fn reference_broadcast_last() {
        let x = iota(64);
        let mut pred = vec![false; 64];
        pred[3] = true;
        pred[17] = true;
        let (out, found) = r::broadcast_last(&x, &pred);
        assert_eq!(&out[..32], &[17; 32]);
        assert_eq!(&out[32..], &x[32..]);
        assert_eq!(found, [true, false]);
    }

    #[test]
    fn reference_reduce_and_scans() {
        let x: Vec<i32> = (0..32).collect();
        assert_eq!(r::reduce(&x, Op::Sum), vec![496; 32]);
        assert_eq!(r::reduce(&x, Op::Min), vec![0; 32]);
        assert_eq!(r::reduce(&x, Op::Max), vec![31; 32]);
        let ones = vec![1u64; 64];
        let inc = r::inclusive_scan(&ones, Op::Sum);
        assert_eq!(inc, (0..64).map(|g| g % 32 + 1).collect::<Vec<u64>>());
        let (exc, totals) = r::exclusive_scan(&ones, Op::Sum);
        assert_eq!(exc, (0..64).map(|g| g % 32).collect::<Vec<u64>>());
        assert_eq!(totals, vec![32; 64]);
        let (exc_min, _) = r::exclusive_scan(&[7i64; 32], Op::Min);
        assert_eq!(exc_min[0], i64::MAX);
        assert_eq!(exc_min[1], 7);
        // Max scan of a zig-zag.
        let z: Vec<u32> = (0..32).map(|l| if l % 2 == 0 { l } else { 0 }).collect();
        let m = r::inclusive_scan(&z, Op::Max);
        assert_eq!(&m[..5], &[0, 0, 2, 2, 4]);
        // Wrapping sums, NaN-ignoring min.
        assert_eq!(r::reduce(&[u32::MAX; 32], Op::Sum)[0], u32::MAX.wrapping_mul(32));
        let mut f = vec![1.5f32; 32];
        f[4] = f32::NAN;
        f[9] = -2.0;
        assert_eq!(r::reduce(&f, Op::Min), vec![-2.0; 32]);
        assert_eq!(r::scan_pred(&[0.5f64; 32])[31], 16.0);
    }

    #[test]
    fn reference_sorts() {
        let rev: Vec<i32> = (0..32).rev().collect();
        assert_eq!(r::bitonic_sort(&rev), (0..32).collect::<Vec<i32>>());
        let fl = vec![0.0f32, -0.0, f32::INFINITY, -1.0, f32::NAN, -f32::NAN];
        let mut keys = fl.clone();
        keys.resize(32, 2.0);
        let sorted = r::bitonic_sort(&keys);
        assert!(sorted[0].is_nan() && sorted[0].is_sign_negative());
        assert_eq!(sorted[1], -1.0);
        assert!(sorted[2] == 0.0 && sorted[2].is_sign_negative());
        assert!(sorted[3] == 0.0 && sorted[3].is_sign_positive());
        assert!(sorted[31].is_nan() && sorted[31].is_sign_positive());
        assert_eq!(sorted[30], f32::INFINITY);
        // The simulated network sorts and keeps pairs together.
        let keys: Vec<u32> = (0..32).map(|l| (l * 7) % 5).collect();
        let vals: Vec<u32> = (0..32).collect();
        let (k, v) = r::bitonic_sort_pairs(&keys, &vals);
        assert!(k.windows(2).all(|w| w[0] <= w[1]));
        let mut seen = v.clone();
        seen.sort_unstable();
        assert_eq!(seen, vals);
        assert!(k.iter().zip(&v).all(|(&k, &v)| keys[v as usize] == k));
        let (k, v) = r::bitonic_sort_pairs(&rev, &vals);
        assert_eq!(k, (0..32).collect::<Vec<i32>>());
        assert_eq!(v, (0..32).rev().collect::<Vec<u32>>());
    }

    #[test]
    fn reference_struct_layouts() {
        let aos = iota(64);
        let soa = r::aos_to_soa(2, &aos);
        assert_eq!(&soa[..3], &[0, 2, 4]);
        assert_eq!(&soa[32..35], &[1, 3, 5]);
        assert_eq!(r::soa_to_aos(2, &soa), aos);
        let aos3 = iota(96 * 2);
        assert_eq!(r::soa_to_aos(3, &r::aos_to_soa(3, &aos3)), aos3);
    }

    #[test]
    fn reference_compact() {
        let x = iota(64);
        let pred: Vec<bool> = (0..64).map(|g| g % 3 == 0 && g < 40).collect();
        let c = r::compact(&x, &pred);
        assert_eq!(c.counts, [11, 3]);
        assert_eq!(&c.values[..12], &[0, 3, 6, 9, 12, 15, 18, 21, 24, 27, 30, 0]);
        assert_eq!(&c.values[32..36], &[33, 36, 39, 0]);
        assert_eq!(&c.slots[..5], &[0, 1, 1, 1, 2]);
    }

    #[test]
    fn sigma_and_rotation() {
        assert_eq!((0..7).map(|j| r::transpose_sigma(7, j)).collect::<Vec<_>>(), [0, 4, 1, 5, 2, 6, 3]);
        assert_eq!((0..6).map(|j| r::transpose_sigma(6, j)).collect::<Vec<_>>(), [0, 2, 4, 1, 3, 5]);
        for m in 1..=32 {
            for j in 0..m {
                assert_eq!(r::transpose_sigma_inv(m, r::transpose_sigma(m, j)), j, "m = {m}");
            }
            for a in 0..m {
                let mut v: Vec<usize> = (0..m).collect();
                r::rotate_right(&mut v, a);
                assert!((0..m).all(|j| v[(j + a) % m] == j), "m = {m}, a = {a}");
            }
        }
    }
}
