//! Records the source commit of this build (`WARPMC_COMMIT`: the checkout's
//! HEAD, or the variable of that name when set) for the provenance that
//! results files carry. A build from a checkout whose tracked files differ
//! from HEAD gets git's `-dirty` suffix (`0123456789ab-dirty`): its results
//! do not come from the commit alone. Outside a git checkout, or without
//! git, the commit is simply unknown.

use std::path::Path;
use std::process::Command;

fn git(args: &[&str]) -> Option<String> {
    let out = Command::new("git").args(args).output().ok()?;
    out.status.success().then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}

fn main() {
    println!("cargo:rerun-if-env-changed=WARPMC_COMMIT");
    if let Ok(given) = std::env::var("WARPMC_COMMIT") {
        println!("cargo:rustc-env=WARPMC_COMMIT={given}");
        return;
    }
    let Some(commit) = git(&["rev-parse", "--short=12", "HEAD"]) else { return };
    // Rebuild when HEAD moves or the index changes (a commit, a checkout, an
    // add), and when a source file changes (an edit makes the build dirty,
    // undoing it makes it clean again). Paths that do not exist are left
    // out: Cargo would treat them as always changed.
    let mut watch = Vec::new();
    if let Some(dir) = git(&["rev-parse", "--git-dir"]) {
        let dir = Path::new(&dir);
        watch.extend([dir.join("HEAD"), dir.join("index"), dir.join("packed-refs")]);
        if let Some(head_ref) = git(&["symbolic-ref", "-q", "HEAD"]) {
            watch.push(dir.join(&head_ref));
            if let Some(common) = git(&["rev-parse", "--git-common-dir"]) {
                watch.push(Path::new(&common).join(&head_ref));
            }
        }
    }
    if let Some(top) = git(&["rev-parse", "--show-toplevel"]) {
        let top = Path::new(&top);
        // Directories are scanned whole by Cargo for a newer file.
        for part in ["build.rs", "Cargo.toml", "Cargo.lock", "src", "crates", "python/src", "python/Cargo.toml"] {
            watch.push(top.join(part));
        }
    }
    for path in watch.into_iter().filter(|p| p.exists()) {
        println!("cargo:rerun-if-changed={}", path.display());
    }
    // Tracked files only: an untracked scratch file does not change the build.
    let dirty = git(&["status", "--porcelain", "--untracked-files=no"]).is_some_and(|s| !s.is_empty());
    let suffix = if dirty { "-dirty" } else { "" };
    println!("cargo:rustc-env=WARPMC_COMMIT={commit}{suffix}");
}
