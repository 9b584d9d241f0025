//! One lattice split into horizontal strips, each held and updated apart
//! (by its own process, for instance an MPI rank), with the same bits as
//! the whole lattice on one backend.
//!
//! # The decomposition
//!
//! A strip is a run of whole row-blocks of [`UNIT_ROWS`] rows
//! ([`strip_rows`]): row-block k holds rows 8k … 8k + 7 (the last one is
//! cut short when the height is not a multiple of 8, under the
//! one-word-per-site rule). Strips differ by at most one row-block, and a
//! lattice of B row-blocks is split into at most B strips: a lattice too
//! small for the processes asked for runs on fewer of them.
//!
//! # Why the bits cannot change
//!
//! Both random-number rules ([`algorithm`](crate::algorithm) and
//! [`sliced`]) seed every unit — a row-block's word column — from a Philox
//! block named by (seed, stream, sweep, colour, unit), with units numbered
//! row-block by row-block across the whole lattice. A strip
//! boundary falls between row-blocks, so every unit lies in one strip,
//! which numbers it as the whole lattice does and draws exactly the words
//! the single-process backend draws for it, in the same order. A site's
//! update reads only its four neighbours of the other colour: in the strip,
//! or in the two *halo* rows kept above and below it, copies of the
//! neighbouring strips' edge rows. Each half-sweep (one colour) changes
//! only that colour, so after it the strips trade the edge rows of that
//! colour, and every site of the next colour sees exactly the neighbours it
//! would see in the whole lattice. The per-site and per-word updates are
//! the CPU backend's own ([`metropolis_site`], [`update_word`] and its AVX2
//! form), with the same acceptance tables.
//!
//! The census of a strip counts the equal bonds of its colour-0 sites with
//! all four of their neighbours (halo rows included) and the states of its
//! sites: each bond of the lattice joins one colour-0 site to one colour-1
//! site, so the strips' censuses add up, as integers, to the whole
//! lattice's.
//!
//! # One half-sweep
//!
//! The strip updates its first and last row-blocks, hands their edge rows
//! to a [`HaloExchange`] and updates its interior row-blocks while the
//! exchange is under way; the exchange returns once the halo rows hold the
//! neighbours' new edge rows.
//!
//! # Backends
//!
//! [`StripBackend`] runs a strip on the host's cores, `CudaStripBackend`
//! (the `cuda` feature) on a GPU, with the same storage words, the same
//! random-number rule for a given model and the same integer census, so
//! the strips of one lattice may run on either, in any mix: both are
//! [`Strip`]s, and [`open_strip`] opens the one a [`Device`] asks for.

use std::ops::Range;

use rayon::prelude::*;
use warpmc_gpu::Device;
use warpmc_rng::RandomSource;

use crate::algorithm::{
    AcceptanceTable, Scheme, UNIT_COLS, UNIT_ROWS, metropolis_site, unit_generators, units_per_row,
};
use crate::cpu::{PARALLEL_MIN_SITES, load, side_word};
use crate::error::{PottsError, Result};
use crate::lattice::{Census, Lattice};
use crate::layout::{BlockRows, pack_planes, plane_index, side_columns, unpack_planes};
use crate::model::PottsModel;
use crate::sliced::{self, SlicedRule, census_word, planes, update_word, words_per_row};

/// The rows of each strip when a lattice of `height` rows is split into
/// `parts` strips of whole row-blocks: as many strips as asked for, or one
/// per row-block when the lattice has fewer row-blocks than that (and one
/// strip for `parts` = 0). Strips are in order from the top and differ by
/// at most one row-block.
///
/// ```
/// use warpmc_potts::strip::strip_rows;
/// assert_eq!(strip_rows(64, 3), [0..16, 16..40, 40..64]);
/// assert_eq!(strip_rows(20, 4), [0..8, 8..16, 16..20]); // three row-blocks
/// ```
pub fn strip_rows(height: usize, parts: usize) -> Vec<Range<usize>> {
    let blocks = height.div_ceil(UNIT_ROWS);
    let parts = parts.clamp(1, blocks.max(1));
    (0..parts)
        .map(|k| {
            let (b0, b1) = (k * blocks / parts, (k + 1) * blocks / parts);
            (b0 * UNIT_ROWS).min(height)..(b1 * UNIT_ROWS).min(height)
        })
        .collect()
}

