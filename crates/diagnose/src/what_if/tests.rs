//! The what-if's decisions and words on tables of findings and emulated steps.
use super::*;
use chokepoint_result::{CpuQuota, Finding, Place, Plateau, Setting, Step, SweepContext, Words};

/// A blocking pool of `n` behind a mock of `delay_ms`, its plateau at `plateau_rps`.
fn pool_finding(n: f64, plateau_rps: f64) -> Diagnosis {
    let mut finding = Finding::bare(Kind::BlockingPool, vec![]);
    finding.limit = Some(n);
    finding.plateau = Some(Plateau {
        throughput_rps: plateau_rps,
        from_clients: 20,
        clients: vec![20, 40, 80],
    });
    let mut d = Diagnosis::new(finding, Words::default());
    d.place = Some(Place {
        kind: Some(PlaceKind::ThreadPool),
        pool: Some("actor-pool".into()),
        size: Some(n),
        held: Some(n),
        clients: 40,
        ..Place::default()
    });
    d
}

fn mock_context(delay_ms: f64) -> SweepContext {
    SweepContext {
        downstream_delay_ms: Some(delay_ms),
        mock_present: true,
        cores: Some(2),
        max_clients: 1000,
        ..SweepContext::default()
    }
}

fn step(clients: u32, ok_rps: f64, target_cpu_pct: Option<f64>) -> Step {
    let mut step = Step::default();
    step.load.clients = clients;
    step.load.ok_throughput_rps = ok_rps;
    step.load.throughput_rps = ok_rps;
    step.target_cpu_pct = target_cpu_pct;
    step
}

fn emulated(clients: u32, ok_rps: f64, cpu: Option<f64>, in_flight: u64) -> EmulatedStep {
    EmulatedStep {
        clients,
        ok_throughput_rps: ok_rps,
        p50_ms: 100.0,
        error_rate: 0.0,
        target_cpu_pct: cpu,
        downstream_max_in_flight: Some(in_flight),
    }
}

fn emulation(plan: Plan) -> Emulation {
    match plan {
        Plan::Emulate(e) => e,
        other => panic!("no emulation: {other:?}"),
    }
}

#[test]
fn sizes_read_as_a_pool_or_a_factor() {
    for (text, size) in [
        ("40", Ok(PoolSize::Pool(40))),
        (" 2x", Ok(PoolSize::Times(2.0))),
        ("1.5X", Ok(PoolSize::Times(1.5))),
    ] {
        assert_eq!(text.parse::<PoolSize>(), size, "{text}");
    }
    for bad in ["0", "-3", "forty", "0x", "x", "-2x", "2.5", "NaNx"] {
        assert!(bad.parse::<PoolSize>().is_err(), "{bad} must be refused");
    }
}

#[test]
fn the_emulated_delay_makes_the_pool_of_n_serve_as_one_of_m() {
    // Rows: pool found, plateau req/s, mock delay ms, M asked → emulated delay ms, clients.
    // A hold of exactly the delay: d × N / M.
    // A hold 7 ms over a 100 ms delay: still d × N / M (the hold scales with the delay).
    // A smaller pool: the delay grows, d × 20/10.
    for (n, plateau, delay, m, emulated_delay, clients) in [
        (20.0, 200.0, 100.0, 40, 50.0, vec![60, 80]),
        (20.0, 1000.0 * 20.0 / 107.0, 100.0, 40, 50.0, vec![60, 80]),
        (20.0, 200.0, 100.0, 10, 200.0, vec![15, 20]),
        (6.0, 120.0, 50.0, 13, 50.0 * 6.0 / 13.0, vec![20, 26]),
    ] {
        let d = pool_finding(n, plateau);
        let e = emulation(plan(
            &d,
            &mock_context(delay),
            PoolSize::Pool(m),
            Some(delay),
            1000,
        ));
        assert!((e.emulated_delay_ms - emulated_delay).abs() < 1e-6, "{e:?}");
        assert_eq!(e.clients, clients);
        assert_eq!((e.from_pool, e.pool), (n as u32, m));
    }
    // 2x of a pool of 20 is 40; the clients stop at --max-clients.
    let d = pool_finding(20.0, 200.0);
    let e = emulation(plan(
        &d,
        &mock_context(100.0),
        PoolSize::Times(2.0),
        Some(100.0),
        70,
    ));
    assert_eq!((e.pool, e.clients.clone()), (40, vec![60, 70]));
}

