//! The workloads of `warpmc bench atomics` give the CPU's sums on the GPU
//! for every strategy (more elements than the grid has threads, so the
//! grid-stride loops run).

use warpmc_bench::atomics as bench;
use warpmc_prims::atomics::{AtomicAdd, AtomicStrategy, KeyOrder};
use warpmc_prims::{AtomicsConfig, CudaPrims, Primitives};
use warpmc_testkit::atomics::Reference;

fn gpu(test: &str) -> Option<CudaPrims> {
    warpmc_testkit::gpu_or_skip(test).map(CudaPrims::new)
}

/// Every concrete strategy, and Auto with each hint, with hardware atomics
/// and with the compare-and-swap loop.
fn configs() -> Vec<AtomicsConfig> {
    let mut v = Vec::new();
    for add in [AtomicAdd::Hardware, AtomicAdd::CasLoop] {
        for strategy in AtomicStrategy::CONCRETE {
            v.push(AtomicsConfig { strategy, order: KeyOrder::Unknown, add });
        }
        for order in [KeyOrder::Unknown, KeyOrder::Sorted, KeyOrder::Random] {
            v.push(AtomicsConfig { strategy: AtomicStrategy::Auto, order, add });
        }
    }
    v
}

/// More elements than the grid has threads (the grid-stride loop), on the
/// bench's own generators: the particle box in every order.
#[test]
fn large_cell_boxes_match_the_cpu() {
    let Some(p) = gpu("large_cell_boxes_match_the_cpu") else { return };
    let cells = bench::CellBox { edge: 64, per_cell: 10, displacement: 0.25 };
    for order in [KeyOrder::Sorted, KeyOrder::PartiallySorted, KeyOrder::Random] {
        let k = cells.keys(order, 5).unwrap();
        let x = bench::particle_values::<f64>(cells.n(), 6);
        let reference = Reference::new(&k, &x, cells.nbins()).unwrap();
        let dk = p.upload(&k).unwrap();
        let dx = p.upload(&x).unwrap();
        for config in configs().into_iter().filter(|c| !c.strategy.is_shared()) {
            let got = p.download(&p.reduce_by_key_dense(&dk, &dx, cells.nbins(), config).unwrap()).unwrap();
            if let Err(m) = reference.check(&got) {
                panic!("cells {order:?} {config:?}: {m}");
            }
        }
    }
    let flame = bench::Flame { width: 320, height: 180, points: 1 << 20 };
    let (k, x) = flame.generate(2).unwrap();
    let reference = Reference::new(&k, &x, flame.nbins()).unwrap();
    let (dk, dx) = (p.upload(&k).unwrap(), p.upload(&x).unwrap());
    for strategy in [AtomicStrategy::Plain, AtomicStrategy::AggregatedMatch, AtomicStrategy::Auto] {
        let got = p.download(&p.reduce_by_key_dense(&dk, &dx, flame.nbins(), strategy).unwrap()).unwrap();
        if let Err(m) = reference.check(&got) {
            panic!("flame {strategy:?}: {m}");
        }
    }
}
