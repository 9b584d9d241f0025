//! The CPU backend: rows of one colour in parallel on rayon's pool.
//!
//! Two storages for the checkerboard algorithms, as on the GPU, one for
//! each random-number rule ([`Scheme`]): one byte per spin for the
//! one-word-per-site rule (Metropolis and heat-bath), and bit planes for
//! the bit-sliced rule ([`crate::sliced`]), 32 sites per word. The CPU
//! computes the same states as every CUDA kernel of the same rule. A third
//! storage, the row-major lattice, serves the cluster algorithms.

use rayon::prelude::*;
use warpmc_rng::RandomSource;

use crate::algorithm::{
    AcceptanceTable, Scheme, UNIT_COLS, UNIT_ROWS, metropolis_site, unit_generators, units_per_row,
};
use crate::backend::Backend;
use crate::error::{PottsError, Result};
use crate::heat_bath::{HeatBathTable, heat_bath_site};
use crate::lattice::{Census, Lattice};
#[cfg(target_arch = "x86_64")]
use crate::layout::BlockRows;
use crate::layout::{join, pack_planes, plane_index, side_columns, split, unpack_planes};
use crate::model::PottsModel;
use crate::sliced::{self, SlicedRule, census_word, planes, update_word, words_per_row};
use crate::update::{Algorithm, Update, cluster_sweeps_cpu};

/// Colour arrays smaller than this are updated on the calling thread.
pub(crate) const PARALLEL_MIN_SITES: usize = 1 << 14;

/// A lattice on the host.
#[derive(Debug)]
pub struct CpuBackend {
    model: PottsModel,
    width: usize,
    height: usize,
    q: u32,
    storage: Storage,
    table: AcceptanceTable,
    /// The bit-sliced rule of the current table (planes storage only).
    rule: Option<SlicedRule>,
    /// The heat-bath weights (used in [`Mode::HeatBath`]).
    heat_bath: HeatBathTable,
    /// What the next sweeps run.
    mode: Mode,
    /// Whether groups of eight word columns go through AVX2.
    simd: bool,
}

/// The algorithm a backend's sweeps run.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Mode {
    /// Metropolis with `table` (and `rule` on bit planes).
    Metropolis,
    /// Heat-bath with `heat_bath`.
    HeatBath,
    /// A cluster algorithm (Swendsen–Wang or Wolff) with its tables.
    Cluster(Box<Update>),
}

/// The census of a lattice of `sites` sites from that of each of its `h`
/// rows: on the calling thread for small lattices (cluster updates and
/// short runs measure after every sweep, and the pool would cost more than
/// the count), else over rayon's pool.
fn census_rows(q: usize, h: usize, sites: usize, row: impl Fn(usize) -> Census + Sync + Send) -> Census {
    if sites < PARALLEL_MIN_SITES {
        Census::sum(q, (0..h).map(row))
    } else {
        Census::par_sum(q, (0..h).into_par_iter().map(row))
    }
}

/// Whether AVX2 groups can run here.
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

#[derive(Debug)]
enum Storage {
    /// One byte per spin, the one-word-per-site rule.
    Bytes([Vec<u8>; 2]),
    /// Bit planes (see [`crate::sliced`]), the bit-sliced rule.
    Planes { colours: [Vec<u32>; 2], planes: usize },
    /// The row-major lattice, for the cluster algorithms.
    Sites(Lattice),
}

/// The plane words of word `w` of row `y`.
#[inline(always)]
pub(crate) fn load<const P: usize>(a: &[u32], y: usize, w: usize, wr: usize) -> [u32; P] {
    std::array::from_fn(|p| a[plane_index(y, p, w, P, wr)])
}

/// The side neighbours of the sites of word `w` of row `y` (offset `o`),
/// lined up with them: the same row of the other colour shifted by one site.
#[inline(always)]
pub(crate) fn side_word<const P: usize>(
    other: &[u32],
    cur: &[u32; P],
    y: usize,
    w: usize,
    wr: usize,
    o: usize,
) -> [u32; P] {
    if o == 0 {
        let l = load::<P>(other, y, if w == 0 { wr - 1 } else { w - 1 }, wr);
        std::array::from_fn(|p| (cur[p] << 1) | (l[p] >> 31))
    } else {
        let r = load::<P>(other, y, if w + 1 == wr { 0 } else { w + 1 }, wr);
        std::array::from_fn(|p| (cur[p] >> 1) | (r[p] << 31))
    }
}

