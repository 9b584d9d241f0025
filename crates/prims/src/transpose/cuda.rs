//! The GPU transposes (`kernels/transpose.cu`, one module per element size).

use warpmc_gpu::{DeviceBuffer, KernelSource, LaunchConfig};

use super::{
    Transposable, Transpose, TransposeKernel, best_uses_sector, best_word_bytes, check_shape, sector_block_order,
    sector_params, word_fits,
};
use crate::cuda::CudaPrims;
use crate::error::{Result, ensure};

/// Threads per block: 32 × 8, as in the study.
const BLOCK: (u32, u32, u32) = (32, 8, 1);
/// Grid dimensions y and z are limited to 65535; the kernels loop over the
/// tiles and matrices beyond.
const MAX_GRID_YZ: usize = 65_535;
/// Blocks of the in-place kernel (it loops over the tile pairs beyond).
const MAX_IN_PLACE_BLOCKS: usize = 1 << 20;

/// The element sizes the kernels are built for.
const ELEM_SIZES: [usize; 5] = [1, 2, 4, 8, 16];

fn source(elem_bytes: usize) -> KernelSource {
    KernelSource::new("transpose.cu", include_str!("../../kernels/transpose.cu"))
        .option(format!("-DTR_ELEM_BYTES={elem_bytes}"))
}

/// Every element size's transpose source, for compile checks.
pub fn sources() -> Vec<KernelSource> {
    ELEM_SIZES.iter().map(|&e| source(e)).collect()
}

/// Elements per side of the tile a kernel launch covers per block (not the
/// sector kernel: see [`sector_launch`]).
fn tile_side(kernel: TransposeKernel, elem_bytes: usize, word: u32) -> usize {
    match kernel {
        TransposeKernel::Best(_) => 32 * (word as usize / elem_bytes).max(1),
        _ => 32,
    }
}

/// The sector kernel's launch for `batch` matrices of `rows × cols`
/// `elem_bytes`-byte elements, and its last argument, the halo: the input
/// rows a tile loads before its first, one sector's worth of elements when
/// the output rows do not all start on a sector, else none. Mirrors the
/// tile geometry of transpose.cu's SectorTile.
fn sector_launch(elem_bytes: usize, batch: usize, rows: usize, cols: usize) -> (LaunchConfig, u32) {
    let (w, k) = sector_params(elem_bytes);
    let v = w / elem_bytes;
    let sect = 32 / elem_bytes;
    let halo = if (rows * elem_bytes) % 32 != 0 { sect } else { 0 };
    let tile_rows = 32 * k * v;
    let tile_cols = 32 * v;
    let units = (tile_rows + sect) / v;
    let units_rounded = units.div_ceil(v) * v;
    let pitch = (units_rounded + v) | 1;
    let span = if halo > 0 { sect - 1 } else { 0 };
    let config = LaunchConfig {
        grid_dim: (
            cols.div_ceil(tile_cols) as u32,
            (rows + span).div_ceil(tile_rows).min(MAX_GRID_YZ) as u32,
            batch.min(MAX_GRID_YZ) as u32,
        ),
        block_dim: BLOCK,
        shared_mem_bytes: (tile_cols * pitch * w) as u32,
    };
    (config, halo as u32)
}

/// Shared memory of the best kernel with `word`-byte words: one plane of
/// 32 × 33 words per element of a word (transpose.cu).
fn best_shared_bytes(elem_bytes: usize, word: u32) -> u32 {
    let v = (word as usize / elem_bytes).max(1);
    (v * 32 * 33 * word as usize) as u32
}

/// The word size `kernel` uses (the element size for the study's kernels),
/// checked against the shape.
fn word_for(kernel: TransposeKernel, elem_bytes: usize, rows: usize, cols: usize) -> Result<u32> {
    let TransposeKernel::Best(asked) = kernel else { return Ok(elem_bytes as u32) };
    let Some(w) = asked else { return Ok(best_word_bytes(elem_bytes, rows, cols)) };
    ensure(word_fits(w, elem_bytes, rows, cols), || {
        format!(
            "the best transpose cannot move {rows} x {cols} matrices of {elem_bytes}-byte elements in {w}-byte words \
             (4-byte words for 1- and 2-byte elements; otherwise 4, 8 or 16 bytes, at least the element, with both \
             dimensions multiples of the elements per word)"
        )
    })?;
    Ok(w)
}

impl CudaPrims {
    fn transpose_module(&self, elem_bytes: usize) -> Result<warpmc_gpu::Module> {
        self.module(|| source(elem_bytes), &format!("transpose-{elem_bytes}"))
    }

