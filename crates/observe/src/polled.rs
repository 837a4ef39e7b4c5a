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

/// `sizeof(struct pollfd)` on Linux: `int fd; short events; short revents;`.
const POLLFD_BYTES: usize = 8;

/// The descriptor of the one `struct pollfd` at address `at` of process `pid`'s memory (a
/// `poll` of one descriptor); `None` when `poll` ignores it (negative) or the memory cannot be
/// read. Only polls of one descriptor are read: the waits this tells apart poll one, and an
/// event loop's poll of many says no one socket (nothing is read for it, at every sample). The
/// caller checks that the thread was still in the same call after the read: one that had left
/// it may have reused the memory.
pub fn polled_descriptor(pid: i32, at: u64) -> Option<i32> {
    let mut bytes = [0u8; POLLFD_BYTES];
    let local = [IoSliceMut::new(&mut bytes)];
    let remote = [libc::iovec {
        iov_base: at as *mut libc::c_void,
        iov_len: POLLFD_BYTES,
    }];
    // SAFETY: `local` is one writable buffer of exactly the length asked for; the remote
    // address is only read by the kernel, which checks it against the other process's memory.
    let read =
        unsafe { libc::process_vm_readv(pid, local.as_ptr().cast(), 1, remote.as_ptr(), 1, 0) };
    if read != POLLFD_BYTES as isize {
        return None;
    }
    let fd = i32::from_ne_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]);
    (fd >= 0).then_some(fd)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_descriptor_of_a_pollfd_in_this_process_is_read() {
        let fds: [libc::pollfd; 2] = [
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
        ];
        let pid = std::process::id() as i32;
        assert_eq!(polled_descriptor(pid, fds.as_ptr() as u64), Some(7));
        let ignored = fds[1..].as_ptr() as u64;
        assert_eq!(polled_descriptor(pid, ignored), None, "poll ignores -1");
        assert_eq!(polled_descriptor(pid, 8), None, "an address not mapped");
    }
}
