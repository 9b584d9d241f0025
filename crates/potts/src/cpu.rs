//! The CPU backend: rows of one colour in parallel on rayon's pool.

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
    colours: [Vec<u8>; 2],
    table: AcceptanceTable,
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
            table: AcceptanceTable { thresholds: [0; TABLE_LEN] },
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
            let first_unit = (b * units) as u64;
            let mut gens: Vec<[Mwc; 2]> = (0..units as u64)
                .map(|u| unit_generators(seed, stream, sweep, colour as u32, first_unit + u))
                .collect();
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
        format!("CPU, {} threads", rayon::current_num_threads())
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
        self.colours = split(lattice);
        Ok(())
    }

    fn lattice(&mut self) -> Result<Lattice> {
        Ok(join(self.width, self.height, self.q, [&self.colours[0], &self.colours[1]]))
    }

    fn set_table(&mut self, table: &AcceptanceTable) -> Result<()> {
        self.table = *table;
        Ok(())
    }

    fn sweeps(&mut self, seed: u64, stream: u64, first: u64, count: u64) -> Result<()> {
        for sweep in first..first + count {
            self.half_sweep(seed, stream, sweep, 0);
            self.half_sweep(seed, stream, sweep, 1);
        }
        Ok(())
    }

    fn census(&mut self) -> Result<Census> {
        // Every bond joins a colour-0 site to a colour-1 site, so counting the
        // equal neighbours of colour-0 sites counts each bond once.
        let (hw, h, q) = (self.width / 2, self.height, self.q as usize);
        let [c0, c1] = &self.colours;
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
