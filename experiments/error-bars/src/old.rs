//! The estimator warpmc used before the Γ-method (commit de6b1bc,
//! crates/potts/src/stats.rs and observables::analyze), copied so that the
//! study can run both on the same series.
#![allow(dead_code)]

pub use warpmc_potts::stats::Estimate;

/// Sokal's window constant.
pub const SOKAL_C: f64 = 6.0;

/// Blocks are at least this many integrated autocorrelation times long.
pub const BLOCK_TAUS: f64 = 5.0;

/// Integrated autocorrelation time, in measurements, of one or more
/// independent series of the same process: τ = ½ + Σ_{t=1}^{W} ρ(t), with
/// ρ averaged over the series (each about its own mean) and Sokal's
/// automatic window. A constant series gives ½ (no correlation measurable).
///
/// An alternating series is anticorrelated: τ < ½ is clamped to ½.
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

/// The old observables::analyze for e, m, c, χ and U: blocks of at least
/// 5 τ_int (of e or m, the longer), at most a quarter of the shortest
/// series, jackknife over all blocks.
pub fn analyze(series: &[Vec<(f64, f64)>], sites: f64, t: f64) -> [Estimate; 5] {
    let e: Vec<Vec<f64>> = series.iter().map(|s| s.iter().map(|m| m.0).collect()).collect();
    let m: Vec<Vec<f64>> = series.iter().map(|s| s.iter().map(|m| m.1).collect()).collect();
    let tau_e = integrated_time(&e.iter().map(Vec::as_slice).collect::<Vec<_>>());
    let tau_m = integrated_time(&m.iter().map(Vec::as_slice).collect::<Vec<_>>());
    let shortest = series.iter().map(Vec::len).min().unwrap_or(0);
    let block = ((BLOCK_TAUS * tau_e.max(tau_m)).ceil() as usize).clamp(1, (shortest / 4).max(1));
    let rows: Vec<Vec<Vec<f64>>> =
        series.iter().map(|s| s.iter().map(|&(e, m)| vec![e, e * e, m, m * m, m * m * m * m]).collect()).collect();
    let jk = Jackknife::new(&rows, block);
    [
        jk.estimate(|v| v[0]),
        jk.estimate(|v| v[2]),
        jk.estimate(|v| sites * (v[1] - v[0] * v[0]) / (t * t)),
        jk.estimate(|v| sites * (v[3] - v[2] * v[2]) / t),
        jk.estimate(|v| 1.0 - v[4] / (3.0 * v[3] * v[3])),
    ]
}
