//! The GPU transposes (`kernels/transpose.cu`, one module per element size).

use warpmc_gpu::{DeviceBuffer, KernelSource, LaunchConfig, Module};

use super::{
    MatrixShape, SECTOR_ORDER_COLUMN_MAJOR, SECTOR_ORDER_DIAGONAL, TransposeKernel, check_shape, check_square,
    sector_block_order, sector_params,
};
use crate::cuda::CudaPrims;
use crate::element::Pod;
use crate::error::{Result, ensure};

/// Elements per side of a tile of Harris's kernels, and lanes per tile
/// side of the word kernels.
const TILE: u32 = 32;
/// Threads per block: TILE × BLOCK_ROWS, as in Harris's article.
const BLOCK_ROWS: u32 = 8;
const BLOCK: (u32, u32, u32) = (TILE, BLOCK_ROWS, 1);
/// Grid dimensions y and z are limited to 65535; the kernels loop over the
/// tiles and matrices beyond.
const MAX_GRID_YZ: usize = 65_535;
/// Blocks of the in-place kernel (it loops over the tile pairs beyond).
const MAX_IN_PLACE_BLOCKS: usize = 1 << 20;

/// The element sizes the kernels are built for.
const ELEM_SIZES: [usize; 5] = [1, 2, 4, 8, 16];

/// The sector kernel's tile geometry for `elem_bytes`-byte elements,
/// mirroring transpose.cu's SectorTile (which checks the pitch it is given
/// against its own).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct SectorTile {
    /// Bytes per word (W).
    word: usize,
    /// Elements per word (V).
    per_word: usize,
    /// Elements per 32-byte sector: the halo rows when output rows are
    /// misaligned.
    sector: usize,
    /// Input rows per tile (the output segment length).
    rows: usize,
    /// Input columns per tile.
    cols: usize,
    /// Words of shared memory per column.
    pitch: usize,
}

impl SectorTile {
    fn new(elem_bytes: usize) -> Self {
        let (word, words_per_lane) = sector_params(elem_bytes);
        let per_word = word / elem_bytes;
        let sector = 32 / elem_bytes;
        let rows = TILE as usize * words_per_lane * per_word;
        let cols = TILE as usize * per_word;
        // The tile's unit rows (halo included) rounded up to a whole swizzle
        // group, plus the words the stores may read past them, made odd.
        let units = (rows + sector) / per_word;
        let units_rounded = units.div_ceil(per_word) * per_word;
        let pitch = (units_rounded + per_word) | 1;
        SectorTile { word, per_word, sector, rows, cols, pitch }
    }

    fn shared_bytes(&self) -> u32 {
        (self.cols * self.pitch * self.word) as u32
    }
}

fn source(elem_bytes: usize) -> KernelSource {
    let (word, words_per_lane) = sector_params(elem_bytes);
    KernelSource::new("transpose.cu", include_str!("../../kernels/transpose.cu"))
        .option(format!("-DPRIMS_TRANSPOSE_ELEM_BYTES={elem_bytes}"))
        .option(format!("-DPRIMS_TRANSPOSE_TILE={TILE}"))
        .option(format!("-DPRIMS_TRANSPOSE_BLOCK_ROWS={BLOCK_ROWS}"))
        .option(format!("-DPRIMS_TRANSPOSE_SECTOR_WORD={word}"))
        .option(format!("-DPRIMS_TRANSPOSE_SECTOR_WORDS={words_per_lane}"))
        .option(format!("-DPRIMS_TRANSPOSE_SECTOR_PITCH={}", SectorTile::new(elem_bytes).pitch))
        .option(format!("-DPRIMS_TRANSPOSE_ORDER_DIAGONAL={SECTOR_ORDER_DIAGONAL}"))
        .option(format!("-DPRIMS_TRANSPOSE_ORDER_COLUMN_MAJOR={SECTOR_ORDER_COLUMN_MAJOR}"))
}

/// Every element size's transpose source, for compile checks.
pub(crate) fn sources() -> Vec<KernelSource> {
    ELEM_SIZES.iter().map(|&e| source(e)).collect()
}

/// The sector kernel's launch for the matrices of `shape` with
/// `elem_bytes`-byte elements, and its `halo` argument: the input rows a
/// tile loads before its first, one sector's worth of elements when the
/// output rows do not all start on a sector, else none.
fn sector_launch(elem_bytes: usize, shape: MatrixShape) -> (LaunchConfig, u32) {
    let t = SectorTile::new(elem_bytes);
    let MatrixShape { batch, rows, cols } = shape;
    let halo = if !(rows * elem_bytes).is_multiple_of(32) { t.sector } else { 0 };
    // A tile's segments start up to a sector before its rows: one more
    // tile row may be needed.
    let span = if halo > 0 { t.sector - 1 } else { 0 };
    let config = LaunchConfig {
        grid_dim: (
            cols.div_ceil(t.cols) as u32,
            (rows + span).div_ceil(t.rows).min(MAX_GRID_YZ) as u32,
            batch.min(MAX_GRID_YZ) as u32,
        ),
        block_dim: BLOCK,
        shared_mem_bytes: t.shared_bytes(),
    };
    (config, halo as u32)
}

