//! Output files that never destroy what is at their path.
//!
//! [`write`](fn@write) resolves the path first:
//!
//! - a symlink is followed (to its final target, also when that target does
//!   not exist yet), so the file it points to is replaced and the link
//!   stays a link;
//! - a regular file, or a path where nothing is yet, is written to a
//!   temporary file with a unique name in the target's directory, flushed
//!   to disk and renamed over the target: a reader or a crash sees the old
//!   file or the new one, never half of one, and two runs writing the same
//!   path never write into each other's temporary file. An existing file
//!   keeps its permissions; a new one gets the usual 0666 less the umask;
//! - anything else (a character or block device such as `/dev/null` or
//!   `/dev/full`, a FIFO) is opened and written directly: renaming over it
//!   would replace the device with a regular file;
//! - a directory is an error.
//!
//! Every error, a full disk included, is returned with the path.

use std::fs::{self, File, OpenOptions};
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

use crate::memory::human_bytes;

/// An output that could not be written: the path and the cause, as one
/// line.
#[derive(Debug, thiserror::Error)]
#[error("{path}: {cause}")]
pub struct OutputError {
    /// The path as given.
    pub path: PathBuf,
    /// What went wrong.
    pub cause: io::Error,
}

impl OutputError {
    fn new(path: &Path, cause: io::Error) -> Self {
        OutputError { path: path.to_path_buf(), cause }
    }
}

/// How many symlinks are followed before a loop is assumed (as Linux's
/// MAXSYMLINKS).
const MAX_LINKS: usize = 40;

/// Where a write to `path` goes.
#[derive(Debug, PartialEq, Eq)]
enum Target {
    /// A regular file, existing or not: replaced atomically.
    File { path: PathBuf, exists: bool },
    /// A device, FIFO or socket: written in place.
    Special(PathBuf),
}

/// Follows symlinks from `path` and says what is at the end.
fn resolve(path: &Path) -> io::Result<Target> {
    // `out.png/` names a directory whether or not one is there: writing it
    // would fail only after all the work.
    if path.as_os_str().as_encoded_bytes().last() == Some(&b'/') {
        return Err(io::Error::new(io::ErrorKind::IsADirectory, "ends with '/', so it names a directory, not a file"));
    }
    let mut current = path.to_path_buf();
    for _ in 0..MAX_LINKS {
        match fs::symlink_metadata(&current) {
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                return Ok(Target::File { path: current, exists: false });
            }
            Err(e) => return Err(e),
            Ok(meta) if meta.file_type().is_symlink() => {
                // A link that ends at a pipe, socket or device is written
                // through: some name no path at all (/dev/stdout in a pipe
                // is /proc/self/fd/1, whose link reads "pipe:[…]").
                if fs::metadata(&current).is_ok_and(|end| !end.is_file() && !end.is_dir()) {
                    return Ok(Target::Special(current));
                }
                let link = fs::read_link(&current)?;
                current = match current.parent() {
                    Some(dir) if link.is_relative() => dir.join(link),
                    _ => link,
                };
            }
            Ok(meta) if meta.is_dir() => {
                return Err(io::Error::new(io::ErrorKind::IsADirectory, "is a directory, not a file"));
            }
            Ok(meta) if meta.is_file() => return Ok(Target::File { path: current, exists: true }),
            Ok(_) => return Ok(Target::Special(current)),
        }
    }
    Err(io::Error::other("too many levels of symbolic links"))
}

/// Where a write to `path` lands, for a writer that makes the file itself
/// (ffmpeg writing a video): `Ok((file, false))` for a regular file,
/// existing or not, at the end of any symlinks (write beside it and rename
/// over it, as [`write`](fn@write) does, so that a link stays a link);
/// `Ok((path, true))` for a device or FIFO, to be written in place; an
/// error for a directory or a symlink loop.
pub fn final_target(path: &Path) -> Result<(PathBuf, bool), OutputError> {
    match resolve(path).map_err(|e| OutputError::new(path, e))? {
        Target::File { path, .. } => Ok((path, false)),
        Target::Special(path) => Ok((path, true)),
    }
}

/// The directory a new file at `path` goes into.
fn directory_of(path: &Path) -> &Path {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    }
}

/// A claim on an output for the life of one process, so that two runs
/// given the same file (a job array whose file names forgot the task) do
/// not replace each other's: an exclusive lock (`flock`) on a hidden file
/// beside it, `.NAME.lock` (empty), removed when the claim is dropped. A
/// file of that name with contents is not a lock and is left alone (the
/// output is then unguarded). The kernel
/// releases the lock of a process that dies; the file left then is taken
/// by the next claim. Within a process no claimed output may be another
/// claim's lock file, and a lock file replaced by something else is not
/// removed.
#[derive(Debug)]
pub struct Claim {
    /// The claimed file, as [`claim_name`] writes it.
    target: PathBuf,
    lock: PathBuf,
    /// The lock file's device and inode: it is removed only while the
    /// path still names it (an output written over it is left alone).
    id: (u64, u64),
    _file: File,
    _listed: Unfinished,
}

