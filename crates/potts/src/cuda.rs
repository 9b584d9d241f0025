//! The CUDA backend: the lattice lives on the device; only the q + 1 census
//! integers come back per measurement.

use warpmc_gpu::{DeviceBuffer, Gpu, Graph, Kernel, KernelSource, LaunchConfig};

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
    with_potts_constants(KernelSource::new("potts.cu", include_str!("../kernels/potts.cu")), q)
}

/// Groups of the kernels in potts.cu that compile apart (`POTTS_KERNELS`):
/// a backend compiles only the groups it launches or asks the occupancy
/// of. NVRTC takes seconds for all of potts.cu (4.8 s at q = 9 on an H200
/// machine, BENCHMARKS.md) and a fifth of that for the tiled kernel alone,
/// which was most of a first run's start.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct KernelSet(u32);

impl KernelSet {
    /// None of potts.cu's kernels (a file that includes it for its device
    /// functions).
    pub(crate) const NONE: Self = Self(0);
    /// The byte-per-spin kernels: Metropolis, heat bath and their census.
    pub(crate) const GENERIC: Self = Self(1);
    /// The bit-plane kernels with one launch per colour (all four splits).
    pub(crate) const SLICED: Self = Self(1 << 1);
    /// [`CudaKernel::SlicedResident`].
    pub(crate) const RESIDENT: Self = Self(1 << 2);
    /// [`CudaKernel::SlicedTiled`].
    pub(crate) const TILED: Self = Self(1 << 3);
    /// [`CudaKernel::SlicedTiledInline`].
    pub(crate) const TILED_INLINE: Self = Self(1 << 4);
    /// The bit-plane census.
    pub(crate) const SLICED_CENSUS: Self = Self(1 << 5);
    /// The advance of a recorded graph's sweep base.
    pub(crate) const ADVANCE: Self = Self(1 << 6);
}

/// Every kernel of potts.cu and the group it compiles in.
const POTTS_KERNELS: [(&str, KernelSet); 12] = [
    ("potts_generic_colour", KernelSet::GENERIC),
    ("potts_heat_bath_colour", KernelSet::GENERIC),
    ("potts_generic_census", KernelSet::GENERIC),
    ("potts_sliced_colour", KernelSet::SLICED),
    ("potts_sliced_colour_split", KernelSet::SLICED),
    ("potts_sliced_colour_split4", KernelSet::SLICED),
    ("potts_sliced_colour_split8", KernelSet::SLICED),
    ("potts_sliced_resident", KernelSet::RESIDENT),
    ("potts_sliced_tiled", KernelSet::TILED),
    ("potts_sliced_tiled_inline", KernelSet::TILED_INLINE),
    ("potts_sliced_census", KernelSet::SLICED_CENSUS),
    ("potts_advance", KernelSet::ADVANCE),
];

/// `source` (potts.cu or a file that includes it) compiling only `set` of
/// potts.cu's kernels.
pub(crate) fn only(source: KernelSource, set: KernelSet) -> KernelSource {
    source.option(format!("-DPOTTS_KERNELS={}u", set.0))
}

/// potts.cu's kernel `name` for q, from a module of its group alone
/// (compiled once per process and group, and cached on disk).
fn potts_kernel(gpu: &Gpu, q: u32, name: &str) -> Result<Kernel> {
    let set = POTTS_KERNELS.iter().find(|(n, _)| *n == name).map_or(KernelSet::NONE, |&(_, set)| set);
    Ok(gpu.module(&only(kernel_source(q), set))?.kernel(name)?)
}

