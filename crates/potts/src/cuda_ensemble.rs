//! The CUDA ensemble: every member of an [`Ensemble`] in the same launches,
//! under Metropolis or heat-bath.
//!
//! Small lattices (a 64² lattice is 2,048 sites per colour, far too few to
//! fill a GPU alone) run one per thread block, the whole lattice in shared
//! memory for every sweep of a call: one launch per call, whatever the
//! number of sweeps. Members too large for shared memory run one colour per
//! launch on a grid over (tile, member) reading global memory. Either way a
//! member's random numbers are those of its own chain under the model's
//! rule ([`Scheme::for_model`]), computed by the same device code as
//! [`CudaBackend`](crate::cuda::CudaBackend) (`kernels/potts_ensemble.cu`
//! includes `kernels/potts.cu`), so each member ends in the bits it would
//! reach alone. A census computes every member's q + 1 integers on the
//! device.

use warpmc_gpu::{DeviceBuffer, Gpu, Graph, Kernel, KernelSource, LaunchConfig};

use crate::algorithm::{AcceptanceTable, Scheme, TABLE_LEN, UNIT_ROWS, units_per_row};
use crate::cuda::check_fits;
use crate::ensemble::{Ensemble, check_chains, check_member, check_tables};
use crate::error::{PottsError, Result};
use crate::heat_bath::{HeatBathTable, TABLE_WORDS};
use crate::lattice::{Census, Lattice};
use crate::layout::{join, pack_planes, split, unpack_planes};
use crate::model::PottsModel;
use crate::simulation::Chain;
use crate::sliced::{SlicedRule, planes, words_per_row};
use crate::update::{Algorithm, Update};

/// The ensemble kernels for q (the bit-sliced ones compiled for min(q, 16)),
/// with potts.cu's update code as a header and the same constants; of
/// potts.cu's own kernels only the sweep advance compiles.
pub fn kernel_source(q: u32) -> KernelSource {
    crate::cuda::only(
        crate::cuda::with_potts_constants(
            KernelSource::new("potts_ensemble.cu", include_str!("../kernels/potts_ensemble.cu"))
                .header("potts.cu", include_str!("../kernels/potts.cu")),
            q,
        ),
        crate::cuda::KernelSet::ADVANCE,
    )
}

/// Where the members live while they are updated.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EnsembleLayout {
    /// Shared memory for lattices that fit it and are small or numerous
    /// enough to fill the GPU one block each; global memory otherwise.
    Auto,
    /// One block per member, the lattice in shared memory for every sweep
    /// of a call (an error where it does not fit).
    Shared,
    /// One launch per colour over all members in global memory.
    Global,
}

/// Most members of one CUDA ensemble (the member is a grid dimension of
/// 16 bits in the global-memory and census launches).
pub const MAX_MEMBERS: usize = 65_535;

/// Sweeps of one shared-memory launch, at most (a long call is several).
const SWEEPS_PER_LAUNCH: u64 = 1 << 16;

/// Sweeps recorded in one CUDA graph of the global-memory launches: a
/// sweep of an ensemble takes tens of microseconds, so the gaps between
/// launches issued one by one from the host would show.
const GRAPH_SWEEPS: u64 = 64;

/// Threads per block of the global-memory and census launches.
const BLOCK: u32 = 128;

/// Shared memory a block's static arrays take beside the lattice (masks or
/// table), kept free when deciding whether a lattice fits.
const STATIC_SHARED: u64 = 1024;

#[derive(Debug)]
enum Storage {
    /// Bit planes: `words` u32 per colour, member m's colours at 2m, 2m + 1.
    Sliced { lattices: DeviceBuffer<u32>, words: usize, planes: usize, rules: Vec<SlicedRule> },
    /// A byte per spin: `hw·h` bytes per colour.
    Generic { lattices: DeviceBuffer<u8>, rule: GenericRule },
}

