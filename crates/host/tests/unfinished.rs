//! Files under way are removed by `remove_unfinished` while listed, and
//! only then; what is in place stays. A test binary of its own: the
//! removal takes every listed file of the process, so no other test may
//! write outputs beside it.

use std::fs;

use warpmc_host::output::{Claim, Unfinished, remove_unfinished, write};

#[test]
fn unfinished_files_are_removed_on_the_way_out() {
    let dir = tempfile::tempdir().unwrap();
    let (under_way, done, claimed) = (dir.path().join("a.tmp"), dir.path().join("b.tmp"), dir.path().join("c.csv"));
    for p in [&under_way, &done] {
        fs::write(p, b"x").unwrap();
    }
    let listed = Unfinished::new(&under_way);
    drop(Unfinished::new(&done));
    let claim = Claim::take(&claimed, "test file").unwrap().expect("a lock");
    assert!(dir.path().join(".c.csv.lock").exists());
    // An output being written: its temporary file goes, the file at its
    // path stays as it was.
    let out = dir.path().join("out.txt");
    fs::write(&out, b"before").unwrap();
    let _ = write(&out, |w| {
        w.write_all(b"half")?;
        w.flush()?;
        remove_unfinished();
        Ok(())
    });
    assert!(!under_way.exists() && done.exists() && !dir.path().join(".c.csv.lock").exists());
    let left: Vec<String> =
        fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    assert!(!left.iter().any(|n| n.ends_with(".tmp") && n != "b.tmp"), "{left:?}");
    assert_eq!(fs::read(&out).unwrap(), b"before");
    drop((listed, claim));
}
