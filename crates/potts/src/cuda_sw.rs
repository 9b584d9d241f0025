//! Swendsen–Wang on a CUDA device: the lattice and its cluster labels live
//! on the device, and each sweep gives the same lattice, bit for bit, as
//! [`sweeps_cpu`](crate::swendsen_wang::sweeps_cpu) (the rule that names
//! every random number is in [`swendsen_wang`](crate::swendsen_wang)).
//!
//! Spins are bytes in the lattice's own row-major order. A sweep is three
//! launches of `kernels/potts_sw.cu` over tiles of [`TILE_W`] × [`TILE_H`]
//! sites: bonds and labelling inside each tile in shared memory (runs along
//! rows from warp ballots, union-find between rows), giving every site its
//! tile root; a lock-free union-find merge of the tile roots joined by
//! bonds between tiles; and, tile by tile again, each cluster's root, its
//! new state and every site's spin. Unions always hang the larger root
//! under the smaller, so every cluster's root is its smallest site index —
//! the canonical label its new state is drawn from — whatever order the
//! threads run in.

use warpmc_gpu::{DeviceBuffer, Gpu, Kernel, KernelSource, LaunchConfig, Module};

use crate::cuda::check_fits;
use crate::error::{PottsError, Result};
use crate::lattice::{Census, Lattice};
use crate::model::PottsModel;
use crate::swendsen_wang::{bond_stream, check_run, cluster_stream};

/// Columns of a labelling tile: a warp's 32 lanes take a tile row, two
/// sites (one Philox block) each.
pub const TILE_W: u32 = 64;
/// Rows of a labelling tile (its sites' indices fit in 16 bits).
pub const TILE_H: u32 = 32;
/// Threads per block of the kernels that work tile by tile.
pub const TILE_THREADS: u32 = 256;
/// Threads per block of the merge and census kernels.
const BLOCK: u32 = 256;

/// The Swendsen–Wang kernels for NVRTC, with the tile shape defined from
/// this file's constants.
pub fn kernel_source() -> KernelSource {
    KernelSource::new("potts_sw.cu", include_str!("../kernels/potts_sw.cu"))
        .header(warpmc_rng::CUDA_HEADER_NAME, warpmc_rng::CUDA_HEADER)
        .option(format!("-DPOTTS_SW_TILE_W={TILE_W}"))
        .option(format!("-DPOTTS_SW_TILE_H={TILE_H}"))
        .option(format!("-DPOTTS_SW_THREADS={TILE_THREADS}"))
}

/// Bytes of device memory a lattice of `sites` sites needs: a byte per
/// spin, the tile root of each site (2 bytes), a parent per site for the
/// global union-find (4 bytes, 8 beyond 2³² sites) and the census
/// counters.
pub fn device_bytes(sites: usize) -> u64 {
    sites as u64 * (3 + parent_bytes(sites)) + 257 * 8
}

fn parent_bytes(sites: usize) -> u64 {
    if wide_parents(sites) { 8 } else { 4 }
}

/// Whether site indices need 64-bit parents.
fn wide_parents(sites: usize) -> bool {
    sites as u64 > 1 << 32
}

/// The parents of the global union-find: u32 where the sites fit, u64
/// beyond (read and written at tile roots only).
#[derive(Debug)]
enum Parents {
    Narrow(DeviceBuffer<u32>),
    Wide(DeviceBuffer<u64>),
}

/// The kernels of one parent width.
#[derive(Debug)]
struct Kernels {
    local: Kernel,
    merge: Kernel,
    update: Kernel,
}

impl Kernels {
    fn load(module: &Module, wide: bool) -> Result<Self> {
        let suffix = if wide { "u64" } else { "u32" };
        let k = |name: &str| module.kernel(&format!("{name}_{suffix}"));
        Ok(Kernels { local: k("sw_local")?, merge: k("sw_merge")?, update: k("sw_update")? })
    }
}