/// `source` (potts.cu or a file that includes it) with the rng header and
/// the -D options of every constant potts.cu shares with this crate.
pub(crate) fn with_potts_constants(source: KernelSource, q: u32) -> KernelSource {
    source
        .header(warpmc_rng::CUDA_HEADER_NAME, warpmc_rng::CUDA_HEADER)
        .option(format!("-DPOTTS_Q={}", q.min(crate::sliced::MAX_Q)))
        .option(format!("-DPOTTS_TABLE_LEN={TABLE_LEN}"))
        .option(format!("-DPOTTS_UNIT_ROWS={UNIT_ROWS}"))
        .option(format!("-DPOTTS_UNIT_COLS={}", crate::algorithm::UNIT_COLS))
        .option(format!("-DPOTTS_MWC_A={MWC_MULTIPLIER}u"))
        .option(format!("-DPOTTS_HB_ENTRIES={}", crate::heat_bath::ENTRIES))
        .option(format!("-DPOTTS_TILED_HALO={TILED_HALO}"))
        .option(format!("-DPOTTS_TILED_THREADS={TILED_THREADS}"))
        .option(format!("-DPOTTS_TILED_DRAWS={TILED_DRAWS}"))
        .option(format!("-DPOTTS_K_GENERIC={}u", KernelSet::GENERIC.0))
        .option(format!("-DPOTTS_K_SLICED={}u", KernelSet::SLICED.0))
        .option(format!("-DPOTTS_K_RESIDENT={}u", KernelSet::RESIDENT.0))
        .option(format!("-DPOTTS_K_TILED={}u", KernelSet::TILED.0))
        .option(format!("-DPOTTS_K_TILED_INLINE={}u", KernelSet::TILED_INLINE.0))
        .option(format!("-DPOTTS_K_SLICED_CENSUS={}u", KernelSet::SLICED_CENSUS.0))
        .option(format!("-DPOTTS_K_ADVANCE={}u", KernelSet::ADVANCE.0))
}

/// Halo rows of the tiled kernel: its blocks trade edge rows once every
/// this many colours (experiments/potts-tiled: on strips of 16 rows of 32
/// words, 4 beat 1, 2, 3, 6 and 8; on strips of 8 rows of 16 words, 4 and
/// 8 are within 2 % of each other).
pub const TILED_HALO: usize = 4;

/// Threads per block of the tiled kernels (one block per multiprocessor).
pub const TILED_THREADS: u32 = 1024;

/// The fewest words a colour step of a strip must update (rows × words per
/// row) for [`CudaKernel::Auto`] to pick the tiled kernel that trades edge
/// rows inside the update for q > 2: its edge words wait for the
/// neighbours' inside the step, which the other rows must cover. Measured
/// (NVIDIA H200, q = 9, `warpmc potts bench`): 512 words (2048², 16 rows
/// of 32) 1.42× the 4-halo-row kernel; 128 words (1024², 8 rows of 16) and
/// fewer 0.59–0.82×. For Ising (one plane, a shorter update) it was the
/// faster of the two at every size from 64² to 4096² (1.09–1.33×), and
/// Auto takes it whatever the size.
pub const TILED_INLINE_MIN_WORDS: usize = 512;

/// Acceptance words per row the tiled kernel draws ahead into shared
/// memory (4: more cost registers that 1024 threads do not have).
pub const TILED_DRAWS: usize = 4;

/// Most sweeps in one launch of the resident and tiled kernels.
const LAUNCH_SWEEPS: u64 = 1 << 24;

/// How the strips of a tiled kernel trade their edge rows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TiledExchange {
    /// [`TILED_HALO`] halo rows, updated by both neighbours, traded after
    /// every [`TILED_HALO`] colours (`potts_sliced_tiled`).
    Rounds,
    /// One halo row: each edge word takes the one neighbouring word it
    /// reads during the update (`potts_sliced_tiled_inline`).
    Inline,
}

impl TiledExchange {
    /// Halo rows on each side of a strip.
    pub fn halo(self) -> usize {
        match self {
            TiledExchange::Rounds => TILED_HALO,
            TiledExchange::Inline => 1,
        }
    }

    fn kernel_name(self) -> &'static str {
        match self {
            TiledExchange::Rounds => "potts_sliced_tiled",
            TiledExchange::Inline => "potts_sliced_tiled_inline",
        }
    }
}

/// How a tiled kernel cuts a lattice: `blocks` strips of `rows` rows,
/// one block per multiprocessor, each with `shared_bytes` of dynamic shared
/// memory (both colours of its rows and `halo` halo rows on each side, and
/// two colour steps' random words).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TiledPlan {
    /// How the strips trade edge rows.
    pub exchange: TiledExchange,
    /// Strips, one per block.
    pub blocks: u32,
    /// Rows per strip.
    pub rows: u32,
    /// Halo rows on each side ([`TiledExchange::halo`]).
    pub halo: u32,
    /// log2 of the words per row.
    pub wr_shift: u32,
    /// Dynamic shared memory per block, in bytes.
    pub shared_bytes: u32,
}

