use super::enumeration::canonical_row;
use super::infinite::elliptic_k;
use super::kaufman::SMALL_K;
use super::*;

#[test]
fn no_coupling_gives_zeros_without_a_sign() {
    for q in [2, 3] {
        let rows = exact_rows(q, &[(3, 3)], &[1.0], 0.0).unwrap();
        assert_eq!(rows[0].energy.to_bits(), 0.0f64.to_bits(), "q = {q}");
        assert_eq!(rows[0].specific_heat.to_bits(), 0.0f64.to_bits(), "q = {q}");
    }
}

#[test]
fn a_stop_is_heard_inside_kaufmans_sums_and_between_temperatures() {
    // 2^20 spins per row: 2^21 terms a temperature, 32 looks at the hook.
    let tori = [(1 << 20, 4)];
    for temperature in [1.0, 100.0] {
        // Asked before the torus, before the temperature, then inside
        // the sums, where the third answer stops it.
        let mut asked = 0;
        let r = exact_rows_or_stop(2, &tori, &[temperature], 1.0, 0, &mut || {
            asked += 1;
            asked == 3
        });
        assert!(matches!(r, Err(PottsError::Interrupted)), "{r:?}");
        assert_eq!(asked, 3);
    }
    let mut asked = 0;
    let rows = exact_rows_or_stop(2, &[(8, 8)], &[1.0, 2.0], 1.0, 0, &mut || {
        asked += 1;
        false
    })
    .unwrap();
    assert_eq!((rows.len(), asked), (2, 3));
    assert_eq!(rows, exact_rows(2, &[(8, 8)], &[1.0, 2.0], 1.0).unwrap());
}

/// q beyond a byte was counted as q mod 256 on 1-wide tori (q = 300
/// gave q = 44's energy); it is refused as the simulations refuse it.
#[test]
fn q_beyond_a_byte_is_refused_not_wrapped() {
    assert!(ExactTorus::check(255, 1, 2).is_ok());
    for q in [256, 258, 300, 4096] {
        let e = ExactTorus::check(q, 1, 2).unwrap_err().to_string();
        assert!(e.contains("from 2 to 255"), "{q}: {e}");
        assert!(exact_rows(q, &[(1, 2)], &[1.0], 1.0).is_err(), "{q}");
    }
    // q = 255 on the 1 × 2 torus: each site's horizontal bond is to
    // itself (−J each, always), and two vertical bonds join the two
    // sites (−2J when they agree), so E/N = −1 − ⟨δ⟩ with
    // ⟨δ⟩ = q e^{2βJ} / (q e^{2βJ} + q(q − 1)).
    let m = ExactTorus::new(255, 1, 2).unwrap().moments(1.0, 1.0).unwrap();
    let (q, b) = (255.0f64, 1.0f64);
    let agree = q * (2.0 * b).exp();
    let e = -1.0 - agree / (agree + q * (q - 1.0));
    assert!((m.energy - e).abs() < 1e-12, "{} vs {e}", m.energy);
}

#[test]
fn rows_that_do_not_fit_in_memory_are_refused_before_any_is_computed() {
    let mut asked = false;
    let e = exact_rows_or_stop(3, &[(6, 6)], &[1.0, 2.0], 1.0, 1 << 62, &mut || {
        asked = true;
        false
    })
    .unwrap_err();
    assert!(matches!(e, PottsError::OutOfHostMemory(_)), "{e}");
    assert!(e.to_string().contains("keeping the 2 exact values needs"), "{e}");
    assert!(!asked, "refused before the first torus");
}

#[test]
fn exact_torus_takes_kaufman_for_ising_and_counts_other_q() {
    let k = ExactTorus::new(2, 24, 16).unwrap();
    assert!(matches!(k, ExactTorus::Kaufman { width: 24, height: 16, .. }));
    for (t, j) in [(0.8, 1.0), (1.1346, 1.0), (3.0, 1.0), (1.0, -1.0)] {
        assert_eq!(k.moments(t, j).unwrap(), ising_torus(24, 16, t, j).unwrap());
    }
    for (q, w, h) in [(3, 4, 4), (3, 3, 5), (5, 4, 4), (9, 3, 3), (4, 6, 6)] {
        let e = ExactTorus::new(q, w, h).unwrap();
        let dos = density_of_states(q, w, h);
        for t in [0.3, 0.7, 1.5] {
            assert_eq!(e.moments(t, 1.0).unwrap(), dos.moments(t, 1.0), "q = {q}, {w} × {h}, T = {t}");
        }
        assert!(e.moments(0.0, 1.0).is_err() && e.moments(f64::NAN, 1.0).is_err());
        assert!(e.moments(1.0, f64::INFINITY).is_err());
    }
}

