//! How well do warpmc's error bars hold? Repeats runs over many seeds and
//! compares the spread of their results with the errors each run reports,
//! for the old estimator (jackknife over blocks of 5 τ_int, `old.rs`) and
//! the Γ-method that replaced it (`warpmc_potts::stats`). See README.md.

mod old;

use rayon::prelude::*;
use warpmc_potts::exact::potts_critical_temperature;
use warpmc_potts::stats::{Estimate, GammaMethod};
use warpmc_potts::{InitialState, Measurement, PottsModel, Simulation};
use warpmc_rng::{Domain, PhiloxStream, RandomSource};

fn gauss(r: &mut PhiloxStream) -> f64 {
    let (u, v) = (r.next_f64_open(), r.next_f64());
    (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
}

/// A stationary AR(1) series x' = φx + N(0, 1).
fn ar1(phi: f64, n: usize, seed: u64) -> Vec<f64> {
    let mut r = PhiloxStream::new(seed, Domain::Test.stream(77));
    let mut x = gauss(&mut r) / (1.0 - phi * phi).sqrt();
    (0..n)
        .map(|_| {
            let y = x;
            x = phi * x + gauss(&mut r);
            y
        })
        .collect()
}

/// The exact variance of the mean of n consecutive AR(1) values.
fn ar1_var_of_mean(phi: f64, n: usize) -> f64 {
    let nf = n as f64;
    let s: f64 = (1..n).map(|t| (1.0 - t as f64 / nf) * phi.powi(t as i32)).sum();
    (1.0 + 2.0 * s) / (nf * (1.0 - phi * phi))
}

/// The old error of a plain mean.
fn old_error(replicas: &[Vec<f64>]) -> f64 {
    let series: Vec<&[f64]> = replicas.iter().map(Vec::as_slice).collect();
    let tau = old::integrated_time(&series);
    let shortest = replicas.iter().map(Vec::len).min().unwrap();
    let block = ((old::BLOCK_TAUS * tau).ceil() as usize).clamp(1, (shortest / 4).max(1));
    let rows: Vec<Vec<Vec<f64>>> = replicas.iter().map(|s| s.iter().map(|&x| vec![x]).collect()).collect();
    old::Jackknife::new(&rows, block).estimate(|v| v[0]).error
}

/// AR(1) with τ_int = 10: the mean reported error against the exact σ of
/// the mean, the exact variance against the mean reported variance, and
/// the mean z² (what a χ² over seeds averages).
fn study_ar1(trials: usize) {
    let tau = 10.0;
    let phi = (2.0 * tau - 1.0) / (2.0 * tau + 1.0);
    println!("## AR(1), τ_int = {tau}, {trials} series per row");
    println!();
    println!(
        "| run (τ_int) | replicas | old E[σ̂]/σ | old σ²/E[σ̂²] | old E[z²] | new E[σ̂]/σ | new σ²/E[σ̂²] | new E[z²] |"
    );
    println!("|---|---|---|---|---|---|---|---|");
    for replicas in [1usize, 4] {
        for len in [25.0, 50.0, 100.0, 150.0, 300.0, 1000.0] {
            let n = (len * tau) as usize / replicas;
            let truth = ar1_var_of_mean(phi, n) / replicas as f64;
            let rows: Vec<(f64, [f64; 2])> = (0..trials)
                .into_par_iter()
                .map(|i| {
                    let reps: Vec<Vec<f64>> =
                        (0..replicas).map(|r| ar1(phi, n, (i * 16 + r) as u64 + 1_000_000 * len as u64)).collect();
                    let mean = reps.iter().flatten().sum::<f64>() / (n * replicas) as f64;
                    let new = GammaMethod::new(reps.iter().map(|s| vec![s.clone()]).collect()).estimate(|v| v[0]);
                    (mean, [old_error(&reps), new.error])
                })
                .collect();
            print!("| {len} | {replicas} |");
            for k in 0..2 {
                let e = rows.iter().map(|r| r.1[k]).sum::<f64>() / trials as f64;
                let e2 = rows.iter().map(|r| r.1[k].powi(2)).sum::<f64>() / trials as f64;
                let z2 = rows.iter().map(|r| (r.0 / r.1[k]).powi(2)).sum::<f64>() / trials as f64;
                print!(" {:.3} | {:.3} | {:.3} |", e / truth.sqrt(), truth / e2, z2);
            }
            println!();
        }
    }
}

/// Measurement series of `seeds` independent runs of the q = 2 model on
/// l², one measurement per sweep after `therm` sweeps, each run made of
/// `samples` chains.
/// Seeds `first`, `first + 1`, ….
fn potts_runs(
    l: usize,
    t: f64,
    therm: u64,
    sweeps: usize,
    (first, seeds): (u64, u64),
    samples: usize,
) -> Vec<Vec<Vec<Measurement>>> {
    let chains: Vec<Vec<Measurement>> = (0..seeds * samples as u64)
        .into_par_iter()
        .map(|seed| {
            let mut sim = Simulation::on_cpu(PottsModel::new(2, l, l).unwrap(), t).unwrap().with_seed(first + seed);
            sim.start(InitialState::Random).unwrap();
            sim.sweeps(therm).unwrap();
            (0..sweeps).map(|_| sim.sweeps(1).unwrap().measure().unwrap()).collect()
        })
        .collect();
    chains.chunks_exact(samples).map(<[_]>::to_vec).collect()
}

const NAMES: [&str; 5] = ["e", "m", "c", "χ", "U"];

/// e, m, c, χ and U of each run by the old and the new analysis.
fn analyse(runs: &[Vec<Vec<Measurement>>], l: usize, t: f64) -> (Vec<[Estimate; 5]>, Vec<[Estimate; 5]>) {
    let model = PottsModel::new(2, l, l).unwrap();
    let old: Vec<[Estimate; 5]> = runs
        .par_iter()
        .map(|r| {
            let pairs: Vec<Vec<(f64, f64)>> =
                r.iter().map(|s| s.iter().map(|m| (m.energy, m.magnetization)).collect()).collect();
            old::analyze(&pairs, (l * l) as f64, t)
        })
        .collect();
    let new: Vec<[Estimate; 5]> = runs
        .par_iter()
        .map(|r| {
            let a = warpmc_potts::observables::analyze(&model, t, r, 1);
            [a.energy[0], a.magnetization[0], a.specific_heat, a.susceptibility, a.binder]
        })
        .collect();
    (old, new)
}

/// (spread/reported)²: the variance of the runs' values over the mean
/// reported variance; and χ²/dof = Σ((xᵢ − x̄)/σᵢ)²/(runs − 1).
fn calibration(est: &[[Estimate; 5]], k: usize) -> (f64, f64) {
    let x: Vec<f64> = est.iter().map(|r| r[k].value).collect();
    let mean = x.iter().sum::<f64>() / x.len() as f64;
    let spread2 = x.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (x.len() - 1) as f64;
    let rep2 = est.iter().map(|r| r[k].error.powi(2)).sum::<f64>() / x.len() as f64;
    let chi = est.iter().map(|r| ((r[k].value - mean) / r[k].error).powi(2)).sum::<f64>() / (x.len() - 1) as f64;
    (spread2 / rep2, chi)
}

fn tau_m(l: usize, t: f64) -> f64 {
    let long = potts_runs(l, t, 5000, 400_000, (1, 1), 1);
    let m: Vec<f64> = long[0][0].iter().map(|x| x.magnetization).collect();
    warpmc_potts::stats::integrated_time(&[&m])
}

/// 16² q = 2 runs over many seeds: (spread/reported)² and χ²/dof for e, m,
/// c, χ and U, old and new, for runs of several lengths in units of the
/// magnetization's τ_int.
/// Each row has its own seeds, so the rows are independent.
fn study_potts(seeds: u64, t: f64, samples: usize, lengths: &[f64], sums: &mut [Vec<f64>; 2]) {
    let l = 16;
    let tau = tau_m(l, t);
    println!();
    println!(
        "## q = 2, {l}², T = {t:.4}, τ_int(m) = {tau:.2} sweeps, {seeds} runs of {samples} sample(s) per row: (spread/reported)² (χ²/dof)"
    );
    println!();
    print!("| run (τ_int(m) per sample) |");
    for name in NAMES {
        print!(" {name} old | {name} new |");
    }
    println!();
    println!("|---{}|", "|---".repeat(10));
    for &len in lengths {
        let first = 1_000_000 * (t * 1e4) as u64 + 10_000 * (len as u64) + samples as u64 * 1_000_000_000;
        let runs = potts_runs(l, t, 2000, (len * tau) as usize, (first, seeds), samples);
        let (old, new) = analyse(&runs, l, t);
        print!("| {len} ({} sweeps) |", (len * tau) as usize);
        for k in 0..5 {
            let (ro, co) = calibration(&old, k);
            let (rn, cn) = calibration(&new, k);
            print!(" {ro:.2} ({co:.2}) | {rn:.2} ({cn:.2}) |");
            if k < 2 {
                sums[0].push(ro);
                sums[1].push(rn);
            }
        }
        println!();
    }
}

/// How often the χ² test of tests/error_bars.rs fails: χ² of groups of 64
/// runs against the 0.1–99.9 % band of χ²₆₃ (33.9 and 103.4, Wilson and
/// Hilferty's approximation).
fn study_groups(seeds: u64, t: f64, sweeps: usize, samples: usize) {
    let runs = potts_runs(16, t, 1000, sweeps, (1000, seeds), samples);
    let (old, new) = analyse(&runs, 16, t);
    print!("| T = {t:.4}, {samples} × {sweeps} sweeps |");
    for k in 0..3 {
        for est in [&old, &new] {
            let chis: Vec<f64> = est
                .chunks_exact(64)
                .map(|g| {
                    let mean = g.iter().map(|r| r[k].value).sum::<f64>() / 64.0;
                    g.iter().map(|r| ((r[k].value - mean) / r[k].error).powi(2)).sum::<f64>()
                })
                .collect();
            let pass = chis.iter().filter(|&&c| (33.9..=103.4).contains(&c)).count();
            print!(" {pass}/{} |", chis.len());
        }
    }
    println!();
}

/// τ_int of e, m, c, χ and U at T_c from 2 × 10⁶ sweeps for several window
/// constants c: where Sokal's window of each quantity alone stops short.
fn study_windows() {
    let (l, t) = (16usize, potts_critical_temperature(2));
    let long = potts_runs(l, t, 5000, 1_000_000, (1, 1), 2);
    let cols: Vec<Vec<Vec<f64>>> = long[0]
        .iter()
        .map(|s| {
            (0..8)
                .map(|k| {
                    s.iter().map(|x| if k < 4 { x.energy.powi(k + 1) } else { x.magnetization.powi(k - 3) }).collect()
                })
                .collect()
        })
        .collect();
    let n = (l * l) as f64;
    println!();
    println!(
        "## τ_int (sweeps) at T_c on 16², 2 × 10⁶ sweeps, by window constant; each quantity's own window, then the slowest quantity's as the least"
    );
    println!();
    println!("| c | e | m | c (specific heat) | χ | U |");
    println!("|---|---|---|---|---|---|");
    type Quantity<'a> = &'a (dyn Fn(&[f64]) -> f64 + Sync);
    let fs: [Quantity<'_>; 5] = [
        &|v| v[0],
        &|v| v[4],
        &move |v| n * (v[1] - v[0] * v[0]) / (t * t),
        &move |v| n * (v[5] - v[4] * v[4]) / t,
        &|v| 1.0 - v[7] / (3.0 * v[5] * v[5]),
    ];
    for c in [4.0, 6.0, 10.0, 20.0, 50.0] {
        // A single quantity's own window: analyse it alone.
        print!("| {c} (own) |");
        for k in 0..fs.len() {
            let own: Vec<Vec<Vec<f64>>> = cols.iter().map(|r| vec![project(r, k, n, t)]).collect();
            let a = GammaMethod::new(own).with_sokal_c(c).analyze(|v| v[0]);
            print!(" {:.2} ± {:.2} (W {}) |", a.tau_int, a.tau_int_err, a.window);
        }
        println!();
        print!("| {c} (slowest) |");
        let g = GammaMethod::new(cols.clone()).with_sokal_c(c);
        for f in fs {
            let a = g.analyze(f);
            print!(" {:.2} ± {:.2} (W {}) |", a.tau_int, a.tau_int_err, a.window);
        }
        println!();
    }
}

/// The series whose mean's error is the error of quantity k (e, m, c, χ,
/// U), linearised at the replica's means.
fn project(cols: &[Vec<f64>], k: usize, n: f64, t: f64) -> Vec<f64> {
    let mean = |j: usize| cols[j].iter().sum::<f64>() / cols[j].len() as f64;
    let (e, m, m2, m4) = (mean(0), mean(4), mean(5), mean(7));
    let len = cols[0].len();
    (0..len)
        .map(|i| match k {
            0 => cols[0][i],
            1 => cols[4][i],
            2 => n * (cols[1][i] - 2.0 * e * cols[0][i]) / (t * t),
            3 => n * (cols[5][i] - 2.0 * m * cols[4][i]) / t,
            _ => -(cols[7][i] / (3.0 * m2 * m2)) + 2.0 * m4 * cols[5][i] / (3.0 * m2 * m2 * m2),
        })
        .collect()
}

/// Seconds to analyse 10⁶ measurements.
fn study_timing() {
    println!();
    for (n, tau) in [(1_000_000usize, 10.0), (1_000_000, 100.0), (100_000, 1000.0)] {
        let phi = (2.0 * tau - 1.0) / (2.0 * tau + 1.0);
        let (x, y) = (ar1(phi, n, 5), ar1(phi, n, 6));
        let series = vec![
            x.iter()
                .zip(&y)
                .map(|(&a, &b)| Measurement { energy: -1.5 + 0.01 * a, magnetization: 0.5 + 0.01 * b })
                .collect::<Vec<_>>(),
        ];
        let start = std::time::Instant::now();
        let a = warpmc_potts::observables::analyze(&PottsModel::new(2, 16, 16).unwrap(), 1.0, &series, 1);
        println!(
            "analyze: {n} measurements, τ_int {tau}: {:.2} s (τ_int(e) found {:.1})",
            start.elapsed().as_secs_f64(),
            a.tau_int_energy
        );
    }
}

fn main() {
    let what = std::env::args().nth(1).unwrap_or_default();
    let tc = potts_critical_temperature(2);
    let lengths = [50.0, 100.0, 150.0, 500.0, 2000.0];
    let mut sums = [Vec::new(), Vec::new()];
    if what.is_empty() || what == "ar1" {
        study_ar1(4000);
    }
    if what.is_empty() || what == "potts" {
        for t in [tc, 1.0, 1.3] {
            study_potts(256, t, 1, &lengths, &mut sums);
        }
        study_potts(256, tc, 4, &[25.0, 50.0, 125.0], &mut sums);
        for (label, s) in ["old", "new"].iter().zip(&sums) {
            println!(
                "\n{label}: mean (spread/reported)² of e and m over all rows above: {:.2}",
                s.iter().sum::<f64>() / s.len() as f64
            );
        }
    }
    if what.is_empty() || what == "groups" {
        println!();
        println!("## χ² of groups of 64 runs inside the 0.1–99.9 % band of χ²₆₃");
        println!();
        println!("| runs | e old | e new | m old | m new | c old | c new |");
        println!("|---|---|---|---|---|---|---|");
        study_groups(4096, tc, 5300, 1);
        study_groups(2048, 1.3, 240, 4);
    }
    if what.is_empty() || what == "windows" {
        study_windows();
    }
    if what.is_empty() || what == "timing" {
        study_timing();
    }
}
