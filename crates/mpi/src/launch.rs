//! What a launcher tells a process, and how a run is split.

use std::str::FromStr;

use crate::error::MpiError;

/// This process's place among those an MPI launcher started, read from the
/// variables the launcher sets: `OMPI_COMM_WORLD_RANK` and
/// `OMPI_COMM_WORLD_SIZE` (Open MPI's mpirun), or `PMI_RANK` and
/// `PMI_SIZE` (MPICH's and Intel MPI's mpiexec). Reading them needs no MPI
/// library.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Launch {
    /// This process's rank, 0 … size − 1.
    pub rank: usize,
    /// Processes started together.
    pub size: usize,
}

impl Launch {
    /// The launch this process is part of, or `None` when no launcher
    /// started it.
    pub fn from_env() -> Option<Launch> {
        Self::from_vars(|name| std::env::var(name).ok())
    }

    /// As [`from_env`](Launch::from_env), reading variables through `var`.
    pub fn from_vars(var: impl Fn(&str) -> Option<String>) -> Option<Launch> {
        let number = |name: &str| var(name).and_then(|v| v.trim().parse::<usize>().ok());
        [("OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"), ("PMI_RANK", "PMI_SIZE")].iter().find_map(|&(r, s)| {
            let (rank, size) = (number(r)?, number(s)?);
            (rank < size).then_some(Launch { rank, size })
        })
    }
}

/// How a run's lattices are placed on the processes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Decompose {
    /// Strips for a lone lattice unless every process has a GPU, the
    /// ensemble spread otherwise.
    #[default]
    Auto,
    /// Every lattice cut into strips across the processes, each on its CPU
    /// or its own GPU.
    Strips,
    /// The lattices of each ensemble dealt out to the processes whole.
    Ensemble,
}

impl Decompose {
    /// `auto`, `strips` or `ensemble`.
    pub fn name(self) -> &'static str {
        match self {
            Decompose::Auto => "auto",
            Decompose::Strips => "strips",
            Decompose::Ensemble => "ensemble",
        }
    }
}

impl std::fmt::Display for Decompose {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Decompose {
    type Err = MpiError;
    fn from_str(s: &str) -> Result<Self, MpiError> {
        match s {
            "auto" => Ok(Decompose::Auto),
            "strips" => Ok(Decompose::Strips),
            "ensemble" => Ok(Decompose::Ensemble),
            _ => {
                Err(MpiError::InvalidInput(format!("unknown decomposition '{s}' (expected auto, strips or ensemble)")))
            }
        }
    }
}

/// How the strips of a lattice trade their edge rows.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum HaloTransport {
    /// Through page-locked host memory and MPI, the device copies beside
    /// the interior's update: the faster of the two on the machines
    /// measured (BENCHMARKS.md, two H200s joined by NVLink).
    #[default]
    Mpi,
    /// Device to device through NCCL, queued beside the interior's update;
    /// every process must hold a strip on a GPU of its own (an error
    /// otherwise).
    Nccl,
}

impl HaloTransport {
    /// `mpi` or `nccl`.
    pub fn name(self) -> &'static str {
        match self {
            HaloTransport::Mpi => "mpi",
            HaloTransport::Nccl => "nccl",
        }
    }
}

impl std::fmt::Display for HaloTransport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for HaloTransport {
    type Err = MpiError;
    fn from_str(s: &str) -> Result<Self, MpiError> {
        match s {
            "mpi" => Ok(HaloTransport::Mpi),
            "nccl" => Ok(HaloTransport::Nccl),
            _ => Err(MpiError::InvalidInput(format!("unknown halo transport '{s}' (expected mpi or nccl)"))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn launchers_are_read_from_their_variables() {
        fn vars(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
            move |name: &str| pairs.iter().find(|(k, _)| *k == name).map(|(_, v)| v.to_string())
        }
        assert_eq!(Launch::from_vars(vars(&[])), None);
        let ompi = [("OMPI_COMM_WORLD_RANK", "2"), ("OMPI_COMM_WORLD_SIZE", "4")];
        assert_eq!(Launch::from_vars(vars(&ompi)), Some(Launch { rank: 2, size: 4 }));
        let pmi = [("PMI_RANK", "0"), ("PMI_SIZE", "1")];
        assert_eq!(Launch::from_vars(vars(&pmi)), Some(Launch { rank: 0, size: 1 }));
        // A rank without a size, a rank past the size, or a typo: no launch.
        assert_eq!(Launch::from_vars(vars(&[("PMI_RANK", "0")])), None);
        assert_eq!(Launch::from_vars(vars(&[("PMI_RANK", "3"), ("PMI_SIZE", "2")])), None);
        assert_eq!(Launch::from_vars(vars(&[("PMI_RANK", "x"), ("PMI_SIZE", "2")])), None);
    }

    #[test]
    fn decompositions_parse_and_print() {
        for d in [Decompose::Auto, Decompose::Strips, Decompose::Ensemble] {
            assert_eq!(d.name().parse::<Decompose>().unwrap(), d);
        }
        let e = "rows".parse::<Decompose>().unwrap_err().to_string();
        assert_eq!(e, "unknown decomposition 'rows' (expected auto, strips or ensemble)");
        for t in [HaloTransport::Nccl, HaloTransport::Mpi] {
            assert_eq!(t.name().parse::<HaloTransport>().unwrap(), t);
        }
        let e = "nvlink".parse::<HaloTransport>().unwrap_err().to_string();
        assert_eq!(e, "unknown halo transport 'nvlink' (expected mpi or nccl)");
    }
}