impl CpuBackend {
    /// A Metropolis backend for `model` under its own rule
    /// ([`Scheme::for_model`]), holding the ordered state until
    /// [`Backend::load`].
    pub fn new(model: &PottsModel) -> Self {
        Self::with_scheme(model, Scheme::for_model(model)).expect("the model's own scheme fits it")
    }

    /// A backend for `model` running `algorithm`: Metropolis under the
    /// model's own rule, heat-bath on one byte per spin, the cluster
    /// algorithms on the row-major lattice. An error if the model cannot
    /// run the algorithm ([`Algorithm::check`]).
    pub fn for_algorithm(model: &PottsModel, algorithm: Algorithm) -> Result<Self> {
        algorithm.check(model)?;
        match algorithm {
            Algorithm::Metropolis => Ok(Self::new(model)),
            Algorithm::HeatBath => {
                let mut b = Self::with_scheme(model, Scheme::SiteWords)?;
                b.mode = Mode::HeatBath;
                Ok(b)
            }
            Algorithm::SwendsenWang | Algorithm::Wolff => {
                let mut b = Self::with_scheme(model, Scheme::SiteWords)?;
                b.storage = Storage::Sites(Lattice::new(model, crate::InitialState::Ordered, 0, 0));
                b.mode = Mode::Cluster(Box::new(Update::SwendsenWang { bond_threshold: 0 }));
                Ok(b)
            }
        }
    }

    /// A backend for `model` under `scheme` (an error if the bit-sliced rule
    /// does not fit the model).
    pub fn with_scheme(model: &PottsModel, scheme: Scheme) -> Result<Self> {
        let n = model.sites() / 2;
        let storage = match scheme {
            Scheme::SiteWords => Storage::Bytes([vec![0; n], vec![0; n]]),
            Scheme::Sliced if crate::sliced::fits(model) => {
                let planes = planes(model.q());
                let words = n / 32 * planes;
                Storage::Planes { colours: [vec![0; words], vec![0; words]], planes }
            }
            Scheme::Sliced => {
                return Err(PottsError::InvalidInput(format!(
                    "the bit-sliced update needs q <= 16, no field, width a multiple of 64 and height a multiple \
                     of 8; got q={} {}x{} h={}",
                    model.q(),
                    model.width(),
                    model.height(),
                    model.field()
                )));
            }
        };
        Ok(CpuBackend {
            model: model.clone(),
            width: model.width(),
            height: model.height(),
            q: model.q(),
            storage,
            table: AcceptanceTable::reject_all(),
            rule: None,
            heat_bath: HeatBathTable::new(model, 1.0),
            mode: Mode::Metropolis,
            simd: simd_available(),
        })
    }

    /// The same backend without AVX2 (for comparisons; results are equal).
    pub fn without_simd(mut self) -> Self {
        self.simd = false;
        self
    }