/// The targets and lock files of the claims this process holds, so that no
/// output of a run is another's lock file: writing it would replace the
/// lock, and the lock's removal would then remove the output.
static CLAIMED: std::sync::Mutex<Vec<(PathBuf, PathBuf)>> = std::sync::Mutex::new(Vec::new());

fn claimed() -> std::sync::MutexGuard<'static, Vec<(PathBuf, PathBuf)>> {
    CLAIMED.lock().unwrap_or_else(|p| p.into_inner())
}

/// `file` with its directory made absolute where it can be, so that two
/// spellings of one path (`a`, `./a`, `/tmp/a`) compare equal.
fn claim_name(file: &Path) -> PathBuf {
    let dir = directory_of(file);
    let dir = fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
    match file.file_name() {
        Some(name) => dir.join(name),
        None => file.to_path_buf(),
    }
}

impl Claim {
    /// Claims `target` (following symlinks): `Ok(None)` where the file
    /// system has no locks to give (the output is then unguarded, as it
    /// was); an error naming `what` when another process holds the claim.
    pub fn take(target: &Path, what: &str) -> Result<Option<Claim>, OutputError> {
        Self::take_waiting(target, what, PROBE_PATIENCE)
    }

    /// [`Claim::take`], waiting up to `patience` for a lock held for a
    /// moment.
    fn take_waiting(target: &Path, what: &str, patience: std::time::Duration) -> Result<Option<Claim>, OutputError> {
        let file = match resolve(target).map_err(|e| OutputError::new(target, e))? {
            Target::File { path, .. } => path,
            Target::Special(_) => return Ok(None),
        };
        let Some(name) = file.file_name() else { return Ok(None) };
        let lock = directory_of(&file).join(format!(".{}.lock", name.to_string_lossy()));
        let (named, lock_named) = (claim_name(&file), claim_name(&lock));
        for (other, other_lock) in claimed().iter() {
            let clash = if *other == named {
                // flock excludes another open file of this process too, and
                // would blame another process.
                return Err(OutputError::new(
                    target,
                    io::Error::other(format!(
                        "this process is writing it already (another run, or another output of this one); give \
                         this run its own {what}"
                    )),
                ));
            } else if *other_lock == named {
                format!("it is the lock file warpmc keeps beside {} in this run", other.display())
            } else if *other == lock_named {
                format!("its lock file would be {}, another output of this run", other.display())
            } else {
                continue;
            };
            return Err(OutputError::new(target, io::Error::other(format!("{clash}: name one of them otherwise"))));
        }
        // The holder before may remove the lock file between this open and
        // this lock: the lock is then on a file no other claim will find,
        // and is taken again on the file at the path now.
        for _ in 0..LOCK_TRIES {
            let Ok(handle) = open_lock_file(&lock, true) else {
                return Ok(None);
            };
            // A claim's lock file stays empty: one with contents, or one
            // that is not a regular file (a FIFO), is some other file of
            // that name, neither locked nor removed here.
            if handle.metadata().is_ok_and(|m| m.len() > 0 || !m.is_file()) {
                return Ok(None);
            }
            #[cfg(not(unix))]
            {
                let _ = (handle, what);
                return Ok(None);
            }
            #[cfg(unix)]
            {
                use std::os::unix::fs::MetadataExt;
                let fd = std::os::unix::io::AsRawFd::as_raw_fd(&handle);
                // SAFETY: flock on a descriptor this function owns; no
                // memory is passed.
                let try_lock = || unsafe { libc::flock(fd, libc::LOCK_EX | libc::LOCK_NB) } == 0;
                // A reader asking who holds the claim ([`claimed_elsewhere`])
                // holds a shared lock for a moment; a run holds it for its
                // whole life. Retried for a while before another run is
                // blamed.
                let started = std::time::Instant::now();
                let mut locked = try_lock();
                while !locked
                    && io::Error::last_os_error().kind() == io::ErrorKind::WouldBlock
                    && started.elapsed() < patience
                {
                    std::thread::sleep(std::time::Duration::from_millis(2));
                    locked = try_lock();
                }
                if locked {
                    let locked = handle.metadata().map(|m| (m.dev(), m.ino())).ok();
                    let at_path = fs::metadata(&lock).map(|m| (m.dev(), m.ino())).ok();
                    if let Some(id) = locked.filter(|_| locked == at_path) {
                        let listed = Unfinished::new(&lock);
                        claimed().push((named.clone(), lock_named.clone()));
                        return Ok(Some(Claim { target: named, lock, id, _file: handle, _listed: listed }));
                    }
                    continue;
                }
                return match io::Error::last_os_error() {
                    e if e.kind() == io::ErrorKind::WouldBlock => Err(OutputError::new(
                        target,
                        io::Error::other(format!(
                            "another process is writing it (it holds {}); give this run its own {what}",
                            lock.display()
                        )),
                    )),
                    // No locks on this file system (ENOLCK, EOPNOTSUPP):
                    // unguarded.
                    _ => Ok(None),
                };
            }
        }
        Ok(None)
    }
}

