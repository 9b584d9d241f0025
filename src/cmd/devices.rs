//! `warpmc devices`: what this machine offers.

use clap::Args;
use warpmc_gpu::{DeviceInfo, Probe, Target};

#[derive(Debug, Args)]
pub(crate) struct DevicesArgs {
    /// Print JSON (driver, NVRTC, devices, CPU threads) instead of text.
    #[arg(long)]
    json: bool,
}

pub(crate) fn run(args: DevicesArgs) -> anyhow::Result<()> {
    let probe = warpmc_gpu::probe();
    let cpu_threads = rayon::current_num_threads();
    // The listing comes first either way: a bad WARPMC_DEVICE is reported
    // after it, as the error every GPU command would give.
    let selection = check_selection(&probe);
    if args.json {
        let value = serde_json::json!({
            "cuda_usable": probe.unusable_reason().is_none(),
            "reason": probe.unusable_reason(),
            "driver": ok_or_error(&probe.driver)?,
            "nvrtc": ok_or_error(&probe.nvrtc)?,
            "devices": ok_or_error(&probe.devices)?,
            "cpu_threads": cpu_threads,
            "warpmc_device": std::env::var("WARPMC_DEVICE").ok(),
        });
        stdoutln!("{}", serde_json::to_string_pretty(&value)?);
    } else {
        crate::cmd::write_stdout(format_args!("{}", describe(&probe, cpu_threads)))?;
    }
    selection
}

/// Whether `WARPMC_DEVICE` names a GPU this machine has: not an ordinal is
/// an error everywhere, and an ordinal past the devices the driver lists
/// would fail every GPU command. With no usable driver there is nothing to
/// check it against (`auto` then runs on the CPU whatever it says).
fn check_selection(probe: &Probe) -> anyhow::Result<()> {
    let ordinal = warpmc_gpu::device_ordinal()?;
    if let Ok(devices) = &probe.devices
        && !devices.is_empty()
        && ordinal >= devices.len()
    {
        let last = devices.len() - 1;
        anyhow::bail!(
            "WARPMC_DEVICE={ordinal} names no GPU of this machine (it has {}); unset it or give 0 to {last}",
            if last == 0 { "GPU 0 only".to_string() } else { format!("GPUs 0 to {last}") }
        );
    }
    Ok(())
}

/// The value itself, or `{"error": reason}`.
fn ok_or_error<T: serde::Serialize>(r: &Result<T, String>) -> serde_json::Result<serde_json::Value> {
    match r {
        Ok(v) => serde_json::to_value(v),
        Err(e) => Ok(serde_json::json!({ "error": e })),
    }
}

fn gib(bytes: u64) -> f64 {
    bytes as f64 / (1u64 << 30) as f64
}

fn describe(probe: &Probe, cpu_threads: usize) -> String {
    let mut s = String::new();
    match &probe.driver {
        Ok(d) => {
            s += &format!("CUDA driver: {} (supports CUDA {}.{})\n", d.library, d.cuda_version.0, d.cuda_version.1)
        }
        Err(e) => s += &format!("CUDA driver: not usable: {e}\n"),
    }
    match &probe.nvrtc {
        Ok(n) => {
            let lo = n.archs.iter().min().copied().unwrap_or(0);
            let hi = n.archs.iter().max().copied().unwrap_or(0);
            s += &format!(
                "NVRTC: {} (version {}.{}, targets sm_{lo} to sm_{hi})\n",
                n.library, n.version.0, n.version.1
            );
        }
        Err(e) => s += &format!("NVRTC: not usable: {e}\n"),
    }
    if let Ok(devices) = &probe.devices {
        for d in devices {
            s += &device_lines(d, probe);
        }
    }
    match probe.unusable_reason() {
        None => s += &format!("CPU backend: {cpu_threads} thread{}\n", if cpu_threads == 1 { "" } else { "s" }),
        Some(reason) => {
            s += &format!("no CUDA device ({reason})\n");
            s +=
                &format!("CPU backend: {cpu_threads} thread{} will be used\n", if cpu_threads == 1 { "" } else { "s" });
        }
    }
    s
}

fn device_lines(d: &DeviceInfo, probe: &Probe) -> String {
    let target = match &probe.nvrtc {
        Ok(n) => match Target::for_device(d.compute_capability, &n.archs) {
            Ok(t @ Target::Cubin { .. }) => format!("kernels compiled for {}", t.name()),
            Ok(t) => format!("kernels compiled to {} PTX (NVRTC does not know {})", t.name(), d.arch()),
            Err(e) => e.to_string(),
        },
        Err(_) => "no NVRTC to compile kernels".to_string(),
    };
    let mut s = format!("GPU {}: {}\n", d.ordinal, d.name);
    s += &format!("  compute capability {}.{} ({target})\n", d.compute_capability.0, d.compute_capability.1);
    s += &format!(
        "  {} SMs x {} threads, {:.1} GiB memory, {:.1} MiB L2, {} KiB shared memory per block",
        d.sm_count,
        d.max_threads_per_sm,
        gib(d.total_memory),
        d.l2_cache as f64 / (1 << 20) as f64,
        d.max_shared_per_block_optin / 1024
    );
    if let Some(khz) = d.sm_clock_khz {
        s += &format!(", {} MHz", khz / 1000);
    }
    if let Some(bits) = d.memory_bus_bits {
        s += &format!(", {bits}-bit memory bus");
    }
    s += "\n";
    s
}
