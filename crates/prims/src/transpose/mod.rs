//! Matrix transpose: [`crate::Primitives::transpose`] and
//! [`crate::Primitives::transpose_in_place`], the shape they take, and the
//! GPU kernels [`crate::CudaPrims::transpose_into`] can be asked for.
//!
//! A matrix is `rows × cols` elements stored row-major; its transpose is
//! `cols × rows`, row-major. A [`MatrixShape`] is `batch` matrices of the
//! same size stored back to back; each is transposed in its own place in
//! the output. Square matrices can also be transposed in place.
//!
//! Elements are moved as raw bits, so any [`Pod`] type of 1, 2, 4, 8 or 16
//! bytes works (the kernels are built once per size; other sizes are an
//! error).
//!
//! The GPU kernels ([`TransposeKernel`]) are those of Harris, "An Efficient
//! Matrix Transpose in CUDA C/C++" (NVIDIA, 2013) — copy, shared-memory
//! copy, naive, coalesced, conflict-free — made correct for any shape and
//! batch, plus the two the library runs: [`TransposeKernel::Best`], in which
//! every thread moves 4-, 8- or 16-byte words and transposes a small block
//! of elements in registers, so that warps read and write 128 to 512
//! contiguous bytes per instruction whatever the element size; and
//! [`TransposeKernel::Sector`], for large matrices whose rows do not start
//! on 32-byte sectors. `warpmc bench transpose` measures them all beside
//! the copy kernel (docs/benchmarks/transpose.md).
//!
//! ```
//! use warpmc_prims::{CpuPrims, MatrixShape, Primitives};
//!
//! let m = vec![1u16, 2, 3, 4, 5, 6]; // 2 x 3
//! assert_eq!(CpuPrims.transpose(&m, MatrixShape::new(2, 3)).unwrap(), vec![1, 4, 2, 5, 3, 6]);
//! let mut sq = vec![1u8, 2, 3, 4];
//! CpuPrims.transpose_in_place(&mut sq, MatrixShape::square(2)).unwrap();
//! assert_eq!(sq, vec![1, 3, 2, 4]);
//! ```

pub(crate) mod cpu;
#[cfg(feature = "cuda")]
pub(crate) mod cuda;

use std::fmt;

use serde::Serialize;

use crate::element::Pod;
use crate::error::{PrimsError, Result, ensure};

/// `batch` matrices of `rows × cols` elements each, stored back to back,
/// row-major.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct MatrixShape {
    /// Matrices.
    pub batch: usize,
    /// Rows of each matrix.
    pub rows: usize,
    /// Columns of each matrix.
    pub cols: usize,
}

impl MatrixShape {
    /// One `rows × cols` matrix.
    pub const fn new(rows: usize, cols: usize) -> Self {
        MatrixShape { batch: 1, rows, cols }
    }

    /// One `n × n` matrix.
    pub const fn square(n: usize) -> Self {
        MatrixShape { batch: 1, rows: n, cols: n }
    }

    /// `batch` matrices of this shape's size.
    pub const fn batched(self, batch: usize) -> Self {
        MatrixShape { batch, ..self }
    }

    /// The shape of the transposes: `cols × rows`, as many.
    pub const fn transposed(self) -> Self {
        MatrixShape { batch: self.batch, rows: self.cols, cols: self.rows }
    }

    /// Elements in all the matrices, or `None` when that overflows.
    pub fn len(self) -> Option<usize> {
        self.batch.checked_mul(self.rows)?.checked_mul(self.cols)
    }

    /// Whether the matrices hold no element.
    pub fn is_empty(self) -> bool {
        self.batch == 0 || self.rows == 0 || self.cols == 0
    }

    /// Whether the matrices are square.
    pub const fn is_square(self) -> bool {
        self.rows == self.cols
    }
}

impl fmt::Display for MatrixShape {
    /// `rows x cols`, or `batch matrices of rows x cols`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.batch != 1 {
            write!(f, "{} matrices of ", self.batch)?;
        }
        write!(f, "{} x {}", self.rows, self.cols)
    }
}

/// A 16-byte element (four 32-bit words, 16-byte aligned): an RGBA pixel of
/// f32, a complex f64, a small struct — anything of that size moves as one.
#[repr(C, align(16))]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Bytes16(pub [u32; 4]);

