//! The three filters of flam3's pipeline: the spatial filter that turns
//! supersampled cells into output pixels, the density-estimation kernels
//! whose width shrinks as a cell's hit count grows, and the temporal filter
//! that weights the time samples of a frame.
//!
//! Shapes, supports, kernel sizes and normalisations follow flam3 3.1.1 so
//! that images match flam3-render's.

use super::{shown, try_buffer};
use crate::error::{FlameError, Result};
use crate::genome::{FilterShape, TemporalFilter};

/// The shape whose kernel flam3-render draws for `shape`. flam3 3.1.1
/// numbers the spatial filters twice: its parser (filters.h) gives
/// lanczos3, lanczos2, mitchell, blackman, catrom, hamming and hanning the
/// numbers 6 … 12 in that order, while its support table and kernel switch
/// (filters.c) read 6 … 12 as mitchell, blackman, catrom, hanning, hamming,
/// lanczos3, lanczos2. So those seven names draw another name's kernel,
/// with that kernel's support. warpmc draws what flam3 draws, so that
/// images match flam3-render's (the names are read and written unchanged).
pub(crate) fn flam3_kernel(shape: FilterShape) -> FilterShape {
    match shape {
        FilterShape::Lanczos3 => FilterShape::Mitchell,
        FilterShape::Lanczos2 => FilterShape::Blackman,
        FilterShape::Mitchell => FilterShape::Catrom,
        FilterShape::Blackman => FilterShape::Hanning,
        FilterShape::Catrom => FilterShape::Hamming,
        FilterShape::Hamming => FilterShape::Lanczos3,
        FilterShape::Hanning => FilterShape::Lanczos2,
        other => other,
    }
}

/// Half-width of the support of the kernel named `shape` (its formula,
/// before [`flam3_kernel`]), in flam3's units.
pub(crate) fn support(shape: FilterShape) -> f64 {
    match shape {
        FilterShape::Gaussian => 1.5,
        FilterShape::Hermite => 1.0,
        FilterShape::Box => 0.5,
        FilterShape::Triangle => 1.0,
        FilterShape::Bell => 1.5,
        FilterShape::BSpline => 2.0,
        FilterShape::Mitchell => 2.0,
        FilterShape::Blackman => 1.0,
        FilterShape::Catrom => 2.0,
        FilterShape::Hanning => 1.0,
        FilterShape::Hamming => 1.0,
        FilterShape::Lanczos3 => 3.0,
        FilterShape::Lanczos2 => 2.0,
        FilterShape::Quadratic => 1.5,
    }
}

fn sinc(x: f64) -> f64 {
    let x = x * std::f64::consts::PI;
    if x != 0.0 { x.sin() / x } else { 1.0 }
}

fn gaussian(x: f64) -> f64 {
    (-2.0 * x * x).exp() * (2.0 / std::f64::consts::PI).sqrt()
}

// Mitchell–Netravali with B = C = 1/3.
const MITCHELL_B: f64 = 1.0 / 3.0;
const MITCHELL_C: f64 = 1.0 / 3.0;

