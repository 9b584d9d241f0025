//! The physics: the q-state Potts Hamiltonian on a periodic L × L' lattice.
//!
//! H = −J Σ_⟨ij⟩ δ(sᵢ, sⱼ) − h Σᵢ δ(sᵢ, 0)
//!
//! over nearest-neighbour bonds of a periodic lattice, spins in {0, …, q−1},
//! k_B = 1. The field h favours state 0 (h > 0) or disfavours it (h < 0);
//! an ordered start puts every site in a state it favours.
//! With q = 2 this is the Ising model at T_Ising = 2T with coupling J/2.

use crate::error::{PottsError, Result};

/// Largest number of states: spins are stored in one byte.
pub const MAX_Q: u32 = 255;

/// Largest number of sites: a site's random numbers are addressed by a
/// 32-bit pair index within its colour, so N/4 must fit in 32 bits.
pub const MAX_SITES: u64 = 1 << 34;

/// Largest energy scale 2|J| + |h| (the largest |energy per site|): the
/// fourth moment of the energy, summed over up to 2⁴⁰ measurements, must
/// stay finite in f64.
pub const MAX_ENERGY_SCALE: f64 = 1e70;

/// Smallest |J| and |h| other than zero: with energies below it the fourth
/// moment of the energy underflows in f64, and the specific heat and the
/// error bars with it (measure T in units of J instead).
pub const MIN_ENERGY_SCALE: f64 = 1e-70;

/// A Potts model on a periodic `width` × `height` lattice (both even, so the
/// checkerboard colouring is consistent across the periodic boundaries).
#[derive(Clone, Debug, PartialEq)]
pub struct PottsModel {
    q: u32,
    width: usize,
    height: usize,
    coupling: f64,
    field: f64,
}

impl PottsModel {
    /// A model with J = 1 and no field.
    ///
    /// ```
    /// let m = warpmc_potts::PottsModel::new(9, 64, 32).unwrap();
    /// assert_eq!(m.sites(), 2048);
    /// assert!(warpmc_potts::PottsModel::new(9, 63, 32).is_err());
    /// ```
    pub fn new(q: u32, width: usize, height: usize) -> Result<Self> {
        if !(2..=MAX_Q).contains(&q) {
            return Err(PottsError::InvalidInput(format!("q must be between 2 and {MAX_Q}, got {q}")));
        }
        for (name, v) in [("size (width)", width), ("height", height)] {
            if v == 0 || v % 2 != 0 {
                return Err(PottsError::InvalidInput(format!(
                    "the lattice {name} must be even and at least 2 (warpmc keeps every lattice, whatever its \
                     update, in the checkerboard layout, which needs even periodic sides), got {v}"
                )));
            }
        }
        let sites = (width as u64).checked_mul(height as u64).filter(|&n| n <= MAX_SITES);
        if sites.is_none() {
            return Err(PottsError::InvalidInput(format!(
                "a {width} × {height} lattice has more than 2^34 sites, the most warpmc addresses"
            )));
        }
        Ok(PottsModel { q, width, height, coupling: 1.0, field: 0.0 })
    }

    /// Sets the coupling J (J > 0 ferromagnetic).
    pub fn with_coupling(mut self, j: f64) -> Result<Self> {
        if !j.is_finite() {
            return Err(PottsError::InvalidInput(format!("the coupling J must be finite, got {j}")));
        }
        self.coupling = j;
        self.check_energy_scale()?;
        Ok(self)
    }

    /// Sets the field h coupled to state 0.
    pub fn with_field(mut self, h: f64) -> Result<Self> {
        if !h.is_finite() {
            return Err(PottsError::InvalidInput(format!("the field h must be finite, got {h}")));
        }
        self.field = h;
        self.check_energy_scale()?;
        Ok(self)
    }