/// The site rule of the byte-per-spin storage, with each member's table.
#[derive(Debug)]
enum GenericRule {
    /// Metropolis: TABLE_LEN words per member.
    Metropolis(Vec<AcceptanceTable>),
    /// Heat-bath: TABLE_WORDS words per member.
    HeatBath(Vec<HeatBathTable>),
}

/// Many lattices of one model on a CUDA device (Metropolis or heat-bath).
#[derive(Debug)]
pub struct CudaEnsemble {
    gpu: Gpu,
    width: usize,
    height: usize,
    q: u32,
    members: usize,
    storage: Storage,
    shared: bool,
    /// Threads per unit of the global-memory bit-sliced launch (1, 2, 4, 8).
    split: u32,
    seeds: DeviceBuffer<u64>,
    streams: DeviceBuffer<u64>,
    /// The last chains uploaded (uploaded again only when they change).
    chains: Vec<Chain>,
    /// Per member: sigma (bit-sliced rule).
    sigmas: DeviceBuffer<i32>,
    /// Per member: four thresholds (bit-sliced rule).
    thresholds: DeviceBuffer<u32>,
    /// Per member: TABLE_LEN (Metropolis) or TABLE_WORDS (heat-bath)
    /// entries.
    tables: DeviceBuffer<u64>,
    tables_dirty: bool,
    /// Which members have been given a table.
    table_set: Vec<bool>,
    counts: DeviceBuffer<u64>,
    /// The global-memory kernels read their sweep number as this plus an
    /// offset.
    sweep_base: DeviceBuffer<u64>,
    /// A recorded graph of [`GRAPH_SWEEPS`] global-memory sweeps.
    graph: Option<Graph>,
    advance: Kernel,
    update: Kernel,
    census: Kernel,
    /// Shared-memory bytes of one member's lattice.
    shared_bytes: u32,
    /// Threads per block of the shared-memory launch.
    shared_threads: u32,
    max_blocks: u32,
}

impl CudaEnsemble {
    /// `members` lattices of `model` on `gpu`, laid out as
    /// [`EnsembleLayout::Auto`] decides.
    pub fn new(gpu: Gpu, model: &PottsModel, members: usize) -> Result<Self> {
        Self::with_layout(gpu, model, members, EnsembleLayout::Auto)
    }

    /// As [`CudaEnsemble::new`] with the layout chosen by the caller.
    pub fn with_layout(gpu: Gpu, model: &PottsModel, members: usize, layout: EnsembleLayout) -> Result<Self> {
        Self::running(gpu, model, members, Algorithm::Metropolis, layout)
    }