// SAFETY: plain old data of 16 bytes with the alignment CUDA's uint4 has;
// every bit pattern (zero included) is a valid value.
#[cfg(feature = "cuda")]
unsafe impl warpmc_gpu::DeviceRepr for Bytes16 {}
// SAFETY: as above, all zeros is a valid value.
#[cfg(feature = "cuda")]
unsafe impl warpmc_gpu::ValidAsZeroBits for Bytes16 {}

// SAFETY: four u32 and no padding (16 bytes, aligned to 16); every bit
// pattern is valid.
unsafe impl Pod for Bytes16 {}

/// The GPU kernels. The first two copy instead of transposing: they are the
/// yardsticks of Harris's article, the bandwidth a transpose should
/// approach.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
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
    /// (the default, what [`crate::Primitives::transpose`] runs) picks the
    /// kernel for the shape: see [`TransposeKernel::resolve`]. `Some(w)`
    /// asks for this kernel with `w`-byte words (4, 8 or 16; see
    /// [`TransposeKernel::supports`]).
    Best(Option<u32>),
    /// For rows that do not start on 32-byte sectors: every warp store
    /// covers whole sectors of the output (each output row's segments are
    /// shifted to start on one, and tiles load a halo of input rows for
    /// it), loads are realigned words. Any shape; the word size is fixed
    /// per element size.
    Sector,
}

impl Default for TransposeKernel {
    fn default() -> Self {
        TransposeKernel::Best(None)
    }
}

impl TransposeKernel {
    /// Harris's five kernels and the library's two, in the article's order.
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

    /// The kernel that runs for matrices of `shape` with `elem_bytes`-byte
    /// elements: `Best(None)` becomes [`TransposeKernel::Sector`] for large
    /// matrices whose rows do not all start on a 32-byte sector (and for
    /// large ones of 1- and 2-byte elements), `Best(Some(w))` otherwise,
    /// with the word size that suits the element and the shape; every other
    /// kernel is itself.
    pub fn resolve(self, elem_bytes: usize, shape: MatrixShape) -> TransposeKernel {
        match self {
            TransposeKernel::Best(None) if best_uses_sector(elem_bytes, shape.rows, shape.cols) => {
                TransposeKernel::Sector
            }
            TransposeKernel::Best(None) => {
                TransposeKernel::Best(Some(best_word_bytes(elem_bytes, shape.rows, shape.cols)))
            }
            k => k,
        }
    }

    /// The bytes each thread moves per access when the kernel runs on
    /// `shape` (after [`TransposeKernel::resolve`]): the word size of the
    /// best and sector kernels, the element for the others.
    pub fn word_bytes(self, elem_bytes: usize, shape: MatrixShape) -> usize {
        match self.resolve(elem_bytes, shape) {
            TransposeKernel::Best(Some(w)) => w as usize,
            TransposeKernel::Sector => sector_word_bytes(elem_bytes),
            _ => elem_bytes,
        }
    }

