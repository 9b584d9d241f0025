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