    /// `members` lattices of `model` on `gpu` running `algorithm`
    /// (Metropolis under the model's own rule, or heat-bath on the byte per
    /// spin storage), laid out as `layout` says.
    pub fn running(
        gpu: Gpu,
        model: &PottsModel,
        members: usize,
        algorithm: Algorithm,
        layout: EnsembleLayout,
    ) -> Result<Self> {
        if !matches!(algorithm, Algorithm::Metropolis | Algorithm::HeatBath) {
            return Err(PottsError::InvalidInput(format!("the CUDA ensemble does not run {algorithm}")));
        }
        if members == 0 || members > MAX_MEMBERS {
            return Err(PottsError::InvalidInput(format!(
                "a CUDA ensemble holds 1 to {MAX_MEMBERS} lattices, got {members}"
            )));
        }
        let sites = model.sites();
        let (hw, h) = (model.width() / 2, model.height());
        let sliced = algorithm == Algorithm::Metropolis && Scheme::for_model(model) == Scheme::Sliced;
        let table_words = if algorithm == Algorithm::HeatBath { TABLE_WORDS } else { TABLE_LEN } as u64;
        let member_bytes = if sliced { 2 * (hw / 32) * h * planes(model.q()) * 4 } else { sites } as u64;
        let total = member_bytes.checked_mul(members as u64).ok_or_else(|| {
            PottsError::InvalidInput(format!("{members} lattices of {sites} sites are more than memory can address"))
        })?;
        check_fits(&gpu, total + members as u64 * (table_words * 8 + 64 + 8 * (1 + model.q() as u64)))?;
        let info = gpu.info().clone();
        let fits_shared = member_bytes + STATIC_SHARED <= info.max_shared_per_block_optin;
        let shared = match layout {
            EnsembleLayout::Auto => fits_shared && (members >= info.sm_count as usize || sites <= 1 << 14),
            EnsembleLayout::Shared if fits_shared => true,
            EnsembleLayout::Shared => {
                return Err(PottsError::InvalidInput(format!(
                    "a {}×{} lattice needs {member_bytes} bytes, more shared memory than a block of this GPU has \
                     ({})",
                    model.width(),
                    model.height(),
                    info.max_shared_per_block_optin
                )));
            }
            EnsembleLayout::Global => false,
        };
        let module = gpu.module(&kernel_source(model.q()))?;
        let wave = (info.sm_count * info.max_threads_per_sm) as u64;
        let (storage, update, census, items, split) = if sliced {
            let planes = planes(model.q());
            let wr = words_per_row(model.width());
            let words = wr * h * planes;
            let units = (wr * h / UNIT_ROWS) as u64 * members as u64;
            let split = [1u32, 2, 4].into_iter().find(|&s| s as u64 * units >= wave).unwrap_or(8);
            let name = match (shared, split) {
                (true, _) => "potts_ens_sliced_shared",
                (false, 1) => "potts_ens_sliced_colour",
                (false, 2) => "potts_ens_sliced_colour_split",
                (false, 4) => "potts_ens_sliced_colour_split4",
                _ => "potts_ens_sliced_colour_split8",
            };
            let lattices = gpu.alloc_zeros::<u32>(2 * words * members)?;
            let rules = vec![SlicedRule::accept_all(model.q()); members];
            let storage = Storage::Sliced { lattices, words, planes, rules };
            (storage, module.kernel(name)?, module.kernel("potts_ens_sliced_census")?, wr * h, split)
        } else {
            let (rule, family) = match algorithm {
                Algorithm::HeatBath => {
                    (GenericRule::HeatBath(vec![HeatBathTable::new(model, 1.0); members]), "heat_bath")
                }
                _ => (GenericRule::Metropolis(vec![AcceptanceTable::reject_all(); members]), "generic"),
            };
            let name = format!("potts_ens_{family}_{}", if shared { "shared" } else { "colour" });
            let lattices = gpu.alloc_zeros::<u8>(sites * members)?;
            let storage = Storage::Generic { lattices, rule };
            let units = units_per_row(hw) * h.div_ceil(UNIT_ROWS);
            (storage, module.kernel(&name)?, module.kernel("potts_ens_generic_census")?, 2 * units, 1)
        };
        let shared_bytes = u32::try_from(member_bytes).unwrap_or(u32::MAX);
        if shared && member_bytes > 48 * 1024 {
            update.set_max_dynamic_shared_bytes(shared_bytes)?;
        }
        let shared_threads = (items.div_ceil(32) * 32).clamp(64, 1024) as u32;
        Ok(CudaEnsemble {
            width: model.width(),
            height: h,
            q: model.q(),
            members,
            storage,
            shared,
            split,
            seeds: gpu.alloc_zeros::<u64>(members)?,
            streams: gpu.alloc_zeros::<u64>(members)?,
            chains: Vec::new(),
            sigmas: gpu.alloc_zeros::<i32>(members)?,
            thresholds: gpu.alloc_zeros::<u32>(4 * members)?,
            tables: gpu.alloc_zeros::<u64>(table_words as usize * members)?,
            tables_dirty: true,
            table_set: vec![false; members],
            counts: gpu.alloc_zeros::<u64>((1 + model.q() as usize) * members)?,
            sweep_base: gpu.alloc_zeros::<u64>(1)?,
            graph: None,
            advance: module.kernel("potts_advance")?,
            update,
            census,
            shared_bytes,
            shared_threads,
            max_blocks: info.sm_count * (info.max_threads_per_sm / BLOCK).max(1) * 4,
            gpu,
        })
    }

