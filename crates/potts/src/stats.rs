//! Time-series analysis of measurements: integrated autocorrelation times
//! (Sokal's automatic window) and jackknife error bars over blocks.
//!
//! The series of one temperature are the measurements of each independent
//! sample. Each series is cut into blocks a few autocorrelation times long,
//! so block means are nearly independent; the jackknife over all blocks of
//! all samples then gives error bars for plain means and for nonlinear
//! combinations (Binder cumulant, specific heat, susceptibility) alike.

/// Sokal's window constant: the sum of the autocorrelation function is cut
/// at the smallest W with W ≥ C·τ(W).
pub const SOKAL_C: f64 = 6.0;

/// Blocks are at least this many integrated autocorrelation times long.
pub const BLOCK_TAUS: f64 = 5.0;

/// Integrated autocorrelation time, in measurements, of one or more
/// independent series of the same process: τ = ½ + Σ_{t=1}^{W} ρ(t), with
/// ρ averaged over the series (each about its own mean) and Sokal's
/// automatic window. A constant series gives ½ (no correlation measurable).
///
/// ```
/// // An alternating series is anticorrelated: τ < ½ is clamped to ½.
/// let s: Vec<f64> = (0..100).map(|i| (i % 2) as f64).collect();
/// assert_eq!(warpmc_potts::stats::integrated_time(&[&s]), 0.5);
/// ```
pub fn integrated_time(series: &[&[f64]]) -> f64 {
    let max_len = series.iter().map(|s| s.len()).max().unwrap_or(0);
    if max_len < 2 {
        return 0.5;
    }
    // Each series about its own mean; autocovariances are computed lag by
    // lag only up to the window, so the cost is O(n·W), not O(n²).
    let devs: Vec<Vec<f64>> = series
        .iter()
        .filter(|s| s.len() >= 2)
        .map(|s| {
            let mean = s.iter().sum::<f64>() / s.len() as f64;
            s.iter().map(|x| x - mean).collect()
        })
        .collect();
    let autocov = |t: usize| -> Option<f64> {
        let (mut sum, mut pairs) = (0.0, 0usize);
        for d in &devs {
            if d.len() > t {
                sum += d[..d.len() - t].iter().zip(&d[t..]).map(|(a, b)| a * b).sum::<f64>();
                pairs += d.len() - t;
            }
        }
        (pairs > 0).then(|| sum / pairs as f64)
    };
    let c0 = autocov(0).unwrap_or(0.0);
    if c0.is_nan() || c0 <= 0.0 {
        return 0.5;
    }
    let mut tau = 0.5;
    for t in 1..max_len {
        let Some(c) = autocov(t) else { break };
        tau += c / c0;
        if t as f64 >= SOKAL_C * tau {
            break;
        }
    }
    tau.max(0.5)
}

/// A value with its one-sigma error (NaN when it cannot be estimated: fewer
/// than two blocks).
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Estimate {
    /// The estimate from all data.
    pub value: f64,
    /// Jackknife standard error.
    pub error: f64,
}

/// Sums of k observables over one block of measurements.
#[derive(Clone, Debug)]
struct Block {
    len: usize,
    sums: Vec<f64>,
}

/// Jackknife over blocks: the means of `k` per-measurement quantities, and
/// any function of those means, with errors.
#[derive(Clone, Debug)]
pub struct Jackknife {
    blocks: Vec<Block>,
    total: Block,
}

impl Jackknife {
    /// Cuts each series (rows are measurements, each a vector of k
    /// quantities) into blocks of about `block_len` measurements — the
    /// blocks of one series differ in length by at most one — and prepares
    /// the leave-one-block-out estimates.
    pub fn new(series: &[Vec<Vec<f64>>], block_len: usize) -> Self {
        let k = series.iter().flatten().next().map_or(0, |r| r.len());
        let mut blocks = Vec::new();
        for s in series {
            if s.is_empty() {
                continue;
            }
            let nb = (s.len() / block_len.max(1)).max(1);
            for b in 0..nb {
                let (lo, hi) = (b * s.len() / nb, (b + 1) * s.len() / nb);
                let mut sums = vec![0.0; k];
                for row in &s[lo..hi] {
                    sums.iter_mut().zip(row).for_each(|(a, x)| *a += x);
                }
                blocks.push(Block { len: hi - lo, sums });
            }
        }
        let mut total = Block { len: 0, sums: vec![0.0; k] };
        for b in &blocks {
            total.len += b.len;
            total.sums.iter_mut().zip(&b.sums).for_each(|(a, x)| *a += x);
        }
        Jackknife { blocks, total }
    }

