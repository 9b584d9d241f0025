//! Stopping long preparations that have no observer of their own.
//!
//! A sweep loop looks at its caller between stretches ([`Observer`]), but
//! some steps before the first sweep take seconds on a large lattice and
//! are reached through calls that take no hook: Wolff's measurement of its
//! cluster size ([`wolff::clusters_per_sweep`]), made whenever a
//! temperature is set. [`with_stop`] lends such steps a hook for the
//! length of one call, on the calling thread; they ask it now and then
//! ([`stop_requested`]) and give up with [`PottsError::Interrupted`] when
//! it says stop.
//!
//! ```
//! use warpmc_potts::{Algorithm, PottsError, PottsModel, Simulation, interrupt};
//!
//! let model = PottsModel::new(2, 256, 256)?;
//! let made = interrupt::with_stop(&mut || true, || Simulation::on_cpu_with(model, Algorithm::Wolff, 1.0));
//! assert!(matches!(made, Err(PottsError::Interrupted)));
//! # Ok::<(), PottsError>(())
//! ```
//!
//! [`Observer`]: crate::Observer
//! [`wolff::clusters_per_sweep`]: crate::wolff::clusters_per_sweep
//! [`PottsError::Interrupted`]: crate::PottsError::Interrupted

use std::cell::Cell;
use std::ptr::NonNull;

/// The hook lent by [`with_stop`], its lifetime erased: valid while the
/// `with_stop` call that set it runs, which also clears it.
type Hook = NonNull<dyn FnMut() -> bool>;

thread_local! {
    static HOOK: Cell<Option<Hook>> = const { Cell::new(None) };
}

/// Puts back the hook that was lent before, however `work` ends.
struct Restore(Option<Hook>);

impl Drop for Restore {
    fn drop(&mut self) {
        HOOK.with(|h| h.set(self.0));
    }
}

/// Runs `work` on this thread with `stop` as the hook its long
/// preparations ask ([`stop_requested`]); calls nest, the innermost hook
/// being asked.
pub fn with_stop<R>(stop: &mut dyn FnMut() -> bool, work: impl FnOnce() -> R) -> R {
    let hook: NonNull<dyn FnMut() -> bool + '_> = NonNull::from(stop);
    // SAFETY: only the lifetime bound of the trait object changes. The
    // pointer is reachable through HOOK only until `Restore` runs at the end
    // of this call, while `stop` is still mutably borrowed by it.
    let hook: Hook = unsafe { std::mem::transmute::<NonNull<dyn FnMut() -> bool + '_>, Hook>(hook) };
    let _restore = Restore(HOOK.with(|h| h.replace(Some(hook))));
    work()
}

/// Whether the hook lent to the current call (if any) says stop. The hook
/// is taken out while it runs, so a hook that itself reaches a long
/// preparation is not asked again from inside.
pub fn stop_requested() -> bool {
    let Some(mut hook) = HOOK.with(Cell::take) else {
        return false;
    };
    let _restore = Restore(Some(hook));
    // SAFETY: the pointer came from a `&mut` that the enclosing `with_stop`
    // call holds for as long as HOOK can hand it out, and HOOK is empty
    // while this call uses it, so no other reference to it is live.
    unsafe { hook.as_mut()() }
}

/// Asks the hook at most every `sites` units of work: a counter for loops
/// whose steps are too short to ask at each one.
#[derive(Debug)]
pub(crate) struct Every {
    sites: u64,
    since: u64,
}

impl Every {
    /// Asks after every `sites` units.
    pub(crate) fn new(sites: u64) -> Self {
        Every { sites, since: 0 }
    }

    /// Counts `done` more units; asks the hook once `sites` have passed
    /// since it was last asked.
    pub(crate) fn stop(&mut self, done: u64) -> bool {
        self.since += done;
        if self.since < self.sites {
            return false;
        }
        self.since = 0;
        stop_requested()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hook_is_asked_only_inside_its_call_and_nested_calls_ask_the_innermost() {
        assert!(!stop_requested());
        let mut outer_asked = 0;
        let mut outer = || {
            outer_asked += 1;
            false
        };
        with_stop(&mut outer, || {
            assert!(!stop_requested());
            assert!(with_stop(&mut || true, stop_requested));
            assert!(!stop_requested());
        });
        assert_eq!(outer_asked, 2);
        assert!(!stop_requested());
    }

    #[test]
    fn a_hook_is_put_back_when_the_work_panics() {
        let caught = std::panic::catch_unwind(|| with_stop(&mut || true, || panic!("work failed")));
        assert!(caught.is_err());
        assert!(!stop_requested());
    }

    #[test]
    fn a_hook_that_reaches_a_preparation_is_not_asked_from_inside() {
        let mut depth = 0;
        let mut hook = || {
            depth += 1;
            // The hook is out while it runs.
            !stop_requested()
        };
        assert!(with_stop(&mut hook, stop_requested));
        assert_eq!(depth, 1);
    }

    #[test]
    fn every_asks_after_its_count() {
        let mut asked = 0;
        let mut hook = || {
            asked += 1;
            false
        };
        with_stop(&mut hook, || {
            let mut every = Every::new(10);
            for _ in 0..35 {
                every.stop(1);
            }
            every.stop(100);
        });
        assert_eq!(asked, 4);
    }
}
