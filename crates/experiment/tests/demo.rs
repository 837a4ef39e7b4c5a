//! `chokepoint demo` end to end: every scenario's kind and limit (this is the main job).
use chokepoint_experiment::demo::{run_demo, DemoOptions};
use tokio_util::sync::CancellationToken;

#[test]
fn the_demo_finds_every_scenario() {
    let mut table = Vec::new();
    let result = run_demo(
        &DemoOptions::default(),
        CancellationToken::new(),
        &mut |s, r| {
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