impl TiledPlan {
    /// The plan with the most strips (at most `max_blocks`) for `model`
    /// whose shared memory fits in `max_shared` bytes per block, or `None`
    /// where none does: the bit-sliced rule, a power of two of words per
    /// row, strips of an even number of rows, at least the halo.
    pub fn new(model: &PottsModel, exchange: TiledExchange, max_blocks: u32, max_shared: u64) -> Option<Self> {
        if !crate::sliced::fits(model) {
            return None;
        }
        let wr = words_per_row(model.width());
        if !wr.is_power_of_two() {
            return None;
        }
        let h = model.height();
        let planes = planes(model.q());
        let fields = crate::sliced::proposal_bits(model.q()) + TILED_DRAWS + 2;
        let plan = |blocks: usize, halo: usize| {
            let rows = h / blocks;
            let strip = rows + 2 * halo;
            let bytes = 4 * (2 * strip * planes * wr + 2 * fields * strip * wr) as u64;
            (h.is_multiple_of(blocks) && rows.is_multiple_of(2) && rows >= halo && bytes <= max_shared).then(|| {
                TiledPlan {
                    exchange,
                    blocks: blocks as u32,
                    rows: rows as u32,
                    halo: halo as u32,
                    wr_shift: wr.trailing_zeros(),
                    shared_bytes: bytes as u32,
                }
            })
        };
        (1..=(max_blocks as usize).min(h)).rev().find_map(|blocks| plan(blocks, exchange.halo()))
    }

    /// u32 of the buffer through which the strips trade edge rows, each u32
    /// beside its round's or step's tag (two u32): two rounds × blocks ×
    /// (2 sides × 2 colours) × `halo` rows (`exchange_tagged` in potts.cu),
    /// or two steps × blocks × 2 sides × one row (`tiled_sweeps_inline`).
    fn exchange_words(&self, planes: usize) -> usize {
        let row = planes << self.wr_shift;
        let rows = match self.exchange {
            TiledExchange::Rounds => 2 * 4 * self.halo as usize,
            TiledExchange::Inline => 2 * 2,
        };
        2 * self.blocks as usize * rows * row
    }

    /// Words a colour step of a strip updates.
    fn step_words(&self) -> usize {
        (self.rows as usize) << self.wr_shift
    }
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
    /// All sweeps of a call in one cooperative launch with the lattice in
    /// shared memory, one strip per multiprocessor ([`TiledPlan`]): each
    /// block also updates 4 halo rows above and below its strip, so that
    /// blocks trade edge rows (as words tagged with their round, which the
    /// neighbours poll) only every 4 colours, and draws the next colour's
    /// random words while it updates the current one. For lattices whose
    /// strips fit in shared memory and whose words per row are a power of
    /// two (the 2048² of Ferrero et al. 2012); [`CudaKernel::fits`] checks
    /// the shape, opening a backend the GPU's shared memory and
    /// multiprocessors.
    SlicedTiled,
    /// As [`CudaKernel::SlicedTiled`] with one halo row, traded inside the
    /// update: the threads of a strip's first and last rows take the one
    /// word of the neighbouring strip they read from the neighbour's tagged
    /// slot, update and publish theirs, while the rows between update
    /// beside them; one barrier per colour and no row updated twice. Faster
    /// for Ising, and where a colour step has enough words to cover the
    /// edge words' waits ([`TILED_INLINE_MIN_WORDS`]).
    SlicedTiledInline,
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
            CudaKernel::SlicedTiled => TiledPlan::new(model, TiledExchange::Rounds, u32::MAX, u64::MAX).is_some(),
            CudaKernel::SlicedTiledInline => TiledPlan::new(model, TiledExchange::Inline, u32::MAX, u64::MAX).is_some(),
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
    /// `split`: threads per unit (1, 2, 4 or 8); `launch`: how the sweeps
    /// of a call are launched.
    Sliced { colours: [DeviceBuffer<u32>; 2], split: u32, planes: usize, launch: SlicedLaunchKind },
}

