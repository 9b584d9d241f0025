//! One strip of a lattice on a CUDA device: the GPU form of
//! [`StripBackend`](crate::strip::StripBackend), with the same storage
//! words, random numbers and census, so the strips of one lattice may run
//! on CPUs and GPUs in any mix and still end in the whole lattice's bits
//! (see [`strip`](crate::strip) for why the decomposition cannot change a
//! bit).
//!
//! # One half-sweep
//!
//! The strip's colour arrays (its rows and a halo row above and below)
//! live on the device. The first and last row-blocks are updated on the
//! strip's main stream (of the device's highest priority) and their edge
//! rows copied to page-locked host memory behind them; the interior
//! row-blocks are updated meanwhile on a second stream. The host waits only for the two edge rows, hands them to
//! the [`HaloExchange`] while the interior is still running on the GPU,
//! and uploads the halo rows it receives on the main stream, which then
//! waits for the interior before the next half-sweep. The census is
//! counted on the device; only its q + 1 integers come back.
//!
//! With strips on several GPUs, [`CudaStripBackend::sweeps_nccl`] trades
//! the edge rows device to device through NCCL instead: the sends and
//! receives are queued on the main stream behind the edges, the interior
//! runs beside them on the second stream, and the host waits for nothing
//! (its census, [`CudaStripBackend::census_nccl`], is summed by an NCCL
//! all-reduce).

use std::ops::Range;

use warpmc_gpu::nccl::{Communicator, NcclType};
use warpmc_gpu::{DeviceBuffer, DeviceRepr, Gpu, Kernel, KernelSource, LaunchConfig, PinnedBuffer, ValidAsZeroBits};

use crate::algorithm::{AcceptanceTable, Scheme, TABLE_LEN, UNIT_ROWS, units_per_row};
use crate::cuda::check_fits;
use crate::error::{PottsError, Result};
use crate::lattice::{Census, Lattice};
use crate::layout::{pack_planes, unpack_planes};
use crate::model::PottsModel;
use crate::sliced::{SlicedRule, planes, words_per_row};
use crate::strip::{
    Halo, HaloExchange, Strip, Word, as_bytes, as_bytes_mut, check_lattice, check_rows, stored_colours, strip_spins,
};

/// The strip kernels, for NVRTC (compiled for one q at a time, as
/// [`crate::cuda::kernel_source`]; potts.cu comes in as a header, none of
/// its own kernels compiled).
pub fn kernel_source(q: u32) -> KernelSource {
    crate::cuda::only(
        crate::cuda::with_potts_constants(
            KernelSource::new("potts_strip.cu", include_str!("../kernels/potts_strip.cu"))
                .header("potts.cu", include_str!("../kernels/potts.cu")),
            q,
        ),
        crate::cuda::KernelSet::NONE,
    )
}

/// Threads per block of the strip kernels.
const BLOCK: u32 = 128;

/// The colour arrays of a strip on the device, `row_len` words a row, a
/// halo row above and below the strip's rows, and the page-locked rows
/// it trades: the rows it sends up and down, and the rows it receives
/// from the strips above and below.
#[derive(Debug)]
struct Arrays<T> {
    colours: [DeviceBuffer<T>; 2],
    send_up: PinnedBuffer<T>,
    send_down: PinnedBuffer<T>,
    from_up: PinnedBuffer<T>,
    from_down: PinnedBuffer<T>,
    row_len: usize,
}

impl<T: DeviceRepr + ValidAsZeroBits> Arrays<T> {
    fn new(gpu: &Gpu, rows: usize, row_len: usize) -> Result<Self> {
        Ok(Arrays {
            colours: [gpu.alloc_zeros((rows + 2) * row_len)?, gpu.alloc_zeros((rows + 2) * row_len)?],
            send_up: gpu.alloc_pinned(row_len)?,
            send_down: gpu.alloc_pinned(row_len)?,
            from_up: gpu.alloc_pinned(row_len)?,
            from_down: gpu.alloc_pinned(row_len)?,
            row_len,
        })
    }
}

/// How the strip stores its spins: the storage follows the model's
/// random-number rule, as the CPU strip's does.
#[derive(Debug)]
enum Storage {
    /// One byte per spin, the one-word-per-site rule.
    Bytes(Arrays<u8>),
    /// Bit planes, the bit-sliced rule.
    Planes { arrays: Arrays<u32>, planes: usize },
}