/// The frustrated Ising antiferromagnet (J < 0, an odd side) has no
/// Kaufman solution: small tori are counted, the rest refused.
#[test]
fn frustrated_ising_tori_are_counted() {
    for (w, h) in [(3, 3), (5, 4), (3, 7), (1, 5)] {
        let k = ExactTorus::new(2, w, h).unwrap();
        let dos = density_of_states(2, w, h);
        for t in [0.3, 1.0, 4.0] {
            assert_eq!(k.moments(t, -1.0).unwrap(), dos.moments(t, -1.0), "{w} × {h}, T = {t}");
            assert_eq!(k.moments(t, 1.0).unwrap(), ising_torus(w, h, t, 1.0).unwrap(), "{w} × {h}, T = {t}");
        }
        assert!(k.method_for(-1.0).starts_with("exact enumeration") && k.method_for(1.0).starts_with("Kaufman"));
    }
    // Even sides stay Kaufman's, which the count confirms.
    let (k, dos) = (ExactTorus::new(2, 4, 6).unwrap(), density_of_states(2, 4, 6));
    assert!(k.method_for(-0.5).starts_with("Kaufman"));
    let (a, b) = (k.moments(0.7, -0.5).unwrap(), dos.moments(0.7, -0.5));
    assert!((a.energy - b.energy).abs() < 1e-12 && (a.specific_heat - b.specific_heat).abs() < 1e-11, "{a:?} {b:?}");
    let e = ExactTorus::new(2, 15, 15).unwrap().moments(1.0, -1.0).unwrap_err().to_string();
    assert!(e.contains("needs both sides even, or a torus small enough to count"), "{e}");
    assert!(e.contains("at most 127 sites, e.g. 11 × 11"), "{e}");
    // A table refuses such a torus before it computes any other.
    let mut computed = 0;
    let refused = for_each_exact_row(2, &[(4, 4), (13, 13)], &[1.0], -1.0, 0, &mut || false, &mut |_| computed += 1);
    assert!(refused.unwrap_err().to_string().contains("13 × 13 antiferromagnet"));
    assert_eq!(computed, 0);
    // 3 × 42 has 126 sites: counted.
    assert!(exact_rows_or_stop(2, &[(3, 42)], &[1.0], -1.0, 0, &mut || false).is_ok());
}

/// Tori with both sides near 2^24 (2.8·10¹⁴ sites): away from T_c they
/// are the infinite lattice to every digit, and the sums, of 2^25 terms
/// reaching 10¹⁴, must keep them (plainly summed they gave c = 8732
/// instead of 1.123 at 2^24 × (2^24 − 1)).
#[test]
fn the_largest_tori_keep_their_digits() {
    for t in [1.2, 3.0] {
        let reference = ising_torus(1 << 12, 1 << 12, t, 1.0).unwrap();
        for (w, h) in [(1 << 24, (1 << 24) - 1), (16_777_000, (1 << 24) - 1)] {
            let m = ising_torus(w, h, t, 1.0).unwrap();
            let close = |a: f64, b: f64| (a - b).abs() <= 1e-9 * b.abs();
            assert!(close(m.energy, reference.energy), "{w} × {h}, T = {t}: e = {}", m.energy);
            assert!(close(m.specific_heat, reference.specific_heat), "{w} × {h}, T = {t}: c = {}", m.specific_heat);
        }
    }
}

/// Near T_c, where the four Kaufman products compete, large tori keep
/// their digits: the references are the Ferdinand–Fisher torus formula
/// summed in 30-digit arithmetic (mpmath). The products are weighed from
/// their compensated sums: each product's logarithm is about N, and
/// rounded to f64 first it would carry N ulps into the weights (3.4·10⁻¹¹
/// of c at 4096², 4.5·10⁻⁹ at 65536²). What is left, 2·10⁻¹³ and 2·10⁻¹¹,
/// comes from the rounding of each term.
#[test]
fn large_tori_at_the_critical_point_keep_their_digits() {
    let t_c = 1.134592657106511; // 1/ln(1 + √2) as f64
    for (l, t, energy, specific_heat) in [
        (4096, t_c, -1.7071827625645335, 4.251564123235065),
        (16384, t_c, -1.7071257765313963, 4.937171482307318),
        (16384, 1.1346, -1.7070894054141106, 4.967855331312542),
        (65536, t_c, -1.707111530022765, 5.6227553657923846),
        (65536, 1.1346, -1.7070699143662327, 5.683807188107826),
    ] {
        let m = ising_torus(l, l, t, 1.0).unwrap();
        let relative = |a: f64, b: f64| ((a - b) / b).abs();
        assert!(relative(m.energy, energy) < 1e-14, "L = {l}, T = {t}: e = {}", m.energy);
        // The products' 2L terms each are rounded: about 1e-18·L^1.5, and
        // ten times that allowed.
        let allowed = 1e-17 * (l as f64).powf(1.5);
        assert!(relative(m.specific_heat, specific_heat) < allowed, "L = {l}, T = {t}: c = {}", m.specific_heat);
    }
}

