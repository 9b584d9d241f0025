//! Fractorium's colour curves on the finished image
//! ([`Curves`](crate::genome::Curves)): as Fractorium's renderer applies
//! them (`Renderer::CurveAdjust`), each curve is tabulated at 65,536
//! points, and a channel value v in [0, 1] becomes
//! channel[⌊overall[⌊v·65535⌋]·65535⌋], then clamped to [0, 1].

use crate::genome::Curves;

/// Entries of each curve's table (Fractorium's `CURVES_LENGTH`).
const LENGTH: usize = 65_536;

/// Fractorium's `Spline` through `points` (sorted by x, at least two): on
/// each interval a cubic whose second derivatives at the points are
/// 3 (h_{i+1} − h_i)/(w_{i+1} + w_i) (0 at both ends), with w_i the
/// interval widths and h_i the chords' slopes. This is not the natural
/// spline of a tridiagonal solve, but Fractorium's own rule, and the
/// curves are drawn in Fractorium with it.
pub(crate) struct Spline {
    x: Vec<f64>,
    /// Per interval: a (x − x_i)³ + b (x − x_i)² + c (x − x_i) + d.
    coefs: Vec<[f64; 4]>,
}

impl Spline {
    pub(crate) fn new(points: &[[f64; 2]]) -> Self {
        let n = points.len() - 1;
        let w: Vec<f64> = (0..n).map(|i| points[i + 1][0] - points[i][0]).collect();
        let h: Vec<f64> = (0..n).map(|i| (points[i + 1][1] - points[i][1]) / w[i]).collect();
        let mut ftt = vec![0.0; n + 1];
        for i in 0..n.saturating_sub(1) {
            ftt[i + 1] = 3.0 * (h[i + 1] - h[i]) / (w[i + 1] + w[i]);
        }
        let coefs = (0..n)
            .map(|i| {
                [
                    (ftt[i + 1] - ftt[i]) / (6.0 * w[i]),
                    ftt[i] / 2.0,
                    h[i] - w[i] * (ftt[i + 1] + 2.0 * ftt[i]) / 6.0,
                    points[i][1],
                ]
            })
            .collect();
        Spline { x: points.iter().map(|p| p[0]).collect(), coefs }
    }

    /// The curve at `x`, which is clamped to the points' range.
    pub(crate) fn at(&self, x: f64) -> f64 {
        let n = self.coefs.len();
        let x = x.clamp(self.x[0], self.x[n]);
        let mut j = 0;
        while j < n - 1 && x > self.x[j + 1] {
            j += 1;
        }
        let t = x - self.x[j];
        let [a, b, c, d] = self.coefs[j];
        a * t * t * t + b * t * t + c * t + d
    }
}

/// A curve's points as the spline takes them, as a parsed genome has
/// them already: finite, clamped to [0, 1]², sorted by x, one point to an
/// x (the first), at least two (else the line y = x). Curves built in code
/// may hold anything.
fn usable(points: &[[f64; 2]]) -> Vec<[f64; 2]> {
    let mut v: Vec<[f64; 2]> = points
        .iter()
        .filter(|p| p.iter().all(|c| c.is_finite()))
        .map(|p| [p[0].clamp(0.0, 1.0), p[1].clamp(0.0, 1.0)])
        .collect();
    v.sort_by(|a, b| a[0].total_cmp(&b[0]));
    v.dedup_by(|later, earlier| later[0] == earlier[0]);
    if v.len() < 2 { Curves::DEFAULT.to_vec() } else { v }
}

/// The four curves tabulated.
pub(crate) struct CurveTables {
    /// `[overall, red, green, blue]`, [`LENGTH`] entries each.
    tables: [Vec<f64>; 4],
}

impl CurveTables {
    pub(crate) fn new(curves: &Curves) -> Self {
        let last = (LENGTH - 1) as f64;
        CurveTables {
            tables: std::array::from_fn(|c| {
                let spline = Spline::new(&usable(&curves.points[c]));
                (0..LENGTH).map(|j| spline.at(j as f64 / last)).collect()
            }),
        }
    }

    /// A table index: ⌊clamp(v·65535, 0, 65535)⌋ (NaN to 0).
    fn index(v: f64) -> usize {
        let last = (LENGTH - 1) as f64;
        let scaled = (v * last).clamp(0.0, last);
        if scaled.is_nan() { 0 } else { scaled as usize }
    }

