//! Matrix transpose on the GPU and the CPU.
//!
//! A matrix is `rows × cols` elements stored row-major; its transpose is
//! `cols × rows`, row-major. A batch is `batch` matrices of the same shape
//! stored back to back; each is transposed in its own place in the output.
//! Square matrices can also be transposed in place.
//!
//! Elements are moved as raw bits, so any [`Transposable`] type of 1, 2, 4,
//! 8 or 16 bytes works (the kernels are built once per size).
//!
//! The GPU kernels ([`TransposeKernel`]) are those of NVIDIA's transpose
//! study — copy, shared-memory copy, naive, coalesced, conflict-free — made
//! correct for any shape and batch, plus [`TransposeKernel::Best`], the one
//! [`Transpose::transpose`] uses: every thread moves 4-, 8- or 16-byte words
//! and transposes a small block of elements in registers, so that warps
//! read and write 128 to 512 contiguous bytes per instruction whatever the
//! element size. `warpmc bench transpose` measures them all beside the copy
//! kernel.
//!
//! ```
//! use warpmc_prims::CpuPrims;
//! use warpmc_prims::transpose::Transpose;
//!
//! let m = vec![1u16, 2, 3, 4, 5, 6]; // 2 x 3
//! assert_eq!(CpuPrims.transpose(&m, 2, 3).unwrap(), vec![1, 4, 2, 5, 3, 6]);
//! ```

pub(crate) mod cpu;
pub(crate) mod cuda;

use std::fmt::Debug;

use warpmc_gpu::{DeviceRepr, ValidAsZeroBits};

pub use cuda::sources as cuda_sources;

use crate::error::{PrimsError, Result, ensure};

/// An element the transpose can move: plain bits of 1, 2, 4, 8 or 16 bytes
/// (the size is checked when a transpose is called; other sizes are an
/// error).
///
/// # Safety
///
/// The type must have no padding bytes and every bit pattern must be a
/// valid value: the kernels move raw bits, and [`as_bytes`] views
/// elements as bytes.
pub unsafe trait Transposable:
    Copy + Default + Debug + Send + Sync + DeviceRepr + ValidAsZeroBits + 'static
{
    /// Short name for tables (`u8`, `f32`, `b16`, …).
    const NAME: &'static str;
}

macro_rules! transposable {
    ($($t:ty),*) => {$(
        // SAFETY: primitive numbers: no padding, every bit pattern valid.
        unsafe impl Transposable for $t {
            const NAME: &'static str = stringify!($t);
        }
    )*};
}
transposable!(u8, i8, u16, i16, u32, i32, f32, u64, i64, f64);

/// A 16-byte element (four 32-bit words, 16-byte aligned): an RGBA pixel of
/// f32, a complex f64, a small struct — anything of that size moves as one.
#[repr(C, align(16))]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Bytes16(pub [u32; 4]);

// SAFETY: plain old data of 16 bytes with the alignment CUDA's uint4 has;
// every bit pattern (zero included) is a valid value.
unsafe impl DeviceRepr for Bytes16 {}
// SAFETY: as above, all zeros is a valid value.
unsafe impl ValidAsZeroBits for Bytes16 {}

// SAFETY: four u32 and no padding (16 bytes, aligned to 16).
unsafe impl Transposable for Bytes16 {
    const NAME: &'static str = "b16";
}

/// The bytes of `v` (for bitwise comparisons: NaNs compare equal to
/// themselves here, and -0.0 differs from 0.0).
pub fn as_bytes<T: Transposable>(v: &[T]) -> &[u8] {
    // SAFETY: Transposable types have no padding bytes, so every byte of
    // the slice is initialised; u8 has alignment 1.
    unsafe { std::slice::from_raw_parts(v.as_ptr().cast::<u8>(), std::mem::size_of_val(v)) }
}

