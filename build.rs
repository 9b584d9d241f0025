//! Records the source commit of this build (`WARPMC_COMMIT`: the checkout's
//! HEAD, or the variable of that name when set) for the provenance that
//! results files carry. Outside a git checkout, or without git, the commit
//! is simply unknown. Uncommitted edits are not detected: the commit names
//! the source the build started from.

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
    // add). Paths that do not exist are left out: Cargo would treat them as
    // always changed.
    if let Some(dir) = git(&["rev-parse", "--git-dir"]) {
        let dir = Path::new(&dir);
        let mut watch = vec![dir.join("HEAD"), dir.join("index"), dir.join("packed-refs")];
        if let Some(head_ref) = git(&["symbolic-ref", "-q", "HEAD"]) {
            watch.push(dir.join(&head_ref));
            if let Some(common) = git(&["rev-parse", "--git-common-dir"]) {
                watch.push(Path::new(&common).join(&head_ref));
            }
        }
        for path in watch.into_iter().filter(|p| p.exists()) {
            println!("cargo:rerun-if-changed={}", path.display());
        }
    }
    println!("cargo:rustc-env=WARPMC_COMMIT={commit}");
}
