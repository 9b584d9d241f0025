//! Timing device work with CUDA events.

use cudarc::driver::CudaEvent;
use cudarc::driver::sys::CUevent_flags;

use crate::Gpu;
use crate::error::{DriverContext, Result};

/// Measures device time between [`Gpu::start_timer`] and
/// [`GpuTimer::stop_ms`], with events on the device's stream, so host-side
/// delays between launches do not count and queued work does.
#[derive(Debug)]
pub struct GpuTimer<'a> {
    gpu: &'a Gpu,
    start: CudaEvent,
}

impl Gpu {
    /// Records a start event on the stream.
    pub fn start_timer(&self) -> Result<GpuTimer<'_>> {
        let start = self.ctx.new_event(Some(CUevent_flags::CU_EVENT_DEFAULT)).during("cuEventCreate")?;
        start.record(&self.stream).during("cuEventRecord")?;
        Ok(GpuTimer { gpu: self, start })
    }
}

impl GpuTimer<'_> {
    /// Records a stop event, waits for it and returns the elapsed device
    /// time in milliseconds (resolution about half a microsecond).
    pub fn stop_ms(self) -> Result<f64> {
        let stop = self.gpu.ctx.new_event(Some(CUevent_flags::CU_EVENT_DEFAULT)).during("cuEventCreate")?;
        stop.record(&self.gpu.stream).during("cuEventRecord")?;
        let ms = self.start.elapsed_ms(&stop).during("cuEventElapsedTime")?;
        Ok(f64::from(ms))
    }
}

impl crate::Gpu {
    /// Device-to-device copy bandwidth in GB/s (2 × bytes per copy / time:
    /// every byte is read once and written once) over a buffer of `bytes`
    /// bytes, the best of five timings of ten driver copies each. Kernels
    /// that stream memory report their speed as a fraction of this.
    pub fn copy_bandwidth_gbs(&self, bytes: usize) -> Result<f64> {
        let src = self.alloc_zeros::<u8>(bytes)?;
        let mut dst = self.alloc_zeros::<u8>(bytes)?;
        self.copy_device(&src, &mut dst)?;
        self.synchronize()?;
        let mut best = f64::INFINITY;
        for _ in 0..5 {
            let timer = self.start_timer()?;
            for _ in 0..10 {
                self.copy_device(&src, &mut dst)?;
            }
            best = best.min(timer.stop_ms()? / 10.0);
        }
        Ok(2.0 * bytes as f64 / (best * 1e-3) / 1e9)
    }
}