/// Tiny J and T: the moments are taken in bonds and scaled, so ⟨e²⟩'s
/// underflow does not take the specific heat with it.
#[test]
fn tiny_couplings_keep_the_specific_heat() {
    let dos = density_of_states(3, 4, 4);
    let one = dos.moments(1.0, 1.0);
    let tiny = dos.moments(1e-200, 1e-200);
    assert!((tiny.specific_heat - one.specific_heat).abs() <= 1e-12 * one.specific_heat);
    assert!((tiny.energy / 1e-200 - one.energy).abs() <= 1e-12);
}

#[test]
fn exact_torus_refuses_what_no_method_reaches_without_panicking() {
    for (q, w, h, largest) in
        [(3, 8, 8, "7 × 7"), (4, 7, 7, "6 × 6"), (9, 4, 4, "3 × 3"), (3, 4, 100, "7 × 7"), (255, 3, 3, "1 × 1")]
    {
        let e = ExactTorus::new(q, w, h).unwrap_err().to_string();
        assert!(e.contains(&format!("q = {q} on {w} × {h}")) && e.contains(largest), "{e}");
    }
    for (q, w, h) in
        [(1, 4, 4), (0, 4, 4), (5000, 1, 1), (3, 0, 4), (2, 4, 0), (3, usize::MAX, 2), (3, usize::MAX, usize::MAX)]
    {
        assert!(ExactTorus::new(q, w, h).is_err(), "q = {q}, {w} × {h}");
    }
    // Kaufman's sums have a term per row and column: sides up to 2^24.
    for (w, h) in [(MAX_KAUFMAN_SIDE + 1, 4), (4, usize::MAX), (usize::MAX, usize::MAX)] {
        let e = ExactTorus::check(2, w, h).unwrap_err().to_string();
        assert!(e.contains("sides up to 16777216"), "{e}");
        assert!(ising_torus(w, h, 1.0, 1.0).is_err());
    }
    assert!(ExactTorus::check(2, 4, MAX_KAUFMAN_SIDE).is_ok());
    // The largest reachable squares are reached.
    for (q, l) in [(3, 7), (4, 6), (5, 5), (8, 4), (16, 3)] {
        assert!(enumeration_reaches(q, l, l) && !enumeration_reaches(q, l + 1, l + 1), "q = {q}, L = {l}");
    }
}

/// Counts by brute force over all q^(W·H) configurations, each site
/// contributing its bonds to (x+1 mod W, y) and (x, y+1 mod H).
fn brute_force(q: u32, width: usize, height: usize) -> Vec<u128> {
    let n = width * height;
    let mut counts = vec![0u128; 2 * n + 1];
    let total = (q as usize).pow(n as u32);
    let mut spins = vec![0u32; n];
    for mut c in 0..total {
        for s in spins.iter_mut() {
            *s = c as u32 % q;
            c /= q as usize;
        }
        let mut k = 0;
        for y in 0..height {
            for x in 0..width {
                let s = spins[y * width + x];
                k += (s == spins[y * width + (x + 1) % width]) as usize;
                k += (s == spins[((y + 1) % height) * width + x]) as usize;
            }
        }
        counts[k] += 1;
    }
    counts
}

#[test]
fn transfer_matrix_matches_brute_force() {
    for &(q, w, h) in &[
        (2, 4, 4),
        (3, 2, 4),
        (3, 4, 2),
        (2, 2, 2),
        (2, 1, 1),
        (2, 3, 3),
        (3, 3, 2),
        (2, 6, 2),
        (4, 2, 3),
        (2, 2, 6),
        // q = 3 and 4 on square tori, the rows' classes in use; and
        // both orientations of a torus whose sides differ.
        (3, 3, 3),
        (4, 3, 3),
        (3, 4, 3),
        (3, 3, 4),
        (4, 4, 2),
        (3, 4, 4),
        (2, 5, 3),
        (2, 1, 5),
        (5, 2, 2),
    ] {
        let dos = density_of_states(q, w, h);
        assert_eq!(dos.sites, w * h);
        assert_eq!(dos.bonds, 2 * w * h);
        assert_eq!(dos.counts, brute_force(q, w, h), "q={q} {w}x{h}");
    }
}