    /// Runs `kernel` on the `batch` matrices of `rows × cols` in `src`,
    /// writing `dst` (the same length): their transposes, or for the two
    /// copy kernels a copy. Does not wait for the device.
    pub fn transpose_with<T: Transposable>(
        &self,
        kernel: TransposeKernel,
        src: &DeviceBuffer<T>,
        dst: &mut DeviceBuffer<T>,
        batch: usize,
        rows: usize,
        cols: usize,
    ) -> Result<()> {
        check_shape::<T>(src.len(), batch, rows, cols)?;
        check_shape::<T>(dst.len(), batch, rows, cols)?;
        let e = size_of::<T>();
        let word = word_for(kernel, e, rows, cols)?;
        if src.is_empty() {
            return Ok(());
        }
        let m = self.transpose_module(e)?;
        if kernel == TransposeKernel::Sector
            || (kernel == TransposeKernel::Best(None) && best_uses_sector(e, rows, cols))
        {
            let k = m.kernel("tr_sector")?;
            let (config, halo) = sector_launch(e, batch, rows, cols);
            let order = sector_block_order(e);
            k.set_max_dynamic_shared_bytes(config.shared_mem_bytes)?;
            let (r, c, b) = (rows as u32, cols as u32, batch as u32);
            // SAFETY: tr_sector(const elem* in, elem* out, unsigned rows,
            // unsigned cols, unsigned batch, unsigned halo, unsigned order)
            // touches only the batch * rows * cols elements of each buffer
            // (the order changes only which block takes which tile; both
            // buffers hold exactly that many, checked above; its word loads
            // stay inside the buffer, checked per tile by the kernel), with
            // the dynamic shared memory of sector_launch (opted in above).
            unsafe {
                self.gpu()
                    .launch(&k)
                    .buf(src)
                    .buf_mut(dst)
                    .arg(&r)
                    .arg(&c)
                    .arg(&b)
                    .arg(&halo)
                    .arg(&order)
                    .run(config)?
            };
            return Ok(());
        }
        let (name, shared) = match kernel {
            TransposeKernel::Copy => ("tr_copy".to_string(), 0),
            TransposeKernel::CopyShared => ("tr_copy_shared".to_string(), 0),
            TransposeKernel::Naive => ("tr_naive".to_string(), 0),
            TransposeKernel::Coalesced => ("tr_coalesced".to_string(), 0),
            TransposeKernel::ConflictFree => ("tr_conflict_free".to_string(), 0),
            TransposeKernel::Best(_) => (format!("tr_best_w{word}"), best_shared_bytes(e, word)),
            TransposeKernel::Sector => unreachable!("launched above"),
        };
        let k = m.kernel(&name)?;
        if shared > 0 {
            k.set_max_dynamic_shared_bytes(shared)?;
        }
        let side = tile_side(kernel, e, word);
        let config = LaunchConfig {
            grid_dim: (
                cols.div_ceil(side) as u32,
                rows.div_ceil(side).min(MAX_GRID_YZ) as u32,
                batch.min(MAX_GRID_YZ) as u32,
            ),
            block_dim: BLOCK,
            shared_mem_bytes: shared,
        };
        let (r, c, b) = (rows as u32, cols as u32, batch as u32);
        // SAFETY: every tr_* kernel but tr_in_place takes (const elem* in,
        // elem* out, unsigned rows, unsigned cols, unsigned batch) and
        // touches only the batch * rows * cols elements of each buffer
        // (checked above: both hold exactly that many, elements of the size
        // the module was built for). tr_best_w* needs `word` to suit the
        // shape (checked by word_for) and the dynamic shared memory given
        // (opted in above); the others use static shared memory only.
        unsafe { self.gpu().launch(&k).buf(src).buf_mut(dst).arg(&r).arg(&c).arg(&b).run(config)? };
        Ok(())
    }

    /// Transposes the `batch` square `n × n` matrices in `data` in place.
    /// Does not wait for the device.
    pub fn transpose_in_place_on_device<T: Transposable>(
        &self,
        data: &mut DeviceBuffer<T>,
        batch: usize,
        n: usize,
    ) -> Result<()> {
        check_shape::<T>(data.len(), batch, n, n)?;
        if data.is_empty() {
            return Ok(());
        }
        let k = self.transpose_module(size_of::<T>())?.kernel("tr_in_place")?;
        let tiles = n.div_ceil(32);
        let pairs = tiles * (tiles + 1) / 2;
        let config = LaunchConfig {
            grid_dim: (pairs.min(MAX_IN_PLACE_BLOCKS) as u32, 1, batch.min(MAX_GRID_YZ) as u32),
            block_dim: BLOCK,
            shared_mem_bytes: 0,
        };
        let (nn, b) = (n as u32, batch as u32);
        // SAFETY: tr_in_place(elem* data, unsigned n, unsigned batch)
        // touches the batch * n * n elements of data (checked above), each
        // tile pair by one block only.
        unsafe { self.gpu().launch(&k).buf_mut(data).arg(&nn).arg(&b).run(config)? };
        Ok(())
    }
}

impl Transpose for CudaPrims {
    type Buf<T: Transposable> = DeviceBuffer<T>;

    fn transpose_batched<T: Transposable>(
        &self,
        src: &DeviceBuffer<T>,
        batch: usize,
        rows: usize,
        cols: usize,
    ) -> Result<DeviceBuffer<T>> {
        check_shape::<T>(src.len(), batch, rows, cols)?;
        // SAFETY: the transpose writes every element of dst.
        let mut dst = unsafe { self.gpu().alloc_uninit::<T>(src.len())? };
        self.transpose_with(TransposeKernel::Best(None), src, &mut dst, batch, rows, cols)?;
        Ok(dst)
    }

    fn transpose_in_place<T: Transposable>(&self, data: &mut DeviceBuffer<T>, batch: usize, n: usize) -> Result<()> {
        self.transpose_in_place_on_device(data, batch, n)
    }
}