    /// The kernel family in use: "sliced-shared", "sliced-global",
    /// "generic-shared", "generic-global", "heat-bath-shared" or
    /// "heat-bath-global".
    pub fn kernel_name(&self) -> &'static str {
        match (&self.storage, self.shared) {
            (Storage::Sliced { .. }, true) => "sliced-shared",
            (Storage::Sliced { .. }, false) => "sliced-global",
            (Storage::Generic { rule: GenericRule::HeatBath(_), .. }, true) => "heat-bath-shared",
            (Storage::Generic { rule: GenericRule::HeatBath(_), .. }, false) => "heat-bath-global",
            (Storage::Generic { .. }, true) => "generic-shared",
            (Storage::Generic { .. }, false) => "generic-global",
        }
    }

    /// Elements (u32 words or bytes) of one member, both colours.
    fn member_len(&self) -> usize {
        match &self.storage {
            Storage::Sliced { words, .. } => 2 * words,
            Storage::Generic { .. } => self.width * self.height,
        }
    }

    /// Uploads the members' rules or tables if any changed.
    fn upload_tables(&mut self) -> Result<()> {
        if !self.tables_dirty {
            return Ok(());
        }
        match &self.storage {
            Storage::Sliced { rules, .. } => {
                let sigmas: Vec<i32> = rules.iter().map(SlicedRule::sigma).collect();
                let ths: Vec<u32> = rules.iter().flat_map(SlicedRule::thresholds).collect();
                self.gpu.copy_to_device(&sigmas, &mut self.sigmas)?;
                self.gpu.copy_to_device(&ths, &mut self.thresholds)?;
            }
            Storage::Generic { rule: GenericRule::Metropolis(tables), .. } => {
                let all: Vec<u64> = tables.iter().flat_map(|t| *t.thresholds()).collect();
                self.gpu.copy_to_device(&all, &mut self.tables)?;
            }
            Storage::Generic { rule: GenericRule::HeatBath(tables), .. } => {
                let all: Vec<u64> = tables.iter().flat_map(|t| t.words()).collect();
                self.gpu.copy_to_device(&all, &mut self.tables)?;
            }
        }
        self.tables_dirty = false;
        Ok(())
    }

    fn upload_chains(&mut self, chains: &[Chain]) -> Result<()> {
        if self.chains != chains {
            let seeds: Vec<u64> = chains.iter().map(|c| c.seed).collect();
            let streams: Vec<u64> = chains.iter().map(|c| c.stream).collect();
            self.gpu.copy_to_device(&seeds, &mut self.seeds)?;
            self.gpu.copy_to_device(&streams, &mut self.streams)?;
            self.chains = chains.to_vec();
        }
        Ok(())
    }

    /// Every sweep of the call, one shared-memory launch per
    /// [`SWEEPS_PER_LAUNCH`].
    fn sweeps_shared(&mut self, first: u64, count: u64) -> Result<()> {
        let cfg = LaunchConfig {
            grid_dim: (self.members as u32, 1, 1),
            block_dim: (self.shared_threads, 1, 1),
            shared_mem_bytes: self.shared_bytes,
        };
        let (hw, h) = ((self.width / 2) as u32, self.height as u32);
        let mut done = 0;
        while done < count {
            let n = (count - done).min(SWEEPS_PER_LAUNCH) as u32;
            let start = first + done;
            match &mut self.storage {
                Storage::Sliced { lattices, .. } => {
                    let wr = words_per_row(self.width) as u32;
                    // SAFETY: potts_ens_sliced_shared(u32* lattices, u32 wr, u32 h, const u64* seeds,
                    // const u64* streams, const int* sigmas, const u32* ths, u64 first_sweep,
                    // u32 sweeps): one block per member (grid = members), lattices holds
                    // 2·wr·h·P words per member for the module's P, seeds/streams/sigmas one entry
                    // and ths four per member; the dynamic shared memory is one member's 2·wr·h·P
                    // words (opted in above 48 KB), h is a multiple of 8 and the block has ≥ 64
                    // threads (fill_masks uses 33).
                    unsafe {
                        self.gpu
                            .launch(&self.update)
                            .buf_mut(lattices)
                            .arg(&wr)
                            .arg(&h)
                            .buf(&self.seeds)
                            .buf(&self.streams)
                            .buf(&self.sigmas)
                            .buf(&self.thresholds)
                            .arg(&start)
                            .arg(&n)
                            .run(cfg)?;
                    }
                }
                Storage::Generic { lattices, .. } => {
                    let per_row = units_per_row(hw as usize) as u32;
                    let units = per_row as u64 * (h as u64).div_ceil(UNIT_ROWS as u64);
                    // SAFETY: potts_ens_generic_shared and potts_ens_heat_bath_shared(u8* lattices,
                    // u32 hw, u32 h, u32 q, const u64* seeds, const u64* streams, const u64* tables,
                    // u32 units_per_row, u64 units, u64 first_sweep, u32 sweeps): one block per
                    // member, lattices holds 2·hw·h bytes per member with spins < q, tables the
                    // kernel's TABLE_LEN or TABLE_WORDS entries per member (as `running` allocates);
                    // the dynamic shared memory holds one member's 2·hw·h bytes, beside the
                    // table's static array (within STATIC_SHARED).
                    unsafe {
                        self.gpu
                            .launch(&self.update)
                            .buf_mut(lattices)
                            .arg(&hw)
                            .arg(&h)
                            .arg(&self.q)
                            .buf(&self.seeds)
                            .buf(&self.streams)
                            .buf(&self.tables)
                            .arg(&per_row)
                            .arg(&units)
                            .arg(&start)
                            .arg(&n)
                            .run(cfg)?;
                    }
                }
            }
            done += n as u64;
        }
        Ok(())
    }

    /// Two global-memory launches per sweep over every member, replayed
    /// from a recorded graph of [`GRAPH_SWEEPS`] sweeps where the call is
    /// long enough (the kernels read the sweep number from device memory,
    /// which the graph's last node advances; every per-member input is
    /// device memory too, so one graph serves every later call).
    fn sweeps_global(&mut self, first: u64, count: u64) -> Result<()> {
        self.gpu.copy_to_device(&[first], &mut self.sweep_base)?;
        let (blocks, units, per_row) = self.global_shape();
        let job = GlobalSweep {
            gpu: &self.gpu,
            update: &self.update,
            sweep_base: &self.sweep_base,
            seeds: &self.seeds,
            streams: &self.streams,
            sigmas: &self.sigmas,
            thresholds: &self.thresholds,
            tables: &self.tables,
            cfg: LaunchConfig {
                grid_dim: (blocks, self.members as u32, 1),
                block_dim: (BLOCK, 1, 1),
                shared_mem_bytes: 0,
            },
            hw: (self.width / 2) as u32,
            h: self.height as u32,
            q: self.q,
            wr: words_per_row(self.width) as u32,
            units,
            per_row,
        };
        let storage = &mut self.storage;
        let mut done = 0;
        if count >= GRAPH_SWEEPS {
            if self.graph.is_none() {
                let advance = &self.advance;
                let graph = self.gpu.capture(|| {
                    for add in 0..GRAPH_SWEEPS {
                        job.sweep(storage, add)?;
                    }
                    // SAFETY: potts_advance(u64* base, u64 n) writes the one u64 of
                    // sweep_base, which no other node of the graph writes.
                    unsafe {
                        job.gpu.launch(advance).buf(job.sweep_base).arg(&GRAPH_SWEEPS).run(LaunchConfig {
                            grid_dim: (1, 1, 1),
                            block_dim: (32, 1, 1),
                            shared_mem_bytes: 0,
                        })
                    }
                })?;
                self.graph = Some(graph);
            }
            if let Some(graph) = &self.graph {
                while count - done >= GRAPH_SWEEPS {
                    graph.launch()?;
                    done += GRAPH_SWEEPS;
                }
            }
        }
        // The rest one launch at a time, after the graph's advances.
        for add in 0..count - done {
            job.sweep(storage, add)?;
        }
        Ok(())
    }

    /// Blocks per member, units per member and units per row (byte-per-spin
    /// storage) of the global-memory launches.
    fn global_shape(&self) -> (u32, u64, u32) {
        let (hw, h) = (self.width / 2, self.height);
        match &self.storage {
            Storage::Sliced { .. } => {
                let units = (words_per_row(self.width) * (h / UNIT_ROWS)) as u64;
                let threads = if self.split == 1 { units } else { self.split as u64 * units.div_ceil(32) * 32 };
                (threads.div_ceil(BLOCK as u64) as u32, units, 0)
            }
            Storage::Generic { .. } => {
                let per_row = units_per_row(hw);
                let units = (per_row * h.div_ceil(UNIT_ROWS)) as u64;
                let per_member = (self.max_blocks / self.members as u32).max(1) as u64;
                ((2 * units).div_ceil(BLOCK as u64).clamp(1, per_member) as u32, units, per_row as u32)
            }
        }
    }
}

