//! The CPU backend: rows of one colour in parallel on rayon's pool.
//!
//! Two storages, as on the GPU: one byte per spin for any model, and 4 bits
//! per spin (16 sites per u64, the same nibble order as the CUDA `packed4`
//! kernel) for q ≤ 16 with no field and width/2 a multiple of 16, height a
//! multiple of 8, where neighbour comparisons and proposals are done 16
//! sites at a time (SIMD within a register). Both compute the same states.

use rayon::prelude::*;
use warpmc_rng::{Mwc, RandomSource};

use crate::algorithm::{
    AcceptanceTable, TABLE_LEN, UNIT_COLS, UNIT_ROWS, metropolis_site, unit_generators, units_per_row,
};
use crate::backend::Backend;
use crate::error::{PottsError, Result};
use crate::lattice::{Census, Lattice};
use crate::layout::{join, side_columns, split};
use crate::model::PottsModel;

/// Colour arrays smaller than this are updated on the calling thread.
const PARALLEL_MIN_SITES: usize = 1 << 14;

/// A lattice on the host.
#[derive(Debug)]
pub struct CpuBackend {
    width: usize,
    height: usize,
    q: u32,
    /// The byte-per-spin colour arrays (empty while `nibbles` holds the state).
    colours: [Vec<u8>; 2],
    /// The 4-bit colour arrays, when the model allows them.
    nibbles: Option<[Vec<u64>; 2]>,
    /// Whether rows of the 4-bit storage go through AVX2.
    simd: bool,
    table: AcceptanceTable,
}

/// Sites per u64 word in the CPU's 4-bit storage.
const NIBBLES: usize = 16;
const N1: u64 = 0x1111_1111_1111_1111;
const B1: u64 = 0x0101_0101_0101_0101;
const LOW_NIBBLES: u64 = 0x0f0f_0f0f_0f0f_0f0f;

/// Per nibble: 1 where a and b differ.
#[inline(always)]
fn ne16(a: u64, b: u64) -> u64 {
    let x = a ^ b;
    let t = (x & 0x7777_7777_7777_7777).wrapping_add(0x7777_7777_7777_7777);
    ((t | x) >> 3) & N1
}

/// Per byte lane: (v + k + 1) mod q for lanes below q (k < q − 1).
#[inline(always)]
fn add_mod_q(v: u64, k: u64, q: u64) -> u64 {
    let e = v + k + B1;
    let ge = ((e + (0x80 - q) * B1) & 0x8080_8080_8080_8080) >> 7;
    e - ge * q
}