/// A lattice on a CUDA device, updated by Swendsen–Wang sweeps.
///
/// ```no_run
/// use warpmc_gpu::Gpu;
/// use warpmc_potts::cuda_sw::CudaSwendsenWang;
/// use warpmc_potts::swendsen_wang::bond_threshold;
/// use warpmc_potts::{InitialState, Lattice, PottsModel};
///
/// let model = PottsModel::new(2, 1024, 1024)?;
/// let mut sw = CudaSwendsenWang::new(Gpu::open_default()?, &model)?;
/// sw.load(&Lattice::new(&model, InitialState::Random, 7, 0))?;
/// let t_c = 1.0 / (1.0 + 2f64.sqrt()).ln();
/// sw.sweeps(bond_threshold(&model, t_c)?, 7, 0, 0, 100)?;
/// let census = sw.census()?;
/// println!("energy per site {}", -(census.equal_bonds() as f64) / model.sites() as f64);
/// # Ok::<(), warpmc_potts::PottsError>(())
/// ```
#[derive(Debug)]
pub struct CudaSwendsenWang {
    gpu: Gpu,
    model: PottsModel,
    width: usize,
    height: usize,
    spins: DeviceBuffer<u8>,
    /// Each site's tile root, as an index within its tile.
    roots: DeviceBuffer<u16>,
    parents: Parents,
    counts: DeviceBuffer<u64>,
    module: Module,
    kernels: Kernels,
    census: Kernel,
    max_blocks: u32,
    /// 64-bit parents on every size ([`CudaSwendsenWang::with_wide_labels`]).
    force_wide: bool,
}

impl CudaSwendsenWang {
    /// Swendsen–Wang for `model` (J > 0, h = 0) on `gpu`, holding the
    /// ordered state of the model's lattice.
    pub fn new(gpu: Gpu, model: &PottsModel) -> Result<Self> {
        Self::with_labels(gpu, model, false)
    }

    /// As [`new`](Self::new), but with the 64-bit cluster labels (union-find
    /// parents) of lattices beyond 2³² sites whatever the size: for testing
    /// that path on small lattices.
    pub fn with_wide_labels(gpu: Gpu, model: &PottsModel) -> Result<Self> {
        Self::with_labels(gpu, model, true)
    }

    fn with_labels(gpu: Gpu, model: &PottsModel, force_wide: bool) -> Result<Self> {
        crate::swendsen_wang::bond_threshold(model, 1.0)?;
        let (w, h) = (model.width(), model.height());
        check_size(w, h)?;
        check_fits(&gpu, device_bytes(w * h))?;
        let module = gpu.module(&kernel_source())?;
        let wide = force_wide || wide_parents(w * h);
        let kernels = Kernels::load(&module, wide)?;
        let census = module.kernel("sw_census")?;
        let spins = gpu.alloc_zeros::<u8>(w * h)?;
        let roots = gpu.alloc_zeros::<u16>(w * h)?;
        let parents = alloc_parents(&gpu, w * h, wide)?;
        let counts = gpu.alloc_zeros::<u64>(1 + model.q() as usize)?;
        let max_blocks = gpu.info().sm_count * (gpu.info().max_threads_per_sm / BLOCK).max(1) * 4;
        Ok(CudaSwendsenWang {
            gpu,
            model: model.clone(),
            width: w,
            height: h,
            spins,
            roots,
            parents,
            counts,
            module,
            kernels,
            census,
            max_blocks,
            force_wide,
        })
    }

    /// The device this runs on.
    pub fn gpu(&self) -> &Gpu {
        &self.gpu
    }

    /// One line naming the device.
    pub fn description(&self) -> String {
        let i = self.gpu.info();
        format!(
            "{} (device {}, sm_{}{}, Swendsen–Wang)",
            i.name, i.ordinal, i.compute_capability.0, i.compute_capability.1
        )
    }

    /// Replaces the held lattice. Its q must be the model's; its size may
    /// be any W × H ≥ 1 × 1 (storage is reallocated when it changes).
    pub fn load(&mut self, lattice: &Lattice) -> Result<()> {
        let (w, h) = (lattice.width(), lattice.height());
        if lattice.q() != self.model.q() {
            return Err(PottsError::InvalidInput(format!(
                "the lattice has q = {} but the model q = {}",
                lattice.q(),
                self.model.q()
            )));
        }
        check_size(w, h)?;
        if (w, h) != (self.width, self.height) {
            // Free the old storage before asking for the new.
            self.spins = self.gpu.alloc_zeros::<u8>(0)?;
            self.roots = self.gpu.alloc_zeros::<u16>(0)?;
            self.parents = Parents::Narrow(self.gpu.alloc_zeros::<u32>(0)?);
            check_fits(&self.gpu, device_bytes(w * h))?;
            let wide = self.force_wide || wide_parents(w * h);
            self.spins = self.gpu.alloc_zeros::<u8>(w * h)?;
            self.roots = self.gpu.alloc_zeros::<u16>(w * h)?;
            self.parents = alloc_parents(&self.gpu, w * h, wide)?;
            self.kernels = Kernels::load(&self.module, wide)?;
            (self.width, self.height) = (w, h);
        }
        self.gpu.copy_to_device(lattice.spins(), &mut self.spins)?;
        Ok(())
    }