#[test]
fn totals_and_ground_states() {
    let dos = density_of_states(2, 4, 4);
    assert_eq!(dos.counts.iter().sum::<u128>(), 65536);
    assert_eq!(dos.counts[32], 2);
    // Bipartite lattice: two antiferromagnetic (checkerboard) states have no equal bond.
    assert_eq!(dos.counts[0], 2);

    let dos = density_of_states(3, 4, 4);
    assert_eq!(dos.counts.iter().sum::<u128>(), 3u128.pow(16));
    assert_eq!(dos.counts[32], 3);
    // One flipped spin breaks 4 bonds: 3 ground states · 16 sites · 2 other states.
    assert_eq!(dos.counts[28], 96);

    let dos = density_of_states(2, 6, 6);
    assert_eq!(dos.counts.iter().sum::<u128>(), 2u128.pow(36));
    // Ising symmetry k ↔ 2N − k on a bipartite lattice for q = 2.
    let rev: Vec<u128> = dos.counts.iter().rev().copied().collect();
    assert_eq!(dos.counts, rev);

    // q = 3 and 4 on 6 × 6: q^36 in all, q ground states, and q·N·(q − 1)
    // states one flip above them (4 bonds broken); none with one to
    // three unequal bonds (no domain wall on a torus is that short).
    for q in [3u32, 4] {
        let dos = density_of_states(q, 6, 6);
        let q = u128::from(q);
        assert_eq!(dos.counts.iter().sum::<u128>(), q.pow(36));
        assert_eq!(dos.counts[72], q);
        assert_eq!(dos.counts[68], q * 36 * (q - 1));
        assert_eq!((dos.counts[69], dos.counts[70], dos.counts[71]), (0, 0, 0));
    }
}

#[test]
#[should_panic(expected = "q^min(width, height)")]
fn too_wide_panics() {
    density_of_states(3, 8, 9);
}

#[test]
#[should_panic(expected = "128 bits")]
fn too_many_configurations_panic() {
    density_of_states(2, 2, 64);
}

#[test]
fn rows_of_one_class_are_the_same_row() {
    // Shifted, reflected, renamed: one class; a different pattern: another.
    let c = canonical_row(&[2, 0, 0, 1]);
    for r in [[0, 0, 1, 2], [1, 0, 0, 2], [0, 2, 1, 1], [3, 1, 1, 0], [1, 2, 0, 0]] {
        assert_eq!(canonical_row(&r), c, "{r:?}");
    }
    assert_ne!(canonical_row(&[0, 1, 0, 2]), c);
    assert_eq!(canonical_row(&[5]), vec![0]);
}

#[test]
fn moments_limits_and_derivative() {
    let dos = density_of_states(2, 4, 4);
    // Infinite temperature: each bond equal with probability 1/q.
    let m = dos.moments(f64::INFINITY, 1.0);
    assert!((m.energy + 1.0).abs() < 1e-12);
    // Very low temperature: ground state.
    let m = dos.moments(0.02, 1.0);
    assert!((m.energy + 2.0).abs() < 1e-12);
    assert!(m.specific_heat.abs() < 1e-6);
    // c = d⟨e⟩/dT.
    let t = 1.2;
    let h = 1e-5;
    let de = (dos.moments(t + h, 1.0).energy - dos.moments(t - h, 1.0).energy) / (2.0 * h);
    let m = dos.moments(t, 1.0);
    assert!((de - m.specific_heat).abs() < 1e-6, "{de} vs {}", m.specific_heat);
    assert!((m.energy_sq - m.energy * m.energy - m.specific_heat * t * t / 16.0).abs() < 1e-12);
    // No overflow at large J/T.
    let m = dos.moments(1e-3, 5.0);
    assert!((m.energy + 10.0).abs() < 1e-12);
}

