//! The CUDA backend: the lattice lives on the device; only the q + 1 census
//! integers come back per measurement.

use warpmc_gpu::{DeviceBuffer, Gpu, Graph, Kernel, KernelSource, LaunchConfig};

use crate::algorithm::{ALWAYS, AcceptanceTable, TABLE_LEN, UNIT_ROWS, units_per_row};
use crate::backend::Backend;
use crate::error::{PottsError, Result};
use crate::lattice::{Census, Lattice};
use crate::layout::{SITES_PER_WORD1, SITES_PER_WORD4, join, pack1, pack4, split, unpack1, unpack4};
use crate::model::PottsModel;

/// The kernels of this crate, for NVRTC; the packed kernels are compiled for
/// one q at a time.
pub fn kernel_source(q: u32) -> KernelSource {
    KernelSource::new("potts.cu", include_str!("../kernels/potts.cu"))
        .header(warpmc_rng::CUDA_HEADER_NAME, warpmc_rng::CUDA_HEADER)
        .option(format!("-DPOTTS_Q={}", q.min(16)))
}

/// Bytes of device memory a lattice of `sites` sites needs (the two colour
/// arrays at one byte per spin — the packed format needs less — the table
/// and the census counters).
pub fn device_bytes(sites: usize) -> u64 {
    sites as u64 + (TABLE_LEN as u64 + 257) * 8
}

/// Fails with [`PottsError::OutOfDeviceMemory`] unless `bytes` fit in the
/// device's free memory.
pub fn check_fits(gpu: &Gpu, bytes: u64) -> Result<()> {
    let (free, total) = gpu.memory_info()?;
    if bytes > free as u64 {
        return Err(PottsError::OutOfDeviceMemory { needed: bytes, free: free as u64, total: total as u64 });
    }
    Ok(())
}

/// How the CUDA backend stores and updates spins. Both give the same states
/// (see [`algorithm`](crate::algorithm)); the choice is only about speed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CudaKernel {
    /// The fastest kernel the model allows: 1 bit for q = 2 on lattices that
    /// fill the GPU with it, else 4 bits (split on small lattices), else
    /// generic.
    Auto,
    /// One byte per spin: any q, any even lattice, a field.
    Generic,
    /// Four bits per spin: q ≤ 16, width a multiple of 16, height a multiple
    /// of 8, no field; one thread per random-number unit.
    Packed4,
    /// As [`CudaKernel::Packed4`] with two threads per unit (one per
    /// generator): twice the parallelism for lattices too small to fill the
    /// GPU, at twice the Philox work.
    Packed4Split,
    /// One bit per spin (Ising): q = 2, width a multiple of 64, height a
    /// multiple of 8, no field; one thread per 32-bit word × 8 rows.
    Packed1,
    /// As [`CudaKernel::Packed1`] with two threads per word column.
    Packed1Split,
}

impl CudaKernel {
    /// Whether the 1-bit kernel can run `model`.
    pub fn packed1_fits(model: &PottsModel) -> bool {
        model.q() == 2
            && (model.width() / 2) % SITES_PER_WORD1 == 0
            && model.height() % UNIT_ROWS == 0
            && model.field() == 0.0
    }

    /// Whether `model` fits this kernel ([`CudaKernel::Auto`] always does).
    pub fn fits(self, model: &PottsModel) -> bool {
        match self {
            CudaKernel::Auto | CudaKernel::Generic => true,
            CudaKernel::Packed4 | CudaKernel::Packed4Split => Self::packed4_fits(model),
            CudaKernel::Packed1 | CudaKernel::Packed1Split => Self::packed1_fits(model),
        }
    }

    /// Whether the 4-bit kernel can run `model`.
    pub fn packed4_fits(model: &PottsModel) -> bool {
        model.q() <= 16
            && (model.width() / 2) % SITES_PER_WORD4 == 0
            && model.height() % UNIT_ROWS == 0
            && model.field() == 0.0
    }
}

#[derive(Debug)]
enum Storage {
    Generic([DeviceBuffer<u8>; 2]),
    /// `bits` per spin: 4 or 1.
    Packed {
        colours: [DeviceBuffer<u32>; 2],
        split: bool,
        bits: u32,
    },
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
    /// 2⁶⁴ − threshold for Δn + 4 = 0…8 (the packed kernels' form).
    neg_table: DeviceBuffer<u64>,
    /// The packed kernels read their sweep number as this plus an offset.
    sweep_base: DeviceBuffer<u64>,
    advance: Kernel,
    /// A recorded graph of GRAPH_SWEEPS sweeps, for the (seed, stream,
    /// table version) key.
    graph: Option<((u64, u64, u64), Graph)>,
    /// The 1-bit kernel's classes and 2⁶⁴ − thresholds (arguments, not memory).
    ising: (u32, u32, u64, u64),
    /// Counts set_table calls (the 1-bit kernel's graph captures the table).
    table_version: u64,
    counts: DeviceBuffer<u64>,
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

/// The arguments of the packed update kernels that do not change between
/// the sweeps of one call.
struct PackedSweep<'a> {
    gpu: &'a Gpu,
    update: &'a Kernel,
    neg_table: &'a DeviceBuffer<u64>,
    sweep_base: &'a DeviceBuffer<u64>,
    cfg: LaunchConfig,
    wr: u32,
    h: u32,
    seed: u64,
    stream: u64,
    units: u64,
    /// For the 1-bit kernel: its classes and 2⁶⁴ − thresholds.
    ising: Option<(u32, u32, u64, u64)>,
}

