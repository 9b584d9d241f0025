//! The CUDA backend: the lattice lives on the device; only the q + 1 census
//! integers come back per measurement.

use warpmc_gpu::{DeviceBuffer, Gpu, Graph, Kernel, KernelSource, LaunchConfig, Module};

use crate::algorithm::{AcceptanceTable, MWC_MULTIPLIER, TABLE_LEN, UNIT_ROWS, units_per_row};
use crate::backend::Backend;
use crate::error::{PottsError, Result};
use crate::heat_bath::TABLE_WORDS;
use crate::lattice::{Census, Lattice};
use crate::layout::{join, pack_planes, split, unpack_planes};
use crate::model::PottsModel;
use crate::sliced::{SlicedRule, planes, words_per_row};
use crate::update::{Algorithm, Update};

/// The kernels of this crate, for NVRTC; the sliced kernels are compiled for
/// one q at a time. Every constant the kernels share with this crate is
/// passed here, so the two cannot drift apart.
pub fn kernel_source(q: u32) -> KernelSource {
    KernelSource::new("potts.cu", include_str!("../kernels/potts.cu"))
        .header(warpmc_rng::CUDA_HEADER_NAME, warpmc_rng::CUDA_HEADER)
        .option(format!("-DPOTTS_Q={}", q.min(crate::sliced::MAX_Q)))
        .option(format!("-DPOTTS_TABLE_LEN={TABLE_LEN}"))
        .option(format!("-DPOTTS_UNIT_ROWS={UNIT_ROWS}"))
        .option(format!("-DPOTTS_UNIT_COLS={}", crate::algorithm::UNIT_COLS))
        .option(format!("-DPOTTS_MWC_A={MWC_MULTIPLIER}u"))
        .option(format!("-DPOTTS_HB_ENTRIES={}", crate::heat_bath::ENTRIES))
}

/// Bytes of device memory a lattice of `sites` sites needs (the two colour
/// arrays at one byte per spin — the bit planes need less — the tables
/// and the census counters).
pub fn device_bytes(sites: usize) -> u64 {
    sites as u64 + (TABLE_LEN as u64 + TABLE_WORDS as u64 + 257) * 8
}

/// Fails with [`PottsError::OutOfDeviceMemory`] unless `bytes` fit in the
/// device's free memory.
pub fn check_fits(gpu: &Gpu, bytes: u64) -> Result<()> {
    let memory = gpu.memory_info()?;
    if bytes > memory.free {
        return Err(PottsError::OutOfDeviceMemory { needed: bytes, free: memory.free, total: memory.total });
    }
    Ok(())
}

/// How the CUDA backend stores and updates spins. The random-number rule
/// follows: [`CudaKernel::Generic`] runs the one-word-per-site rule, the
/// sliced kernels the bit-sliced rule ([`crate::sliced`]); each gives the
/// same states as the CPU backend under the same rule.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CudaKernel {
    /// The model's own rule ([`Scheme::for_model`](crate::algorithm::Scheme::for_model))
    /// with the fastest kernel for it: sliced (split on lattices too small
    /// to fill the GPU) where the bit-sliced rule fits, else generic.
    Auto,
    /// One byte per spin, one word per site: any q, any even lattice, a field.
    Generic,
    /// Bit planes, the bit-sliced rule: q ≤ 16, width a multiple of 64,
    /// height a multiple of 8, no field; one thread per unit (a word column
    /// of 8 rows).
    Sliced,
    /// As [`CudaKernel::Sliced`] with two threads per unit (four rows and
    /// one Philox block each): for lattices too small to fill the GPU.
    SlicedSplit,
    /// As [`CudaKernel::Sliced`] with four threads per unit (two rows each):
    /// for still smaller lattices.
    SlicedSplit4,
    /// As [`CudaKernel::Sliced`] with eight threads per unit (one row each).
    SlicedSplit8,
    /// The eight-threads-per-unit update with all sweeps of a call in one
    /// cooperative launch, each block waiting only for the blocks next to
    /// it between colours: for lattices whose threads all fit on the GPU at
    /// once, where two kernel launches per sweep would cost more than the
    /// sweep.
    SlicedResident,
}

