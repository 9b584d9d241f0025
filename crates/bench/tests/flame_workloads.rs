//! The flame workloads of `warpmc bench flame` and `warpmc bench
//! shuffle-diversity`: the rows they return (on the CPU where they can
//! run there; the GPU rows skip with a printed reason elsewhere).

use std::path::{Path, PathBuf};

use warpmc_bench::flame::{
    FlameBenchConfig, NoiseConfig, bench_genome, diversity_table, genome_name, load, resized, shuffle_noise, variants,
};
use warpmc_bench::point_shuffle::{StudyShuffle, diversity};
use warpmc_flame::render::cuda::IterationOptions;

fn sample(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/flames").join(name)
}

#[test]
fn diversity_rows_are_the_experiment_on_each_geometry() {
    let rows = diversity_table(40, 3).unwrap();
    let geometries: Vec<(usize, usize)> = rows.iter().map(|r| (r.lanes, r.warps)).collect();
    assert_eq!(geometries, [(16, 16), (32, 8), (32, 16), (32, 32)]);
    for r in &rows {
        let t = r.lanes * r.warps;
        for (k, s) in StudyShuffle::ALL.into_iter().enumerate() {
            assert_eq!(r.shuffles[k], diversity(t, r.lanes, r.lanes, s, 40, 3));
        }
        assert_eq!(r.per_thread, diversity(t, r.lanes, 1, StudyShuffle::None, 40, 3));
    }
    assert!(diversity_table(0, 3).is_err());
}

#[test]
fn variants_start_with_the_default_and_are_distinct() {
    let v = variants();
    assert_eq!(v[0].1, IterationOptions::default());
    for (i, (label, o)) in v.iter().enumerate() {
        for (other, p) in &v[i + 1..] {
            assert_ne!(label, other);
            assert_ne!(o, p, "{label} and {other}");
        }
    }
}

#[test]
fn genomes_are_resized_like_flam3s_size_scale() {
    let path = sample("electricsheep.244.80692.flam3");
    assert_eq!(genome_name(&path), "electricsheep.244.80692");
    let f = &load(&path).unwrap()[0];
    let g = resized(f, f.width * 2, 100, 7.0);
    assert_eq!((g.width, g.height, g.quality), (f.width * 2, 100, 7.0));
    assert_eq!(g.scale, f.scale * 2.0);
    let e = load(&sample("no-such-genome.flam3")).unwrap_err().to_string();
    assert!(e.contains("no-such-genome.flam3"), "{e}");
}

#[test]
fn gpu_rows_are_filled_in() {
    let Some(gpu) = warpmc_testkit::gpu_or_skip("gpu_rows_are_filled_in") else { return };
    let out_dir = warpmc_testkit::scratch_dir("bench-flame-test");
    std::fs::create_dir_all(&out_dir).unwrap();
    let path = sample("electricsheep.244.80692.flam3");
    let config =
        FlameBenchConfig { width: 160, height: 90, quality: 20.0, cpu_quality: Some(2.0), modes: true, out_dir };
    let row = bench_genome(&gpu, &path, &config).unwrap();
    assert_eq!(row.genome, "electricsheep.244.80692");
    // The GPU finishes its last launch: a few more iterations than asked.
    let asked = 20 * 160 * 90;
    assert!(row.iterations >= asked && row.iterations < asked + asked / 50, "{}", row.iterations);
    assert!(row.gpu_rate > 0.0 && row.cpu_rate.is_some_and(|r| r > 0.0));
    assert_eq!(row.modes.len(), variants().len());
    assert!(config.out_dir.join("electricsheep.244.80692.gpu.png").exists());
    assert!(config.out_dir.join("electricsheep.244.80692.cpu.png").exists());
    let noise =
        shuffle_noise(&gpu, &path, &NoiseConfig { size_scale: 0.1, quality: 5.0, reference_quality: 50.0 }).unwrap();
    assert_eq!(noise.psnr.len(), variants().len());
    assert!(noise.psnr.iter().all(|p| p.is_finite() && *p > 0.0), "{:?}", noise.psnr);
}
