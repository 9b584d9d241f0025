//! Log-density scaling of the histogram into the accumulation buffer, with
//! or without flam3's density-estimation blur.
//!
//! Each cell's colour is scaled by `k1·ln(1 + a·k2)/a` (a = its alpha sum).
//! With density estimation the scaled cell is spread over a Gaussian whose
//! radius shrinks as the number of hits around the cell grows, so sparse
//! regions are smoothed and dense ones stay sharp.
//!
//! The spreading is a scatter; it runs in parallel over bands of rows, even
//! bands first and then odd ones. Bands are at least twice the largest
//! kernel's half size high, so the areas written by bands of one parity
//! never overlap, and every cell receives its contributions in the same
//! order whatever the number of threads.

use std::sync::atomic::{AtomicBool, Ordering};

use rayon::prelude::*;

use super::filters::DensityFilters;
use super::histogram::{Bucket, Count};

/// Log scaling without density estimation: every cell in place.
pub(crate) fn log_scale<C: Count, T: Bucket>(hist: &[[C; 5]], acc: &mut [[T; 4]], width: usize, k1: f64, k2: f64) {
    acc.par_chunks_mut(width).zip(hist.par_chunks(width)).for_each(|(arow, hrow)| {
        for (a, h) in arow.iter_mut().zip(hrow) {
            let alpha = h[3].value();
            if alpha == 0.0 {
                continue;
            }
            let ls = k1 * (1.0 + alpha * k2).ln() / alpha;
            for c in 0..4 {
                a[c] += T::from_f64(h[c].value() * ls);
            }
        }
    });
}

/// Log scaling with density estimation (flam3's `de_thread`). Once
/// `cancel` is set the rows not yet begun are left undone (the caller
/// discards the frame): a wide estimator on a large frame takes seconds.
#[allow(clippy::too_many_arguments)]
pub(crate) fn density_estimate<C: Count, T: Bucket>(
    hist: &[[C; 5]],
    acc: &mut [[T; 4]],
    width: usize,
    height: usize,
    supersample: usize,
    de: &DensityFilters,
    k1: f64,
    k2: f64,
    cancel: Option<&AtomicBool>,
) {
    let hs = de.half_size;
    let band_rows = (2 * hs + 1).max(32);
    let first = supersample - 1;
    let last = height.saturating_sub(supersample - 1); // exclusive
    if last <= first {
        return;
    }
    let n_bands = (last - first).div_ceil(band_rows);
    for parity in 0..2 {
        // The write window of band b: rows [start − hs, end + hs) clipped.
        let windows: Vec<(usize, usize, usize, usize)> = (parity..n_bands)
            .step_by(2)
            .map(|b| {
                let start = first + b * band_rows;
                let end = (start + band_rows).min(last);
                let w0 = start.saturating_sub(hs);
                let w1 = (end + hs).min(height);
                (start, end, w0, w1)
            })
            .collect();
        // Carve the disjoint windows out of `acc`.
        type Piece<'a, T> = (&'a mut [[T; 4]], (usize, usize, usize));
        let mut pieces: Vec<Piece<'_, T>> = Vec::new();
        let mut rest: &mut [[T; 4]] = acc;
        let mut consumed_rows = 0;
        for &(start, end, w0, w1) in &windows {
            let (_, tail) = std::mem::take(&mut rest).split_at_mut((w0 - consumed_rows) * width);
            let (piece, tail) = tail.split_at_mut((w1 - w0) * width);
            rest = tail;
            consumed_rows = w1;
            pieces.push((piece, (start, end, w0)));
        }
        pieces.into_par_iter().for_each(|(piece, (start, end, w0))| {
            let h_piece = piece.len() / width;
            for j in start..end {
                if cancel.is_some_and(|c| c.load(Ordering::Relaxed)) {
                    return;
                }
                density_row(hist, piece, width, j, w0, h_piece, supersample, de, k1, k2);
            }
        });
    }
}

