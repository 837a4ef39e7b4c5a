//! The target's accept path as a cap that sheds: the client connections it kept at once were
//! the clients answered, and it closed the others' unanswered as it accepted them (Node's
//! `server.maxConnections`). Sized at 16, 100 and 1000 connections (a cap on connections does
//! not follow the cores), with the controls where the failures or the connections explain
//! nothing: failures that are not resets, resets as slow as answers, connections kept past the
//! limit, and a pool held at the limit.
use super::shapes::*;
use super::*;
use chokepoint_result::{error_kind, ConnectionCounts, LatencyMs, PoolThreads};

/// How a step's failures came back: their kind, per second, and their median latency.
#[derive(Clone, Copy)]
struct Failures {
    kind: &'static str,
    per_s: u64,
    p50_ms: f64,
}

/// Connections closed at once as they were accepted, a round trip each.
const CLOSED_AT_ACCEPT: Failures = Failures {
    kind: error_kind::RESET,
    per_s: 900,
    p50_ms: 0.4,
};

/// An event-loop server (the process `name`, one main thread and its helpers idle) at
/// `clients`, keeping `kept` client connections at once and failing requests as `failed` says
/// (none when `None`), its answered requests a 50 ms downstream call.
fn event_loop(name: &str, clients: u32, kept: u32, failed: Option<Failures>) -> Step {
    let mut main = proc_pool(name, 7.0, 0.0, 5.0, 0.3);
    main.main_threads = Some(1.0);
    let mut step = step(clients, vec![main], None, Some(kept));
    let duration_s = 4.0;
    step.load.duration_s = duration_s;
    step.load.ok_latency_ms = Some(latency(52.0));
    if let Some(failed) = failed {
        let n = failed.per_s * duration_s as u64;
        step.load.errors.insert(failed.kind.into(), n);
        step.load.error_latency_ms = Some(latency(failed.p50_ms));
    }
    // Closing connections by the thousand a second leaves a few in the listen queue between
    // two accepts (node-max-connections: 1.6 to 7.3 on average).
    let waiting = if failed.is_some() { 3.0 } else { 0.0 };
    let connections = step.connections.as_mut().unwrap();
    connections.client_side = ConnectionCounts {
        most_served: kept + 1,
        median_served: Some(f64::from(kept)),
        mean_established: f64::from(kept) + waiting,
        mean_unserved: waiting,
        ..ConnectionCounts::default()
    };
    step
}

fn latency(p50: f64) -> LatencyMs {
    LatencyMs {
        p50,
        ..LatencyMs::default()
    }
}

/// A server of process `name` capped at `n` connections, swept to 4n clients, failing past
/// the cap as `failed` says: `error-bound` at `n`.
fn capped(name: &str, n: u32, failed: Failures) -> (Vec<Step>, Finding) {
    let steps = [n / 2, n, 2 * n, 4 * n]
        .into_iter()
        .map(|c| event_loop(name, c, c.min(n), (c > n).then_some(failed)))
        .collect();
    (steps, finding(Kind::ErrorBound, f64::from(n), n))
}

fn accept_place(facts: &[Fact]) -> Option<&Place> {
    facts.iter().find_map(|fact| match fact {
        Fact::Place { place } if place.kind == Some(PlaceKind::AcceptCap) => Some(&**place),
        _ => None,
    })
}

