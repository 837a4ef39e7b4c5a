//! A proxy's configured cap on its upstream as the place: HAProxy's `maxconn` (a queue) and
//! nginx's `max_conns=` (a shed), whose event loops hold no thread in the wait. The cap is read
//! from the configuration; the steps say the proxy's connections went to that server's port and
//! the clients passed the cap. Sized as a proxy in front of a pool of any size: 8, 100, 1000.
use super::shapes::*;
use super::*;
use chokepoint_result::{FrontCap, UpstreamCap};

/// The place facts with the proxies' caps known: `upstream` on their servers, `front` on the
/// client connections they accept.
fn facts_with(
    steps: &[Step],
    finding: &Finding,
    upstream: &[UpstreamCap],
    front: &[FrontCap],
) -> Vec<Fact> {
    let known = Known {
        upstream_caps: upstream,
        front_caps: front,
        ..known()
    };
    super::super::facts(steps, finding, &known)
}

fn facts_with_caps(steps: &[Step], finding: &Finding, caps: &[UpstreamCap]) -> Vec<Fact> {
    facts_with(steps, finding, caps, &[])
}

fn cap(program: &str, port: u16, n: u32) -> UpstreamCap {
    UpstreamCap {
        program: program.into(),
        address: format!("127.0.0.1:{port}"),
        port: Some(port),
        cap: n,
        directive: format!("server s1 127.0.0.1:{port} maxconn {n}"),
    }
}

/// The proxy at `clients`: its threads in `epoll_wait` (no wait /proc counts), `cap` calls to
/// the upstream on port 9090 at most.
fn proxy_at(clients: u32, threads: f64, cap: u32) -> Step {
    let pools = vec![proc_pool("haproxy", threads, 0.0, 0.0, 0.0)];
    step(clients, pools, None, Some(clients.min(cap)))
}

fn sweep(cap: u32) -> (Vec<Step>, Finding) {
    let steps = [1, cap / 2, cap, 2 * cap, 4 * cap]
        .into_iter()
        .filter(|c| *c >= 1)
        .map(|c| proxy_at(c, 2.0, cap))
        .collect();
    (steps, finding(Kind::BlockingPool, f64::from(cap), cap))
}

#[test]
fn a_proxys_configured_cap_on_the_upstream_it_called_is_the_place() {
    for n in [8, 100, 1000] {
        let (steps, finding) = sweep(n);
        let facts = facts_with_caps(&steps, &finding, &[cap("haproxy", 9090, n)]);
        let [Fact::Place { place }] = facts.as_slice() else {
            panic!("{n}: expected one place, got {facts:?}");
        };
        assert_eq!(place.source, Some(PlaceSource::Config));
        assert_eq!(
            (place.pool.as_deref(), place.size),
            (Some("haproxy"), Some(f64::from(n)))
        );
        let setting = place.setting.as_ref().expect("HAProxy's maxconn");
        assert!(setting.setting.starts_with("maxconn N"), "{setting:?}");
        let said = crate::describe::place::sentence(&facts[0], &finding).unwrap();
        println!("{said}");
        assert!(
            said.contains(&format!("`server s1 127.0.0.1:9090 maxconn {n}`")),
            "{said}"
        );
    }
}

#[test]
fn a_cap_elsewhere_or_of_another_size_is_not_the_place() {
    for n in [8, 100, 1000] {
        let (steps, finding) = sweep(n);
        for other in [cap("haproxy", 9091, n), cap("haproxy", 9090, 3 * n)] {
            let facts = facts_with_caps(&steps, &finding, std::slice::from_ref(&other));
            assert!(
                matches!(facts.as_slice(), [Fact::PlaceUnclear { .. }]),
                "{n}, {other:?}: {facts:?}"
            );
        }
    }
}

#[test]
fn a_busy_proxy_is_never_named_by_its_upstream_cap() {
    // HAProxy's threads running flat out: the CPU's place, whose busiest pool is `haproxy`,
    // names no upstream-cap entry by the process's name.
    assert_eq!(Catalogue::built_in().setting_for("haproxy"), None);
    assert!(Catalogue::built_in().upstream_cap_for("haproxy").is_some());
}

fn facts_with_front_caps(steps: &[Step], finding: &Finding, caps: &[FrontCap]) -> Vec<Fact> {
    facts_with(steps, finding, &[], caps)
}

fn front_cap(port: u16, n: u32) -> FrontCap {
    FrontCap {
        program: "haproxy".into(),
        port,
        cap: n,
        directive: format!("frontend front: maxconn {n}"),
    }
}

/// HAProxy serving `n` client connections on port 8080 (the swept one) before a mock on 9090:
/// its connections to the mock stop at `n`, the clients past `n` unanswered.
fn front_capped(n: u32) -> (Vec<Step>, Finding) {
    let steps: Vec<Step> = [n / 2, n, 2 * n, 4 * n]
        .into_iter()
        .map(|c| proxy_at(c, 2.0, n))
        .collect();
    let mut found = finding(Kind::ConnectionLimit, f64::from(n), 2 * n);
    found.facts.push(Fact::ClientsUnanswered {
        clients: vec![2 * n, 4 * n],
        unanswered: vec![n, 3 * n],
        in_service: vec![f64::from(n), f64::from(n)],
        waited_s: 7.0,
    });
    (steps, found)
}

#[test]
fn a_frontends_maxconn_on_the_swept_port_is_the_place_of_clients_left_unanswered() {
    for n in [16, 100, 1000] {
        let (steps, found) = front_capped(n);
        let facts = facts_with_front_caps(&steps, &found, &[front_cap(8080, n)]);
        let [Fact::Place { place }] = facts.as_slice() else {
            panic!("{n}: expected one place, got {facts:?}");
        };
        assert_eq!(place.kind, Some(PlaceKind::AcceptCap));
        assert_eq!(place.source, Some(PlaceSource::Config));
        assert_eq!(place.size, Some(f64::from(n)));
        let setting = place.setting.as_ref().expect("HAProxy's frontend maxconn");
        assert!(
            setting.setting.starts_with("maxconn N in the frontend"),
            "{setting:?}"
        );
        let said = crate::describe::place::sentence(&facts[0], &found).unwrap();
        assert!(
            said.contains(&format!("`frontend front: maxconn {n}`")),
            "{said}"
        );

        // The cap on another port, or of another size: no place, and no connection pool to
        // the downstream either (its connections there are the cap's consequence).
        for other in [front_cap(8081, n), front_cap(8080, 3 * n)] {
            let facts = facts_with_front_caps(&steps, &found, std::slice::from_ref(&other));
            assert!(facts.is_empty(), "{n}, {other:?}: {facts:?}");
        }
        // The same connection-limit without unanswered clients (stalls) keeps its downstream
        // connections' place, and no front cap is looked at.
        let mut stalls = found.clone();
        stalls.facts.clear();
        let facts = facts_with_front_caps(&steps, &stalls, &[front_cap(8080, n)]);
        assert!(
            facts.iter().all(
                |f| !matches!(f, Fact::Place { place } if place.kind == Some(PlaceKind::AcceptCap))
            ),
            "{facts:?}"
        );
    }
}

#[test]
fn a_frontends_maxconn_is_never_named_by_the_proxys_name() {
    assert!(Catalogue::built_in().setting_for("haproxy").is_none());
    assert!(Catalogue::built_in().front_cap_for("haproxy").is_some());
}