/// One strip of a periodic lattice on a CUDA device: rows `rows` of a
/// model's lattice, updated as the whole lattice's backends update them,
/// with its edge rows traded through a [`HaloExchange`] while its interior
/// is updated.
#[derive(Debug)]
pub struct CudaStripBackend {
    /// The edges, the copies and the census.
    gpu: Gpu,
    /// The interior row-blocks.
    side: Gpu,
    width: usize,
    height: usize,
    q: u32,
    rows: Range<usize>,
    storage: Storage,
    table: DeviceBuffer<u64>,
    /// The bit-sliced rule (kernel arguments), once a table is set.
    rule: Option<SlicedRule>,
    counts: DeviceBuffer<u64>,
    update: Kernel,
    /// The bit-sliced update with one thread per unit (None under the
    /// one-word-per-site rule).
    update_unit: Option<Kernel>,
    /// Launches of at least this many units take `update_unit`.
    unit_launch_from: u64,
    census: Kernel,
    max_blocks: u32,
}

/// Where a half-sweep's edge rows go.
enum Trade<'a> {
    /// Through page-locked host memory, to a [`HaloExchange`].
    Host(&'a mut dyn HaloExchange),
    /// Device to device through NCCL, to the ranks holding the strips above
    /// and below.
    Nccl { comm: &'a Communicator, up: usize, down: usize },
}

/// Which sweep of which chain a half-sweep belongs to, and its colour.
#[derive(Clone, Copy)]
struct HalfSweep {
    seed: u64,
    stream: u64,
    sweep: u64,
    colour: u32,
}

/// The row-blocks one launch updates: the i-th of `count` is the strip's
/// row-block `b0 + i·step`.
#[derive(Clone, Copy)]
struct Blocks {
    b0: u32,
    step: u32,
    count: u32,
}

impl CudaStripBackend {
    /// A backend for rows `rows` of `model`'s lattice on `gpu`, under the
    /// model's own random-number rule ([`Scheme::for_model`], as
    /// [`StripBackend`](crate::strip::StripBackend) picks it), holding zeros
    /// until [`load`](Strip::load). `rows` must be whole row-blocks, as
    /// [`strip_rows`](crate::strip::strip_rows) gives them. The strip works
    /// on two streams of its own, which start after the work issued so far
    /// on `gpu`'s.
    pub fn new(gpu: Gpu, model: &PottsModel, rows: Range<usize>) -> Result<Self> {
        check_rows(model, &rows)?;
        let (w, n) = (model.width(), rows.len());
        // Both colours with their halo rows, at a byte per spin at most.
        check_fits(&gpu, ((n + 2) * w) as u64 + (TABLE_LEN as u64 + 257) * 8)?;
        // The edges and the trade on an urgent stream: they start as soon
        // as room frees up beside the interior's long kernel.
        let main = gpu.fork_urgent_stream()?;
        let side = main.fork_stream()?;
        let module = main.module(&kernel_source(model.q()))?;
        let (storage, update, update_unit, census) = match Scheme::for_model(model) {
            Scheme::SiteWords => (
                Storage::Bytes(Arrays::new(&main, n, w / 2)?),
                module.kernel("potts_strip_generic")?,
                None,
                module.kernel("potts_strip_generic_census")?,
            ),
            Scheme::Sliced => {
                let planes = planes(model.q());
                (
                    Storage::Planes { arrays: Arrays::new(&main, n, words_per_row(w) * planes)?, planes },
                    module.kernel("potts_strip_sliced")?,
                    Some(module.kernel("potts_strip_sliced_unit")?),
                    module.kernel("potts_strip_sliced_census")?,
                )
            }
        };
        let info = main.info();
        let max_blocks = info.sm_count * (info.max_threads_per_sm / BLOCK).max(1) * 4;
        // A unit per thread once the units fill every resident thread (as
        // CudaKernel::Auto picks the whole lattice's kernel).
        let unit_launch_from = info.sm_count as u64 * info.max_threads_per_sm as u64;
        Ok(CudaStripBackend {
            table: main.upload(AcceptanceTable::reject_all().thresholds())?,
            counts: main.alloc_zeros(1 + model.q() as usize)?,
            gpu: main,
            side,
            width: w,
            height: model.height(),
            q: model.q(),
            rows,
            storage,
            rule: None,
            update,
            update_unit,
            unit_launch_from,
            census,
            max_blocks,
        })
    }

    /// Updates launches of at least `units` bit-sliced units with one
    /// thread per unit, and smaller ones with a thread per row (by default
    /// from as many units as the device has resident threads). The bits are
    /// the same either way: for tests, and for timing the two.
    pub fn with_unit_threads_from(mut self, units: u64) -> Self {
        self.unit_launch_from = units;
        self
    }

    /// The device the strip runs on.
    pub fn gpu(&self) -> &Gpu {
        &self.gpu
    }

    /// The strip's row-blocks, the last one short where the height is not
    /// a multiple of 8.
    fn blocks(&self) -> u32 {
        self.rows.len().div_ceil(UNIT_ROWS) as u32
    }

    /// The colour arrays one byte per spin, halo rows included (after all
    /// work issued so far).
    fn byte_colours(&self) -> Result<[Vec<u8>; 2]> {
        let hw = self.width / 2;
        Ok(match &self.storage {
            Storage::Bytes(a) => [self.gpu.download(&a.colours[0])?, self.gpu.download(&a.colours[1])?],
            Storage::Planes { arrays: a, planes } => [
                unpack_planes(&self.gpu.download(&a.colours[0])?, hw, *planes),
                unpack_planes(&self.gpu.download(&a.colours[1])?, hw, *planes),
            ],
        })
    }

    /// One half-sweep: edges, their rows to the host, the interior on the
    /// side stream during the exchange, the halo rows back.
    fn half_sweep(&mut self, at: HalfSweep, trade: &mut Trade<'_>) -> Result<()> {
        let blocks = self.blocks();
        let n = self.rows.len();
        let edges =
            if blocks > 1 { Blocks { b0: 0, step: blocks - 1, count: 2 } } else { Blocks { b0: 0, step: 1, count: 1 } };
        let interior = Blocks { b0: 1, step: 1, count: blocks.saturating_sub(2) };
        let first_block = (self.rows.start / UNIT_ROWS) as u64;
        let (gpu, side) = (&self.gpu, &self.side);
        // The side stream starts where the main stream is now: after the
        // previous half-sweep's halo rows arrived.
        side.wait_for(gpu)?;
        match &mut self.storage {
            Storage::Bytes(a) => {
                let hw = self.width / 2;
                let per_row = units_per_row(hw) as u32;
                let launch = |on: &Gpu, mine: &mut DeviceBuffer<u8>, other: &DeviceBuffer<u8>, b: Blocks| {
                    let units = b.count as u64 * per_row as u64;
                    if units == 0 {
                        return Ok(());
                    }
                    let cfg = grid_stride(units, self.max_blocks);
                    let (hw32, n32, first_unit) = (hw as u32, n as u32, first_block * per_row as u64);
                    // SAFETY: potts_strip_generic(u8* mine, const u8* other, u32 hw, u32 n, u32 q,
                    // u64 seed, u64 stream, u64 sweep, u32 colour, const u64* table, u32 units_per_row,
                    // u64 first_unit, u32 b0, u32 step, u64 units): both arrays hold (n + 2)·hw bytes;
                    // the launch's row-blocks b0 + i·step (i < count) are the strip's, so its units
                    // touch rows 0 … n + 1 only (rows clipped to n); the table holds TABLE_LEN entries.
                    unsafe {
                        on.launch(&self.update)
                            .buf_mut(mine)
                            .buf(other)
                            .arg(&hw32)
                            .arg(&n32)
                            .arg(&self.q)
                            .arg(&at.seed)
                            .arg(&at.stream)
                            .arg(&at.sweep)
                            .arg(&at.colour)
                            .buf(&self.table)
                            .arg(&per_row)
                            .arg(&first_unit)
                            .arg(&b.b0)
                            .arg(&b.step)
                            .arg(&units)
                            .run(cfg)
                    }
                };
                overlapped(gpu, side, a, at.colour, n, edges, interior, &launch, trade)
            }
            Storage::Planes { arrays: a, .. } => {
                let Some(rule) = self.rule else {
                    return Err(PottsError::InvalidInput("the strip has no acceptance table yet".into()));
                };
                let wr = words_per_row(self.width) as u32;
                let [t0, t1, t2, t3] = rule.thresholds();
                let launch = |on: &Gpu, mine: &mut DeviceBuffer<u32>, other: &DeviceBuffer<u32>, b: Blocks| {
                    let units = b.count as u64 * wr as u64;
                    if units == 0 {
                        return Ok(());
                    }
                    // Eight threads (rows) per unit, in groups of 32 units;
                    // or one per unit.
                    let (kernel, threads) = match &self.update_unit {
                        Some(k) if units >= self.unit_launch_from => (k, units),
                        _ => (&self.update, UNIT_ROWS as u64 * units.div_ceil(32) * 32),
                    };
                    let cfg = LaunchConfig {
                        grid_dim: (threads.div_ceil(BLOCK as u64) as u32, 1, 1),
                        block_dim: (BLOCK, 1, 1),
                        shared_mem_bytes: 0,
                    };
                    let first_unit = first_block * wr as u64;
                    // SAFETY: potts_strip_sliced and potts_strip_sliced_unit(u32* mine, const u32*
                    // other, u32 wr, u64 seed, u64 stream, u64 sweep, u32 colour, int sigma, u32
                    // th0..th3, u64 first_unit, u32 b0, u32 step, u64 units): both arrays hold
                    // (n + 2)·wr·P words for the P the module was compiled with; the strip's rows are
                    // whole row-blocks under this rule, the launch's row-blocks are the strip's, so
                    // its rows lie in 0 … n + 1; threads past `units` return.
                    unsafe {
                        on.launch(kernel)
                            .buf_mut(mine)
                            .buf(other)
                            .arg(&wr)
                            .arg(&at.seed)
                            .arg(&at.stream)
                            .arg(&at.sweep)
                            .arg(&at.colour)
                            .arg(&rule.sigma())
                            .arg(&t0)
                            .arg(&t1)
                            .arg(&t2)
                            .arg(&t3)
                            .arg(&first_unit)
                            .arg(&b.b0)
                            .arg(&b.step)
                            .arg(&units)
                            .run(cfg)
                    }
                };
                overlapped(gpu, side, a, at.colour, n, edges, interior, &launch, trade)
            }
        }
    }
}

impl Drop for CudaStripBackend {
    fn drop(&mut self) {
        // The buffers are freed on the main stream: after the side stream's
        // work too, even when a half-sweep ended early with an error.
        let _ = self.gpu.wait_for(&self.side);
    }
}

/// A grid-stride launch over `work` items with at most `max_blocks` blocks.
fn grid_stride(work: u64, max_blocks: u32) -> LaunchConfig {
    let blocks = work.div_ceil(BLOCK as u64).clamp(1, max_blocks as u64);
    LaunchConfig { grid_dim: (blocks as u32, 1, 1), block_dim: (BLOCK, 1, 1), shared_mem_bytes: 0 }
}

/// The launch of one colour's update over some row-blocks, on a stream.
type Launcher<'a, T> = dyn Fn(&Gpu, &mut DeviceBuffer<T>, &DeviceBuffer<T>, Blocks) -> warpmc_gpu::Result<()> + 'a;

/// One half-sweep of colour `colour` of a strip of `n` rows (see the
/// module's documentation): `launch` queues an update of some row-blocks.
#[allow(clippy::too_many_arguments)]
fn overlapped<T: Word + DeviceRepr + ValidAsZeroBits + NcclType>(
    gpu: &Gpu,
    side: &Gpu,
    a: &mut Arrays<T>,
    colour: u32,
    n: usize,
    edges: Blocks,
    interior: Blocks,
    launch: &Launcher<'_, T>,
    trade: &mut Trade<'_>,
) -> Result<()> {
    let row_len = a.row_len;
    let [c0, c1] = &mut a.colours;
    let (mine, other) = if colour == 0 { (c0, &*c1) } else { (c1, &*c0) };
    launch(gpu, mine, other, edges)?;
    let exchange = match trade {
        Trade::Host(exchange) => exchange,
        Trade::Nccl { comm, up, down } => {
            // The trade is queued before the interior, so that its kernel
            // finds room on the GPU before the interior's blocks fill it.
            // Between two strips (each the other's neighbour on both sides)
            // and for a lone strip, the sends and receives of one pair of
            // ranks match in the order queued: the last row first, then the
            // first, and the upper halo before the lower.
            nccl_trade(comm, gpu, mine, n, row_len, (*up, *down))?;
            // The interior beside the trade; the rows it reads and writes
            // are neither the edge rows sent nor the halo rows received.
            launch(side, mine, other, interior)?;
            gpu.wait_for(side)?;
            return Ok(());
        }
    };
    // Strip row j is array row j + 1.
    gpu.copy_to_pinned(mine, row_len, &mut a.send_up)?;
    gpu.copy_to_pinned(mine, n * row_len, &mut a.send_down)?;
    // The interior touches neither the edge rows nor the halo rows.
    launch(side, mine, other, interior)?;
    let halo = Halo {
        send_up: as_bytes(a.send_up.as_slice()?),
        send_down: as_bytes(a.send_down.as_slice()?),
        from_up: as_bytes_mut(a.from_up.as_mut_slice()?),
        from_down: as_bytes_mut(a.from_down.as_mut_slice()?),
    };
    // The interior is already queued on the GPU: nothing to run here.
    exchange.exchange(halo, &mut || {})?;
    gpu.copy_from_pinned(&a.from_up, mine, 0)?;
    gpu.copy_from_pinned(&a.from_down, mine, (n + 1) * row_len)?;
    // The next half-sweep reads the interior this one wrote.
    gpu.wait_for(side)?;
    Ok(())
}

/// Queues on `gpu`'s stream the trade of one colour array's edge rows
/// (strip rows 0 and n − 1, array rows 1 and n) for its halo rows (array
/// rows 0 and n + 1) with the ranks `(up, down)` of `comm`.
fn nccl_trade<T: NcclType>(
    comm: &Communicator,
    gpu: &Gpu,
    colour: &mut DeviceBuffer<T>,
    n: usize,
    row_len: usize,
    (up, down): (usize, usize),
) -> Result<()> {
    Ok(comm.library().group(|| {
        comm.send(gpu, colour, n * row_len..(n + 1) * row_len, down)?;
        comm.send(gpu, colour, row_len..2 * row_len, up)?;
        comm.recv(gpu, colour, 0..row_len, up)?;
        comm.recv(gpu, colour, (n + 1) * row_len..(n + 2) * row_len, down)
    })?)
}

impl Strip for CudaStripBackend {
    fn name(&self) -> &'static str {
        "cuda"
    }

    fn description(&self) -> String {
        let i = self.gpu.info();
        let storage = match self.storage {
            Storage::Bytes(_) => "a byte per spin".to_string(),
            Storage::Planes { planes, .. } => {
                format!("{planes} bit plane{}, bit-sliced", if planes == 1 { "" } else { "s" })
            }
        };
        format!(
            "{} (device {}, sm_{}{}), {storage}, edge rows sent during the interior update",
            i.name, i.ordinal, i.compute_capability.0, i.compute_capability.1
        )
    }

    fn rows(&self) -> Range<usize> {
        self.rows.clone()
    }

    fn load(&mut self, lattice: &Lattice) -> Result<()> {
        check_lattice(lattice, self.width, self.height, self.q)?;
        let [c0, c1] = stored_colours(lattice, &self.rows);
        match &mut self.storage {
            Storage::Bytes(a) => {
                self.gpu.copy_to_device(&c0, &mut a.colours[0])?;
                self.gpu.copy_to_device(&c1, &mut a.colours[1])?;
            }
            Storage::Planes { arrays: a, planes } => {
                let hw = self.width / 2;
                self.gpu.copy_to_device(&pack_planes(&c0, hw, *planes), &mut a.colours[0])?;
                self.gpu.copy_to_device(&pack_planes(&c1, hw, *planes), &mut a.colours[1])?;
            }
        }
        Ok(())
    }

    fn spins(&mut self) -> Result<Vec<u8>> {
        Ok(strip_spins(&self.byte_colours()?, &self.rows, self.width))
    }

    fn set_table(&mut self, table: &AcceptanceTable) -> Result<()> {
        match self.storage {
            Storage::Planes { .. } => self.rule = Some(SlicedRule::new(self.q, table)?),
            // Queued behind the sweeps already issued, which read the old table.
            Storage::Bytes(_) => self.gpu.copy_to_device(table.thresholds(), &mut self.table)?,
        }
        Ok(())
    }

    fn sweeps(
        &mut self,
        seed: u64,
        stream: u64,
        first: u64,
        count: u64,
        exchange: &mut dyn HaloExchange,
    ) -> Result<()> {
        self.sweeps_with(seed, stream, first, count, &mut Trade::Host(exchange))
    }

    fn census(&mut self) -> Result<Census> {
        self.count_census()?;
        let out = self.gpu.download(&self.counts)?;
        Ok(Census::new(out[0], out[1..].to_vec()))
    }
}

