//! Swendsen–Wang against independent references: cluster labels against a
//! breadth-first search over bonds drawn here from the documented rule,
//! whole sweeps against a naive sweep, the bond probability, the exact
//! one-sweep transition kernel of a tiny lattice (detailed balance), and
//! ⟨E⟩ at T_c against exact enumeration; the CUDA backend against the CPU
//! bit for bit on awkward sizes.

use std::collections::VecDeque;

use warpmc_potts::exact::density_of_states;
use warpmc_potts::swendsen_wang::{bond_threshold, cluster_labels, sweeps_cpu};
use warpmc_potts::{InitialState, Lattice, PottsError, PottsModel};
use warpmc_rng::{Domain, philox_block};
use warpmc_testkit::SplitMix64;

/// The chain stream the tests use, in the Potts domain as the protocol's.
fn chain(k: u64) -> u64 {
    Domain::Potts.stream(k)
}

/// A lattice of any size with spins from `seed` (not from warpmc-rng).
fn random_lattice(w: usize, h: usize, q: u32, seed: u64) -> Lattice {
    let mut g = SplitMix64::new(seed);
    let spins = (0..w * h).map(|_| (g.next_u64() % q as u64) as u8).collect();
    Lattice::from_spins(w, h, q, spins).unwrap()
}

/// Whether bond `b` (2i: right of site i, 2i + 1: down) is active in
/// sweep `t`, by the rule of swendsen_wang.rs written out again: words of
/// the Philox block (seed, chain in domain SwendsenWangBonds, t·2³³ + ⌊b/4⌋).
fn bond_active(l: &Lattice, th: u32, seed: u64, stream: u64, t: u64, b: usize) -> bool {
    let (w, h) = (l.width(), l.height());
    let i = b / 2;
    let (x, y) = (i % w, i / w);
    let j = if b.is_multiple_of(2) { y * w + (x + 1) % w } else { ((y + 1) % h) * w + x };
    let s = Domain::SwendsenWangBonds.stream(stream & warpmc_rng::stream::MAX_STREAM_INDEX);
    let word = philox_block(seed, s, (t << 33) | (b / 4) as u64)[b % 4];
    l.spins()[i] == l.spins()[j] && word < th
}

/// Components by breadth-first search over the active bonds, each site
/// labelled with the smallest index of its component.
fn bfs_labels(l: &Lattice, th: u32, seed: u64, stream: u64, t: u64) -> Vec<u64> {
    let (w, h) = (l.width(), l.height());
    let n = w * h;
    let mut adj = vec![Vec::new(); n];
    for b in 0..2 * n {
        if bond_active(l, th, seed, stream, t, b) {
            let i = b / 2;
            let (x, y) = (i % w, i / w);
            let j = if b % 2 == 0 { y * w + (x + 1) % w } else { ((y + 1) % h) * w + x };
            adj[i].push(j);
            adj[j].push(i);
        }
    }
    let mut label = vec![u64::MAX; n];
    for start in 0..n {
        if label[start] != u64::MAX {
            continue;
        }
        // Visiting in increasing order, the first unlabelled site is its
        // component's smallest.
        label[start] = start as u64;
        let mut queue = VecDeque::from([start]);
        while let Some(i) = queue.pop_front() {
            for &j in &adj[i] {
                if label[j] == u64::MAX {
                    label[j] = start as u64;
                    queue.push_back(j);
                }
            }
        }
    }
    label
}

/// A cluster's new state by the documented rule: word r mod 4 of the
/// Philox block (seed, chain in domain SwendsenWangClusters, t·2³² + ⌊r/4⌋).
fn naive_state(seed: u64, stream: u64, t: u64, r: u64, q: u32) -> u8 {
    let s = Domain::SwendsenWangClusters.stream(stream & warpmc_rng::stream::MAX_STREAM_INDEX);
    let w = philox_block(seed, s, (t << 32) | (r >> 2))[(r & 3) as usize];
    ((w as u64 * q as u64) >> 32) as u8
}

