//! Caps on the connections a target accepts, read from its own connections: the kernel holds a
//! connection the target has not accepted in the listen queue, where no process holds it
//! (`crates/diagnose/src/place/connections.rs`, `accept_cap_seen`). Targets built after that
//! rule, not tuned on.
use crate::common;

use chokepoint_result::{Kind, PlaceKind, PlaceSource};
use common::*;
use std::process::Command;
use std::time::Duration;

/// tests/targets/go-limit-listener: net/http behind x/net's `netutil.LimitListener(l, 16)`, in
/// front of a 20 ms mock. Truth by hand (`wrk -t2 -c32 -d4s`, then `-c8`; see the closing note
/// of session 21): the mock's calls in flight stop at 16; the clients past 16 keep their
/// handshaken connections in the listen queue and are never answered. Swept as a user sweeps it
/// (adaptive, `--mock`): `connection-limit 16`, placed in the target's accept path with the 16
/// connections it held and the others waiting unaccepted; no knob named (the connections do not
/// say which cap it was).
#[test]
fn a_go_listener_capped_at_16_connections_is_a_connection_limit_in_its_accept_path() {
    assert!(
        toolchain_present("go", "version"),
        "go is needed (.ci/run installs it)"
    );
    let _one = one_at_a_time();
    let mock = mock_with_delay_of(Duration::from_millis(20));
    let mut command = Command::new(build_go_target("go-limit-listener"));
    command.args(["-port", "0", "-limit", "16", "-downstream", &mock.url()]);
    let target = Target::launch("go-limit-listener", command);
    let name = "go-limit-listener";
    let result = sweep_target(&target, None, ADAPTIVE_STEP, 64, Some(&mock));
    drop(target);

    assert_eq!(
        most_downstream_in_flight(&result),
        Some(16),
        "{name}: the truth, the mock's calls in flight at most"
    );
    for step in result.steps.iter().filter(|s| s.clients > 16) {
        assert_eq!(
            step.unanswered_clients,
            Some(step.clients - 16),
            "{name}: the clients past 16 are never answered, at {}",
            step.clients
        );
        let client_side = &step
            .connections
            .as_ref()
            .expect("its connections")
            .client_side;
        assert_eq!(client_side.most_served, 16, "{name} at {}", step.clients);
        assert!(
            client_side.mean_unserved >= 0.8 * f64::from(step.clients - 16),
            "{name} at {}: {client_side:?}",
            step.clients
        );
    }
    assert_finding(name, &result, Kind::ConnectionLimit, 16.0);
    let place = the_place(name, &result);
    println!("{name}: {place:?}");
    assert_eq!(place.kind, Some(PlaceKind::AcceptCap), "{name}");
    assert_eq!(place.source, Some(PlaceSource::Connections), "{name}");
    assert_eq!(place.size, Some(16.0), "{name}");
    assert_eq!(place.setting, None, "{name}: no knob");
    let diagnosis = result.diagnosis.as_ref().expect("a diagnosis");
    assert!(
        diagnosis
            .evidence
            .iter()
            .any(|s| s.contains("the target's accept path on port")
                && s.contains("it held 16 client connections at once")),
        "{name}: {:?}",
        diagnosis.evidence
    );
}
