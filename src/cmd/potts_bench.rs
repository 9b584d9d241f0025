//! `warpmc potts bench`: the Potts kernels timed beside the baseline kernel
//! of Ferrero et al. (2012), ensembles beside single lattices,
//! Swendsen–Wang beside Metropolis, and the autocorrelation study.

use std::io::Write;

use anyhow::bail;
use clap::Args;
use warpmc_bench::potts::{BenchRow, PottsBenchConfig, run_potts_bench};
use warpmc_bench::potts_ensemble::{EnsembleBenchConfig, EnsembleRow, run_ensemble_bench};
use warpmc_potts::{Algorithm, BackendChoice, PottsModel};

use super::potts::{no_repeats, with_error};

#[derive(Debug, Args)]
pub(crate) struct BenchArgs {
    /// Lattice sizes L (square), comma separated.
    #[arg(long, value_delimiter = ',', default_value = "512,1024,2048,4096,8192,16384,32768")]
    sizes: Vec<usize>,
    /// Values of q, comma separated.
    #[arg(long = "q", value_delimiter = ',', default_value = "2,9")]
    qs: Vec<u32>,
    /// Backends: all (CPU, and CUDA with its baseline when a device is
    /// usable), cpu or cuda.
    #[arg(long, default_value = "all")]
    backend: String,
    /// Largest L timed on the CPU.
    #[arg(long, value_name = "L", default_value_t = 32768)]
    cpu_max_size: usize,
    /// Seconds of timing per row (after a warm-up).
    #[arg(long, default_value_t = 1.0)]
    seconds: f64,
    /// Print one JSON object per row instead of a table.
    #[arg(long)]
    json: bool,
    /// Ensemble rows (many lattices advanced together, each beside a single
    /// lattice timed in the same run): on (after the single-lattice rows),
    /// off, or only.
    #[arg(long, value_name = "WHEN", default_value = "on")]
    ensembles: String,
    /// Size and number of the small lattices of the ensemble rows (L×N).
    #[arg(long, value_name = "LxN", default_value = "64x1024")]
    ensemble_small: String,
    /// Size and number of the large lattices of the CUDA ensemble rows
    /// (L×N), beside one lattice of --ensemble-single [default: 2048x16].
    #[arg(long, value_name = "LxN")]
    ensemble_large: Option<String>,
    /// The single large lattice the large CUDA ensemble is compared with
    /// [default: 16384].
    #[arg(long, value_name = "L")]
    ensemble_single: Option<usize>,
    /// Time Swendsen–Wang cluster sweeps instead, beside Metropolis on the
    /// same lattice, for each --q and --sizes (e.g. --q 2 --sizes 8192).
    #[arg(long, conflicts_with = "autocorrelation")]
    swendsen_wang: bool,
    /// Measure instead the integrated autocorrelation time of the energy
    /// at T_c for each algorithm and --tau-sizes, each beside Metropolis at
    /// the same size, and fit the dynamic exponent z (τ ∝ L^z).
    #[arg(long, help_heading = "Autocorrelation study")]
    autocorrelation: bool,
    /// q of the autocorrelation study.
    #[arg(long, value_name = "Q", default_value_t = 2, help_heading = "Autocorrelation study")]
    tau_q: u32,
    /// Lattice sizes of the autocorrelation study.
    #[arg(
        long,
        value_name = "L",
        value_delimiter = ',',
        default_value = "16,32,64,128",
        help_heading = "Autocorrelation study"
    )]
    tau_sizes: Vec<usize>,
    /// Algorithms of the autocorrelation study (Metropolis is always
    /// measured: the speed-ups are ratios to it).
    #[arg(
        long,
        value_name = "A",
        value_delimiter = ',',
        default_value = "metropolis,heat-bath,swendsen-wang,wolff",
        help_heading = "Autocorrelation study"
    )]
    tau_algorithms: Vec<Algorithm>,
    /// Length of each run in units of its τ_int (the larger of e's and
    /// m's; the run doubles until it is that long or --tau-seconds is spent).
    #[arg(long, value_name = "N", default_value_t = 1000.0, help_heading = "Autocorrelation study")]
    tau_length: f64,
    /// Most seconds per run (shorter runs report how many τ_int they covered).
    #[arg(long, value_name = "SECS", default_value_t = 120.0, help_heading = "Autocorrelation study")]
    tau_seconds: f64,
}