#[test]
fn moments_match_direct_sum_q3() {
    // Direct Boltzmann sum over all 3^8 configurations of a 4 × 2 lattice.
    let (q, w, h, t, j) = (3u32, 4usize, 2usize, 0.9, 1.3);
    let counts = brute_force(q, w, h);
    let n = (w * h) as f64;
    let (mut z, mut e1, mut e2) = (0.0, 0.0, 0.0);
    for (k, &c) in counts.iter().enumerate() {
        let e = -j * k as f64 / n;
        let wgt = c as f64 * (-n * e / t).exp();
        z += wgt;
        e1 += wgt * e;
        e2 += wgt * e * e;
    }
    let m = density_of_states(q, w, h).moments(t, j);
    assert!((m.energy - e1 / z).abs() < 1e-12);
    assert!((m.energy_sq - e2 / z).abs() < 1e-12);
    assert!((m.specific_heat - n * (e2 / z - (e1 / z).powi(2)) / (t * t)).abs() < 1e-9);
}

#[test]
fn kaufman_torus_matches_enumeration() {
    let mut worst: f64 = 0.0;
    for &(w, h) in &[(4, 4), (4, 6), (6, 4), (6, 6), (2, 2), (2, 4), (4, 2), (3, 3), (3, 5), (5, 2), (6, 8), (8, 4)] {
        let dos = density_of_states(2, w, h);
        for i in 0..60 {
            let t = 0.3 + 0.1 * i as f64;
            let antiferro = if w % 2 == 0 && h % 2 == 0 { -1.0 } else { 0.7 };
            for j in [1.0, antiferro] {
                let a = ising_torus(w, h, t, j).unwrap();
                let b = dos.moments(t, j);
                let re = ((a.energy - b.energy) / b.energy).abs();
                let rc = ((a.specific_heat - b.specific_heat) / b.specific_heat).abs();
                let r2 = ((a.energy_sq - b.energy_sq) / b.energy_sq).abs();
                worst = worst.max(re).max(rc).max(r2);
                assert!(re < 1e-10 && rc < 1e-10 && r2 < 1e-10, "{w}x{h} T={t} J={j}: {a:?} vs {b:?}");
            }
        }
    }
    eprintln!("worst relative difference {worst:e}");
}

/// ⟨e⟩ at infinite temperature: each bond to another spin equal half
/// the time, a bond of a spin to itself (a side of 1) always.
fn limit_energy(w: usize, h: usize) -> f64 {
    let bond = |side: usize| if side == 1 { -1.0 } else { -0.5 };
    bond(w) + bond(h)
}

#[test]
fn kaufman_torus_keeps_its_digits_at_high_temperature() {
    // Far above T_c the energy's distance from −J and the specific heat
    // are small numbers; they must come out to many digits, not as the
    // rounding left of two large cancelling terms. Against the
    // enumeration (exact sums of positive terms) up to T = 10⁶ ...
    for &(w, h) in &[(4, 4), (2, 6), (3, 5), (6, 6), (4, 1), (1, 4), (1, 1), (2, 2)] {
        let dos = density_of_states(2, w, h);
        // Var(e), on to f64's largest T (a single row, m = 1, is where
        // the sums lose the most digits).
        let limit = dos.moments(1e12, 1.0);
        let limit = limit.energy_sq - limit.energy * limit.energy;
        for t in [1e12, 1e50, 1e100, 1e200, f64::MAX] {
            let a = ising_torus(w, h, t, 1.0).unwrap();
            let got = a.energy_sq - a.energy * a.energy;
            assert!((got - limit).abs() <= 1e-9 * limit + 1e-15, "{w}x{h} T={t:e}: Var(e) {got} vs {limit}");
            assert!(t < 1e20 || (a.energy - limit_energy(w, h)).abs() < 1e-12, "{w}x{h} T={t:e}: {a:?}");
        }
        if w * h == 1 {
            // Nothing fluctuates: e = −2J, c = 0 (checked above).
            continue;
        }
        // The first two on either side of K = SMALL_K, where the sums
        // change form.
        let switch = 0.5 / SMALL_K;
        for t in [switch * (1.0 - 1e-9), switch * (1.0 + 1e-9), 2.6, 4.0, 10.0, 100.0, 1e3, 1e4, 1e5, 1e6] {
            let (a, b) = (ising_torus(w, h, t, 1.0).unwrap(), dos.moments(t, 1.0));
            let re = (a.energy / b.energy - 1.0).abs();
            let rd = ((a.energy + 1.0) / (b.energy + 1.0) - 1.0).abs();
            let rc = (a.specific_heat / b.specific_heat - 1.0).abs();
            assert!(re < 1e-13 && rd < 1e-8 && rc < 1e-8, "{w}x{h} T={t}: {a:?} vs {b:?}");
            if t < 3.0 {
                assert!(rc < 1e-12, "{w}x{h} T={t}: {a:?} vs {b:?}");
            }
        }
    }
    // ... and against the high-temperature series beyond, where the
    // torus is the infinite lattice to this order (its shortest winding
    // loop is L bonds long): with t = tanh K, K = J/2T,
    // e + 1 = −t − 2t³(1 − t²) + O(t⁵) and c = 2K²(1 − t²) + O(K⁴).
    for l in [16, 64, 1024] {
        for t in [1e3, 1e5, 1e8, 1e12, 1e15, 1e100] {
            let m = ising_torus(l, l, t, 1.0).unwrap();
            let k: f64 = 0.5 / t;
            let th = k.tanh();
            let series_e = -th - 2.0 * th.powi(3);
            let series_c = 2.0 * k * k * (1.0 - th * th);
            // (e itself holds e + 1 to f64's spacing near 1.)
            assert!((m.energy + 1.0 - series_e).abs() < 1e-6 * series_e.abs() + 4e-16, "L={l} T={t:e}: {m:?}");
            assert!((m.specific_heat / series_c - 1.0).abs() < 1e-5, "L={l} T={t:e}: {m:?}");
        }
        // Var(e) = c·T²/N = J²(1 − t²)/2N, also where K² and c
        // underflow (and K itself, beyond T ≈ 10³⁰⁸).
        for t in [1e3, 1e100, 1e200, 1e300, f64::MAX] {
            let m = ising_torus(l, l, t, 1.0).unwrap();
            let th = (0.5 / t).tanh();
            let variance = (1.0 - th * th) / (2.0 * (l * l) as f64);
            let got = m.energy_sq - m.energy * m.energy;
            assert!((got / variance - 1.0).abs() < 1e-5, "L={l} T={t:e}: Var(e) {got} vs {variance}");
            assert!(m.energy == -1.0 || t < 1e20, "L={l} T={t:e}: {m:?}");
        }
    }
}