/// The lock file of `target`'s claim when another process holds that
/// claim now (see [`Claim`]), for telling a reader why a file that a run
/// is about to write is not there yet. Takes nothing and creates nothing.
pub fn claimed_elsewhere(target: &Path) -> Option<PathBuf> {
    // Beside the file a link leads to, where the claim is taken.
    let Target::File { path: file, .. } = resolve(target).ok()? else { return None };
    let name = file.file_name()?;
    let lock = directory_of(&file).join(format!(".{}.lock", name.to_string_lossy()));
    let handle = open_lock_file(&lock, false).ok()?;
    if !handle.metadata().is_ok_and(|m| m.is_file() && m.len() == 0) {
        return None;
    }
    #[cfg(unix)]
    {
        let fd = std::os::unix::io::AsRawFd::as_raw_fd(&handle);
        // SAFETY: flock on a descriptor this function owns; the shared lock
        // taken, if any, goes when `handle` is closed on return.
        let free = unsafe { libc::flock(fd, libc::LOCK_SH | libc::LOCK_NB) } == 0;
        let held = !free && io::Error::last_os_error().kind() == io::ErrorKind::WouldBlock;
        held.then_some(lock)
    }
    #[cfg(not(unix))]
    {
        None
    }
}

/// Opens a claim's lock file (created when `create`), without waiting:
/// something else of that name, such as a FIFO, would block an ordinary
/// open until another process opened its other end.
fn open_lock_file(lock: &Path, create: bool) -> io::Result<File> {
    let mut options = OpenOptions::new();
    if create {
        options.create(true).truncate(false).write(true);
    } else {
        options.read(true);
    }
    // Nor through a link: a link at the lock's name is some other file's,
    // neither to create at its target nor to lock.
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::custom_flags(&mut options, libc::O_NONBLOCK | libc::O_NOFOLLOW);
    options.open(lock)
}

/// Tries at taking a claim whose lock file its holder removes meanwhile.
const LOCK_TRIES: usize = 16;

/// How long a claim waits out a lock held for a moment, as
/// [`claimed_elsewhere`] holds one, before naming another process.
const PROBE_PATIENCE: std::time::Duration = std::time::Duration::from_millis(50);

impl Drop for Claim {
    fn drop(&mut self) {
        #[cfg(unix)]
        {
            use std::os::unix::fs::MetadataExt;
            let ours = fs::symlink_metadata(&self.lock).is_ok_and(|m| (m.dev(), m.ino()) == self.id && m.len() == 0);
            if ours {
                let _ = fs::remove_file(&self.lock);
            }
        }
        let mut list = claimed();
        if let Some(i) = list.iter().position(|(t, _)| *t == self.target) {
            list.swap_remove(i);
        }
    }
}

/// The files this process has under way: temporary files of outputs being
/// written, partial videos, lock files of claims. A process that ends at
/// once (a second Ctrl-C) removes them with [`remove_unfinished`], as it
/// runs no destructors.
static UNFINISHED: std::sync::Mutex<Vec<PathBuf>> = std::sync::Mutex::new(Vec::new());

fn unfinished() -> std::sync::MutexGuard<'static, Vec<PathBuf>> {
    UNFINISHED.lock().unwrap_or_else(|p| p.into_inner())
}

/// A file (or scratch directory) under way, listed for
/// [`remove_unfinished`] while this lives.
#[derive(Debug)]
pub struct Unfinished(PathBuf);

impl Unfinished {
    /// Lists `path` until the returned value is dropped.
    pub fn new(path: &Path) -> Unfinished {
        unfinished().push(path.to_path_buf());
        Unfinished(path.to_path_buf())
    }
}

impl Drop for Unfinished {
    fn drop(&mut self) {
        let mut list = unfinished();
        if let Some(i) = list.iter().rposition(|p| *p == self.0) {
            list.swap_remove(i);
        }
    }
}

/// Removes every file (or scratch directory) under way ([`Unfinished`]), for a process about to
/// end without running destructors: no temporary file, partial video or
/// lock is left behind. Outputs already in place are not touched.
pub fn remove_unfinished() {
    for path in unfinished().drain(..) {
        // A scratch directory goes with what it holds.
        if fs::symlink_metadata(&path).is_ok_and(|m| m.is_dir()) {
            let _ = fs::remove_dir_all(path);
        } else {
            let _ = fs::remove_file(path);
        }
    }
}

/// Writes the output at `path` with `body`, as the module describes.
///
/// `body` writes into a buffered writer; its error, or any error of
/// flushing, syncing or renaming, leaves what was at `path` untouched
/// (for regular files) and is returned.
pub fn write(path: &Path, body: impl FnOnce(&mut dyn Write) -> io::Result<()>) -> Result<(), OutputError> {
    let err = |e| OutputError::new(path, e);
    match resolve(path).map_err(err)? {
        Target::Special(target) => {
            let file = open_special(&target).map_err(err)?;
            let mut out = BufWriter::new(file);
            body(&mut out).map_err(err)?;
            out.flush().map_err(err)?;
            Ok(())
        }
        Target::File { path: target, exists } => replace(&target, exists, body).map_err(err),
    }
}

/// Set when the process is asked to stop ([`stop_waiting`]).
static STOP_WAITING: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Tells writes waiting for a FIFO's reader to give up (with an error),
/// and later ones not to wait: for a process asked to stop (Ctrl-C, a batch
/// system's SIGTERM), which still has its checkpoint and other outputs to
/// write. Safe to call from a signal handler.
pub fn stop_waiting() {
    STOP_WAITING.store(true, std::sync::atomic::Ordering::SeqCst);
}

