//! What a frame costs, worked out from the genome and the settings before
//! anything is allocated: the chaos game's iterations, and the memory each
//! renderer holds at its peak. A genome that asks for more than can be
//! counted or held is one clear error instead of a hang, an abort or an
//! out-of-memory kill.
//!
//! The byte counts follow the renderers' allocations (`cpu.rs`,
//! `cuda/backend.rs`, `cuda/finish.rs`, `frame.rs`, `filters.rs`) and are
//! computed in f64, so that no absurd genome can overflow them.

use warpmc_host::memory::{available_memory, human_bytes};

use super::chaos::CHOOSE_GRAIN;
use super::filters::DensityFilters;
use super::frame::{FrameSizes, check_iterations, frame_iterations, frame_sizes};
use super::{Precision, RenderSettings};
use crate::error::{FlameError, Result};
use crate::genome::Flame;
use crate::interpolate::interpolate;

/// What rendering one frame takes ([`frame_cost`](super::frame_cost),
/// `cuda::CudaRenderer::frame_cost`), worked out before anything is
/// allocated.
#[derive(Clone, Debug, PartialEq)]
pub struct FrameCost {
    /// Output size in pixels.
    pub width: u32,
    /// Output height in pixels.
    pub height: u32,
    /// Histogram cells (supersampled, with the gutter the filters need).
    pub cells: u64,
    /// Chaos-game iterations of the whole frame, every pass and temporal
    /// sample together (flam3's `quality · 2^(2·zoom)` samples per pixel).
    pub iterations: u64,
    /// Passes (flam3's `nbatches`), each clearing and finishing the
    /// histogram.
    pub passes: u32,
    /// Temporal samples per pass.
    pub temporal_samples: u32,
    /// Host memory the renderer holds at its peak, in bytes, the finished
    /// pixels included.
    pub host_bytes: u64,
    /// Device memory of one strip, in bytes (0 on the CPU).
    pub device_bytes: u64,
    /// Horizontal strips the frame is rendered in (1 on the CPU, which
    /// renders a frame whole).
    pub strips: u32,
    /// What the host memory holds, for messages: the parts that matter.
    host_parts: String,
    /// The host memory without saturation.
    host_exact: f64,
    /// Whether the renderer could have split the frame into strips.
    in_strips: bool,
    /// The host memory of the temporal samples' times and weights.
    temporal_bytes: f64,
}

impl FrameCost {
    /// An [`FlameError::OutOfHostMemory`] unless [`FrameCost::host_bytes`]
    /// fit in what the process may still allocate (the system's available
    /// memory, a cgroup's or `ulimit -v`'s limit; see
    /// [`warpmc_host::memory`]). The message names the sizes needed and
    /// available.
    pub fn check_host_memory(&self) -> Result<()> {
        let what = format!("a {} × {} frame ({})", self.width, self.height, self.host_parts);
        let checked = if self.host_exact < 9.2e18 {
            warpmc_host::check_allocation(&what, self.host_bytes)
        } else {
            Err(format!("{what} needs {} of host memory but only {} is free", bytes(self.host_exact), host_budget()))
        };
        checked.map_err(|m| {
            let advice = if self.temporal_bytes >= 0.5 * self.host_exact {
                "; lower the passes or the temporal samples (the genome's passes and temporal_samples, or \
                 --temporal-samples)"
            } else if self.in_strips {
                "; reduce the size, the supersampling or the size scale"
            } else {
                "; the CPU renderer holds a frame whole: reduce the size, the supersampling or the size scale (the \
                 CUDA renderer keeps only the finished pixels of a frame in host memory)"
            };
            FlameError::OutOfHostMemory(m + advice)
        })
    }
}

/// Bytes for messages: a binary prefix, or scientific notation beyond
/// what 64 bits count.
pub(crate) fn bytes(x: f64) -> String {
    if x < 9.2e18 { human_bytes(x as u64) } else { format!("{x:.3e} bytes") }
}

