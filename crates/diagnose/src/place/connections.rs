//! The places read from the target's connections to a downstream peer (`/proc/PID/net/tcp`):
//! a connection pool the process is known to run whose default cap is the connections held
//! ([`known_connection_pool`]), and the connections to the mock that never passed N while the
//! clients grew past N ([`connection_pool`], the place of a `connection-limit`), and a proxy's
//! configured cap on the upstream its connections went to ([`configured_upstream_cap`]); and on
//! the client side, a cap on the connections the target accepts, from its configuration
//! ([`configured_front_cap`]) or its own connections ([`accept_cap_seen`]).
use super::{matches_limit, Known, MATCH_SHARE};
use chokepoint_result::{FrontCap, Place, PlaceKind, PlaceSource, Step, UpstreamCap};
use std::net::SocketAddr;

/// A peer: its port, and its address when recorded.
type Peer = (u16, Option<SocketAddr>);

/// The one downstream peer (by its address, or its port in older results) whose connections
/// from the target stayed at about the limit at every plateau step that saw it, with more clients than that at the largest step (requests
/// queued beyond them): its port, the most connections one sample saw, and that step's
/// clients. Two peers held so (or none) give none: the connections alone cannot choose.
fn connections_at_limit(plateau: &[&Step], limit: f64) -> Option<(u16, u32, u32)> {
    let largest = plateau.last()?.clients;
    let mut by_peer: Vec<(Peer, Vec<(u32, u32)>)> = Vec::new();
    for step in plateau {
        let Some(connections) = &step.connections else {
            continue;
        };
        for peer in &connections.downstream {
            let seen = (step.clients, peer.counts.most.established);
            let key = (peer.peer_port, peer.peer_addr);
            match by_peer.iter_mut().find(|(at, _)| *at == key) {
                Some((_, steps)) => steps.push(seen),
                None => by_peer.push((key, vec![seen])),
            }
        }
    }
    let held: Vec<(u16, u32, u32)> = by_peer
        .into_iter()
        .filter_map(|((port, _), steps)| {
            let all_at_limit = steps
                .iter()
                .all(|&(_, n)| matches_limit(f64::from(n), limit));
            let &(clients, most) = steps
                .iter()
                .max_by(|a, b| a.1.cmp(&b.1).then(b.0.cmp(&a.0)))?;
            let queued = f64::from(largest) > f64::from(most) * (1.0 + MATCH_SHARE);
            (all_at_limit && queued).then_some((port, most, clients))
        })
        .collect();
    match held.as_slice() {
        [one] => Some(*one),
        _ => None,
    }
}

/// A connection pool named by what the process shows and what its connections did: the
/// target's connections to one peer held at the limit ([`connections_at_limit`]), and a
/// catalogue entry for a connection pool whose library the process has open or mapped (or
/// whose threads it runs) with a default cap equal to those connections. Both or nothing: a
/// cap of N on the connections alone is also what a semaphore of N in front of an unbounded
/// client gives (go-semaphore), and a library alone says nothing of its size here.
pub(super) fn known_connection_pool(
    plateau: &[&Step],
    limit: f64,
    known: &Known<'_>,
) -> Option<Place> {
    let (peer_port, connections, clients) = connections_at_limit(plateau, limit)?;
    let pools: Vec<&str> = plateau
        .iter()
        .filter_map(|s| s.threads_by_pool.as_ref())
        .flat_map(|t| t.pools.iter().map(|p| p.pool.as_str()))
        .collect();
    let (setting, shown_by) = known.catalogue.connection_pool(
        known.libraries,
        &pools,
        f64::from(connections),
        known.cores.as_ref(),
        known.stated,
    )?;
    Some(Place {
        kind: Some(PlaceKind::ConnectionPool),
        size: Some(f64::from(connections)),
        clients,
        source: Some(PlaceSource::Connections),
        peer_port: Some(peer_port),
        setting: Some(setting),
        shown_by: Some(shown_by),
        ..Place::default()
    })
}

