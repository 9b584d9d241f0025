//! The CUDA backend: the lattice lives on the device; only the q + 1 census
//! integers come back per measurement.

use warpmc_gpu::{DeviceBuffer, Gpu, Kernel, KernelSource, LaunchConfig};

use crate::algorithm::{AcceptanceTable, TABLE_LEN};
use crate::backend::Backend;
use crate::error::{PottsError, Result};
use crate::lattice::{Census, Lattice};
use crate::layout::{join, split};
use crate::model::PottsModel;

/// The kernels of this crate, for NVRTC.
pub fn kernel_source() -> KernelSource {
    KernelSource::new("potts.cu", include_str!("../kernels/potts.cu"))
        .header(warpmc_rng::CUDA_HEADER_NAME, warpmc_rng::CUDA_HEADER)
}

/// Bytes of device memory a lattice of `sites` sites needs (the two colour
/// arrays, the table and the census counters).
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

/// A lattice on a CUDA device.
#[derive(Debug)]
pub struct CudaBackend {
    gpu: Gpu,
    width: usize,
    height: usize,
    q: u32,
    colours: [DeviceBuffer<u8>; 2],
    table: DeviceBuffer<u64>,
    counts: DeviceBuffer<u64>,
    update: Kernel,
    census: Kernel,
    block: u32,
    max_blocks: u32,
}

impl CudaBackend {
    /// A backend for `model` on `gpu`, holding the ordered state.
    pub fn new(gpu: Gpu, model: &PottsModel) -> Result<Self> {
        check_fits(&gpu, device_bytes(model.sites()))?;
        let module = gpu.module(&kernel_source())?;
        let n = model.sites() / 2;
        let colours = [gpu.alloc_zeros::<u8>(n)?, gpu.alloc_zeros::<u8>(n)?];
        let table = gpu.alloc_zeros::<u64>(TABLE_LEN)?;
        let counts = gpu.alloc_zeros::<u64>(1 + model.q() as usize)?;
        let max_blocks = gpu.info().sm_count * (gpu.info().max_threads_per_sm / 256).max(1) * 4;
        Ok(CudaBackend {
            update: module.kernel("potts_metropolis_colour")?,
            census: module.kernel("potts_census")?,
            gpu,
            width: model.width(),
            height: model.height(),
            q: model.q(),
            colours,
            table,
            counts,
            block: 256,
            max_blocks,
        })
    }

    /// The device this backend runs on.
    pub fn gpu(&self) -> &Gpu {
        &self.gpu
    }

    fn config(&self, work: u64) -> LaunchConfig {
        let blocks = work.div_ceil(self.block as u64).clamp(1, self.max_blocks as u64) as u32;
        LaunchConfig { grid_dim: (blocks, 1, 1), block_dim: (self.block, 1, 1), shared_mem_bytes: 0 }
    }
}

impl Backend for CudaBackend {
    fn name(&self) -> &'static str {
        "cuda"
    }

    fn description(&self) -> String {
        let i = self.gpu.info();
        format!("{} (device {}, sm_{}{})", i.name, i.ordinal, i.compute_capability.0, i.compute_capability.1)
    }

    fn load(&mut self, lattice: &Lattice) -> Result<()> {
        if (lattice.width(), lattice.height(), lattice.q()) != (self.width, self.height, self.q) {
            return Err(PottsError::InvalidInput("lattice does not match the backend's model".into()));
        }
        let [c0, c1] = split(lattice);
        self.gpu.copy_to_device(&c0, &mut self.colours[0])?;
        self.gpu.copy_to_device(&c1, &mut self.colours[1])?;
        Ok(())
    }

    fn lattice(&mut self) -> Result<Lattice> {
        let c0 = self.gpu.download(&self.colours[0])?;
        let c1 = self.gpu.download(&self.colours[1])?;
        Ok(join(self.width, self.height, self.q, [&c0, &c1]))
    }

    fn set_table(&mut self, table: &AcceptanceTable) -> Result<()> {
        self.gpu.copy_to_device(&table.thresholds, &mut self.table)?;
        Ok(())
    }

    fn sweeps(&mut self, seed: u64, stream: u64, first: u64, count: u64) -> Result<()> {
        let hw = (self.width / 2) as u32;
        let h = self.height as u32;
        let pairs = (self.width * self.height / 4) as u64;
        let cfg = self.config(pairs);
        for sweep in first..first + count {
            for colour in 0u32..2 {
                let (a, b) = self.colours.split_at_mut(1);
                let (mine, other) = if colour == 0 { (&mut a[0], &b[0]) } else { (&mut b[0], &a[0]) };
                // SAFETY: potts_metropolis_colour(u8*, const u8*, u32 hw, u32 h, u32 q, u64 seed,
                // u64 stream, u64 sweep, u32 colour, const u64* table, u64 pairs); both colour
                // arrays hold hw·h bytes and pairs = hw·h/2, so every index j = 2k + e < hw·h;
                // the table holds TABLE_LEN entries.
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
                        .arg(&pairs)
                        .run(cfg)?;
                }
            }
        }
        Ok(())
    }

    fn census(&mut self) -> Result<Census> {
        self.gpu.memset_bytes(&mut self.counts, 0)?;
        let hw = (self.width / 2) as u32;
        let h = self.height as u32;
        let cfg = self.config((self.width * self.height / 2) as u64);
        // SAFETY: potts_census(const u8*, const u8*, u32 hw, u32 h, u32 q, u64* out): both
        // arrays hold hw·h bytes; out holds 1 + q counters and spins are < q.
        unsafe {
            self.gpu
                .launch(&self.census)
                .buf(&self.colours[0])
                .buf(&self.colours[1])
                .arg(&hw)
                .arg(&h)
                .arg(&self.q)
                .buf_mut(&mut self.counts)
                .run(cfg)?;
        }
        let out = self.gpu.download(&self.counts)?;
        Ok(Census { equal_bonds: out[0], counts: out[1..].to_vec() })
    }

    fn synchronize(&mut self) -> Result<()> {
        Ok(self.gpu.synchronize()?)
    }
}
