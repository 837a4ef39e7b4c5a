//! The machine's unix stream sockets with their peers, from the kernel's `sock_diag` netlink
//! interface (`man 7 sock_diag`): one dump request, one reply per socket. `/proc/net/unix`
//! lists the same sockets but not which socket is at the other end of a connected one, and
//! that is what following nginx to gunicorn or PHP-FPM on a unix socket needs: the forwarder
//! holds the client end (no name), the peer end is the one the server accepted, and it carries
//! the listener's path as its name.
//!
//! Written by hand on purpose (see [`crate::sock_diag`], which sends the request and splits the
//! replies): the request is a 24-byte `unix_diag_req` and the reply needs three of its
//! attributes (name, peer, nothing else). The parsing ([`parse_replies`]) is pure and tested on
//! bytes laid out as the kernel's headers say (`include/uapi/linux/unix_diag.h`); the dump is
//! tested on sockets a test connects.
//!
//! The dump sees the network namespace chokepoint runs in: a forwarder and its upstream in
//! another one are not followed over a unix socket.
use crate::sock_diag::{self, align, Replies};
use std::io;

/// One unix stream socket of the machine (this network namespace).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnixSocket {
    /// Its inode: `socket:[inode]` in the `/proc/PID/fd` of the processes that hold it.
    pub inode: u64,
    /// The inode of the socket at the other end, for a connected one.
    pub peer: Option<u64>,
    /// Listening (`listen(2)` called on it).
    pub listening: bool,
    /// Connected (established).
    pub connected: bool,
    /// The path it is bound to (`@name` for an abstract one). A socket a server accepted
    /// carries its listener's.
    pub name: Option<String>,
}

const UDIAG_SHOW_NAME: u32 = 0x1;
const UDIAG_SHOW_PEER: u32 = 0x4;
const UNIX_DIAG_NAME: u16 = 0;
const UNIX_DIAG_PEER: u16 = 2;
/// `TCP_ESTABLISHED` and `TCP_LISTEN`, which unix sockets reuse for their states.
const STATE_ESTABLISHED: u8 = 1;
const STATE_LISTEN: u8 = 10;
const SOCK_STREAM: u8 = 1;
const UNIX_DIAG_MSG: usize = 16;

/// Every unix stream socket of this network namespace, with its peer and name.
pub fn unix_stream_sockets() -> io::Result<Vec<UnixSocket>> {
    sock_diag::dump(&sock_diag::request(&request_body()), parse_socket)
}

/// A `unix_diag_req` asking for every unix stream socket, any state, with its name and peer.
fn request_body() -> Vec<u8> {
    let mut body = Vec::with_capacity(24);
    body.push(libc::AF_UNIX as u8); // sdiag_family
    body.push(0); // sdiag_protocol
    body.extend(0u16.to_ne_bytes()); // pad
    body.extend(u32::MAX.to_ne_bytes()); // udiag_states: all
    body.extend(0u32.to_ne_bytes()); // udiag_ino: any
    body.extend((UDIAG_SHOW_NAME | UDIAG_SHOW_PEER).to_ne_bytes());
    body.extend([0xffu8; 8]); // udiag_cookie: none
    body
}

/// Adds the stream sockets of one read's replies to `sockets`; an error for an `NLMSG_ERROR`
/// reply or a message that does not fit its read.
pub fn parse_replies(bytes: &[u8], sockets: &mut Vec<UnixSocket>) -> io::Result<Replies> {
    sock_diag::parse_replies(bytes, parse_socket, sockets)
}

/// One `unix_diag_msg` and its attributes: `None` (inside `Some`) for a socket that is not a
/// stream socket; `None` for one that does not parse.
fn parse_socket(body: &[u8]) -> Option<Option<UnixSocket>> {
    let header = body.get(..UNIX_DIAG_MSG)?;
    let (kind, state) = (header[1], header[2]);
    let inode = u32::from_ne_bytes(header[4..8].try_into().ok()?) as u64;
    let mut socket = UnixSocket {
        inode,
        peer: None,
        listening: state == STATE_LISTEN,
        connected: state == STATE_ESTABLISHED,
        name: None,
    };
    let mut attributes = &body[UNIX_DIAG_MSG..];
    while attributes.len() >= 4 {
        let length = u16::from_ne_bytes(attributes[0..2].try_into().ok()?) as usize;
        let kind = u16::from_ne_bytes(attributes[2..4].try_into().ok()?);
        if length < 4 || length > attributes.len() {
            return None;
        }
        let payload = &attributes[4..length];
        match kind {
            UNIX_DIAG_NAME => socket.name = Some(socket_name(payload)),
            UNIX_DIAG_PEER if payload.len() >= 4 => {
                let peer = u32::from_ne_bytes(payload[0..4].try_into().ok()?);
                socket.peer = (peer != 0).then_some(peer as u64);
            }
            _ => {}
        }
        attributes = &attributes[align(length).min(attributes.len())..];
    }
    Some((kind == SOCK_STREAM).then_some(socket))
}