/// The rows a strip trades with its neighbours in one half-sweep, as bytes
/// (the strip's storage words in native byte order: strips of one lattice
/// run on machines of one byte order).
#[derive(Debug)]
pub struct Halo<'a> {
    /// The strip's first row: the strip above keeps it as its lower halo.
    pub send_up: &'a [u8],
    /// The strip's last row: the strip below keeps it as its upper halo.
    pub send_down: &'a [u8],
    /// Receives the last row of the strip above (the upper halo).
    pub from_up: &'a mut [u8],
    /// Receives the first row of the strip below (the lower halo).
    pub from_down: &'a mut [u8],
}

/// Trades a strip's edge rows with the strips above and below it (which
/// wrap around: the first strip's upper neighbour is the last strip, and a
/// lone strip is its own neighbour on both sides).
pub trait HaloExchange {
    /// Sends `halo.send_up` to the strip above and `halo.send_down` to the
    /// strip below, runs `interior` meanwhile (the update of the strip's
    /// other rows, which touches none of `halo`'s), and returns once
    /// `halo.from_up` and `halo.from_down` hold the neighbours' rows.
    fn exchange(&mut self, halo: Halo<'_>, interior: &mut dyn FnMut()) -> Result<()>;
}

/// One strip of a lattice on some backend, updated with the bits of the
/// whole lattice: [`StripBackend`] on the host's cores, `CudaStripBackend`
/// on a GPU. Strips on either trade the same rows and count the same
/// census, so one lattice's strips may mix them.
pub trait Strip {
    /// "cpu" or "cuda".
    fn name(&self) -> &'static str;
    /// One line describing where the strip runs and how it is stored.
    fn description(&self) -> String;
    /// The lattice rows this strip holds.
    fn rows(&self) -> Range<usize>;
    /// Takes the strip's rows, and its halo rows, from a whole lattice of
    /// the model.
    fn load(&mut self, lattice: &Lattice) -> Result<()>;
    /// The strip's own rows, row-major, one byte per site (rows
    /// `rows().start` … of the whole lattice).
    fn spins(&mut self) -> Result<Vec<u8>>;
    /// Sets the acceptance table of the following sweeps.
    fn set_table(&mut self, table: &AcceptanceTable) -> Result<()>;
    /// Runs sweeps `first` … `first + count − 1` of the chain (`seed`,
    /// `stream`), trading edge rows through `exchange` after each
    /// half-sweep. Every strip of the lattice must make the same call.
    fn sweeps(&mut self, seed: u64, stream: u64, first: u64, count: u64, exchange: &mut dyn HaloExchange)
    -> Result<()>;
    /// The strip's part of the lattice's census (see
    /// [`StripBackend::census`]); the parts of all strips add up to the
    /// whole lattice's.
    fn census(&mut self) -> Result<Census>;
}

/// The strip of `model`'s lattice holding `rows` (whole row-blocks, as
/// [`strip_rows`] gives them) on `device`: [`StripBackend`] on the CPU,
/// `CudaStripBackend` on a GPU.
pub fn open_strip(device: &Device, model: &PottsModel, rows: Range<usize>) -> Result<Box<dyn Strip>> {
    match device {
        // (Without the cuda feature every device is the CPU.)
        #[allow(unreachable_patterns)]
        Device::Cpu { .. } => Ok(Box::new(StripBackend::new(model, rows)?)),
        #[cfg(feature = "cuda")]
        Device::Cuda(gpu) => Ok(Box::new(crate::cuda_strip::CudaStripBackend::new(gpu.clone(), model, rows)?)),
        #[allow(unreachable_patterns)]
        _ => Err(PottsError::Gpu(warpmc_gpu::GpuError::NoDevice(
            "warpmc-potts was built without its cuda feature".into(),
        ))),
    }
}

/// Fails unless `rows` are whole row-blocks of `model`'s lattice.
pub(crate) fn check_rows(model: &PottsModel, rows: &Range<usize>) -> Result<()> {
    let h = model.height();
    let whole_blocks = |y: usize| y.is_multiple_of(UNIT_ROWS) || y == h;
    if rows.start >= rows.end || rows.end > h || !whole_blocks(rows.start) || !whole_blocks(rows.end) {
        return Err(PottsError::InvalidInput(format!(
            "rows {}..{} are not a strip of whole {UNIT_ROWS}-row blocks of a lattice {h} rows high",
            rows.start, rows.end
        )));
    }
    Ok(())
}

/// Fails unless `lattice` has the size and q of a strip's model.
pub(crate) fn check_lattice(lattice: &Lattice, width: usize, height: usize, q: u32) -> Result<()> {
    if (lattice.width(), lattice.height(), lattice.q()) != (width, height, q) {
        return Err(PottsError::InvalidInput(format!(
            "a {}×{} q={} lattice does not fit a strip of a {}×{} q={} model",
            lattice.width(),
            lattice.height(),
            lattice.q(),
            width,
            height,
            q
        )));
    }
    Ok(())
}

/// The lattice rows a strip of `rows` reads: its upper halo, its own rows
/// and its lower halo (wrapping around).
fn stored_rows(rows: &Range<usize>, height: usize) -> impl Iterator<Item = usize> + '_ {
    let h = height;
    std::iter::once((rows.start + h - 1) % h).chain(rows.clone()).chain([rows.end % h])
}

