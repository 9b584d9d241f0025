//! The GPU side: [`CudaPrims`] methods over device buffers
//! (`kernels/atomics.cu`, one module per value type plus one for
//! histograms). [`crate::Primitives::reduce_by_key_dense`] and
//! [`crate::Primitives::histogram`] call the `_into` forms on zeroed bins.

use warpmc_gpu::{DeviceBuffer, Kernel, LaunchConfig};

use super::{
    AtomicAdd, AtomicStrategy, AtomicValue, AtomicsConfig, AutoInputs, BLOCK, MAX_BLOCKS_PER_SM, PeerMethod,
    check_nbins, choose_strategy, grid_blocks, histogram_source, shared_blocks_per_sm, value_source,
};
use crate::CudaPrims;
use crate::error::{Result, ensure};

/// Dynamic shared memory a block gets without opting in.
const DEFAULT_SHARED_BYTES: usize = 48 * 1024;

impl CudaPrims {
    /// The shared memory one block of the privatized kernels may use.
    fn atomics_shared_limit(&self) -> usize {
        self.gpu().info().max_shared_per_block_optin as usize
    }

    /// The concrete strategy a call with `config` runs for `n` elements into
    /// `nbins` bins of `value_bytes` each: `config.strategy`, or for
    /// [`AtomicStrategy::Auto`] what [`choose_strategy`] picks on this device.
    pub fn atomics_strategy(
        &self,
        n: usize,
        nbins: usize,
        value_bytes: usize,
        config: impl Into<AtomicsConfig>,
    ) -> AtomicStrategy {
        let config = config.into();
        match config.strategy {
            AtomicStrategy::Auto => choose_strategy(&AutoInputs {
                n,
                nbins,
                value_bytes,
                order: config.order,
                sm_count: self.gpu().info().sm_count,
                max_shared_bytes: self.atomics_shared_limit(),
            }),
            s => s,
        }
    }

    /// Adds `values[i]` to `bins[keys[i]]` for every `i` with `keys[i] <
    /// bins.len()`, without zeroing `bins` first (accumulate over several
    /// calls; zero with `Gpu::memset_bytes`). Nothing waits for the kernel.
    /// Returns the strategy that ran (what `Auto` resolved to).
    ///
    /// `config`: an [`AtomicStrategy`] or an [`AtomicsConfig`] (strategy,
    /// key-order hint, hardware or compare-and-swap atomics). Float sums are
    /// added in an order that depends on the strategy and on timing, so they
    /// vary in the last bits; integer sums are exact (wrapping).
    ///
    /// Errors: `keys` and `values` of different lengths, more than 2^32 − 1
    /// bins, a shared-memory strategy whose bins do not fit in shared
    /// memory.
    pub fn reduce_by_key_dense_into<V: AtomicValue>(
        &self,
        keys: &DeviceBuffer<u32>,
        values: &DeviceBuffer<V>,
        bins: &mut DeviceBuffer<V>,
        config: impl Into<AtomicsConfig>,
    ) -> Result<AtomicStrategy> {
        let config = config.into();
        ensure(keys.len() == values.len(), || {
            format!("reduce_by_key_dense: {} keys but {} values", keys.len(), values.len())
        })?;
        let (n, nbins) = (keys.len(), bins.len());
        check_nbins(nbins)?;
        let strategy = self.atomics_strategy(n, nbins, size_of::<V>(), config);
        let bin_bytes = nbins * size_of::<V>();
        self.check_shared(strategy, bin_bytes)?;
        if n == 0 || nbins == 0 {
            return Ok(strategy);
        }
        let module = self.module(value_source::<V>, &format!("atomics-{}", V::type_name()))?;
        let kernel = module.kernel(&kernel_name("rbk", strategy, config.add))?;
        let launch = self.atomics_launch(&kernel, n, strategy, bin_bytes)?;
        let (n64, nbins32) = (n as u64, nbins as u32);
        // SAFETY: rbk_<strategy>(const unsigned *keys, const S *values, u64 n,
        // S *bins, unsigned nbins), S the scalar of V: keys and values hold n
        // elements (checked above), values V::WIDTH scalars each, as the
        // module was compiled for V; bins holds nbins values and the kernel
        // touches only bins with key < nbins. 1-D blocks of 256 threads; the
        // shared strategies get nbins * size_of::<V>() bytes of dynamic
        // shared memory (within the opt-in limit, checked above and opted in
        // by atomics_launch).
        unsafe { self.gpu().launch(&kernel).buf(keys).buf(values).arg(&n64).buf_mut(bins).arg(&nbins32).run(launch)? };
        Ok(strategy)
    }

