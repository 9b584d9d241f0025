//! A lattice split into strips, each on its own thread trading halo rows
//! through channels (as MPI ranks trade them), ends every sweep in the bits
//! of the whole lattice on the CPU backend, under both random-number rules.

use std::sync::mpsc::{Receiver, Sender, channel};

use warpmc_potts::strip::{Halo, HaloExchange, StripBackend, strip_rows};
use warpmc_potts::{AcceptanceTable, Backend, Census, CpuBackend, InitialState, Lattice, PottsModel, Scheme};

/// Halo rows through channels: a strip's first row goes to the strip above,
/// its last row to the strip below.
struct Channels {
    to_up: Sender<Vec<u8>>,
    to_down: Sender<Vec<u8>>,
    from_up: Receiver<Vec<u8>>,
    from_down: Receiver<Vec<u8>>,
}

impl HaloExchange for Channels {
    fn exchange(&mut self, halo: Halo<'_>, interior: &mut dyn FnMut()) -> warpmc_potts::Result<()> {
        self.to_up.send(halo.send_up.to_vec()).unwrap();
        self.to_down.send(halo.send_down.to_vec()).unwrap();
        interior();
        halo.from_up.copy_from_slice(&self.from_up.recv().unwrap());
        halo.from_down.copy_from_slice(&self.from_down.recv().unwrap());
        Ok(())
    }
}

/// One stretch of sweeps under one table.
#[derive(Clone, Copy)]
struct Stretch {
    temperature: f64,
    first: u64,
    count: u64,
}

/// The lattice and census after `stretches` on `parts` strips, each strip
/// on its own thread.
fn split_run(
    model: &PottsModel,
    start: &Lattice,
    parts: usize,
    chain: (u64, u64),
    stretches: &[Stretch],
    simd: bool,
) -> (Lattice, Census) {
    let rows = strip_rows(model.height(), parts);
    let k = rows.len();
    let (mut up_tx, mut up_rx, mut down_tx, mut down_rx) = (vec![], vec![], vec![], vec![]);
    for _ in 0..k {
        let (t, r) = channel();
        up_tx.push(t);
        up_rx.push(Some(r));
        let (t, r) = channel();
        down_tx.push(t);
        down_rx.push(Some(r));
    }
    let results: Vec<(Vec<u8>, Census)> = std::thread::scope(|scope| {
        let handles: Vec<_> = rows
            .iter()
            .enumerate()
            .map(|(i, r)| {
                // Strip i's first row becomes the lower halo of strip i − 1,
                // which receives it on its from_down channel.
                let mut ex = Channels {
                    to_up: down_tx[(i + k - 1) % k].clone(),
                    to_down: up_tx[(i + 1) % k].clone(),
                    from_up: up_rx[i].take().unwrap(),
                    from_down: down_rx[i].take().unwrap(),
                };
                let r = r.clone();
                scope.spawn(move || {
                    let mut strip = StripBackend::new(model, r).unwrap();
                    if !simd {
                        strip = strip.without_simd();
                    }
                    strip.load(start).unwrap();
                    for s in stretches {
                        strip.set_table(&AcceptanceTable::metropolis(model, s.temperature)).unwrap();
                        strip.sweeps(chain.0, chain.1, s.first, s.count, &mut ex).unwrap();
                    }
                    (strip.spins(), strip.census())
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let q = model.q() as usize;
    let spins: Vec<u8> = results.iter().flat_map(|(s, _)| s.iter().copied()).collect();
    let census = Census::sum(q, results.into_iter().map(|(_, c)| c));
    (Lattice::from_spins(model.width(), model.height(), model.q(), spins).unwrap(), census)
}

/// The same stretches on the whole lattice.
fn whole_run(model: &PottsModel, start: &Lattice, chain: (u64, u64), stretches: &[Stretch]) -> (Lattice, Census) {
    let mut b = CpuBackend::new(model);
    b.load(start).unwrap();
    for s in stretches {
        b.set_table(&AcceptanceTable::metropolis(model, s.temperature)).unwrap();
        b.sweeps(chain.0, chain.1, s.first, s.count).unwrap();
    }
    (b.lattice().unwrap(), b.census().unwrap())
}

/// Near each model's transition, where moves are accepted and rejected,
/// with the table changed half way (as parallel tempering does).
fn stretches(q: u32, sweeps: u64) -> Vec<Stretch> {
    let tc = 1.0 / (1.0 + (q as f64).sqrt()).ln();
    vec![
        Stretch { temperature: tc * 1.02, first: 7, count: sweeps / 2 },
        Stretch { temperature: tc * 0.97, first: 7 + sweeps / 2, count: sweeps - sweeps / 2 },
    ]
}

fn check(q: u32, width: usize, height: usize, field: f64, scheme: Scheme, parts: &[usize], sweeps: u64) {
    let model = PottsModel::new(q, width, height).unwrap().with_field(field).unwrap();
    assert_eq!(Scheme::for_model(&model), scheme, "q={q} {width}x{height} h={field}");
    let chain = (0x5eed ^ u64::from(q), 0xabc0 + width as u64);
    let start = Lattice::new(&model, InitialState::Random, chain.0, chain.1);
    let plan = stretches(q, sweeps);
    let (lattice, census) = whole_run(&model, &start, chain, &plan);
    assert_eq!(census, lattice.census());
    assert_ne!(lattice.spins(), start.spins(), "nothing moved: the test would prove nothing");
    for &p in parts {
        for simd in [true, false] {
            let (l, c) = split_run(&model, &start, p, chain, &plan, simd);
            let k = strip_rows(height, p).len();
            assert!(
                l.spins() == lattice.spins(),
                "q={q} {width}x{height} h={field}, {p} strips ({k} used), simd {simd}: the lattices differ"
            );
            assert_eq!(c, census, "q={q} {width}x{height} h={field}, {p} strips: the censuses differ");
        }
    }
}

#[test]
fn site_words_rule_on_awkward_lattices_matches_one_backend() {
    // Heights that are not whole row-blocks, widths that are not whole
    // units, the smallest lattice, a field of either sign, q up to 255.
    check(3, 10, 22, 0.3, Scheme::SiteWords, &[1, 2, 3, 4], 300);
    check(2, 2, 2, 0.0, Scheme::SiteWords, &[1, 2], 40);
    check(2, 6, 18, -0.4, Scheme::SiteWords, &[2, 3], 50);
    check(9, 66, 40, 0.0, Scheme::SiteWords, &[1, 2, 4, 5], 40);
    check(255, 8, 26, -0.5, Scheme::SiteWords, &[2, 4], 30);
    check(4, 34, 8, 0.1, Scheme::SiteWords, &[1, 3], 40);
    // q ≤ 16 with a field: the bit-sliced rule does not apply.
    check(9, 64, 32, 0.2, Scheme::SiteWords, &[2, 4], 40);
}

#[test]
fn bit_sliced_rule_matches_one_backend() {
    // One word per row, words in pairs and alone, groups of eight (AVX2)
    // with one left over; one row-block per strip and several.
    check(2, 64, 8, 0.0, Scheme::Sliced, &[1, 2], 60);
    check(9, 128, 48, 0.0, Scheme::Sliced, &[1, 2, 4, 6], 300);
    check(16, 192, 24, 0.0, Scheme::Sliced, &[2, 3], 40);
    check(10, 576, 32, 0.0, Scheme::Sliced, &[2, 4], 30);
    check(3, 64, 40, 0.0, Scheme::Sliced, &[2, 5, 7], 50);
}