impl PackedSweep<'_> {
    /// Queues both colours of sweep `*sweep_base + add`.
    fn sweep(&self, bufs: &mut [DeviceBuffer<u32>; 2], add: u64) -> warpmc_gpu::Result<()> {
        let one = 1u32;
        for colour in 0u32..2 {
            let (a, b) = bufs.split_at_mut(1);
            let (mine, other) = if colour == 0 { (&mut a[0], &b[0]) } else { (&mut b[0], &a[0]) };
            // The arguments both packed kernels start with.
            let common = self
                .gpu
                .launch(self.update)
                .buf_mut(mine)
                .buf(other)
                .arg(&self.wr)
                .arg(&self.h)
                .arg(&self.seed)
                .arg(&self.stream)
                .buf(self.sweep_base)
                .arg(&add)
                .arg(&colour);
            match &self.ising {
                // SAFETY: potts_packed4_colour[_split](u32*, const u32*, u32 wr, u32 h, u64 seed,
                // u64 stream, const u64* sweep_base, u64 add, u32 colour, const u64* neg_table,
                // u32 one, u64 units); both arrays hold wr·h words, h is a multiple of 8,
                // units = wr·h/8 and threads past it return; neg_table holds 9 entries and
                // sweep_base one.
                None => unsafe { common.buf(self.neg_table).arg(&one).arg(&self.units).run(self.cfg)? },
                // SAFETY: potts_packed1_colour[_split](u32*, const u32*, u32 wr, u32 h, u64 seed,
                // u64 stream, const u64* sweep_base, u64 add, u32 colour, u32 ca, u32 cb, u64 xa,
                // u64 xb, u32 one, u64 words); both arrays hold wr·h words, h is a multiple of 8,
                // words = wr·h/8 and threads past it return; sweep_base holds one entry.
                Some((ca, cb, xa, xb)) => unsafe {
                    common.arg(ca).arg(cb).arg(xa).arg(xb).arg(&one).arg(&self.units).run(self.cfg)?
                },
            }
        }
        Ok(())
    }
}

impl CudaBackend {
    /// A backend for `model` on `gpu`, holding the ordered state, with the
    /// fastest kernel that can run it.
    pub fn new(gpu: Gpu, model: &PottsModel) -> Result<Self> {
        Self::with_kernel(gpu, model, CudaKernel::Auto)
    }