/// A proxy's configured cap on the upstream server its connections went to, when it is the
/// limit: HAProxy's `maxconn` queues past it and nginx's `max_conns=` sheds past it, and in
/// neither does a thread wait (their event loops sit in `epoll_wait`), so the configuration is
/// the evidence, joined with what was seen: the target held connections to that server's port at
/// the plateau, the cap is the limit (within 15%), and the largest step had more clients than
/// the cap (requests waited or were turned away beyond it). One such cap or nothing.
pub(super) fn configured_upstream_cap(
    plateau: &[&Step],
    limit: f64,
    known: &Known<'_>,
) -> Option<Place> {
    let largest = plateau.last()?.clients;
    let ports: Vec<u16> = plateau
        .iter()
        .filter_map(|step| step.connections.as_ref())
        .flat_map(|c| &c.downstream)
        .filter(|peer| peer.counts.most.established >= 1)
        .map(|peer| peer.peer_port)
        .collect();
    let caps: Vec<&UpstreamCap> = known
        .upstream_caps
        .iter()
        .filter(|cap| cap.port.is_some_and(|port| ports.contains(&port)))
        .filter(|cap| matches_limit(limit, f64::from(cap.cap)))
        .filter(|cap| f64::from(largest) > f64::from(cap.cap) * (1.0 + MATCH_SHARE))
        .collect();
    let [cap] = caps.as_slice() else {
        return None;
    };
    let setting = known
        .catalogue
        .upstream_cap_for(&cap.program)
        .map(|entry| entry.setting_on(known.cores.as_ref(), known.stated));
    Some(Place {
        kind: Some(PlaceKind::ConnectionPool),
        pool: Some(cap.program.clone()),
        size: Some(f64::from(cap.cap)),
        clients: largest,
        source: Some(PlaceSource::Config),
        peer_port: cap.port,
        setting,
        shown_by: Some(cap.directive.clone()),
        ..Place::default()
    })
}

/// The cap the target's proxy configuration sets on the client connections it accepts on the
/// swept port (its listening port, as the observer read it), when it is the `limit` the clients
/// answered stopped at and the largest step asked for more: the place, with the catalogue's
/// front-cap entry.
pub(super) fn configured_front_cap(
    plateau: &[&Step],
    limit: Option<f64>,
    known: &Known<'_>,
) -> Option<Place> {
    let limit = limit?;
    let largest = plateau.last()?.clients;
    let port = plateau
        .iter()
        .find_map(|step| step.connections.as_ref()?.listen_port)?;
    let caps: Vec<&FrontCap> = known
        .front_caps
        .iter()
        .filter(|cap| cap.port == port && matches_limit(limit, f64::from(cap.cap)))
        .filter(|cap| f64::from(largest) > f64::from(cap.cap) * (1.0 + MATCH_SHARE))
        .collect();
    let [cap] = caps.as_slice() else {
        return None;
    };
    let setting = known
        .catalogue
        .front_cap_for(&cap.program)
        .map(|entry| entry.setting_on(known.cores.as_ref(), known.stated));
    Some(Place {
        kind: Some(PlaceKind::AcceptCap),
        pool: Some(cap.program.clone()),
        size: Some(f64::from(cap.cap)),
        held: Some(limit),
        clients: largest,
        source: Some(PlaceSource::Config),
        setting,
        shown_by: Some(cap.directive.clone()),
        ..Place::default()
    })
}

/// Connections waiting unaccepted at a step, on average, from which the target's accepting had
/// stopped: one at least. A connection is in the listen queue from the handshake's end to the
/// server's `accept`, an instant for a server that keeps up, so a mean of one or more over the
/// step's samples is a queue that stood, not a connection caught in passing.
const UNACCEPTED_QUEUE: f64 = 1.0;

