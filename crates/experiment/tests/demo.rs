//! `chokepoint demo` end to end: every scenario's kind and limit (this is the main job).
use chokepoint_experiment::demo::{run_demo, DemoEvent, DemoOptions};
use tokio_util::sync::CancellationToken;

#[test]
fn the_demo_finds_every_scenario() {
    let mut table = Vec::new();
    let result = run_demo(
        &DemoOptions::default(),
        CancellationToken::new(),
        &mut |event| {
            let DemoEvent::Scenario(s, r) = event else {
                return;
            };
            let steps: Vec<_> = r
                .steps
                .iter()
                .map(|s| (s.clients, s.ok_throughput_rps.round() as u64))
                .collect();
            table.push(format!(
                "{}: {} {:?} (expected {} {:?}) {steps:?} {}",
                s.name, s.kind, s.found_limit, s.expected_kind, s.expected_limit, s.summary
            ));
        },
    )
    .unwrap();
    assert_eq!(result.scenarios.len(), 8);
    let wrong: Vec<_> = result.scenarios.iter().filter(|s| !s.ok).collect();
    assert!(wrong.is_empty(), "wrong: {wrong:#?}\n{}", table.join("\n"));
}

#[test]
fn the_leaky_route_shows_its_connections_to_the_downstream_growing_to_the_mocks_cap() {
    let mut leaky = None;
    run_demo(
        &DemoOptions {
            only: vec!["leaky".to_string()],
            ..DemoOptions::default()
        },
        CancellationToken::new(),
        &mut |event| {
            if let DemoEvent::Scenario(_, result) = event {
                leaky = Some(result.clone());
            }
        },
    )
    .unwrap();
    let result = leaky.expect("the leaky scenario ran");
    let cap = result
        .context
        .mock_max_connections
        .expect("the capped mock says its cap");
    // Connections the target held to the mock, per step, from /proc (the sweep observed the
    // in-process service's threads and sockets).
    let most: Vec<(u32, u32)> = result
        .steps
        .iter()
        .map(|step| {
            let connections = step
                .connections
                .as_ref()
                .unwrap_or_else(|| panic!("{} clients: no connections observed", step.clients));
            let mock = connections
                .downstream
                .iter()
                .find(|peer| peer.mock)
                .unwrap_or_else(|| {
                    panic!("{} clients: the mock's port is not named", step.clients)
                });
            (step.clients, mock.counts.most_served)
        })
        .collect();
    println!("connections the mock served, by clients: {most:?}");
    let diagnosis = result.diagnosis.as_ref().expect("a diagnosis");
    for sentence in &diagnosis.evidence {
        println!("evidence: {sentence}");
    }
    // The route leaks a connection per request: they pile up to the cap. "Served" is read from
    // the mock's ends of the connections (accepted, request read); a connection caught between
    // its connect and its request's write reads as served in that one sample, so the most may
    // pass the cap by a connection or two, never by more.
    let served_most = most.iter().map(|m| u64::from(m.1)).max().unwrap_or(0);
    assert!(
        (cap..=cap + 2).contains(&served_most),
        "the connections the mock served grow to its cap of {cap}: {most:?}"
    );
    assert!(
        diagnosis.evidence.iter().any(|s| s
            .contains("Connections from the target to the downstream (the mock, port")
            && s.contains(&format!(
                "the mock served never more than {served_most} at once"
            ))),
        "the evidence names the cap: {:?}",
        diagnosis.evidence
    );
}