    /// A backend using `kernel` (an error if the model does not fit it).
    pub fn with_kernel(gpu: Gpu, model: &PottsModel, kernel: CudaKernel) -> Result<Self> {
        check_fits(&gpu, device_bytes(model.sites()))?;
        let info = gpu.info();
        // One thread per unit (per word for 1 bit) unless that leaves the GPU
        // less than one full wave of resident threads.
        let wave = (info.sm_count * info.max_threads_per_sm) as usize;
        let threads = |bits: usize| model.sites() / 2 / (UNIT_ROWS * 32 / bits);
        let kernel = match kernel {
            CudaKernel::Auto if CudaKernel::packed1_fits(model) && threads(1) >= wave => CudaKernel::Packed1,
            CudaKernel::Auto if CudaKernel::packed4_fits(model) && threads(4) >= wave => CudaKernel::Packed4,
            CudaKernel::Auto if CudaKernel::packed4_fits(model) => CudaKernel::Packed4Split,
            CudaKernel::Auto => CudaKernel::Generic,
            k if k.fits(model) => k,
            _ => {
                return Err(PottsError::InvalidInput(format!(
                    "the {kernel:?} kernel cannot run q={} {}x{} h={}: 4 bits need q <= 16, width a multiple of \
                     16, height a multiple of 8 and no field; 1 bit needs q = 2 and width a multiple of 64",
                    model.q(),
                    model.width(),
                    model.height(),
                    model.field()
                )));
            }
        };
        let module = gpu.module(&kernel_source(model.q()))?;
        let n = model.sites() / 2;
        let packed = match kernel {
            CudaKernel::Packed4 | CudaKernel::Packed4Split => Some((4, kernel == CudaKernel::Packed4Split)),
            CudaKernel::Packed1 | CudaKernel::Packed1Split => Some((1, kernel == CudaKernel::Packed1Split)),
            _ => None,
        };
        let (storage, update, census) = if let Some((bits, split)) = packed {
            let words = n * bits / 32;
            let name = match (bits, split) {
                (4, false) => "potts_packed4_colour",
                (4, true) => "potts_packed4_colour_split",
                (_, false) => "potts_packed1_colour",
                (_, true) => "potts_packed1_colour_split",
            };
            (
                Storage::Packed {
                    colours: [gpu.alloc_zeros::<u32>(words)?, gpu.alloc_zeros::<u32>(words)?],
                    split,
                    bits: bits as u32,
                },
                module.kernel(name)?,
                module.kernel(if bits == 4 { "potts_packed4_census" } else { "potts_packed1_census" })?,
            )
        } else {
            (
                Storage::Generic([gpu.alloc_zeros::<u8>(n)?, gpu.alloc_zeros::<u8>(n)?]),
                module.kernel("potts_generic_colour")?,
                module.kernel("potts_generic_census")?,
            )
        };
        let table = gpu.alloc_zeros::<u64>(TABLE_LEN)?;
        let neg_table = gpu.alloc_zeros::<u64>(9)?;
        let sweep_base = gpu.alloc_zeros::<u64>(1)?;
        let counts = gpu.alloc_zeros::<u64>(1 + model.q() as usize)?;
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
            neg_table,
            sweep_base,
            advance: module.kernel("potts_advance")?,
            graph: None,
            ising: (0, 0, 0, 0),
            table_version: 0,
            counts,
            max_blocks,
        })
    }

    /// The device this backend runs on.
    pub fn gpu(&self) -> &Gpu {
        &self.gpu
    }

    /// The kernel in use: "generic", "packed4", "packed4-split", "packed1"
    /// or "packed1-split".
    pub fn kernel_name(&self) -> &'static str {
        match self.storage {
            Storage::Generic(_) => "generic",
            Storage::Packed { split: false, bits: 4, .. } => "packed4",
            Storage::Packed { split: true, bits: 4, .. } => "packed4-split",
            Storage::Packed { split: false, .. } => "packed1",
            Storage::Packed { split: true, .. } => "packed1-split",
        }
    }
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
            Storage::Generic(bufs) => {
                self.gpu.copy_to_device(&c0, &mut bufs[0])?;
                self.gpu.copy_to_device(&c1, &mut bufs[1])?;
            }
            Storage::Packed { colours: bufs, bits, .. } => {
                let hw = self.width / 2;
                let pack = if *bits == 4 { pack4 } else { pack1 };
                self.gpu.copy_to_device(&pack(&c0, hw), &mut bufs[0])?;
                self.gpu.copy_to_device(&pack(&c1, hw), &mut bufs[1])?;
            }
        }
        Ok(())
    }

    fn lattice(&mut self) -> Result<Lattice> {
        let (c0, c1) = match &self.storage {
            Storage::Generic(bufs) => (self.gpu.download(&bufs[0])?, self.gpu.download(&bufs[1])?),
            Storage::Packed { colours: bufs, bits, .. } => {
                let unpack = if *bits == 4 { unpack4 } else { unpack1 };
                (unpack(&self.gpu.download(&bufs[0])?), unpack(&self.gpu.download(&bufs[1])?))
            }
        };
        Ok(join(self.width, self.height, self.q, [&c0, &c1]))
    }

    fn set_table(&mut self, table: &AcceptanceTable) -> Result<()> {
        match self.storage {
            Storage::Generic(_) => self.gpu.copy_to_device(&table.thresholds, &mut self.table)?,
            Storage::Packed { bits: 4, .. } => {
                let neg = table.without_field().map(u64::wrapping_neg);
                self.gpu.copy_to_device(&neg, &mut self.neg_table)?
            }
            Storage::Packed { .. } => {
                // q = 2, no field: Δn + 4 = 2u for u unequal neighbours. At
                // most two u have a threshold below "always" (ΔE = −J(2u − 4)
                // is positive for u < 2 or for u > 2, not both).
                let th = table.without_field();
                let uncertain: Vec<u32> = (0..5u32).filter(|&u| th[2 * u as usize] < ALWAYS).collect();
                if uncertain.len() > 2 {
                    return Err(PottsError::InvalidInput(
                        "the 1-bit kernel needs at most two uncertain acceptance classes".into(),
                    ));
                }
                let ca = uncertain.first().copied().unwrap_or(0);
                let cb = uncertain.get(1).copied().unwrap_or(ca);
                let x = |u: u32| th[2 * u as usize].wrapping_neg();
                self.ising = (ca, cb, x(ca), x(cb));
            }
        }
        self.table_version += 1;
        Ok(())
    }

    fn sweeps(&mut self, seed: u64, stream: u64, first: u64, count: u64) -> Result<()> {
        let hw = (self.width / 2) as u32;
        let h = self.height as u32;
        match &mut self.storage {
            Storage::Generic(bufs) => {
                let per_row = units_per_row(hw as usize) as u32;
                let units = per_row as u64 * (h as u64).div_ceil(UNIT_ROWS as u64);
                let cfg = grid_stride(units, self.max_blocks);
                for sweep in first..first + count {
                    for colour in 0u32..2 {
                        let (a, b) = bufs.split_at_mut(1);
                        let (mine, other) = if colour == 0 { (&mut a[0], &b[0]) } else { (&mut b[0], &a[0]) };
                        // SAFETY: potts_generic_colour(u8*, const u8*, u32 hw, u32 h, u32 q, u64 seed,
                        // u64 stream, u64 sweep, u32 colour, const u64* table, u32 units_per_row,
                        // u64 units); both arrays hold hw·h bytes, units cover them in 8×8 tiles
                        // clipped to the array, and the table holds TABLE_LEN entries.
                        unsafe {
                            self.gpu
                                .launch(&self.update)
                                .buf_mut(mine)
                                .buf(other)
                                .arg(&hw)
                                .arg(&h)
                                .arg(&self.q)
                                .arg(&seed)
                                .arg(&stream)
                                .arg(&sweep)
                                .arg(&colour)
                                .buf(&self.table)
                                .arg(&per_row)
                                .arg(&units)
                                .run(cfg)?;
                        }
                    }
                }
            }
            Storage::Packed { colours: bufs, split, bits } => {
                let wr = hw * *bits / 32;
                // Work items: units (4 bits) or words spanning four units (1 bit).
                let units = wr as u64 * (h as u64 / UNIT_ROWS as u64);
                // Split: threads 64m + 32p + l serve item 32m + l, parity p.
                let threads = if *split { 2 * units.div_ceil(32) * 32 } else { units };
                let blocks = threads.div_ceil(BLOCK as u64) as u32;
                let cfg = LaunchConfig { grid_dim: (blocks, 1, 1), block_dim: (BLOCK, 1, 1), shared_mem_bytes: 0 };
                self.gpu.copy_to_device(&[first], &mut self.sweep_base)?;
                let job = PackedSweep {
                    gpu: &self.gpu,
                    update: &self.update,
                    neg_table: &self.neg_table,
                    sweep_base: &self.sweep_base,
                    cfg,
                    wr,
                    h,
                    seed,
                    stream,
                    units,
                    ising: (*bits == 1).then_some(self.ising),
                };
                let mut done = 0;
                if count >= GRAPH_SWEEPS {
                    let key = (seed, stream, self.table_version);
                    if self.graph.as_ref().is_none_or(|(k, _)| *k != key) {
                        self.graph = None;
                        let graph = self.gpu.capture(|| {
                            for add in 0..GRAPH_SWEEPS {
                                job.sweep(bufs, add)?;
                            }
                            // SAFETY: potts_advance(u64* base, u64 n) writes the one u64 of
                            // sweep_base, which no other node of the graph writes.
                            unsafe {
                                self.gpu.launch(&self.advance).buf(&self.sweep_base).arg(&GRAPH_SWEEPS).run(
                                    LaunchConfig { grid_dim: (1, 1, 1), block_dim: (32, 1, 1), shared_mem_bytes: 0 },
                                )
                            }
                        })?;
                        self.graph = Some((key, graph));
                    }
                    let (_, graph) = self.graph.as_ref().expect("recorded above");
                    while count - done >= GRAPH_SWEEPS {
                        graph.launch()?;
                        done += GRAPH_SWEEPS;
                    }
                }
                // The rest one launch at a time, after the graph's advances.
                for add in 0..count - done {
                    job.sweep(bufs, add)?;
                }
            }
        }
        Ok(())
    }

    fn census(&mut self) -> Result<Census> {
        self.gpu.memset_bytes(&mut self.counts, 0)?;
        let hw = (self.width / 2) as u32;
        let h = self.height as u32;
        match &self.storage {
            Storage::Generic(bufs) => {
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
            Storage::Packed { colours: bufs, bits, .. } => {
                let wr = hw * *bits / 32;
                let cfg = grid_stride(wr as u64 * h as u64, self.max_blocks);
                // SAFETY: potts_packed{4,1}_census(const u32*, const u32*, u32 wr, u32 h, u64* out):
                // both arrays hold wr·h words; the 4-bit module was compiled with POTTS_Q = q and
                // the 1-bit kernel runs q = 2 only, so they write out[0..=q], which holds 1 + q
                // counters.
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
        Ok(Census { equal_bonds: out[0], counts: out[1..].to_vec() })
    }

    fn synchronize(&mut self) -> Result<()> {
        Ok(self.gpu.synchronize()?)
    }
}