/// The two colour arrays of a strip of `rows`, one byte per spin, with a
/// halo row above and below.
pub(crate) fn stored_colours(lattice: &Lattice, rows: &Range<usize>) -> [Vec<u8>; 2] {
    let (w, hw) = (lattice.width(), lattice.width() / 2);
    let stored = rows.len() + 2;
    let mut colours = [vec![0u8; stored * hw], vec![0u8; stored * hw]];
    let spins = lattice.spins();
    for (s, y) in stored_rows(rows, lattice.height()).enumerate() {
        // Site (x, y) has colour (x + y) mod 2.
        let (even, odd) = if y.is_multiple_of(2) { (0, 1) } else { (1, 0) };
        for (xh, pair) in spins[y * w..(y + 1) * w].chunks_exact(2).enumerate() {
            colours[even][s * hw + xh] = pair[0];
            colours[odd][s * hw + xh] = pair[1];
        }
    }
    colours
}

/// The rows `rows` of a lattice `width` wide, row-major, from a strip's
/// colour arrays (one byte per spin, halo rows included).
pub(crate) fn strip_spins(colours: &[Vec<u8>; 2], rows: &Range<usize>, width: usize) -> Vec<u8> {
    let hw = width / 2;
    let mut out = vec![0u8; rows.len() * width];
    for (j, row) in out.chunks_exact_mut(width).enumerate() {
        let y = rows.start + j;
        let (even, odd) = if y.is_multiple_of(2) { (&colours[0], &colours[1]) } else { (&colours[1], &colours[0]) };
        let s = j + 1;
        for (xh, pair) in row.chunks_exact_mut(2).enumerate() {
            pair[0] = even[s * hw + xh];
            pair[1] = odd[s * hw + xh];
        }
    }
    out
}

/// The spins of one strip, one colour array per colour as the CPU backend
/// keeps them (see [`layout`](crate::layout)), each with a halo row above
/// and below the strip's rows.
#[derive(Debug)]
enum Storage {
    /// One byte per spin, the one-word-per-site rule.
    Bytes([Vec<u8>; 2]),
    /// Bit planes, the bit-sliced rule.
    Planes { colours: [Vec<u32>; 2], planes: usize },
}

/// One strip of a periodic lattice on the host's cores: rows `rows` of a
/// model's lattice, updated as the whole lattice's [`CpuBackend`](crate::CpuBackend)
/// updates them, with its edge rows traded through a [`HaloExchange`].
#[derive(Debug)]
pub struct StripBackend {
    width: usize,
    height: usize,
    q: u32,
    rows: Range<usize>,
    storage: Storage,
    table: AcceptanceTable,
    rule: Option<SlicedRule>,
    simd: bool,
}