/// The one-dimensional kernel named `shape` at `x` (its formula, before
/// [`flam3_kernel`]).
pub(crate) fn shape_value(shape: FilterShape, x: f64) -> f64 {
    use std::f64::consts::PI;
    match shape {
        FilterShape::Gaussian => gaussian(x),
        FilterShape::Hermite => {
            let t = x.abs();
            if t < 1.0 { (2.0 * t - 3.0) * t * t + 1.0 } else { 0.0 }
        }
        FilterShape::Box => {
            if x > -0.5 && x <= 0.5 {
                1.0
            } else {
                0.0
            }
        }
        FilterShape::Triangle => {
            let t = x.abs();
            if t < 1.0 { 1.0 - t } else { 0.0 }
        }
        FilterShape::Bell => {
            let t = x.abs();
            if t < 0.5 {
                0.75 - t * t
            } else if t < 1.5 {
                let u = t - 1.5;
                0.5 * u * u
            } else {
                0.0
            }
        }
        FilterShape::BSpline => {
            let t = x.abs();
            if t < 1.0 {
                let tt = t * t;
                0.5 * tt * t - tt + 2.0 / 3.0
            } else if t < 2.0 {
                let u = 2.0 - t;
                u * u * u / 6.0
            } else {
                0.0
            }
        }
        FilterShape::Mitchell => {
            // flam3 squares x before taking its absolute value; the same
            // thing, since x² does not care.
            let tt = x * x;
            let t = x.abs();
            let (b, c) = (MITCHELL_B, MITCHELL_C);
            if t < 1.0 {
                ((12.0 - 9.0 * b - 6.0 * c) * (t * tt) + (-18.0 + 12.0 * b + 6.0 * c) * tt + (6.0 - 2.0 * b)) / 6.0
            } else if t < 2.0 {
                ((-b - 6.0 * c) * (t * tt)
                    + (6.0 * b + 30.0 * c) * tt
                    + (-12.0 * b - 48.0 * c) * t
                    + (8.0 * b + 24.0 * c))
                    / 6.0
            } else {
                0.0
            }
        }
        // The cosine terms summed first, as flam3-render's -ffast-math
        // build does: at x = ±1 that gives 0 where left to right gives
        // −1.4·10⁻¹⁷, and the sign decides flam3's white specks (see
        // SpatialFilter::new).
        FilterShape::Blackman => sinc(x) * (0.42 + (0.5 * (PI * x).cos() + 0.08 * (2.0 * PI * x).cos())),
        FilterShape::Catrom => {
            if x < -2.0 {
                0.0
            } else if x < -1.0 {
                0.5 * (4.0 + x * (8.0 + x * (5.0 + x)))
            } else if x < 0.0 {
                0.5 * (2.0 + x * x * (-5.0 - 3.0 * x))
            } else if x < 1.0 {
                0.5 * (2.0 + x * x * (-5.0 + 3.0 * x))
            } else if x < 2.0 {
                0.5 * (4.0 + x * (-8.0 + x * (5.0 - x)))
            } else {
                0.0
            }
        }
        FilterShape::Hanning => sinc(x) * (0.5 + 0.5 * (PI * x).cos()),
        FilterShape::Hamming => sinc(x) * (0.54 + 0.46 * (PI * x).cos()),
        // flam3 multiplies its Lanczos windows by one more sinc of the same
        // stretch; kept, since it shapes flam3's images.
        FilterShape::Lanczos3 => {
            let t = x.abs();
            let l = if t < 3.0 { sinc(t) * sinc(t / 3.0) } else { 0.0 };
            l * sinc(x / 3.0)
        }
        FilterShape::Lanczos2 => {
            let t = x.abs();
            let l = if t < 2.0 { sinc(t) * sinc(t / 2.0) } else { 0.0 };
            l * sinc(x / 2.0)
        }
        FilterShape::Quadratic => {
            if x < -1.5 {
                0.0
            } else if x < -0.5 {
                0.5 * (x + 1.5) * (x + 1.5)
            } else if x < 0.5 {
                0.75 - x * x
            } else if x < 1.5 {
                0.5 * (x - 1.5) * (x - 1.5)
            } else {
                0.0
            }
        }
    }
}

/// A square spatial filter kernel over histogram cells, normalised to sum 1.
#[derive(Clone, Debug)]
pub(crate) struct SpatialFilter {
    /// Side length in cells; same parity as the supersampling factor so the
    /// kernel centres on an output pixel.
    pub(crate) width: usize,
    /// `width × width` weights, row-major.
    pub(crate) coefs: Vec<f64>,
}

/// The widest kernel (spatial filter or density estimation) accepted, in
/// histogram cells: far beyond any real genome's (flam3's default spatial
/// kernel is 5 cells wide), and small enough that sizes computed from it
/// cannot overflow; the memory check refuses most kernels well below it.
pub(crate) const MAX_KERNEL_CELLS: f64 = 1e9;