/// One sweep from BFS labels and the documented draws.
fn naive_sweep(l: &Lattice, th: u32, seed: u64, stream: u64, t: u64) -> Lattice {
    let labels = bfs_labels(l, th, seed, stream, t);
    let spins = labels.iter().map(|&r| naive_state(seed, stream, t, r, l.q())).collect();
    Lattice::from_spins(l.width(), l.height(), l.q(), spins).unwrap()
}

/// Awkward sizes: single sites, single rows and columns, width 2 (double
/// bonds), odd and prime sizes.
const SIZES: [(usize, usize); 10] =
    [(1, 1), (1, 7), (7, 1), (2, 2), (2, 5), (3, 5), (5, 3), (17, 33), (33, 17), (64, 8)];

#[test]
fn labels_match_breadth_first_search() {
    for (k, &(w, h)) in SIZES.iter().enumerate() {
        for q in [2u32, 3, 7] {
            for th in [0u32, 1 << 30, 2_516_582_400, u32::MAX] {
                let l = random_lattice(w, h, q, k as u64 * 31 + q as u64);
                let (seed, stream, t) = (k as u64 + 5, chain(q as u64), th as u64 % 97);
                let got = cluster_labels(&l, th, seed, stream, t).unwrap();
                assert_eq!(got, bfs_labels(&l, th, seed, stream, t), "{w}x{h} q={q} th={th}");
            }
        }
    }
}

#[test]
fn sweeps_match_a_naive_sweep() {
    for (k, &(w, h)) in SIZES.iter().enumerate() {
        for q in [2u32, 3, 9] {
            let model = PottsModel::new(q, 2, 2).unwrap();
            let th = bond_threshold(&model, 0.9).unwrap();
            let (seed, stream) = (100 + k as u64, chain(7));
            let start = random_lattice(w, h, q, 1000 + k as u64);
            // Sweeps 3, 4, 5 in one call, then one by one.
            let mut fast = start.clone();
            sweeps_cpu(&mut fast, &model, th, seed, stream, 3, 3).unwrap();
            let mut slow = start.clone();
            for t in 3..6 {
                slow = naive_sweep(&slow, th, seed, stream, t);
            }
            assert_eq!(fast, slow, "{w}x{h} q={q}");
            // Zero sweeps leave the lattice alone.
            let mut same = start.clone();
            sweeps_cpu(&mut same, &model, th, seed, stream, 9, 0).unwrap();
            assert_eq!(same, start);
        }
    }
}

#[test]
fn a_large_lattice_matches_breadth_first_search() {
    // Many row bands (the CPU labels bands in parallel and then joins
    // them): every seam must be joined.
    let (w, h) = (131, 257);
    let l = random_lattice(w, h, 2, 9);
    let model = PottsModel::new(2, 2, 2).unwrap();
    let th = bond_threshold(&model, 1.0 / (1.0 + 2f64.sqrt()).ln()).unwrap();
    assert_eq!(cluster_labels(&l, th, 3, chain(1), 11).unwrap(), bfs_labels(&l, th, 3, chain(1), 11));
}

#[test]
fn bonds_are_active_with_probability_p_and_only_between_equal_spins() {
    // A ring of N equal spins, one row (the lower bond joins a site to
    // itself): k active bonds leave N − k clusters (k < N).
    let n = 4096;
    let model = PottsModel::new(2, 2, 2).unwrap();
    let ring = Lattice::from_spins(n, 1, 2, vec![0; n]).unwrap();
    for t in [0.5, 1.0 / (1.0 + 2f64.sqrt()).ln(), 4.0] {
        let th = bond_threshold(&model, t).unwrap();
        let p = th as f64 / 2f64.powi(32);
        assert!((p - (1.0 - (-1.0 / t).exp())).abs() < 1e-9);
        let sweeps = 40;
        let mut active = 0usize;
        for sweep in 0..sweeps {
            let labels = cluster_labels(&ring, th, 77, chain(3), sweep).unwrap();
            let roots = labels.iter().enumerate().filter(|&(i, &r)| r == i as u64).count();
            assert!(roots > 1, "T = {t}: every bond of the ring active");
            active += n - roots;
        }
        let f = active as f64 / (n * sweeps as usize) as f64;
        let sigma = (p * (1.0 - p) / (n * sweeps as usize) as f64).sqrt();
        assert!((f - p).abs() < 5.0 * sigma, "T = {t}: active fraction {f} vs p = {p} (σ {sigma:.2e})");
    }
    // Alternating spins: no bond may be active, every site its own cluster.
    let alt = Lattice::from_spins(n, 1, 2, (0..n).map(|i| (i % 2) as u8).collect()).unwrap();
    let labels = cluster_labels(&alt, u32::MAX, 1, chain(0), 0).unwrap();
    assert!(labels.iter().enumerate().all(|(i, &r)| r == i as u64));
    // Threshold 0: nothing active, even between equal spins.
    let labels = cluster_labels(&ring, 0, 1, chain(0), 0).unwrap();
    assert!(labels.iter().enumerate().all(|(i, &r)| r == i as u64));
}

