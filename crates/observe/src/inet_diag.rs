//! The machine's listening TCP sockets with their accept queues, from the kernel's `sock_diag`
//! netlink interface (`man 7 sock_diag`, [`crate::sock_diag`]): for each, the connections
//! waiting in its accept queue now and the queue's size, the backlog `listen(2)` was given
//! (capped at `net.core.somaxconn`). `/proc/net/tcp` shows the first (a listener's `rx_queue`)
//! but not the size; `ss -lnt` shows both as Recv-Q and Send-Q from this same reply.
//!
//! Why the size matters: a connection whose handshake completes waits in its listener's accept
//! queue until the server calls `accept`; with the queue full (`sk_acceptq_is_full`: more
//! waiting than the backlog) the kernel drops the handshake's last step and counts a listen
//! overflow, and the client retransmits after a second or more. So a server whose accepting
//! falls behind holds at most the backlog plus one in its queue, and a small backlog (CPython's
//! `socketserver` asks for 5) turns a burst of connects into seconds of latency. For a listening
//! socket the reply's `idiag_rqueue` is `sk_ack_backlog` and `idiag_wqueue` is
//! `sk_max_ack_backlog` (`tcp_diag_get_info`,
//! https://github.com/torvalds/linux/blob/09d7f4206c28d89710285b905ebd2061e8f0de43/net/ipv4/tcp_diag.c#L21-L30;
//! `listen(2)` caps the backlog at somaxconn, `man 2 listen`).
//!
//! The parsing ([`parse_listener`]) is pure and tested on bytes laid out as
//! `include/uapi/linux/inet_diag.h` says; the dump is tested on a listener a test opens. It sees
//! the network namespace chokepoint runs in.
use crate::sock_diag;
use std::io;

/// One listening TCP socket of the machine (this network namespace).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TcpListener {
    /// Its inode: `socket:[inode]` in the `/proc/PID/fd` of the processes that hold it.
    pub inode: u64,
    /// The port it listens on.
    pub port: u16,
    /// Connections waiting in its accept queue now.
    pub queued: u32,
    /// The accept queue's size: the backlog `listen(2)` was given, at most somaxconn.
    pub backlog: u32,
}

const IPPROTO_TCP: u8 = 6;
/// `1 << TCP_LISTEN`.
const LISTENING: u32 = 1 << 10;
/// `struct inet_diag_msg`: family, state, timer, retrans, a 48-byte `inet_diag_sockid`, then
/// expires, rqueue, wqueue, uid and inode.
const INET_DIAG_MSG: usize = 72;

/// Every listening TCP socket of this network namespace, IPv4 and IPv6.
pub fn tcp_listeners() -> io::Result<Vec<TcpListener>> {
    let mut listeners = Vec::new();
    for family in [libc::AF_INET, libc::AF_INET6] {
        let request = sock_diag::request(&request_body(family as u8));
        listeners.extend(sock_diag::dump(&request, parse_listener)?);
    }
    Ok(listeners)
}

/// The size of the accept queue of the listener on `port` among `inodes` (a process's sockets),
/// with the kernel's cap on any backlog; `None` when none is found or the dump fails.
pub fn accept_queue_size(port: u16, inodes: &std::collections::HashSet<u64>) -> Option<u32> {
    tcp_listeners()
        .ok()?
        .into_iter()
        .filter(|l| l.port == port && inodes.contains(&l.inode))
        .map(|l| l.backlog)
        .max()
}

/// The largest backlog `listen(2)` grants here (`net.core.somaxconn`).
pub fn somaxconn() -> Option<u32> {
    std::fs::read_to_string("/proc/sys/net/core/somaxconn")
        .ok()?
        .trim()
        .parse()
        .ok()
}

/// An `inet_diag_req_v2` asking for every listening TCP socket of `family`.
fn request_body(family: u8) -> Vec<u8> {
    let mut body = Vec::with_capacity(56);
    body.push(family); // sdiag_family
    body.push(IPPROTO_TCP); // sdiag_protocol
    body.push(0); // idiag_ext: no extensions
    body.push(0); // pad
    body.extend(LISTENING.to_ne_bytes()); // idiag_states
    body.extend([0u8; 40]); // inet_diag_sockid: ports and addresses, any
    body.extend(0u32.to_ne_bytes()); // idiag_if: any
    body.extend([0xffu8; 8]); // idiag_cookie: none
    body
}