/// Whether AVX2 rows can run here.
fn simd_available() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        crate::cpu_simd::available()
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// One row-block of the 4-bit storage through AVX2 (only called when
/// [`simd_available`] said yes).
#[allow(clippy::too_many_arguments)]
fn update_block_simd(
    seed: u64,
    stream: u64,
    sweep: u64,
    colour: usize,
    b: usize,
    block: &mut [u64],
    other: &[u64],
    (wr, h, q): (usize, usize, u64),
    th: &[u64; 16],
) {
    #[cfg(target_arch = "x86_64")]
    {
        use crate::cpu_simd;
        let table = cpu_simd::LaneTable::new(&th[..9].try_into().expect("nine entries"));
        let units = 2 * wr;
        // Per row parity, the units' MWC states, each group of eight stored
        // as units 0, 2, 4, 6, 1, 3, 5, 7.
        let mut states = [vec![0u64; units], vec![0u64; units]];
        for (u, pair) in row_block_generators(seed, stream, sweep, colour, b, units).iter().enumerate() {
            let within = u % 8;
            let pos = u - within + if within % 2 == 0 { within / 2 } else { 4 + within / 2 };
            states[0][pos] = pair[0].state();
            states[1][pos] = pair[1].state();
        }
        for (i, row) in block.chunks_mut(wr).enumerate() {
            let y = b * UNIT_ROWS + i;
            let cur = &other[y * wr..][..wr];
            let up = &other[((y + h - 1) % h) * wr..][..wr];
            let down = &other[((y + 1) % h) * wr..][..wr];
            // SAFETY: this path runs only when cpu_simd::available() found AVX2.
            unsafe { cpu_simd::row(row, cur, up, down, (y + colour) & 1, &mut states[i & 1], q as u32, &table) };
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = (seed, stream, sweep, colour, b, block, other, wr, h, q, th);
        unreachable!("AVX2 rows exist only on x86-64");
    }
}

/// The generators of the `units` units of row-block `b`.
fn row_block_generators(seed: u64, stream: u64, sweep: u64, colour: usize, b: usize, units: usize) -> Vec<[Mwc; 2]> {
    let first = (b * units) as u64;
    (first..first + units as u64).map(|u| unit_generators(seed, stream, sweep, colour as u32, u)).collect()
}

/// Packs a colour array into u64 words of 16 nibbles.
fn pack16(colour: &[u8]) -> Vec<u64> {
    colour
        .chunks_exact(NIBBLES)
        .map(|c| c.iter().enumerate().fold(0u64, |w, (i, &s)| w | (u64::from(s) << (4 * i))))
        .collect()
}

fn unpack16(words: &[u64]) -> Vec<u8> {
    words.iter().flat_map(|&w| (0..NIBBLES).map(move |i| ((w >> (4 * i)) & 15) as u8)).collect()
}

impl CpuBackend {
    /// A backend for `model`, holding the ordered state until [`Backend::load`].
    pub fn new(model: &PottsModel) -> Self {
        let n = model.sites() / 2;
        CpuBackend {
            width: model.width(),
            height: model.height(),
            q: model.q(),
            colours: [vec![0; n], vec![0; n]],
            nibbles: None,
            simd: simd_available(),
            table: AcceptanceTable { thresholds: [0; TABLE_LEN] },
        }
        .with_storage(model)
    }

    /// Moves to the 4-bit storage when `model` allows it.
    fn with_storage(mut self, model: &PottsModel) -> Self {
        if Self::nibbles_fit(model) {
            self.nibbles = Some([pack16(&self.colours[0]), pack16(&self.colours[1])]);
            self.colours = [Vec::new(), Vec::new()];
        }
        self
    }

    /// Whether the 4-bit storage can hold `model`.
    pub fn nibbles_fit(model: &PottsModel) -> bool {
        model.q() <= 16 && model.field() == 0.0 && (model.width() / 2) % NIBBLES == 0 && model.height() % UNIT_ROWS == 0
    }

    /// The storage in use: "bytes", "nibbles" or "nibbles-avx2" (4-bit rows
    /// of a multiple of 64 sites on a CPU with AVX2).
    pub fn storage_name(&self) -> &'static str {
        match &self.nibbles {
            None => "bytes",
            Some(_) if self.simd_rows() => "nibbles-avx2",
            Some(_) => "nibbles",
        }
    }

    /// The same backend without AVX2 (for comparisons; results are equal).
    pub fn without_simd(mut self) -> Self {
        self.simd = false;
        self
    }

    fn simd_rows(&self) -> bool {
        self.simd && (self.width / 2 / NIBBLES) % 4 == 0
    }

    /// The colour arrays one byte per spin (a copy for the 4-bit storage).
    fn byte_colours(&self) -> std::borrow::Cow<'_, [Vec<u8>; 2]> {
        match &self.nibbles {
            Some([a, b]) => std::borrow::Cow::Owned([unpack16(a), unpack16(b)]),
            None => std::borrow::Cow::Borrowed(&self.colours),
        }
    }

    /// One colour of one sweep on the 4-bit storage: the update of
    /// `metropolis_site` for 16 sites at a time.
    fn half_sweep_nibbles(&mut self, seed: u64, stream: u64, sweep: u64, colour: usize) {
        let (hw, h, q) = (self.width / 2, self.height, u64::from(self.q));
        let wr = hw / NIBBLES;
        // Padded to 16 so that a nibble indexes it without a bounds check
        // (Δn + 4 ≤ 8; the padding is never read).
        let mut th = [0u64; 16];
        th[..9].copy_from_slice(&self.table.without_field());
        let simd = self.simd_rows();
        let Some([c0, c1]) = &mut self.nibbles else { return };
        let (mine, other): (&mut Vec<u64>, &Vec<u64>) = if colour == 0 { (c0, c1) } else { (c1, c0) };
        let units = hw / UNIT_COLS;
        let update_block = |(b, block): (usize, &mut [u64])| {
            if simd {
                update_block_simd(seed, stream, sweep, colour, b, block, other, (wr, h, q), &th);
                return;
            }
            let mut gens = row_block_generators(seed, stream, sweep, colour, b, units);
            for (i, row) in block.chunks_mut(wr).enumerate() {
                let y = b * UNIT_ROWS + i;
                let o = (y + colour) & 1;
                let cur = &other[y * wr..][..wr];
                let up = &other[((y + h - 1) % h) * wr..][..wr];
                let down = &other[((y + 1) % h) * wr..][..wr];
                for (wx, cell) in row.iter_mut().enumerate() {
                    let s = *cell;
                    let c = cur[wx];
                    let side = if o == 0 {
                        (c << 4) | (cur[if wx == 0 { wr - 1 } else { wx - 1 }] >> 60)
                    } else {
                        (c >> 4) | (cur[if wx + 1 == wr { 0 } else { wx + 1 }] << 60)
                    };
                    // The 16 sites' words: two units, 8 sites each.
                    let mut f = [0u32; NIBBLES];
                    let (mut ke, mut ko) = (0u64, 0u64);
                    for half in 0..2 {
                        let g = &mut gens[2 * wx + half][i & 1];
                        for j in 0..8 {
                            let site = 8 * half + j;
                            let p = u64::from(g.next_u32()) * (q - 1);
                            f[site] = p as u32;
                            let step = p >> 32;
                            if site & 1 == 0 {
                                ke |= step << (4 * site);
                            } else {
                                ko |= step << (4 * (site - 1));
                            }
                        }
                    }
                    let p = add_mod_q(s & LOW_NIBBLES, ke, q) | (add_mod_q((s >> 4) & LOW_NIBBLES, ko, q) << 4);
                    let (u, dn) = (up[wx], down[wx]);
                    // Δn + 4 per nibble.
                    let d = ne16(s, u) + ne16(s, dn) + ne16(s, c) + ne16(s, side) + 4 * N1
                        - (ne16(p, u) + ne16(p, dn) + ne16(p, c) + ne16(p, side));
                    let mut accept = 0u64;
                    for (j, &fj) in f.iter().enumerate() {
                        let t = th[((d >> (4 * j)) & 15) as usize];
                        accept |= (u64::from(fj) < t) as u64 * (15 << (4 * j));
                    }
                    *cell = s ^ ((s ^ p) & accept);
                }
            }
        };
        let block_len = UNIT_ROWS * wr;
        if mine.len() * NIBBLES < PARALLEL_MIN_SITES {
            mine.chunks_mut(block_len).enumerate().for_each(update_block);
        } else {
            mine.par_chunks_mut(block_len).enumerate().for_each(update_block);
        }
    }

    fn half_sweep(&mut self, seed: u64, stream: u64, sweep: u64, colour: usize) {
        let (hw, h, q) = (self.width / 2, self.height, self.q);
        let table = &self.table;
        let [c0, c1] = &mut self.colours;
        let (mine, other): (&mut Vec<u8>, &Vec<u8>) = if colour == 0 { (c0, c1) } else { (c1, c0) };
        let units = units_per_row(hw);
        // One row-block of UNIT_ROWS rows: its units' generators, then the
        // rows in order, each site drawing from its unit's generator.
        let update_block = |(b, block): (usize, &mut [u8])| {
            let mut gens = row_block_generators(seed, stream, sweep, colour, b, units);
            for (i, row) in block.chunks_mut(hw).enumerate() {
                let y = b * UNIT_ROWS + i;
                let o = (y + colour) & 1;
                let same = &other[y * hw..(y + 1) * hw];
                let up = &other[((y + h - 1) % h) * hw..][..hw];
                let down = &other[((y + 1) % h) * hw..][..hw];
                // Each unit's generator in a local while its 8 sites are done.
                for (u, (cells, pair)) in row.chunks_mut(UNIT_COLS).zip(gens.iter_mut()).enumerate() {
                    let g = &mut pair[i & 1];
                    let x0 = u * UNIT_COLS;
                    for (c, cell) in cells.iter_mut().enumerate() {
                        let xh = x0 + c;
                        let (l, rt) = side_columns(xh, o, hw);
                        *cell = metropolis_site(*cell, [same[l], same[rt], up[xh], down[xh]], g.next_u32(), q, table);
                    }
                }
            }
        };
        let block_len = UNIT_ROWS * hw;
        // Small lattices: the thread pool costs more than the work.
        if mine.len() < PARALLEL_MIN_SITES {
            mine.chunks_mut(block_len).enumerate().for_each(update_block);
        } else {
            mine.par_chunks_mut(block_len).enumerate().for_each(update_block);
        }
    }
}