impl CudaStripBackend {
    fn sweeps_with(&mut self, seed: u64, stream: u64, first: u64, count: u64, trade: &mut Trade<'_>) -> Result<()> {
        crate::backend::check_sweep_range(first, count)?;
        for sweep in first..first + count {
            for colour in 0..2 {
                self.half_sweep(HalfSweep { seed, stream, sweep, colour }, trade)?;
            }
        }
        Ok(())
    }

    /// [`Strip::sweeps`] with the edge rows traded device to device through
    /// `comm`, whose ranks `(up, down)` hold the strips above and below
    /// (this strip's own rank for a lone strip). Every rank must make the
    /// same call; the work is queued, and the call returns without waiting
    /// for it. A rank that stops making the calls (it failed, or died)
    /// leaves the others' queued receives waiting: later waits on this
    /// strip's stream do not return, and the program must end the others
    /// (warpmc's MPI runs abort every process on a failure mid-run), or
    /// poll [`Communicator::async_error`] instead of waiting.
    pub fn sweeps_nccl(
        &mut self,
        seed: u64,
        stream: u64,
        first: u64,
        count: u64,
        comm: &Communicator,
        (up, down): (usize, usize),
    ) -> Result<()> {
        self.sweeps_with(seed, stream, first, count, &mut Trade::Nccl { comm, up, down })
    }