/// How the bit-sliced sweeps of a call are launched.
#[derive(Debug)]
enum SlicedLaunchKind {
    /// Two launches per sweep (replayed from a recorded graph).
    PerColour,
    /// One cooperative launch of the resident kernel (split 8).
    Resident,
    /// One cooperative launch of a tiled kernel (the plan says which), and
    /// its edge-row buffer.
    Tiled(TiledPlan, DeviceBuffer<u32>),
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
    /// The resident and tiled kernels' per-block progress flags.
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
        let (kernel, tiled) = choose_kernel(&gpu, model, kernel)?;
        let potts = |name| potts_kernel(&gpu, model.q(), name);
        let units = model.sites() / 2 / (UNIT_ROWS * 32);
        let n = model.sites() / 2;
        let (storage, update, census) = match kernel {
            CudaKernel::Sliced
            | CudaKernel::SlicedSplit
            | CudaKernel::SlicedSplit4
            | CudaKernel::SlicedSplit8
            | CudaKernel::SlicedResident
            | CudaKernel::SlicedTiled
            | CudaKernel::SlicedTiledInline => {
                let planes = planes(model.q());
                let words = n / 32 * planes;
                let (split, name) = match kernel {
                    CudaKernel::Sliced => (1, "potts_sliced_colour"),
                    CudaKernel::SlicedSplit => (2, "potts_sliced_colour_split"),
                    CudaKernel::SlicedSplit4 => (4, "potts_sliced_colour_split4"),
                    CudaKernel::SlicedSplit8 => (8, "potts_sliced_colour_split8"),
                    CudaKernel::SlicedTiled | CudaKernel::SlicedTiledInline => match tiled {
                        Some(plan) => (1, plan.exchange.kernel_name()),
                        None => return Err(wrong_storage("tiled")),
                    },
                    _ => (8, "potts_sliced_resident"),
                };
                let launch = match (kernel, tiled) {
                    (CudaKernel::SlicedResident, _) => SlicedLaunchKind::Resident,
                    (_, Some(plan)) => {
                        SlicedLaunchKind::Tiled(plan, gpu.alloc_zeros::<u32>(plan.exchange_words(planes))?)
                    }
                    _ => SlicedLaunchKind::PerColour,
                };
                (
                    Storage::Sliced {
                        colours: [gpu.alloc_zeros::<u32>(words)?, gpu.alloc_zeros::<u32>(words)?],
                        split,
                        planes,
                        launch,
                    },
                    potts(name)?,
                    potts("potts_sliced_census")?,
                )
            }
            _ => (
                Storage::Generic {
                    colours: [gpu.alloc_zeros::<u8>(n)?, gpu.alloc_zeros::<u8>(n)?],
                    heat_bath: potts("potts_heat_bath_colour")?,
                    heat_bath_table: gpu.alloc_zeros::<u64>(TABLE_WORDS)?,
                    heat_bath_on: false,
                },
                potts("potts_generic_colour")?,
                potts("potts_generic_census")?,
            ),
        };
        let advance = potts("potts_advance")?;
        let table = gpu.alloc_zeros::<u64>(TABLE_LEN)?;
        let sweep_base = gpu.alloc_zeros::<u64>(1)?;
        let counts = gpu.alloc_zeros::<u64>(1 + model.q() as usize)?;
        let flags = gpu.alloc_zeros::<u32>(match (kernel, tiled) {
            (CudaKernel::SlicedResident, _) => 2 * units.div_ceil(32),
            (_, Some(plan)) => plan.blocks as usize,
            _ => 1,
        })?;
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
            advance,
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
    /// "sliced-split4", "sliced-split8", "sliced-resident", "sliced-tiled"
    /// or "sliced-tiled-inline".
    pub fn kernel_name(&self) -> &'static str {
        match self.storage {
            Storage::Generic { heat_bath_on: true, .. } => "heat-bath",
            Storage::Generic { .. } => "generic",
            Storage::Sliced { launch: SlicedLaunchKind::Resident, .. } => "sliced-resident",
            Storage::Sliced { launch: SlicedLaunchKind::Tiled(plan, _), .. } => match plan.exchange {
                TiledExchange::Rounds => "sliced-tiled",
                TiledExchange::Inline => "sliced-tiled-inline",
            },
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

/// The kernel a backend for `model` runs when `requested` is asked for
/// (and the tiled kernel's plan, when that is the one): for
/// [`CudaKernel::Auto`] one thread per unit, or as few more per unit (2 or
/// 4) as give the GPU one full wave of resident threads; below that a
/// tiled kernel where its strips fit in shared memory (the one that trades
/// edge rows inside the update for Ising, where a colour step of a strip
/// has at least [`TILED_INLINE_MIN_WORDS`] words, or where the other's
/// strips do not fit), else the resident
/// kernel when all its threads (eight per unit) fit on the GPU at once,
/// else eight threads per unit; the generic kernel where the bit-sliced
/// rule does not fit. An explicit kernel is checked against the model and
/// the GPU.
fn choose_kernel(gpu: &Gpu, model: &PottsModel, requested: CudaKernel) -> Result<(CudaKernel, Option<TiledPlan>)> {
    let info = gpu.info();
    let wave = (info.sm_count * info.max_threads_per_sm) as usize;
    let units = model.sites() / 2 / (UNIT_ROWS * 32);
    // Each of these compiles the kernel it asks about, so they are asked
    // only when the choice gets to them.
    let resident_fits = || -> Result<bool> {
        if !info.cooperative_launch {
            return Ok(false);
        }
        let kernel = potts_kernel(gpu, model.q(), "potts_sliced_resident")?;
        let per_sm = kernel.max_resident_blocks_per_sm(BLOCK)?;
        Ok((8 * units).div_ceil(BLOCK as usize) <= (per_sm * info.sm_count) as usize)
    };
    let plan = |exchange| match info.cooperative_launch {
        true => tiled_plan(gpu, model, exchange),
        false => Ok(None),
    };
    let sliced = crate::sliced::fits(model);
    let kernel = match requested {
        CudaKernel::Auto if !sliced => CudaKernel::Generic,
        CudaKernel::Auto if units >= wave => CudaKernel::Sliced,
        CudaKernel::Auto if 2 * units >= wave => CudaKernel::SlicedSplit,
        CudaKernel::Auto if 4 * units >= wave => CudaKernel::SlicedSplit4,
        CudaKernel::Auto => {
            let inline = plan(TiledExchange::Inline)?;
            if inline.is_some_and(|p| model.q() == 2 || p.step_words() >= TILED_INLINE_MIN_WORDS) {
                return Ok((CudaKernel::SlicedTiledInline, inline));
            }
            let rounds = plan(TiledExchange::Rounds)?;
            match (inline, rounds) {
                (Some(_), None) => return Ok((CudaKernel::SlicedTiledInline, inline)),
                (_, Some(_)) => return Ok((CudaKernel::SlicedTiled, rounds)),
                _ if resident_fits()? => CudaKernel::SlicedResident,
                _ => CudaKernel::SlicedSplit8,
            }
        }
        CudaKernel::SlicedResident if !resident_fits()? => {
            return Err(PottsError::InvalidInput(format!(
                "the resident kernel needs cooperative launches and all {} of its threads on the GPU at once; \
                 this GPU gives neither or holds fewer",
                8 * units
            )));
        }
        k @ (CudaKernel::SlicedTiled | CudaKernel::SlicedTiledInline) if sliced => {
            let exchange = if k == CudaKernel::SlicedTiled { TiledExchange::Rounds } else { TiledExchange::Inline };
            let Some(tiled) = plan(exchange)? else {
                return Err(PottsError::InvalidInput(format!(
                    "the {k:?} kernel needs cooperative launches, a power of two of 32-site words per row, and \
                     strips of an even number of rows (at least {}), one per multiprocessor, that fit in \
                     its shared memory; q={} {}x{} on this GPU does not",
                    exchange.halo(),
                    model.q(),
                    model.width(),
                    model.height()
                )));
            };
            return Ok((k, Some(tiled)));
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
    };
    Ok((kernel, None))
}

/// A tiled kernel's plan for `model` on `gpu`: the most strips that fit
/// one per multiprocessor with their shared memory, or `None`.
fn tiled_plan(gpu: &Gpu, model: &PottsModel, exchange: TiledExchange) -> Result<Option<TiledPlan>> {
    let info = gpu.info();
    // The kernel's own shared memory (its table of threshold bits) comes
    // out of the same per-block allowance.
    const STATIC_SHARED: u64 = 33 * 16;
    let max_shared = info.max_shared_per_block_optin.saturating_sub(STATIC_SHARED);
    let Some(plan) = TiledPlan::new(model, exchange, info.sm_count, max_shared) else { return Ok(None) };
    let kernel = potts_kernel(gpu, model.q(), exchange.kernel_name())?;
    kernel.set_max_dynamic_shared_bytes(plan.shared_bytes)?;
    let per_sm = kernel.max_resident_blocks_per_sm_with_shared(TILED_THREADS, plan.shared_bytes)?;
    Ok((per_sm >= 1).then_some(plan))
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
    /// cooperative launch (in pieces, [`in_launch_pieces`]).
    fn sweeps_resident(&mut self, run: &SweepRange) -> Result<()> {
        let Storage::Sliced { colours: bufs, .. } = &mut self.storage else { return Err(wrong_storage("sliced")) };
        let SlicedLaunch { wr, h, units, cfg } = sliced_launch(self.width, self.height, 8);
        let [t0, t1, t2, t3] = self.rule.thresholds();
        let (gpu, update, sigma) = (&self.gpu, &self.update, self.rule.sigma());
        in_launch_pieces(gpu, &mut self.flags, run, |flags, sweep, n| {
            let (a, b) = bufs.split_at_mut(1);
            // SAFETY: potts_sliced_resident(u32* c0, u32* c1, u32 wr, u32 h, u64 seed,
            // u64 stream, u64 first_sweep, u32 sweeps, int sigma, u32 th0..th3, u64 units,
            // u32* flags): both arrays hold wr·h·P words for the module's P, h is a
            // multiple of 8, threads past 4·units only wait and signal, flags holds one
            // zeroed entry per block (2·⌈units / 32⌉ blocks of 128 threads), and the
            // cooperative launch puts every block on the GPU at once (checked when the
            // backend was made: resident_fits), so the waits between blocks end.
            unsafe {
                gpu.launch(update)
                    .buf_mut(&mut a[0])
                    .buf_mut(&mut b[0])
                    .arg(&wr)
                    .arg(&h)
                    .arg(&run.seed)
                    .arg(&run.stream)
                    .arg(&sweep)
                    .arg(&n)
                    .arg(&sigma)
                    .arg(&t0)
                    .arg(&t1)
                    .arg(&t2)
                    .arg(&t3)
                    .arg(&units)
                    .buf_mut(flags)
                    .run_cooperative(cfg)
            }
        })
    }

    /// A tiled bit-sliced kernel: every sweep of the call in one
    /// cooperative launch (in pieces, [`in_launch_pieces`]).
    fn sweeps_tiled(&mut self, run: &SweepRange) -> Result<()> {
        let Storage::Sliced { colours: bufs, launch: SlicedLaunchKind::Tiled(plan, exchange), .. } = &mut self.storage
        else {
            return Err(wrong_storage("tiled"));
        };
        let plan = *plan;
        let h = self.height as u32;
        let [t0, t1, t2, t3] = self.rule.thresholds();
        let cfg = LaunchConfig {
            grid_dim: (plan.blocks, 1, 1),
            block_dim: (TILED_THREADS, 1, 1),
            shared_mem_bytes: plan.shared_bytes,
        };
        // Another backend of the same module may have set a smaller limit.
        self.update.set_max_dynamic_shared_bytes(plan.shared_bytes)?;
        let (gpu, update, sigma) = (&self.gpu, &self.update, self.rule.sigma());
        in_launch_pieces(gpu, &mut self.flags, run, |flags, sweep, n| {
            // The rows of the exchange carry tags of the launch's rounds or steps.
            gpu.memset_bytes(exchange, 0)?;
            let (a, b) = bufs.split_at_mut(1);
            // SAFETY: potts_sliced_tiled and potts_sliced_tiled_inline both take (u32* c0,
            // u32* c1, u32 wr_shift, u32 h, u32 R, u64 seed, u64 stream, u64 first_sweep,
            // u32 sweeps, int sigma, u32 th0..th3, u32* xbuf, u32* flags): both arrays hold h·2^wr_shift·P words for the module's
            // P; the plan (TiledPlan::new) has R·blocks = h with R even and at least the halo
            // of the plan's kernel, and shared_bytes covers its strips and random words; xbuf
            // holds exchange_words, zeroed, flags one zeroed entry per block; sweeps <= 2^24; the
            // cooperative launch puts every block on the GPU at once (checked in tiled_plan),
            // so the waits between blocks end.
            unsafe {
                gpu.launch(update)
                    .buf_mut(&mut a[0])
                    .buf_mut(&mut b[0])
                    .arg(&plan.wr_shift)
                    .arg(&h)
                    .arg(&plan.rows)
                    .arg(&run.seed)
                    .arg(&run.stream)
                    .arg(&sweep)
                    .arg(&n)
                    .arg(&sigma)
                    .arg(&t0)
                    .arg(&t1)
                    .arg(&t2)
                    .arg(&t3)
                    .buf_mut(exchange)
                    .buf_mut(flags)
                    .run_cooperative(cfg)
            }
        })
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

/// Runs `run`'s sweeps as launches of at most [`LAUNCH_SWEEPS`] sweeps
/// each, so that the kernels' progress flags stay far below 2³²: before
/// each, zeroes `flags`, then calls `launch(flags, first sweep, sweeps)`.
fn in_launch_pieces(
    gpu: &Gpu,
    flags: &mut DeviceBuffer<u32>,
    run: &SweepRange,
    mut launch: impl FnMut(&mut DeviceBuffer<u32>, u64, u32) -> warpmc_gpu::Result<()>,
) -> Result<()> {
    let mut done = 0;
    while done < run.count {
        let n = (run.count - done).min(LAUNCH_SWEEPS) as u32;
        gpu.memset_bytes(flags, 0)?;
        launch(flags, run.first + done, n)?;
        done += n as u64;
    }
    Ok(())
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
        crate::backend::check_sweep_range(first, count)?;
        let run = SweepRange { seed, stream, first, count };
        match &self.storage {
            Storage::Generic { .. } => self.sweeps_generic(&run),
            Storage::Sliced { launch: SlicedLaunchKind::Resident, .. } => self.sweeps_resident(&run),
            Storage::Sliced { launch: SlicedLaunchKind::Tiled(..), .. } => self.sweeps_tiled(&run),
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Whether a compiled image defines the kernel `name` (its symbol,
    /// NUL-terminated in the ELF string table, so that `potts_sliced_tiled`
    /// does not match `potts_sliced_tiled_inline`).
    fn defines(image: &[u8], name: &str) -> bool {
        let symbol = [name.as_bytes(), b"\0"].concat();
        image.windows(symbol.len()).any(|w| w == symbol.as_slice())
    }

    #[test]
    fn each_kernel_group_compiles_its_kernels_and_no_others() {
        use warpmc_gpu::{GpuError, Target, compile};
        let target = Target::Cubin { arch: 90 };
        for q in [2, 9] {
            let mut groups: Vec<KernelSet> = POTTS_KERNELS.iter().map(|&(_, set)| set).collect();
            groups.dedup();
            groups.push(KernelSet::NONE);
            for set in groups {
                let image = match compile(&only(kernel_source(q), set), &target) {
                    Ok(image) => image,
                    Err(GpuError::NoDevice(why)) => {
                        eprintln!("SKIPPED each_kernel_group_compiles_its_kernels_and_no_others: {why}");
                        return;
                    }
                    Err(e) => panic!("q = {q}, {set:?}: {e}"),
                };
                for &(name, of) in &POTTS_KERNELS {
                    assert_eq!(defines(&image, name), of == set, "q = {q}, {set:?}: {name}");
                }
            }
        }
    }

    #[test]
    fn tiled_plan_takes_the_most_strips_that_fit() {
        // The 2048² of Ferrero et al. on a 132-multiprocessor GPU with 227 KB
        // of shared memory per block: 128 strips of 16 rows.
        let q9 = PottsModel::new(9, 2048, 2048).unwrap();
        let rounds = |m: &PottsModel, blocks, shared| TiledPlan::new(m, TiledExchange::Rounds, blocks, shared);
        let plan = rounds(&q9, 132, 227 * 1024).unwrap();
        assert_eq!((plan.blocks, plan.rows, plan.halo, plan.wr_shift), (128, 16, 4, 5));
        // Both colours of 24 rows of 32 words of 4 planes, and two steps of
        // 3 proposal words, TILED_DRAWS acceptance words and 2 state words.
        let strip = 16 + 2 * TILED_HALO;
        assert_eq!(plan.shared_bytes as usize, 4 * (2 * strip * 4 * 32 + 2 * (3 + TILED_DRAWS + 2) * strip * 32));
        // Fewer multiprocessors: taller strips.
        assert_eq!(rounds(&q9, 100, 227 * 1024).unwrap().blocks, 64);
        // Short strips: 8 rows of 16 words, and the shared memory for them.
        let plan = rounds(&PottsModel::new(9, 1024, 1024).unwrap(), 132, 227 * 1024).unwrap();
        assert_eq!((plan.blocks, plan.rows, plan.halo), (128, 8, TILED_HALO as u32));
        assert_eq!(plan.shared_bytes as usize, 4 * 16 * 16 * (2 * 4 + 2 * (3 + TILED_DRAWS + 2)));
        // Strips of as few rows as the halo.
        assert_eq!(rounds(&PottsModel::new(9, 512, 512).unwrap(), 132, 227 * 1024).unwrap().rows, 4);
        // Ising needs no proposal words and one plane.
        let q2 = PottsModel::new(2, 2048, 2048).unwrap();
        let plan = rounds(&q2, 132, 227 * 1024).unwrap();
        assert_eq!(plan.shared_bytes as usize, 4 * (2 * strip * 32 + 2 * (TILED_DRAWS + 2) * strip * 32));
        // One halo row: strips of 16 rows at 2048² (16 rows of 32 words a
        // colour step, enough for Auto to pick it), of 2 rows at 256².
        let inline = |m: &PottsModel| TiledPlan::new(m, TiledExchange::Inline, 132, 227 * 1024).unwrap();
        let plan = inline(&q9);
        assert_eq!((plan.blocks, plan.rows, plan.halo, plan.exchange), (128, 16, 1, TiledExchange::Inline));
        assert_eq!(plan.shared_bytes as usize, 4 * 18 * 32 * (2 * 4 + 2 * (3 + TILED_DRAWS + 2)));
        assert!(plan.step_words() >= TILED_INLINE_MIN_WORDS);
        assert!(inline(&PottsModel::new(9, 1024, 1024).unwrap()).step_words() < TILED_INLINE_MIN_WORDS);
        assert_eq!(inline(&PottsModel::new(9, 256, 256).unwrap()).rows, 2);
        // Its edge-row buffer: two steps × 128 blocks × 2 sides × a row of
        // 32 words of 4 planes, two u32 per u32.
        assert_eq!(plan.exchange_words(4), 2 * 128 * 2 * 32 * 4 * 2);
    }

    #[test]
    fn tiled_plan_refuses_what_does_not_fit() {
        for exchange in [TiledExchange::Rounds, TiledExchange::Inline] {
            let plan = |q, w, h| TiledPlan::new(&PottsModel::new(q, w, h).unwrap(), exchange, 132, 227 * 1024);
            // 3 words per row (192 sites), not a power of two.
            assert_eq!(plan(9, 192, 64), None);
            // Too tall for one multiprocessor's shared memory.
            assert_eq!(plan(9, 8192, 8192), None);
            // The bit-sliced rule only.
            assert_eq!(plan(17, 64, 8), None);
        }
        // Strips of at least the halo rows: 8 rows make two strips of 4 at
        // most, or four of 2.
        let blocks = |exchange| TiledPlan::new(&PottsModel::new(9, 64, 8).unwrap(), exchange, 132, 227 * 1024);
        assert_eq!(blocks(TiledExchange::Rounds).unwrap().blocks, 2);
        assert_eq!(blocks(TiledExchange::Inline).unwrap().blocks, 4);
        for k in [CudaKernel::SlicedTiled, CudaKernel::SlicedTiledInline] {
            assert!(!k.fits(&PottsModel::new(9, 192, 64).unwrap()));
            assert!(k.fits(&PottsModel::new(9, 2048, 2048).unwrap()));
        }
    }
}
