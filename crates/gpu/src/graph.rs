//! CUDA graphs: a sequence of launches recorded once and replayed with one
//! call, for work made of many short kernels where launching each from the
//! host would cost more than running it.

use cudarc::driver::CudaGraph;
use cudarc::driver::sys::{CUgraphInstantiate_flags, CUstreamCaptureMode};

use crate::device::Gpu;
use crate::error::{DriverContext, GpuError, Result};

/// A recorded sequence of operations on a [`Gpu`]'s stream.
pub struct Graph {
    inner: CudaGraph,
}

impl std::fmt::Debug for Graph {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Graph")
    }
}

impl Gpu {
    /// Records what `record` issues on this GPU's stream (nothing runs yet)
    /// into a graph. Kernel arguments are captured by value: what a replay
    /// should see change must be read by the kernels from device memory.
    pub fn capture(&self, record: impl FnOnce() -> Result<()>) -> Result<Graph> {
        self.stream
            .begin_capture(CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_THREAD_LOCAL)
            .during("cuStreamBeginCapture")?;
        let recorded = record();
        // End the capture whatever happened, so the stream stays usable.
        let graph = self.stream.end_capture(CUgraphInstantiate_flags(0)).during("cuStreamEndCapture");
        recorded?;
        match graph? {
            Some(inner) => Ok(Graph { inner }),
            None => Err(GpuError::InvalidArgument("the graph capture recorded nothing".into())),
        }
    }
}

impl Graph {
    /// Queues one replay on the stream it was recorded from.
    pub fn launch(&self) -> Result<()> {
        self.inner.launch().during("cuGraphLaunch")
    }
}