    /// The storage in use: "bytes" (one byte per spin), "planes" (bit
    /// planes, the bit-sliced rule), "planes-avx2" (the same, rows of at
    /// least eight words through AVX2) or "sites" (the row-major lattice
    /// of the cluster algorithms).
    pub fn storage_name(&self) -> &'static str {
        match self.storage {
            Storage::Bytes(_) => "bytes",
            Storage::Sites(_) => "sites",
            Storage::Planes { .. } if self.simd && words_per_row(self.width) >= 8 => "planes-avx2",
            Storage::Planes { .. } => "planes",
        }
    }

    /// Bytes one spin occupies in the storage in use.
    pub fn bytes_per_spin(&self) -> f64 {
        match self.storage {
            Storage::Bytes(_) | Storage::Sites(_) => 1.0,
            Storage::Planes { planes, .. } => planes as f64 / 8.0,
        }
    }

    /// The colour arrays one byte per spin (a copy for the planes and
    /// sites storages).
    fn byte_colours(&self) -> std::borrow::Cow<'_, [Vec<u8>; 2]> {
        let hw = self.width / 2;
        match &self.storage {
            Storage::Planes { colours: [a, b], planes } => {
                std::borrow::Cow::Owned([unpack_planes(a, hw, *planes), unpack_planes(b, hw, *planes)])
            }
            Storage::Bytes(c) => std::borrow::Cow::Borrowed(c),
            Storage::Sites(l) => std::borrow::Cow::Owned(split(l)),
        }
    }

    /// One colour of one sweep on the planes storage: unit by unit (a word
    /// column of 8 rows), each row with its own generator.
    fn half_sweep_planes<const P: usize, const Q: u32>(&mut self, seed: u64, stream: u64, sweep: u64, colour: usize) {
        let (h, wr) = (self.height, words_per_row(self.width));
        let Some(rule) = self.rule else { return };
        let simd = self.simd;
        let Storage::Planes { colours: [c0, c1], .. } = &mut self.storage else { return };
        let (mine, other): (&mut Vec<u32>, &Vec<u32>) = if colour == 0 { (c0, c1) } else { (c1, c0) };
        let update_block = |(b, block): (usize, &mut [u32])| {
            let gens = |w: usize| sliced::unit_generators(seed, stream, sweep, colour as u32, (b * wr + w) as u64);
            let mut w = 0;
            // Eight word columns at a time through AVX2, where available.
            #[cfg(target_arch = "x86_64")]
            while simd && w + 8 <= wr {
                // SAFETY: `simd` is set only where cpu_simd::available() found AVX2.
                unsafe {
                    crate::cpu_simd::group::<P, Q>(
                        block,
                        other,
                        &BlockRows::periodic(b, h),
                        (w, wr),
                        colour,
                        &rule,
                        (seed, stream, sweep),
                    )
                };
                w += 8;
            }
            #[cfg(not(target_arch = "x86_64"))]
            let _ = simd;
            // Two word columns at a time in u64 words (each half with its
            // own unit's generators, so the result is the 32-bit one), and
            // a last odd column alone.
            while w + 1 < wr {
                let (mut ga, mut gb) = (gens(w), gens(w + 1));
                let pair = |a: &[u32], y: usize| -> [u64; P] {
                    let (lo, hi) = (load::<P>(a, y, w, wr), load::<P>(a, y, w + 1, wr));
                    std::array::from_fn(|p| u64::from(lo[p]) | (u64::from(hi[p]) << 32))
                };
                for i in 0..UNIT_ROWS {
                    let y = b * UNIT_ROWS + i;
                    let cur = pair(other, y);
                    let up = pair(other, if y == 0 { h - 1 } else { y - 1 });
                    let down = pair(other, if y + 1 == h { 0 } else { y + 1 });
                    let side: [u64; P] = if (y + colour) & 1 == 0 {
                        let l = load::<P>(other, y, if w == 0 { wr - 1 } else { w - 1 }, wr);
                        std::array::from_fn(|p| (cur[p] << 1) | u64::from(l[p] >> 31))
                    } else {
                        let r = load::<P>(other, y, (w + 2) % wr, wr);
                        std::array::from_fn(|p| (cur[p] >> 1) | (u64::from(r[p]) << 63))
                    };
                    let s = pair(block, i);
                    let mut rng = sliced::Pair(&mut ga[i], &mut gb[i]);
                    let new = update_word::<u64, P, Q>(&s, &[up, down, cur, side], &rule, &mut rng);
                    for (p, v) in new.into_iter().enumerate() {
                        block[plane_index(i, p, w, P, wr)] = v as u32;
                        block[plane_index(i, p, w + 1, P, wr)] = (v >> 32) as u32;
                    }
                }
                w += 2;
            }
            if w < wr {
                let mut gens = gens(w);
                for i in 0..UNIT_ROWS {
                    let y = b * UNIT_ROWS + i;
                    let cur = load::<P>(other, y, w, wr);
                    let up = load::<P>(other, if y == 0 { h - 1 } else { y - 1 }, w, wr);
                    let down = load::<P>(other, if y + 1 == h { 0 } else { y + 1 }, w, wr);
                    let side = side_word::<P>(other, &cur, y, w, wr, (y + colour) & 1);
                    let s = load::<P>(block, i, w, wr);
                    let new = update_word::<u32, P, Q>(&s, &[up, down, cur, side], &rule, &mut gens[i]);
                    for (p, v) in new.into_iter().enumerate() {
                        block[plane_index(i, p, w, P, wr)] = v;
                    }
                }
            }
        };
        let block_len = UNIT_ROWS * P * wr;
        if mine.len() * 32 / P < PARALLEL_MIN_SITES {
            mine.chunks_mut(block_len).enumerate().for_each(update_block);
        } else {
            mine.par_chunks_mut(block_len).enumerate().for_each(update_block);
        }
    }

    /// Equal bonds and state counts of the planes storage.
    fn census_planes<const P: usize>(&self) -> Census {
        let (h, wr, q) = (self.height, words_per_row(self.width), self.q as usize);
        let Storage::Planes { colours: [c0, c1], .. } = &self.storage else { unreachable!("planes storage") };
        let row = |y: usize| {
            let mut counts = vec![0u64; q];
            let mut bonds = 0;
            for w in 0..wr {
                let cur = load::<P>(c1, y, w, wr);
                let up = load::<P>(c1, if y == 0 { h - 1 } else { y - 1 }, w, wr);
                let down = load::<P>(c1, if y + 1 == h { 0 } else { y + 1 }, w, wr);
                let side = side_word::<P>(c1, &cur, y, w, wr, y & 1);
                bonds += census_word(&load::<P>(c0, y, w, wr), &[up, down, cur, side], &cur, &mut counts);
            }
            Census::new(bonds, counts)
        };
        census_rows(q, h, wr * 64 * h, row)
    }

    /// One colour of one sweep on the bytes storage under the
    /// one-word-per-site rule: `site(old, [left, right, up, down], word)`
    /// gives each site's new state.
    fn half_sweep<F>(&mut self, seed: u64, stream: u64, sweep: u64, colour: usize, site: F)
    where
        F: Fn(u8, [u8; 4], u32) -> u8 + Sync,
    {
        let (hw, h) = (self.width / 2, self.height);
        let Storage::Bytes([c0, c1]) = &mut self.storage else { return };
        let (mine, other): (&mut Vec<u8>, &Vec<u8>) = if colour == 0 { (c0, c1) } else { (c1, c0) };
        let units = units_per_row(hw);
        // One row-block of UNIT_ROWS rows: its units' generators, then the
        // rows in order, each site drawing from its unit's generator.
        let update_block = |(b, block): (usize, &mut [u8])| {
            let first = (b * units) as u64;
            let mut gens: Vec<_> =
                (first..first + units as u64).map(|u| unit_generators(seed, stream, sweep, colour as u32, u)).collect();
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
                        *cell = site(*cell, [same[l], same[rt], up[xh], down[xh]], g.next_u32());
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

    /// The error for an update this backend's storage cannot run.
    fn wrong_storage(&self, algorithm: Algorithm) -> PottsError {
        PottsError::InvalidInput(format!(
            "this CPU backend holds its lattice as {} and cannot run {algorithm}; open it with \
             CpuBackend::for_algorithm",
            self.storage_name()
        ))
    }
}

impl Backend for CpuBackend {
    fn name(&self) -> &'static str {
        "cpu"
    }

    fn description(&self) -> String {
        let storage = match self.storage {
            Storage::Bytes(_) => "a byte per spin".to_string(),
            Storage::Sites(_) => "a byte per spin, row-major".to_string(),
            Storage::Planes { planes, .. } => {
                let s = if planes == 1 { "" } else { "s" };
                let avx2 = if self.storage_name() == "planes-avx2" { ", AVX2" } else { "" };
                format!("{planes} bit plane{s}, bit-sliced{avx2}")
            }
        };
        let threads = rayon::current_num_threads();
        format!("CPU, {threads} thread{}, {storage}", if threads == 1 { "" } else { "s" })
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
        let hw = self.width / 2;
        match &mut self.storage {
            Storage::Planes { colours, planes } => {
                *colours = [pack_planes(&a, hw, *planes), pack_planes(&b, hw, *planes)]
            }
            Storage::Bytes(c) => *c = [a, b],
            Storage::Sites(l) => *l = lattice.clone(),
        }
        Ok(())
    }

    fn lattice(&mut self) -> Result<Lattice> {
        if let Storage::Sites(l) = &self.storage {
            return Ok(l.clone());
        }
        let c = self.byte_colours();
        Ok(join(self.width, self.height, self.q, [&c[0], &c[1]]))
    }

    fn set_table(&mut self, table: &AcceptanceTable) -> Result<()> {
        match self.storage {
            Storage::Planes { .. } => self.rule = Some(SlicedRule::new(self.q, table)?),
            Storage::Sites(_) => return Err(self.wrong_storage(Algorithm::Metropolis)),
            Storage::Bytes(_) => {}
        }
        self.table = *table;
        self.mode = Mode::Metropolis;
        Ok(())
    }

    fn set_update(&mut self, update: &Update) -> Result<()> {
        match (update, &self.storage) {
            (Update::Metropolis(table), _) => self.set_table(table),
            (Update::HeatBath(table), Storage::Bytes(_)) => {
                self.heat_bath = *table;
                self.mode = Mode::HeatBath;
                Ok(())
            }
            (Update::SwendsenWang { .. } | Update::Wolff { .. }, Storage::Sites(_)) => {
                self.mode = Mode::Cluster(Box::new(update.clone()));
                Ok(())
            }
            _ => Err(self.wrong_storage(update.algorithm())),
        }
    }

    fn sweeps(&mut self, seed: u64, stream: u64, first: u64, count: u64) -> Result<()> {
        crate::backend::check_sweep_range(first, count)?;
        if let Mode::Cluster(update) = &self.mode {
            let Storage::Sites(lattice) = &mut self.storage else { return Err(self.wrong_storage(update.algorithm())) };
            return cluster_sweeps_cpu(update, lattice, &self.model, (seed, stream), first, count);
        }
        let planes = matches!(self.storage, Storage::Planes { .. });
        let q = self.q;
        for sweep in first..first + count {
            for colour in 0..2 {
                if !planes {
                    match &self.mode {
                        Mode::HeatBath => {
                            let table = self.heat_bath;
                            self.half_sweep(seed, stream, sweep, colour, |_, nbrs, r| {
                                heat_bath_site(nbrs, r, q, &table)
                            })
                        }
                        _ => {
                            let table = self.table;
                            self.half_sweep(seed, stream, sweep, colour, |old, nbrs, r| {
                                metropolis_site(old, nbrs, r, q, &table)
                            })
                        }
                    }
                    continue;
                }
                // One instance per q, so that its arithmetic folds.
                macro_rules! by_q {
                    ($($q:literal)*) => {
                        match self.q {
                            $($q => self.half_sweep_planes::<{ crate::sliced::planes($q) }, $q>(seed, stream, sweep, colour),)*
                            _ => unreachable!("the planes storage holds q <= 16"),
                        }
                    };
                }
                by_q!(2 3 4 5 6 7 8 9 10 11 12 13 14 15 16);
            }
        }
        Ok(())
    }

    fn census(&mut self) -> Result<Census> {
        match &self.storage {
            Storage::Sites(l) => return Ok(l.census()),
            Storage::Planes { planes: 1, .. } => return Ok(self.census_planes::<1>()),
            Storage::Planes { planes: 2, .. } => return Ok(self.census_planes::<2>()),
            Storage::Planes { planes: 3, .. } => return Ok(self.census_planes::<3>()),
            Storage::Planes { .. } => return Ok(self.census_planes::<4>()),
            Storage::Bytes(_) => {}
        }
        // Every bond joins a colour-0 site to a colour-1 site, so counting the
        // equal neighbours of colour-0 sites counts each bond once.
        let (hw, h, q) = (self.width / 2, self.height, self.q as usize);
        let colours = self.byte_colours();
        let [c0, c1] = &*colours;
        let row = |y: usize| {
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
                bonds += (s == same[l]) as u64 + (s == same[r]) as u64 + (s == up[xh]) as u64 + (s == down[xh]) as u64;
                counts[s as usize] += 1;
                counts[same[xh] as usize] += 1;
            }
            Census::new(bonds, counts)
        };
        Ok(census_rows(q, h, 2 * hw * h, row))
    }

    fn synchronize(&mut self) -> Result<()> {
        Ok(())
    }
}