    /// A copy of the held lattice.
    pub fn lattice(&mut self) -> Result<Lattice> {
        let spins = self.gpu.download(&self.spins)?;
        Lattice::from_spins(self.width, self.height, self.model.q(), spins)
            .ok_or_else(|| PottsError::InvalidInput("internal error: a device spin not below q".into()))
    }

    /// Swendsen–Wang sweeps `first .. first + count` of the chain (`seed`,
    /// `stream`) with bonds active below `threshold`
    /// ([`bond_threshold`](crate::swendsen_wang::bond_threshold)): the
    /// lattice [`sweeps_cpu`](crate::swendsen_wang::sweeps_cpu) reaches.
    /// Queued on the device; [`synchronize`](Self::synchronize) waits.
    pub fn sweeps(&mut self, threshold: u32, seed: u64, stream: u64, first: u64, count: u64) -> Result<()> {
        let n = self.width * self.height;
        check_run(self.model.q(), n, &self.model, first, count)?;
        let sweep = SweepArgs {
            w: self.width as u32,
            h: self.height as u32,
            tiles_x: (self.width as u32).div_ceil(TILE_W),
            tiles: (self.width as u64).div_ceil(TILE_W as u64) * (self.height as u64).div_ceil(TILE_H as u64),
            q: self.model.q(),
            seed,
            bond_stream: bond_stream(stream),
            cluster_stream: cluster_stream(stream),
            threshold,
        };
        let on = Queue { gpu: &self.gpu, kernels: &self.kernels, max_blocks: self.max_blocks };
        for t in first..first + count {
            let bufs = (&mut self.spins, &mut self.roots);
            match &mut self.parents {
                Parents::Narrow(p) => on.sweep(bufs, p, &sweep, t)?,
                Parents::Wide(p) => on.sweep(bufs, p, &sweep, t)?,
            }
        }
        Ok(())
    }
    /// Counts equal bonds and states of the held lattice on the device
    /// (q + 1 integers come back).
    pub fn census(&mut self) -> Result<Census> {
        self.gpu.memset_bytes(&mut self.counts, 0)?;
        let (w, h, q) = (self.width as u32, self.height as u32, self.model.q());
        let cfg =
            LaunchConfig { grid_dim: (h.min(self.max_blocks), 1, 1), block_dim: (BLOCK, 1, 1), shared_mem_bytes: 0 };
        // SAFETY: sw_census(const u8* spins, u32 W, u32 H, u32 q, u64* out): spins holds
        // W·H bytes below q ≤ 255, out holds 1 + q counters; rows are grid-strided.
        unsafe {
            self.gpu
                .launch(&self.census)
                .buf(&self.spins)
                .arg(&w)
                .arg(&h)
                .arg(&q)
                .buf_mut(&mut self.counts)
                .run(cfg)?;
        }
        let out = self.gpu.download(&self.counts)?;
        Ok(Census::new(out[0], out[1..].to_vec()))
    }

    /// Waits for queued work (for timing).
    pub fn synchronize(&mut self) -> Result<()> {
        Ok(self.gpu.synchronize()?)
    }
}

/// Where a sweep's launches go.
struct Queue<'a> {
    gpu: &'a Gpu,
    kernels: &'a Kernels,
    max_blocks: u32,
}