/// A bound name as `ss` shows it: the path, or `@` and the name of an abstract socket (whose
/// first byte is a NUL).
fn socket_name(payload: &[u8]) -> String {
    match payload.split_first() {
        Some((0, abstract_name)) => format!("@{}", String::from_utf8_lossy(abstract_name)),
        _ => {
            let end = payload
                .iter()
                .position(|&b| b == 0)
                .unwrap_or(payload.len());
            String::from_utf8_lossy(&payload[..end]).into_owned()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sock_diag::{message, NLMSG_DONE, NLMSG_ERROR, SOCK_DIAG_BY_FAMILY};
    use std::os::unix::net::{UnixListener, UnixStream};

    fn attribute(kind: u16, payload: &[u8]) -> Vec<u8> {
        let mut bytes = Vec::new();
        bytes.extend(((4 + payload.len()) as u16).to_ne_bytes());
        bytes.extend(kind.to_ne_bytes());
        bytes.extend(payload);
        bytes.resize(align(bytes.len()), 0);
        bytes
    }

    fn diag(kind: u8, state: u8, inode: u32, attributes: &[Vec<u8>]) -> Vec<u8> {
        let mut body = vec![libc::AF_UNIX as u8, kind, state, 0];
        body.extend(inode.to_ne_bytes());
        body.extend([0xffu8; 8]);
        for a in attributes {
            body.extend(a);
        }
        body
    }

    #[test]
    fn replies_laid_out_as_the_kernels_headers_say_parse_into_sockets() {
        let mut bytes = message(
            SOCK_DIAG_BY_FAMILY,
            &diag(
                SOCK_STREAM,
                STATE_LISTEN,
                70,
                &[attribute(UNIX_DIAG_NAME, b"/run/php/fpm.sock")],
            ),
        );
        bytes.extend(message(
            SOCK_DIAG_BY_FAMILY,
            &diag(
                SOCK_STREAM,
                STATE_ESTABLISHED,
                71,
                &[
                    attribute(UNIX_DIAG_NAME, b"/run/php/fpm.sock"),
                    attribute(UNIX_DIAG_PEER, &72u32.to_ne_bytes()),
                ],
            ),
        ));
        // A datagram socket (journald's) and an abstract stream one.
        bytes.extend(message(
            SOCK_DIAG_BY_FAMILY,
            &diag(2, 7, 73, &[attribute(UNIX_DIAG_NAME, b"/run/log")]),
        ));
        bytes.extend(message(
            SOCK_DIAG_BY_FAMILY,
            &diag(
                SOCK_STREAM,
                STATE_ESTABLISHED,
                74,
                &[
                    attribute(UNIX_DIAG_NAME, b"\0bus"),
                    attribute(UNIX_DIAG_PEER, &0u32.to_ne_bytes()),
                ],
            ),
        ));
        let mut sockets = Vec::new();
        assert_eq!(parse_replies(&bytes, &mut sockets).unwrap(), Replies::More);
        assert_eq!(
            sockets,
            vec![
                UnixSocket {
                    inode: 70,
                    peer: None,
                    listening: true,
                    connected: false,
                    name: Some("/run/php/fpm.sock".into()),
                },
                UnixSocket {
                    inode: 71,
                    peer: Some(72),
                    listening: false,
                    connected: true,
                    name: Some("/run/php/fpm.sock".into()),
                },
                UnixSocket {
                    inode: 74,
                    peer: None,
                    listening: false,
                    connected: true,
                    name: Some("@bus".into()),
                },
            ]
        );
        let mut after = Vec::new();
        assert_eq!(
            parse_replies(&message(NLMSG_DONE, &0i32.to_ne_bytes()), &mut after).unwrap(),
            Replies::Done
        );
        assert!(after.is_empty());
    }

    #[test]
    fn an_error_reply_or_a_message_longer_than_its_read_is_an_error() {
        let mut sockets = Vec::new();
        let error = message(NLMSG_ERROR, &(-libc::EPERM).to_ne_bytes());
        assert_eq!(
            parse_replies(&error, &mut sockets)
                .unwrap_err()
                .raw_os_error(),
            Some(libc::EPERM)
        );
        let whole = message(
            SOCK_DIAG_BY_FAMILY,
            &diag(SOCK_STREAM, STATE_LISTEN, 70, &[]),
        );
        assert!(parse_replies(&whole[..whole.len() - 4], &mut sockets).is_err());
    }

    /// The dump on sockets this test connects: the accepted end carries the listener's path,
    /// and the client's end names it as its peer.
    #[test]
    fn a_connected_client_is_paired_with_the_end_its_listener_accepted() {
        use std::os::unix::fs::MetadataExt;
        let dir = std::env::temp_dir().join(format!("cp-unix-diag-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("upstream.sock");
        let _ = std::fs::remove_file(&path);
        let listener = UnixListener::bind(&path).unwrap();
        let client = UnixStream::connect(&path).unwrap();
        let (accepted, _) = listener.accept().unwrap();
        let inode_of = |fd: i32| {
            std::fs::metadata(format!("/proc/self/fd/{fd}"))
                .unwrap()
                .ino()
        };
        use std::os::fd::AsRawFd;
        let (client_inode, accepted_inode) =
            (inode_of(client.as_raw_fd()), inode_of(accepted.as_raw_fd()));
        let sockets = unix_stream_sockets().expect("sock_diag answers");
        let find = |inode: u64| sockets.iter().find(|s| s.inode == inode).cloned();
        let client_end = find(client_inode).expect("the client's end is listed");
        assert!(client_end.connected);
        assert_eq!(client_end.peer, Some(accepted_inode));
        let server_end = find(accepted_inode).expect("the accepted end is listed");
        assert_eq!(server_end.name.as_deref(), path.to_str());
        assert_eq!(server_end.peer, Some(client_inode));
        let listening = sockets
            .iter()
            .find(|s| s.listening && s.name.as_deref() == path.to_str())
            .expect("the listener is listed");
        assert_eq!(listening.peer, None);
        drop((client, accepted, listener));
        let _ = std::fs::remove_dir_all(&dir);
    }
}