/// The longest a benchmark row may be timed, in seconds (an hour, as
/// `bench transpose --min-time`).
const MOST_BENCH_SECONDS: f64 = 3600.0;

pub(crate) fn run_bench(args: BenchArgs) -> anyhow::Result<()> {
    let (want_cpu, want_cuda) = match args.backend.as_str() {
        "all" => (true, true),
        "cpu" => (true, false),
        "cuda" => (false, true),
        other => bail!("unknown --backend '{other}' (expected all, cpu or cuda)"),
    };
    if !(args.seconds > 0.0 && args.seconds <= MOST_BENCH_SECONDS) {
        bail!("--seconds must be positive and at most {MOST_BENCH_SECONDS}");
    }
    no_repeats("--q", &args.qs)?;
    no_repeats("--sizes", &args.sizes)?;
    no_repeats("--tau-sizes", &args.tau_sizes)?;
    for &q in &args.qs {
        PottsModel::new(q, 2, 2)?;
    }
    for &l in &args.sizes {
        PottsModel::new(2, l, l)?;
    }
    let (single_rows, ensemble_rows) = match args.ensembles.as_str() {
        "on" => (true, true),
        "off" => (true, false),
        "only" => (false, true),
        other => bail!("unknown --ensembles '{other}' (expected on, off or only)"),
    };
    if args.swendsen_wang {
        return swendsen_wang_rows(&args, want_cpu, want_cuda);
    }
    if args.autocorrelation {
        return autocorrelation_study(&args);
    }
    let small = parse_l_by_n("--ensemble-small", &args.ensemble_small)?;
    let large = parse_l_by_n("--ensemble-large", args.ensemble_large.as_deref().unwrap_or("2048x16"))?;
    let ensemble_single = args.ensemble_single.unwrap_or(16384);
    PottsModel::new(2, ensemble_single, ensemble_single)?;
    if single_rows {
        // Every size's lattice and copies, before any row is printed.
        for &q in &args.qs {
            for &l in &args.sizes {
                PottsModel::new(q, l, l)?.check_host_memory(0)?;
            }
        }
    }
    if want_cpu && ensemble_rows {
        // Before any row is printed.
        warpmc_potts::CpuEnsemble::check_host_memory(&PottsModel::new(2, small.0, small.0)?, small.1)?;
    }
    let gpu = if want_cuda {
        let choice = if args.backend == "all" { BackendChoice::Auto } else { BackendChoice::Cuda };
        match warpmc_gpu::select(choice)? {
            warpmc_gpu::Device::Cuda(g) => Some(g),
            cpu => {
                noteln!("note: {}; timing the CPU only", cpu.fallback().unwrap_or("no GPU"));
                None
            }
        }
    } else {
        None
    };
    if gpu.is_none() && ensemble_rows && (args.ensemble_large.is_some() || args.ensemble_single.is_some()) {
        noteln!("note: --ensemble-large and --ensemble-single set CUDA rows; without a GPU they are not timed");
    }
    if gpu.is_none() && single_rows && args.sizes.iter().all(|&l| l > args.cpu_max_size) {
        let why = format!("every --sizes is above --cpu-max-size {} and only the CPU is timed", args.cpu_max_size);
        if !ensemble_rows {
            bail!("nothing to time: {why}");
        }
        noteln!("note: no single-lattice rows: {why}");
    }
    let mut stdout = super::Stdout::lock();
    let cpu_threads = rayon::current_num_threads();
    let mut copy_gbs = None;
    if let Some(g) = &gpu {
        let i = g.info();
        let bw = g.copy_bandwidth_gbs(1 << 30)?;
        copy_gbs = Some(bw);
        if !args.json {
            writeln!(
                stdout,
                "# GPU: {} ({} SMs, {} MiB L2); device copy bandwidth {:.0} GB/s (cuMemcpyDtoD of 1 GiB, 2·bytes/time)",
                i.name,
                i.sm_count,
                i.l2_cache >> 20,
                bw
            )?;
        }
    }
    if !args.json {
        writeln!(stdout, "# CPU: {cpu_threads} threads; temperature T_c(q) = 1/ln(1+√q), random start")?;
    }
    if single_rows {
        single_lattice_rows(&args, gpu.clone(), want_cpu, cpu_threads, copy_gbs, &mut stdout)?;
    }
    if ensemble_rows {
        if !args.json {
            writeln!(
                stdout,
                "# ensembles: every member its own chain and temperature (T_c ± 5 %); flips/ns of all members, \
                 beside one lattice timed now"
            )?;
            writeln!(
                stdout,
                "{:>3} {:>6} {:>7} {:>26} {:>8} {:>10} {:>20} {:>10} {:>8}",
                "q", "L", "members", "kernel", "sweeps", "flips/ns", "reference", "its flips/ns", "ratio"
            )?;
        }
        let cfg = EnsembleBenchConfig {
            qs: args.qs.clone(),
            small,
            large,
            single: ensemble_single,
            cpu: want_cpu,
            gpu,
            seconds: args.seconds,
        };
        run_ensemble_bench(&cfg, |r: &EnsembleRow| -> anyhow::Result<()> {
            if args.json {
                writeln!(stdout, "{}", serde_json::to_value(r)?)?;
            } else {
                writeln!(
                    stdout,
                    "{:>3} {:>6} {:>7} {:>26} {:>8} {:>10.3} {:>20} {:>10.3} {:>7.2}x",
                    r.q,
                    r.size,
                    r.members,
                    r.kernel,
                    r.sweeps,
                    r.flips_per_ns,
                    r.reference,
                    r.reference_flips_per_ns,
                    r.ratio
                )?;
            }
            stdout.flush()?;
            Ok(())
        })?;
    }
    Ok(())
}

