//! A pool's size read from the target's side when no mock counts the calls: the target's
//! connections to one downstream peer (a database, a service) at the very same count at every
//! plateau step, each of them held by a thread in a network wait all the time.
//!
//! Why it outweighs Little's law: with no mock, Little's law can only use the whole request's
//! base latency as the time a slot is held, so it counts the time each request spends outside
//! the pool (parsing, writing the answer, a 40 ms delayed ACK) as slot time and comes out
//! higher than the pool: a HikariCP pool of 10 around a 100 ms query, in a 144 ms request,
//! reads as "~14 slots". N connections that never grew while clients did, with N threads in a
//! network wait holding them through every plateau step, are N calls in flight at once all the
//! time: a cap of N, each call held N / X (X the plateau throughput), the rest of the request
//! outside it. It is the target-side twin of the mock's `full-at-every-step` reading (`size`).
//!
//! A thread holds its connection from the lease to the return: in the network wait, and, after
//! the answer woke it, running or waiting for a core (`R` in `/proc`); both count as held.
//!
//! Both halves are needed. Connections alone are not calls: a pool opens its connections ahead
//! of need (asyncpg's and HikariCP's defaults open all of them at start), so an idle pool of N
//! shows N connections whatever limits the service. The threads held in the network wait are
//! what shows each connection busy; an event loop holds its calls without a thread, so there
//! this reading says nothing and Little's law stands.
use crate::place::{background_beside_calls, matches_limit};
use crate::points::{median, Point};
use chokepoint_result::{Fact, Step};

/// Every connection held all the time: the held threads' mean is at least this share of them.
const HELD_ALL_THE_TIME: f64 = crate::whole_cores::FLAT;
/// Requests queue beyond the connections: the largest plateau step has more clients than this
/// many times the connections.
const QUEUED_BEYOND: f64 = 1.15;
/// The reading corrects Little's law only where the two differ by more than a plateau's noise:
/// connections within this share of Little's estimate agree with it (and more than it were not
/// all busy: calls held at once cannot outnumber the requests in service).
const LITTLE_SLACK: f64 = 0.15;

/// The connection ceiling of the plateau points `plateau`, with `all` the sweep's points (the
/// fewest clients' step tells a pool's background network waits), and `little` the estimate it
/// must not exceed: a cap above Little's law would be connections that were not all busy.
pub(crate) fn connection_ceiling(
    all: &[Point<'_>],
    plateau: &[&Point<'_>],
    little: f64,
    throughput_rps: f64,
) -> Option<Fact> {
    let steps: Vec<&Step> = plateau
        .iter()
        .filter_map(|p| p.steps.first().copied())
        .collect();
    if steps.len() < 2 {
        return None;
    }
    let fewest = all.iter().min_by_key(|p| p.clients)?;
    let (peer_port, connections) = same_count_to_one_peer(&steps)?;
    let largest = steps.iter().map(|s| s.clients).max()?;
    let n = f64::from(connections);
    if f64::from(largest) <= QUEUED_BEYOND * n || n >= little * (1.0 - LITTLE_SLACK) {
        return None;
    }
    let hold_s = n / throughput_rps;
    let (pool, held) = pool_holding(&steps, fewest, hold_s, connections)?;
    Some(Fact::ConnectionCeiling {
        clients: steps.iter().map(|s| s.clients).collect(),
        peer_port,
        connections,
        pool,
        held_threads: held,
        hold_ms: hold_s * 1000.0,
        little,
    })
}

/// The one peer whose connections from the target were the same count, at least one, at every
/// step; two such peers (or none) give none.
fn same_count_to_one_peer(steps: &[&Step]) -> Option<(u16, u32)> {
    let first = steps.first()?.connections.as_ref()?;
    let candidates: Vec<(u16, u32)> = first
        .downstream
        .iter()
        .map(|peer| (peer.peer_port, peer.counts.most.established))
        .filter(|&(port, count)| {
            count >= 1
                && steps.iter().all(|step| {
                    step.connections.as_ref().is_some_and(|c| {
                        c.downstream
                            .iter()
                            .any(|p| p.peer_port == port && p.counts.most.established == count)
                    })
                })
        })
        .collect();
    match candidates.as_slice() {
        [one] => Some(*one),
        _ => None,
    }
}

/// The pool whose threads held `connections` at every step, with the median held: the mean
/// over the samples of its threads in a network wait or running, less its [`background`]
/// threads. A thread the answer woke is runnable until a core is free, and `/proc` shows it
/// so (`R`, running or waiting for a CPU) while it still holds its connection: on a machine
/// busy with other work that wait is part of every hold. psycopg_pool's 4 holders, swept beside
/// another lane of tests, read 3.50 in a network wait and 0.88 running at one plateau step
/// (2 runs in 14; the other 12 read 4.00 and 0). A thread parked in `futex` is not counted:
/// it may be queued for the pool. Counting the running threads can only add to the held: a
/// busy pool's CPU work pushes them past the match, and the reading says nothing.
fn pool_holding(
    steps: &[&Step],
    fewest: &Point<'_>,
    hold_s: f64,
    connections: u32,
) -> Option<(String, f64)> {
    let n = f64::from(connections);
    let pools = steps.first()?.threads_by_pool.as_ref()?;
    pools.pools.iter().find_map(|pool| {
        let background = background(&pool.pool, fewest, hold_s);
        let held: Vec<f64> = steps
            .iter()
            .map(|step| {
                step.threads_by_pool
                    .as_ref()
                    .and_then(|t| t.pools.iter().find(|p| p.pool == pool.pool))
                    .map_or(0.0, |p| {
                        (p.mean.socket_wait + p.mean.running - background).max(0.0)
                    })
            })
            .collect();
        let all_held = held
            .iter()
            .all(|&h| h >= HELD_ALL_THE_TIME * n && matches_limit(h, n));
        all_held.then(|| (pool.pool.clone(), median(held.iter().copied())))
    })
}

/// The threads of `/proc`'s pool `name` in a network wait whatever the load (an accept loop, a
/// listener polling its socket), read at the fewest clients less the calls in flight there.
/// Under the reading being tested each call holds its connection `hold_s` (N / the plateau's
/// throughput), so by Little's law X × `hold_s` calls were in flight at that step's throughput
/// X. The `/proc` place's [`crate::place::background`] takes one thread per client instead,
/// every client in a call all the time: at 1 client a call of 100 ms in a 145 ms request is
/// 0.69 of a thread, and 8 samples at 250 ms that caught it 3 times read 1.375 beside an accept
/// loop, which rounded to no background at all (psycopg_pool's 4 then read 5 held).
fn background(name: &str, fewest: &Point<'_>, hold_s: f64) -> f64 {
    background_beside_calls(name, &fewest.steps, |_| fewest.ok_x * hold_s)
}