/// Spreads the cells of row `j` into `piece`, which holds rows
/// `[w0, w0 + h_piece)` of the accumulation buffer.
#[allow(clippy::too_many_arguments)]
#[inline]
fn density_row<C: Count, T: Bucket>(
    hist: &[[C; 5]],
    piece: &mut [[T; 4]],
    width: usize,
    j: usize,
    w0: usize,
    h_piece: usize,
    supersample: usize,
    de: &DensityFilters,
    k1: f64,
    k2: f64,
) {
    let ss = supersample / 2;
    let even = supersample.is_multiple_of(2);
    let scfact = (supersample as f64 / (supersample as f64 + 1.0)).powi(2);
    let first = supersample - 1;
    let last_i = width.saturating_sub(supersample - 1);
    let jl = j as i64 - w0 as i64; // row within the piece
    let mut add = |di: i64, dj: i64, i: usize, c: &[f64; 4]| {
        let x = i as i64 + di;
        let y = jl + dj;
        if x >= 0 && (x as usize) < width && y >= 0 && (y as usize) < h_piece {
            let a = &mut piece[y as usize * width + x as usize];
            for k in 0..4 {
                a[k] += T::from_f64(c[k]);
            }
        }
    };
    for i in first..last_i {
        let h = &hist[i + j * width];
        if h[4].value() == 0.0 || h[3].value() == 0.0 {
            continue;
        }
        // Hits in the neighbourhood, scaled for equal iterations per area.
        let mut f = 0.0;
        for jj in j - ss..=j + ss {
            for ii in i - ss..=i + ss {
                f += hist[ii + jj * width][4].value() / 255.0;
            }
        }
        if even {
            f *= scfact;
        }
        let k = de.select(f);
        let reach = de.widths[k].ceil() as usize - 1;
        let coefs = &de.coefs[k * de.kernel_size..(k + 1) * de.kernel_size];
        let c3 = h[3].value();
        let base = k1 * (1.0 + c3 * k2).ln() / c3;
        let cell = [h[0].value(), h[1].value(), h[2].value(), c3];
        let mut idx = 0;
        for jj in 0..=reach as i64 {
            for ii in 0..=jj {
                let coef = coefs[idx];
                idx += 1;
                if coef == 0.0 {
                    continue;
                }
                let ls = coef * base;
                let c = [cell[0] * ls, cell[1] * ls, cell[2] * ls, cell[3] * ls];
                if jj == 0 {
                    add(0, 0, i, &c);
                } else if ii == 0 {
                    add(jj, 0, i, &c);
                    add(-jj, 0, i, &c);
                    add(0, jj, i, &c);
                    add(0, -jj, i, &c);
                } else if ii == jj {
                    add(ii, jj, i, &c);
                    add(-ii, jj, i, &c);
                    add(ii, -jj, i, &c);
                    add(-ii, -jj, i, &c);
                } else {
                    add(ii, jj, i, &c);
                    add(-ii, jj, i, &c);
                    add(ii, -jj, i, &c);
                    add(-ii, -jj, i, &c);
                    add(jj, ii, i, &c);
                    add(-jj, ii, i, &c);
                    add(jj, -ii, i, &c);
                    add(-jj, -ii, i, &c);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The banded parallel scatter equals a plain sequential scatter.
    #[test]
    fn banded_scatter_matches_sequential() {
        let (w, h, ss) = (57usize, 151usize, 2usize);
        let de = DensityFilters::new(3.0, 0.0, 0.4, ss as u32).unwrap();
        let mut hist = vec![[0.0f64; 5]; w * h];
        let mut s = 12345u64;
        for c in hist.iter_mut() {
            s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            if (s >> 60) < 3 {
                let hits = ((s >> 40) % 40) as f64;
                *c = [hits * 100.0, hits * 50.0, hits * 20.0, hits * 255.0, hits * 255.0];
            }
        }
        let mut par = vec![[0.0f64; 4]; w * h];
        density_estimate(&hist, &mut par, w, h, ss, &de, 2.0, 0.01, None);
        let mut seq = vec![[0.0f64; 4]; w * h];
        for j in ss - 1..h - (ss - 1) {
            density_row(&hist, &mut seq, w, j, 0, h, ss, &de, 2.0, 0.01);
        }
        let total: f64 = seq.iter().map(|c| c[3]).sum();
        assert!(total > 0.0);
        for (a, b) in par.iter().zip(&seq) {
            for k in 0..4 {
                assert!((a[k] - b[k]).abs() <= 1e-12 * b[k].abs().max(1.0));
            }
        }
        // Cancelled before it began: no row is spread.
        let mut cancelled = vec![[0.0f64; 4]; w * h];
        density_estimate(&hist, &mut cancelled, w, h, ss, &de, 2.0, 0.01, Some(&AtomicBool::new(true)));
        assert!(cancelled.iter().all(|c| *c == [0.0; 4]));
        density_estimate(&hist, &mut cancelled, w, h, ss, &de, 2.0, 0.01, Some(&AtomicBool::new(false)));
        assert_eq!(cancelled, par);
    }
}