    /// Adds the histogram of `keys` into `bins` (`bins.len()` bins), without
    /// zeroing them first; returns the strategy that ran.
    pub fn histogram_into(
        &self,
        keys: &DeviceBuffer<u32>,
        bins: &mut DeviceBuffer<u32>,
        config: impl Into<AtomicsConfig>,
    ) -> Result<AtomicStrategy> {
        let config = config.into();
        let (n, nbins) = (keys.len(), bins.len());
        check_nbins(nbins)?;
        let strategy = self.atomics_strategy(n, nbins, size_of::<u32>(), config);
        let bin_bytes = nbins * size_of::<u32>();
        self.check_shared(strategy, bin_bytes)?;
        if n == 0 || nbins == 0 {
            return Ok(strategy);
        }
        let module = self.module(histogram_source, "atomics-hist")?;
        let kernel = module.kernel(&kernel_name("hist", strategy, config.add))?;
        let launch = self.atomics_launch(&kernel, n, strategy, bin_bytes)?;
        let (n64, nbins32) = (n as u64, nbins as u32);
        // SAFETY: hist_<strategy>(const unsigned *keys, u64 n, unsigned *bins,
        // unsigned nbins): keys holds n elements, bins nbins counters, of
        // which only those below nbins are touched; 1-D blocks of 256
        // threads; shared strategies get nbins * 4 bytes of dynamic shared
        // memory (checked and opted in as above).
        unsafe { self.gpu().launch(&kernel).buf(keys).arg(&n64).buf_mut(bins).arg(&nbins32).run(launch)? };
        Ok(strategy)
    }

    /// Every element's peer mask as the kernels find it with `method`: the
    /// lanes of its warp (elements `32w .. 32w + 31`) holding its key, for
    /// [`PeerMethod::Runs`] only those of its run of equal neighbouring keys;
    /// 0 for keys `>= nbins`. For tests of the kernels and for looking at a
    /// key stream.
    pub fn peer_masks(&self, keys: &DeviceBuffer<u32>, nbins: usize, method: PeerMethod) -> Result<DeviceBuffer<u32>> {
        check_nbins(nbins)?;
        let n = keys.len();
        let mut out = self.gpu().alloc_zeros::<u32>(n)?;
        if n == 0 {
            return Ok(out);
        }
        let module = self.module(histogram_source, "atomics-hist")?;
        let kernel = module.kernel("peer_masks")?;
        let blocks = grid_blocks(n, self.gpu().info().sm_count, MAX_BLOCKS_PER_SM);
        let config = LaunchConfig { grid_dim: (blocks, 1, 1), block_dim: (BLOCK, 1, 1), shared_mem_bytes: 0 };
        let (n64, nbins32) = (n as u64, nbins as u32);
        let m = method.code();
        // SAFETY: peer_masks(const unsigned *keys, u64 n, unsigned nbins,
        // unsigned method, unsigned *out): keys and out hold n elements; 1-D
        // blocks of 256 threads.
        unsafe { self.gpu().launch(&kernel).buf(keys).arg(&n64).arg(&nbins32).arg(&m).buf_mut(&mut out).run(config)? };
        Ok(out)
    }

    /// An error unless a shared strategy's bins fit in shared memory.
    fn check_shared(&self, strategy: AtomicStrategy, bin_bytes: usize) -> Result<()> {
        let limit = self.atomics_shared_limit();
        ensure(!strategy.is_shared() || bin_bytes <= limit, || {
            format!(
                "strategy {strategy}: the bins take {bin_bytes} bytes, more than the {limit} bytes of shared memory a \
                 block can have"
            )
        })
    }

    /// The grid for `n` elements (and the shared memory of a privatized
    /// strategy, opted in on `kernel` where it exceeds the default 48 KB).
    fn atomics_launch(
        &self,
        kernel: &Kernel,
        n: usize,
        strategy: AtomicStrategy,
        bin_bytes: usize,
    ) -> Result<LaunchConfig> {
        let sm_count = self.gpu().info().sm_count;
        let (per_sm, shared) = if strategy.is_shared() {
            (shared_blocks_per_sm(bin_bytes, self.atomics_shared_limit()), bin_bytes)
        } else {
            (MAX_BLOCKS_PER_SM, 0)
        };
        if shared > DEFAULT_SHARED_BYTES {
            kernel.set_max_dynamic_shared_bytes(shared as u32)?;
        }
        Ok(LaunchConfig {
            grid_dim: (grid_blocks(n, sm_count, per_sm), 1, 1),
            block_dim: (BLOCK, 1, 1),
            shared_mem_bytes: shared as u32,
        })
    }
}

/// `rbk_runs_cas` and the like.
fn kernel_name(prefix: &str, strategy: AtomicStrategy, add: AtomicAdd) -> String {
    let cas = if add == AtomicAdd::CasLoop { "_cas" } else { "" };
    format!("{prefix}_{}{cas}", strategy.kernel_part())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kernel_names_match_atomics_cu() {
        let cu = include_str!("../../kernels/atomics.cu");
        for s in AtomicStrategy::CONCRETE {
            for add in [AtomicAdd::Hardware, AtomicAdd::CasLoop] {
                let name = kernel_name("rbk", s, add);
                let part = name.trim_start_matches("rbk_");
                assert!(cu.contains(&format!("ATOMICS_KERNEL({part},")), "{name} is not in atomics.cu");
            }
        }
    }
}
