//! The generated source and the parameter block on the CPU: layout,
//! structure-only dependence, and the names the generated source shares
//! with the kernel headers. (That every variant compiles: compile_tests.rs.)

use super::*;
use crate::genome::{ParseOptions, parse_file};
use crate::variations::{VariationKind, VariationSpec};

fn sample_flames() -> Vec<Flame> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/flames");
    let mut out = Vec::new();
    let mut paths: Vec<_> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).collect();
    paths.sort();
    let opts = ParseOptions::default();
    for p in paths {
        if let Ok(parsed) = parse_file(&p, &opts) {
            out.extend(parsed.flames);
        }
    }
    assert!(out.len() >= 5, "sample genomes missing");
    out
}

fn camera() -> Camera {
    Camera {
        rot: Some([[0.0, -1.0], [1.0, 0.0]]),
        rot_center: [0.25, -0.5],
        bounds: [-1.0, -2.0, 1.0, 2.0],
        ws0: 3.0,
        wb0s0: 4.0,
        hs1: 5.0,
        hb1s1: 6.0,
        width: 7,
        height: 8,
    }
}

#[test]
fn parameter_block_matches_its_layout() {
    for cp in sample_flames() {
        let g = generate(&cp, &IterationOptions::default(), Precision::F32, false);
        let p = pack_params(&cp, &g.layout, &camera());
        assert_eq!(p.len(), g.layout.len());
        // The first xform's pre-affine map comes first, in row order.
        let c = cp.xforms[0].coefs.c;
        assert_eq!(&p[..3], &[c[0][0], c[1][0], c[2][0]]);
        // The camera closes the block, in the order the generated enum
        // names it.
        assert_eq!(
            &p[g.layout.camera..],
            &[0.0, -1.0, 1.0, 0.0, 0.25, -0.5, -1.0, -2.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0]
        );
        for (k, (name, _)) in camera_fields(&camera()).iter().enumerate() {
            assert!(g.code.contains(&format!("{name} = {},", g.layout.camera + k)), "{name}");
        }
        // A final xform's opacity is read where pack_params put it.
        if let Some(fx) = &cp.final_xform {
            let at = g.layout.offsets[cp.xforms.len()] + XformHeader::OPACITY;
            assert_eq!(p[at], fx.opacity);
            assert!(g.code.contains(&format!("const real op = P[{at}];")));
        }
    }
}

#[test]
fn source_depends_on_structure_not_values() {
    let mut cp = sample_flames().remove(0);
    let a = generate(&cp, &IterationOptions::default(), Precision::F32, false);
    cp.xforms[0].coefs.c[2][0] += 0.25;
    cp.xforms[0].weight *= 2.0;
    for v in &mut cp.xforms[0].variations {
        v.weight *= 0.5;
    }
    let b = generate(&cp, &IterationOptions::default(), Precision::F32, false);
    assert_eq!(a.code, b.code);
    cp.xforms[0].variations.push(VariationSpec::new(VariationKind::from_name("swirl").unwrap(), 0.3));
    let c = generate(&cp, &IterationOptions::default(), Precision::F32, false);
    assert_ne!(a.code, c.code);
}