/// `n` elements whose bits are a fixed pseudo-random function of `seed` and
/// of their index (for tests and benchmarks: every element differs from its
/// neighbours, so a misplaced one shows).
pub fn pseudo_random<T: Transposable>(n: usize, seed: u64) -> Vec<T> {
    use rayon::prelude::*;
    let mut v = vec![T::default(); n];
    let bytes = size_of::<T>();
    // SAFETY: Transposable types accept every bit pattern and have no
    // padding, so writing arbitrary bytes over them is sound.
    let raw = unsafe { std::slice::from_raw_parts_mut(v.as_mut_ptr().cast::<u8>(), n * bytes) };
    raw.par_chunks_mut(8).enumerate().for_each(|(i, chunk)| {
        let mut z = seed.wrapping_add((i as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15));
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^= z >> 31;
        chunk.copy_from_slice(&z.to_le_bytes()[..chunk.len()]);
    });
    v
}

/// The GPU kernels. The first two copy instead of transposing: they are the
/// study's yardsticks, the bandwidth a transpose should approach.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TransposeKernel {
    /// Element-wise copy through registers (not a transpose).
    Copy,
    /// Copy through a shared-memory tile (not a transpose).
    CopyShared,
    /// Reads along rows, writes with a stride of a whole row: uncoalesced.
    Naive,
    /// Through a 32×32 shared tile: coalesced both ways, but a warp reading
    /// a tile column hits one shared-memory bank 32 times.
    Coalesced,
    /// As `Coalesced` with the tile padded to 33 columns: no bank conflicts.
    ConflictFree,
    /// Word-wide accesses with register transposes of small blocks. `None`
    /// picks the kernel: [`TransposeKernel::Sector`] where
    /// [`best_uses_sector`] says so, else this one with the word size of
    /// [`best_word_bytes`]; `Some(w)` asks for this one with `w`-byte words
    /// (see [`word_fits`]).
    Best(Option<u32>),
    /// For rows that do not start on 32-byte sectors: every warp store
    /// covers whole sectors of the output (each output row's segments are
    /// shifted to start on one, and tiles load a halo of input rows for
    /// it), loads are realigned words. Any shape; the word size is fixed
    /// per element size (see [`sector_params`]).
    Sector,
}

impl TransposeKernel {
    /// The study's five kernels and ours, in the study's order.
    pub const ALL: [TransposeKernel; 7] = [
        TransposeKernel::Copy,
        TransposeKernel::CopyShared,
        TransposeKernel::Naive,
        TransposeKernel::Coalesced,
        TransposeKernel::ConflictFree,
        TransposeKernel::Best(None),
        TransposeKernel::Sector,
    ];

    /// Whether the kernel transposes (the two copies do not).
    pub fn transposes(self) -> bool {
        !matches!(self, TransposeKernel::Copy | TransposeKernel::CopyShared)
    }

    /// The row label of the study's table.
    pub fn label(self) -> String {
        match self {
            TransposeKernel::Copy => "copy".into(),
            TransposeKernel::CopyShared => "shared memory copy".into(),
            TransposeKernel::Naive => "naive transpose".into(),
            TransposeKernel::Coalesced => "coalesced transpose".into(),
            TransposeKernel::ConflictFree => "conflict-free transpose".into(),
            TransposeKernel::Best(None) => "best transpose".into(),
            TransposeKernel::Best(Some(w)) => format!("best transpose ({w}-byte words)"),
            TransposeKernel::Sector => "sector-aligned transpose".into(),
        }
    }
}