    /// Number of blocks.
    pub fn blocks(&self) -> usize {
        self.blocks.len()
    }

    /// Number of measurements.
    pub fn measurements(&self) -> usize {
        self.total.len
    }

    /// `f` of the means, with its jackknife error.
    pub fn estimate(&self, f: impl Fn(&[f64]) -> f64) -> Estimate {
        let means = |sums: &[f64], n: usize| sums.iter().map(|s| s / n as f64).collect::<Vec<f64>>();
        let value = f(&means(&self.total.sums, self.total.len));
        let nb = self.blocks.len();
        if nb < 2 {
            return Estimate { value, error: f64::NAN };
        }
        let loo: Vec<f64> = self
            .blocks
            .iter()
            .map(|b| {
                let sums: Vec<f64> = self.total.sums.iter().zip(&b.sums).map(|(t, s)| t - s).collect();
                f(&means(&sums, self.total.len - b.len))
            })
            .collect();
        let mean = loo.iter().sum::<f64>() / nb as f64;
        let var = loo.iter().map(|x| (x - mean).powi(2)).sum::<f64>() * (nb - 1) as f64 / nb as f64;
        Estimate { value, error: var.sqrt() }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An AR(1) series x' = φx + noise has τ_int = (1 + φ)/(2(1 − φ)).
    fn ar1(phi: f64, n: usize, seed: u64) -> Vec<f64> {
        use warpmc_rng::{PhiloxStream, RandomSource};
        let mut r = PhiloxStream::new(seed, warpmc_rng::Domain::Test.stream(1));
        let mut x = 0.0;
        (0..n)
            .map(|_| {
                // Sum of 4 uniforms: mean 2, close enough to Gaussian here.
                let g = (0..4).map(|_| r.next_f64()).sum::<f64>() - 2.0;
                x = phi * x + g;
                x
            })
            .collect()
    }

    #[test]
    fn ar1_integrated_time_matches_theory() {
        for (phi, seed) in [(0.0, 1), (0.5, 2), (0.9, 3)] {
            let s = ar1(phi, 200_000, seed);
            let tau = integrated_time(&[&s]);
            let exact = (1.0 + phi) / (2.0 * (1.0 - phi));
            assert!((tau - exact).abs() < 0.06 * exact + 0.02, "phi {phi}: {tau} vs {exact}");
        }
    }

    #[test]
    fn jackknife_error_of_a_mean_matches_the_naive_error_for_independent_data() {
        let s = ar1(0.0, 40_000, 7);
        let n = s.len() as f64;
        let mean = s.iter().sum::<f64>() / n;
        let var = s.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0);
        let rows: Vec<Vec<f64>> = s.iter().map(|&x| vec![x]).collect();
        let jk = Jackknife::new(&[rows], 100);
        assert_eq!(jk.blocks(), 400);
        let e = jk.estimate(|m| m[0]);
        assert!((e.value - mean).abs() < 1e-12);
        let naive = (var / n).sqrt();
        assert!((e.error / naive - 1.0).abs() < 0.15, "{} vs {naive}", e.error);
    }

    #[test]
    fn jackknife_blocking_accounts_for_correlation() {
        let phi = 0.8;
        let s = ar1(phi, 200_000, 11);
        let tau = (1.0 + phi) / (2.0 * (1.0 - phi));
        let rows: Vec<Vec<f64>> = s.iter().map(|&x| vec![x]).collect();
        let jk = Jackknife::new(&[rows], (BLOCK_TAUS * tau).ceil() as usize * 4);
        let e = jk.estimate(|m| m[0]);
        let n = s.len() as f64;
        let mean = s.iter().sum::<f64>() / n;
        let var = s.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0);
        let expected = (2.0 * tau * var / n).sqrt();
        assert!((e.error / expected - 1.0).abs() < 0.2, "{} vs {expected}", e.error);
    }

    #[test]
    fn one_block_gives_no_error() {
        let jk = Jackknife::new(&[vec![vec![1.0], vec![2.0]]], 10);
        let e = jk.estimate(|m| m[0]);
        assert_eq!(e.value, 1.5);
        assert!(e.error.is_nan());
    }
}