/// The arguments of the global-memory launches that do not change between
/// sweeps.
struct GlobalSweep<'a> {
    gpu: &'a Gpu,
    update: &'a Kernel,
    sweep_base: &'a DeviceBuffer<u64>,
    seeds: &'a DeviceBuffer<u64>,
    streams: &'a DeviceBuffer<u64>,
    sigmas: &'a DeviceBuffer<i32>,
    thresholds: &'a DeviceBuffer<u32>,
    tables: &'a DeviceBuffer<u64>,
    cfg: LaunchConfig,
    hw: u32,
    h: u32,
    q: u32,
    wr: u32,
    units: u64,
    per_row: u32,
}

impl GlobalSweep<'_> {
    /// Queues both colours of sweep `*sweep_base + add` of every member.
    fn sweep(&self, storage: &mut Storage, add: u64) -> warpmc_gpu::Result<()> {
        for colour in 0u32..2 {
            match storage {
                Storage::Sliced { lattices, .. } => {
                    // SAFETY: potts_ens_sliced_colour[_splitN](u32* lattices, u32 wr, u32 h,
                    // const u64* seeds, const u64* streams, const int* sigmas, const u32* ths,
                    // const u64* sweep_base, u64 sweep_add, u32 colour, u64 units): grid y =
                    // members, lattices holds 2·wr·h·P words per member for the module's P,
                    // units = wr·h/8 per member and threads past it return; seeds, streams and
                    // sigmas hold one entry and ths four per member; sweep_base holds one.
                    unsafe {
                        self.gpu
                            .launch(self.update)
                            .buf_mut(lattices)
                            .arg(&self.wr)
                            .arg(&self.h)
                            .buf(self.seeds)
                            .buf(self.streams)
                            .buf(self.sigmas)
                            .buf(self.thresholds)
                            .buf(self.sweep_base)
                            .arg(&add)
                            .arg(&colour)
                            .arg(&self.units)
                            .run(self.cfg)?;
                    }
                }
                Storage::Generic { lattices, .. } => {
                    // SAFETY: potts_ens_generic_colour and potts_ens_heat_bath_colour(u8* lattices,
                    // u32 hw, u32 h, u32 q, const u64* seeds, const u64* streams, const u64* tables,
                    // u32 units_per_row, u64 units, const u64* sweep_base, u64 sweep_add,
                    // u32 colour): grid y = members, a grid-stride loop over 2·units (unit, parity)
                    // pairs per member clipped to the 2·hw·h bytes of each member (spins < q);
                    // tables the kernel's TABLE_LEN or TABLE_WORDS entries per member; sweep_base
                    // holds one entry.
                    unsafe {
                        self.gpu
                            .launch(self.update)
                            .buf_mut(lattices)
                            .arg(&self.hw)
                            .arg(&self.h)
                            .arg(&self.q)
                            .buf(self.seeds)
                            .buf(self.streams)
                            .buf(self.tables)
                            .arg(&self.per_row)
                            .arg(&self.units)
                            .buf(self.sweep_base)
                            .arg(&add)
                            .arg(&colour)
                            .run(self.cfg)?;
                    }
                }
            }
        }
        Ok(())
    }
}

