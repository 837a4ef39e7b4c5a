//! Clients the target never answered (`crates/diagnose/src/unanswered.rs`): a server that
//! serves a fixed number of connections and leaves the others unaccepted reads from the client
//! side as a pool of that many; with the clients counted unanswered it is `connection-limit`,
//! sized by the clients answered, on 2, 16 and 64 cores. Left alone: a pool whose deep FIFO
//! queue had not answered every client when the ramp ended (each answered client once), a pool
//! the mock sees at its ceiling, and steps that did not count their clients.

use chokepoint_diagnose::{describe, diagnose};
use chokepoint_result::{Fact, Kind, Step, SweepContext};

use crate::common::*;

const CLIENTS: [u32; 7] = [1, 2, 4, 8, 16, 32, 64];
/// The request's own time, ms: flat, since an accepted connection never queues.
const SERVICE_MS: f64 = 5.0;

fn context(cores: u32) -> SweepContext {
    SweepContext {
        cores: Some(cores),
        target_observed: true,
        ..bare_context()
    }
}

/// A server that serves `cap` connections and never accepts the others, the target on a tenth
/// of a core of a machine of `cores`: throughput min(c, cap) / 5 ms at a flat 5 ms, the clients
/// past the cap unanswered over a 20 s ramp and a 10 s window.
fn capped(c: u32, cap: u32, cores: u32, noise: &mut Noise) -> Step {
    let answered = c.min(cap);
    let x = noise.jitter(f64::from(answered) / SERVICE_MS * 1000.0, 0.02);
    let mut s = step(c, x, noise.jitter(SERVICE_MS, 0.02));
    s.unanswered_clients = Some(c - answered);
    s.ramp_s = if c > cap { 20.0 } else { 0.1 };
    s.target_cpu_pct = Some(10.0 / f64::from(cores));
    s.machine_cpu_pct = Some(30.0 / f64::from(cores));
    s
}

#[test]
fn a_server_that_serves_16_connections_is_a_connection_limit_of_16_on_any_machine() {
    for cores in [2, 16, 64] {
        let mut noise = Noise::new(u64::from(cores));
        let steps: Vec<Step> = CLIENTS
            .iter()
            .map(|&c| capped(c, 16, cores, &mut noise))
            .collect();
        let finding = diagnose(&steps, &context(cores));
        assert_eq!(finding.kind, Kind::ConnectionLimit, "{cores} cores");
        assert_eq!(finding.limit, Some(16.0), "{cores} cores");
        let unanswered = facts(&finding, |f| match f {
            Fact::ClientsUnanswered {
                clients,
                unanswered,
                waited_s,
                ..
            } => Some((clients.clone(), unanswered.clone(), *waited_s)),
            _ => None,
        });
        assert_eq!(unanswered.len(), 1, "{cores} cores: {:?}", finding.facts);
        let (clients, counts, waited) = &unanswered[0];
        assert_eq!(clients.last(), Some(&64));
        assert_eq!(counts.last(), Some(&48));
        assert!(*waited >= 20.0, "{waited}");
        let text = describe(&finding);
        println!(
            "{cores} cores: {}\n{}",
            text.summary,
            text.evidence.join("\n")
        );
        assert!(
            text.summary
                .starts_with("The target serves about 16 connections at once"),
            "{}",
            text.summary
        );
        assert!(
            text.evidence
                .iter()
                .any(|s| s.starts_with("Clients the target never answered: ")),
            "{:?}",
            text.evidence
        );
    }
}