#[test]
fn kaufman_torus_approaches_onsager_away_from_tc() {
    // The finite-size corrections of a torus decay as e^{−L/ξ} away from
    // T_c: at L = 512 they are below rounding from T = 0.5 to 5.
    for t in [0.5, 0.7, 0.9, 1.0, 1.3, 1.6, 2.0, 3.0, 5.0] {
        let e = ising_torus(512, 512, t, 1.0).unwrap().energy;
        assert!((e - ising_energy_per_site(t)).abs() < 1e-11, "T={t}: {e} vs {}", ising_energy_per_site(t));
    }
    // Smaller tori converge to the same values from a distance.
    let t = 1.5;
    let diffs: Vec<f64> = [8, 16, 32]
        .iter()
        .map(|&l| (ising_torus(l, l, t, 1.0).unwrap().energy - ising_energy_per_site(t)).abs())
        .collect();
    assert!(diffs[0] > diffs[1] && diffs[1] > diffs[2], "{diffs:?}");
}

#[test]
fn kaufman_torus_at_tc_has_the_finite_size_laws_of_ferdinand_and_fisher() {
    // At T_c the energy approaches Onsager's as 1/L and the specific heat
    // grows as A₀ ln L with A₀ = (8/π) K_c² = (2/π) ln²(1 + √2) (Ising
    // K_c = ln(1 + √2)/2; c per site is the same for the Potts form).
    let tc = potts_critical_temperature(2);
    let ec = ising_energy_per_site(tc);
    let a0 = 2.0 / std::f64::consts::PI * (1.0 + 2f64.sqrt()).ln().powi(2);
    let at = |l: usize| ising_torus(l, l, tc, 1.0).unwrap();
    for l in [64, 128, 256] {
        let (small, large) = (at(l), at(2 * l));
        let ratio = (small.energy - ec) / (large.energy - ec);
        assert!((ratio - 2.0).abs() < 1e-3, "L={l}: energy corrections shrink by {ratio}");
        let step = large.specific_heat - small.specific_heat;
        assert!((step / (a0 * 2f64.ln()) - 1.0).abs() < 0.01, "L={l}: c grows by {step}");
    }
}

/// The temperature of the specific-heat maximum of an L × L torus, by
/// golden-section search.
fn specific_heat_peak(l: usize) -> (f64, f64) {
    let c = |t: f64| ising_torus(l, l, t, 1.0).unwrap().specific_heat;
    let r = (5f64.sqrt() - 1.0) / 2.0;
    let (mut a, mut b) = (0.9, 1.6);
    let (mut x1, mut x2) = (b - r * (b - a), a + r * (b - a));
    let (mut c1, mut c2) = (c(x1), c(x2));
    while b - a > 1e-9 {
        if c1 > c2 {
            b = x2;
            (x2, c2) = (x1, c1);
            x1 = b - r * (b - a);
            c1 = c(x1);
        } else {
            a = x1;
            (x1, c1) = (x2, c2);
            x2 = a + r * (b - a);
            c2 = c(x2);
        }
    }
    let t = 0.5 * (a + b);
    (t, c(t))
}