/// Opens a device, FIFO or socket for writing. Opening a FIFO that no
/// process reads blocks in the kernel, out of reach of Ctrl-C's orderly
/// stop; so the FIFO is opened without blocking, and while it has no
/// reader the open is retried, with one note, until a reader comes or
/// [`stop_waiting`] is called.
fn open_special(target: &Path) -> io::Result<File> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
        use std::os::unix::io::AsRawFd;
        let is_fifo = fs::metadata(target).is_ok_and(|m| m.file_type().is_fifo());
        if !is_fifo {
            return OpenOptions::new().write(true).open(target);
        }
        let mut noted = false;
        loop {
            match OpenOptions::new().write(true).custom_flags(libc::O_NONBLOCK).open(target) {
                Ok(file) => {
                    // Writes block again, as into any pipe.
                    let fd = file.as_raw_fd();
                    // SAFETY: fcntl on a descriptor `file` owns; no memory
                    // is passed.
                    let cleared = unsafe {
                        let flags = libc::fcntl(fd, libc::F_GETFL);
                        flags >= 0 && libc::fcntl(fd, libc::F_SETFL, flags & !libc::O_NONBLOCK) == 0
                    };
                    return if cleared { Ok(file) } else { Err(io::Error::last_os_error()) };
                }
                Err(e) if e.raw_os_error() == Some(libc::ENXIO) => {
                    if STOP_WAITING.load(std::sync::atomic::Ordering::SeqCst) {
                        return Err(io::Error::other("a FIFO that no process reads (stopped waiting for one)"));
                    }
                    if !noted {
                        // One write, so that the line stays whole beside
                        // other processes' output.
                        let line = format!(
                            "note: {}: waiting for a process to read this FIFO (Ctrl-C stops waiting)\n",
                            target.display()
                        );
                        let _ = io::stderr().lock().write_all(line.as_bytes());
                        noted = true;
                    }
                    std::thread::sleep(std::time::Duration::from_millis(50));
                }
                Err(e) => return Err(e),
            }
        }
    }
    #[cfg(not(unix))]
    OpenOptions::new().write(true).open(target)
}

/// Writes `bytes` as the output at `path` (see [`write`](fn@write)).
pub fn write_bytes(path: &Path, bytes: &[u8]) -> Result<(), OutputError> {
    write(path, |out| out.write_all(bytes))
}

/// A new temporary file in `dir`. Its error names the directory, not the
/// temporary file's random name, which the user never chose.
fn temporary_in(builder: &tempfile::Builder<'_, '_>, dir: &Path) -> io::Result<tempfile::NamedTempFile> {
    builder.tempfile_in(dir).map_err(|e| {
        let message = e.to_string();
        let cause = message.split(" at path \"").next().unwrap_or(&message);
        io::Error::new(e.kind(), format!("cannot create a file in {}: {cause}", dir.display()))
    })
}

/// An error of writing the temporary file without its random name (which
/// tempfile adds as "at path …"): the caller names the output.
fn without_temporary_name(e: io::Error) -> io::Error {
    let message = e.to_string();
    match message.split_once(" at path \"") {
        Some((cause, _)) => io::Error::new(e.kind(), cause.to_string()),
        None => e,
    }
}

/// The atomic replacement of a regular file (or creation of a new one).
fn replace(target: &Path, exists: bool, body: impl FnOnce(&mut dyn Write) -> io::Result<()>) -> io::Result<()> {
    let dir = directory_of(target);
    let prefix = temporary_prefix();
    let mut builder = tempfile::Builder::new();
    builder.prefix(&prefix).suffix(".tmp");
    #[cfg(unix)]
    let mode = {
        use std::os::unix::fs::PermissionsExt;
        // An existing file's mode is set exactly below; a new file is
        // created 0666 less the umask, as File::create would.
        let mode = if exists { fs::metadata(target)?.permissions().mode() & 0o7777 } else { 0o666 };
        builder.permissions(fs::Permissions::from_mode(mode));
        mode
    };
    let tmp = temporary_in(&builder, dir)?;
    let _listed = Unfinished::new(tmp.path());
    #[cfg(unix)]
    if exists {
        use std::os::unix::fs::PermissionsExt;
        tmp.as_file().set_permissions(fs::Permissions::from_mode(mode))?;
    }
    let mut out = BufWriter::new(tmp);
    body(&mut out).map_err(without_temporary_name)?;
    let tmp = out.into_inner().map_err(|e| without_temporary_name(e.into_error()))?;
    tmp.as_file().sync_all().map_err(without_temporary_name)?;
    tmp.persist(target).map_err(|e| without_temporary_name(e.error))?;
    // The rename itself reaches the disk with the directory.
    if let Ok(d) = File::open(dir) {
        let _ = d.sync_all();
    }
    Ok(())
}

