//! The words of a pool that grows instead of queueing ([`Fact::GrowingPool`], which
//! [`crate::growing`] decides): its sentence, its key line and its rank. The summary of a
//! `growing-pool` finding stays with the rules (`crate::growing::summary`).

use super::Teller;
use chokepoint_result::format::{clients as clients_words, count, percent};
use chokepoint_result::{Fact, Kind};

/// The words of [`Fact::GrowingPool`].
pub(super) const TELLER: Teller = Teller {
    sentences: |fact, _| sentence(fact).into_iter().collect(),
    short: |fact, _| short(fact),
    rank: |kind, fact| match (kind, fact) {
        (Kind::GrowingPool, Fact::GrowingPool { .. }) => Some(0),
        _ => None,
    },
};

/// `2 → 3 → 5 threads at 1 → 2 → 4 clients`.
fn by_step(clients: &[u32], threads: &[f64]) -> String {
    let threads: Vec<String> = threads.iter().map(|t| count(*t)).collect();
    let clients: Vec<String> = clients.iter().map(u32::to_string).collect();
    format!(
        "{} threads at {} clients",
        threads.join(" → "),
        clients.join(" → ")
    )
}

/// The evidence sentence of a [`Fact::GrowingPool`].
fn sentence(fact: &Fact) -> Option<String> {
    let Fact::GrowingPool {
        pool,
        clients,
        threads,
        knee_clients,
        busy_share,
        ..
    } = fact
    else {
        return None;
    };
    Some(format!(
        "Pool `{pool}` (from /proc) grew with the clients instead of queueing them: {}, about a thread \
         per client in flight, and it kept growing past {}, where throughput stopped following; \
         at the last step {} of its threads were running or waiting on the network, not parked.",
        by_step(clients, threads),
        clients_words(*knee_clients),
        percent(*busy_share),
    ))
}

/// The key line of a [`Fact::GrowingPool`].
fn short(fact: &Fact) -> Option<String> {
    let Fact::GrowingPool {
        pool,
        clients,
        threads,
        ..
    } = fact
    else {
        return None;
    };
    Some(format!("Pool `{pool}`: {}.", by_step(clients, threads)))
}
