//! Forking like Redis: BGSAVE and BGREWRITEAOF run in a child process
//! whose copy-on-write memory is the dataset frozen at the fork.
//!
//! In the child, only the calling thread exists. It serializes the dataset
//! ([`Engine::start_child`]), writes the file with plain `std::fs` calls
//! ([`crate::storage::run_child`]) and leaves with `_exit`, running no
//! destructor and touching nothing the other threads of the parent could
//! have held locked at the fork (the log, channels, tokio). Allocation is
//! the one shared facility it uses: glibc's malloc takes its locks around
//! `fork` so the child's heap is consistent.
//!
//! The parent remembers each child's pid and reaps it with
//! `waitpid(WNOHANG)` ([`Children::reap`]), on SIGCHLD and on a periodic
//! check.

use std::path::PathBuf;

use seedkv_engine::persist::{ChildId, ForkRequest};
use seedkv_engine::{Engine, Now};

/// The children of this process that have not been reaped.
#[derive(Debug, Default)]
pub struct Children {
    running: Vec<(libc::pid_t, ChildId)>,
}

impl Children {
    /// Forks a child for `fork`. `Err` if `fork(2)` failed (the caller
    /// reports the child as failed at once). Never returns in the child.
    pub fn spawn(
        &mut self,
        engine: &Engine,
        now: Now,
        fork: &ForkRequest,
        dir: PathBuf,
    ) -> std::io::Result<libc::pid_t> {
        // SAFETY: fork(2) has no memory-safety preconditions of its own; in
        // the child only this thread runs, and the code it runs (see
        // `child_main`) uses no lock another thread could hold, apart from
        // malloc's, which glibc makes fork-safe.
        let pid = unsafe { libc::fork() };
        match pid {
            -1 => Err(std::io::Error::last_os_error()),
            0 => child_main(engine, now, fork, dir),
            pid => {
                self.running.push((pid, fork.id));
                Ok(pid)
            }
        }
    }

    /// Stops every running child with SIGUSR1 (Redis's signal for a child
    /// killed on purpose) and reaps it.
    pub fn kill_all(&mut self) {
        for &(pid, _) in &self.running {
            // SAFETY: kill(2) and waitpid(2) on our own child's pid.
            unsafe {
                libc::kill(pid, libc::SIGUSR1);
                libc::waitpid(pid, std::ptr::null_mut(), 0);
            }
        }
        self.running.clear();
    }

    /// Children running now.
    pub fn count(&self) -> usize {
        self.running.len()
    }

    /// The children that exited since the last call, with whether each
    /// exited with status 0.
    pub fn reap(&mut self) -> Vec<(ChildId, bool)> {
        let mut exited = Vec::new();
        self.running.retain(|&(pid, id)| {
            let mut status: libc::c_int = 0;
            // SAFETY: `status` is a valid place for waitpid to write to.
            let r = unsafe { libc::waitpid(pid, &mut status, libc::WNOHANG) };
            match r {
                0 => true,
                // ECHILD: someone else reaped it; its outcome is unknown.
                -1 => {
                    exited.push((id, false));
                    false
                }
                _ => {
                    let ok = libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0;
                    exited.push((id, ok));
                    false
                }
            }
        });
        exited
    }
}

/// The child's whole life: serialize, write, `_exit`.
fn child_main(engine: &Engine, now: Now, fork: &ForkRequest, dir: PathBuf) -> ! {
    close_inherited_fds();
    let mut child = engine.start_child(now, fork);
    let ok = crate::storage::run_child(dir, &mut child);
    if let Some(why) = child.error() {
        // One raw write(2) to stderr: no lock of the parent's logger.
        let line = format!("{} # {why}\n", std::process::id());
        // SAFETY: writes `line`'s initialized bytes to fd 2.
        unsafe { libc::write(2, line.as_ptr().cast(), line.len()) };
    }
    // SAFETY: _exit ends the process without running atexit handlers or
    // destructors, which belong to the parent.
    unsafe { libc::_exit(if ok { 0 } else { 1 }) }
}

/// Closes every descriptor but stdin, stdout and stderr: the child uses
/// none of the parent's, and holding the listening socket would keep a
/// restarted server off its port for as long as the child writes (Redis's
/// child closes its listeners too). Highest descriptor tried when
/// `close_range(2)` is missing (Linux before 5.9).
const CLOSE_FDS_FALLBACK_MAX: libc::c_int = 65_536;

fn close_inherited_fds() {
    // SAFETY: closing descriptors no code of the child uses (it opens its
    // own files afterwards).
    unsafe {
        if libc::close_range(3, libc::c_uint::MAX, 0) != 0 {
            for fd in 3..CLOSE_FDS_FALLBACK_MAX {
                libc::close(fd);
            }
        }
    }
}