/// Checks, before any work starts, that the file system of an output at
/// `path` has room for `bytes` of it (beside the file already there, which
/// the new one replaces only once it is whole). Devices and FIFOs, and file
/// systems that do not say, pass.
pub fn check_space(path: &Path, bytes: u64) -> Result<(), OutputError> {
    let err = |e| OutputError::new(path, e);
    let Target::File { path: target, .. } = resolve(path).map_err(err)? else {
        return Ok(());
    };
    let Some(free) = free_bytes(directory_of(&target)) else {
        return Ok(());
    };
    if free < bytes {
        return Err(err(io::Error::new(
            io::ErrorKind::StorageFull,
            format!(
                "needs about {} of disk space, but its file system has {} free",
                human_bytes(bytes),
                human_bytes(free)
            ),
        )));
    }
    Ok(())
}

/// Bytes an unprivileged process may still write in the file system of
/// `dir`, where the system says.
fn free_bytes(dir: &Path) -> Option<u64> {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(dir.as_os_str().as_bytes()).ok()?;
    let mut st = std::mem::MaybeUninit::<libc::statvfs>::uninit();
    // SAFETY: `c` is a NUL-terminated path and `st` points to writable
    // memory of the struct's size; statvfs only writes it.
    let rc = unsafe { libc::statvfs(c.as_ptr(), st.as_mut_ptr()) };
    if rc != 0 {
        return None;
    }
    // SAFETY: statvfs returned 0, so it filled the struct.
    let st = unsafe { st.assume_init() };
    // fsblkcnt_t and c_ulong are u64 here, 32 bits on other targets.
    #[allow(clippy::unnecessary_cast)]
    (st.f_bavail as u64).checked_mul(st.f_frsize as u64)
}

/// Checks, before any work starts, that an output at `path` can be
/// written: the directory exists and takes new files, an existing file can
/// be written, and the path is not a directory. Nothing at `path` changes;
/// the temporary files that ended warpmc processes of this host left in
/// its directory (killed while writing) are removed.
pub fn check_writable(path: &Path) -> Result<(), OutputError> {
    let err = |e| OutputError::new(path, e);
    match resolve(path).map_err(err)? {
        // Opening a FIFO for writing would wait for a reader; a device
        // that refuses writes reports it at the write.
        Target::Special(_) => Ok(()),
        Target::File { path: target, exists } => {
            let dir = directory_of(&target);
            if !dir.is_dir() {
                return Err(err(io::Error::new(
                    io::ErrorKind::NotFound,
                    format!("the directory {} does not exist", dir.display()),
                )));
            }
            if exists {
                // Appending nothing changes nothing but needs write access.
                OpenOptions::new().append(true).open(&target).map_err(err)?;
            }
            remove_stale_temporaries(dir);
            let prefix = temporary_prefix();
            let mut builder = tempfile::Builder::new();
            builder.prefix(&prefix).suffix(".tmp");
            temporary_in(&builder, dir).map(drop).map_err(err)
        }
    }
}

/// Where another program (ffmpeg) writes an output for `target` before it
/// is renamed into place: `.warpmc-HOST-PID-partial-NAME` beside it. It
/// ends in the target's own name, so its extension still names the
/// format; [`check_writable`] removes those that ended processes left
/// (killed while the other program wrote).
pub fn partial_path(target: &Path) -> PathBuf {
    let name = target.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    target.with_file_name(format!("{}{PARTIAL_MARK}{name}", temporary_prefix()))
}

/// What follows the prefix in the name of a [`partial_path`].
const PARTIAL_MARK: &str = "partial-";

/// This host's name as it goes into temporary files' names: letters,
/// digits, '.' and '-' (others become '_'), at most 32 of them.
fn host_name() -> String {
    let mut buf = [0u8; 256];
    // SAFETY: gethostname writes at most `buf.len()` bytes into `buf`.
    let rc = unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len()) };
    let name = if rc == 0 { &buf[..buf.iter().position(|&b| b == 0).unwrap_or(buf.len())] } else { b"host" };
    name.iter()
        .take(32)
        .map(|&b| if b.is_ascii_alphanumeric() || b == b'.' || b == b'-' { b as char } else { '_' })
        .collect()
}

/// The start of the name of a temporary file this process writes an output
/// through: `.warpmc-HOST-PID-`, so that what a killed process left can be
/// told from what a running one is writing.
fn temporary_prefix() -> String {
    format!(".warpmc-{}-{}-", host_name(), std::process::id())
}

/// Removes from `dir` the temporary files of warpmc processes of this host
/// that have ended (killed while writing an output: a batch system that
/// preempts a job again and again would otherwise pile up copies of its
/// checkpoint). A file changed in the last [`STALE_AFTER`] is kept even so:
/// a process of another PID namespace that shares this host's name (a
/// container with the host's network) may be writing it. Each directory is
/// looked at once per process.
fn remove_stale_temporaries(dir: &Path) {
    static SEEN: std::sync::Mutex<Vec<PathBuf>> = std::sync::Mutex::new(Vec::new());
    let key = fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
    {
        let mut seen = SEEN.lock().unwrap_or_else(|p| p.into_inner());
        if seen.contains(&key) {
            return;
        }
        seen.push(key);
    }
    let ours = format!(".warpmc-{}-", host_name());
    let Ok(entries) = fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let name = entry.file_name();
        // `PID-RANDOM.tmp` (ours) or `PID-partial-NAME` (another
        // program's, see partial_path).
        let Some(pid) = name
            .to_str()
            .and_then(|n| n.strip_prefix(&ours))
            .and_then(|rest| rest.split_once('-'))
            .filter(|(_, tail)| tail.ends_with(".tmp") || tail.starts_with(PARTIAL_MARK))
            .and_then(|(pid, _)| pid.parse::<libc::pid_t>().ok())
        else {
            continue;
        };
        let quiet_for = entry.metadata().ok().and_then(|m| m.modified().ok()).and_then(|t| t.elapsed().ok());
        if pid > 0
            && pid as u32 != std::process::id()
            && quiet_for.is_some_and(|d| d >= STALE_AFTER)
            && !process_alive(pid)
        {
            let _ = fs::remove_file(entry.path());
        }
    }
}