/// One `inet_diag_msg`: `Some(None)` for a socket that is not listening, `None` for one that
/// does not parse.
pub(crate) fn parse_listener(body: &[u8]) -> Option<Option<TcpListener>> {
    let msg = body.get(..INET_DIAG_MSG)?;
    let word = |at: usize| u32::from_ne_bytes(msg[at..at + 4].try_into().unwrap());
    let state = msg[1];
    // idiag_sport is big-endian, as on the wire.
    let port = u16::from_be_bytes([msg[4], msg[5]]);
    Some((state == 10).then_some(TcpListener {
        inode: u64::from(word(68)),
        port,
        queued: word(56),
        backlog: word(60),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sock_diag::{message, parse_replies, Replies, SOCK_DIAG_BY_FAMILY};

    fn diag(state: u8, port: u16, queued: u32, backlog: u32, inode: u32) -> Vec<u8> {
        let mut body = vec![libc::AF_INET as u8, state, 0, 0];
        body.extend(port.to_be_bytes());
        body.extend(0u16.to_be_bytes());
        body.extend([0u8; 44]);
        body.extend(0u32.to_ne_bytes()); // expires
        body.extend(queued.to_ne_bytes());
        body.extend(backlog.to_ne_bytes());
        body.extend(1000u32.to_ne_bytes()); // uid
        body.extend(inode.to_ne_bytes());
        body
    }

    #[test]
    fn replies_laid_out_as_the_kernels_headers_say_parse_into_listeners() {
        let mut bytes = message(SOCK_DIAG_BY_FAMILY, &diag(10, 8080, 3, 5, 700));
        bytes.extend(message(SOCK_DIAG_BY_FAMILY, &diag(1, 8080, 0, 0, 701)));
        let mut listeners = Vec::new();
        let replies = parse_replies(&bytes, parse_listener, &mut listeners).unwrap();
        assert_eq!(replies, Replies::More);
        assert_eq!(
            listeners,
            [TcpListener {
                inode: 700,
                port: 8080,
                queued: 3,
                backlog: 5
            }]
        );
        // A body cut short does not parse.
        let short = message(SOCK_DIAG_BY_FAMILY, &diag(10, 8080, 3, 5, 700)[..60]);
        assert!(parse_replies(&short, parse_listener, &mut listeners).is_err());
    }

    /// A listener this test opens with a backlog of 3 and fills: the dump says its queue and
    /// its size, and connections past the size wait with nothing accepting them.
    #[test]
    fn a_listeners_backlog_and_queue_are_what_listen_and_the_connects_made_them() {
        use std::os::fd::AsRawFd;
        use std::os::unix::fs::MetadataExt;
        // SAFETY: a socket this test owns, bound to loopback, closed when the listener drops.
        let fd = unsafe { libc::socket(libc::AF_INET, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0) };
        assert!(fd >= 0);
        let addr = libc::sockaddr_in {
            sin_family: libc::AF_INET as u16,
            sin_port: 0,
            sin_addr: libc::in_addr {
                s_addr: u32::from_ne_bytes([127, 0, 0, 1]),
            },
            sin_zero: [0; 8],
        };
        let len = std::mem::size_of::<libc::sockaddr_in>() as u32;
        // SAFETY: `addr` is a live sockaddr_in of `len` bytes.
        assert_eq!(
            unsafe { libc::bind(fd, (&addr as *const libc::sockaddr_in).cast(), len) },
            0
        );
        assert_eq!(unsafe { libc::listen(fd, 3) }, 0);
        // SAFETY: `fd` is a listening socket no one else owns.
        let listener =
            unsafe { <std::net::TcpListener as std::os::fd::FromRawFd>::from_raw_fd(fd) };
        let port = listener.local_addr().unwrap().port();
        let clients: Vec<std::net::TcpStream> = (0..2)
            .map(|_| std::net::TcpStream::connect(("127.0.0.1", port)).unwrap())
            .collect();
        let inode = std::fs::metadata(format!("/proc/self/fd/{}", listener.as_raw_fd()))
            .unwrap()
            .ino();
        let found = tcp_listeners().expect("sock_diag answers");
        let ours = found
            .iter()
            .find(|l| l.inode == inode)
            .expect("the listener is listed");
        assert_eq!((ours.port, ours.queued, ours.backlog), (port, 2, 3));
        let inodes = [inode].into_iter().collect();
        assert_eq!(accept_queue_size(port, &inodes), Some(3));
        assert_eq!(accept_queue_size(port, &Default::default()), None);
        assert!(somaxconn().is_some_and(|max| max >= 3));
        drop((clients, listener));
    }
}
