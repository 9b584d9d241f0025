//! How much memory the process may still allocate, so that a size is
//! checked before it is allocated: an allocation that does not fit is one
//! clear error instead of an abort or an out-of-memory kill.
//!
//! The budget is the smallest of what Linux reports as available
//! (`MemAvailable` in /proc/meminfo), what the process's memory cgroup
//! still allows (v2 `memory.max` − `memory.current` up the hierarchy, or
//! v1 `memory.limit_in_bytes` − `memory.usage_in_bytes`) and what is left
//! of an address-space limit (`ulimit -v`: its soft limit − `VmSize`).
//! Where none of these can be read (another operating system) the budget
//! is unknown and every check passes; fallible allocation still turns a
//! failure into an error there.

use std::fmt;
use std::path::{Path, PathBuf};

/// The memory a process may still allocate, and which limit says so.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MemoryBudget {
    /// Bytes.
    pub bytes: u64,
    /// Which limit binds: "available memory", "the memory cgroup's limit"
    /// or "the address-space limit (ulimit -v)".
    pub limit: &'static str,
}

impl fmt::Display for MemoryBudget {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({})", human_bytes(self.bytes), self.limit)
    }
}

/// Bytes with a binary prefix and three significant digits: "1.50 GiB".
pub fn human_bytes(bytes: u64) -> String {
    const UNITS: [&str; 7] = ["bytes", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"];
    let mut v = bytes as f64;
    let mut u = 0;
    while v >= 1024.0 && u + 1 < UNITS.len() {
        v /= 1024.0;
        u += 1;
    }
    if u == 0 { format!("{bytes} bytes") } else { format!("{v:.3} {}", UNITS[u]) }
}

/// The memory this process may still allocate, or `None` where no limit
/// can be read.
pub fn available_memory() -> Option<MemoryBudget> {
    let candidates = [
        meminfo_available().map(|b| (b, "available memory")),
        cgroup_room().map(|b| (b, "the memory cgroup's limit")),
        address_space_room().map(|b| (b, "the address-space limit (ulimit -v)")),
    ];
    candidates.into_iter().flatten().min_by_key(|&(b, _)| b).map(|(bytes, limit)| MemoryBudget { bytes, limit })
}

/// Checks that `bytes` more can be allocated for `what` ("a 65536 × 65536
/// lattice"): `Err` is one line naming both sizes and the limit.
pub fn check_allocation(what: &str, bytes: u64) -> Result<(), String> {
    match available_memory() {
        Some(budget) if bytes > budget.bytes => {
            Err(format!("{what} needs {} of host memory but only {budget} is free", human_bytes(bytes)))
        }
        _ => Ok(()),
    }
}

fn read(path: impl AsRef<Path>) -> Option<String> {
    std::fs::read_to_string(path).ok()
}

/// `MemAvailable` from /proc/meminfo, in bytes.
fn meminfo_available() -> Option<u64> {
    let text = read("/proc/meminfo")?;
    let line = text.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// A cgroup file holding a number, or "max" (no limit: `None`).
fn number(path: &Path) -> Option<u64> {
    read(path)?.trim().parse().ok()
}

/// Room left in the process's memory cgroup, the tightest level of the
/// hierarchy (v2) or its own (v1).
fn cgroup_room() -> Option<u64> {
    let cgroups = read("/proc/self/cgroup")?;
    let mut best: Option<u64> = None;
    for line in cgroups.lines() {
        let mut parts = line.splitn(3, ':');
        let (_, controllers, path) = (parts.next()?, parts.next()?, parts.next()?);
        let rel = path.trim_start_matches('/');
        let room = if controllers.is_empty() {
            // cgroup v2: every level from ours up to the root.
            let mut dir = PathBuf::from("/sys/fs/cgroup").join(rel);
            let mut room: Option<u64> = None;
            loop {
                if let (Some(max), Some(cur)) = (number(&dir.join("memory.max")), number(&dir.join("memory.current"))) {
                    let r = max.saturating_sub(cur);
                    room = Some(room.map_or(r, |x| x.min(r)));
                }
                if dir == Path::new("/sys/fs/cgroup") || !dir.pop() {
                    break;
                }
            }
            room
        } else if controllers.split(',').any(|c| c == "memory") {
            // cgroup v1: our group, or the mount's root inside a cgroup
            // namespace (where our path does not exist).
            let base = PathBuf::from("/sys/fs/cgroup/memory");
            [base.join(rel), base]
                .iter()
                .find_map(|d| {
                    Some((number(&d.join("memory.limit_in_bytes"))?, number(&d.join("memory.usage_in_bytes"))?))
                })
                // v1 reports "no limit" as a huge number near 2^63.
                .filter(|&(limit, _)| limit < 1 << 62)
                .map(|(limit, usage)| limit.saturating_sub(usage))
        } else {
            None
        };
        if let Some(r) = room {
            best = Some(best.map_or(r, |b| b.min(r)));
        }
    }
    best
}

/// What is left under the soft address-space limit (`ulimit -v`).
fn address_space_room() -> Option<u64> {
    let limits = read("/proc/self/limits")?;
    let line = limits.lines().find(|l| l.starts_with("Max address space"))?;
    let soft = line.split_whitespace().nth(3)?;
    let limit: u64 = soft.parse().ok()?; // "unlimited" does not parse: no limit
    let status = read("/proc/self/status")?;
    let vm_kib: u64 = status.lines().find(|l| l.starts_with("VmSize:"))?.split_whitespace().nth(1)?.parse().ok()?;
    Some(limit.saturating_sub(vm_kib * 1024))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_read_as_people_write_them() {
        assert_eq!(human_bytes(512), "512 bytes");
        assert_eq!(human_bytes(3 << 29), "1.500 GiB");
        assert_eq!(human_bytes(1 << 40), "1.000 TiB");
    }

    #[test]
    fn an_absurd_allocation_is_refused_with_both_sizes() {
        // 2^62 bytes fits no machine: where a budget can be read it is
        // refused, and the message says how much was asked and how much
        // there is.
        if available_memory().is_some() {
            let e = check_allocation("a test buffer", 1 << 62).unwrap_err();
            assert!(e.starts_with("a test buffer needs 4.000 EiB of host memory but only "), "{e}");
        }
        assert!(check_allocation("a small buffer", 1024).is_ok());
    }
}