    /// Makes NCCL's connections to the strips above and below and those of
    /// the census's all-reduce, and waits for them: NCCL makes them at the
    /// first operation, which takes a fraction of a second that would
    /// otherwise fall into the first sweeps. Trades both colours' edge rows
    /// once (a halo row receives the neighbour's edge row, as after every
    /// half-sweep, so a loaded strip is unchanged). Every rank must make the
    /// same call.
    pub fn connect_nccl(&mut self, comm: &Communicator, neighbours: (usize, usize)) -> Result<()> {
        let n = self.rows.len();
        match &mut self.storage {
            Storage::Bytes(a) => {
                for c in &mut a.colours {
                    nccl_trade(comm, &self.gpu, c, n, a.row_len, neighbours)?;
                }
            }
            Storage::Planes { arrays: a, .. } => {
                for c in &mut a.colours {
                    nccl_trade(comm, &self.gpu, c, n, a.row_len, neighbours)?;
                }
            }
        }
        self.count_census()?;
        comm.all_reduce_sum(&self.gpu, &mut self.counts)?;
        self.gpu.synchronize()?;
        comm.async_error()?;
        Ok(())
    }

    /// The whole lattice's census: this strip's part summed over the ranks
    /// of `comm` (one strip each) by an NCCL all-reduce. Every rank must
    /// make the same call.
    pub fn census_nccl(&mut self, comm: &Communicator) -> Result<Census> {
        self.count_census()?;
        comm.all_reduce_sum(&self.gpu, &mut self.counts)?;
        let out = self.gpu.download(&self.counts)?;
        Ok(Census::new(out[0], out[1..].to_vec()))
    }