/// Every size of a frame, worked out without allocating: the buffers'
/// geometry, the iterations, and the host memory the kernels, tables and
/// temporal samples take on either renderer.
#[derive(Clone, Debug)]
pub(crate) struct Sizing {
    pub(crate) sizes: FrameSizes,
    /// Chaos-game iterations of the frame.
    pub(crate) iterations: f64,
    pub(crate) passes: usize,
    pub(crate) ntemporal: usize,
    /// The spatial filter kernel and the largest bank of density
    /// estimation kernels any pass builds (f64 coefficients).
    pub(crate) kernel_bytes: f64,
    /// The xform-choice tables of the chaos game (u16 entries).
    pub(crate) table_bytes: f64,
    /// Times and weights of every temporal sample of every pass.
    pub(crate) temporal_bytes: f64,
}

impl Sizing {
    /// The sizes of the frame at `time` of `flames` (already scaled); an
    /// error for a setting no renderer can render.
    pub(crate) fn new(flames: &[Flame], time: f64, settings: &RenderSettings) -> Result<Self> {
        if !time.is_finite() {
            return Err(FlameError::invalid(format!("the frame's time must be finite, not {time}")));
        }
        let cp0 = interpolate(flames, time);
        let sizes = frame_sizes(flames, &cp0, settings.pixel_aspect, settings.field)?;
        if cp0.quality.is_nan() || cp0.quality <= 0.0 {
            // The genome's value, which the scaled one would hide.
            let scaled = if settings.quality_scale == 1.0 {
                String::new()
            } else {
                format!(
                    " (the genome's {} times the quality scale {})",
                    super::shown(cp0.quality / settings.quality_scale),
                    super::shown(settings.quality_scale)
                )
            };
            return Err(FlameError::invalid(format!(
                "quality must be greater than zero, not {}{scaled}",
                super::shown(cp0.quality)
            )));
        }
        // The flame at the frame's time must have xforms to iterate (a
        // keyframe of zero weights must fail here, before a file's or an
        // animation's earlier frames are rendered and written).
        super::check_iterable(&cp0)?;
        let iterations = frame_iterations(&cp0);
        check_iterations(iterations, &cp0)?;
        let passes = cp0.passes.max(1) as usize;
        let ntemporal = settings.temporal_samples.unwrap_or(1).max(1) as usize;
        check_some_iterations(flames, &cp0, iterations, passes, ntemporal)?;

        let spatial = (sizes.filter_width as f64).powi(2) * 8.0;
        // Each pass builds the bank of its flame; the control points and
        // the frame's own flame stand for them.
        let mut density = 0.0f64;
        for f in flames.iter().chain(std::iter::once(&cp0)) {
            if f.estimator_radius > 0.0 {
                let (kernels, per_kernel) = DensityFilters::bank_size(
                    f.estimator_radius,
                    f.estimator_minimum,
                    f.estimator_curve,
                    cp0.supersample,
                )?;
                density = density.max(kernels as f64 * (per_kernel as f64 + 1.0) * 8.0);
            }
        }
        let rows = flames
            .iter()
            .map(|f| if f.xforms.iter().any(|x| !x.chaos.is_empty()) { f.xforms.len() + 1 } else { 1 })
            .max()
            .unwrap_or(1);
        let table_bytes = (rows * CHOOSE_GRAIN * 2) as f64;
        // Times and weights per sample, and the jobs of one pass.
        let temporal_bytes = passes as f64 * ntemporal as f64 * 16.0 + ntemporal as f64 * 24.0;
        Ok(Sizing {
            sizes,
            iterations,
            passes,
            ntemporal,
            kernel_bytes: spatial + density,
            table_bytes,
            temporal_bytes,
        })
    }

    /// Output pixels.
    pub(crate) fn pixels(&self) -> f64 {
        self.sizes.width as f64 * self.sizes.height as f64
    }