impl CudaKernel {
    /// Whether `model` fits this kernel ([`CudaKernel::Auto`] always does).
    pub fn fits(self, model: &PottsModel) -> bool {
        match self {
            CudaKernel::Auto | CudaKernel::Generic => true,
            CudaKernel::Sliced
            | CudaKernel::SlicedSplit
            | CudaKernel::SlicedSplit4
            | CudaKernel::SlicedSplit8
            | CudaKernel::SlicedResident => crate::sliced::fits(model),
        }
    }
}

#[derive(Debug)]
enum Storage {
    /// One byte per spin: Metropolis (the backend's `update` kernel and
    /// `table`) or heat-bath (`heat_bath` and its table of TABLE_WORDS),
    /// whichever the last table set asks for.
    Generic {
        colours: [DeviceBuffer<u8>; 2],
        heat_bath: Kernel,
        heat_bath_table: DeviceBuffer<u64>,
        heat_bath_on: bool,
    },
    /// `split`: threads per unit (1, 2, 4 or 8); `resident`: one
    /// cooperative launch per call (split 8).
    Sliced { colours: [DeviceBuffer<u32>; 2], split: u32, planes: usize, resident: bool },
}

/// A lattice on a CUDA device.
#[derive(Debug)]
pub struct CudaBackend {
    gpu: Gpu,
    width: usize,
    height: usize,
    q: u32,
    storage: Storage,
    table: DeviceBuffer<u64>,
    /// The sliced kernels' rule (arguments, not memory).
    rule: SlicedRule,
    /// The sliced kernels read their sweep number as this plus an offset.
    sweep_base: DeviceBuffer<u64>,
    advance: Kernel,
    /// A recorded graph of [`GRAPH_SWEEPS`] sweeps, and what it captured.
    graph: Option<(GraphKey, Graph)>,
    /// Counts set_table calls (a recorded graph holds the rule's arguments).
    table_version: u64,
    counts: DeviceBuffer<u64>,
    /// The resident kernel's per-block progress flags.
    flags: DeviceBuffer<u32>,
    update: Kernel,
    census: Kernel,
    max_blocks: u32,
}

/// Threads per block of the update kernels.
const BLOCK: u32 = 128;

/// A grid-stride launch over `work` items with at most `max_blocks` blocks.
fn grid_stride(work: u64, max_blocks: u32) -> LaunchConfig {
    let blocks = work.div_ceil(BLOCK as u64).clamp(1, max_blocks as u64);
    LaunchConfig { grid_dim: (blocks as u32, 1, 1), block_dim: (BLOCK, 1, 1), shared_mem_bytes: 0 }
}

/// Sweeps recorded in one CUDA graph: small lattices take a few µs per
/// sweep, less than launching its two kernels one by one from the host.
const GRAPH_SWEEPS: u64 = 64;

/// The arguments of the sliced update kernels that do not change between
/// the sweeps of one call.
struct SlicedSweep<'a> {
    gpu: &'a Gpu,
    update: &'a Kernel,
    sweep_base: &'a DeviceBuffer<u64>,
    cfg: LaunchConfig,
    wr: u32,
    h: u32,
    seed: u64,
    stream: u64,
    units: u64,
    rule: SlicedRule,
}

impl SlicedSweep<'_> {
    /// Queues both colours of sweep `*sweep_base + add`.
    fn sweep(&self, bufs: &mut [DeviceBuffer<u32>; 2], add: u64) -> warpmc_gpu::Result<()> {
        let [t0, t1, t2, t3] = self.rule.thresholds();
        for colour in 0u32..2 {
            let (a, b) = bufs.split_at_mut(1);
            let (mine, other) = if colour == 0 { (&mut a[0], &b[0]) } else { (&mut b[0], &a[0]) };
            // SAFETY: potts_sliced_colour[_split](u32*, const u32*, u32 wr, u32 h, u64 seed,
            // u64 stream, const u64* sweep_base, u64 add, u32 colour, int sigma, u32 th0..th3,
            // u64 units); both arrays hold wr·h·P words for the P the module was compiled with,
            // h is a multiple of 8, units = wr·h/8 and threads past it return; sweep_base holds
            // one entry.
            unsafe {
                self.gpu
                    .launch(self.update)
                    .buf_mut(mine)
                    .buf(other)
                    .arg(&self.wr)
                    .arg(&self.h)
                    .arg(&self.seed)
                    .arg(&self.stream)
                    .buf(self.sweep_base)
                    .arg(&add)
                    .arg(&colour)
                    .arg(&self.rule.sigma())
                    .arg(&t0)
                    .arg(&t1)
                    .arg(&t2)
                    .arg(&t3)
                    .arg(&self.units)
                    .run(self.cfg)?
            }
        }
        Ok(())
    }
}

