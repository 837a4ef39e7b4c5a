//! The words of a pool that grows instead of queueing ([`Fact::GrowingPool`], which
//! [`crate::growing`] decides), and of one that grew in front of the finding's limit
//! ([`Fact::PoolGrewInFront`]): their sentences, key lines and ranks. The summary of a
//! `growing-pool` finding stays with the rules (`crate::growing::summary`).

use super::Teller;
use chokepoint_result::format::{clients as clients_words, count, percent};
use chokepoint_result::{Fact, Kind};

/// The words of [`Fact::GrowingPool`] and [`Fact::PoolGrewInFront`].
pub(super) const TELLER: Teller = Teller {
    sentences: |fact, _| {
        sentence(fact)
            .or_else(|| in_front_sentence(fact))
            .into_iter()
            .collect()
    },
    short: |fact, _| short(fact).or_else(|| in_front_short(fact)),
    rank: |kind, fact| match (kind, fact) {
        (Kind::GrowingPool, Fact::GrowingPool { .. }) => Some(0),
        // After the limit's own evidence (its ceiling, its connections): what piles up in
        // front of it.
        (_, Fact::PoolGrewInFront { .. }) => Some(7),
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

/// The evidence sentence of a [`Fact::PoolGrewInFront`].
fn in_front_sentence(fact: &Fact) -> Option<String> {
    let Fact::PoolGrewInFront {
        pool,
        clients,
        threads,
        knee_clients,
        calls_at_largest,
        named_in_stacks,
    } = fact
    else {
        return None;
    };
    let named = match named_in_stacks {
        Some(dumped) => format!("from /proc; the runtime's stacks name its threads `{dumped}`"),
        None => "from /proc".to_string(),
    };
    let held = match (calls_at_largest, clients.last()) {
        (Some(calls), Some(largest)) => format!(
            "while the mock saw at most {calls} calls at once at {}",
            clients_words(*largest)
        ),
        _ => "while its threads at work stayed flat".to_string(),
    };
    Some(format!(
        "In front of the limit, pool `{pool}` ({named}) gave each request a thread of its own: \
         {}, on past {}, {held}. The requests past the limit wait there in threads, not in a \
         queue: the service's threads and their stacks grow with its callers, with nothing to \
         bound them, in front of a limit that serves no more.",
        by_step(clients, threads),
        clients_words(*knee_clients),
    ))
}

/// The key line of a [`Fact::PoolGrewInFront`].
fn in_front_short(fact: &Fact) -> Option<String> {
    let Fact::PoolGrewInFront {
        pool,
        clients,
        threads,
        ..
    } = fact
    else {
        return None;
    };
    Some(format!(
        "In front of it, pool `{pool}` grew a thread per waiting request: {}.",
        by_step(clients, threads)
    ))
}