impl Queue<'_> {
    /// Queues sweep `t`'s three launches.
    fn sweep<L: warpmc_gpu::DeviceRepr>(
        &self,
        (spins, roots): (&mut DeviceBuffer<u8>, &mut DeviceBuffer<u16>),
        parents: &mut DeviceBuffer<L>,
        a: &SweepArgs,
        t: u64,
    ) -> Result<()> {
        let (gpu, k) = (self.gpu, self.kernels);
        let tiles =
            LaunchConfig { grid_dim: (a.tiles as u32, 1, 1), block_dim: (TILE_THREADS, 1, 1), shared_mem_bytes: 0 };
        // SAFETY: sw_local_<L>(const u8* spins, u16* root_in_tile, L* parent, u32 W, u32 H,
        // u32 tiles_x, u64 seed, u64 bond_stream, u64 sweep, u32 threshold), L the parent width
        // the kernels were loaded for; the three buffers hold W·H elements; block b serves
        // tile b of the tiles_x-wide grid of ⌈W/TILE_W⌉·⌈H/TILE_H⌉ tiles and touches only its
        // sites (and, for reads, their right and lower neighbours inside the lattice).
        unsafe {
            gpu.launch(&k.local)
                .buf(spins)
                .buf_mut(roots)
                .buf_mut(parents)
                .arg(&a.w)
                .arg(&a.h)
                .arg(&a.tiles_x)
                .arg(&a.seed)
                .arg(&a.bond_stream)
                .arg(&t)
                .arg(&a.threshold)
                .run(tiles)?;
        }
        let slots = a.tiles * (TILE_W + TILE_H) as u64;
        // SAFETY: sw_merge_<L>(const u8* spins, const u16* root_in_tile, L* parent, u32 W, u32 H,
        // u32 tiles_x, u64 tiles, u64 seed, u64 bond_stream, u64 sweep, u32 threshold):
        // grid-stride over tiles·(TILE_W + TILE_H) slots, each reading two sites of the W·H
        // lattice and following parents from tile roots, which all point at sites below W·H.
        unsafe {
            gpu.launch(&k.merge)
                .buf(spins)
                .buf(roots)
                .buf_mut(parents)
                .arg(&a.w)
                .arg(&a.h)
                .arg(&a.tiles_x)
                .arg(&a.tiles)
                .arg(&a.seed)
                .arg(&a.bond_stream)
                .arg(&t)
                .arg(&a.threshold)
                .run(grid_stride(slots, self.max_blocks))?;
        }
        // SAFETY: sw_update_<L>(u8* spins, const u16* root_in_tile, L* parent, u32 W, u32 H,
        // u32 tiles_x, u32 q, u64 seed, u64 cluster_stream, u64 sweep): block b serves tile b as
        // sw_local does; tile roots index sites of their tile, parents point at sites below
        // W·H, and states are below q ≤ 255.
        unsafe {
            gpu.launch(&k.update)
                .buf_mut(spins)
                .buf(roots)
                .buf_mut(parents)
                .arg(&a.w)
                .arg(&a.h)
                .arg(&a.tiles_x)
                .arg(&a.q)
                .arg(&a.seed)
                .arg(&a.cluster_stream)
                .arg(&t)
                .run(tiles)?;
        }
        Ok(())
    }
}

/// The arguments every sweep of one call shares.
struct SweepArgs {
    w: u32,
    h: u32,
    tiles_x: u32,
    tiles: u64,
    q: u32,
    seed: u64,
    bond_stream: u64,
    cluster_stream: u64,
    threshold: u32,
}

/// Sizes the kernels address: each side below 2³², at least one site, at
/// most `MAX_SITES`.
fn check_size(w: usize, h: usize) -> Result<()> {
    if w == 0 || h == 0 {
        return Err(PottsError::InvalidInput("Swendsen–Wang needs a lattice of at least one site".into()));
    }
    if w as u64 >= 1 << 32 || h as u64 >= 1 << 32 {
        return Err(PottsError::InvalidInput(format!(
            "a {w} × {h} lattice: the CUDA Swendsen–Wang kernels need both sides below 2^32"
        )));
    }
    let sites = (w as u64).checked_mul(h as u64).filter(|&n| n <= crate::model::MAX_SITES);
    if sites.is_none() {
        return Err(PottsError::InvalidInput(format!(
            "a {w} × {h} lattice has more than 2^34 sites, the most warpmc addresses"
        )));
    }
    Ok(())
}

fn alloc_parents(gpu: &Gpu, sites: usize, wide: bool) -> Result<Parents> {
    Ok(if wide {
        Parents::Wide(gpu.alloc_zeros::<u64>(sites)?)
    } else {
        Parents::Narrow(gpu.alloc_zeros::<u32>(sites)?)
    })
}

/// A grid-stride launch over `work` items with at most `max_blocks` blocks.
fn grid_stride(work: u64, max_blocks: u32) -> LaunchConfig {
    let blocks = work.div_ceil(BLOCK as u64).clamp(1, max_blocks as u64);
    LaunchConfig { grid_dim: (blocks as u32, 1, 1), block_dim: (BLOCK, 1, 1), shared_mem_bytes: 0 }
}
