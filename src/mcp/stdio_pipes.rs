//! stdin and stdout as pipes the server's own thread waits on (issue 23:
//! task creation over MCP). tokio's `stdin()`/`stdout()` hand every read
//! and every write to a thread of the blocking pool and wake the runtime
//! when it is done: two thread switches per message each way, on top of
//! the tool's own. When both are pipes (as every stdio MCP client starts a
//! server), they are read and written non-blocking from the runtime's
//! thread instead, through `epoll` (`tokio::net::unix::pipe`).
//!
//! Anything else (a terminal, a file, a socket, stdout and stderr on one
//! pipe) keeps tokio's blocking-pool stdio, which works on all of them.
//! Non-blocking mode belongs to the open file, which another process may
//! share: [`StdioPipes`] puts back each descriptor's flags when the server
//! ends.

use std::fs::File;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, RawFd};

use tokio::net::unix::pipe::{Receiver, Sender};

/// The (device, inode) of `fd` when it is a pipe (FIFO), else `None`.
fn fifo_id(fd: BorrowedFd<'_>) -> Option<(u64, u64)> {
    let mut st = std::mem::MaybeUninit::<libc::stat>::zeroed();
    // SAFETY: `fd` is a live descriptor for the borrow; `st` is written by
    // fstat before it is read, and only read when fstat succeeded.
    let ok = unsafe { libc::fstat(fd.as_raw_fd(), st.as_mut_ptr()) } == 0;
    if !ok {
        return None;
    }
    // SAFETY: fstat returned 0, so it filled `st`.
    let st = unsafe { st.assume_init() };
    ((st.st_mode & libc::S_IFMT) == libc::S_IFIFO).then_some((st.st_dev, st.st_ino))
}

/// The file status flags of `fd` (`F_GETFL`), `None` on error.
fn flags(fd: RawFd) -> Option<libc::c_int> {
    // SAFETY: F_GETFL reads the flags of a descriptor; an invalid one
    // returns -1, handled.
    let f = unsafe { libc::fcntl(fd, libc::F_GETFL) };
    (f >= 0).then_some(f)
}

/// Puts back the original status flags of stdin and stdout when dropped.
#[derive(Debug)]
pub struct Restore {
    saved: Vec<(RawFd, libc::c_int)>,
}

impl Drop for Restore {
    fn drop(&mut self) {
        for &(fd, f) in &self.saved {
            // SAFETY: F_SETFL on stdin/stdout, which live as long as the
            // process; a failure leaves the flags as they are.
            unsafe { libc::fcntl(fd, libc::F_SETFL, f) };
        }
    }
}

/// stdin and stdout as non-blocking pipes registered with the current
/// runtime, plus the guard that restores their flags; `None` (use tokio's
/// stdio) unless both are pipes and stderr is not stdout's pipe. Must be
/// called inside a tokio runtime with I/O enabled.
pub fn pipes() -> Option<(Receiver, Sender, Restore)> {
    let stdin = std::io::stdin();
    let stdout = std::io::stdout();
    let stderr = std::io::stderr();
    fifo_id(stdin.as_fd())?;
    let out_id = fifo_id(stdout.as_fd())?;
    // stderr on stdout's pipe would turn non-blocking too, and a full pipe
    // would make a diagnostic fail mid-line.
    if fifo_id(stderr.as_fd()) == Some(out_id) {
        return None;
    }
    let saved = vec![
        (0, flags(stdin.as_fd().as_raw_fd())?),
        (1, flags(stdout.as_fd().as_raw_fd())?),
    ];
    let restore = Restore { saved };
    let read = File::from(stdin.as_fd().try_clone_to_owned().ok()?);
    let write = File::from(stdout.as_fd().try_clone_to_owned().ok()?);
    let read = Receiver::from_file(read).ok()?;
    let write = Sender::from_file(write).ok()?;
    Some((read, write, restore))
}
