//! The kernel's `sock_diag` netlink interface (`man 7 sock_diag`), the part every family
//! shares: send one dump request, read the replies a buffer at a time, one message per socket,
//! until `NLMSG_DONE`. [`crate::unix_diag`] asks for unix sockets and [`crate::inet_diag`] for
//! TCP listeners; each lays out its own request body and parses its own reply body.
//!
//! Written by hand on purpose, on `libc` (already a dependency): a request is a 16-byte header
//! and a fixed struct, and each family reads a few fields of its reply. The `netlink-packet-*`
//! crates would bring a family of crates to the build for that. The parsing ([`parse_replies`])
//! is pure and tested on bytes laid out as the kernel's headers say (`netlink.h`).
use std::io;

const NETLINK_SOCK_DIAG: libc::c_int = 4;
/// The message type of a request and of each reply.
pub(crate) const SOCK_DIAG_BY_FAMILY: u16 = 20;
const NLM_F_REQUEST: u16 = 0x1;
const NLM_F_DUMP: u16 = 0x300;
pub(crate) const NLMSG_ERROR: u16 = 2;
pub(crate) const NLMSG_DONE: u16 = 3;
pub(crate) const NLMSG_HEADER: usize = 16;
/// Replies are read a buffer at a time; a dump of thousands of sockets takes several reads.
const READ_BUFFER: usize = 64 * 1024;
/// A dump that never ends (it cannot, but a read must not loop for ever on a broken socket).
const MOST_READS: usize = 100_000;

/// Whether the dump goes on after one read.
#[derive(Debug, PartialEq, Eq)]
pub enum Replies {
    /// More replies follow.
    More,
    /// `NLMSG_DONE` was read.
    Done,
}

/// A dump request: the netlink header and the family's request `body`.
pub(crate) fn request(body: &[u8]) -> Vec<u8> {
    let length = (NLMSG_HEADER + body.len()) as u32;
    let mut request = Vec::with_capacity(length as usize);
    request.extend(length.to_ne_bytes());
    request.extend(SOCK_DIAG_BY_FAMILY.to_ne_bytes());
    request.extend((NLM_F_REQUEST | NLM_F_DUMP).to_ne_bytes());
    request.extend(1u32.to_ne_bytes()); // sequence
    request.extend(0u32.to_ne_bytes()); // port: the kernel fills it in
    request.extend(body);
    request
}

/// Sends `request` and parses each reply's body with `parse` (`None` for a body that does not
/// parse, `Some(None)` for a socket left out).
pub(crate) fn dump<T>(
    request: &[u8],
    parse: impl Fn(&[u8]) -> Option<Option<T>>,
) -> io::Result<Vec<T>> {
    // SAFETY: plain system calls on a descriptor this function owns and closes; the buffers
    // passed are valid for the lengths given.
    let fd = unsafe {
        libc::socket(
            libc::AF_NETLINK,
            libc::SOCK_DGRAM | libc::SOCK_CLOEXEC,
            NETLINK_SOCK_DIAG,
        )
    };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    let result = dump_on(fd, request, parse);
    unsafe { libc::close(fd) };
    result
}

fn dump_on<T>(
    fd: libc::c_int,
    request: &[u8],
    parse: impl Fn(&[u8]) -> Option<Option<T>>,
) -> io::Result<Vec<T>> {
    // SAFETY: `request` is a live buffer of its length; an unconnected netlink socket sends
    // to the kernel (port 0).
    let sent = unsafe { libc::send(fd, request.as_ptr().cast(), request.len(), 0) };
    if sent < 0 {
        return Err(io::Error::last_os_error());
    }
    let mut sockets = Vec::new();
    let mut buffer = vec![0u8; READ_BUFFER];
    for _ in 0..MOST_READS {
        // SAFETY: `buffer` is a live buffer of its length.
        let read = unsafe { libc::recv(fd, buffer.as_mut_ptr().cast(), buffer.len(), 0) };
        if read < 0 {
            let err = io::Error::last_os_error();
            if err.kind() == io::ErrorKind::Interrupted {
                continue;
            }
            return Err(err);
        }
        match parse_replies(&buffer[..read as usize], &parse, &mut sockets)? {
            Replies::More => {}
            Replies::Done => return Ok(sockets),
        }
    }
    Err(io::Error::other("the socket dump did not end"))
}

/// Adds the sockets of one read's replies to `sockets`, each body parsed by `parse`; an error
/// for an `NLMSG_ERROR` reply, a message that does not fit its read, or a body that does not
/// parse.
pub(crate) fn parse_replies<T>(
    mut bytes: &[u8],
    parse: impl Fn(&[u8]) -> Option<Option<T>>,
    sockets: &mut Vec<T>,
) -> io::Result<Replies> {
    let malformed = || io::Error::other("a malformed sock_diag reply");
    while bytes.len() >= NLMSG_HEADER {
        let length = u32::from_ne_bytes(bytes[0..4].try_into().unwrap()) as usize;
        let kind = u16::from_ne_bytes(bytes[4..6].try_into().unwrap());
        if length < NLMSG_HEADER || length > bytes.len() {
            return Err(malformed());
        }
        let body = &bytes[NLMSG_HEADER..length];
        match kind {
            NLMSG_DONE => return Ok(Replies::Done),
            NLMSG_ERROR => {
                let code = body
                    .get(0..4)
                    .map_or(0, |b| i32::from_ne_bytes(b.try_into().unwrap()));
                return Err(io::Error::from_raw_os_error(-code));
            }
            SOCK_DIAG_BY_FAMILY => {
                if let Some(socket) = parse(body).ok_or_else(malformed)? {
                    sockets.push(socket);
                }
            }
            _ => {}
        }
        bytes = &bytes[align(length).min(bytes.len())..];
    }
    Ok(Replies::More)
}

/// Netlink messages and attributes start on 4-byte boundaries.
pub(crate) fn align(length: usize) -> usize {
    (length + 3) & !3
}

/// A reply message of `kind` with `body`, as the kernel lays it out (for the families' tests).
#[cfg(test)]
pub(crate) fn message(kind: u16, body: &[u8]) -> Vec<u8> {
    let mut bytes = Vec::new();
    bytes.extend(((NLMSG_HEADER + body.len()) as u32).to_ne_bytes());
    bytes.extend(kind.to_ne_bytes());
    bytes.extend(0u16.to_ne_bytes());
    bytes.extend(1u32.to_ne_bytes());
    bytes.extend(0u32.to_ne_bytes());
    bytes.extend(body);
    bytes.resize(align(bytes.len()), 0);
    bytes
}