/// Every policy name the options map to is a type the kernel headers
/// define (the compile test builds them all; this names the culprit).
#[test]
fn policy_names_are_defined_in_the_headers() {
    let headers = format!("{ITERATE_CUH}{WARP_AGGREGATED_CUH}");
    let defined = |policy: &str| {
        let name = policy.trim_start_matches("flame::").split('<').next().unwrap().to_string();
        headers.contains(&format!("struct {name} ")) || headers.contains(&format!("struct {name}\n"))
    };
    for chaos in [false, true] {
        for selection in [Selection::PerThread, Selection::WarpUniform] {
            assert!(defined(choice_policy(selection, chaos)), "{selection:?}");
        }
    }
    for shuffle in [Shuffle::None, Shuffle::Simple, Shuffle::Better] {
        assert!(defined(&shuffle_policy(shuffle, 2)), "{shuffle:?}");
    }
    for accumulation in [Accumulation::Plain, Accumulation::WarpAggregated, Accumulation::SharedCache] {
        for bits in [0, 10] {
            let policy = accumulator_policy(accumulation, bits);
            assert!(defined(&policy), "{policy}");
            if let Some(inner) = policy.split('<').nth(1) {
                assert!(defined(inner.trim_end_matches(['>', ' '])), "{policy}");
            }
        }
    }
    for mode in [PaletteMode::Step, PaletteMode::Linear] {
        assert!(defined(palette_policy(mode)), "{mode:?}");
    }
    assert!(defined(&histogram_policy(Precision::F64, true)));
    // Every constant the headers require is among the shared defines.
    let defines = shared_defines(&IterationOptions::default()).join(" ");
    for name in ["FLAME_REAL", "FLAME_BLOCK", "FLAME_CHOOSE_GRAIN", "FLAME_PALETTE_SIZE"] {
        assert!(defines.contains(&format!("-D{name}=")), "{name}");
    }
    for name in ["FLAME_STATE_FUSE_BITS", "FLAME_STATE_RETRY_BITS", "FLAME_POINT_BYTES"] {
        assert!(defines.contains(&format!("-D{name}=")) && ITERATE_CUH.contains(name), "{name}");
    }
}

#[test]
fn options_the_genome_cannot_use_fall_back() {
    // Chaos rows: every thread chooses in its own row, so no warp-uniform
    // choice and no shuffle, whatever was asked.
    assert_eq!(choice_policy(Selection::WarpUniform, true), "flame::ChaosRowChoice");
    let warp = IterationOptions { selection: Selection::WarpUniform, ..IterationOptions::default() };
    assert_eq!(effective_shuffle(&warp, false), Shuffle::Better);
    assert_eq!(effective_shuffle(&warp, true), Shuffle::None);
    assert_eq!(effective_shuffle(&IterationOptions::default(), false), Shuffle::None);
    // No room for the block cache: plain runs.
    assert_eq!(accumulator_policy(Accumulation::SharedCache, 0), accumulator_policy(Accumulation::Plain, 0));
}

#[test]
fn the_block_cache_fits_beside_everything_else() {
    for real in [Precision::F32, Precision::F64] {
        for block in [32, 256, 1024] {
            for shuffle in [Shuffle::None, Shuffle::Better] {
                let o = IterationOptions { real, block, ..IterationOptions::default() };
                for params in [16, 1000, 3000] {
                    let bits = cache_bits(&o, shuffle, Precision::F64, params);
                    let shuffled = if shuffle == Shuffle::None {
                        0
                    } else {
                        shuffle_buffers(&o) * block as usize * point_bytes(real)
                    };
                    let used = params * real.bytes() + PALETTE_SIZE * 16 + shuffled + (1usize << bits) * (4 + 5 * 8);
                    assert!(bits == 0 || (4..=10).contains(&bits));
                    assert!(bits == 0 || used <= SHARED_BUDGET, "{real:?} {block} {shuffle:?} {params}: {used}");
                }
            }
        }
    }
    assert_eq!(cache_bits(&IterationOptions::default(), Shuffle::None, Precision::F32, 100), 10);
}

#[test]
fn points_are_laid_out_as_the_kernel_reads_them() {
    assert_eq!(point_bytes(Precision::F32), 20);
    assert_eq!(point_bytes(Precision::F64), 32);
    assert_eq!(point_state(FUSE, 0), FUSE as i32);
    assert_eq!(point_state(EARLY_CLIP_FUSE, 0), EARLY_CLIP_FUSE as i32);
    assert_eq!(point_state(3, 2), 3 | 2 << (STATE_FUSE_BITS + STATE_RETRY_BITS));
}