#[test]
fn a_deep_queue_that_answered_each_client_once_a_pool_the_mock_sees_and_uncounted_steps_stay_pools()
{
    let mut noise = Noise::new(3);
    // A pool of 20 behind 1 s calls at 1000 clients: the ramp's 20 s answered 400 of them once
    // each; in the 10 s window the 400 were answered 200 times in all. A queue in turn.
    let deep: Vec<Step> = [10, 20, 40, 1000]
        .iter()
        .map(|&c| {
            let mut s = pool_step(20, 1000.0, 0.0, c, &mut noise);
            s.downstream_inflight = None;
            s.downstream = None;
            s.unanswered_clients = Some(if c == 1000 { 600 } else { 0 });
            s
        })
        .collect();
    let finding = diagnose(&deep, &bare_context());
    assert_eq!(finding.kind, Kind::BlockingPool, "{:?}", finding.facts);
    assert!(!finding
        .facts
        .iter()
        .any(|f| matches!(f, Fact::ClientsUnanswered { .. })));

    // A pool of 16 the mock saw at its ceiling, with clients unanswered past 24 (a proxy's cap
    // in front of a pool that queues): the pool stays, seen directly. The steps past the knee
    // (32 and 64 clients) leave 8 and 40 unanswered.
    let seen: Vec<Step> = CLIENTS
        .iter()
        .map(|&c| {
            let mut s = pool_step(16, 50.0, 1.0, c, &mut noise);
            s.unanswered_clients = Some(c.saturating_sub(24));
            s
        })
        .collect();
    let finding = diagnose(&seen, &mock_context(50.0));
    assert_eq!(finding.kind, Kind::BlockingPool, "{:?}", finding.facts);

    // The server that serves 16 connections, swept by a generator that did not count its
    // clients (a file written before it did): the pool the client side reads.
    let uncounted: Vec<Step> = CLIENTS
        .iter()
        .map(|&c| {
            let mut s = capped(c, 16, 2, &mut noise);
            s.unanswered_clients = None;
            s
        })
        .collect();
    let finding = diagnose(&uncounted, &context(2));
    assert_ne!(finding.kind, Kind::ConnectionLimit, "{:?}", finding.facts);
}

#[test]
fn a_cap_in_front_of_a_mock_that_sees_just_the_clients_answered_is_the_connection_limit() {
    // HAProxy's frontend `maxconn 16` before a 20 ms mock: 16 connections served, each request
    // one call, the mock flat at 16 in flight; the clients past 16 never answered.
    for cores in [2, 16, 64] {
        let mut noise = Noise::new(u64::from(cores) + 9);
        let steps: Vec<Step> = CLIENTS
            .iter()
            .map(|&c| {
                let answered = c.min(16);
                let x = noise.jitter(f64::from(answered) / 21.0 * 1000.0, 0.02);
                let mut s = step(c, x, noise.jitter(21.0, 0.02));
                s = with_mock(s, 20.0, 1.0, u64::from(answered));
                s.unanswered_clients = Some(c - answered);
                s.ramp_s = if c > 16 { 20.0 } else { 0.1 };
                s.target_cpu_pct = Some(5.0 / f64::from(cores));
                s.machine_cpu_pct = Some(20.0 / f64::from(cores));
                s
            })
            .collect();
        let context = SweepContext {
            cores: Some(cores),
            target_observed: true,
            ..mock_context(20.0)
        };
        let finding = diagnose(&steps, &context);
        assert_eq!(
            finding.kind,
            Kind::ConnectionLimit,
            "{cores} cores: {:?}",
            finding.facts
        );
        assert_eq!(finding.limit, Some(16.0), "{cores} cores");
    }
}

#[test]
fn a_plateau_that_falls_as_fewer_clients_get_in_is_the_connection_limit_too() {
    // tests/targets/py-warmup as a sweep of session 20 read it: a listen backlog of 5 behind a
    // slow accept loop, the clients let in changing from step to step (57, 105, 58, 76 answered
    // at 80, 128, 165, 239), so throughput peaks and falls and the curve alone reads contention.
    let table: [(u32, f64, f64, u32); 10] = [
        (1, 44.0, 22.6, 0),
        (2, 90.5, 21.9, 0),
        (8, 372.7, 21.3, 0),
        (32, 1545.0, 20.8, 0),
        (56, 2664.5, 21.1, 0),
        (68, 3092.3, 25.2, 0),
        (80, 2674.8, 21.3, 23),
        (128, 4857.9, 24.1, 23),
        (165, 2733.1, 21.3, 107),
        (239, 3654.7, 20.8, 163),
    ];
    for cores in [2, 16, 64] {
        let steps: Vec<Step> = table
            .iter()
            .map(|&(c, x, w, unanswered)| {
                let mut s = step(c, x, w);
                s.unanswered_clients = Some(unanswered);
                s.ramp_s = if unanswered > 0 { 20.0 } else { 1.0 };
                // 0.1 ms of CPU a request (0.49 of a core at the peak), as measured.
                let target_cores = x * 0.0001;
                s.target_cpu_pct = Some(100.0 * target_cores / f64::from(cores));
                s.machine_cpu_pct = Some(200.0 * target_cores / f64::from(cores));
                s
            })
            .collect();
        let finding = diagnose(&steps, &context(cores));
        assert_eq!(
            finding.kind,
            Kind::ConnectionLimit,
            "{cores} cores: {:?}",
            finding.facts
        );
        let limit = finding.limit.expect("the clients answered");
        assert!((57.0..=105.0).contains(&limit), "{limit}");
    }
}