    /// Queues the strip's census into `counts`.
    fn count_census(&mut self) -> Result<()> {
        self.gpu.memset_bytes(&mut self.counts, 0)?;
        let n = self.rows.len() as u32;
        match &self.storage {
            Storage::Bytes(a) => {
                let hw = (self.width / 2) as u32;
                let cfg = grid_stride(hw as u64 * n as u64, self.max_blocks);
                // SAFETY: potts_strip_generic_census(const u8*, const u8*, u32 hw, u32 n, u32 q,
                // u64* out): both arrays hold (n + 2)·hw bytes, spins are < q, and out holds
                // 1 + q counters.
                unsafe {
                    self.gpu
                        .launch(&self.census)
                        .buf(&a.colours[0])
                        .buf(&a.colours[1])
                        .arg(&hw)
                        .arg(&n)
                        .arg(&self.q)
                        .buf_mut(&mut self.counts)
                        .run(cfg)?;
                }
            }
            Storage::Planes { arrays: a, .. } => {
                let wr = words_per_row(self.width) as u32;
                let cfg = grid_stride(wr as u64 * n as u64, self.max_blocks);
                // SAFETY: potts_strip_sliced_census(const u32*, const u32*, u32 wr, u32 n, u64* out):
                // both arrays hold (n + 2)·wr·P words; the module was compiled with POTTS_Q = q
                // (≤ 16 under this rule), so it writes out[0..=q], which holds 1 + q counters.
                unsafe {
                    self.gpu
                        .launch(&self.census)
                        .buf(&a.colours[0])
                        .buf(&a.colours[1])
                        .arg(&wr)
                        .arg(&n)
                        .buf_mut(&mut self.counts)
                        .run(cfg)?;
                }
            }
        }
        Ok(())
    }
}