#[test]
fn no_emulation_without_a_pool_held_for_the_mocks_delay() {
    let pool = pool_finding(20.0, 200.0);
    let mut cpu = pool.clone();
    cpu.finding.kind = Kind::CpuBound;
    let no_mock = SweepContext {
        mock_present: false,
        downstream_delay_ms: None,
        ..mock_context(100.0)
    };
    // Rows: finding, context, the mock's delay now, M → why there is only the bound.
    // The hold of 20 / 100 req/s is 200 ms: twice the 100 ms delay, something else holds too.
    // A stub's own 30 ms delay on top of the global 100 ms: the context says 30.
    // M of 2000 over a hold of 100 ms: a delay of 1 ms × ... below a millisecond.
    for (d, context, now, m, why) in [
        (pool.clone(), no_mock, None, 40, NotEmulated::NoMock),
        (
            cpu,
            mock_context(100.0),
            Some(100.0),
            40,
            NotEmulated::NotAPool,
        ),
        (
            pool_finding(20.0, 100.0),
            mock_context(100.0),
            Some(100.0),
            40,
            NotEmulated::NotTheMocksDelay,
        ),
        (
            pool.clone(),
            mock_context(30.0),
            Some(100.0),
            40,
            NotEmulated::NotTheMocksDelay,
        ),
        (
            pool.clone(),
            mock_context(100.0),
            None,
            40,
            NotEmulated::NotTheMocksDelay,
        ),
        (
            pool.clone(),
            mock_context(100.0),
            Some(100.0),
            2500,
            NotEmulated::DelayTooShort,
        ),
    ] {
        match plan(&d, &context, PoolSize::Pool(m), now, 10_000) {
            Plan::BoundOnly { why: got, .. } => assert_eq!(got, why),
            other => panic!("{why:?}: {other:?}"),
        }
    }
}

#[test]
fn the_same_pool_or_too_few_clients_is_refused_with_a_note() {
    let d = pool_finding(20.0, 200.0);
    let context = mock_context(100.0);
    assert_eq!(
        plan(&d, &context, PoolSize::Pool(20), Some(100.0), 1000),
        Plan::Refuse(Refusal::SamePool(20))
    );
    assert_eq!(
        plan(&d, &context, PoolSize::Times(1.0), Some(100.0), 1000),
        Plan::Refuse(Refusal::SamePool(20))
    );
    let refusal = plan(&d, &context, PoolSize::Pool(40), Some(100.0), 40);
    assert_eq!(
        refusal,
        Plan::Refuse(Refusal::TooFewClients {
            pool: 40,
            max_clients: 40
        })
    );
    assert!(!refusal_text(refusal).contains('\n'));
}

fn refusal_text(plan: Plan) -> String {
    match plan {
        Plan::Refuse(r) => r.to_string(),
        other => panic!("{other:?}"),
    }
}

#[test]
fn the_bound_is_usable_cores_over_cpu_per_request_at_the_plateau() {
    let d = pool_finding(20.0, 200.0);
    // 10% of 2 cores at 200 req/s: 1 ms of CPU a request, 2 cores allow 2,000 req/s. The
    // step at 10 clients is off the plateau and does not count.
    let steps = [
        step(10, 100.0, Some(50.0)),
        step(20, 200.0, Some(10.0)),
        step(40, 200.0, Some(10.0)),
        step(80, 200.0, Some(12.0)),
    ];
    let bound = cpu_bound(&d, &steps, &mock_context(100.0)).expect("a bound");
    assert!((bound.cpu_ms_per_request - 1.0).abs() < 1e-9, "{bound:?}");
    assert_eq!(bound.usable_cores, 2.0);
    assert!((bound.bound_rps - 2000.0).abs() < 1e-6);
    // A quota of half a core: the bound is the quota's.
    let mut quota = steps.clone();
    for s in &mut quota {
        s.cpu_quota = Some(CpuQuota {
            cores: 0.5,
            ..CpuQuota::default()
        });
    }
    let bound = cpu_bound(&d, &quota, &mock_context(100.0)).expect("a bound");
    assert!((bound.bound_rps - 500.0).abs() < 1e-6, "{bound:?}");
    // Not observed: no bound.
    let unobserved = [step(20, 200.0, None), step(40, 200.0, None)];
    assert_eq!(cpu_bound(&d, &unobserved, &mock_context(100.0)), None);
}

fn forty() -> Emulation {
    emulation(plan(
        &pool_finding(20.0, 200.0),
        &mock_context(100.0),
        PoolSize::Pool(40),
        Some(100.0),
        1000,
    ))
}

const BOUND: CpuBound = CpuBound {
    cpu_ms_per_request: 0.95,
    usable_cores: 2.0,
    bound_rps: 2105.0,
};

