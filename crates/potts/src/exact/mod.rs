//! Exact results the Monte Carlo is validated against.
//!
//! Four kinds of reference, each exact rather than itself a simulation:
//!
//! * [`density_of_states`]: the number of configurations of a small periodic
//!   lattice with each number of equal-neighbour bonds, computed by a row
//!   transfer matrix. From it [`DensityOfStates::moments`] gives the energy
//!   and specific heat of that finite lattice at any temperature, which a
//!   correct sampler must reproduce within its statistical error (no
//!   finite-size extrapolation involved).
//! * [`ising_torus`]: the same two numbers for q = 2 on tori of any size
//!   (16², 512², … up to sides of 2^24), from Kaufman's partition function
//!   (Kaufman 1949; Ferdinand and Fisher 1969).
//! * Onsager's energy and Yang's spontaneous magnetization of the infinite
//!   square-lattice Ising model, rewritten for the q = 2 Potts model
//!   ([`ising_energy_per_site`], [`ising_magnetization`]).
//! * Baxter's results at the transition of the q-state Potts model: the
//!   critical temperature ([`potts_critical_temperature`]) and, for q ≥ 5
//!   where the transition is first order, the energies of the coexisting
//!   ordered and disordered phases ([`potts_transition_energies`]).
//!
//! Conventions throughout: H = −J Σ_⟨ij⟩ δ(sᵢ, sⱼ) over the 2N bonds of a
//! periodic lattice (each site has a bond to its right and one to its lower
//! neighbour, with wrap-around), k_B = 1, energies per site.

mod enumeration;
mod infinite;
mod kaufman;
#[cfg(test)]
mod tests;

use crate::error::{PottsError, Result};
use crate::model::check_temperature;
pub use enumeration::*;
pub use infinite::*;
pub use kaufman::*;

/// |J|/T (and K) beyond which an exact sum is its ground state's term alone:
/// the next level is at least one bond (one 2K) higher, and e^-2000 is far
/// below the smallest f64.
const SATURATED_BETA: f64 = 1000.0;

/// Thermal averages of a finite lattice computed from its exact density of
/// states.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ExactMoments {
    /// ⟨e⟩, the mean energy per site.
    pub energy: f64,
    /// ⟨e²⟩, the mean square of the energy per site.
    pub energy_sq: f64,
    /// Specific heat per site, c = N (⟨e²⟩ − ⟨e⟩²) / T².
    pub specific_heat: f64,
}

/// Asked during long exact computations, on the calling thread, whether to
/// give up: `true` ends the computation with [`PottsError::Interrupted`].
/// It is asked between tori and temperatures and every 65,536 terms of
/// Kaufman's sums (a torus of side 2^24 takes seconds per temperature). Counting a torus for q ≠ 2 is not
/// interrupted: [`MAX_ENUMERATION_WORK`] keeps it to about a second.
pub type Stop<'a> = &'a mut dyn FnMut() -> bool;

/// Whether the Ising torus of coupling J is a frustrated antiferromagnet:
/// J < 0 with an odd side, which Kaufman's solution does not cover.
fn frustrated(width: usize, height: usize, coupling: f64) -> bool {
    coupling < 0.0 && (!width.is_multiple_of(2) || !height.is_multiple_of(2))
}

/// An error for a frustrated Ising antiferromagnet too large to count:
/// no exact method reaches it.
fn check_frustrated(width: usize, height: usize, coupling: f64) -> Result<()> {
    if frustrated(width, height, coupling) && !enumeration_reaches(2, width, height) {
        let reach = (1..).take_while(|&l| enumeration_reaches(2, l, l)).last().unwrap_or(1);
        return Err(PottsError::InvalidInput(format!(
            "the exact torus result for J < 0 needs both sides even, or a torus small enough to count (2^(L·L') < \
             2^128: at most 127 sites, e.g. {reach} × {reach}): a frustrated {width} × {height} antiferromagnet has \
             no Kaufman solution"
        )));
    }
    Ok(())
}

/// The most work [`ExactTorus::new`] gives an enumeration: q^(w+1)·w·h·2N
/// additions before the saving from symmetric first rows (q = 4 on 6 × 6 is
/// 4.2·10⁷, about a second on two cores).
pub const MAX_ENUMERATION_WORK: f64 = 1.5e8;

/// Whether [`density_of_states`] counts q states on `width` × `height`
/// within its limits (it asserts the first two) and
/// [`MAX_ENUMERATION_WORK`].
fn enumeration_reaches(q: u32, width: usize, height: usize) -> bool {
    let rows = u32::try_from(width.min(height)).ok().and_then(|e| (q as usize).checked_pow(e));
    let all = width.checked_mul(height).and_then(|n| u32::try_from(n).ok()).and_then(|n| u128::from(q).checked_pow(n));
    let sites = (width as f64) * (height as f64);
    let work = f64::from(q).powf(width.min(height) as f64 + 1.0) * sites * 2.0 * sites;
    rows.is_some_and(|r| r <= MAX_ROW_STATES) && all.is_some() && work <= MAX_ENUMERATION_WORK
}