#[test]
fn a_node_server_that_closes_the_connections_past_its_cap_is_its_accept_path_with_max_connections()
{
    for n in [16, 100, 1000] {
        let (steps, found) = capped("node", n, CLOSED_AT_ACCEPT);
        let facts = facts(&steps, &found);
        let place = accept_place(&facts).unwrap_or_else(|| panic!("{n}: {facts:?}"));
        assert_eq!(
            (place.size, place.held, place.source),
            (
                Some(f64::from(n)),
                Some(f64::from(n)),
                Some(PlaceSource::Connections)
            )
        );
        assert_eq!(place.closed_unanswered_per_s, Some(900.0));
        assert_eq!((place.clients, place.peer_port), (4 * n, Some(8080)));
        let setting = place.setting.as_ref().expect("node's cap is named");
        assert!(
            setting.setting.starts_with("server.maxConnections"),
            "{setting:?}"
        );
        assert_eq!(place.shown_by.as_deref(), Some("process `node`"));
        assert_eq!(
            facts.len(),
            1,
            "no unclear pool beside the place: {facts:?}"
        );
        let said = crate::describe::place::sentence(&facts[0], &found).unwrap();
        assert!(
            said.contains(&format!(
                "the target's accept path on port 8080: it held {n} client connections at once"
            )) && said.contains(&format!(
                "closed the others' connections unanswered as it accepted them, 900 a second \
                 (the target's connections, /proc), at {} clients",
                4 * n
            )),
            "{said}"
        );
    }
}

#[test]
fn another_process_that_sheds_so_is_the_accept_path_with_no_knob() {
    // The shedding is the evidence of the place; only a process the catalogue knows for such a
    // cap names one. Recordings from before main threads were counted name none either.
    for n in [16, 100, 1000] {
        let (steps, found) = capped("python3", n, CLOSED_AT_ACCEPT);
        let place = accept_place(&facts(&steps, &found)).cloned();
        let place = place.unwrap_or_else(|| panic!("{n}"));
        assert_eq!((place.size, place.setting), (Some(f64::from(n)), None));

        let (mut steps, found) = capped("node", n, CLOSED_AT_ACCEPT);
        for step in &mut steps {
            for pool in &mut step.threads_by_pool.as_mut().unwrap().pools {
                pool.main_threads = None;
            }
        }
        let place = accept_place(&facts(&steps, &found)).cloned();
        assert_eq!(place.map(|p| p.setting), Some(None), "{n}");
    }
}

#[test]
fn failures_that_are_not_connections_turned_away_at_once_place_no_accept_path() {
    let timeouts = Failures {
        kind: error_kind::REQUEST_TIMEOUT,
        per_s: 50,
        p50_ms: 1000.0,
    };
    let statuses = Failures {
        kind: "http_503",
        per_s: 900,
        p50_ms: 0.4,
    };
    // Connections closed after a wait as long as an answer's: a handler that gave up on its
    // queue, not the accept.
    let closed_late = Failures {
        p50_ms: 60.0,
        ..CLOSED_AT_ACCEPT
    };
    for n in [16, 100, 1000] {
        for failed in [timeouts, statuses, closed_late] {
            let (steps, found) = capped("node", n, failed);
            let facts = facts(&steps, &found);
            assert_eq!(accept_place(&facts), None, "{n} {}: {facts:?}", failed.kind);
        }
    }
}

#[test]
fn connections_kept_past_the_limit_place_no_accept_path() {
    // Every client's connection kept, the resets from somewhere else: the accept took them all.
    for n in [16, 100, 1000] {
        let steps: Vec<Step> = [n / 2, n, 2 * n, 4 * n]
            .into_iter()
            .map(|c| event_loop("node", c, c, (c > n).then_some(CLOSED_AT_ACCEPT)))
            .collect();
        let facts = facts(&steps, &finding(Kind::ErrorBound, f64::from(n), n));
        assert_eq!(accept_place(&facts), None, "{n}: {facts:?}");
    }
}

#[test]
fn a_pool_held_at_the_limit_stays_the_place_beside_resets() {
    // A pool of n threads each in a downstream call: direct evidence of its own, kept.
    for n in [16, 100, 1000] {
        let (mut steps, found) = capped("node", n, CLOSED_AT_ACCEPT);
        for step in &mut steps {
            let held = f64::from(step.clients.min(n));
            let pool: PoolThreads = proc_pool("worker", f64::from(n), held, 0.0, 0.0);
            step.threads_by_pool.as_mut().unwrap().pools.push(pool);
        }
        let facts = facts(&steps, &found);
        assert_eq!(accept_place(&facts), None, "{n}: {facts:?}");
        assert!(
            facts.iter().any(|fact| matches!(fact, Fact::Place { .. })),
            "{n}: {facts:?}"
        );
    }
}
