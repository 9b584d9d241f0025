//! Density estimation, filtering and tone mapping of a histogram the GPU
//! filled, on the GPU (kernels/finish.cu): each kernel is the CPU
//! backend's function of the same stage done per cell in double precision,
//! so the CPU and GPU backends finish a histogram alike (tests below).

use warpmc_gpu::{
    DeviceBuffer, DeviceRepr, Gpu, GpuError, Kernel, KernelSource, LaunchConfig, ValidAsZeroBits, grid_1d,
};

use super::codegen::cuda_type;
use crate::render::Precision;
use crate::render::filters::{DensityFilters, SpatialFilter};
use crate::render::frame::LogScale;
use crate::render::histogram::{Bucket, Count};
use crate::render::tonemap::ToneMap;

const FINISH_CU: &str = include_str!("../../../kernels/finish.cu");

/// Bucket types the GPU histogram can hold.
pub(crate) trait GpuBucket: Bucket + Count + DeviceRepr + ValidAsZeroBits {
    /// The bucket type as a [`Precision`].
    const PRECISION: Precision;
}
impl GpuBucket for f32 {
    const PRECISION: Precision = Precision::F32;
}
impl GpuBucket for f64 {
    const PRECISION: Precision = Precision::F64;
}

/// The finishing kernels for buckets of `precision`.
pub(crate) fn finish_source(precision: Precision) -> KernelSource {
    KernelSource::new("finish.cu", FINISH_CU).option(format!("-DFLAME_BUCKET={}", cuda_type(precision)))
}

/// The finishing kernels for one bucket precision (compiled once per
/// device: the module cache of [`Gpu`] serves later frames).
#[derive(Debug, Clone)]
pub(crate) struct Finisher {
    log_scale: Kernel,
    density: Kernel,
    early_clip: Kernel,
    filter_map: Kernel,
}

/// A tone map as finish.cu's `ToneParams`: 8 doubles in its order.
fn tone_params(t: &ToneMap) -> [f64; 8] {
    [
        t.inv_gamma,
        t.vibrancy,
        t.gamma_threshold,
        t.highlight_power,
        t.background[0],
        t.background[1],
        t.background[2],
        if t.transparent { 1.0 } else { 0.0 },
    ]
}

/// 2-D launch over `w × h` threads in 32 × 8 blocks.
fn grid_2d(w: usize, h: usize) -> LaunchConfig {
    LaunchConfig {
        grid_dim: (w.div_ceil(32).max(1) as u32, h.div_ceil(8).max(1) as u32, 1),
        block_dim: (32, 8, 1),
        shared_mem_bytes: 0,
    }
}

impl Finisher {
    pub(crate) fn new(gpu: &Gpu, precision: Precision) -> Result<Self, GpuError> {
        let module = gpu.module(&finish_source(precision))?;
        Ok(Finisher {
            log_scale: module.kernel("flame_log_scale")?,
            density: module.kernel("flame_density")?,
            early_clip: module.kernel("flame_early_clip")?,
            filter_map: module.kernel("flame_filter_map")?,
        })
    }