    /// The cost on the CPU renderer with buckets of `precision`, on
    /// `threads` threads with sub-batches of `sub_batch` iterations.
    pub(crate) fn cpu_cost(&self, precision: Precision, threads: usize, sub_batch: usize) -> FrameCost {
        let b = precision.bytes() as f64;
        let cells = self.sizes.cells() as f64;
        let threads = threads.max(1) as f64;
        // A round holds 4 sub-batches' samples per thread, and each
        // running sub-batch its raw samples too: 12 bytes a sample. Band
        // offsets: one u32 per band (4 per thread) per sub-batch.
        let per_batch = (sub_batch.max(1) as f64).min(self.iterations.max(1.0));
        let samples = 5.0 * threads * per_batch * 12.0 + 4.0 * threads * (4.0 * threads + 2.0) * 4.0;
        let histogram = cells * 5.0 * b;
        let accumulation = cells * 4.0 * b;
        let pixels = self.pixels() * 32.0;
        let shared = self.table_bytes + self.temporal_bytes;
        // The histogram is freed before the pixels are made.
        let iterating = histogram + accumulation + self.kernel_bytes + shared + samples;
        let finishing = accumulation + self.kernel_bytes + shared + pixels;
        let host = iterating.max(finishing);
        let parts = [
            (format!("histogram and accumulation buffer of {} cells", self.sizes.cells()), histogram + accumulation),
            ("filter kernels".to_string(), self.kernel_bytes),
            ("finished pixels, made once the histogram is freed".to_string(), pixels),
            ("temporal samples".to_string(), self.temporal_bytes),
            ("chaos-game tables".to_string(), self.table_bytes),
        ];
        self.cost(host, 0.0, 1, parts_of(host, &parts), false)
    }

    /// A [`FrameCost`] with the memory given (`host_parts` says what the
    /// host memory holds).
    pub(crate) fn cost(&self, host: f64, device: f64, strips: usize, host_parts: String, in_strips: bool) -> FrameCost {
        let saturate = |x: f64| if x < 1.8e19 { x as u64 } else { u64::MAX };
        FrameCost {
            width: self.sizes.width as u32,
            height: self.sizes.height as u32,
            cells: self.sizes.cells(),
            iterations: saturate(self.iterations.round()),
            passes: self.passes as u32,
            temporal_samples: self.ntemporal as u32,
            host_bytes: saturate(host),
            host_exact: host,
            device_bytes: saturate(device),
            strips: strips as u32,
            host_parts,
            in_strips,
            temporal_bytes: self.temporal_bytes,
        }
    }
}

/// An error unless each chaos-game job of the frame gets at least one
/// iteration. The frame's iterations are shared among its passes and
/// (for an animation) its temporal samples, each share rounded: when the
/// shares round to zero, nothing is drawn and the image is only the
/// background.
fn check_some_iterations(
    flames: &[Flame],
    cp0: &Flame,
    iterations: f64,
    passes: usize,
    ntemporal: usize,
) -> Result<()> {
    // A still runs its temporal samples as one job.
    let jobs = if flames.len() == 1 { passes } else { passes * ntemporal };
    if (iterations / jobs as f64).round() >= 1.0 {
        return Ok(());
    }
    let shares = if jobs > 1 {
        format!(
            " shared among {passes} pass(es) × {} temporal sample(s)",
            if flames.len() == 1 { 1 } else { ntemporal }
        )
    } else {
        String::new()
    };
    let fewer = if jobs > passes { ", or lower the temporal samples" } else { "" };
    // Samples per pixel go with 4^zoom: a negative zoom takes them away.
    let (zoomed, raise_zoom) = if cp0.zoom < 0.0 {
        (format!(" at zoom {}", approx(cp0.zoom)), ", or raise the zoom")
    } else {
        (String::new(), "")
    };
    Err(FlameError::invalid(format!(
        "quality {}{zoomed} gives {} chaos-game iterations for the {} × {} frame{shares}, which round to none: the \
         image would be empty; raise the quality or the quality scale{raise_zoom}{fewer}",
        approx(cp0.quality),
        approx(iterations),
        cp0.width,
        cp0.height
    )))
}