impl CudaBackend {
    /// A backend for `model` on `gpu`, holding the ordered state, with the
    /// fastest kernel for the model's own rule.
    pub fn new(gpu: Gpu, model: &PottsModel) -> Result<Self> {
        Self::with_kernel(gpu, model, CudaKernel::Auto)
    }

    /// A backend for `model` running `algorithm` on `gpu`: Metropolis with
    /// the fastest kernel, heat-bath on the generic (byte-per-spin) storage.
    /// Swendsen–Wang and Wolff have their own backends
    /// ([`open_backend_for`](crate::open_backend_for)).
    pub fn for_algorithm(gpu: Gpu, model: &PottsModel, algorithm: Algorithm) -> Result<Self> {
        algorithm.check(model)?;
        match algorithm {
            Algorithm::Metropolis => Self::new(gpu, model),
            Algorithm::HeatBath => {
                let mut b = Self::with_kernel(gpu, model, CudaKernel::Generic)?;
                b.set_update(&Update::new(algorithm, model, 1.0)?)?;
                Ok(b)
            }
            other => Err(PottsError::InvalidInput(format!("the CUDA backend does not run {other}"))),
        }
    }

    /// A backend using `kernel` (an error if the model does not fit it).
    pub fn with_kernel(gpu: Gpu, model: &PottsModel, kernel: CudaKernel) -> Result<Self> {
        check_fits(&gpu, device_bytes(model.sites()))?;
        let module = gpu.module(&kernel_source(model.q()))?;
        let kernel = choose_kernel(&gpu, &module, model, kernel)?;
        let units = model.sites() / 2 / (UNIT_ROWS * 32);
        let n = model.sites() / 2;
        let (storage, update, census) = match kernel {
            CudaKernel::Sliced
            | CudaKernel::SlicedSplit
            | CudaKernel::SlicedSplit4
            | CudaKernel::SlicedSplit8
            | CudaKernel::SlicedResident => {
                let planes = planes(model.q());
                let words = n / 32 * planes;
                let (split, name) = match kernel {
                    CudaKernel::Sliced => (1, "potts_sliced_colour"),
                    CudaKernel::SlicedSplit => (2, "potts_sliced_colour_split"),
                    CudaKernel::SlicedSplit4 => (4, "potts_sliced_colour_split4"),
                    CudaKernel::SlicedSplit8 => (8, "potts_sliced_colour_split8"),
                    _ => (8, "potts_sliced_resident"),
                };
                let resident = kernel == CudaKernel::SlicedResident;
                (
                    Storage::Sliced {
                        colours: [gpu.alloc_zeros::<u32>(words)?, gpu.alloc_zeros::<u32>(words)?],
                        split,
                        planes,
                        resident,
                    },
                    module.kernel(name)?,
                    module.kernel("potts_sliced_census")?,
                )
            }
            _ => (
                Storage::Generic {
                    colours: [gpu.alloc_zeros::<u8>(n)?, gpu.alloc_zeros::<u8>(n)?],
                    heat_bath: module.kernel("potts_heat_bath_colour")?,
                    heat_bath_table: gpu.alloc_zeros::<u64>(TABLE_WORDS)?,
                    heat_bath_on: false,
                },
                module.kernel("potts_generic_colour")?,
                module.kernel("potts_generic_census")?,
            ),
        };
        let table = gpu.alloc_zeros::<u64>(TABLE_LEN)?;
        let sweep_base = gpu.alloc_zeros::<u64>(1)?;
        let counts = gpu.alloc_zeros::<u64>(1 + model.q() as usize)?;
        let flags =
            gpu.alloc_zeros::<u32>(if kernel == CudaKernel::SlicedResident { 2 * units.div_ceil(32) } else { 1 })?;
        let max_blocks = gpu.info().sm_count * (gpu.info().max_threads_per_sm / BLOCK).max(1) * 4;
        Ok(CudaBackend {
            update,
            census,
            gpu,
            width: model.width(),
            height: model.height(),
            q: model.q(),
            storage,
            table,
            rule: SlicedRule::accept_all(model.q()),
            sweep_base,
            advance: module.kernel("potts_advance")?,
            graph: None,
            table_version: 0,
            counts,
            flags,
            max_blocks,
        })
    }