/// Configurations of a lattice of `n` sites with q = 2, as bit patterns.
fn spins_of(c: usize, n: usize) -> Vec<u8> {
    (0..n).map(|i| ((c >> i) & 1) as u8).collect()
}

/// The exact one-sweep Swendsen–Wang transition matrix for q = 2 on a
/// `w` × `h` torus with bond probability `p`: every subset of the equal
/// bonds, its clusters, and the 2^clusters equally likely recolourings.
fn exact_kernel(w: usize, h: usize, p: f64) -> Vec<Vec<f64>> {
    let n = w * h;
    let bonds: Vec<(usize, usize)> =
        (0..n).flat_map(|i| [(i, (i / w) * w + (i % w + 1) % w), (i, ((i / w + 1) % h) * w + i % w)]).collect();
    let states = 1 << n;
    let mut kernel = vec![vec![0.0; states]; states];
    for (a, row) in kernel.iter_mut().enumerate() {
        let s = spins_of(a, n);
        let equal: Vec<(usize, usize)> = bonds.iter().copied().filter(|&(i, j)| s[i] == s[j]).collect();
        for subset in 0..1usize << equal.len() {
            let k = subset.count_ones() as i32;
            let weight = p.powi(k) * (1.0 - p).powi(equal.len() as i32 - k);
            // Clusters by repeated relaxation of the smallest label.
            let mut label: Vec<usize> = (0..n).collect();
            loop {
                let mut changed = false;
                for (e, &(i, j)) in equal.iter().enumerate() {
                    if subset >> e & 1 == 1 && label[i] != label[j] {
                        let m = label[i].min(label[j]);
                        label[i] = m;
                        label[j] = m;
                        changed = true;
                    }
                }
                if !changed {
                    break;
                }
            }
            // Cluster number of each site's root.
            let mut cluster = vec![0; n];
            let mut clusters = 0;
            for i in 0..n {
                if label[i] == i {
                    cluster[i] = clusters;
                    clusters += 1;
                }
            }
            for colours in 0..1usize << clusters {
                let b: usize = (0..n).map(|i| ((colours >> cluster[label[i]]) & 1) << i).sum();
                row[b] += weight / (1 << clusters) as f64;
            }
        }
    }
    kernel
}