    /// Channel `channel` (0 red, 1 green, 2 blue) of value `v` in [0, 1].
    pub(crate) fn adjust(&self, v: f64, channel: usize) -> f64 {
        let overall = self.tables[0][Self::index(v)];
        self.tables[channel + 1][Self::index(overall)].clamp(0.0, 1.0)
    }

    /// The curves applied to finished pixels (RGB in [0, 255]); alpha is
    /// left as it is.
    pub(crate) fn apply(&self, pixels: &mut [[f64; 4]]) {
        for p in pixels {
            for (channel, v) in p.iter_mut().take(3).enumerate() {
                *v = 255.0 * self.adjust(*v / 255.0, channel);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn curves_built_in_code_are_made_usable() {
        let nan = f64::NAN;
        let curves = Curves {
            points: [
                vec![],
                vec![[nan, 0.5], [0.2, nan]],
                vec![[0.5, 0.5]],
                vec![[2.0, -1.0], [0.0, 0.0], [f64::INFINITY, 1.0], [0.0, 1.0]],
            ],
        };
        let t = CurveTables::new(&curves);
        // The first three are the line y = x; the last runs from (0, 0) to
        // (1, 0).
        for v in [0.0, 0.3, 1.0] {
            assert!((t.adjust(v, 0) - v).abs() < 1e-4 && (t.adjust(v, 1) - v).abs() < 1e-4, "{v}");
            assert!(t.adjust(v, 2).abs() < 1e-12, "{v}: {}", t.adjust(v, 2));
        }
    }

    #[test]
    fn fractorium_spline_rule() {
        // On a line every chord has one slope: the spline is the line.
        let line = Spline::new(&Curves::DEFAULT);
        for x in [0.0, 0.1, 0.33, 0.5, 0.9, 1.0] {
            assert!((line.at(x) - x).abs() < 1e-15, "{x}");
        }
        // Three points (0,0), (0.5,1), (1,0): slopes 2 and −2, so the
        // middle point's second derivative is 3(−2 − 2)/(0.5 + 0.5) = −12
        // and, on [0, 0.5], a = −12/3 = −4, b = 0, c = 2 − 0.5·(−12)/6 = 3:
        // y(0.25) = −4/64 + 3/4 = 0.6875, y(0.5) = −0.5 + 1.5 = 1.
        let hill = Spline::new(&[[0.0, 0.0], [0.5, 1.0], [1.0, 0.0]]);
        assert!((hill.at(0.25) - 0.6875).abs() < 1e-15);
        assert!((hill.at(0.5) - 1.0).abs() < 1e-15);
        assert!((hill.at(0.75) - 0.6875).abs() < 1e-15, "symmetric: {}", hill.at(0.75));
        // Beyond the points the curve stays at their ends.
        let short = Spline::new(&[[0.2, 0.3], [0.6, 0.7]]);
        assert_eq!((short.at(0.0), short.at(1.0)), (0.3, 0.7));
    }

    #[test]
    fn tables_look_up_as_fractorium_does() {
        let default = || Curves::DEFAULT.to_vec();
        // An overall curve y = 1 − x inverts every channel (to the tables'
        // resolution: two lookups that truncate).
        let invert =
            CurveTables::new(&Curves { points: [vec![[0.0, 1.0], [1.0, 0.0]], default(), default(), default()] });
        for v in [0.0, 0.2, 0.5, 0.77, 1.0] {
            for c in 0..3 {
                assert!((invert.adjust(v, c) - (1.0 - v)).abs() <= 2.0 / 65535.0, "{v}: {}", invert.adjust(v, c));
            }
        }
        // Only red lifted: green and blue stay (to the tables' resolution).
        let red = CurveTables::new(&Curves { points: [default(), vec![[0.0, 0.5], [1.0, 1.0]], default(), default()] });
        assert!((red.adjust(0.0, 0) - 0.5).abs() < 1e-12);
        assert!((red.adjust(0.4, 1) - 0.4).abs() <= 1.0 / 65535.0);
        // Out of range and NaN values are clamped before the lookup.
        assert_eq!(invert.adjust(-3.0, 0), 1.0);
        assert_eq!(invert.adjust(f64::NAN, 0), 1.0);
        let mut px = [[255.0, 0.0, 127.5, 0.25]];
        invert.apply(&mut px);
        assert!(px[0][0].abs() < 0.01 && (px[0][1] - 255.0).abs() < 0.01 && (px[0][2] - 127.5).abs() < 0.01);
        assert_eq!(px[0][3], 0.25, "alpha stays");
    }
}