/// Exact energy and specific heat of one torus at any temperature, by the
/// method that reaches it: Kaufman's solution for q = 2 (sides up to 2^24,
/// [`ising_torus`]), the enumeration of [`density_of_states`] for other q on
/// lattices small enough for it (counted once, then evaluated at each
/// temperature).
///
/// ```
/// use warpmc_potts::exact::ExactTorus;
///
/// let ising = ExactTorus::new(2, 32, 32)?;
/// assert!(ising.moments(1.0, 1.0)?.energy < -1.8);
/// let three = ExactTorus::new(3, 4, 4)?;
/// assert!(three.moments(1.0, 1.0)?.specific_heat > 0.0);
/// assert!(ExactTorus::new(3, 64, 64).is_err()); // no exact method reaches it
/// # Ok::<(), warpmc_potts::PottsError>(())
/// ```
#[derive(Clone, Debug)]
pub enum ExactTorus {
    /// q = 2: Kaufman (1949) in the form of Ferdinand and Fisher (1969).
    Kaufman {
        /// Sites per row.
        width: usize,
        /// Rows.
        height: usize,
        /// For J < 0 on a torus with an odd side (a frustrated
        /// antiferromagnet, which Kaufman's solution does not cover): its
        /// configurations counted, when first asked for and small enough.
        counted: std::sync::OnceLock<DensityOfStates>,
    },
    /// Any q on a small torus: its counted density of states.
    Enumerated(DensityOfStates),
}

impl ExactTorus {
    /// Whether an exact method reaches the q-state model on a `width` ×
    /// `height` torus (cheap: nothing is counted), or why not.
    pub fn check(q: u32, width: usize, height: usize) -> Result<()> {
        if width == 0 || height == 0 {
            return Err(PottsError::InvalidInput(format!("the torus needs both sides ≥ 1, got {width} × {height}")));
        }
        // Spins are bytes, in the simulations as in the counting.
        if !(2..=crate::model::MAX_Q).contains(&q) {
            return Err(PottsError::InvalidInput(format!("q must be from 2 to {}, got {q}", crate::model::MAX_Q)));
        }
        if q == 2 {
            return check_kaufman_sides(width, height);
        }
        if !enumeration_reaches(q, width, height) {
            let reach = match (1..).take_while(|&l| enumeration_reaches(q, l, l)).last() {
                Some(l) => format!("{l} × {l}"),
                None => "no torus".to_string(),
            };
            return Err(PottsError::InvalidInput(format!(
                "no exact result for q = {q} on {width} × {height}: only q = 2 has a closed form (Kaufman 1949); \
                 other q are counted exactly by a transfer matrix, which reaches {reach} for q = {q} \
                 (q^min(L, L') ≤ {MAX_ROW_STATES}, q^(L·L') < 2^128)"
            )));
        }
        Ok(())
    }

    /// The exact method for the q-state model on a `width` × `height`
    /// torus (for q ≠ 2 this counts its configurations: up to a few seconds),
    /// or an error saying why none reaches it.
    pub fn new(q: u32, width: usize, height: usize) -> Result<ExactTorus> {
        Self::check(q, width, height)?;
        if q == 2 {
            return Ok(ExactTorus::Kaufman { width, height, counted: std::sync::OnceLock::new() });
        }
        Ok(ExactTorus::Enumerated(density_of_states(q, width, height)))
    }

    /// How the values are obtained, for output headers.
    pub fn method(&self) -> &'static str {
        self.method_for(1.0)
    }

    /// How the values for coupling J are obtained: the frustrated Ising
    /// antiferromagnet (J < 0, an odd side) is counted.
    pub fn method_for(&self, coupling: f64) -> &'static str {
        match self {
            ExactTorus::Kaufman { width, height, .. } if !frustrated(*width, *height, coupling) => {
                "Kaufman 1949 (Ferdinand and Fisher 1969 torus form)"
            }
            _ => "exact enumeration (transfer matrix over rows)",
        }
    }

    /// Energy per site and specific heat per site at `temperature` for
    /// coupling J.
    pub fn moments(&self, temperature: f64, coupling: f64) -> Result<ExactMoments> {
        self.moments_or_stop(temperature, coupling, &mut || false)
    }

    /// [`ExactTorus::moments`], giving up when `stop` says so.
    fn moments_or_stop(&self, temperature: f64, coupling: f64, stop: Stop<'_>) -> Result<ExactMoments> {
        match self {
            ExactTorus::Kaufman { width, height, counted }
                if frustrated(*width, *height, coupling) && enumeration_reaches(2, *width, *height) =>
            {
                let t = check_temperature(temperature)?;
                Ok(counted.get_or_init(|| density_of_states(2, *width, *height)).moments(t, coupling))
            }
            ExactTorus::Kaufman { width, height, .. } => {
                ising_torus_or_stop(*width, *height, temperature, coupling, stop)
            }
            ExactTorus::Enumerated(dos) => {
                let t = check_temperature(temperature)?;
                if !coupling.is_finite() {
                    return Err(PottsError::InvalidInput(format!("the coupling J must be finite, got {coupling}")));
                }
                Ok(dos.moments(t, coupling))
            }
        }
    }
}