#[test]
fn clients_starved_by_an_unfair_lock_whose_answered_clients_queue_are_not_a_cap() {
    // A spinlock that serves 600 req/s at 20 clients and starves some past it: the clients it
    // answers wait for it too (200 ms and more against 22 ms), so the unanswered ones were
    // passed over inside the target, not kept out of it. The curve's reading stays.
    let table: [(u32, f64, f64, u32); 6] = [
        (1, 44.0, 22.6, 0),
        (2, 88.0, 22.6, 0),
        (8, 353.0, 22.6, 0),
        (20, 630.0, 31.9, 1),
        (40, 402.0, 90.7, 3),
        (64, 296.0, 200.6, 9),
    ];
    let steps: Vec<Step> = table
        .iter()
        .map(|&(c, x, w, unanswered)| {
            let mut s = step(c, x, w);
            s.unanswered_clients = Some(unanswered);
            s
        })
        .collect();
    let finding = diagnose(&steps, &context(2));
    assert_ne!(finding.kind, Kind::ConnectionLimit, "{:?}", finding.facts);
    assert!(!finding
        .facts
        .iter()
        .any(|f| matches!(f, Fact::ClientsUnanswered { .. })));
}

/// A server capped at 16 connections served whose process keeps `busy` whole cores busy with
/// something else, on a machine of `cores`: the capped shape above, the target's CPU that many
/// cores and its threads running as many.
fn capped_and_busy(c: u32, busy: f64, cores: u32, noise: &mut Noise) -> Step {
    let mut s = capped(c, 16, cores, noise);
    s.target_cpu_pct = Some(noise.jitter(100.0 * busy / f64::from(cores), 0.01));
    s.machine_cpu_pct = Some(100.0 * (busy + 0.3).min(f64::from(cores)) / f64::from(cores));
    s
}

#[test]
fn a_cap_whose_process_burns_whole_cores_is_the_connection_limit_not_the_cpu() {
    // Node's cluster with 2 workers of maxConnections 8: the primary passes the connections the
    // workers refuse back and forth and keeps 2 cores busy, while 16 clients are served at
    // their base latency and the others never answered. A sweep of session 23 read `cpu-bound
    // 2`. On 2 cores that is every core; on 16 and 64 a whole number of them.
    for cores in [2, 16, 64] {
        for busy in [1.0, 2.0] {
            let mut noise = Noise::new(u64::from(cores) * 7 + busy as u64);
            let steps: Vec<Step> = CLIENTS
                .iter()
                .map(|&c| capped_and_busy(c, if c > 16 { busy } else { 0.2 }, cores, &mut noise))
                .collect();
            let finding = diagnose(&steps, &context(cores));
            assert_eq!(
                (finding.kind, finding.limit),
                (Kind::ConnectionLimit, Some(16.0)),
                "{cores} cores, {busy} busy: {:?}",
                finding.facts
            );
        }
    }
}

#[test]
fn a_cpu_bound_server_whose_answered_clients_wait_for_the_cpu_stays_cpu_bound() {
    // One core's worth of requests of 5 ms of CPU each (200 req/s), the answered clients each
    // waiting its turn for the core (latency = answered / X), and a quarter of the clients past
    // the knee unanswered behind a small listen backlog: the CPU is the limit.
    for cores in [2, 16, 64] {
        let mut noise = Noise::new(u64::from(cores) + 41);
        let steps: Vec<Step> = CLIENTS
            .iter()
            .map(|&c| {
                let unanswered = if c > 2 { c / 4 } else { 0 };
                let answered = c - unanswered;
                let x = noise.jitter(200.0_f64.min(f64::from(answered) * 200.0), 0.02);
                let latency = (f64::from(answered) / x * 1000.0).max(SERVICE_MS);
                let mut s = step(c, x, noise.jitter(latency, 0.02));
                s.unanswered_clients = Some(unanswered);
                s.ramp_s = if unanswered > 0 { 20.0 } else { 0.1 };
                let busy = x * 0.005;
                s.target_cpu_pct = Some(100.0 * busy / f64::from(cores));
                s.machine_cpu_pct = Some(100.0 * (busy + 0.2) / f64::from(cores));
                s
            })
            .collect();
        let finding = diagnose(&steps, &context(cores));
        assert_eq!(
            finding.kind,
            Kind::CpuBound,
            "{cores} cores: {:?}",
            finding.facts
        );
    }
}