    /// Whether the kernel can transpose matrices of `shape` with
    /// `elem_bytes`-byte elements. Every kernel can but `Best(Some(w))`,
    /// which needs 4-byte words for 1- and 2-byte elements, and for larger
    /// elements words of 4, 8 or 16 bytes, at least the element, and when
    /// wider than the element both dimensions multiples of the elements per
    /// word (so that every row starts on a word boundary).
    pub fn supports(self, elem_bytes: usize, shape: MatrixShape) -> bool {
        match self {
            TransposeKernel::Best(Some(w)) => word_fits(w, elem_bytes, shape.rows, shape.cols),
            _ => true,
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
/// 8 times larger) are then too few to fill the GPU. The thresholds follow
/// the measurements in docs/benchmarks/transpose.md ("the sector kernel").
pub(crate) fn best_uses_sector(elem_bytes: usize, rows: usize, cols: usize) -> bool {
    let elems = rows.saturating_mul(cols);
    // Residues mod 32 survive a wrapping product (2^64 is a multiple of 32).
    let misaligned = !rows.wrapping_mul(elem_bytes).is_multiple_of(32)
        || (elem_bytes > 1 && !cols.wrapping_mul(elem_bytes).is_multiple_of(32));
    (elems >= 1 << 24 && misaligned) || (elem_bytes <= 2 && elems >= 1 << 27)
}

/// The order in which the sector kernel's blocks take their tiles (the
/// kernel's last argument): 1 diagonal, 2 column-major, in which the blocks
/// running together take a column strip of tiles top to bottom and so write
/// whole output rows one after the other. Column-major for elements of 4
/// bytes or more, diagonal for 1 and 2 bytes: the faster of the two for
/// each size (docs/benchmarks/transpose.md, "block order").
#[cfg(feature = "cuda")]
pub(crate) fn sector_block_order(elem_bytes: usize) -> u32 {
    if elem_bytes >= 4 { SECTOR_ORDER_COLUMN_MAJOR } else { SECTOR_ORDER_DIAGONAL }
}

/// The sector kernel's tile orders (transpose.cu's
/// `PRIMS_TRANSPOSE_ORDER_*`).
#[cfg(feature = "cuda")]
pub(crate) const SECTOR_ORDER_DIAGONAL: u32 = 1;
/// See [`SECTOR_ORDER_DIAGONAL`].
#[cfg(feature = "cuda")]
pub(crate) const SECTOR_ORDER_COLUMN_MAJOR: u32 = 2;

/// The sector kernel's word size W and words per lane and output row K for
/// `elem_bytes`-byte elements (passed to transpose.cu): a tile covers
/// 32·W/E input columns and 32·K·W/E input rows. The fastest on an H200 at
/// 16383² (docs/benchmarks/transpose.md).
pub(crate) fn sector_params(elem_bytes: usize) -> (usize, usize) {
    match elem_bytes {
        1 => (4, 2),
        2 => (4, 4),
        4 => (8, 2),
        _ => (16, 1),
    }
}

fn sector_word_bytes(elem_bytes: usize) -> usize {
    sector_params(elem_bytes).0
}

/// The word size the best kernel uses by default for `rows × cols`
/// matrices of `elem_bytes`-byte elements: 4 bytes for 1- and 2-byte
/// elements (any shape: the kernel realigns rows that start inside a
/// word); 8 bytes for 4-byte elements when both dimensions are even, else
/// 4; the element itself for 8- and 16-byte elements. The fastest on an
/// H200 at 16384² (docs/benchmarks/transpose.md).
pub(crate) fn best_word_bytes(elem_bytes: usize, rows: usize, cols: usize) -> u32 {
    match elem_bytes {
        0..=2 => 4,
        4 if word_fits(8, 4, rows, cols) => 8,
        e => e as u32,
    }
}

/// See [`TransposeKernel::supports`].
fn word_fits(word: u32, elem_bytes: usize, rows: usize, cols: usize) -> bool {
    let w = word as usize;
    if elem_bytes < 4 {
        return w == 4;
    }
    if !matches!(w, 4 | 8 | 16) || w < elem_bytes {
        return false;
    }
    let v = w / elem_bytes;
    rows.is_multiple_of(v) && cols.is_multiple_of(v)
}

/// Checks that `len` elements of `T` hold the matrices of `shape`, that the
/// kernels can index (dimensions below 2^32, unless there is nothing to
/// move: 0 × 2^32 is as empty as 0 × 1) and move (1, 2, 4, 8 or 16 bytes
/// per element).
pub(crate) fn check_shape<T: Pod>(len: usize, shape: MatrixShape) -> Result<()> {
    let bytes = size_of::<T>();
    let MatrixShape { batch, rows, cols } = shape;
    ensure(matches!(bytes, 1 | 2 | 4 | 8 | 16), || {
        format!("transpose moves elements of 1, 2, 4, 8 or 16 bytes, not {bytes}")
    })?;
    let empty = shape.len() == Some(0);
    ensure(empty || (rows <= u32::MAX as usize && cols <= u32::MAX as usize && batch <= u32::MAX as usize), || {
        format!("transpose of {batch} matrices of {rows} x {cols}: each of these must be below 2^32")
    })?;
    let want = shape.len().ok_or_else(|| {
        PrimsError::InvalidArgument(format!("{batch} matrices of {rows} x {cols} elements overflow the address space"))
    })?;
    ensure(want == len, || format!("{batch} matrices of {rows} x {cols} need {want} elements, the buffer has {len}"))
}

/// [`check_shape`] for an in-place transpose: square matrices only.
pub(crate) fn check_square<T: Pod>(len: usize, shape: MatrixShape) -> Result<()> {
    ensure(shape.is_square(), || {
        format!("an in-place transpose needs square matrices, not {} x {}", shape.rows, shape.cols)
    })?;
    check_shape::<T>(len, shape)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every kernel resolves for any shape, the largest included.
    #[test]
    fn kernels_resolve_for_any_shape() {
        for elem_bytes in [1, 2, 4, 8, 16, usize::MAX] {
            for (rows, cols) in [(0, 0), (1, usize::MAX), (usize::MAX, usize::MAX), (3, 5)] {
                let shape = MatrixShape { batch: usize::MAX, rows, cols };
                let k = TransposeKernel::Best(None).resolve(elem_bytes, shape);
                assert!(k.word_bytes(elem_bytes, shape) > 0 || elem_bytes == 0);
            }
        }
        // The alignment test takes the residue of the true product.
        assert!(!best_uses_sector(4, 1 << 63, 8));
        assert!(best_uses_sector(4, (1 << 63) + 1, 8));
    }

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

    #[cfg(feature = "cuda")]
    #[test]
    fn sector_block_order_follows_the_measurements() {
        // Column-major from 4-byte elements up, diagonal below.
        for (e, order) in [(1, 1), (2, 1), (4, 2), (8, 2), (16, 2)] {
            assert_eq!(sector_block_order(e), order, "{e}-byte elements");
        }
    }

    #[test]
    fn resolve_names_the_kernel_and_word_that_run() {
        let big = MatrixShape::square(16383);
        assert_eq!(TransposeKernel::default().resolve(4, big), TransposeKernel::Sector);
        assert_eq!(TransposeKernel::default().word_bytes(4, big), 8);
        let aligned = MatrixShape::square(16384);
        assert_eq!(TransposeKernel::default().resolve(4, aligned), TransposeKernel::Best(Some(8)));
        assert_eq!(TransposeKernel::default().resolve(1, MatrixShape::new(33, 31)), TransposeKernel::Best(Some(4)));
        assert_eq!(TransposeKernel::default().resolve(4, MatrixShape::new(33, 31)), TransposeKernel::Best(Some(4)));
        assert_eq!(TransposeKernel::Naive.resolve(8, big), TransposeKernel::Naive);
        assert_eq!(TransposeKernel::Naive.word_bytes(8, big), 8);
        assert_eq!(TransposeKernel::Sector.word_bytes(2, aligned), 4);
    }

    #[test]
    fn words_fit_only_where_rows_start_on_them() {
        let s = MatrixShape::new(64, 128);
        assert!(TransposeKernel::Best(Some(4)).supports(1, s));
        assert!(!TransposeKernel::Best(Some(8)).supports(1, s));
        assert!(TransposeKernel::Best(Some(16)).supports(4, s));
        assert!(!TransposeKernel::Best(Some(16)).supports(4, MatrixShape::new(64, 126)));
        assert!(!TransposeKernel::Best(Some(4)).supports(8, s));
        assert!(TransposeKernel::Sector.supports(16, MatrixShape::new(3, 5)));
    }

    /// A 3-byte element: not a size the transpose moves.
    #[derive(Clone, Copy, Debug, Default)]
    #[repr(C)]
    struct Rgb([u8; 3]);
    // SAFETY: three bytes, no padding, every bit pattern valid.
    #[cfg(feature = "cuda")]
    unsafe impl warpmc_gpu::DeviceRepr for Rgb {}
    // SAFETY: as above.
    #[cfg(feature = "cuda")]
    unsafe impl warpmc_gpu::ValidAsZeroBits for Rgb {}
    // SAFETY: as above.
    unsafe impl Pod for Rgb {}

    #[test]
    fn shapes_check_sizes_lengths_and_squareness() {
        assert!(check_shape::<u32>(12, MatrixShape::new(3, 4)).is_ok());
        assert!(check_shape::<u32>(24, MatrixShape::new(3, 4).batched(2)).is_ok());
        assert!(check_shape::<u32>(11, MatrixShape::new(3, 4)).is_err());
        assert!(check_shape::<u32>(0, MatrixShape::new(usize::MAX, 2)).is_err());
        assert!(check_shape::<Rgb>(4, MatrixShape::new(2, 2)).is_err());
        assert!(check_square::<u8>(6, MatrixShape::new(2, 3)).is_err());
        assert!(check_square::<u8>(0, MatrixShape::square(0)).is_ok());
        // Nothing to move: no limit on the dimensions.
        assert!(check_shape::<u8>(0, MatrixShape::new(0, 1 << 40).batched(1 << 33)).is_ok());
        assert!(check_shape::<u8>(0, MatrixShape::new(1 << 33, 0)).is_ok());
        assert!(check_shape::<u8>(1 << 33, MatrixShape::new(1 << 33, 1)).is_err());
        assert_eq!(MatrixShape::new(3, 4).batched(2).to_string(), "2 matrices of 3 x 4");
        assert_eq!(MatrixShape::new(3, 4).transposed(), MatrixShape::new(4, 3));
    }
}