/// The target's own accept path as the place of clients left unanswered, read from its client
/// connections: at every plateau step that asked for more than the `limit` (by the match
/// share), the connections it had accepted at once (its sockets on the swept port) were the
/// limit, while others waited unaccepted in its listen queue or were half-open (their client's
/// end established, none at the target's; seen when the clients run beside it), together at
/// least [`UNACCEPTED_QUEUE`].
///
/// Why, from the kernel's behaviour: the kernel completes a client's handshake itself and keeps
/// the connection in the listening socket's queue (up to its backlog; past it, it drops the
/// handshake and counts a listen overflow) until the server accepts it; only then does a process
/// hold it. With the queue full the kernel drops the handshake's last step, and the client's
/// end is established with nothing at the target's: half-open, its request never read (behind
/// a listen backlog of 5 that overflowed, tests/targets/py-warmup kept 85 of 128 clients so,
/// with its queue seen empty). A server that takes every connection it is sent accepts them at once and queues the
/// requests instead (a pool's threads, an event loop); one whose accepting stopped (a cap on its
/// connections, an accept loop that cannot keep up) leaves them in the queue, and their clients
/// unanswered. The accepted connections are the clients it served, so they must be the limit
/// (the clients answered) for the place to explain it. The connections do not say which cap (or
/// which slow loop) it was: a knob is named only when the runtime's stacks at those steps show
/// the accepting waiting where the catalogue knows a cap ([`accepting_waits_in_a_known_cap`]).
pub(super) fn accept_cap_seen(
    plateau: &[&Step],
    limit: Option<f64>,
    known: &Known<'_>,
) -> Option<Place> {
    let limit = limit?;
    let past = past_the_limit(plateau, limit);
    let (largest, at_largest) = *past.last()?;
    let queue_stood = past
        .iter()
        .all(|(_, c)| c.client_side.mean_unserved + c.half_open_clients >= UNACCEPTED_QUEUE);
    let accepted = accepted_at_once(&past)?;
    if !queue_stood || !matches_limit(accepted, limit) {
        return None;
    }
    let overflows: Option<u64> = past
        .iter()
        .filter_map(|(_, c)| c.listen_overflows)
        .reduce(|a, b| a + b);
    let (setting, shown_by) = accepting_waits_in_a_known_cap(&past, known).unzip();
    Some(Place {
        setting,
        shown_by,
        unaccepted: Some(at_largest.client_side.mean_unserved),
        listen_overflows: overflows,
        half_open: (at_largest.half_open_clients > 0.0).then_some(at_largest.half_open_clients),
        listen_queue: known.listen_queue,
        ..accept_path(accepted, largest, at_largest)
    })
}

/// Of a step's failed requests, more than this share were connections closed before a
/// complete response (`reset`) for the cap to be what turned the clients away: the resets
/// are most of what failed, not a few beside timeouts or error statuses.
const RESET_SHARE: f64 = 0.5;

/// A closed connection was turned away at the accept when it failed in under this share of
/// the answered requests' median latency: closed before its request was read, it did none of
/// the work an answered request waits for (the downstream's delay at least), only a round
/// trip. A request that reached a handler and then failed (a queue's timeout, a crash) took
/// about as long as an answered one, or longer.
const TURNED_AWAY_SHARE: f64 = 0.5;