    /// The device this backend runs on.
    pub fn gpu(&self) -> &Gpu {
        &self.gpu
    }

    /// The kernel in use: "generic", "heat-bath", "sliced", "sliced-split",
    /// "sliced-split4", "sliced-split8" or "sliced-resident".
    pub fn kernel_name(&self) -> &'static str {
        match self.storage {
            Storage::Generic { heat_bath_on: true, .. } => "heat-bath",
            Storage::Generic { .. } => "generic",
            Storage::Sliced { resident: true, .. } => "sliced-resident",
            Storage::Sliced { split: 1, .. } => "sliced",
            Storage::Sliced { split: 2, .. } => "sliced-split",
            Storage::Sliced { split: 4, .. } => "sliced-split4",
            Storage::Sliced { .. } => "sliced-split8",
        }
    }

    /// Bytes one spin occupies in the storage in use.
    pub fn bytes_per_spin(&self) -> f64 {
        match self.storage {
            Storage::Generic { .. } => 1.0,
            Storage::Sliced { planes, .. } => planes as f64 / 8.0,
        }
    }
}

/// The kernel a backend for `model` runs when `requested` is asked for:
/// for [`CudaKernel::Auto`] one thread per unit, or as few more per unit
/// (2 or 4) as give the GPU one full wave of resident threads, then the
/// resident kernel when all its threads (eight per unit) fit on the GPU at
/// once, else eight threads per unit; the generic kernel where the
/// bit-sliced rule does not fit. An explicit kernel is checked against the
/// model and the GPU.
fn choose_kernel(gpu: &Gpu, module: &Module, model: &PottsModel, requested: CudaKernel) -> Result<CudaKernel> {
    let info = gpu.info();
    let wave = (info.sm_count * info.max_threads_per_sm) as usize;
    let units = model.sites() / 2 / (UNIT_ROWS * 32);
    let resident_fits = info.cooperative_launch && {
        let per_sm = module.kernel("potts_sliced_resident")?.max_resident_blocks_per_sm(BLOCK)?;
        (8 * units).div_ceil(BLOCK as usize) <= (per_sm * info.sm_count) as usize
    };
    let sliced = crate::sliced::fits(model);
    Ok(match requested {
        CudaKernel::Auto if sliced && units >= wave => CudaKernel::Sliced,
        CudaKernel::Auto if sliced && 2 * units >= wave => CudaKernel::SlicedSplit,
        CudaKernel::Auto if sliced && 4 * units >= wave => CudaKernel::SlicedSplit4,
        CudaKernel::Auto if sliced && resident_fits => CudaKernel::SlicedResident,
        CudaKernel::Auto if sliced => CudaKernel::SlicedSplit8,
        CudaKernel::Auto => CudaKernel::Generic,
        CudaKernel::SlicedResident if !resident_fits => {
            return Err(PottsError::InvalidInput(format!(
                "the resident kernel needs cooperative launches and all {} of its threads on the GPU at once; \
                 this GPU gives neither or holds fewer",
                8 * units
            )));
        }
        k if k.fits(model) => k,
        k => {
            return Err(PottsError::InvalidInput(format!(
                "the {k:?} kernel cannot run q={} {}x{} h={}: the bit-sliced kernels need q <= 16, \
                 width a multiple of 64, height a multiple of 8 and no field",
                model.q(),
                model.width(),
                model.height(),
                model.field()
            )));
        }
    })
}

/// Which sweeps of which chain a call runs.
#[derive(Clone, Copy, Debug)]
struct SweepRange {
    seed: u64,
    stream: u64,
    /// The first sweep's number.
    first: u64,
    count: u64,
}

/// What a recorded graph of sweeps depends on besides the buffers: the
/// chain, and the acceptance table it captured as kernel arguments.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct GraphKey {
    seed: u64,
    stream: u64,
    table_version: u64,
}