impl SpatialFilter {
    /// The kernel's side in cells for a radius in output pixels at
    /// `supersample` cells per pixel, as flam3's
    /// `flam3_create_spatial_filter` computes it: `(int) fw + 1`, one more
    /// for the parity of the supersampling. flam3 refuses a radius that
    /// leaves no cell (a negative one below about −1/(2·support·ss)); so
    /// does this, and a radius whose kernel would be absurdly wide.
    /// `pixel_aspect` (width over height of a pixel, flam3-render's
    /// `pixel_aspect`) widens the kernel, in cells, by its inverse.
    pub(crate) fn width(shape: FilterShape, radius: f64, supersample: u32, pixel_aspect: f64) -> Result<usize> {
        let fw = 2.0 * support(flam3_kernel(shape)) * f64::from(supersample) * radius / pixel_aspect;
        if fw.is_nan() || fw >= MAX_KERNEL_CELLS {
            let at =
                if pixel_aspect == 1.0 { String::new() } else { format!(" at pixel aspect {}", shown(pixel_aspect)) };
            return Err(FlameError::invalid(format!(
                "spatial filter radius {}{at} is too large: its kernel would be {fw:.3e} cells wide",
                shown(radius)
            )));
        }
        let mut width = fw.trunc() as i64 + 1;
        if (width ^ i64::from(supersample)) & 1 == 1 {
            width += 1;
        }
        if width <= 0 {
            return Err(too_small(radius));
        }
        Ok(width as usize)
    }

    /// The kernel for a radius in output pixels at `supersample` cells per
    /// pixel (whole frames). Pixels `pixel_aspect` times as wide as they
    /// are high take flam3's kernel for them: the window 1/aspect times as
    /// many cells wide, and the vertical argument divided by the aspect,
    /// so that the kernel spans 1/aspect times its cells across and as many
    /// as before down: the same shape on the display. A `field` (one of an
    /// interlaced frame's, whose rows are twice as tall) doubles the
    /// vertical argument, as flam3 does.
    pub(crate) fn new(
        shape: FilterShape,
        radius: f64,
        supersample: u32,
        pixel_aspect: f64,
        field: bool,
    ) -> Result<Self> {
        let width = Self::width(shape, radius, supersample, pixel_aspect)?;
        let kernel = flam3_kernel(shape);
        let supp = support(kernel);
        let fw = 2.0 * supp * f64::from(supersample) * radius / pixel_aspect;
        let adjust = if fw > 0.0 { supp * width as f64 / fw } else { 1.0 };
        let mut coefs = try_buffer(width * width, 0.0, "the spatial filter kernel")?;
        // flam3-render is built with -ffast-math (flam3's Makefile.am), and
        // GCC then divides by the width as a multiplication by its
        // reciprocal. The sample points move in their last bits, which
        // decides the sign of kernel values that are 0 in exact arithmetic
        // (catrom at ±1: −4.4·10⁻¹⁶ there) and with it where flam3's images
        // show white specks: an empty cell beside a hit filters to a tiny
        // negative density, NaN under the gamma, 255 after flam3's clamps
        // (ToneMap::map).
        let inv_width = 1.0 / width as f64;
        for j in 0..width {
            for i in 0..width {
                let ii = ((2.0 * i as f64 + 1.0) * inv_width - 1.0) * adjust;
                let jj =
                    ((2.0 * j as f64 + 1.0) * inv_width - 1.0) * adjust * if field { 2.0 } else { 1.0 } / pixel_aspect;
                coefs[i + j * width] = shape_value(kernel, ii) * shape_value(kernel, jj);
            }
        }
        let sum: f64 = coefs.iter().sum();
        if sum == 0.0 || !sum.is_finite() {
            return Err(too_small(radius));
        }
        coefs.iter_mut().for_each(|c| *c /= sum);
        Ok(SpatialFilter { width, coefs })
    }
}

/// flam3's refusal of a radius whose kernel has no weight ("Spatial filter
/// value is too small").
fn too_small(radius: f64) -> FlameError {
    FlameError::invalid(format!(
        "spatial filter radius {} is too small to give a kernel (flam3 refuses it too)",
        shown(radius)
    ))
}