/// Shared memory of the best kernel with `word`-byte words: one plane of
/// TILE × (TILE + 1) words per element of a word (transpose.cu).
fn best_shared_bytes(elem_bytes: usize, word: u32) -> u32 {
    let per_word = (word as usize / elem_bytes).max(1);
    per_word as u32 * TILE * (TILE + 1) * word
}

/// The grid of Harris's kernels and the best kernel: one block per tile of
/// `side` elements, the tile rows beyond 65535 and the matrices beyond
/// 65535 looped over by the kernels.
fn tile_grid(shape: MatrixShape, side: usize, shared_mem_bytes: u32) -> LaunchConfig {
    LaunchConfig {
        grid_dim: (
            shape.cols.div_ceil(side) as u32,
            shape.rows.div_ceil(side).min(MAX_GRID_YZ) as u32,
            shape.batch.min(MAX_GRID_YZ) as u32,
        ),
        block_dim: BLOCK,
        shared_mem_bytes,
    }
}

/// `(rows, cols, batch)` as the kernels take them (checked below 2^32).
fn dims(shape: MatrixShape) -> (u32, u32, u32) {
    (shape.rows as u32, shape.cols as u32, shape.batch as u32)
}

impl CudaPrims {
    fn transpose_module(&self, elem_bytes: usize) -> Result<Module> {
        self.module(|| source(elem_bytes), &format!("transpose-{elem_bytes}"))
    }

    /// Runs `kernel` on the matrices of `shape` in `src`, writing `dst` (the
    /// same length): their transposes, or for the two copy kernels a copy.
    /// [`TransposeKernel::default`] is what [`crate::Primitives::transpose`]
    /// runs. Does not allocate and does not wait for the device.
    ///
    /// Errors: buffers that do not hold `shape`, an element size the
    /// kernels do not move, a `Best(Some(w))` the shape does not support
    /// ([`TransposeKernel::supports`]).
    pub fn transpose_into<T: Pod>(
        &self,
        src: &DeviceBuffer<T>,
        dst: &mut DeviceBuffer<T>,
        shape: MatrixShape,
        kernel: TransposeKernel,
    ) -> Result<()> {
        check_shape::<T>(src.len(), shape)?;
        check_shape::<T>(dst.len(), shape)?;
        if src.is_empty() {
            return Ok(());
        }
        let e = size_of::<T>();
        ensure(kernel.supports(e, shape), || {
            format!(
                "the best transpose cannot move {} x {} matrices of {e}-byte elements in {}-byte words (4-byte \
                 words for 1- and 2-byte elements; otherwise 4, 8 or 16 bytes, at least the element, with both \
                 dimensions multiples of the elements per word)",
                shape.rows,
                shape.cols,
                kernel.word_bytes(e, shape)
            )
        })?;
        let mut copy = None;
        let src = self.aligned_input(src, &mut copy)?;
        self.with_aligned_output(dst, false, |dst| self.transpose_aligned(src, dst, shape, kernel))
    }

    /// [`Self::transpose_into`] of checked, non-empty buffers that start on
    /// [`crate::cuda::KERNEL_ALIGNMENT`].
    fn transpose_aligned<T: Pod>(
        &self,
        src: &DeviceBuffer<T>,
        dst: &mut DeviceBuffer<T>,
        shape: MatrixShape,
        kernel: TransposeKernel,
    ) -> Result<()> {
        let e = size_of::<T>();
        let m = self.transpose_module(e)?;
        match kernel.resolve(e, shape) {
            TransposeKernel::Sector => self.launch_sector(&m, src, dst, shape),
            TransposeKernel::Best(Some(word)) => {
                let k = m.kernel(&format!("tr_best_w{word}"))?;
                let shared = best_shared_bytes(e, word);
                k.set_max_dynamic_shared_bytes(shared)?;
                let side = TILE as usize * (word as usize / e).max(1);
                let (r, c, b) = dims(shape);
                // SAFETY: tr_best_w<word>(const elem* in, elem* out, unsigned
                // rows, unsigned cols, unsigned batch) touches only the
                // elements of `shape` in each buffer (both hold exactly that
                // many, elements of the size the module was built for,
                // checked above); `word` suits the shape (checked by
                // supports, or chosen by resolve); the dynamic shared memory
                // is the kernel's planes (opted in above).
                unsafe {
                    self.gpu()
                        .launch(&k)
                        .buf(src)
                        .buf_mut(dst)
                        .arg(&r)
                        .arg(&c)
                        .arg(&b)
                        .run(tile_grid(shape, side, shared))?
                };
                Ok(())
            }
            harris => {
                let name = match harris {
                    TransposeKernel::Copy => "tr_copy",
                    TransposeKernel::CopyShared => "tr_copy_shared",
                    TransposeKernel::Naive => "tr_naive",
                    TransposeKernel::Coalesced => "tr_coalesced",
                    _ => "tr_conflict_free",
                };
                let k = m.kernel(name)?;
                let (r, c, b) = dims(shape);
                // SAFETY: Harris's kernels take (const elem* in, elem* out,
                // unsigned rows, unsigned cols, unsigned batch) and touch only
                // the elements of `shape` in each buffer (checked above: both
                // hold exactly that many, of the module's size); static
                // shared memory only.
                unsafe {
                    self.gpu().launch(&k).buf(src).buf_mut(dst).arg(&r).arg(&c).arg(&b).run(tile_grid(
                        shape,
                        TILE as usize,
                        0,
                    ))?
                };
                Ok(())
            }
        }
    }

