//! Node.js's libuv thread pool, built after the rules and the catalogue's libuv entry:
//! `tests/targets/node-dns-lookup`, a Node service that opens a new connection per call to a
//! downstream it knows by name, behind a resolver of its own that answers in 100 ms.
//!
//! Node resolves each connection's name with `dns.lookup`: the C library's getaddrinfo on
//! libuv's pool. libuv runs "slow I/O" (getaddrinfo, getnameinfo) on at most half its threads,
//! `(nthreads + 1) / 2` (`src/threadpool.c` `slow_work_thread_threshold` and
//! `src/unix/getaddrinfo.c`'s `UV__WORK_SLOW_IO`, libuv 6179e7af): 2 of the default 4. Truth by
//! hand (`wrk` at 4 to 32 clients, the resolver at 100 ms and the mock at 50 ms): 19.0 req/s
//! (2 lookups of ~105 ms at once), the mock's calls 1.0 in flight on average and never more
//! than 2; `/proc/PID/task/*/syscall` showed 2 of node's 11 threads in `poll` (the lookups),
//! every thread named `node` (libuv names its workers `libuv-worker` from 1.50; Node 20 has
//! 1.46).
//!
//! What chokepoint says: a pool, sized as one held for the whole request (19.6 req/s × 155 ms =
//! 3), the downstream nearly idle beside it, and no place: the 2 threads of `node` in a network
//! wait do not match 3, and nothing tells them from Node's other threads. The true pool (2
//! threads held ~102 ms of each 155 ms request) is not named: a shortfall, asserted as it is,
//! so that a rule that names it changes this test on purpose.
//!
//! Needs node, python3 and root (`unshare --mount`, for a resolv.conf of the target's own):
//! `.ci/run` has them; a missing one fails the test.

use crate::common;
use crate::place::{require, sweep_from_proc};
use chokepoint_result::{Fact, Kind, PlaceSource, PlaceUnclearWhy, WaitKind};
use common::*;
use std::process::Command;
use std::time::Duration;

#[test]
fn nodes_dns_lookups_on_half_of_libuvs_pool_are_a_pool_the_finding_sees_and_does_not_name() {
    require("node", "--version");
    require("python3", "--version");
    require("unshare", "--version");
    let _turn = beside_two_others();
    let mock = mock_with_delay_of(Duration::from_millis(50));
    let mut command = Command::new("bash");
    command
        .arg(targets_dir().join("node-dns-lookup/run.sh"))
        .args(["--port", "0", "--downstream-port"])
        .arg(mock.addr().port().to_string())
        // Its own loopback address for the resolver, so no other test's port 53 is in the way.
        .env(
            "DNS_ADDRESS",
            format!("127.0.53.{}", 1 + std::process::id() % 250),
        )
        .env("DNS_DELAY", "100");
    let name = "node-dns-lookup";
    let target = Target::launch(name, command);
    let result = sweep_from_proc(name, &target.url(), vec![1, 2, 8, 16], &mock);
    drop(target);
    let in_flight = most_downstream_in_flight(&result).expect("the mock's count");
    assert!(
        in_flight <= 2,
        "{name}: the mock is not the gate: {in_flight}"
    );
    let diagnosis = assert_kind(name, &result, Kind::BlockingPool);
    let limit = diagnosis.limit().expect("a size");
    assert!(
        (2.5..=3.6).contains(&limit),
        "{name}: {limit}: 19-20 req/s × 155 ms held for the whole request"
    );
    assert_eq!(
        diagnosis.place, None,
        "{name}: nothing names the lookups' pool"
    );
    assert!(
        diagnosis
            .evidence
            .iter()
            .any(|s| s.contains("The pool is held by something other than the downstream call")),
        "{name}: {:?}",
        diagnosis.evidence
    );
    let seen = diagnosis
        .facts()
        .iter()
        .find_map(|f| match f {
            Fact::PlaceUnclear { why, seen, .. } => Some((*why, seen.clone())),
            _ => None,
        })
        .unwrap_or_else(|| panic!("{name}: a place-unclear fact: {:?}", diagnosis.evidence));
    assert_eq!(seen.0, PlaceUnclearWhy::NoneMatch, "{name}");
    let node = seen
        .1
        .iter()
        .find(|pool| pool.pool == "node")
        .unwrap_or_else(|| panic!("{name}: node's threads among those seen: {:?}", seen.1));
    assert_eq!(
        (node.waiting, node.source),
        (Some(WaitKind::Downstream), Some(PlaceSource::Proc))
    );
    assert!(
        (1.5..=2.5).contains(&node.held),
        "{name}: the 2 lookups at once: {}",
        node.held
    );
}
