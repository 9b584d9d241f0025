//! Density estimation, filtering and tone mapping of a histogram the GPU
//! filled. For now these run on the CPU (the CPU backend's own code): the
//! histogram and the accumulation buffer are copied to the host. A GPU
//! version is the next step (issue 9, point 3).

use warpmc_gpu::{DeviceBuffer, DeviceRepr, Gpu, GpuError, ValidAsZeroBits};

use crate::render::filters::{DensityFilters, SpatialFilter};
use crate::render::tonemap::{self, ToneMap};
use crate::render::{Bucket, Precision, density};

/// Bucket types the GPU histogram can hold.
pub(crate) trait GpuBucket: Bucket + DeviceRepr + ValidAsZeroBits {}
impl GpuBucket for f32 {}
impl GpuBucket for f64 {}

/// The finishing stages of a GPU render.
#[derive(Debug)]
pub(crate) struct Finisher;

impl Finisher {
    pub(crate) fn new(_gpu: &Gpu, _precision: Precision) -> Result<Self, GpuError> {
        Ok(Finisher)
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
        k1: f64,
        k2: f64,
    ) -> Result<(), GpuError> {
        let h = gpu.download(hist)?;
        let c = count.map(|c| gpu.download(c)).transpose()?;
        let cells: Vec<[T; 5]> = h
            .chunks_exact(4)
            .enumerate()
            .map(|(i, v)| [v[0], v[1], v[2], v[3], c.as_ref().map_or(v[3], |c| c[i])])
            .collect();
        let a = gpu.download(acc)?;
        let mut a: Vec<[T; 4]> = a.chunks_exact(4).map(|v| [v[0], v[1], v[2], v[3]]).collect();
        match de {
            Some(de) => density::density_estimate(&cells, &mut a, hw, hh, supersample, de, k1, k2),
            None => density::log_scale(&cells, &mut a, hw, k1, k2),
        }
        let flat: Vec<T> = a.iter().flatten().copied().collect();
        gpu.copy_to_device(&flat, acc)
    }

    /// Spatial filter and tone mapping of `acc` into `width × height`
    /// pixels (rgb in [0, 255], alpha in [0, 1]).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn filter_and_map<T: GpuBucket>(
        &self,
        gpu: &Gpu,
        acc: &DeviceBuffer<T>,
        acc_width: usize,
        filter: &SpatialFilter,
        offset: usize,
        supersample: usize,
        tone: &ToneMap,
        width: usize,
        height: usize,
    ) -> Result<Vec<[f32; 4]>, GpuError> {
        let a = gpu.download(acc)?;
        let a: Vec<[T; 4]> = a.chunks_exact(4).map(|v| [v[0], v[1], v[2], v[3]]).collect();
        let mut px = vec![[0.0f64; 4]; width * height];
        tonemap::filter_and_map(&a, acc_width, filter, offset, supersample, tone, width, &mut px);
        Ok(px.into_iter().map(|p| p.map(|v| v as f32)).collect())
    }
}
