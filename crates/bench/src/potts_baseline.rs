//! The `updateCUDA` kernel of Ferrero, De Francesco, Wolovick and Cannas
//! (2012), as Wolovick's course notes (2012) give it, as a benchmark
//! baseline (J = 1, h = 0):
//! one byte per spin, 512 × 256 threads with one multiply-with-carry
//! generator each, two random floats per update and an exponential compared
//! in floating point. Every speed-up of the real kernels is reported as a
//! ratio against this kernel, measured in the same run.
//!
//! [`BaselineCpu`] is its CPU reference (same generators, same frames, same
//! float operations) so a test can check the kernel bit for bit.

use warpmc_gpu::{DeviceBuffer, Gpu, Kernel, KernelSource, LaunchConfig};
use warpmc_rng::{Mwc, RandomSource};

use warpmc_potts::Lattice;
use warpmc_potts::layout::{join, side_columns, split};

use crate::error::{BenchError, Result};

/// Rows of a frame: thread rows.
pub const FRAME_ROWS: usize = 512;
/// Colour columns of a frame: threads per row.
pub const FRAME_COLS: usize = 256;
/// Generators (threads): 131072, as in the original.
pub const THREADS: usize = FRAME_ROWS * FRAME_COLS;

/// e^{−ΔE/T} for ΔE = 1 … 4, in f32 as the kernel compares it.
pub fn boltzmann(t: f64) -> [f32; 4] {
    std::array::from_fn(|i| (-((i + 1) as f32) / t as f32).exp())
}

/// The baseline's update rule for one site: the CPU twin of the body of
/// `baseline_update` in kernels/baseline.cu, kept identical to it by the
/// bit-for-bit test in tests/backends.rs.
fn update(old: u8, nbrs: [u8; 4], q: u32, boltz: &[f32; 4], g: &mut Mwc) -> u8 {
    let before = -nbrs.iter().map(|&n| (n == old) as i32).sum::<i32>();
    let u = g.next_f32();
    let step = (1.0f32 + u * (q - 1) as f32) as u8;
    let new = ((old as u32 + step as u32) % q) as u8;
    let after = -nbrs.iter().map(|&n| (n == new) as i32).sum::<i32>();
    let de = after - before;
    let p = g.next_f32();
    if de <= 0 || p <= boltz[(de - 1) as usize] { new } else { old }
}

/// CPU reference of the baseline kernel.
#[derive(Debug)]
pub struct BaselineCpu {
    width: usize,
    height: usize,
    q: u32,
    colours: [Vec<u8>; 2],
    gens: Vec<Mwc>,
}

impl BaselineCpu {
    /// Starts from `lattice` with generators seeded from `seed`.
    pub fn new(lattice: &Lattice, seed: u64) -> Self {
        BaselineCpu {
            width: lattice.width(),
            height: lattice.height(),
            q: lattice.q(),
            colours: split(lattice),
            gens: (0..THREADS as u64).map(|t| Mwc::for_unit(seed, t)).collect(),
        }
    }

    /// One sweep (colour 0 then 1) at temperature `t`.
    pub fn sweep(&mut self, t: f64) {
        let boltz = boltzmann(t);
        let (hw, h) = (self.width / 2, self.height);
        for colour in 0..2 {
            let [c0, c1] = &mut self.colours;
            let (write, read): (&mut Vec<u8>, &Vec<u8>) = if colour == 0 { (c0, c1) } else { (c1, c0) };
            for (tid, g) in self.gens.iter_mut().enumerate() {
                let (ty, tx) = (tid / FRAME_COLS, tid % FRAME_COLS);
                for y in (ty..h).step_by(FRAME_ROWS) {
                    let o = (y + colour) & 1;
                    for xh in (tx..hw).step_by(FRAME_COLS) {
                        let (l, r) = side_columns(xh, o, hw);
                        let nbrs = [
                            read[y * hw + l],
                            read[y * hw + r],
                            read[((y + h - 1) % h) * hw + xh],
                            read[((y + 1) % h) * hw + xh],
                        ];
                        write[y * hw + xh] = update(write[y * hw + xh], nbrs, self.q, &boltz, g);
                    }
                }
            }
        }
    }

    /// The lattice.
    pub fn lattice(&self) -> Lattice {
        join(self.width, self.height, self.q, [&self.colours[0], &self.colours[1]])
    }
}