#[test]
fn one_sweep_follows_the_exact_kernel_which_satisfies_detailed_balance() {
    let (w, h) = (3, 2);
    let n = w * h;
    let t = 1.0 / (1.0 + 2f64.sqrt()).ln();
    let model = PottsModel::new(2, 2, 2).unwrap();
    let th = bond_threshold(&model, t).unwrap();
    // The exact p: the threshold's rounding (below 2⁻³²) is far below
    // what the frequencies resolve, and would break the balance check.
    let kernel = exact_kernel(w, h, -(-1.0 / t).exp_m1());
    // Detailed balance of the kernel with the Boltzmann weights e^{k/T}
    // (k equal bonds): the property the sampler rests on.
    let weight = |c: usize| (equal_bonds(&Lattice::from_spins(w, h, 2, spins_of(c, n)).unwrap()) as f64 / t).exp();
    for (a, row) in kernel.iter().enumerate() {
        assert!((row.iter().sum::<f64>() - 1.0).abs() < 1e-12);
        for (b, &forward) in row.iter().enumerate() {
            let (x, y) = (weight(a) * forward, weight(b) * kernel[b][a]);
            assert!((x - y).abs() <= 1e-12 * x.max(y), "{a} -> {b}: {x} vs {y}");
        }
    }
    // The implementation's one-sweep frequencies from a few start states.
    let trials = 20_000u64;
    for a in [0usize, 0b010_101, 0b000_111, 0b011_001] {
        let start = Lattice::from_spins(w, h, 2, spins_of(a, n)).unwrap();
        let mut counts = vec![0u64; 1 << n];
        for sweep in 0..trials {
            let mut l = start.clone();
            sweeps_cpu(&mut l, &model, th, 5, chain(a as u64), sweep, 1).unwrap();
            let b = l.spins().iter().enumerate().map(|(i, &s)| (s as usize) << i).sum::<usize>();
            counts[b] += 1;
        }
        for b in 0..1 << n {
            let expect = kernel[a][b];
            let f = counts[b] as f64 / trials as f64;
            let sigma = (expect * (1.0 - expect) / trials as f64).sqrt();
            assert!(
                (f - expect).abs() <= 5.0 * sigma + 1e-9,
                "{a:06b} -> {b:06b}: frequency {f:.5}, exact {expect:.5} (σ {sigma:.5})"
            );
        }
    }
}

/// Equal-neighbour bonds, counted here on one thread (the census's
/// parallel rows cost more than a tiny lattice's sweep).
fn equal_bonds(l: &Lattice) -> u64 {
    let (w, h, s) = (l.width(), l.height(), l.spins());
    (0..w * h)
        .map(|i| (s[i] == s[(i / w) * w + (i % w + 1) % w]) as u64 + (s[i] == s[((i / w + 1) % h) * w + i % w]) as u64)
        .sum()
}

/// Mean energy per site and its error (batch means of 100 batches) of
/// `sweeps` Swendsen–Wang sweeps after `therm`.
fn mean_energy(l: &mut Lattice, model: &PottsModel, t: f64, sweeps: u64) -> (f64, f64) {
    let th = bond_threshold(model, t).unwrap();
    let n = (l.width() * l.height()) as f64;
    sweeps_cpu(l, model, th, 11, chain(1), 0, 100).unwrap();
    let mut series = Vec::with_capacity(sweeps as usize);
    for s in 0..sweeps {
        sweeps_cpu(l, model, th, 11, chain(1), 100 + s, 1).unwrap();
        series.push(-(equal_bonds(l) as f64) / n);
    }
    let batches: Vec<f64> = series.chunks(series.len() / 100).map(|b| b.iter().sum::<f64>() / b.len() as f64).collect();
    let mean = batches.iter().sum::<f64>() / batches.len() as f64;
    let var = batches.iter().map(|b| (b - mean).powi(2)).sum::<f64>() / (batches.len() - 1) as f64;
    (mean, (var / batches.len() as f64).sqrt())
}

#[test]
fn energy_at_tc_matches_exact_enumeration() {
    // q = 2 on 4×4 and on an odd 3×5 torus, q = 3 on 3×3, at the
    // transition temperature of each q.
    for (q, w, h) in [(2u32, 4usize, 4usize), (2, 3, 5), (3, 3, 3)] {
        let t = warpmc_potts::exact::potts_critical_temperature(q);
        let model = PottsModel::new(q, 2, 2).unwrap();
        let mut l = random_lattice(w, h, q, 1);
        let (e, err) = mean_energy(&mut l, &model, t, 40_000);
        let exact = density_of_states(q, w, h).moments(t, 1.0).energy;
        let z = (e - exact) / err;
        println!("q={q} {w}x{h} T={t:.4}: <e> {e:.5} ± {err:.5}, exact {exact:.5} (z {z:.2})");
        assert!(z.abs() < 4.0, "q={q} {w}x{h}: <e> {e} ± {err}, exact {exact}");
    }
}