/// The target's accept path as a cap that sheds: at every plateau step that asked for more
/// than the `limit` (by the match share), the connections it held at once on the swept port
/// were the limit, and the clients past them had their connections closed unanswered: resets
/// were most of the step's failures ([`RESET_SHARE`]) and came back in under half the answered
/// requests' median ([`TURNED_AWAY_SHARE`]).
///
/// Why, from the runtimes' behaviour: a server that counts its connections and closes the ones
/// past a cap as it accepts them answers nothing on them. Node's `net.Server` does so with
/// `maxConnections` set: its `onconnection` closes the accepted handle when `_connections >=
/// maxConnections` (nodejs/node@a3480b2, `lib/net.js`), and the client sees its connection
/// closed before a response, within a round trip. No queue stands (the other accept path,
/// [`accept_cap_seen`], reads that one), and no thread waits (an event loop's cap). The
/// connections it kept are the clients it served, so they must be the limit. The knob is
/// named only when a process of the target is one the catalogue knows for such a cap (a
/// front-cap entry by process name: `node`), the shedding being what shows it, never the name
/// alone.
pub(super) fn accept_cap_shed(plateau: &[&Step], limit: f64, known: &Known<'_>) -> Option<Place> {
    let past = past_the_limit(plateau, limit);
    let (largest, at_largest) = *past.last()?;
    if !past.iter().all(|(step, _)| turned_away_at_accept(step)) {
        return None;
    }
    let accepted = accepted_at_once(&past)?;
    if !matches_limit(accepted, limit) {
        return None;
    }
    let (setting, shown_by) = processes_of(plateau)
        .into_iter()
        .find_map(|name| {
            let entry = known.catalogue.front_cap_for(&name)?;
            Some((
                entry.setting_on(known.cores.as_ref(), known.stated),
                format!("process `{name}`"),
            ))
        })
        .unzip();
    Some(Place {
        setting,
        shown_by,
        closed_unanswered_per_s: Some(
            resets(largest) as f64 / largest.load.duration_s.max(f64::EPSILON),
        ),
        ..accept_path(accepted, largest, at_largest)
    })
}

/// The target's accept path read from its connections: `accepted` at once over the steps past
/// the limit, and what the `largest` of them held (`at_largest`, its connections).
fn accept_path(
    accepted: f64,
    largest: &Step,
    at_largest: &chokepoint_result::Connections,
) -> Place {
    Place {
        kind: Some(PlaceKind::AcceptCap),
        size: Some(accepted),
        held: Some(held_at_once(&at_largest.client_side)),
        clients: largest.clients,
        source: Some(PlaceSource::Connections),
        peer_port: at_largest.listen_port,
        ..Place::default()
    }
}

/// A step's `reset` failures.
fn resets(step: &Step) -> u64 {
    step.load
        .errors
        .get(chokepoint_result::error_kind::RESET)
        .copied()
        .unwrap_or(0)
}

/// Whether `step`'s failures were mostly connections closed unanswered, faster than the
/// answered requests ([`RESET_SHARE`], [`TURNED_AWAY_SHARE`]).
fn turned_away_at_accept(step: &Step) -> bool {
    let failed: u64 = step.load.errors.values().sum();
    let (Some(answered), Some(failures)) = (&step.load.ok_latency_ms, &step.load.error_latency_ms)
    else {
        return false;
    };
    resets(step) as f64 > failed as f64 * RESET_SHARE
        && failures.p50 < answered.p50 * TURNED_AWAY_SHARE
}

/// The names of the target's processes seen at the plateau: its pools holding a process's
/// main thread.
fn processes_of(plateau: &[&Step]) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for pool in plateau
        .iter()
        .filter_map(|step| step.threads_by_pool.as_ref())
        .flat_map(|t| &t.pools)
        .filter(|pool| pool.main_threads.is_some_and(|n| n >= 1.0))
    {
        if !names.contains(&pool.pool) {
            names.push(pool.pool.clone());
        }
    }
    names
}

/// The plateau steps that asked for more than `limit` (by the match share), with the target's
/// connections, in order of clients.
fn past_the_limit<'s>(
    plateau: &[&'s Step],
    limit: f64,
) -> Vec<(&'s Step, &'s chokepoint_result::Connections)> {
    plateau
        .iter()
        .filter(|step| f64::from(step.clients) > limit * (1.0 + MATCH_SHARE))
        .filter_map(|step| Some((*step, step.connections.as_ref()?)))
        .collect()
}

/// The client connections the target held at once over `past`: the median of the steps'.
fn accepted_at_once(past: &[(&Step, &chokepoint_result::Connections)]) -> Option<f64> {
    chokepoint_result::median(past.iter().map(|(_, c)| held_at_once(&c.client_side)))
}