    fn launch_sector<T: Pod>(
        &self,
        m: &Module,
        src: &DeviceBuffer<T>,
        dst: &mut DeviceBuffer<T>,
        shape: MatrixShape,
    ) -> Result<()> {
        let e = size_of::<T>();
        let k = m.kernel("tr_sector")?;
        let (config, halo) = sector_launch(e, shape);
        let order = sector_block_order(e);
        k.set_max_dynamic_shared_bytes(config.shared_mem_bytes)?;
        let (r, c, b) = dims(shape);
        // SAFETY: tr_sector(const elem* in, elem* out, unsigned rows,
        // unsigned cols, unsigned batch, unsigned halo, unsigned order)
        // touches only the elements of `shape` in each buffer (the order
        // changes only which block takes which tile; both buffers hold
        // exactly that many, checked by the caller; its word loads stay
        // inside the buffer, checked per tile by the kernel), with the
        // dynamic shared memory of sector_launch (opted in above).
        unsafe {
            self.gpu().launch(&k).buf(src).buf_mut(dst).arg(&r).arg(&c).arg(&b).arg(&halo).arg(&order).run(config)?
        };
        Ok(())
    }

    /// Transposes the square matrices of `shape` in `data` in place: what
    /// [`crate::Primitives::transpose_in_place`] runs. Does not wait.
    pub(crate) fn transpose_square_in_place<T: Pod>(
        &self,
        data: &mut DeviceBuffer<T>,
        shape: MatrixShape,
    ) -> Result<()> {
        check_square::<T>(data.len(), shape)?;
        if data.is_empty() {
            return Ok(());
        }
        let k = self.transpose_module(size_of::<T>())?.kernel("tr_in_place")?;
        let tiles = shape.rows.div_ceil(TILE as usize);
        let pairs = tiles * (tiles + 1) / 2;
        let config = LaunchConfig {
            grid_dim: (pairs.min(MAX_IN_PLACE_BLOCKS) as u32, 1, shape.batch.min(MAX_GRID_YZ) as u32),
            block_dim: BLOCK,
            shared_mem_bytes: 0,
        };
        let (n, _, b) = dims(shape);
        // SAFETY: tr_in_place(elem* data, unsigned n, unsigned batch)
        // touches the batch * n * n elements of data (checked above), each
        // tile pair by one block only.
        unsafe { self.gpu().launch(&k).buf_mut(data).arg(&n).arg(&b).run(config)? };
        Ok(())
    }

    /// The transposes of `src`'s matrices in a new buffer: what
    /// [`crate::Primitives::transpose`] runs.
    pub(crate) fn transpose_new<T: Pod>(&self, src: &DeviceBuffer<T>, shape: MatrixShape) -> Result<DeviceBuffer<T>> {
        check_shape::<T>(src.len(), shape)?;
        // SAFETY: the transpose writes every element of dst.
        let mut dst = unsafe { self.gpu().alloc_uninit::<T>(src.len())? };
        self.transpose_into(src, &mut dst, shape, TransposeKernel::default())?;
        Ok(dst)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sector_tiles_have_the_geometry_of_transpose_cu() {
        // (elem, W, V, tile rows, tile cols, pitch): pitch = units rounded
        // to V, plus V, made odd.
        for (e, w, v, tr, tc, p) in
            [(1, 4, 4, 256, 128, 77), (2, 4, 2, 256, 64, 139), (4, 8, 2, 128, 64, 71), (8, 16, 2, 64, 64, 37)]
        {
            let t = SectorTile::new(e);
            assert_eq!((t.word, t.per_word, t.rows, t.cols, t.pitch), (w, v, tr, tc, p), "{e}-byte elements");
        }
        let t = SectorTile::new(16);
        assert_eq!((t.word, t.per_word, t.rows, t.cols, t.pitch), (16, 1, 32, 32, 35));
        // f32 at 16383^2: the halo is a sector, the tile rows cover the
        // shifted segments.
        let (config, halo) = sector_launch(4, MatrixShape::square(16383));
        assert_eq!(halo, 8);
        assert_eq!(config.grid_dim, (256, 129, 1));
        assert_eq!(config.shared_mem_bytes, 64 * 71 * 8);
        assert_eq!(sector_launch(4, MatrixShape::square(16384)).1, 0);
    }
}
