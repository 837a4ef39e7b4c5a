//! Facts from what `/proc` showed of the target: the pool whose threads sat in a network wait
//! at the plateau (seed 000's thread dump, from the kernel's side), and the connections to the
//! mock that never passed a number (seed 001's netstat). They read the decided kind and change
//! none.
use crate::evidence::Evidence;
use crate::finding::Finding;
use chokepoint_result::{Fact, Kind, PoolThreads, Step, SweepContext};

/// The pool with the most threads in a network wait at once over `steps`, with its step,
/// leaving out the forwarder's own (`forwarder`, its program): a forwarder waits on the network
/// by design, a process or thread per connection passing bytes (socat's forks), not a pool of
/// the service's.
fn busiest_waiting_pool<'s>(
    steps: &[&'s Step],
    forwarder: Option<&str>,
) -> Option<(&'s Step, &'s PoolThreads)> {
    steps
        .iter()
        .filter_map(|step| Some((*step, step.threads_by_pool.as_ref()?)))
        .flat_map(|(step, threads)| threads.pools.iter().map(move |pool| (step, pool)))
        .filter(|(_, pool)| pool.most.socket_wait >= 1.0 && Some(pool.pool.as_str()) != forwarder)
        .max_by(|a, b| {
            a.1.most
                .socket_wait
                .total_cmp(&b.1.most.socket_wait)
                .then(b.0.clients.cmp(&a.0.clients))
        })
}

/// `finding` with the facts of [`facts`] after its own.
pub(crate) fn with_facts(mut finding: Finding, evidence: &Evidence<'_>) -> Finding {
    let observed = facts(evidence.steps, &finding, evidence.context);
    finding.facts.extend(observed);
    finding
}

/// The facts the observed threads and connections give; none when the target was not
/// observed or showed nothing that bears on the finding.
pub fn facts(steps: &[Step], finding: &Finding, context: &SweepContext) -> Vec<Fact> {
    let mut facts = Vec::new();
    let knee = finding.knee_clients.unwrap_or(0);
    let plateau: Vec<&Step> = steps.iter().filter(|s| s.clients >= knee).collect();
    if matches!(finding.kind, Kind::BlockingPool | Kind::MachineSaturated) {
        let forwarder = context.forwarder.as_ref().map(|f| f.name.as_str());
        if let Some((step, pool)) = busiest_waiting_pool(&plateau, forwarder) {
            facts.push(Fact::PoolWaiting {
                clients: step.clients,
                pool: pool.pool.clone(),
                threads: pool.most.threads,
                socket_wait: pool.most.socket_wait,
                waits_on: pool.waits_on.first().map(|w| w.on.clone()),
                mean_running: pool.mean.running,
                interval_ms: step.threads_by_pool.as_ref().map_or(0, |t| t.interval_ms),
            });
        }
    }
    facts.extend(downstream_connections(steps, context));
    facts
}