#[test]
fn the_emulated_steps_give_the_prediction_and_what_stops_it_next() {
    let name = Some("actor-pool".to_string());
    // The pool of 40 stood (392 of 400 req/s): the CPU stops it past the bound.
    let stood = judge(
        &forty(),
        vec![
            emulated(60, 390.0, Some(20.0), 20),
            emulated(80, 394.0, Some(20.0), 20),
        ],
        Some(BOUND),
        Some(2),
        name.clone(),
    );
    assert_eq!(stood.predicted_rps, Some(392.0));
    assert_eq!(stood.pool_rps, Some(400.0));
    assert!(matches!(
        stood.next_limit,
        Some(NextLimit::Cpu {
            stopped_the_emulation: false,
            ..
        })
    ));
    assert_eq!(
        stood.summary,
        "With `actor-pool` at 40 the service would serve ~392 req/s (measured by emulation: the mock's 100 ms delay cut to 50 ms at 60 and 80 clients); past ~2,100 req/s its CPU stops it (0.95 ms of CPU a request on 2 cores)."
    );
    // Rows: emulated steps → what stopped them short of 400 req/s.
    // The CPU at 1.8 of 2 cores. 14 calls at the mock where the pool holds 20. Errors.
    let cases: [(Vec<EmulatedStep>, &str); 4] = [
        (
            vec![emulated(60, 300.0, Some(90.0), 20)],
            "short of the ~400 req/s a pool of 40 allows: its CPU stops it first (1.8 of 2 cores busy).",
        ),
        (
            vec![emulated(60, 280.0, Some(30.0), 14)],
            "no more than 14 calls reached the mock at once, so another pool or a connection cap of ~14 stops it first.",
        ),
        (
            vec![EmulatedStep {
                error_rate: 0.2,
                ..emulated(60, 280.0, Some(30.0), 20)
            }],
            ": 20% of its requests failed.",
        ),
        (
            vec![emulated(60, 280.0, Some(30.0), 20)],
            "and nothing measured says what stops it first.",
        ),
    ];
    for (steps, ends) in cases {
        let what_if = judge(&forty(), steps, Some(BOUND), Some(2), name.clone());
        assert!(what_if.summary.ends_with(ends), "{}", what_if.summary);
        assert!(what_if.summary.contains("~280 req/s") || what_if.summary.contains("~300 req/s"));
    }
}

#[test]
fn without_emulation_only_the_bound_is_given_and_said_so() {
    let what_if = bound_only(Some(40), None, NotEmulated::NotAPool, Some(BOUND), None);
    assert_eq!(what_if.measured_by, MeasuredBy::Bound);
    assert_eq!(what_if.predicted_rps, Some(2105.0));
    assert_eq!(
        what_if.summary,
        "No what-if of the pool at 40 by emulation: the limit found is not a pool held for the mock's delay; only the bound: its CPU allows at most ~2,100 req/s (0.95 ms of CPU a request on 2 cores)."
    );
    let blind = bound_only(Some(40), Some(20), NotEmulated::NoMock, None, None);
    assert_eq!(blind.predicted_rps, None);
    assert!(
        blind
            .summary
            .ends_with("the target's CPU was not observed."),
        "{}",
        blind.summary
    );
    // Interrupted emulation: the bound stands in.
    let cut = judge(&forty(), vec![], Some(BOUND), Some(2), None);
    assert_eq!(
        (cut.measured_by, cut.predicted_rps),
        (MeasuredBy::Bound, Some(2105.0))
    );
}

#[test]
fn throughputs_read_with_two_figures_past_a_thousand() {
    for (rps, text) in [
        (19.64, "19.6"),
        (392.4, "392"),
        (2105.0, "2,100"),
        (28_470.0, "28,000"),
        (1_234_567.0, "1,200,000"),
    ] {
        assert_eq!(words::about(rps), text);
    }
}

#[test]
fn the_pool_found_is_the_threads_seen_else_the_limit() {
    let mut d = pool_finding(20.0, 200.0);
    d.finding.limit = Some(19.4);
    assert_eq!(pool_found(&d), Some(20));
    d.place = None;
    assert_eq!(pool_found(&d), Some(19));
    let mut named = pool_finding(20.0, 200.0);
    assert_eq!(pool_name(&named).as_deref(), Some("actor-pool"));
    named.place.as_mut().unwrap().setting = Some(Setting {
        setting: "server.tomcat.threads.max".into(),
        ..Setting::default()
    });
    assert_eq!(
        pool_name(&named).as_deref(),
        Some("server.tomcat.threads.max")
    );
}