/// What the update of one colour's row-blocks reads.
struct Sweep<'a> {
    other: &'a [u8],
    hw: usize,
    colour: usize,
    q: u32,
    table: &'a AcceptanceTable,
    /// Row-block number (in the whole lattice) of the strip's first.
    first_block: usize,
    seed: u64,
    stream: u64,
    sweep: u64,
}

/// What the bit-sliced update of one colour's row-blocks reads.
struct PlanesSweep<'a> {
    other: &'a [u32],
    wr: usize,
    colour: usize,
    rule: &'a SlicedRule,
    simd: bool,
    first_block: usize,
    seed: u64,
    stream: u64,
    sweep: u64,
}

/// Where row-block `b` of a strip (counted from the strip's first) finds
/// its neighbours in the other colour's array: strip row j is array row
/// j + 1, below the upper halo row.
fn strip_block_rows(first_block: usize, b: usize) -> BlockRows {
    BlockRows {
        unit_block: first_block + b,
        rows: std::array::from_fn(|i| {
            let s = b * UNIT_ROWS + i + 1;
            [s, s - 1, s + 1]
        }),
    }
}

impl Sweep<'_> {
    /// Updates the row-blocks in `rows` (whole row-blocks of this colour's
    /// array, the first being the strip's row-block `b0`).
    fn update(&self, rows: &mut [u8], b0: usize) {
        let (hw, colour) = (self.hw, self.colour);
        let units = units_per_row(hw);
        let update_block = |(k, block): (usize, &mut [u8])| {
            let at = strip_block_rows(self.first_block, b0 + k);
            let first = (at.unit_block * units) as u64;
            let mut gens: Vec<_> = (first..first + units as u64)
                .map(|u| unit_generators(self.seed, self.stream, self.sweep, colour as u32, u))
                .collect();
            for (i, row) in block.chunks_mut(hw).enumerate() {
                let [same, above, below] = at.rows[i];
                // Row-blocks start at even rows: row i's offset is the lattice row's.
                let o = (i + colour) & 1;
                let same = &self.other[same * hw..][..hw];
                let up = &self.other[above * hw..][..hw];
                let down = &self.other[below * hw..][..hw];
                for (u, (cells, pair)) in row.chunks_mut(UNIT_COLS).zip(gens.iter_mut()).enumerate() {
                    let g = &mut pair[i & 1];
                    let x0 = u * UNIT_COLS;
                    for (c, cell) in cells.iter_mut().enumerate() {
                        let xh = x0 + c;
                        let (l, r) = side_columns(xh, o, hw);
                        *cell = metropolis_site(
                            *cell,
                            [same[l], same[r], up[xh], down[xh]],
                            g.next_u32(),
                            self.q,
                            self.table,
                        );
                    }
                }
            }
        };
        let block_len = UNIT_ROWS * hw;
        if rows.len() < PARALLEL_MIN_SITES {
            rows.chunks_mut(block_len).enumerate().for_each(update_block);
        } else {
            rows.par_chunks_mut(block_len).enumerate().for_each(update_block);
        }
    }
}

