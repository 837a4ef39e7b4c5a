//! The descriptors a thread blocked in `poll` or `ppoll` waits on.
//!
//! `/proc/PID/task/TID/syscall` gives a blocked call's arguments, not what they point to: for
//! `poll(fds, nfds, timeout)` the descriptors are in the caller's memory, `nfds` `struct pollfd`
//! (an `int` descriptor, two `short`s of events) at `fds`. They are read here with
//! `process_vm_readv`, which needs the right to trace the process (root, or its parent under
//! Yama's default `ptrace_scope` 1); without it, nothing is known, as before. Which descriptor a
//! thread polls is what tells a listener polling its socket between accepts (CPython's
//! `socketserver`, which waits in `poll` on the listening socket) from a call waiting for its
//! answer (CPython's sockets with a timeout, libpq and psycopg all `poll` the one connection).
use std::io::IoSliceMut;

/// Polls of more descriptors than this are an event loop's; their memory is not read.
const MOST_DESCRIPTORS: u64 = 16;
/// `sizeof(struct pollfd)` on Linux: `int fd; short events; short revents;`.
const POLLFD_BYTES: usize = 8;

/// The descriptors (negative ones, which `poll` ignores, left out) in the `count` `struct
/// pollfd` at address `at` of process `pid`'s memory; `None` when there are none, too many, or
/// the memory cannot be read. The caller checks that the thread was still in the same call
/// after the read: one that had left it may have reused the memory.
pub fn polled_descriptors(pid: i32, at: u64, count: u64) -> Option<Vec<i32>> {
    if count == 0 || count > MOST_DESCRIPTORS {
        return None;
    }
    let mut bytes = vec![0u8; count as usize * POLLFD_BYTES];
    let local = [IoSliceMut::new(&mut bytes)];
    let remote = [libc::iovec {
        iov_base: at as *mut libc::c_void,
        iov_len: count as usize * POLLFD_BYTES,
    }];
    // SAFETY: `local` is one writable buffer of exactly the length asked for; the remote
    // address is only read by the kernel, which checks it against the other process's memory.
    let read =
        unsafe { libc::process_vm_readv(pid, local.as_ptr().cast(), 1, remote.as_ptr(), 1, 0) };
    if read != bytes.len() as isize {
        return None;
    }
    Some(
        bytes
            .chunks_exact(POLLFD_BYTES)
            .map(|pollfd| i32::from_ne_bytes([pollfd[0], pollfd[1], pollfd[2], pollfd[3]]))
            .filter(|&fd| fd >= 0)
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_descriptors_of_a_pollfd_array_in_this_process_are_read() {
        let fds: [libc::pollfd; 3] = [
            libc::pollfd {
                fd: 7,
                events: libc::POLLIN,
                revents: 0,
            },
            libc::pollfd {
                fd: -1,
                events: libc::POLLIN,
                revents: 0,
            },
            libc::pollfd {
                fd: 12,
                events: libc::POLLOUT,
                revents: 0,
            },
        ];
        let pid = std::process::id() as i32;
        let at = fds.as_ptr() as u64;
        assert_eq!(polled_descriptors(pid, at, 3), Some(vec![7, 12]));
        assert_eq!(polled_descriptors(pid, at, 0), None);
        assert_eq!(polled_descriptors(pid, at, MOST_DESCRIPTORS + 1), None);
        assert_eq!(polled_descriptors(pid, 8, 1), None, "an address not mapped");
    }
}