/// `x` to four significant digits or so, for messages: 0.0614, 3.072,
/// 2e-5.
fn approx(x: f64) -> String {
    if x != 0.0 && (1e-3..1e6).contains(&x.abs()) {
        let digits = (3 - x.abs().log10().floor() as i32).max(0) as usize;
        let s = format!("{x:.digits$}");
        if s.contains('.') { s.trim_end_matches('0').trim_end_matches('.').to_string() } else { s }
    } else {
        let s = format!("{x:.3e}");
        match s.split_once('e') {
            Some((m, e)) if m.contains('.') => format!("{}e{e}", m.trim_end_matches('0').trim_end_matches('.')),
            _ => s,
        }
    }
}

/// The parts of `total` worth naming (1 % of it or more), as "name: size;
/// …".
pub(crate) fn parts_of(total: f64, parts: &[(String, f64)]) -> String {
    let named: Vec<String> =
        parts.iter().filter(|(_, b)| *b >= 0.01 * total).map(|(name, b)| format!("{name}: {}", bytes(*b))).collect();
    named.join("; ")
}

/// The memory a process may still allocate, for messages.
pub(crate) fn host_budget() -> String {
    available_memory().map_or_else(|| "unknown".to_string(), |b| b.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::genome::{Affine, XForm};
    use crate::render::cpu::CpuBackend;
    use crate::variations::{VariationKind, VariationSpec};

    fn flame(width: u32, height: u32) -> Flame {
        let mut f = Flame { width, height, scale: 10.0, quality: 1.0, ..Flame::default() };
        let mut x = XForm::flam3_default(0);
        x.weight = 1.0;
        x.coefs = Affine::from_xml_order([0.5, 0.0, 0.0, 0.5, 0.0, 0.0]);
        x.variations = vec![VariationSpec::new(VariationKind::from_name("linear").unwrap(), 1.0)];
        f.xforms.push(x);
        f
    }

    /// The estimate is at least what the CPU backend allocates, and not
    /// far above it.
    #[test]
    fn the_cpu_estimate_covers_the_buffers_allocated() {
        for (ss, radius, precision) in [(1, 0.0, Precision::F32), (2, 3.0, Precision::F64), (3, 9.0, Precision::F32)] {
            let mut f = flame(300, 200);
            f.supersample = ss;
            f.estimator_radius = radius;
            let flames = [f];
            let settings = RenderSettings { precision, ..RenderSettings::default() };
            let sizing = Sizing::new(&flames, 0.0, &settings).unwrap();
            let cost = sizing.cpu_cost(precision, 4, 10_000);
            let g = sizing.sizes.geometry(&flames).unwrap();
            let buffers = match precision {
                Precision::F32 => CpuBackend::<f32>::new(&g, &settings).unwrap().buffer_bytes(),
                Precision::F64 => CpuBackend::<f64>::new(&g, &settings).unwrap().buffer_bytes(),
            };
            let kernels = g.filter.coefs.len() * 8
                + if radius > 0.0 {
                    let de = DensityFilters::new(radius, 0.0, 0.4, ss).unwrap();
                    (de.coefs.len() + de.widths.len()) * 8
                } else {
                    0
                };
            let allocated = (buffers + kernels) as u64;
            assert!(cost.host_bytes >= allocated, "{cost:?} < {allocated}");
            assert!(cost.host_bytes < allocated + (4 << 20), "{cost:?} ≫ {allocated}");
        }
    }

    #[test]
    fn a_30000_square_frame_needs_tens_of_gigabytes() {
        let flames = [flame(30_000, 30_000)];
        let settings = RenderSettings::default();
        let cost = Sizing::new(&flames, 0.0, &settings).unwrap().cpu_cost(Precision::F32, 8, 10_000);
        // 9·10⁸ cells, the histogram's gutter (for the default density
        // estimation radius of 9) included; at the peak the
        // accumulation buffer (16 bytes a cell) and the finished pixels
        // (32 bytes each).
        assert!(cost.cells >= 900_000_000 && cost.cells < 901_100_000, "{cost:?}");
        assert!(cost.host_bytes > 43_200_000_000 && cost.host_bytes < 43_300_000_000, "{cost:?}");
        assert_eq!(cost.iterations, 900_000_000);
    }
}