impl PlanesSweep<'_> {
    /// As [`Sweep::update`], on bit planes.
    fn update<const P: usize, const Q: u32>(&self, rows: &mut [u32], b0: usize) {
        let (wr, colour) = (self.wr, self.colour);
        let update_block = |(k, block): (usize, &mut [u32])| {
            let at = strip_block_rows(self.first_block, b0 + k);
            let mut w = 0;
            #[cfg(target_arch = "x86_64")]
            while self.simd && w + 8 <= wr {
                // SAFETY: `simd` is set only where cpu_simd::available() found AVX2.
                unsafe {
                    crate::cpu_simd::group::<P, Q>(
                        block,
                        self.other,
                        &at,
                        (w, wr),
                        colour,
                        self.rule,
                        (self.seed, self.stream, self.sweep),
                    )
                };
                w += 8;
            }
            // Word columns one at a time: each row of a unit has its own
            // generator, so the order of columns and rows does not matter.
            while w < wr {
                let unit = (at.unit_block * wr + w) as u64;
                let mut gens = sliced::unit_generators(self.seed, self.stream, self.sweep, colour as u32, unit);
                for (i, g) in gens.iter_mut().enumerate() {
                    let [same, above, below] = at.rows[i];
                    let cur = load::<P>(self.other, same, w, wr);
                    let up = load::<P>(self.other, above, w, wr);
                    let down = load::<P>(self.other, below, w, wr);
                    let side = side_word::<P>(self.other, &cur, same, w, wr, (i + colour) & 1);
                    let s = load::<P>(block, i, w, wr);
                    let new = update_word::<u32, P, Q>(&s, &[up, down, cur, side], self.rule, g);
                    for (p, v) in new.into_iter().enumerate() {
                        block[plane_index(i, p, w, P, wr)] = v;
                    }
                }
                w += 1;
            }
        };
        let block_len = UNIT_ROWS * P * wr;
        if rows.len() * 32 / P < PARALLEL_MIN_SITES {
            rows.chunks_mut(block_len).enumerate().for_each(update_block);
        } else {
            rows.par_chunks_mut(block_len).enumerate().for_each(update_block);
        }
    }
}

/// A slice of storage words as the bytes they occupy.
pub(crate) fn as_bytes<T: Word>(words: &[T]) -> &[u8] {
    // SAFETY: T is u8 or u32 (the private Word trait): no padding, every
    // byte initialised; u8 has alignment 1 and the length covers exactly
    // the words' bytes.
    unsafe { std::slice::from_raw_parts(words.as_ptr().cast::<u8>(), std::mem::size_of_val(words)) }
}

/// A mutable slice of storage words as the bytes they occupy.
pub(crate) fn as_bytes_mut<T: Word>(words: &mut [T]) -> &mut [u8] {
    // SAFETY: as in `as_bytes`; in addition every byte pattern is a valid
    // u8 and u32, so whatever is written through the bytes leaves valid
    // words.
    unsafe { std::slice::from_raw_parts_mut(words.as_mut_ptr().cast::<u8>(), std::mem::size_of_val(words)) }
}

/// The storage words of a strip: u8 and u32 only (the trait is private),
/// plain integers without padding.
pub(crate) trait Word: Copy + Send + Sync {}
impl Word for u8 {}
impl Word for u32 {}

/// One half-sweep of one colour array `mine` (halo row, `n` strip rows of
/// `row_len` words, halo row): the first and last row-blocks, then the
/// interior during the exchange of the new edge rows.
fn half_sweep<T: Word>(
    mine: &mut [T],
    row_len: usize,
    n: usize,
    update: &(dyn Fn(&mut [T], usize) + Sync),
    exchange: &mut dyn HaloExchange,
) -> Result<()> {
    let blocks = n.div_ceil(UNIT_ROWS);
    let block_len = UNIT_ROWS * row_len;
    let (from_up, rest) = mine.split_at_mut(row_len);
    let (strip, from_down) = rest.split_at_mut(n * row_len);
    let (first, rest) = strip.split_at_mut(block_len.min(strip.len()));
    let (interior, last) = rest.split_at_mut(blocks.saturating_sub(2) * block_len);
    if blocks > 1 {
        rayon::join(|| update(first, 0), || update(last, blocks - 1));
    } else {
        update(first, 0);
    }
    let send_down = if blocks > 1 { &last[last.len() - row_len..] } else { &first[first.len() - row_len..] };
    let halo = Halo {
        send_up: as_bytes(&first[..row_len]),
        send_down: as_bytes(send_down),
        from_up: as_bytes_mut(from_up),
        from_down: as_bytes_mut(from_down),
    };
    exchange.exchange(halo, &mut || {
        if !interior.is_empty() {
            update(interior, 1)
        }
    })
}