impl Backend for CpuBackend {
    fn name(&self) -> &'static str {
        "cpu"
    }

    fn description(&self) -> String {
        let storage = match self.storage_name() {
            "bytes" => "a byte per spin",
            "nibbles" => "4 bits per spin",
            _ => "4 bits per spin, AVX2",
        };
        format!("CPU, {} threads, {storage}", rayon::current_num_threads())
    }

    fn load(&mut self, lattice: &Lattice) -> Result<()> {
        if (lattice.width(), lattice.height(), lattice.q()) != (self.width, self.height, self.q) {
            return Err(PottsError::InvalidInput(format!(
                "a {}×{} q={} lattice does not fit a {}×{} q={} model",
                lattice.width(),
                lattice.height(),
                lattice.q(),
                self.width,
                self.height,
                self.q
            )));
        }
        let [a, b] = split(lattice);
        match &mut self.nibbles {
            Some(n) => *n = [pack16(&a), pack16(&b)],
            None => self.colours = [a, b],
        }
        Ok(())
    }

    fn lattice(&mut self) -> Result<Lattice> {
        let c = self.byte_colours();
        Ok(join(self.width, self.height, self.q, [&c[0], &c[1]]))
    }

    fn set_table(&mut self, table: &AcceptanceTable) -> Result<()> {
        self.table = *table;
        Ok(())
    }

    fn sweeps(&mut self, seed: u64, stream: u64, first: u64, count: u64) -> Result<()> {
        for sweep in first..first + count {
            for colour in 0..2 {
                if self.nibbles.is_some() {
                    self.half_sweep_nibbles(seed, stream, sweep, colour);
                } else {
                    self.half_sweep(seed, stream, sweep, colour);
                }
            }
        }
        Ok(())
    }

    fn census(&mut self) -> Result<Census> {
        // Every bond joins a colour-0 site to a colour-1 site, so counting the
        // equal neighbours of colour-0 sites counts each bond once.
        let (hw, h, q) = (self.width / 2, self.height, self.q as usize);
        let colours = self.byte_colours();
        let [c0, c1] = &*colours;
        let rows: Vec<(u64, Vec<u64>)> = (0..h)
            .into_par_iter()
            .map(|y| {
                let o = y & 1;
                let mine = &c0[y * hw..(y + 1) * hw];
                let same = &c1[y * hw..(y + 1) * hw];
                let up = &c1[((y + h - 1) % h) * hw..][..hw];
                let down = &c1[((y + 1) % h) * hw..][..hw];
                let mut counts = vec![0u64; q];
                let mut bonds = 0u64;
                for xh in 0..hw {
                    let s = mine[xh];
                    let (l, r) = side_columns(xh, o, hw);
                    bonds +=
                        (s == same[l]) as u64 + (s == same[r]) as u64 + (s == up[xh]) as u64 + (s == down[xh]) as u64;
                    counts[s as usize] += 1;
                    counts[same[xh] as usize] += 1;
                }
                (bonds, counts)
            })
            .collect();
        Ok(Census::sum(q, rows))
    }

    fn synchronize(&mut self) -> Result<()> {
        Ok(())
    }
}