/// One torus at one temperature, as `warpmc potts exact` and
/// `warpmc.potts.exact` report it.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct ExactRow {
    /// q.
    pub q: u32,
    /// J.
    pub coupling: f64,
    /// Sites per row.
    #[serde(rename = "L")]
    pub width: usize,
    /// Rows.
    pub height: usize,
    /// T.
    pub temperature: f64,
    /// ⟨e⟩ per site.
    pub energy: f64,
    /// Specific heat per site.
    pub specific_heat: f64,
    /// [`ExactTorus::method`].
    pub method: &'static str,
}

/// The exact values of every torus (width, height) at every temperature,
/// torus by torus. Every torus is checked before any is counted, so a bad
/// one late in the list costs no enumeration, and so is the memory the
/// rows take ([`PottsError::OutOfHostMemory`] rather than an abort).
pub fn exact_rows(q: u32, tori: &[(usize, usize)], temperatures: &[f64], coupling: f64) -> Result<Vec<ExactRow>> {
    exact_rows_or_stop(q, tori, temperatures, coupling, 0, &mut || false)
}

/// [`exact_rows`], for a caller that keeps `more_bytes_per_row` of its own
/// for each row (checked with the rows' memory, before any is computed),
/// giving up with [`PottsError::Interrupted`] when `stop` says so (see
/// [`Stop`]).
///
/// ```
/// use warpmc_potts::PottsError;
/// use warpmc_potts::exact::exact_rows_or_stop;
///
/// let rows = exact_rows_or_stop(2, &[(16, 16)], &[1.0, 2.0], 1.0, 0, &mut || false)?;
/// assert_eq!(rows.len(), 2);
/// let stopped = exact_rows_or_stop(2, &[(16, 16)], &[1.0, 2.0], 1.0, 0, &mut || true);
/// assert!(matches!(stopped, Err(PottsError::Interrupted)));
/// # Ok::<(), PottsError>(())
/// ```
pub fn exact_rows_or_stop(
    q: u32,
    tori: &[(usize, usize)],
    temperatures: &[f64],
    coupling: f64,
    more_bytes_per_row: u64,
    stop: Stop<'_>,
) -> Result<Vec<ExactRow>> {
    let mut rows = Vec::new();
    for_each_exact_row(q, tori, temperatures, coupling, more_bytes_per_row, stop, &mut |r| rows.push(r))?;
    Ok(rows)
}

/// [`exact_rows_or_stop`], handing each row to `row` as soon as it is
/// computed (in the same order), for a caller that shows them as they come.
/// Rows handed on before a stop or an error stay valid.
pub fn for_each_exact_row(
    q: u32,
    tori: &[(usize, usize)],
    temperatures: &[f64],
    coupling: f64,
    more_bytes_per_row: u64,
    stop: Stop<'_>,
    row: &mut dyn FnMut(ExactRow),
) -> Result<()> {
    if !coupling.is_finite() {
        return Err(PottsError::InvalidInput(format!("the coupling J must be finite, got {coupling}")));
    }
    // The bound `potts run` keeps (beyond it the sums over bonds and their
    // squares leave f64).
    if 2.0 * coupling.abs() > crate::model::MAX_ENERGY_SCALE {
        return Err(PottsError::InvalidInput(format!(
            "J = {coupling:?} gives energies up to {:e} per site; 2|J| must be at most {:e}, as for a run",
            2.0 * coupling.abs(),
            crate::model::MAX_ENERGY_SCALE
        )));
    }
    for &t in temperatures {
        check_temperature(t)?;
    }
    for &(w, h) in tori {
        ExactTorus::check(q, w, h)?;
        if q == 2 {
            check_frustrated(w, h, coupling)?;
        }
    }
    let count = (tori.len() as u64).saturating_mul(temperatures.len() as u64);
    let row_bytes = (size_of::<ExactRow>() as u64).saturating_add(more_bytes_per_row);
    warpmc_host::check_allocation(&format!("keeping the {count} exact values"), count.saturating_mul(row_bytes))
        .map_err(|e| PottsError::OutOfHostMemory(format!("{e}; ask for fewer temperatures or sizes")))?;
    for &(width, height) in tori {
        if stop() {
            return Err(PottsError::Interrupted);
        }
        let exact = ExactTorus::new(q, width, height)?;
        for &temperature in temperatures {
            if stop() {
                return Err(PottsError::Interrupted);
            }
            let m = exact.moments_or_stop(temperature, coupling, stop)?;
            row(ExactRow {
                q,
                coupling,
                width,
                height,
                temperature,
                // + 0.0: an energy of J·0 with J = 0 is 0, not -0.
                energy: m.energy + 0.0,
                specific_heat: m.specific_heat + 0.0,
                method: exact.method_for(coupling),
            });
        }
    }
    Ok(())
}