impl StripBackend {
    /// A backend for rows `rows` of `model`'s lattice, under the model's own
    /// random-number rule ([`Scheme::for_model`]), holding the ordered
    /// state until [`load`](StripBackend::load). `rows` must be whole
    /// row-blocks, as [`strip_rows`] gives them.
    pub fn new(model: &PottsModel, rows: Range<usize>) -> Result<Self> {
        let (w, h) = (model.width(), model.height());
        check_rows(model, &rows)?;
        let n = rows.len();
        let bytes = ((n + 2) * w) as u64;
        warpmc_host::check_allocation(&format!("a strip of {n} rows of a {w} × {h} lattice"), 2 * bytes)
            .map_err(PottsError::OutOfHostMemory)?;
        let storage = match Scheme::for_model(model) {
            Scheme::SiteWords => Storage::Bytes([vec![0; (n + 2) * w / 2], vec![0; (n + 2) * w / 2]]),
            Scheme::Sliced => {
                let planes = planes(model.q());
                let words = (n + 2) * words_per_row(w) * planes;
                Storage::Planes { colours: [vec![0; words], vec![0; words]], planes }
            }
        };
        Ok(StripBackend {
            width: w,
            height: h,
            q: model.q(),
            rows,
            storage,
            table: AcceptanceTable::reject_all(),
            rule: None,
            simd: simd_available(),
        })
    }

    /// The same backend without AVX2 (for comparisons; results are equal).
    pub fn without_simd(mut self) -> Self {
        self.simd = false;
        self
    }

    /// The lattice rows this strip holds.
    pub fn rows(&self) -> Range<usize> {
        self.rows.clone()
    }

    /// One line describing the strip's storage and threads.
    pub fn description(&self) -> String {
        let storage = match self.storage {
            Storage::Bytes(_) => "a byte per spin".to_string(),
            Storage::Planes { planes, .. } => {
                let s = if planes == 1 { "" } else { "s" };
                let avx2 = if self.simd && words_per_row(self.width) >= 8 { ", AVX2" } else { "" };
                format!("{planes} bit plane{s}, bit-sliced{avx2}")
            }
        };
        let threads = rayon::current_num_threads();
        format!("CPU, {threads} thread{}, {storage}", if threads == 1 { "" } else { "s" })
    }

    /// Takes the strip's rows, and its halo rows, from a whole lattice of
    /// the model.
    pub fn load(&mut self, lattice: &Lattice) -> Result<()> {
        check_lattice(lattice, self.width, self.height, self.q)?;
        let hw = self.width / 2;
        let [a, b] = stored_colours(lattice, &self.rows);
        match &mut self.storage {
            Storage::Bytes(c) => *c = [a, b],
            Storage::Planes { colours, planes } => {
                *colours = [pack_planes(&a, hw, *planes), pack_planes(&b, hw, *planes)]
            }
        }
        Ok(())
    }