/// The most calls the downstream (the mock) had in flight at once over the steps past `limit`
/// ([`past_the_limit`], those the connections accepted at once are read over): the median of
/// the steps' counts.
pub(super) fn calls_at_once(plateau: &[&Step], limit: f64) -> Option<f64> {
    chokepoint_result::median(
        past_the_limit(plateau, limit)
            .iter()
            .filter_map(|(step, _)| step.downstream_inflight)
            .map(|calls| calls.max as f64),
    )
}

/// The connections a cap held at once: the median over a step's samples of those served, or
/// the most one sample saw in steps recorded before the median was counted.
fn held_at_once(counts: &chokepoint_result::ConnectionCounts) -> f64 {
    counts
        .median_served
        .unwrap_or(f64::from(counts.most_served))
}

/// A front-cap entry of the catalogue whose frames a thread or goroutine waited in at one of
/// the `past` steps (the accepting parked on a full cap: `netutil.(*limitListener).acquire`),
/// with what showed it.
fn accepting_waits_in_a_known_cap(
    past: &[(&Step, &chokepoint_result::Connections)],
    known: &Known<'_>,
) -> Option<(chokepoint_result::Setting, String)> {
    past.iter().rev().find_map(|(step, _)| {
        step.stacks.as_ref()?.pools.iter().find_map(|pool| {
            pool.stacks.iter().find_map(|stack| {
                let entry = known.catalogue.front_cap_for_frames(&stack.frames)?;
                let frame = stack.frames.first()?;
                Some((
                    entry.setting_on(known.cores.as_ref(), known.stated),
                    format!("`{}` waiting in {frame}", pool.pool),
                ))
            })
        })
    })
}

/// The most connections to the mock one sample saw over `steps`: (step, peer port, count).
pub(super) fn most_downstream_connections(steps: &[&Step]) -> Option<(u32, u16, u32)> {
    steps
        .iter()
        .filter_map(|step| {
            let mock = step.connections.as_ref()?.to_mock()?;
            Some((step.clients, mock.peer_port, mock.counts.most.established))
        })
        .max_by(|a, b| a.2.cmp(&b.2).then(b.0.cmp(&a.0)))
}

/// The most calls the mock saw in flight at once over `steps`.
pub(super) fn most_downstream_calls(steps: &[&Step]) -> Option<u32> {
    steps
        .iter()
        .filter_map(|step| step.downstream_inflight.as_ref())
        .map(|calls| u32::try_from(calls.max).unwrap_or(u32::MAX))
        .max()
}

/// Whether what the target sent the downstream stopped at `limit`: its most connections seen
/// are about the limit, and the mock, when there, never saw more calls at once than the limit
/// allows. The mock's count is exact where connections are sampled and can miss a peak
/// (FastAPI's grown workers, session 27: 93 connections in the samples, about 200 calls at the
/// mock), so more calls than the limit contradict any cap in front of the downstream.
pub(crate) fn downstream_stopped_at(connections: u32, calls: Option<u32>, limit: f64) -> bool {
    let past_limit = |n: u32| f64::from(n) > limit && !super::matches_limit(f64::from(n), limit);
    super::matches_limit(f64::from(connections), limit) && !calls.is_some_and(past_limit)
}

/// The connections to the downstream, never more than N while clients grew past N.
pub(super) fn connection_pool(plateau: &[&Step]) -> Option<Place> {
    let (clients, peer_port, most) = most_downstream_connections(plateau)?;
    let largest = plateau.last()?.clients;
    if most == 0 || largest <= most {
        return None;
    }
    let served = plateau
        .iter()
        .filter_map(|s| s.connections.as_ref()?.to_mock())
        .map(|p| p.counts.most_served)
        .max();
    Some(Place {
        kind: Some(PlaceKind::ConnectionPool),
        size: Some(f64::from(most)),
        held: served.map(f64::from),
        clients,
        source: Some(PlaceSource::Connections),
        peer_port: Some(peer_port),
        ..Place::default()
    })
}