/// The single-lattice rows: the baseline, every CUDA kernel, the CPU.
fn single_lattice_rows(
    args: &BenchArgs,
    gpu: Option<warpmc_gpu::Gpu>,
    want_cpu: bool,
    cpu_threads: usize,
    copy_gbs: Option<f64>,
    stdout: &mut impl Write,
) -> anyhow::Result<()> {
    if !args.json {
        writeln!(
            stdout,
            "# GB/s: the least traffic of a sweep (3 lattice passes at the kernel's bytes per spin) per second"
        )?;
        writeln!(
            stdout,
            "{:>3} {:>6} {:>14} {:>8} {:>10} {:>10} {:>12} {:>8} {:>8} {:>12}",
            "q", "L", "kernel", "sweeps", "ns/flip", "flips/ns", "vs baseline", "GB/s", "of copy", "ns/flip/core"
        )?;
    }
    let cfg = PottsBenchConfig {
        qs: args.qs.clone(),
        sizes: args.sizes.clone(),
        cpu: want_cpu,
        cpu_max_size: args.cpu_max_size,
        gpu,
        seconds: args.seconds,
    };
    run_potts_bench(&cfg, |rows: &[BenchRow]| -> anyhow::Result<()> {
        let base = rows.iter().find(|r| r.kernel == "cuda-baseline").map(|r| r.flips_per_ns);
        for r in rows {
            let ratio = base.map(|b| r.flips_per_ns / b);
            let is_cpu = r.kernel.starts_with("cpu");
            let of_copy = copy_gbs.filter(|_| !is_cpu).map(|c| r.gbs / c);
            let per_core = is_cpu.then_some(r.ns_per_flip * cpu_threads as f64);
            if args.json {
                let mut v = serde_json::to_value(r)?;
                v["vs_baseline"] = serde_json::json!(ratio);
                v["copy_gbs"] = serde_json::json!(copy_gbs);
                v["of_copy"] = serde_json::json!(of_copy);
                v["cpu_threads"] = serde_json::json!(cpu_threads);
                v["ns_per_flip_per_core"] = serde_json::json!(per_core);
                writeln!(stdout, "{v}")?;
            } else {
                let ratio = ratio.map_or("-".to_string(), |x| format!("{x:.2}x"));
                let of_copy = of_copy.map_or("-".to_string(), |x| format!("{:.0}%", 100.0 * x));
                let per_core = per_core.map_or("-".to_string(), |x| format!("{x:.3}"));
                writeln!(
                    stdout,
                    "{:>3} {:>6} {:>14} {:>8} {:>10.4} {:>10.3} {:>12} {:>8.0} {:>8} {:>12}",
                    r.q, r.size, r.kernel, r.sweeps, r.ns_per_flip, r.flips_per_ns, ratio, r.gbs, of_copy, per_core
                )?;
            }
            stdout.flush()?;
        }
        Ok(())
    })
}