impl CudaBackend {
    /// The byte-per-spin kernels (Metropolis or heat-bath): two launches
    /// per sweep.
    fn sweeps_generic(&mut self, run: &SweepRange) -> Result<()> {
        let Storage::Generic { colours: bufs, heat_bath, heat_bath_table, heat_bath_on } = &mut self.storage else {
            return Err(wrong_storage("generic"));
        };
        let (kernel, table) =
            if *heat_bath_on { (&*heat_bath, &*heat_bath_table) } else { (&self.update, &self.table) };
        let hw = (self.width / 2) as u32;
        let h = self.height as u32;
        let per_row = units_per_row(hw as usize) as u32;
        let units = per_row as u64 * (h as u64).div_ceil(UNIT_ROWS as u64);
        let cfg = grid_stride(units, self.max_blocks);
        for sweep in run.first..run.first + run.count {
            for colour in 0u32..2 {
                let (a, b) = bufs.split_at_mut(1);
                let (mine, other) = if colour == 0 { (&mut a[0], &b[0]) } else { (&mut b[0], &a[0]) };
                // SAFETY: potts_generic_colour and potts_heat_bath_colour(u8*, const u8*,
                // u32 hw, u32 h, u32 q, u64 seed, u64 stream, u64 sweep, u32 colour,
                // const u64* table, u32 units_per_row, u64 units); both arrays hold hw·h
                // bytes, units cover them in 8×8 tiles clipped to the array, and the table
                // holds the kernel's TABLE_LEN or TABLE_WORDS entries.
                unsafe {
                    self.gpu
                        .launch(kernel)
                        .buf_mut(mine)
                        .buf(other)
                        .arg(&hw)
                        .arg(&h)
                        .arg(&self.q)
                        .arg(&run.seed)
                        .arg(&run.stream)
                        .arg(&sweep)
                        .arg(&colour)
                        .buf(table)
                        .arg(&per_row)
                        .arg(&units)
                        .run(cfg)?;
                }
            }
        }
        Ok(())
    }

    /// The resident bit-sliced kernel: every sweep of the call in one
    /// cooperative launch (in pieces of at most 2²⁴ sweeps, so the
    /// progress flags stay far below 2³²).
    fn sweeps_resident(&mut self, run: &SweepRange) -> Result<()> {
        let Storage::Sliced { colours: bufs, .. } = &mut self.storage else { return Err(wrong_storage("sliced")) };
        let SlicedLaunch { wr, h, units, cfg } = sliced_launch(self.width, self.height, 8);
        let [t0, t1, t2, t3] = self.rule.thresholds();
        let mut done = 0;
        while done < run.count {
            let n = (run.count - done).min(1 << 24) as u32;
            let sweep = run.first + done;
            self.gpu.memset_bytes(&mut self.flags, 0)?;
            let (a, b) = bufs.split_at_mut(1);
            // SAFETY: potts_sliced_resident(u32* c0, u32* c1, u32 wr, u32 h, u64 seed,
            // u64 stream, u64 first_sweep, u32 sweeps, int sigma, u32 th0..th3, u64 units,
            // u32* flags): both arrays hold wr·h·P words for the module's P, h is a
            // multiple of 8, threads past 4·units only wait and signal, flags holds one
            // zeroed entry per block (2·⌈units / 32⌉ blocks of 128 threads), and the
            // cooperative launch puts every block on the GPU at once (checked when the
            // backend was made: resident_fits), so the waits between blocks end.
            unsafe {
                self.gpu
                    .launch(&self.update)
                    .buf_mut(&mut a[0])
                    .buf_mut(&mut b[0])
                    .arg(&wr)
                    .arg(&h)
                    .arg(&run.seed)
                    .arg(&run.stream)
                    .arg(&sweep)
                    .arg(&n)
                    .arg(&self.rule.sigma())
                    .arg(&t0)
                    .arg(&t1)
                    .arg(&t2)
                    .arg(&t3)
                    .arg(&units)
                    .buf_mut(&mut self.flags)
                    .run_cooperative(cfg)?;
            }
            done += n as u64;
        }
        Ok(())
    }