/// Whether [`TransposeKernel::Best`]`(None)` runs the sector kernel for
/// `rows × cols` matrices of `elem_bytes`-byte elements. In matrices of
/// 2^24 elements or more: when the output rows (`rows` elements long) do
/// not all start on a 32-byte sector, where the word kernel writes sectors
/// in parts, from two blocks, which costs a quarter of the bandwidth or
/// more; and, except for bytes, when the input rows do not. For 1- and
/// 2-byte elements also in aligned matrices of 2^27 elements or more.
/// Smaller matrices keep the word kernel: the sector kernel's tiles (4 to
/// 8 times larger) are then too few to fill the GPU.
///
/// Measured on an H200 (BENCHMARKS.md), word kernel / sector kernel, GB/s:
/// misaligned 1000 × 999: u16 435 / 194, f32 1067 / 639, b16 3018 / 2791;
/// 2047²: u8 527 / 441, f32 2381 / 1585, b16 3102 / 3167; 4095² (just below
/// the threshold): u8 1043 / 1424, u16 1437 / 1308, f32 2836 / 2305, f64
/// 3213 / 3342; 8191²: the sector kernel faster for every type (u8 1379 /
/// 2258, f32 2797 / 3343, b16 3525 / 3857). Aligned u16: 16384² 2760 /
/// 3557, 16352² 2766 / 3385, 8192² level (2615 / 2692, 2666 / 2646), 4096²
/// 2044 / 1335.
pub fn best_uses_sector(elem_bytes: usize, rows: usize, cols: usize) -> bool {
    let elems = rows * cols;
    let misaligned = (rows * elem_bytes) % 32 != 0 || (elem_bytes > 1 && (cols * elem_bytes) % 32 != 0);
    (elems >= 1 << 24 && misaligned) || (elem_bytes <= 2 && elems >= 1 << 27)
}

/// The order in which the sector kernel's blocks take their tiles for
/// matrices of `elem_bytes`-byte elements (the kernel's last
/// argument): 1 diagonal, 2 column-major, in which the blocks running
/// together take a column strip of tiles top to bottom and so write whole
/// output rows one after the other. Column-major for elements of 4 bytes or
/// more, diagonal for 1 and 2 bytes. Measured on an H200 (sector kernel,
/// GB/s, row-major / diagonal / column-major): f32 16383² 3237 / 3416 /
/// 3716, 16384 × 16383 3730 / 3578 / 3766; f64 16383 × 16384 3676 / 3353 /
/// 3747; 16-byte elements 3592 / 3472 / 3833; u16 16383² 2953 / 3214 /
/// 3206; u8 16383 × 16384 2818 / 3079 / 2981. f32 16383 × 16384 measured
/// 3569 / 3643 / 3549 until its halo rows were staged by cp.async
/// (transpose.cu, TR_SECTOR_HALO_STAGE); since, diagonal / column-major
/// 3507–3634 / 3901–3929 in two runs.
pub fn sector_block_order(elem_bytes: usize) -> u32 {
    if elem_bytes >= 4 { 2 } else { 1 }
}

/// The sector kernel's word size W and words per lane and output row K for
/// `elem_bytes`-byte elements (fixed in `transpose.cu`, where the choice is
/// explained): a tile covers 32·W/E input columns and 32·K·W/E input rows.
pub fn sector_params(elem_bytes: usize) -> (usize, usize) {
    match elem_bytes {
        1 => (4, 2),
        2 => (4, 4),
        4 => (8, 2),
        _ => (16, 1),
    }
}

/// The word size the best kernel uses by default for `rows × cols`
/// matrices of `elem_bytes`-byte elements: 4 bytes for 1- and 2-byte
/// elements (any shape: the kernel realigns rows that start inside a
/// word); 8 bytes for 4-byte elements when both dimensions are even, else
/// 4; the element itself for 8- and 16-byte elements. These were the
/// fastest on an H200 at 16384² (BENCHMARKS.md).
pub fn best_word_bytes(elem_bytes: usize, rows: usize, cols: usize) -> u32 {
    match elem_bytes {
        0..=2 => 4,
        4 if word_fits(8, 4, rows, cols) => 8,
        e => e as u32,
    }
}