impl Ensemble for CudaEnsemble {
    fn name(&self) -> &'static str {
        "cuda"
    }

    fn description(&self) -> String {
        let i = self.gpu.info();
        format!(
            "{} lattices together on {} (device {}, sm_{}{}, {} ensemble kernel)",
            self.members,
            i.name,
            i.ordinal,
            i.compute_capability.0,
            i.compute_capability.1,
            self.kernel_name()
        )
    }

    fn len(&self) -> usize {
        self.members
    }

    fn load(&mut self, index: usize, lattice: &Lattice) -> Result<()> {
        check_member(self.members, index)?;
        if (lattice.width(), lattice.height(), lattice.q()) != (self.width, self.height, self.q) {
            return Err(PottsError::InvalidInput("lattice does not match the ensemble's model".into()));
        }
        let len = self.member_len();
        let [c0, c1] = split(lattice);
        let hw = self.width / 2;
        match &mut self.storage {
            Storage::Sliced { lattices, planes, .. } => {
                let mut both = pack_planes(&c0, hw, *planes);
                both.extend(pack_planes(&c1, hw, *planes));
                let staged = self.gpu.upload(&both)?;
                self.gpu.copy_device_range(&staged, 0, lattices, index * len, len)?;
            }
            Storage::Generic { lattices, .. } => {
                let mut both = c0;
                both.extend(c1);
                let staged = self.gpu.upload(&both)?;
                self.gpu.copy_device_range(&staged, 0, lattices, index * len, len)?;
            }
        }
        Ok(())
    }

    fn lattice(&mut self, index: usize) -> Result<Lattice> {
        check_member(self.members, index)?;
        let len = self.member_len();
        let hw = self.width / 2;
        let (c0, c1) = match &self.storage {
            Storage::Sliced { lattices, planes, words, .. } => {
                // SAFETY: the copy below writes every element before the download reads it.
                let mut staged = unsafe { self.gpu.alloc_uninit::<u32>(len)? };
                self.gpu.copy_device_range(lattices, index * len, &mut staged, 0, len)?;
                let both = self.gpu.download(&staged)?;
                (unpack_planes(&both[..*words], hw, *planes), unpack_planes(&both[*words..], hw, *planes))
            }
            Storage::Generic { lattices, .. } => {
                // SAFETY: as above.
                let mut staged = unsafe { self.gpu.alloc_uninit::<u8>(len)? };
                self.gpu.copy_device_range(lattices, index * len, &mut staged, 0, len)?;
                let mut both = self.gpu.download(&staged)?;
                let c1 = both.split_off(len / 2);
                (both, c1)
            }
        };
        Ok(join(self.width, self.height, self.q, [&c0, &c1]))
    }

    fn set_table(&mut self, index: usize, table: &AcceptanceTable) -> Result<()> {
        check_member(self.members, index)?;
        match &mut self.storage {
            Storage::Sliced { rules, .. } => rules[index] = SlicedRule::new(self.q, table)?,
            Storage::Generic { rule: GenericRule::Metropolis(tables), .. } => tables[index] = *table,
            Storage::Generic { rule: GenericRule::HeatBath(_), .. } => {
                return Err(PottsError::InvalidInput(
                    "this CUDA ensemble runs heat-bath, not metropolis; open it for metropolis".into(),
                ));
            }
        }
        self.tables_dirty = true;
        self.table_set[index] = true;
        Ok(())
    }

    fn set_update(&mut self, index: usize, update: &Update) -> Result<()> {
        check_member(self.members, index)?;
        match (update, &mut self.storage) {
            (Update::Metropolis(table), _) => self.set_table(index, table),
            (Update::HeatBath(table), Storage::Generic { rule: GenericRule::HeatBath(tables), .. }) => {
                tables[index] = *table;
                self.tables_dirty = true;
                self.table_set[index] = true;
                Ok(())
            }
            (other, _) => Err(PottsError::InvalidInput(format!(
                "this CUDA ensemble ({} kernels) cannot run {}; open it with CudaEnsemble::running",
                self.kernel_name(),
                other.algorithm()
            ))),
        }
    }

    fn sweeps(&mut self, chains: &[Chain], first: u64, count: u64) -> Result<()> {
        crate::backend::check_sweep_range(first, count)?;
        check_chains(self.members, chains)?;
        check_tables(&self.table_set)?;
        if count == 0 {
            return Ok(());
        }
        self.upload_chains(chains)?;
        self.upload_tables()?;
        if self.shared { self.sweeps_shared(first, count) } else { self.sweeps_global(first, count) }
    }

    fn census(&mut self) -> Result<Vec<Census>> {
        self.gpu.memset_bytes(&mut self.counts, 0)?;
        let (hw, h) = ((self.width / 2) as u32, self.height as u32);
        let per_member = (self.max_blocks / self.members as u32).clamp(1, 64) as u64;
        match &self.storage {
            Storage::Sliced { lattices, .. } => {
                let wr = words_per_row(self.width) as u32;
                let blocks = (wr as u64 * h as u64).div_ceil(BLOCK as u64).clamp(1, per_member) as u32;
                let cfg = LaunchConfig {
                    grid_dim: (blocks, self.members as u32, 1),
                    block_dim: (BLOCK, 1, 1),
                    shared_mem_bytes: 0,
                };
                // SAFETY: potts_ens_sliced_census(const u32* lattices, u32 wr, u32 h, u64* out):
                // grid y = members, 2·wr·h·P words per member; the module was compiled with
                // POTTS_Q = q (≤ 16 under this rule), so member m writes out[m(q+1) ..= m(q+1) + q],
                // inside the (q + 1)·members counters.
                unsafe {
                    self.gpu.launch(&self.census).buf(lattices).arg(&wr).arg(&h).buf_mut(&mut self.counts).run(cfg)?;
                }
            }
            Storage::Generic { lattices, .. } => {
                let blocks = (hw as u64 * h as u64).div_ceil(BLOCK as u64).clamp(1, per_member) as u32;
                let cfg = LaunchConfig {
                    grid_dim: (blocks, self.members as u32, 1),
                    block_dim: (BLOCK, 1, 1),
                    shared_mem_bytes: 0,
                };
                // SAFETY: potts_ens_generic_census(const u8* lattices, u32 hw, u32 h, u32 q, u64* out):
                // grid y = members, 2·hw·h bytes per member with spins < q; member m writes
                // out[m(q+1) ..= m(q+1) + q].
                unsafe {
                    self.gpu
                        .launch(&self.census)
                        .buf(lattices)
                        .arg(&hw)
                        .arg(&h)
                        .arg(&self.q)
                        .buf_mut(&mut self.counts)
                        .run(cfg)?;
                }
            }
        }
        let out = self.gpu.download(&self.counts)?;
        Ok(out.chunks(1 + self.q as usize).map(|c| Census::new(c[0], c[1..].to_vec())).collect())
    }

    fn synchronize(&mut self) -> Result<()> {
        Ok(self.gpu.synchronize()?)
    }
}