#[test]
fn bad_input_is_an_error() {
    let m = PottsModel::new(2, 4, 4).unwrap();
    let msg = |r: Result<u32, PottsError>| r.unwrap_err().to_string();
    assert!(msg(bond_threshold(&m.clone().with_coupling(-1.0).unwrap(), 1.0)).contains("J > 0"));
    assert!(msg(bond_threshold(&m.clone().with_coupling(0.0).unwrap(), 1.0)).contains("J > 0"));
    assert!(msg(bond_threshold(&m.clone().with_field(0.1).unwrap(), 1.0)).contains("h = 0"));
    for t in [0.0, -1.0, f64::NAN, f64::INFINITY] {
        assert!(msg(bond_threshold(&m, t)).contains("temperature"));
    }
    // Extreme temperatures give the extreme thresholds, no overflow.
    assert_eq!(bond_threshold(&m, 1e-300).unwrap(), u32::MAX);
    assert_eq!(bond_threshold(&m, 1e300).unwrap(), 0);
    let mut l = Lattice::new(&m, InitialState::Random, 1, 0);
    let m3 = PottsModel::new(3, 4, 4).unwrap();
    assert!(sweeps_cpu(&mut l, &m3, 1, 1, 0, 0, 1).unwrap_err().to_string().contains("q = 2"));
    let over = warpmc_potts::algorithm::MAX_SWEEPS_PER_CHAIN;
    assert!(sweeps_cpu(&mut l, &m, 1, 1, 0, over, 1).is_err());
    assert!(sweeps_cpu(&mut l, &m, 1, 1, 0, u64::MAX, 2).is_err());
    let mut empty = Lattice::from_spins(0, 0, 2, vec![]).unwrap();
    assert!(sweeps_cpu(&mut empty, &m, 1, 1, 0, 0, 1).is_err());
}

#[cfg(feature = "cuda")]
mod cuda {
    use super::*;
    use warpmc_gpu::{Gpu, GpuError, Target, compile};
    use warpmc_potts::cuda_sw::{CudaSwendsenWang, kernel_source};
    use warpmc_testkit::gpu_or_skip;

    #[test]
    fn swendsen_wang_kernels_compile() {
        match compile(&kernel_source(), &Target::Cubin { arch: 90 }) {
            Ok(image) => assert!(!image.is_empty()),
            Err(GpuError::NoDevice(why)) => {
                use std::io::Write;
                let _ = writeln!(std::io::stderr().lock(), "SKIPPED swendsen_wang_kernels_compile: {why}");
            }
            Err(e) => panic!("{e}"),
        }
    }

    /// Runs `sweeps` sweeps from `start` on the CPU and on `sw`, and
    /// compares lattices and censuses.
    fn compare(sw: &mut CudaSwendsenWang, start: &Lattice, t: f64, chain_seed: u64, first: u64, sweeps: u64) {
        let model = PottsModel::new(start.q(), 2, 2).unwrap();
        let th = bond_threshold(&model, t).unwrap();
        let mut cpu = start.clone();
        sweeps_cpu(&mut cpu, &model, th, chain_seed, chain(chain_seed), first, sweeps).unwrap();
        sw.load(start).unwrap();
        sw.sweeps(th, chain_seed, chain(chain_seed), first, sweeps).unwrap();
        let gpu = sw.lattice().unwrap();
        let (w, h, q) = (start.width(), start.height(), start.q());
        if gpu != cpu {
            let diff = gpu.spins().iter().zip(cpu.spins()).position(|(a, b)| a != b).unwrap();
            panic!("{w}x{h} q={q} T={t} sweeps {first}+{sweeps}: first differing site {diff}");
        }
        assert_eq!(sw.census().unwrap(), cpu.census(), "{w}x{h} q={q}: census");
    }