/// Whether the best kernel can move `rows × cols` matrices of
/// `elem_bytes`-byte elements in `word`-byte words: 4-byte words for 1- and
/// 2-byte elements, any shape; for larger elements words of 4, 8 or 16
/// bytes, at least the element, and for a word wider than the element
/// both dimensions multiples of the elements per word (so that every row
/// starts on a word boundary).
pub fn word_fits(word: u32, elem_bytes: usize, rows: usize, cols: usize) -> bool {
    let w = word as usize;
    if elem_bytes < 4 {
        return w == 4;
    }
    if !matches!(w, 4 | 8 | 16) || w < elem_bytes {
        return false;
    }
    let v = w / elem_bytes;
    rows % v == 0 && cols % v == 0
}

/// Checks that `len` elements of `T` hold `batch` matrices of `rows × cols`
/// that the kernels can index (dimensions below 2^32).
pub(crate) fn check_shape<T: Transposable>(len: usize, batch: usize, rows: usize, cols: usize) -> Result<()> {
    let bytes = size_of::<T>();
    ensure(matches!(bytes, 1 | 2 | 4 | 8 | 16), || {
        format!("transpose moves elements of 1, 2, 4, 8 or 16 bytes, not {bytes} ({})", T::NAME)
    })?;
    ensure(rows <= u32::MAX as usize && cols <= u32::MAX as usize && batch <= u32::MAX as usize, || {
        format!("transpose of {batch} matrices of {rows} x {cols}: each of these must be below 2^32")
    })?;
    let want = batch.checked_mul(rows).and_then(|x| x.checked_mul(cols)).ok_or_else(|| {
        PrimsError::InvalidArgument(format!("{batch} matrices of {rows} x {cols} elements overflow the address space"))
    })?;
    ensure(want == len, || format!("{batch} matrices of {rows} x {cols} need {want} elements, the buffer has {len}"))
}

/// Transposes on one backend's buffers.
pub trait Transpose {
    /// The backend's buffer (`Vec<T>` on the CPU, a device buffer on a GPU).
    type Buf<T: Transposable>;

    /// The transpose (`cols × rows`) of the `rows × cols` matrix `src`.
    fn transpose<T: Transposable>(&self, src: &Self::Buf<T>, rows: usize, cols: usize) -> Result<Self::Buf<T>> {
        self.transpose_batched(src, 1, rows, cols)
    }

    /// The transposes of the `batch` matrices of `rows × cols` stored back
    /// to back in `src`, back to back in the same order.
    fn transpose_batched<T: Transposable>(
        &self,
        src: &Self::Buf<T>,
        batch: usize,
        rows: usize,
        cols: usize,
    ) -> Result<Self::Buf<T>>;

    /// Transposes the `batch` square matrices of `n × n` in `data` in place.
    fn transpose_in_place<T: Transposable>(&self, data: &mut Self::Buf<T>, batch: usize, n: usize) -> Result<()>;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn best_takes_the_sector_kernel_where_it_measured_faster() {
        // Misaligned output rows: in matrices of 2^24 elements or more.
        for e in [1, 2, 4, 8, 16] {
            assert!(best_uses_sector(e, 16383, 16383), "{e}");
            assert!(best_uses_sector(e, 4097, 4097), "{e}");
            assert!(!best_uses_sector(e, 4095, 4095), "{e}");
            assert!(!best_uses_sector(e, 33, 64), "{e}");
        }
        // Aligned: for 1- and 2-byte elements only in large matrices.
        assert!(!best_uses_sector(4, 16384, 16384));
        assert!(!best_uses_sector(2, 4096, 4096));
        assert!(best_uses_sector(2, 16384, 16384));
        assert!(best_uses_sector(1, 16352, 16352));
        // Misaligned input rows alone: the word kernel realigns bytes itself.
        assert!(!best_uses_sector(1, 4096, 4097));
        assert!(best_uses_sector(4, 4096, 4097));
    }

    #[test]
    fn sector_block_order_follows_the_measurements() {
        // Column-major (2) from 4-byte elements up, diagonal (1) below.
        for (e, order) in [(1, 1), (2, 1), (4, 2), (8, 2), (16, 2)] {
            assert_eq!(sector_block_order(e), order, "{e}-byte elements");
        }
    }
}