    /// Refuses couplings and fields whose energies would overflow or
    /// underflow the statistics ([`MAX_ENERGY_SCALE`],
    /// [`MIN_ENERGY_SCALE`]).
    fn check_energy_scale(&self) -> Result<()> {
        let scale = 2.0 * self.coupling.abs() + self.field.abs();
        if scale > MAX_ENERGY_SCALE {
            // The coupling is checked before a field is set: h is named only
            // when it takes part.
            let given = if self.field == 0.0 {
                format!("J = {:?} gives", self.coupling)
            } else {
                format!("J = {:?} and h = {:?} give", self.coupling, self.field)
            };
            return Err(PottsError::InvalidInput(format!(
                "{given} energies up to {scale:e} per site; 2|J| + |h| must be at most {MAX_ENERGY_SCALE:e}, beyond \
                 which the energy moments overflow"
            )));
        }
        for (name, v) in [("the coupling J", self.coupling), ("the field h", self.field)] {
            if v != 0.0 && v.abs() < MIN_ENERGY_SCALE {
                return Err(PottsError::InvalidInput(format!(
                    "{name} = {v:?} is too small: it must be 0 or at least {MIN_ENERGY_SCALE:e} in magnitude, \
                     below which the energy moments underflow (measure the temperatures in units of J)"
                )));
            }
        }
        Ok(())
    }

    /// Number of states q.
    pub fn q(&self) -> u32 {
        self.q
    }
    /// Columns (L).
    pub fn width(&self) -> usize {
        self.width
    }
    /// Rows (L').
    pub fn height(&self) -> usize {
        self.height
    }
    /// J.
    pub fn coupling(&self) -> f64 {
        self.coupling
    }
    /// h.
    pub fn field(&self) -> f64 {
        self.field
    }
    /// N = L · L'.
    pub fn sites(&self) -> usize {
        self.width * self.height
    }

    /// Host memory a run of this model may hold at once, in bytes: the
    /// lattice, its colour-split copy, the backend's storage, and two more
    /// for a snapshot or a checkpoint (the copy read back and its encoding;
    /// one byte per site each, an upper bound for the bit-plane storage),
    /// plus `saved` lattices kept for continuation.
    pub fn host_bytes(&self, saved: u64) -> u64 {
        (self.sites() as u64).saturating_mul(saved.saturating_add(5))
    }

    /// Fails with [`PottsError::OutOfHostMemory`] unless [`host_bytes`]
    /// fit in what the process may still allocate.
    ///
    /// [`host_bytes`]: PottsModel::host_bytes
    pub fn check_host_memory(&self, saved: u64) -> Result<()> {
        let what = match saved {
            0 => format!("a {} × {} lattice", self.width, self.height),
            n => format!("a {} × {} lattice and {n} saved copies of it", self.width, self.height),
        };
        warpmc_host::check_allocation(&what, self.host_bytes(saved)).map_err(PottsError::OutOfHostMemory)
    }

    /// Energy change of one site going from `old` to `new` when `n_old` and
    /// `n_new` of its four neighbours equal `old` and `new`.
    pub fn delta_energy(&self, n_old: u32, n_new: u32, old_is_zero: bool, new_is_zero: bool) -> f64 {
        let dn = n_new as f64 - n_old as f64;
        let d0 = new_is_zero as i32 as f64 - old_is_zero as i32 as f64;
        -self.coupling * dn - self.field * d0
    }

    /// Total energy from a [`Census`](crate::Census)'s counts.
    pub fn energy(&self, equal_bonds: u64, state0_sites: u64) -> f64 {
        // + 0.0 turns a -0 (J = h = 0) into 0.
        -self.coupling * equal_bonds as f64 - self.field * state0_sites as f64 + 0.0
    }
}

/// Checks a temperature.
pub fn check_temperature(t: f64) -> Result<f64> {
    if !(t.is_finite() && t > 0.0) {
        return Err(PottsError::InvalidInput(format!("temperatures must be positive and finite, got {t}")));
    }
    // 1/T overflows for the smallest subnormal temperatures; none is
    // physics.
    if t < f64::MIN_POSITIVE {
        return Err(PottsError::InvalidInput(format!(
            "temperatures must be at least {:e}, got {t:e}",
            f64::MIN_POSITIVE
        )));
    }
    Ok(t)
}