/// The target's connections to the mock at each step, when it held any.
fn downstream_connections(steps: &[Step], context: &SweepContext) -> Option<Fact> {
    let mut by_step: Vec<(u32, u32, u32, u16, u32)> = steps
        .iter()
        .filter_map(|step| {
            let mock = step.connections.as_ref()?.to_mock()?;
            Some((
                step.clients,
                mock.counts.most.established,
                mock.counts.most.time_wait,
                mock.peer_port,
                mock.counts.most_served,
            ))
        })
        .collect();
    by_step.sort_by_key(|s| s.0);
    if by_step.iter().all(|s| s.1 == 0) {
        return None;
    }
    Some(Fact::DownstreamConnections {
        clients: by_step.iter().map(|s| s.0).collect(),
        peer_port: by_step[0].3,
        established: by_step.iter().map(|s| s.1).collect(),
        served: by_step.iter().map(|s| s.4).collect(),
        most_served: by_step.iter().map(|s| s.4).max().unwrap_or(0),
        mock_cap: context.mock_max_connections,
        time_wait: by_step.iter().map(|s| s.2).max().unwrap_or(0),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use chokepoint_result::{
        ConnectionCounts, Connections, PeerConnections, SocketCounts, ThreadCounts, ThreadsByPool,
        WaitReason,
    };

    fn observed_step(clients: u32, waiting: f64, established: u32) -> Step {
        let counts = |threads: f64, socket_wait: f64| ThreadCounts {
            threads,
            socket_wait,
            ..ThreadCounts::default()
        };
        Step {
            load: chokepoint_result::LoadReport {
                clients,
                ..Default::default()
            },
            threads_by_pool: Some(ThreadsByPool {
                interval_ms: 250,
                samples: 8,
                pools: vec![
                    PoolThreads {
                        pool: "actor-pool".into(),
                        most: counts(20.0, waiting),
                        mean: counts(20.0, waiting - 0.5),
                        waits_on: vec![WaitReason {
                            on: "poll".into(),
                            mean: waiting - 0.5,
                        }],
                        main_threads: None,
                    },
                    PoolThreads {
                        pool: "HTTP-Dispatcher".into(),
                        most: counts(1.0, 1.0),
                        mean: counts(1.0, 0.2),
                        waits_on: Vec::new(),
                        main_threads: None,
                    },
                ],
            }),
            connections: Some(Connections {
                interval_ms: 250,
                samples: 8,
                listen_port: Some(8080),
                client_side: ConnectionCounts::default(),
                downstream: vec![PeerConnections {
                    peer_port: 9090,
                    peer_addr: None,
                    mock: true,
                    counts: ConnectionCounts {
                        most: SocketCounts {
                            established,
                            time_wait: 3,
                            ..SocketCounts::default()
                        },
                        mean_established: established as f64,
                        most_served: established.min(10),
                        mean_unserved: 0.0,
                        median_served: None,
                    },
                }],
                listen_overflows: None,
                half_open_clients: 0.0,
            }),
            ..Step::default()
        }
    }

    fn finding(kind: Kind, knee: u32) -> Finding {
        let mut finding = Finding::bare(kind, Vec::new());
        finding.knee_clients = Some(knee);
        finding.limit = Some(20.0);
        finding
    }

    #[test]
    fn a_pool_waiting_on_the_network_at_the_plateau_is_a_fact_with_its_counts() {
        let steps = [
            observed_step(10, 10.0, 10),
            observed_step(20, 20.0, 20),
            observed_step(40, 20.0, 20),
        ];
        let context = SweepContext::default();
        let read = facts(&steps, &finding(Kind::BlockingPool, 20), &context);
        assert_eq!(
            read[0],
            Fact::PoolWaiting {
                clients: 20,
                pool: "actor-pool".into(),
                threads: 20.0,
                socket_wait: 20.0,
                waits_on: Some("poll".into()),
                mean_running: 0.0,
                interval_ms: 250,
            }
        );
        assert!(
            matches!(&read[1], Fact::DownstreamConnections { established, .. } if *established == vec![10, 20, 20])
        );
        // A CPU-bound finding does not name a waiting pool.
        let read = facts(&steps, &finding(Kind::CpuBound, 20), &context);
        assert_eq!(read.len(), 1, "{read:?}");
    }

    #[test]
    fn a_forwarders_own_processes_waiting_on_the_network_are_no_pool_of_the_service() {
        // socat forks a process per connection, each waiting on its two sockets: more of them
        // than the service's pool has threads.
        let with_socat = |clients: u32| {
            let mut step = observed_step(clients, 20.0, 20);
            if let Some(pools) = step.threads_by_pool.as_mut() {
                pools.pools.push(PoolThreads {
                    pool: "socat".into(),
                    most: ThreadCounts {
                        threads: 40.0,
                        socket_wait: 40.0,
                        ..ThreadCounts::default()
                    },
                    mean: ThreadCounts::default(),
                    waits_on: Vec::new(),
                    main_threads: None,
                });
            }
            step
        };
        let steps = [with_socat(20), with_socat(40)];
        let behind = SweepContext {
            forwarder: Some(chokepoint_result::Forwarder {
                name: "socat".into(),
                pid: 7,
                to_port: Some(8080),
                to_path: None,
                to_address: None,
                served_name: "java".into(),
                served_pids: vec![8],
            }),
            ..SweepContext::default()
        };
        let waiting = |context: &SweepContext| {
            facts(&steps, &finding(Kind::BlockingPool, 20), context)
                .into_iter()
                .find_map(|f| match f {
                    Fact::PoolWaiting { pool, .. } => Some(pool),
                    _ => None,
                })
        };
        assert_eq!(waiting(&behind).as_deref(), Some("actor-pool"));
        // Without the forwarder known, the 40 waiting forks are the busiest.
        assert_eq!(waiting(&SweepContext::default()).as_deref(), Some("socat"));
    }

    #[test]
    fn downstream_connections_that_stop_at_the_mocks_cap_say_so() {
        let steps = [
            observed_step(1, 0.0, 1),
            observed_step(5, 0.0, 5),
            observed_step(20, 0.0, 16),
        ];
        let context = SweepContext {
            mock_max_connections: Some(10),
            ..SweepContext::default()
        };
        let mut found = finding(Kind::ConnectionLimit, 5);
        found.facts = facts(&steps, &found, &context);
        assert_eq!(
            found.facts,
            vec![Fact::DownstreamConnections {
                clients: vec![1, 5, 20],
                peer_port: 9090,
                established: vec![1, 5, 16],
                served: vec![1, 5, 10],
                most_served: 10,
                mock_cap: Some(10),
                time_wait: 3,
            }]
        );
        let text = crate::describe(&found);
        let said = text.evidence.join(" ");
        assert!(
            said.contains("1 → 5 → 16 established")
                && said.contains("the mock served 1 → 5 → 10")
                && said.contains("never more than 10 at once, the mock's cap of 10")
                && said.contains("port 9090"),
            "{said}"
        );
        // Not observed: nothing to say.
        assert!(facts(
            &[Step::default()],
            &finding(Kind::BlockingPool, 1),
            &context
        )
        .is_empty());
    }
}