    /// Adds one pass's histogram (`hw × hh` cells of r, g, b, a; hit
    /// counts in `count`, or equal to a when `count` is `None`) into `acc`,
    /// as the CPU's log scaling or density estimation does.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn accumulate_pass<T: GpuBucket>(
        &self,
        gpu: &Gpu,
        hist: &DeviceBuffer<T>,
        count: Option<&DeviceBuffer<T>>,
        acc: &mut DeviceBuffer<T>,
        hw: usize,
        hh: usize,
        supersample: usize,
        de: Option<&DensityFilters>,
        scale: LogScale,
    ) -> Result<(), GpuError> {
        let LogScale { k1, k2 } = scale;
        let cells = hw * hh;
        assert!(hist.len() >= cells * 4 && acc.len() >= cells * 4 && count.is_none_or(|c| c.len() >= cells));
        match de {
            None => {
                let n = cells as i64;
                // SAFETY: flame_log_scale(hist, acc, cells, k1, k2) reads
                // hist[0..4·cells] and writes acc[0..4·cells], both that long.
                unsafe {
                    gpu.launch(&self.log_scale)
                        .buf(hist)
                        .buf_mut(acc)
                        .arg(&n)
                        .arg(&k1)
                        .arg(&k2)
                        .run(grid_1d(cells, 256))
                }
            }
            Some(de) => {
                let first = supersample - 1;
                let (wi, hi) = (hw.saturating_sub(2 * first), hh.saturating_sub(2 * first));
                if wi == 0 || hi == 0 {
                    return Ok(());
                }
                let coefs = gpu.upload(&de.coefs)?;
                let widths = gpu.upload(&de.widths)?;
                let has_count = i32::from(count.is_some());
                let (w, h, ss) = (hw as i32, hh as i32, supersample as i32);
                let (ks, mi) = (de.kernel_size as i32, de.max_index as i32);
                // SAFETY: flame_density's parameters in order and type; it
                // reads hist (4·hw·hh), count (hw·hh, only when has_count;
                // else hist stands in and is never read through it),
                // coefs (kernel_size per kernel up to max_index) and widths
                // (max_index + 1), and writes acc cells inside hw × hh.
                unsafe {
                    gpu.launch(&self.density)
                        .buf(hist)
                        .buf(count.unwrap_or(hist))
                        .arg(&has_count)
                        .buf_mut(acc)
                        .arg(&w)
                        .arg(&h)
                        .arg(&ss)
                        .buf(&coefs)
                        .buf(&widths)
                        .arg(&ks)
                        .arg(&mi)
                        .arg(&de.max_filtered_counts)
                        .arg(&de.curve)
                        .arg(&k1)
                        .arg(&k2)
                        .run(grid_2d(wi, hi))
                }
            }
        }
    }

    /// The early clip ([`tonemap::clip_early`](crate::render::tonemap)):
    /// the first `cells` cells of `acc` replaced by their display values,
    /// each value multiplied by `tone.cell_scale` first.
    pub(crate) fn clip_early<T: GpuBucket>(
        &self,
        gpu: &Gpu,
        acc: &mut DeviceBuffer<T>,
        cells: usize,
        tone: &ToneMap,
    ) -> Result<(), GpuError> {
        assert!(acc.len() >= cells * 4);
        let params = gpu.upload(&tone_params(tone))?;
        let n = cells as i64;
        // SAFETY: flame_early_clip(acc, cells, tone, scale) reads and writes
        // acc[0..4·cells] (at least that long) and reads the 8 doubles of
        // ToneParams.
        unsafe {
            gpu.launch(&self.early_clip)
                .buf_mut(acc)
                .arg(&n)
                .buf(&params)
                .arg(&tone.cell_scale)
                .run(grid_1d(cells, 256))
        }
    }

    /// Spatial filter and tone mapping into `width × height` pixels (rgb
    /// in [0, 255], alpha in [0, 1]); pixel (i, j) reads the filter window
    /// whose corner is cell `(offset + i·ss, first_row + offset + j·ss)` of
    /// `acc` (`acc_width` cells wide).
    #[cfg(test)]
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn filter_and_map<T: GpuBucket>(
        &self,
        gpu: &Gpu,
        acc: &DeviceBuffer<T>,
        acc_width: usize,
        first_row: usize,
        filter: &SpatialFilter,
        offset: usize,
        supersample: usize,
        tone: &ToneMap,
        width: usize,
        height: usize,
    ) -> Result<Vec<[f32; 4]>, GpuError> {
        let flat =
            self.filter_and_map_flat(gpu, acc, acc_width, first_row, filter, offset, supersample, tone, width, height)?;
        Ok(flat.chunks_exact(4).map(|v| [v[0], v[1], v[2], v[3]]).collect())
    }

    /// [`Finisher::filter_and_map`]'s pixels as they leave the device: r,
    /// g, b, alpha of each in turn.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn filter_and_map_flat<T: GpuBucket>(
        &self,
        gpu: &Gpu,
        acc: &DeviceBuffer<T>,
        acc_width: usize,
        first_row: usize,
        filter: &SpatialFilter,
        offset: usize,
        supersample: usize,
        tone: &ToneMap,
        width: usize,
        height: usize,
    ) -> Result<Vec<f32>, GpuError> {
        let fw = filter.width;
        if width == 0 || height == 0 {
            return Ok(Vec::new());
        }
        let last_cell = (first_row + offset + (height - 1) * supersample + fw - 1) * acc_width
            + offset
            + (width - 1) * supersample
            + fw;
        assert!(last_cell * 4 <= acc.len(), "filter window outside the accumulation buffer");
        let coefs = gpu.upload(&filter.coefs)?;
        let early = i32::from(tone.early_clip);
        let tone = gpu.upload(&tone_params(tone))?;
        let mut out = gpu.alloc_zeros::<f32>(width * height * 4)?;
        let (aw, fr, fwi, off, ss) = (acc_width as i32, first_row as i64, fw as i32, offset as i32, supersample as i32);
        let (w, h) = (width as i32, height as i32);
        // SAFETY: flame_filter_map's parameters in order and type; the
        // windows it reads lie inside acc (checked above), filter holds
        // fw², tone the 8 doubles of ToneParams, out 4·width·height.
        unsafe {
            gpu.launch(&self.filter_map)
                .buf(acc)
                .arg(&aw)
                .arg(&fr)
                .buf(&coefs)
                .arg(&fwi)
                .arg(&off)
                .arg(&ss)
                .buf(&tone)
                .arg(&early)
                .arg(&w)
                .arg(&h)
                .buf_mut(&mut out)
                .run(grid_2d(width, height))?;
        }
        gpu.download(&out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::genome::FilterShape;
    use crate::render::{density, tonemap};

    /// A sparse random histogram with dense clusters (so that density
    /// estimation picks wide and narrow kernels), r, g, b, a, hits.
    fn histogram(w: usize, h: usize, seed: u64, separate_count: bool) -> Vec<[f64; 5]> {
        let mut s = seed;
        let mut next = || {
            s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            s >> 11
        };
        let mut hist = vec![[0.0; 5]; w * h];
        for (k, c) in hist.iter_mut().enumerate() {
            let (x, y) = (k % w, k / w);
            let dense = (x / 16 + y / 16) % 3 == 0;
            let r = next();
            if dense || r % 5 == 0 {
                let hits = if dense { (r % 4000) as f64 } else { (r % 7) as f64 };
                let a = if separate_count { hits * 255.0 * ((r >> 20) % 100) as f64 / 100.0 } else { hits * 255.0 };
                *c = [hits * ((r >> 8) % 256) as f64, hits * ((r >> 16) % 256) as f64, hits * 40.0, a, hits * 255.0];
            }
        }
        // A cell past flam3's ceiling of 2^32 - 1 in its alpha, hits and
        // one colour: both backends read it held there.
        hist[(h / 2) * w + w / 2] = [6e9, 3e9, 1e9, 7e9, 7e9];
        hist
    }

    fn compare(what: &str, gpu: &[[f32; 4]], cpu: &[[f64; 4]], tol: f64) {
        assert_eq!(gpu.len(), cpu.len());
        let mut worst = 0.0f64;
        for (k, (g, c)) in gpu.iter().zip(cpu).enumerate() {
            for ch in 0..4 {
                let scale = if ch == 3 { 1.0 } else { 255.0 };
                let d = (f64::from(g[ch]) - c[ch]).abs() / scale;
                worst = worst.max(d);
                assert!(d <= tol, "{what}: pixel {k} channel {ch}: gpu {} cpu {}", g[ch], c[ch]);
            }
        }
        eprintln!("{what}: largest difference {worst:e} of full scale");
    }

    fn finish_both<T: GpuBucket>(gpu: &Gpu, precision: Precision, de: bool, separate_count: bool, tol: f64) {
        let (hw, hh, ss) = (203usize, 157usize, 2usize);
        let filter = SpatialFilter::new(FilterShape::Gaussian, 1.0, ss as u32, 1.0, false).unwrap();
        let offset = 3usize;
        let (width, height) = ((hw - 2 * offset - filter.width) / ss + 1, (hh - 2 * offset - filter.width) / ss + 1);
        let dens = DensityFilters::new(9.0, 0.0, 0.4, ss as u32).unwrap();
        let hist = histogram(hw, hh, 99, separate_count);
        let (k1, k2) = (3.1, 2.3e-4);
        let tone = ToneMap {
            inv_gamma: 1.0 / 3.7,
            vibrancy: 0.8,
            gamma_threshold: 0.02,
            highlight_power: if de { 0.5 } else { -1.0 },
            background: [20.0, 0.0, 200.0],
            transparent: separate_count,
            early_clip: false,
            cell_scale: 1.0,
        };

        // CPU, in the bucket type.
        let cells: Vec<[T; 5]> = hist.iter().map(|c| c.map(T::from_f64)).collect();
        let mut acc = vec![[T::from_f64(0.0); 4]; hw * hh];
        if de {
            density::density_estimate(&cells, &mut acc, hw, hh, ss, &dens, k1, k2, None);
        } else {
            density::log_scale(&cells, &mut acc, hw, k1, k2);
        }
        let mut cpu = vec![[0.0f64; 4]; width * height];
        tonemap::filter_and_map(&acc, hw, &filter, offset, ss, &tone, width, &mut cpu, None);

        // GPU.
        let finisher = Finisher::new(gpu, precision).unwrap();
        let flat: Vec<T> = cells.iter().flat_map(|c| [c[0], c[1], c[2], c[3]]).collect();
        let counts: Vec<T> = cells.iter().map(|c| c[4]).collect();
        let d_hist = gpu.upload(&flat).unwrap();
        let d_count = gpu.upload(&counts).unwrap();
        let mut d_acc = gpu.alloc_zeros::<T>(hw * hh * 4).unwrap();
        let count = separate_count.then_some(&d_count);
        let de_f = de.then_some(&dens);
        finisher.accumulate_pass(gpu, &d_hist, count, &mut d_acc, hw, hh, ss, de_f, LogScale { k1, k2 }).unwrap();
        let acc_gpu = gpu.download(&d_acc).unwrap();
        let mut worst = 0.0f64;
        let top = acc.iter().map(|c| c[3].to_f64()).fold(0.0, f64::max);
        for (g, c) in acc_gpu.chunks_exact(4).zip(&acc) {
            for ch in 0..4 {
                worst = worst.max((g[ch].to_f64() - c[ch].to_f64()).abs() / top);
            }
        }
        eprintln!("accumulation ({precision:?}, de {de}): largest difference {worst:e} of the largest alpha");
        assert!(worst <= tol, "accumulation buffers differ by {worst:e} of the largest alpha");
        let px = finisher.filter_and_map(gpu, &d_acc, hw, 0, &filter, offset, ss, &tone, width, height).unwrap();
        compare(&format!("pixels ({precision:?}, de {de}, count {separate_count})"), &px, &cpu, tol.max(1e-5));

        // The lower part of the frame alone, as a strip would ask for it.
        let r0 = height / 3;
        let strip =
            finisher.filter_and_map(gpu, &d_acc, hw, r0 * ss, &filter, offset, ss, &tone, width, height - r0).unwrap();
        assert_eq!(strip, px[r0 * width..]);

        // Clipping early: every cell mapped (with a scale) before the filter.
        let early = ToneMap { early_clip: true, cell_scale: 1.7, ..tone };
        tonemap::clip_early(&mut acc, &early);
        tonemap::filter_and_map(&acc, hw, &filter, offset, ss, &early, width, &mut cpu, None);
        finisher.clip_early(gpu, &mut d_acc, hw * hh, &early).unwrap();
        let mapped = gpu.download(&d_acc).unwrap();
        for (k, (g, c)) in mapped.chunks_exact(4).zip(&acc).enumerate() {
            for ch in 0..4 {
                let (g, c) = (g[ch].to_f64(), c[ch].to_f64());
                let top = if ch == 3 { 1.0 } else { 255.0 };
                assert!((0.0..=top).contains(&g), "cell {k} channel {ch}: {g} outside [0, {top}]");
                assert!((g - c).abs() <= tol.max(1e-5) * top, "cell {k} channel {ch}: gpu {g} cpu {c}");
            }
        }
        let px = finisher.filter_and_map(gpu, &d_acc, hw, 0, &filter, offset, ss, &early, width, height).unwrap();
        compare(&format!("early clip ({precision:?}, de {de}, count {separate_count})"), &px, &cpu, tol.max(1e-5));
    }

    #[test]
    fn gpu_finishing_matches_cpu() {
        let Some(gpu) = warpmc_testkit::gpu_or_skip("gpu_finishing_matches_cpu") else { return };
        for de in [false, true] {
            for separate_count in [false, true] {
                finish_both::<f64>(&gpu, Precision::F64, de, separate_count, 1e-9);
                finish_both::<f32>(&gpu, Precision::F32, de, separate_count, 1e-4);
            }
        }
    }
}