#[test]
fn kaufman_torus_specific_heat_peak_moves_to_tc() {
    let tc = potts_critical_temperature(2);
    let mut last = (f64::INFINITY, 0.0);
    for l in [8, 16, 32, 64, 128] {
        let (t, c) = specific_heat_peak(l);
        let shift = t - tc;
        // Above T_c on a torus, closer with each doubling (by about half:
        // the shift scales as 1/L), and the peak is finite but growing.
        assert!(shift > 0.0 && shift < last.0 * 0.6, "L={l}: peak at {t}, shift {shift} after {}", last.0);
        assert!(c.is_finite() && c > last.1, "L={l}: peak height {c} after {}", last.1);
        last = (shift, c);
    }
    assert!(last.0 < 0.01 * tc);
}

#[test]
fn kaufman_torus_is_symmetric_in_its_sides() {
    for &(w, h) in &[(8, 32), (3, 17), (64, 256), (2, 100), (511, 6)] {
        for t in [0.6, 1.0, 1.134, 1.2, 2.5] {
            let (a, b) = (ising_torus(w, h, t, 1.0).unwrap(), ising_torus(h, w, t, 1.0).unwrap());
            assert!((a.energy - b.energy).abs() < 1e-12 * a.energy.abs(), "{w}x{h} T={t}: {a:?} {b:?}");
            assert!((a.specific_heat - b.specific_heat).abs() < 1e-10 * a.specific_heat, "{w}x{h} T={t}: {a:?} {b:?}");
        }
    }
}

#[test]
fn exact_tori_reach_their_ground_state_at_the_smallest_temperatures() {
    // J/T · k and K² overflow long before T reaches f64's smallest
    // normal number; the answer there is the ground state, C = 0.
    let tiny = [1e-3, 1e-100, 1e-160, 1e-200, 1e-300, f64::MIN_POSITIVE];
    for t in tiny {
        for (j, ground) in [(1.0, -2.0), (10.0, -20.0), (-1.0, 0.0)] {
            for l in [4, 16, 64] {
                let m = ising_torus(l, l, t, j).unwrap();
                assert_eq!((m.energy, m.specific_heat), (ground, 0.0), "L={l} T={t:e} J={j}: {m:?}");
                assert!(m.energy_sq.is_finite(), "L={l} T={t:e} J={j}: {m:?}");
            }
            for q in [2, 3] {
                let m = ExactTorus::new(q, 4, 4).unwrap().moments(t, j).unwrap();
                assert_eq!((m.energy, m.specific_heat), (ground, 0.0), "q={q} T={t:e} J={j}: {m:?}");
            }
        }
    }
}

#[test]
fn kaufman_torus_is_finite_everywhere_and_refuses_bad_input() {
    for l in [2, 16, 512, 2048] {
        for t in [1e-3, 0.05, 0.3, 0.5, 1.0, potts_critical_temperature(2), 2.0, 5.0, 100.0, 1e6] {
            let m = ising_torus(l, l, t, 1.0).unwrap();
            assert!(m.energy.is_finite() && m.energy_sq.is_finite() && m.specific_heat >= 0.0, "L={l} T={t}: {m:?}");
            assert!((-2.0..=-1.0).contains(&m.energy), "L={l} T={t}: {m:?}");
        }
    }
    // Scale invariance: only J/T matters, and J = 0 has no energy.
    let (a, b) = (ising_torus(32, 16, 1.1, 1.0).unwrap(), ising_torus(32, 16, 2.2, 2.0).unwrap());
    assert!((2.0 * a.energy - b.energy).abs() < 1e-12 && (a.specific_heat - b.specific_heat).abs() < 1e-12);
    let zero = ising_torus(8, 8, 1.0, 0.0).unwrap();
    assert_eq!((zero.energy, zero.specific_heat), (0.0, 0.0));
    assert!(ising_torus(0, 4, 1.0, 1.0).is_err());
    assert!(ising_torus(4, 4, 0.0, 1.0).is_err());
    assert!(ising_torus(4, 4, f64::NAN, 1.0).is_err());
    assert!(ising_torus(4, 4, 1.0, f64::INFINITY).is_err());
    assert!(ising_torus(4, 3, 1.0, -1.0).unwrap_err().to_string().contains("ExactTorus counts it"));
    assert!(ising_torus(40, 31, 1.0, -1.0).unwrap_err().to_string().contains("needs both sides even"));
}