/// The baseline kernels (`baseline_seed`, `baseline_update`) for NVRTC.
pub fn source() -> KernelSource {
    KernelSource::new("potts_baseline.cu", include_str!("../kernels/potts_baseline.cu"))
        .header(warpmc_rng::CUDA_HEADER_NAME, warpmc_rng::CUDA_HEADER)
        .option(format!("-DBENCH_FRAME_ROWS={FRAME_ROWS}"))
        .option(format!("-DBENCH_FRAME_COLS={FRAME_COLS}"))
}

/// The baseline kernel on a GPU.
#[derive(Debug)]
pub struct BaselineGpu {
    gpu: Gpu,
    width: usize,
    height: usize,
    q: u32,
    colours: [DeviceBuffer<u8>; 2],
    state: DeviceBuffer<u64>,
    mult: DeviceBuffer<u32>,
    boltz: DeviceBuffer<f32>,
    update: Kernel,
}

impl BaselineGpu {
    /// Uploads `lattice` and seeds the generators on the device.
    pub fn new(gpu: Gpu, lattice: &Lattice, seed: u64) -> Result<Self> {
        warpmc_potts::cuda::check_fits(&gpu, lattice.spins().len() as u64 + THREADS as u64 * 12)?;
        let module = gpu.module(&source())?;
        let seed_kernel = module.kernel("baseline_seed")?;
        let [c0, c1] = split(lattice);
        let colours = [gpu.upload(&c0)?, gpu.upload(&c1)?];
        let table = gpu.upload(warpmc_rng::multipliers::table())?;
        let mut state = gpu.alloc_zeros::<u64>(THREADS)?;
        let mut mult = gpu.alloc_zeros::<u32>(THREADS)?;
        let len = table.len() as u32;
        // SAFETY: baseline_seed(u64*, u32*, const u32*, u32, u64) writes state[tid], mult[tid]
        // for tid < THREADS, both buffers hold THREADS entries; table holds `len` entries.
        unsafe {
            gpu.launch(&seed_kernel)
                .buf_mut(&mut state)
                .buf_mut(&mut mult)
                .buf(&table)
                .arg(&len)
                .arg(&seed)
                .run(warpmc_gpu::grid_1d(THREADS, 256))?;
        }
        Ok(BaselineGpu {
            update: module.kernel("baseline_update")?,
            boltz: gpu.alloc_zeros::<f32>(4)?,
            gpu,
            width: lattice.width(),
            height: lattice.height(),
            q: lattice.q(),
            colours,
            state,
            mult,
        })
    }

    /// Sets the temperature.
    pub fn set_temperature(&mut self, t: f64) -> Result<()> {
        Ok(self.gpu.copy_to_device(&boltzmann(t), &mut self.boltz)?)
    }

    /// `count` sweeps.
    pub fn sweeps(&mut self, count: u64) -> Result<()> {
        if self.width / 2 > u32::MAX as usize || self.height > u32::MAX as usize {
            return Err(BenchError::Invalid("lattice too large for the baseline kernel".into()));
        }
        let hw = (self.width / 2) as u32;
        let h = self.height as u32;
        let cfg = LaunchConfig {
            grid_dim: (1, FRAME_ROWS as u32, 1),
            block_dim: (FRAME_COLS as u32, 1, 1),
            shared_mem_bytes: 0,
        };
        for _ in 0..count {
            for colour in 0u32..2 {
                let (a, b) = self.colours.split_at_mut(1);
                let (write, read) = if colour == 0 { (&mut a[0], &b[0]) } else { (&mut b[0], &a[0]) };
                // SAFETY: baseline_update(u8*, const u8*, u32 hw, u32 h, u32 q, u32 colour,
                // const float*, u64*, const u32*): colour arrays hold hw·h bytes and every index
                // is y·hw + xh with y < h, xh < hw; boltz holds 4 floats; state and mult hold one
                // entry per thread of the FRAME_ROWS × FRAME_COLS launch.
                unsafe {
                    self.gpu
                        .launch(&self.update)
                        .buf_mut(write)
                        .buf(read)
                        .arg(&hw)
                        .arg(&h)
                        .arg(&self.q)
                        .arg(&colour)
                        .buf(&self.boltz)
                        .buf_mut(&mut self.state)
                        .buf(&self.mult)
                        .run(cfg)?;
                }
            }
        }
        Ok(())
    }

    /// The lattice (copied back).
    pub fn lattice(&self) -> Result<Lattice> {
        let c0 = self.gpu.download(&self.colours[0])?;
        let c1 = self.gpu.download(&self.colours[1])?;
        Ok(join(self.width, self.height, self.q, [&c0, &c1]))
    }

    /// The device.
    pub fn gpu(&self) -> &Gpu {
        &self.gpu
    }
}