/// Cells with at most this many hits get a kernel each; above it kernels
/// are shared by ranges of counts (flam3's `DE_THRESH`).
pub(crate) const DE_THRESH: usize = 100;

/// Kernels kept one per count before they are shared (flam3's
/// `keep_thresh`).
const KEEP: usize = 100;

/// The sizes of a bank of density-estimation kernels and the constants
/// they come with.
struct BankPlan {
    /// Kernels, and coefficients per kernel.
    sizes: (usize, usize),
    half_size: usize,
    comp_max: f64,
    comp_min: f64,
    max_filtered_counts: f64,
}

/// The bank of density-estimation kernels: kernel `k` is a Gaussian of
/// radius `max·ss+1` shrunk by `(k+1)^curve`, down to `min·ss+1`. Only the
/// octant `0 ≤ dx ≤ dy` of each kernel is stored.
#[derive(Clone, Debug)]
pub(crate) struct DensityFilters {
    /// Entries per kernel (the octant).
    pub(crate) kernel_size: usize,
    /// Largest half-size of any kernel, in cells.
    pub(crate) half_size: usize,
    /// Kernel `k` occupies `coefs[k·kernel_size ..][..kernel_size]`.
    pub(crate) coefs: Vec<f64>,
    /// Radius of each kernel.
    pub(crate) widths: Vec<f64>,
    /// Index of the last (narrowest) kernel.
    pub(crate) max_index: usize,
    /// Counts above this use the last kernel.
    pub(crate) max_filtered_counts: f64,
    /// The estimator curve.
    pub(crate) curve: f64,
}

impl DensityFilters {
    /// Whether the bank estimates densities: flam3 leaves the image
    /// unfiltered (plain log scaling) when the first kernel already has
    /// the minimum radius, so that the bank's last index is 0.
    pub(crate) fn estimates(&self) -> bool {
        self.max_index > 0
    }

    /// How many kernels the bank for these settings holds and how many
    /// coefficients each has (`max_ind`, `kernel_size`), without building
    /// it. `Err` names a setting that cannot give a bank.
    pub(crate) fn bank_size(max_rad: f64, min_rad: f64, curve: f64, ss: u32) -> Result<(usize, usize)> {
        Ok(Self::plan(max_rad, min_rad, curve, ss)?.sizes)
    }

    /// The sizes of the bank and the constants that go with them.
    fn plan(max_rad: f64, min_rad: f64, curve: f64, ss: u32) -> Result<BankPlan> {
        if curve.is_nan() || curve <= 0.0 {
            return Err(FlameError::invalid(format!("estimator_curve must be > 0, not {}", shown(curve))));
        }
        // A radius equal to the minimum gives one kernel and no density
        // estimation (see [`DensityFilters::estimates`]); flam3 refuses one
        // below it.
        if max_rad.is_nan() || min_rad.is_nan() || max_rad < min_rad || min_rad < 0.0 {
            return Err(FlameError::invalid(format!(
                "estimator_radius ({}) must not be below estimator_minimum ({}), nor that below 0",
                shown(max_rad),
                shown(min_rad)
            )));
        }
        let ss = f64::from(ss);
        // The +1 is the distance to the nearest neighbouring cell.
        let comp_max = max_rad * ss + 1.0;
        let comp_min = min_rad * ss + 1.0;
        if comp_max.is_nan() || comp_max >= MAX_KERNEL_CELLS {
            return Err(FlameError::invalid(format!(
                "estimator_radius {} is too large: density estimation would reach {comp_max:.3e} cells",
                shown(max_rad)
            )));
        }
        let n_filters_f = (comp_max / comp_min).powf(1.0 / curve);
        if n_filters_f.is_nan() || n_filters_f > 1e7 {
            return Err(FlameError::invalid(format!(
                "the estimator settings (estimator_radius {}, estimator_minimum {}, estimator_curve {}) need {:.3e} \
                 density kernels, more than 1e7; raise estimator_curve, lower estimator_radius or raise estimator_minimum",
                shown(max_rad),
                shown(min_rad),
                shown(curve),
                n_filters_f
            )));
        }
        let n_filters = n_filters_f.ceil() as usize;
        let (max_ind, max_filtered_counts) = if n_filters > KEEP {
            let thresh = DE_THRESH as f64;
            let max_ind = (thresh + (n_filters as f64 - thresh).powf(curve)).ceil() as usize + 1;
            let mfc = ((max_ind as f64 - thresh).powf(1.0 / curve)) as usize as f64 + thresh;
            (max_ind, mfc)
        } else {
            (n_filters, n_filters as f64)
        };
        let row_size = (2.0 * comp_max.ceil() - 1.0) as usize;
        let half_size = (row_size - 1) / 2;
        let kernel_size = (half_size + 1) * (2 + half_size) / 2;
        Ok(BankPlan { sizes: (max_ind.max(1), kernel_size), half_size, comp_max, comp_min, max_filtered_counts })
    }