/// How long a temporary file of an ended process must have been left
/// unchanged before it is removed. Writers write continuously, so a live
/// one's file is never this old.
const STALE_AFTER: std::time::Duration = std::time::Duration::from_secs(15 * 60);

/// Whether a process of this number exists on this host.
fn process_alive(pid: libc::pid_t) -> bool {
    // SAFETY: signal 0 only checks that the process exists and may be
    // signalled; nothing is sent.
    let rc = unsafe { libc::kill(pid, 0) };
    rc == 0 || io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
}

/// A file a command names: the option that names it (for messages), its
/// path, and whether the command writes it.
#[derive(Debug, Clone, Copy)]
pub struct NamedFile<'a> {
    /// The option or argument that names the file: `--out`, `GENOME`.
    pub option: &'a str,
    /// The path as given.
    pub path: &'a Path,
    /// Whether the command writes the file (or only reads it).
    pub written: bool,
}

impl<'a> NamedFile<'a> {
    /// A file the command reads.
    pub fn input(option: &'a str, path: &'a Path) -> Self {
        NamedFile { option, path, written: false }
    }

    /// A file the command writes.
    pub fn output(option: &'a str, path: &'a Path) -> Self {
        NamedFile { option, path, written: true }
    }
}

/// Standard output as a file the command writes, where it is a regular
/// file (`> results.csv`, `>> log`): an output written at that path would
/// replace the file under it, and whatever was printed there would be
/// lost. `None` for a terminal, a pipe or a device.
pub fn standard_output() -> Option<NamedFile<'static>> {
    #[cfg(unix)]
    {
        let path = Path::new("/dev/fd/1");
        fs::metadata(path).ok().filter(fs::Metadata::is_file).map(|_| NamedFile::output("standard output", path))
    }
    #[cfg(not(unix))]
    {
        None
    }
}

/// Whether two paths name the same file (after symlinks, `..` and hard
/// links); where either names a device or does not resolve, whether they
/// are written alike.
pub fn same_file(a: &Path, b: &Path) -> bool {
    match (identity(a), identity(b)) {
        (Some(x), Some(y)) => x == y,
        _ => a == b,
    }
}

/// What a path names, for comparing two paths: an existing file by device
/// and inode (so hard links and symlinks compare equal), a file not yet
/// there by its canonical directory and name. None for devices, FIFOs and
/// paths that do not resolve (writing twice to `/dev/null` destroys
/// nothing; an unusable path is reported by [`check_writable`]).
fn identity(path: &Path) -> Option<(u64, u64, Option<PathBuf>)> {
    match resolve(path).ok()? {
        Target::Special(_) => None,
        Target::File { path: target, exists: true } => {
            #[cfg(unix)]
            {
                use std::os::unix::fs::MetadataExt;
                let meta = fs::metadata(&target).ok()?;
                Some((meta.dev(), meta.ino(), None))
            }
            #[cfg(not(unix))]
            {
                Some((0, 0, Some(fs::canonicalize(&target).ok()?)))
            }
        }
        Target::File { path: target, exists: false } => {
            let dir = fs::canonicalize(directory_of(&target)).ok()?;
            Some((0, 0, Some(dir.join(target.file_name()?))))
        }
    }
}