    /// The colour arrays one byte per spin, halo rows included (a copy for
    /// the planes storage).
    fn byte_colours(&self) -> std::borrow::Cow<'_, [Vec<u8>; 2]> {
        let hw = self.width / 2;
        match &self.storage {
            Storage::Planes { colours: [a, b], planes } => {
                std::borrow::Cow::Owned([unpack_planes(a, hw, *planes), unpack_planes(b, hw, *planes)])
            }
            Storage::Bytes(c) => std::borrow::Cow::Borrowed(c),
        }
    }

    /// The strip's own rows, row-major, one byte per site (rows
    /// `rows().start` … of the whole lattice).
    pub fn spins(&self) -> Vec<u8> {
        strip_spins(&self.byte_colours(), &self.rows, self.width)
    }

    /// Sets the acceptance table of the following sweeps.
    pub fn set_table(&mut self, table: &AcceptanceTable) -> Result<()> {
        if let Storage::Planes { .. } = self.storage {
            self.rule = Some(SlicedRule::new(self.q, table)?);
        }
        self.table = *table;
        Ok(())
    }

    /// Runs sweeps `first` … `first + count − 1` of the chain (`seed`,
    /// `stream`), trading edge rows through `exchange` after each
    /// half-sweep. Every strip of the lattice must make the same call.
    pub fn sweeps(
        &mut self,
        seed: u64,
        stream: u64,
        first: u64,
        count: u64,
        exchange: &mut dyn HaloExchange,
    ) -> Result<()> {
        crate::backend::check_sweep_range(first, count)?;
        for sweep in first..first + count {
            for colour in 0..2 {
                self.half_sweep(seed, stream, sweep, colour, exchange)?;
            }
        }
        Ok(())
    }

    fn half_sweep(
        &mut self,
        seed: u64,
        stream: u64,
        sweep: u64,
        colour: usize,
        exchange: &mut dyn HaloExchange,
    ) -> Result<()> {
        let n = self.rows.len();
        let first_block = self.rows.start / UNIT_ROWS;
        let (q, simd) = (self.q, self.simd);
        match &mut self.storage {
            Storage::Bytes([c0, c1]) => {
                let (mine, other): (&mut Vec<u8>, &Vec<u8>) = if colour == 0 { (c0, c1) } else { (c1, c0) };
                let hw = self.width / 2;
                let ctx = Sweep { other, hw, colour, q, table: &self.table, first_block, seed, stream, sweep };
                half_sweep(mine, hw, n, &|rows: &mut [u8], b0| ctx.update(rows, b0), exchange)
            }
            Storage::Planes { colours: [c0, c1], planes: stored_planes } => {
                let Some(rule) = &self.rule else {
                    return Err(PottsError::InvalidInput("the strip has no acceptance table yet".into()));
                };
                let (mine, other): (&mut Vec<u32>, &Vec<u32>) = if colour == 0 { (c0, c1) } else { (c1, c0) };
                let wr = words_per_row(self.width);
                let ctx = PlanesSweep { other, wr, colour, rule, simd, first_block, seed, stream, sweep };
                let row_len = wr * *stored_planes;
                // One instance per q, so that its arithmetic folds.
                macro_rules! by_q {
                    ($($q:literal)*) => {
                        match q {
                            $($q => half_sweep(
                                mine,
                                row_len,
                                n,
                                &|rows: &mut [u32], b0| ctx.update::<{ planes($q) }, $q>(rows, b0),
                                exchange,
                            ),)*
                            _ => unreachable!("the planes storage holds q <= 16"),
                        }
                    };
                }
                by_q!(2 3 4 5 6 7 8 9 10 11 12 13 14 15 16)
            }
        }
    }

    /// The strip's part of the lattice's census: the equal bonds of its
    /// colour-0 sites with their four neighbours and the states of its
    /// sites. The parts of all strips add up to the whole lattice's census.
    pub fn census(&self) -> Census {
        let q = self.q as usize;
        let n = self.rows.len();
        match &self.storage {
            Storage::Bytes([c0, c1]) => {
                let hw = self.width / 2;
                let rows = (0..n).into_par_iter().map(|j| {
                    let s = j + 1;
                    // Strips start at even rows: row j's offset is the lattice row's.
                    let o = j & 1;
                    let mine = &c0[s * hw..(s + 1) * hw];
                    let same = &c1[s * hw..(s + 1) * hw];
                    let up = &c1[(s - 1) * hw..s * hw];
                    let down = &c1[(s + 1) * hw..(s + 2) * hw];
                    let mut counts = vec![0u64; q];
                    let mut bonds = 0u64;
                    for xh in 0..hw {
                        let v = mine[xh];
                        let (l, r) = side_columns(xh, o, hw);
                        bonds += (v == same[l]) as u64
                            + (v == same[r]) as u64
                            + (v == up[xh]) as u64
                            + (v == down[xh]) as u64;
                        counts[v as usize] += 1;
                        counts[same[xh] as usize] += 1;
                    }
                    Census::new(bonds, counts)
                });
                Census::par_sum(q, rows)
            }
            Storage::Planes { colours: [c0, c1], planes } => match planes {
                1 => census_planes::<1>(c0, c1, n, self.width, q),
                2 => census_planes::<2>(c0, c1, n, self.width, q),
                3 => census_planes::<3>(c0, c1, n, self.width, q),
                _ => census_planes::<4>(c0, c1, n, self.width, q),
            },
        }
    }
}