/// `--swendsen-wang`: cluster sweeps beside Metropolis (warpmc-bench's
/// potts_cluster), one row per backend, q and L.
fn swendsen_wang_rows(args: &BenchArgs, want_cpu: bool, want_cuda: bool) -> anyhow::Result<()> {
    use warpmc_bench::potts_cluster::{ClusterBenchConfig, ClusterRow, run_cluster_bench};
    let gpu = if want_cuda {
        let choice = if args.backend == "all" { BackendChoice::Auto } else { BackendChoice::Cuda };
        select_device(choice)?.gpu().cloned()
    } else {
        None
    };
    let mut stdout = super::Stdout::lock();
    if !args.json {
        writeln!(stdout, "# Swendsen–Wang at T_c(q) = 1/ln(1+√q) from a random start; updates/ns = sites·sweeps/time")?;
        writeln!(
            stdout,
            "{:>3} {:>6} {:>5} {:>8} {:>10} {:>11} {:>10} {:>16} {:>8} {:>10} {:>9}",
            "q",
            "L",
            "on",
            "sweeps",
            "ms/sweep",
            "updates/ns",
            "e/site",
            "metropolis upd/ns",
            "ratio",
            "copy GB/s",
            "in copies"
        )?;
    }
    let cfg = ClusterBenchConfig {
        qs: args.qs.clone(),
        sizes: args.sizes.clone(),
        cpu: want_cpu,
        cpu_max_size: args.cpu_max_size,
        gpu,
        seconds: args.seconds,
    };
    run_cluster_bench(&cfg, |r: &ClusterRow| -> anyhow::Result<()> {
        if args.json {
            writeln!(stdout, "{}", serde_json::to_value(r)?)?;
        } else {
            let opt = |v: Option<f64>, p: usize| v.map_or("-".to_string(), |x| format!("{x:.p$}"));
            writeln!(
                stdout,
                "{:>3} {:>6} {:>5} {:>8} {:>10.3} {:>11.2} {:>10.5} {:>16.2} {:>7.3}x {:>10} {:>9}",
                r.q,
                r.size,
                r.backend,
                r.sweeps,
                r.ms_per_sweep,
                r.updates_per_ns,
                r.energy_per_site,
                r.metropolis_updates_per_ns,
                r.vs_metropolis,
                opt(r.copy_gbs, 0),
                opt(r.sweep_in_copies, 2)
            )?;
        }
        stdout.flush()?;
        Ok(())
    })
}

