//! Evidence from what `/proc` showed of the target at the plateau: the pool whose threads sat
//! in a network wait (seed 000's thread dump, from the kernel's side), and the connections to
//! the downstream that never passed a number (seed 001's netstat).
use chokepoint_result::{Diagnosis, Kind, PoolThreads, Step, SweepContext};

/// The plateau's steps (from the knee on), or every step when there is no knee.
fn plateau<'s>(steps: &'s [Step], diagnosis: &Diagnosis) -> Vec<&'s Step> {
    let knee = diagnosis.knee_clients.unwrap_or(0);
    let mut plateau: Vec<&Step> = steps.iter().filter(|s| s.clients >= knee).collect();
    plateau.sort_by_key(|s| s.clients);
    plateau
}

/// The pool with the most threads in a network wait at once over `steps`, with its step.
fn busiest_waiting_pool<'s>(steps: &[&'s Step]) -> Option<(&'s Step, &'s PoolThreads)> {
    steps
        .iter()
        .filter_map(|step| Some((*step, step.threads_by_pool.as_ref()?)))
        .flat_map(|(step, threads)| threads.pools.iter().map(move |pool| (step, pool)))
        .filter(|(_, pool)| pool.most.socket_wait >= 1.0)
        .max_by(|a, b| a.1.most.socket_wait.total_cmp(&b.1.most.socket_wait))
}

/// Sentences of evidence from the observed threads and connections; none when the target was
/// not observed or showed nothing that bears on the finding.
pub fn evidence(steps: &[Step], diagnosis: &Diagnosis, context: &SweepContext) -> Vec<String> {
    let mut sentences = Vec::new();
    let plateau = plateau(steps, diagnosis);
    if matches!(diagnosis.kind, Kind::BlockingPool | Kind::MachineSaturated) {
        if let Some((step, pool)) = busiest_waiting_pool(&plateau) {
            let interval = step.threads_by_pool.as_ref().map_or(0, |t| t.interval_ms);
            let on = pool
                .waits_on
                .first()
                .map(|w| format!(", mostly in {}", w.on))
                .unwrap_or_default();
            sentences.push(format!(
                "Thread pool `{}` (from /proc, sampled every {interval} ms): {:.0} threads, up to {:.0} of them waiting on the network at once{on} \
                 at {} clients, {:.1} running on average.",
                pool.pool,
                pool.most.threads,
                pool.most.socket_wait,
                step.clients,
                pool.mean.running
            ));
        }
    }
    if let Some(sentence) = downstream_connections(steps, context) {
        sentences.push(sentence);
    }
    sentences
}

/// "Connections to the mock ... grew 2 → 6 → 10 and never passed 10", when the target held
/// connections to the mock.
fn downstream_connections(steps: &[Step], context: &SweepContext) -> Option<String> {
    let mut by_step: Vec<(u32, u32, u32, u16, u32)> = steps
        .iter()
        .filter_map(|step| {
            let mock = step
                .connections
                .as_ref()?
                .downstream
                .iter()
                .find(|peer| peer.mock)?;
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
    let most = by_step.iter().map(|s| s.1).max()?;
    if most == 0 {
        return None;
    }
    let port = by_step[0].3;
    let series = by_step
        .iter()
        .map(|s| s.1.to_string())
        .collect::<Vec<_>>()
        .join(" → ");
    let clients = by_step
        .iter()
        .map(|s| s.0.to_string())
        .collect::<Vec<_>>()
        .join(", ");
    let time_wait = by_step.iter().map(|s| s.2).max().unwrap_or(0);
    let most_served = by_step.iter().map(|s| s.4).max().unwrap_or(0);
    let cap = match context.mock_max_connections {
        Some(cap) if u64::from(most_served) == cap => format!(", the mock's cap of {cap}"),
        _ => String::new(),
    };
    let served = if most_served < most {
        let series = by_step
            .iter()
            .map(|s| s.4.to_string())
            .collect::<Vec<_>>()
            .join(" → ");
        format!(", of which the mock served {series} (the rest waited for it: not accepted, or the request unread)")
    } else {
        String::new()
    };
    Some(format!(
        "Connections from the target to the downstream (the mock, port {port}) at {clients} clients: {series} established at most{served}; \
         the mock served never more than {most_served} at once{cap}; up to {time_wait} in TIME_WAIT."
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use chokepoint_result::{
        ConnectionCounts, Connections, PeerConnections, SocketCounts, ThreadCounts, ThreadsByPool,
        WaitReason,
    };

    fn observed_step(clients: u32, waiting: f64, mock_established: u32) -> Step {
        let counts = |threads: f64, socket_wait: f64| ThreadCounts {
            threads,
            socket_wait,
            ..ThreadCounts::default()
        };
        Step {
            clients,
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
                    },
                    PoolThreads {
                        pool: "HTTP-Dispatcher".into(),
                        most: counts(1.0, 1.0),
                        mean: counts(1.0, 0.2),
                        waits_on: Vec::new(),
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
                    mock: true,
                    counts: ConnectionCounts {
                        most: SocketCounts {
                            established: mock_established,
                            time_wait: 3,
                            ..SocketCounts::default()
                        },
                        mean_established: mock_established as f64,
                        most_served: mock_established.min(10),
                    },
                }],
            }),
            ..Step::default()
        }
    }

    fn finding(kind: Kind, knee: u32) -> Diagnosis {
        Diagnosis {
            kind,
            limit: Some(20.0),
            knee_clients: Some(knee),
            summary: String::new(),
            evidence: Vec::new(),
            usl: None,
            pool: None,
            better_model: None,
            fan_out: None,
            attribution: None,
        }
    }

    #[test]
    fn a_pool_waiting_on_the_network_at_the_plateau_is_named_with_its_count() {
        let steps = [
            observed_step(10, 10.0, 10),
            observed_step(20, 20.0, 20),
            observed_step(40, 20.0, 20),
        ];
        let context = SweepContext::default();
        let said = evidence(&steps, &finding(Kind::BlockingPool, 20), &context);
        assert!(
            said[0].starts_with("Thread pool `actor-pool`")
                && said[0].contains("20 threads, up to 20 of them waiting on the network")
                && said[0].contains("poll"),
            "{said:?}"
        );
        assert!(said[1].contains("10 → 20 → 20"), "{said:?}");
        // A CPU-bound finding does not name a waiting pool.
        let said = evidence(&steps, &finding(Kind::CpuBound, 20), &context);
        assert_eq!(said.len(), 1, "{said:?}");
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
        let said = evidence(&steps, &finding(Kind::ConnectionLimit, 5), &context);
        assert_eq!(said.len(), 1, "{said:?}");
        assert!(
            said[0].contains("1 → 5 → 16 established")
                && said[0].contains("the mock served 1 → 5 → 10")
                && said[0].contains("never more than 10 at once, the mock's cap of 10")
                && said[0].contains("port 9090"),
            "{said:?}"
        );
        // Not observed: nothing to say.
        assert!(evidence(
            &[Step::default()],
            &finding(Kind::BlockingPool, 1),
            &context
        )
        .is_empty());
    }
}