    /// The bank for `estimator_radius`, `estimator_minimum`,
    /// `estimator_curve` at supersampling `ss`. `Err` names the problem.
    pub(crate) fn new(max_rad: f64, min_rad: f64, curve: f64, ss: u32) -> Result<Self> {
        let BankPlan { sizes: (max_ind, kernel_size), half_size, comp_max, comp_min, max_filtered_counts } =
            Self::plan(max_rad, min_rad, curve, ss)?;
        let n = max_ind.checked_mul(kernel_size).ok_or_else(|| {
            FlameError::OutOfHostMemory(format!(
                "the density-estimation kernels: {max_ind} × {kernel_size} coefficients"
            ))
        })?;
        let mut coefs = try_buffer(n, 0.0, "the density-estimation kernels")?;
        let mut widths = try_buffer(max_ind, 0.0, "the density-estimation kernels")?;
        let g_supp = support(FilterShape::Gaussian);
        let mut max_index = 0;
        #[allow(clippy::needless_range_loop)]
        for k in 0..max_ind {
            let mut h = if k < KEEP {
                comp_max / ((k + 1) as f64).powf(curve)
            } else {
                let adj = ((k - KEEP) as f64).powf(1.0 / curve) + KEEP as f64;
                comp_max / (adj + 1.0).powf(curve)
            };
            if h <= comp_min {
                h = comp_min;
                max_index = k;
            }
            widths[k] = h;
            let hs = half_size as i64;
            let mut sum = 0.0;
            for dj in -hs..=hs {
                for dk in -hs..=hs {
                    let d = ((dj * dj + dk * dk) as f64).sqrt() / h;
                    if d <= 1.0 {
                        sum += gaussian(g_supp * d);
                    }
                }
            }
            let base = k * kernel_size;
            let mut idx = 0;
            for dj in 0..=half_size {
                for dk in 0..=dj {
                    let d = ((dj * dj + dk * dk) as f64).sqrt() / h;
                    coefs[base + idx] = if d > 1.0 { 0.0 } else { gaussian(g_supp * d) / sum };
                    idx += 1;
                }
            }
            if max_index > 0 {
                break;
            }
        }
        if max_index == 0 {
            max_index = max_ind - 1;
        }
        Ok(DensityFilters { kernel_size, half_size, coefs, widths, max_index, max_filtered_counts, curve })
    }

    /// The kernel index for a (scaled) hit count in the neighbourhood.
    #[inline]
    pub(crate) fn select(&self, f: f64) -> usize {
        let thresh = DE_THRESH as f64;
        let k = if f > self.max_filtered_counts {
            self.max_index as i64
        } else if f <= thresh {
            f.ceil() as i64 - 1
        } else {
            DE_THRESH as i64 + (f - thresh).powf(self.curve).floor() as i64
        };
        (k.max(0) as usize).min(self.max_index)
    }
}

/// The time offsets and weights of the temporal samples of a frame.
#[derive(Clone, Debug)]
pub(crate) struct TemporalSamples {
    /// Offset of each sample from the frame's time.
    pub(crate) deltas: Vec<f64>,
    /// Weight of each sample (the largest is 1).
    pub(crate) weights: Vec<f64>,
    /// Mean weight.
    pub(crate) mean: f64,
}