    /// The bit-sliced kernels with 1, 2, 4 or 8 threads per unit: two
    /// launches per sweep, replayed from a recorded graph of
    /// [`GRAPH_SWEEPS`] sweeps where the call is long enough (the kernels
    /// read their sweep number from device memory, which the graph's last
    /// node advances).
    fn sweeps_sliced(&mut self, run: &SweepRange) -> Result<()> {
        let Storage::Sliced { colours: bufs, split, .. } = &mut self.storage else {
            return Err(wrong_storage("sliced"));
        };
        let SlicedLaunch { wr, h, units, cfg } = sliced_launch(self.width, self.height, *split);
        self.gpu.copy_to_device(&[run.first], &mut self.sweep_base)?;
        let job = SlicedSweep {
            gpu: &self.gpu,
            update: &self.update,
            sweep_base: &self.sweep_base,
            cfg,
            wr,
            h,
            seed: run.seed,
            stream: run.stream,
            units,
            rule: self.rule,
        };
        let mut done = 0;
        if run.count >= GRAPH_SWEEPS {
            let key = GraphKey { seed: run.seed, stream: run.stream, table_version: self.table_version };
            if self.graph.as_ref().is_none_or(|(k, _)| *k != key) {
                self.graph = None;
                let graph = self.gpu.capture(|| {
                    for add in 0..GRAPH_SWEEPS {
                        job.sweep(bufs, add)?;
                    }
                    // SAFETY: potts_advance(u64* base, u64 n) writes the one u64 of
                    // sweep_base, which no other node of the graph writes.
                    unsafe {
                        self.gpu.launch(&self.advance).buf(&self.sweep_base).arg(&GRAPH_SWEEPS).run(LaunchConfig {
                            grid_dim: (1, 1, 1),
                            block_dim: (32, 1, 1),
                            shared_mem_bytes: 0,
                        })
                    }
                })?;
                self.graph = Some((key, graph));
            }
            if let Some((_, graph)) = &self.graph {
                while run.count - done >= GRAPH_SWEEPS {
                    graph.launch()?;
                    done += GRAPH_SWEEPS;
                }
            }
        }
        // The rest one launch at a time, after the graph's advances.
        for add in 0..run.count - done {
            job.sweep(bufs, add)?;
        }
        Ok(())
    }
}

/// The shape of a bit-sliced launch.
struct SlicedLaunch {
    /// Words per row.
    wr: u32,
    /// Rows.
    h: u32,
    /// Units (word columns of 8 rows).
    units: u64,
    cfg: LaunchConfig,
}

/// The launch of a bit-sliced kernel with `split` threads per unit (thread
/// 32sm + 32p + l serves part p of unit 32m + l when split > 1).
fn sliced_launch(width: usize, height: usize, split: u32) -> SlicedLaunch {
    let wr = words_per_row(width) as u32;
    let h = height as u32;
    let units = wr as u64 * (h as u64 / UNIT_ROWS as u64);
    let threads = if split == 1 { units } else { split as u64 * units.div_ceil(32) * 32 };
    let blocks = threads.div_ceil(BLOCK as u64) as u32;
    let cfg = LaunchConfig { grid_dim: (blocks, 1, 1), block_dim: (BLOCK, 1, 1), shared_mem_bytes: 0 };
    SlicedLaunch { wr, h, units, cfg }
}

/// The error for a launch strategy called on the other storage (a bug in
/// this file, reported rather than panicked on).
fn wrong_storage(want: &str) -> PottsError {
    PottsError::InvalidInput(format!("internal error: a {want} launch on a backend with other storage"))
}