impl Strip for StripBackend {
    fn name(&self) -> &'static str {
        "cpu"
    }

    fn description(&self) -> String {
        StripBackend::description(self)
    }

    fn rows(&self) -> Range<usize> {
        StripBackend::rows(self)
    }

    fn load(&mut self, lattice: &Lattice) -> Result<()> {
        StripBackend::load(self, lattice)
    }

    fn spins(&mut self) -> Result<Vec<u8>> {
        Ok(StripBackend::spins(self))
    }

    fn set_table(&mut self, table: &AcceptanceTable) -> Result<()> {
        StripBackend::set_table(self, table)
    }

    fn sweeps(
        &mut self,
        seed: u64,
        stream: u64,
        first: u64,
        count: u64,
        exchange: &mut dyn HaloExchange,
    ) -> Result<()> {
        StripBackend::sweeps(self, seed, stream, first, count, exchange)
    }

    fn census(&mut self) -> Result<Census> {
        Ok(StripBackend::census(self))
    }
}

/// The census of a strip on bit planes (see [`StripBackend::census`]).
fn census_planes<const P: usize>(c0: &[u32], c1: &[u32], n: usize, width: usize, q: usize) -> Census {
    let wr = words_per_row(width);
    let rows = (0..n).into_par_iter().map(|j| {
        let s = j + 1;
        let mut counts = vec![0u64; q];
        let mut bonds = 0;
        for w in 0..wr {
            let cur = load::<P>(c1, s, w, wr);
            let up = load::<P>(c1, s - 1, w, wr);
            let down = load::<P>(c1, s + 1, w, wr);
            let side = side_word::<P>(c1, &cur, s, w, wr, j & 1);
            bonds += census_word(&load::<P>(c0, s, w, wr), &[up, down, cur, side], &cur, &mut counts);
        }
        Census::new(bonds, counts)
    });
    Census::par_sum(q, rows)
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strips_are_whole_row_blocks_as_even_as_possible() {
        for h in (2..=200).step_by(2) {
            for parts in 0..12 {
                let s = strip_rows(h, parts);
                let blocks = h.div_ceil(UNIT_ROWS);
                assert_eq!(s.len(), parts.clamp(1, blocks), "h={h} parts={parts}");
                assert_eq!(s[0].start, 0);
                assert_eq!(s.last().unwrap().end, h);
                for pair in s.windows(2) {
                    assert_eq!(pair[0].end, pair[1].start);
                }
                for r in &s {
                    assert!(!r.is_empty() && r.start % UNIT_ROWS == 0);
                    assert!(r.end % UNIT_ROWS == 0 || r.end == h);
                }
                let sizes: Vec<usize> = s.iter().map(|r| r.len().div_ceil(UNIT_ROWS)).collect();
                let (lo, hi) = (sizes.iter().min().unwrap(), sizes.iter().max().unwrap());
                assert!(hi - lo <= 1, "h={h} parts={parts}: {s:?}");
            }
        }
    }

    #[test]
    fn a_strip_must_be_whole_row_blocks() {
        let m = PottsModel::new(3, 16, 20).unwrap();
        assert!(StripBackend::new(&m, 0..8).is_ok());
        assert!(StripBackend::new(&m, 16..20).is_ok());
        for bad in [0..4, 4..16, 8..8, 16..24, 8..21] {
            let e = StripBackend::new(&m, bad.clone()).unwrap_err().to_string();
            assert!(e.contains("whole 8-row blocks"), "{bad:?}: {e}");
        }
    }

    #[test]
    fn load_then_spins_gives_the_rows_back() {
        for (q, w, h) in [(3, 10, 22), (9, 64, 24), (2, 128, 16)] {
            let m = PottsModel::new(q, w, h).unwrap();
            let l = Lattice::new(&m, crate::InitialState::Random, 5, 6);
            for rows in strip_rows(h, 3) {
                let mut s = StripBackend::new(&m, rows.clone()).unwrap();
                s.load(&l).unwrap();
                assert_eq!(s.spins(), l.spins()[rows.start * w..rows.end * w]);
            }
        }
    }
}