impl TemporalSamples {
    /// `n` samples spread over `width` with `filter` (exponent `exp` for the
    /// exponential filter).
    pub(crate) fn new(n: usize, filter: TemporalFilter, exp: f64, width: f64) -> Self {
        if n <= 1 {
            return TemporalSamples { deltas: vec![0.0], weights: vec![1.0], mean: 1.0 };
        }
        let deltas: Vec<f64> = (0..n).map(|i| (i as f64 / (n - 1) as f64 - 0.5) * width).collect();
        let mut weights: Vec<f64> = match filter {
            TemporalFilter::Box => vec![1.0; n],
            TemporalFilter::Exp => (0..n)
                .map(|i| {
                    let x = if exp >= 0.0 { (i as f64 + 1.0) / n as f64 } else { (n - i) as f64 / n as f64 };
                    x.powf(exp.abs())
                })
                .collect(),
            TemporalFilter::Gaussian => {
                let half = n as f64 / 2.0;
                let s = support(FilterShape::Gaussian);
                (0..n).map(|i| gaussian(s * (i as f64 - half).abs() / half)).collect()
            }
        };
        let max = weights.iter().cloned().fold(0.0, f64::max);
        if max > 0.0 {
            weights.iter_mut().for_each(|w| *w /= max);
        }
        let mean = weights.iter().sum::<f64>() / n as f64;
        TemporalSamples { deltas, weights, mean }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spatial_filters_are_normalised_and_centred() {
        for shape in FilterShape::ALL {
            for ss in 1..=4 {
                for radius in [0.5, 1.0, 1.7] {
                    let f = SpatialFilter::new(shape, radius, ss, 1.0, false).unwrap();
                    assert_eq!(f.width % 2, ss as usize % 2, "{shape:?} parity");
                    let sum: f64 = f.coefs.iter().sum();
                    assert!((sum - 1.0).abs() < 1e-12);
                    // Symmetric under flips in both axes, except the box,
                    // whose half-open support (−½, ½] is asymmetric at the
                    // edge samples in flam3 too.
                    if shape == FilterShape::Box {
                        continue;
                    }
                    let w = f.width;
                    for j in 0..w {
                        for i in 0..w {
                            let a = f.coefs[i + j * w];
                            let b = f.coefs[(w - 1 - i) + j * w];
                            let c = f.coefs[j + i * w];
                            assert!((a - b).abs() < 1e-12 && (a - c).abs() < 1e-12);
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn gaussian_width_matches_flam3_rule() {
        // radius 1, ss 1: fw = 2·1.5·1·1 = 3 → width 4 → parity fix → 5.
        assert_eq!(SpatialFilter::new(FilterShape::Gaussian, 1.0, 1, 1.0, false).unwrap().width, 5);
        // radius 0.5, ss 4: fw = 6 → 7 → parity with 4 → 8.
        assert_eq!(SpatialFilter::new(FilterShape::Gaussian, 0.5, 4, 1.0, false).unwrap().width, 8);
    }

    #[test]
    fn pixel_aspect_shapes_the_kernel_as_flam3_does() {
        // flam3_create_spatial_filter: fw = 2·support·ss·radius / aspect;
        // coefficient (i, j) ∝ f(x_i)·f(x_j / aspect) with
        // x_k = ((2k + 1)/width − 1)·support·width/fw.
        for (shape, ss, radius, aspect) in [
            (FilterShape::Gaussian, 1, 1.0, 0.5),
            (FilterShape::Gaussian, 3, 0.7, 1.7),
            (FilterShape::Mitchell, 2, 1.2, 0.90909),
        ] {
            let f = SpatialFilter::new(shape, radius, ss, aspect, false).unwrap();
            let supp = support(flam3_kernel(shape));
            let fw = 2.0 * supp * f64::from(ss) * radius / aspect;
            let mut width = fw as usize + 1;
            width += (width ^ ss as usize) & 1;
            assert_eq!(f.width, width, "{shape:?} ss {ss} radius {radius} aspect {aspect}");
            let x = |k: usize| ((2.0 * k as f64 + 1.0) / width as f64 - 1.0) * supp * width as f64 / fw;
            let value = |i: usize, j: usize| {
                shape_value(flam3_kernel(shape), x(i)) * shape_value(flam3_kernel(shape), x(j) / aspect)
            };
            let sum: f64 = (0..width).flat_map(|j| (0..width).map(move |i| (i, j))).map(|(i, j)| value(i, j)).sum();
            for j in 0..width {
                for i in 0..width {
                    let want = value(i, j) / sum;
                    assert!((f.coefs[i + j * width] - want).abs() < 1e-14, "{shape:?} ({i}, {j})");
                }
            }
            // Narrow pixels (aspect < 1): the kernel spreads wider across
            // than down, in cells; wide pixels the other way (measured on
            // the positive kernels).
            if shape != FilterShape::Gaussian {
                continue;
            }
            let c = (width as f64 - 1.0) / 2.0;
            let (mut across, mut down) = (0.0, 0.0);
            for j in 0..width {
                for i in 0..width {
                    across += f.coefs[i + j * width] * (i as f64 - c).powi(2);
                    down += f.coefs[i + j * width] * (j as f64 - c).powi(2);
                }
            }
            assert_eq!(across > down, aspect < 1.0, "{shape:?} aspect {aspect}: {across} across, {down} down");
        }
    }

    #[test]
    fn density_kernels_shrink_and_sum_to_one() {
        let de = DensityFilters::new(11.0, 0.0, 0.6, 4).unwrap();
        assert!(de.max_index > 0);
        for k in 1..=de.max_index {
            assert!(de.widths[k] <= de.widths[k - 1]);
        }
        // Expand a kernel's octant to the full square and check its sum.
        for k in [0, de.max_index / 2, de.max_index] {
            let base = k * de.kernel_size;
            let mut sum = 0.0;
            let mut idx = 0;
            for dj in 0..=de.half_size {
                for dk in 0..=dj {
                    let c = de.coefs[base + idx];
                    let mult = match (dj, dk) {
                        (0, 0) => 1.0,
                        (_, 0) => 4.0,
                        (a, b) if a == b => 4.0,
                        _ => 8.0,
                    };
                    sum += mult * c;
                    idx += 1;
                }
            }
            assert!((sum - 1.0).abs() < 1e-9, "kernel {k} sums to {sum}");
        }
        assert_eq!(de.select(0.5), 0);
        assert_eq!(de.select(1.0), 0);
        assert_eq!(de.select(2.0), 1);
        assert_eq!(de.select(1e12), de.max_index);
        assert!(DensityFilters::new(1.0, 0.0, 0.0, 1).is_err());
        assert!(DensityFilters::new(1.0, -1.0, 0.5, 1).is_err());
        assert!(DensityFilters::new(1.0, 2.0, 0.5, 1).is_err());
        // A radius at its minimum: one kernel, no estimation (flam3's
        // max_filter_index 0).
        for (max, min) in [(3.0, 3.0), (9.0, 9.0), (0.5, 0.5)] {
            for ss in [1, 2] {
                let de = DensityFilters::new(max, min, 0.4, ss).unwrap();
                assert_eq!(de.max_index, 0);
                assert!(!de.estimates());
            }
        }
        assert!(DensityFilters::new(3.0, 2.9, 0.4, 1).unwrap().estimates());
    }

    #[test]
    fn temporal_weights() {
        let t = TemporalSamples::new(5, TemporalFilter::Box, 0.0, 1.0);
        assert_eq!(t.deltas, vec![-0.5, -0.25, 0.0, 0.25, 0.5]);
        assert_eq!(t.mean, 1.0);
        let e = TemporalSamples::new(4, TemporalFilter::Exp, 1.0, 1.0);
        assert_eq!(e.weights, vec![0.25, 0.5, 0.75, 1.0]);
        assert!((e.mean - 0.625).abs() < 1e-15);
        let g = TemporalSamples::new(7, TemporalFilter::Gaussian, 0.0, 2.0);
        assert!((g.weights.iter().cloned().fold(0.0, f64::max) - 1.0).abs() < 1e-15);
    }
}