impl Backend for CudaBackend {
    fn name(&self) -> &'static str {
        "cuda"
    }

    fn description(&self) -> String {
        let i = self.gpu.info();
        format!(
            "{} (device {}, sm_{}{}, {} kernel)",
            i.name,
            i.ordinal,
            i.compute_capability.0,
            i.compute_capability.1,
            self.kernel_name()
        )
    }

    fn load(&mut self, lattice: &Lattice) -> Result<()> {
        if (lattice.width(), lattice.height(), lattice.q()) != (self.width, self.height, self.q) {
            return Err(PottsError::InvalidInput("lattice does not match the backend's model".into()));
        }
        let [c0, c1] = split(lattice);
        match &mut self.storage {
            Storage::Generic { colours: bufs, .. } => {
                self.gpu.copy_to_device(&c0, &mut bufs[0])?;
                self.gpu.copy_to_device(&c1, &mut bufs[1])?;
            }
            Storage::Sliced { colours: bufs, planes, .. } => {
                let hw = self.width / 2;
                self.gpu.copy_to_device(&pack_planes(&c0, hw, *planes), &mut bufs[0])?;
                self.gpu.copy_to_device(&pack_planes(&c1, hw, *planes), &mut bufs[1])?;
            }
        }
        Ok(())
    }

    fn lattice(&mut self) -> Result<Lattice> {
        let (c0, c1) = match &self.storage {
            Storage::Generic { colours: bufs, .. } => (self.gpu.download(&bufs[0])?, self.gpu.download(&bufs[1])?),
            Storage::Sliced { colours: bufs, planes, .. } => {
                let hw = self.width / 2;
                (
                    unpack_planes(&self.gpu.download(&bufs[0])?, hw, *planes),
                    unpack_planes(&self.gpu.download(&bufs[1])?, hw, *planes),
                )
            }
        };
        Ok(join(self.width, self.height, self.q, [&c0, &c1]))
    }

    fn set_table(&mut self, table: &AcceptanceTable) -> Result<()> {
        match &mut self.storage {
            Storage::Generic { heat_bath_on, .. } => {
                *heat_bath_on = false;
                self.gpu.copy_to_device(table.thresholds(), &mut self.table)?
            }
            Storage::Sliced { .. } => {
                self.rule = SlicedRule::new(self.q, table)?;
            }
        }
        self.table_version += 1;
        Ok(())
    }

    fn set_update(&mut self, update: &Update) -> Result<()> {
        match (update, &mut self.storage) {
            (Update::Metropolis(table), _) => self.set_table(table),
            (Update::HeatBath(table), Storage::Generic { heat_bath_on, heat_bath_table, .. }) => {
                *heat_bath_on = true;
                self.gpu.copy_to_device(&table.words(), heat_bath_table)?;
                self.table_version += 1;
                Ok(())
            }
            (other, _) => Err(PottsError::InvalidInput(format!(
                "this CUDA backend ({} kernel) cannot run {}; open it with CudaBackend::for_algorithm",
                self.kernel_name(),
                other.algorithm()
            ))),
        }
    }

    fn sweeps(&mut self, seed: u64, stream: u64, first: u64, count: u64) -> Result<()> {
        let run = SweepRange { seed, stream, first, count };
        match &self.storage {
            Storage::Generic { .. } => self.sweeps_generic(&run),
            Storage::Sliced { resident: true, .. } => self.sweeps_resident(&run),
            Storage::Sliced { .. } => self.sweeps_sliced(&run),
        }
    }

    fn census(&mut self) -> Result<Census> {
        self.gpu.memset_bytes(&mut self.counts, 0)?;
        let hw = (self.width / 2) as u32;
        let h = self.height as u32;
        match &self.storage {
            Storage::Generic { colours: bufs, .. } => {
                let cfg = grid_stride(hw as u64 * h as u64, self.max_blocks);
                // SAFETY: potts_generic_census(const u8*, const u8*, u32 hw, u32 h, u32 q, u64* out):
                // both arrays hold hw·h bytes; out holds 1 + q counters and spins are < q.
                unsafe {
                    self.gpu
                        .launch(&self.census)
                        .buf(&bufs[0])
                        .buf(&bufs[1])
                        .arg(&hw)
                        .arg(&h)
                        .arg(&self.q)
                        .buf_mut(&mut self.counts)
                        .run(cfg)?;
                }
            }
            Storage::Sliced { colours: bufs, .. } => {
                let wr = words_per_row(self.width) as u32;
                let cfg = grid_stride(wr as u64 * h as u64, self.max_blocks);
                // SAFETY: potts_sliced_census(const u32*, const u32*, u32 wr, u32 h, u64* out):
                // both arrays hold wr·h·P words; the module was compiled with POTTS_Q = q (≤ 16
                // here), so it writes out[0..=q], which holds 1 + q counters.
                unsafe {
                    self.gpu
                        .launch(&self.census)
                        .buf(&bufs[0])
                        .buf(&bufs[1])
                        .arg(&wr)
                        .arg(&h)
                        .buf_mut(&mut self.counts)
                        .run(cfg)?;
                }
            }
        }
        let out = self.gpu.download(&self.counts)?;
        Ok(Census::new(out[0], out[1..].to_vec()))
    }

    fn synchronize(&mut self) -> Result<()> {
        Ok(self.gpu.synchronize()?)
    }
}