/// Checks, before any work starts, that no file a command writes is
/// another file it writes or reads: `--series a.npy --snapshot a.npy`
/// would leave one of the two outputs, and `--out` onto the genome it
/// renders would destroy the genome. Paths are compared after symlinks,
/// `..` and hard links. Two inputs may be the same file, and so may two
/// outputs that are devices (`/dev/null`).
pub fn check_distinct(files: &[NamedFile<'_>]) -> Result<(), String> {
    // Each file's identity, with the first file and the first written file
    // seen with it: one pass, so that thousands of outputs (a file of many
    // flames) are checked at once.
    let mut seen: std::collections::HashMap<_, (usize, Option<usize>)> = std::collections::HashMap::new();
    for (j, b) in files.iter().enumerate() {
        let Some(id) = identity(b.path) else { continue };
        match seen.get_mut(&id) {
            None => {
                seen.insert(id, (j, b.written.then_some(j)));
            }
            Some((first, first_written)) => {
                let clash = if b.written { Some(*first) } else { *first_written };
                if let Some(i) = clash {
                    return Err(same_file_message(&files[i], b));
                }
            }
        }
    }
    Ok(())
}

/// Why `a` and `b`, one of them written, cannot be the same file.
fn same_file_message(a: &NamedFile<'_>, b: &NamedFile<'_>) -> String {
    let path = b.path.display();
    match (a.written, b.written) {
        (true, true) => {
            format!("{} and {} name the same file ({path}); give each output a file of its own", a.option, b.option)
        }
        (true, false) => format!(
            "{} would overwrite {} ({path}), which this command reads; choose another output file",
            a.option, b.option
        ),
        _ => format!(
            "{} would overwrite {} ({path}), which this command reads; choose another output file",
            b.option, a.option
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::FileTypeExt;

    /// What a killed warpmc process of this host left (its temporary files
    /// and the partial videos of its ffmpeg) is removed when an output's
    /// directory is checked; what a running one (this process), another
    /// host's or another program's file is kept.
    #[test]
    fn temporaries_of_ended_processes_of_this_host_are_removed() {
        let dir = tempfile::tempdir().unwrap();
        let mut ended = std::process::Command::new("true").spawn().unwrap();
        let dead = ended.id();
        ended.wait().unwrap();
        let host = host_name();
        let names = [
            format!(".warpmc-{host}-{dead}-AbCd12.tmp"),
            format!(".warpmc-{host}-{}-EfGh34.tmp", std::process::id()),
            format!(".warpmc-elsewhere-{dead}-IjKl56.tmp"),
            format!(".warpmc-{host}-{dead}-MnOp78.txt"),
            "notes.tmp".to_string(),
            format!(".warpmc-{host}-{dead}-partial-film.mp4"),
            format!(".warpmc-{host}-{}-partial-film.mp4", std::process::id()),
            format!(".warpmc-{host}-{dead}-QrSt90.tmp"),
        ];
        let an_hour_ago = std::time::SystemTime::now() - std::time::Duration::from_secs(3600);
        for (i, n) in names.iter().enumerate() {
            fs::write(dir.path().join(n), b"x").unwrap();
            // The last was written just now (perhaps by a process of
            // another PID namespace): it is kept.
            if i + 1 < names.len() {
                let file = fs::File::options().write(true).open(dir.path().join(n)).unwrap();
                file.set_modified(an_hour_ago).unwrap();
            }
        }
        check_writable(&dir.path().join("out.csv")).unwrap();
        let left: Vec<bool> = names.iter().map(|n| dir.path().join(n).exists()).collect();
        assert_eq!(left, [false, true, true, true, true, false, true, true]);
        // The names a writer gives: this host, this process.
        assert!(temporary_prefix().starts_with(&format!(".warpmc-{host}-{}-", std::process::id())));
        let partial = partial_path(&dir.path().join("film.mp4"));
        assert_eq!(partial, dir.path().join(&names[6]));
    }

    /// /dev/stdout in a pipeline: a link to a pipe, which has no path.
    #[test]
    fn a_link_to_a_pipe_is_written_in_place() {
        let mut fds = [0; 2];
        // SAFETY: pipe writes two descriptors into `fds`.
        assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
        let link = PathBuf::from(format!("/proc/self/fd/{}", fds[1]));
        assert_eq!(resolve(&link).unwrap(), Target::Special(link.clone()));
        check_writable(&link).unwrap();
        // SAFETY: the descriptors are this test's own.
        unsafe {
            libc::close(fds[0]);
            libc::close(fds[1]);
        }
    }

    #[test]
    fn writes_new_files_and_replaces_old_ones() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a.txt");
        write_bytes(&p, b"one").unwrap();
        write_bytes(&p, b"two").unwrap();
        assert_eq!(fs::read(&p).unwrap(), b"two");
        // No temporary file is left behind.
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    #[test]
    fn a_failing_body_leaves_the_old_file() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("keep.txt");
        write_bytes(&p, b"precious").unwrap();
        let e = write(&p, |out| {
            out.write_all(b"half")?;
            Err(io::Error::other("the renderer failed"))
        })
        .unwrap_err();
        assert!(e.to_string().contains("the renderer failed"), "{e}");
        assert_eq!(fs::read(&p).unwrap(), b"precious");
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    #[test]
    fn directories_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        assert!(write_bytes(dir.path(), b"x").is_err());
        assert!(check_writable(dir.path()).is_err());
    }

    #[test]
    fn a_missing_directory_is_found_before_work_starts() {
        let dir = tempfile::tempdir().unwrap();
        let e = check_writable(&dir.path().join("no/such/dir/out.csv")).unwrap_err();
        assert!(e.to_string().contains("does not exist"), "{e}");
        assert!(check_writable(&dir.path().join("fine.csv")).is_ok());
        assert!(!dir.path().join("fine.csv").exists());
    }

    /// A claim excludes a second one on the same output, and its empty lock
    /// file goes with it; a file of the lock's name with contents is not a
    /// lock: left alone, and the output unguarded.
    #[test]
    fn claims_exclude_each_other_and_leave_foreign_files_alone() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("run.csv");
        let lock = dir.path().join(".run.csv.lock");
        let first = Claim::take(&out, "--out file").unwrap().expect("locks on a temporary directory");
        let e = Claim::take(&out, "--out file").unwrap_err();
        assert!(e.to_string().contains("this process is writing it already"), "{e}");
        drop(first);
        assert!(!lock.exists());
        fs::write(&lock, b"notes").unwrap();
        assert!(Claim::take(&out, "--out file").unwrap().is_none());
        assert_eq!(fs::read(&lock).unwrap(), b"notes");
        assert!(claimed_elsewhere(&out).is_none());
    }

    /// A FIFO of the lock's name is not a lock either: neither taking a
    /// claim nor asking who holds one waits for its other end.
    #[test]
    fn a_fifo_named_as_a_lock_is_left_alone_at_once() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("run.csv");
        let lock = dir.path().join(".run.csv.lock");
        let name = std::ffi::CString::new(lock.to_str().unwrap()).unwrap();
        // SAFETY: mkfifo reads the NUL-terminated path only.
        assert_eq!(unsafe { libc::mkfifo(name.as_ptr(), 0o600) }, 0);
        assert!(Claim::take(&out, "--out file").unwrap().is_none());
        assert!(claimed_elsewhere(&out).is_none());
        assert!(fs::symlink_metadata(&lock).unwrap().file_type().is_fifo());
    }

    /// A lock held for a moment, as a reader asking who holds the claim
    /// holds it, does not make a run starting then blame another process.
    #[test]
    fn a_claim_waits_out_a_readers_moment() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("run.ckpt");
        let reader = File::create(dir.path().join(".run.ckpt.lock")).unwrap();
        let fd = std::os::unix::io::AsRawFd::as_raw_fd(&reader);
        // SAFETY: flock on a descriptor this test owns.
        assert_eq!(unsafe { libc::flock(fd, libc::LOCK_SH | libc::LOCK_NB) }, 0);
        let done = std::thread::spawn(move || {
            std::thread::sleep(std::time::Duration::from_millis(10));
            drop(reader);
        });
        // A patience far beyond the reader's moment, so that a busy machine
        // that runs the reader's thread late does not fail the test.
        let patient = std::time::Duration::from_secs(30);
        assert!(Claim::take_waiting(&out, "--checkpoint file", patient).unwrap().is_some());
        done.join().unwrap();
    }

    /// A link at the lock file's name is some other file's: nothing is
    /// created at its target, nothing locked, and the output goes
    /// unguarded.
    #[test]
    fn a_link_at_the_lock_files_name_is_left_alone() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("run.ckpt");
        let target = dir.path().join("elsewhere");
        std::os::unix::fs::symlink(&target, dir.path().join(".run.ckpt.lock")).unwrap();
        assert!(Claim::take(&out, "--checkpoint file").unwrap().is_none());
        assert!(claimed_elsewhere(&out).is_none());
        assert!(fs::symlink_metadata(&target).is_err(), "the link's target was created");
    }

    /// While a claim is held, a reader learns which lock holds it (as
    /// another process would: flock excludes another open file of this
    /// process too); once dropped, no one holds it.
    #[test]
    fn a_held_claim_is_seen_from_outside() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("run.ckpt");
        let claim = Claim::take(&out, "--checkpoint file").unwrap().expect("locks on a temporary directory");
        assert_eq!(claimed_elsewhere(&out), Some(dir.path().join(".run.ckpt.lock")));
        drop(claim);
        assert!(claimed_elsewhere(&out).is_none());
    }

    /// No output of a process is another's lock file (writing it would
    /// replace the lock, and the lock's removal remove the output), in
    /// either order and however the path is spelt; a file written over a
    /// lock all the same is not removed with the claim.
    #[test]
    fn an_output_is_never_another_outputs_lock() {
        let dir = tempfile::tempdir().unwrap();
        let ckpt = dir.path().join("c.ckpt");
        let lock = dir.path().join(".c.ckpt.lock");
        let claim = Claim::take(&ckpt, "--checkpoint file").unwrap().expect("locks on a temporary directory");
        let e = Claim::take(&dir.path().join(".").join(".c.ckpt.lock"), "--out file").unwrap_err();
        assert!(e.to_string().contains("it is the lock file warpmc keeps beside"), "{e}");
        drop(claim);
        let out = Claim::take(&lock, "--out file").unwrap().expect("locks on a temporary directory");
        let e = Claim::take(&ckpt, "--checkpoint file").unwrap_err();
        assert!(e.to_string().contains("its lock file would be"), "{e}");
        drop(out);

        let claim = Claim::take(&ckpt, "--checkpoint file").unwrap().unwrap();
        write_bytes(&lock, b"results").unwrap();
        drop(claim);
        assert_eq!(fs::read(&lock).unwrap(), b"results");
    }

    #[test]
    fn room_on_the_disk_is_checked_before_work_starts() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("series.npy");
        assert!(check_space(&out, 1024).is_ok());
        let e = check_space(&out, u64::MAX / 2).unwrap_err();
        assert_eq!(e.cause.kind(), io::ErrorKind::StorageFull);
        assert!(e.to_string().contains("series.npy") && e.to_string().contains("EiB"), "{e}");
        assert!(!out.exists());
        // A device takes what it takes.
        assert!(check_space(Path::new("/dev/null"), u64::MAX).is_ok());
    }
}