    fn check_sizes(gpu: &Gpu, wide: bool) {
        let mut g = SplitMix64::new(if wide { 2 } else { 1 });
        let mut sizes: Vec<(usize, usize)> = SIZES.to_vec();
        // Around the tile (64 × 32) and warp boundaries, and random ones.
        sizes.extend([(64, 32), (63, 31), (65, 33), (128, 64), (1, 300), (300, 1), (2, 200), (129, 97)]);
        sizes.extend((0..6).map(|_| (1 + (g.next_u64() % 200) as usize, 1 + (g.next_u64() % 200) as usize)));
        for q in [2u32, 3, 9, 255] {
            let model = PottsModel::new(q, 2, 2).unwrap();
            let mut sw = if wide {
                CudaSwendsenWang::with_wide_labels(gpu.clone(), &model).unwrap()
            } else {
                CudaSwendsenWang::new(gpu.clone(), &model).unwrap()
            };
            let t_c = warpmc_potts::exact::potts_critical_temperature(q);
            for (k, &(w, h)) in sizes.iter().enumerate() {
                let start = random_lattice(w, h, q, g.next_u64());
                let t = [0.3 * t_c, t_c, 3.0 * t_c][k % 3];
                compare(&mut sw, &start, t, g.next_u64() % 1000, g.next_u64() % 50, 3);
            }
        }
    }

    #[test]
    fn cuda_matches_cpu_on_awkward_sizes() {
        let Some(gpu) = gpu_or_skip("cuda_matches_cpu_on_awkward_sizes") else { return };
        check_sizes(&gpu, false);
    }

    #[test]
    fn cuda_matches_cpu_with_wide_labels() {
        let Some(gpu) = gpu_or_skip("cuda_matches_cpu_with_wide_labels") else { return };
        check_sizes(&gpu, true);
    }

    #[test]
    fn cuda_matches_cpu_on_large_lattices() {
        let Some(gpu) = gpu_or_skip("cuda_matches_cpu_on_large_lattices") else { return };
        // Many tiles, clusters spanning the torus (below T_c) and fractal
        // ones (at T_c), and a start from the ordered state (one cluster
        // of nearly every site).
        let model = PottsModel::new(2, 2, 2).unwrap();
        let mut sw = CudaSwendsenWang::new(gpu, &model).unwrap();
        let t_c = warpmc_potts::exact::potts_critical_temperature(2);
        compare(&mut sw, &random_lattice(1024, 768, 2, 5), t_c, 3, 0, 4);
        compare(&mut sw, &random_lattice(1000, 1001, 2, 6), 0.8 * t_c, 4, 10, 3);
        let ordered = Lattice::from_spins(2048, 1024, 2, vec![0; 2048 * 1024]).unwrap();
        compare(&mut sw, &ordered, 0.5 * t_c, 5, 0, 2);
        let m3 = PottsModel::new(3, 2, 2).unwrap();
        let mut sw3 = CudaSwendsenWang::new(sw.gpu().clone(), &m3).unwrap();
        compare(
            &mut sw3,
            &random_lattice(777, 1111, 3, 7),
            warpmc_potts::exact::potts_critical_temperature(3),
            6,
            0,
            3,
        );
    }

    #[test]
    fn cuda_refuses_bad_input() {
        let Some(gpu) = gpu_or_skip("cuda_refuses_bad_input") else { return };
        let m = PottsModel::new(2, 8, 8).unwrap();
        assert!(CudaSwendsenWang::new(gpu.clone(), &m.clone().with_field(0.5).unwrap()).is_err());
        assert!(CudaSwendsenWang::new(gpu.clone(), &m.clone().with_coupling(-1.0).unwrap()).is_err());
        let mut sw = CudaSwendsenWang::new(gpu, &m).unwrap();
        // Starts ordered.
        assert_eq!(sw.lattice().unwrap().spins(), &[0u8; 64][..]);
        let l3 = Lattice::from_spins(8, 8, 3, vec![2; 64]).unwrap();
        assert!(sw.load(&l3).unwrap_err().to_string().contains("q = 3"));
        let over = warpmc_potts::algorithm::MAX_SWEEPS_PER_CHAIN;
        assert!(sw.sweeps(1, 1, 0, over, 1).is_err());
        assert!(sw.load(&Lattice::from_spins(0, 5, 2, vec![]).unwrap()).is_err());
        // Still usable after the refusals.
        sw.sweeps(1 << 31, 1, 0, 0, 2).unwrap();
        assert_eq!(sw.census().unwrap().counts().iter().sum::<u64>(), 64);
    }
}