#[test]
fn elliptic_integral() {
    assert!((elliptic_k(0.0) - std::f64::consts::FRAC_PI_2).abs() < 1e-15);
    // K(1/√2) = Γ(1/4)² / (4√π).
    assert!((elliptic_k(std::f64::consts::FRAC_1_SQRT_2) - 1.854_074_677_301_372).abs() < 1e-14);
    assert!(elliptic_k(1.0).is_infinite());
}

#[test]
fn onsager_and_yang() {
    assert!((ising_energy_per_site(0.75) + 1.975558).abs() < 1e-6, "{}", ising_energy_per_site(0.75));
    assert!((ising_magnetization(0.75) - 0.98650).abs() < 1e-5, "{}", ising_magnetization(0.75));
    let tc = potts_critical_temperature(2);
    assert!((tc - 1.0 / (1.0 + 2f64.sqrt()).ln()).abs() < 1e-15);
    assert!(ising_magnetization(tc) < 1e-3);
    assert!(ising_magnetization(tc * (1.0 - 1e-12)) < 0.1);
    assert!(ising_magnetization(tc * 0.999) > 0.3);
    assert_eq!(ising_magnetization(tc * 1.001), 0.0);
    // Energy at T_c: Ising −√2, i.e. Potts −1 − 1/√2; continuous through T_c.
    let ec = -1.0 - std::f64::consts::FRAC_1_SQRT_2;
    assert!((ising_energy_per_site(tc) - ec).abs() < 1e-9, "{}", ising_energy_per_site(tc));
    assert!((ising_energy_per_site(tc * (1.0 + 1e-9)) - ec).abs() < 1e-6);
    assert!((ising_energy_per_site(tc * (1.0 - 1e-9)) - ec).abs() < 1e-6);
    // Limits.
    assert_eq!(ising_energy_per_site(0.0), -2.0);
    assert!((ising_energy_per_site(1e-3) + 2.0).abs() < 1e-12);
    assert!((ising_energy_per_site(1e6) + 1.0).abs() < 1e-5);
    assert!(ising_energy_per_site(-1.0).is_nan());
    // c = de/dT is positive and peaks near T_c.
    let c = |t: f64| (ising_energy_per_site(t + 1e-6) - ising_energy_per_site(t - 1e-6)) / 2e-6;
    assert!(c(tc * 0.99) > c(tc * 0.9) && c(tc * 1.01) > c(tc * 1.1) && c(0.5) > 0.0);
}

#[test]
fn onsager_matches_large_finite_lattice_far_from_tc() {
    // Away from T_c the finite-size corrections of a 6 × 6 torus are tiny.
    let dos = density_of_states(2, 6, 6);
    for t in [0.5, 0.7, 3.0] {
        let diff = dos.moments(t, 1.0).energy - ising_energy_per_site(t);
        assert!(diff.abs() < 2e-3, "t={t}: {diff}");
    }
}

#[test]
fn baxter_transition() {
    let TransitionEnergies { ordered: eo, disordered: ed } = potts_transition_energies(9).unwrap();
    assert!((eo + 1.633167).abs() < 1e-6, "{eo}");
    assert!((ed + 1.033499).abs() < 1e-6, "{ed}");
    assert!((ed - eo - 0.599668).abs() < 1e-6);
    let TransitionEnergies { ordered: eo, disordered: ed } = potts_transition_energies(10).unwrap();
    // Literature: L ≈ 0.696 for q = 10 (e.g. Baxter 1973; Janke & Kappler's simulations).
    assert!((ed - eo - 0.696049).abs() < 1e-6, "{}", ed - eo);
    assert!((eo + 1.664252).abs() < 1e-6 && (ed + 0.968203).abs() < 1e-6, "{eo} {ed}");
    for q in 2..5 {
        assert!(potts_transition_energies(q).is_none());
    }
    // The latent heat grows with q and vanishes as q → 4⁺.
    let l = |q| potts_transition_energies(q).map(|e| e.disordered - e.ordered).unwrap();
    assert!(l(5) > 0.0 && l(5) < 0.06 && l(6) > l(5) && l(100) > l(20));
    assert!((potts_critical_temperature(10) - 0.701_231).abs() < 1e-6);
}