/// `--autocorrelation`: τ_int of the energy at T_c per algorithm and size,
/// the speed-up over Metropolis at each size, and the fitted exponents
/// beside the literature's.
fn autocorrelation_study(args: &BenchArgs) -> anyhow::Result<()> {
    use warpmc_bench::potts_autocorrelation::{AutocorrelationConfig, TauRow, run_autocorrelation_study};
    let choice = match args.backend.as_str() {
        "all" => BackendChoice::Auto,
        "cpu" => BackendChoice::Cpu,
        _ => BackendChoice::Cuda,
    };
    if !(args.tau_length >= 1.0 && args.tau_length <= 1e6) {
        bail!("--tau-length must be between 1 and 1e6 τ_int");
    }
    if !(args.tau_seconds > 0.0 && args.tau_seconds <= MOST_BENCH_SECONDS) {
        bail!("--tau-seconds must be positive and at most {MOST_BENCH_SECONDS}");
    }
    let given = &args.tau_algorithms;
    if let Some((_, a)) = given.iter().enumerate().find(|(i, a)| given[..*i].contains(a)) {
        bail!("--tau-algorithms names {a} twice; give each algorithm once");
    }
    let mut algorithms = vec![Algorithm::Metropolis];
    algorithms.extend(args.tau_algorithms.iter().filter(|&&a| a != Algorithm::Metropolis));
    // Every size and algorithm is checked before anything is printed.
    PottsModel::new(args.tau_q, 2, 2)?;
    for &l in &args.tau_sizes {
        let model = PottsModel::new(args.tau_q, l, l)?;
        for a in &algorithms {
            a.check(&model)?;
            a.check_ergodic(&model)?;
        }
    }
    let device = select_device(choice)?;
    let cfg = AutocorrelationConfig {
        q: args.tau_q,
        sizes: args.tau_sizes.clone(),
        algorithms,
        device,
        taus: args.tau_length,
        min_sweeps: 2_000,
        max_seconds: args.tau_seconds,
        seed: 1,
    };
    let mut stdout = super::Stdout::lock();
    if !args.json {
        writeln!(
            stdout,
            "# τ_int of the energy per site at T_c = 1/ln(1+√q), q = {}, in sweeps (Wolff: L²/<|C|> clusters); \
             ordered start, the first tenth of each run dropped; Γ-method with Sokal's window",
            cfg.q
        )?;
        writeln!(
            stdout,
            "{:>14} {:>5} {:>5} {:>9} {:>18} {:>7} {:>9} {:>20} {:>7} {:>20} {:>8}",
            "algorithm",
            "L",
            "on",
            "sweeps",
            "tau_int(e)",
            "N/tau",
            "vs metro",
            "tau_int(m)",
            "N/tau",
            "energy",
            "upd/ns"
        )?;
    }
    let mut rows: Vec<TauRow> = Vec::new();
    let fits = run_autocorrelation_study(&cfg, |r: &TauRow| -> anyhow::Result<()> {
        let metropolis = rows.iter().find(|m| m.algorithm == "metropolis" && m.size == r.size).map(|m| m.tau_int);
        let speedup = metropolis.map(|m| m / r.tau_int);
        if args.json {
            let mut v = serde_json::to_value(r)?;
            v["metropolis_tau_over_this"] = serde_json::json!(speedup);
            writeln!(stdout, "{v}")?;
        } else {
            writeln!(
                stdout,
                "{:>14} {:>5} {:>5} {:>9} {:>18} {:>7.0} {:>9} {:>20} {:>7.0} {:>20} {:>8.3}",
                r.algorithm,
                r.size,
                r.backend,
                r.sweeps,
                format!("{:.3} ± {:.3}", r.tau_int, r.tau_int_err),
                r.taus,
                speedup.map_or("-".to_string(), |s| format!("{s:.1}x")),
                format!("{:.3} ± {:.3}", r.tau_int_m, r.tau_int_m_err),
                r.taus_m,
                with_error(r.energy, r.energy_err),
                r.updates_per_ns,
            )?;
        }
        stdout.flush()?;
        rows.push(r.clone());
        Ok(())
    })?;
    let literature = |a: &str| match (a, cfg.q) {
        ("metropolis" | "heat-bath", 2) => "2.17 (Nightingale and Blöte 1996)",
        ("swendsen-wang", 2) => "0.2-0.3 or log L (Swendsen and Wang 1987; Baillie and Coddington 1991)",
        ("wolff", 2) => "about 0.25 in sweeps (Wolff 1989; Coddington and Baillie 1992)",
        _ => "-",
    };
    for f in &fits {
        if args.json {
            let mut v = serde_json::to_value(f)?;
            v["literature"] = serde_json::json!(literature(&f.algorithm));
            writeln!(stdout, "{v}")?;
        } else {
            writeln!(
                stdout,
                "# {}: z = {:.2} ± {:.2} from tau_int(e), {:.2} ± {:.2} from tau_int(m), over L = {:?}; literature: {}",
                f.algorithm,
                f.z,
                f.z_err,
                f.z_m,
                f.z_m_err,
                f.sizes,
                literature(&f.algorithm)
            )?;
        }
    }
    Ok(())
}

/// "LxN" (or "L×N") as (L, N).
fn parse_l_by_n(flag: &str, text: &str) -> anyhow::Result<(usize, usize)> {
    let bad = || anyhow::anyhow!("{flag} must be LxN (lattice size times lattices, e.g. 64x1024), got '{text}'");
    let (l, n) = text.split_once(['x', '×']).ok_or_else(bad)?;
    let (l, n): (usize, usize) = (l.trim().parse().map_err(|_| bad())?, n.trim().parse().map_err(|_| bad())?);
    if n == 0 {
        return Err(bad());
    }
    PottsModel::new(2, l, l)?;
    Ok((l, n))
}

/// The device `choice` selects, with a note when it falls back to the CPU.
fn select_device(choice: BackendChoice) -> anyhow::Result<warpmc_gpu::Device> {
    let device = warpmc_gpu::select(choice)?;
    if let Some(why) = device.fallback() {
        noteln!("note: {why}; running on the CPU");
    }
    Ok(device)
}
