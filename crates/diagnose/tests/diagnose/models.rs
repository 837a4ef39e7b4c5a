//! Synthetic sweeps of model services, measured with deterministic noise: each kind of limit,
//! its size, and the numbers its finding must say.

use crate::common;
use chokepoint_diagnose::usl_fit;
use chokepoint_result::{
    CeilingReading, Fact, FanOutShape, Kind, Model, Step, StubStats, SweepContext,
};
use common::*;

const DOUBLING: [u32; 9] = [1, 2, 4, 8, 16, 32, 64, 128, 256];

#[test]
fn pools_of_1_8_16_64_are_found_with_and_without_a_mock() {
    for (seed, pool) in [1u32, 8, 16, 64].into_iter().enumerate() {
        let mut noise = Noise::new(seed as u64);
        let steps: Vec<Step> = DOUBLING
            .iter()
            .map(|&c| pool_step(pool, 50.0, 2.0, c, &mut noise))
            .collect();
        let d = diagnosed(&steps, &mock_context(50.0));
        assert_eq!(d.kind, Kind::BlockingPool, "pool {pool}: {d:#?}");
        assert_near(d.limit.unwrap(), pool as f64, 0.1);
        let knee = d.knee_clients.unwrap();
        assert!(knee > pool && knee <= 2 * pool, "pool {pool}: knee {knee}");
        assert_eq!(d.better_model, Some(Model::BoundedPool), "pool {pool}");

        // Client side only: Little's law with the base latency alone.
        let bare: Vec<Step> = steps
            .iter()
            .cloned()
            .map(|mut s| {
                s.downstream = None;
                s.downstream_inflight = None;
                s
            })
            .collect();
        let d = diagnosed(&bare, &bare_context());
        assert_eq!(d.kind, Kind::BlockingPool, "pool {pool} bare: {d:#?}");
        assert_near(d.limit.unwrap(), pool as f64, 0.1);
        assert!(has(&d, |f| *f == Fact::NoMock));
        assert!(has(&d, |f| *f == Fact::TargetNotObserved));
    }
}

/// A target doing `work_ms` of CPU per request on `cores` cores; the mock is there but idle.
fn cpu_steps(cores: u32, work_ms: f64, observed: bool) -> Vec<Step> {
    let mut noise = Noise::new(7);
    DOUBLING[..7]
        .iter()
        .map(|&c| {
            let x = noise.jitter(c.min(cores) as f64 * 1000.0 / work_ms, 0.03);
            let mut s = with_mock(step(c, x, c as f64 / x * 1000.0), 50.0, 0.0, 0);
            if observed {
                s.target_cpu_pct = Some((c.min(cores) as f64 / cores as f64 * 96.0).min(96.0));
            }
            s.generator_cpu_pct = 3.0;
            s
        })
        .collect()
}

#[test]
fn a_cpu_bound_target_with_its_cpu_observed() {
    let context = SweepContext {
        target_observed: true,
        ..mock_context(50.0)
    };
    let d = diagnosed(&cpu_steps(2, 10.0, true), &context);
    assert_eq!(d.kind, Kind::CpuBound, "{d:#?}");
    let cpu = facts(&d, |f| match f {
        Fact::CpuSaturated { target_cpu_pct, .. } => Some(target_cpu_pct.round()),
        _ => None,
    });
    assert_eq!(cpu, [96.0], "{d:#?}");
    // Two cores busy: about 2 requests in service at once.
    assert_near(d.limit.unwrap(), 2.0, 0.1);
}

#[test]
fn a_cpu_bound_target_unobserved_is_told_by_the_idle_mock() {
    let d = diagnosed(&cpu_steps(2, 10.0, false), &mock_context(50.0));
    assert_eq!(d.kind, Kind::CpuBound, "{d:#?}");
    // Not the CPU's figures (unobserved): the idle downstream decides.
    assert!(!has(&d, |f| matches!(
        f,
        Fact::CpuSaturated { .. } | Fact::CpuPerRequest { .. }
    )));
    let calls = facts(&d, |f| match f {
        Fact::DownstreamIdle {
            calls_per_request, ..
        } => Some(*calls_per_request),
        _ => None,
    });
    assert!(calls.len() == 1 && calls[0] < 0.005, "{calls:?}");
}

#[test]
fn a_plateau_without_mock_or_observer_is_a_pool_with_the_evidence_missing() {
    let mut steps = cpu_steps(2, 10.0, false);
    for s in &mut steps {
        s.downstream = None;
        s.downstream_inflight = None;
    }
    let d = diagnosed(&steps, &bare_context());
    assert_eq!(d.kind, Kind::BlockingPool);
    assert!(has(&d, |f| *f == Fact::TargetNotObserved));
}

#[test]
fn an_observed_idle_cpu_keeps_a_blocking_pool() {
    let context = SweepContext {
        target_observed: true,
        ..mock_context(50.0)
    };
    let mut noise = Noise::new(3);
    let steps: Vec<Step> = DOUBLING[..7]
        .iter()
        .map(|&c| {
            let mut s = pool_step(16, 50.0, 1.0, c, &mut noise);
            s.target_cpu_pct = Some(4.0);
            s
        })
        .collect();
    let d = diagnosed(&steps, &context);
    assert_eq!(d.kind, Kind::BlockingPool, "{d:#?}");
    assert_eq!(d.limit, Some(16.0));
    assert!(has(&d, |f| matches!(f, Fact::CpuNotLimit { .. })));
}

#[test]
fn periodic_stalls_with_the_mock_at_its_connection_cap_are_a_connection_limit() {
    let context = SweepContext {
        mock_max_connections: Some(50),
        mock_keepalive_timeout_ms: Some(1000),
        ..mock_context(5.0)
    };
    let steps: Vec<Step> = [1u32, 2, 4, 8, 16]
        .iter()
        .map(|&c| {
            // Bursts of 50 requests, then 0.5 s with nothing until idle connections close.
            let mut s = with_mock(step(c, 50.0, c as f64 * 20.0), 5.0, 1.0, c.min(50) as u64);
            s.timeline = stalling_timeline(10.0, 1.0, 0.5, 10);
            if let Some(ds) = s.downstream.as_mut() {
                ds.max_connections_open = 50;
            }
            s
        })
        .collect();
    let d = diagnosed(&steps, &context);
    assert_eq!(d.kind, Kind::ConnectionLimit, "{d:#?}");
    assert_eq!(d.limit, Some(50.0));
    let stalls = facts(&d, |f| match f {
        Fact::Stalls {
            count, period_s, ..
        } => Some((*count, (period_s * 10.0).round() / 10.0)),
        _ => None,
    });
    assert_eq!(stalls, [(10, 1.0)], "{d:#?}");
    assert!(has(&d, |f| matches!(
        f,
        Fact::MockConnectionCap { cap, .. } if *cap == 50.0
    )));
}

#[test]
fn stalls_without_the_mock_at_its_cap_are_not_a_connection_limit() {
    let context = SweepContext {
        mock_max_connections: Some(500),
        ..mock_context(5.0)
    };
    let steps: Vec<Step> = [1u32, 2, 4, 8]
        .iter()
        .map(|&c| {
            let mut s = with_mock(step(c, c as f64 * 190.0, 5.2), 5.0, 1.0, c as u64);
            s.timeline = stalling_timeline(10.0, 1.0, 0.5, 10);
            s
        })
        .collect();
    let d = diagnosed(&steps, &context);
    assert_ne!(d.kind, Kind::ConnectionLimit, "{d:#?}");
}

#[test]
fn a_pool_in_synchronised_waves_is_not_taken_for_stalls() {
    // Pool of 20 at a fixed 1 s delay: all 20 finish together, every second; the 0.9 s gaps
    // are the delay, not stalls.
    let mut noise = Noise::new(11);
    let steps: Vec<Step> = [1u32, 5, 20, 40, 100]
        .iter()
        .map(|&c| {
            let mut s = pool_step(20, 1000.0, 10.0, c, &mut noise);
            s.timeline = stalling_timeline(10.0, 1.0, 0.9, c.min(20) as u64);
            s
        })
        .collect();
    let d = diagnosed(&steps, &mock_context(1000.0));
    assert_eq!(d.kind, Kind::BlockingPool, "{d:#?}");
    assert_eq!(d.limit, Some(20.0));
}

/// A server serving 30 at a time for 50 ms; excess requests get a 503 in 2 ms.
fn shedding_steps() -> Vec<Step> {
    let mut noise = Noise::new(5);
    DOUBLING[..8]
        .iter()
        .map(|&c| {
            let ok_x = noise.jitter(c.min(30) as f64 / 0.05, 0.02);
            let s = step(c, ok_x, 50.0);
            let s = with_mock(s, 50.0, 1.0, c.min(30) as u64);
            if c > 30 {
                let mut s = with_errors(s, "http_503", (c - 30) as f64 / 0.002, 2.0);
                // The mock only sees the requests the target serves.
                let served = s.ok;
                if let Some(ds) = s.downstream.as_mut() {
                    ds.requests = served;
                    ds.stubs[0].requests = served;
                }
                s
            } else {
                s
            }
        })
        .collect()
}

#[test]
fn a_shedding_target_is_error_bound_at_its_successful_plateau() {
    let d = diagnosed(&shedding_steps(), &mock_context(50.0));
    assert_eq!(d.kind, Kind::ErrorBound, "{d:#?}");
    assert_near(d.limit.unwrap(), 30.0, 0.1);
    assert_eq!(d.knee_clients, Some(32));
    // Sized at ~30 in flight, by the mock's ceiling or Little's law.
    assert!(has(&d, |f| match f {
        Fact::MockCeiling {
            max_in_flight,
            reading,
            ..
        } => *reading != CeilingReading::Disagrees && (max_in_flight - 30.0).abs() < 0.5,
        _ => false,
    }));
    // 503s, the most common failure, answered in 2.0 ms.
    let start = facts(&d, |f| match f {
        Fact::ErrorsStart {
            errors,
            error_p50_ms,
            ..
        } => Some((
            errors.iter().max_by_key(|e| e.1).map(|e| e.0.clone()),
            *error_p50_ms,
        )),
        _ => None,
    });
    assert_eq!(start, [(Some("http_503".to_string()), Some(2.0))], "{d:#?}");

    // Without a mock the limit comes from the ok plateau × base latency.
    let mut bare = shedding_steps();
    for s in &mut bare {
        s.downstream = None;
        s.downstream_inflight = None;
    }
    let d = diagnosed(&bare, &bare_context());
    assert_eq!(d.kind, Kind::ErrorBound);
    assert_near(d.limit.unwrap(), 30.0, 0.1);
}

#[test]
fn a_saturated_generator_makes_the_finding_about_the_generator() {
    let mut noise = Noise::new(9);
    let steps: Vec<Step> = DOUBLING[..8]
        .iter()
        .map(|&c| {
            // The target could go on; the generator tops out at 4000 req/s.
            let x = noise.jitter((c as f64 * 100.0).min(4000.0), 0.02);
            let mut s = step(c, x, c as f64 / x * 1000.0);
            s.generator_cpu_pct = (x / 4000.0 * 97.0).min(97.0);
            s
        })
        .collect();
    let d = diagnosed(&steps, &bare_context());
    assert_eq!(d.kind, Kind::GeneratorBound, "{d:#?}");
    assert_eq!(d.limit, None);
    assert!(has(&d, |f| matches!(
        f,
        Fact::GeneratorBound { generator_cpu_pct, .. } if *generator_cpu_pct > 90.0
    )));
}

#[test]
fn no_limit_up_to_200_clients() {
    let mut noise = Noise::new(13);
    let steps: Vec<Step> = [1u32, 2, 4, 8, 16, 32, 64, 128, 200]
        .iter()
        .map(|&c| {
            let x = noise.jitter(c as f64 * 4.9, 0.02);
            step(c, x, c as f64 / x * 1000.0)
        })
        .collect();
    let context = SweepContext {
        max_clients: 200,
        ..bare_context()
    };
    let d = diagnosed(&steps, &context);
    assert_eq!(d.kind, Kind::NoLimitFound, "{d:#?}");
    assert_eq!(d.limit, None);
    assert_eq!(d.knee_clients, None);
    // The summary's step: the largest, 200 clients at 9xx req/s.
    let last = facts(&d, |f| match f {
        Fact::Step {
            clients,
            ok_throughput_rps,
            ..
        } => Some((*clients, *ok_throughput_rps)),
        _ => None,
    });
    let (clients, x) = *last.last().unwrap();
    assert_eq!(clients, 200);
    assert!((900.0..1000.0).contains(&x), "{x}");
    assert!(has(&d, |f| *f == Fact::MaxClientsReached { max_clients: 200 }));
}

#[test]
fn one_noisy_step_before_the_knee_does_not_move_it() {
    let mut steps: Vec<Step> = DOUBLING[..8]
        .iter()
        .map(|&c| pool_step(64, 50.0, 2.0, c, &mut Noise::new(c as u64)))
        .collect();
    // 8 clients ran at 85% of ideal (a noisy step), every other step before 64 is fine.
    steps[3].ok_throughput_rps *= 0.85;
    let d = diagnosed(&steps, &mock_context(50.0));
    assert_eq!(d.kind, Kind::BlockingPool);
    assert_eq!(d.knee_clients, Some(128));
    assert_near(d.limit.unwrap(), 64.0, 0.1);
}

#[test]
fn zero_requests_and_zero_steps_stay_finite() {
    let d = diagnosed(&[], &bare_context());
    assert_eq!(d.kind, Kind::NoLimitFound);
    assert_eq!(d.facts, [Fact::NothingMeasured]);

    let mut empty = step(4, 0.0, 0.0);
    empty.ok_latency_ms = None;
    let steps = vec![step(1, 0.0, 0.0), empty, step(0, 5.0, 10.0)];
    let d = diagnosed(&steps, &mock_context(50.0));
    let json = serde_json::to_string(&d.clone().into_diagnosis()).expect("a diagnosis serialises");
    assert!(!json.contains("NaN"), "{json}");
    assert_eq!(d.kind, Kind::NoLimitFound);
    assert_eq!(d.limit, None);
    // Every step is one with no success and no failure either: nothing completed.
    assert!(d.facts.iter().all(|f| matches!(
        f,
        Fact::NoSuccess { errors, .. } if errors.is_empty()
    )));

    let failing = vec![
        with_errors(step(1, 0.0, 0.0), "connect_refused", 100.0, 1.0),
        with_errors(step(2, 0.0, 0.0), "connect_refused", 200.0, 1.0),
    ];
    let d = diagnosed(&failing, &bare_context());
    assert_eq!(d.kind, Kind::ErrorBound);
    assert_eq!(d.limit, None);
    let refused: u64 = facts(&d, |f| match f {
        Fact::NoSuccess { errors, .. } => errors.get("connect_refused").copied(),
        _ => None,
    })
    .iter()
    .sum();
    assert_eq!(refused, 3000);
}

fn usl_throughput(lambda: f64, sigma: f64, kappa: f64, n: f64) -> f64 {
    lambda * n / (1.0 + sigma * (n - 1.0) + kappa * n * (n - 1.0))
}

#[test]
fn usl_fit_recovers_its_parameters_from_exact_data() {
    let points: Vec<(f64, f64)> = [1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0]
        .iter()
        .map(|&n| (n, usl_throughput(100.0, 0.05, 0.002, n)))
        .collect();
    let fit = usl_fit(&points).unwrap();
    assert_near(fit.lambda, 100.0, 0.01);
    assert_near(fit.sigma, 0.05, 0.01);
    assert_near(fit.kappa, 0.002, 0.01);
    assert_near(fit.n_max.unwrap(), (0.95f64 / 0.002).sqrt(), 0.01);
    assert!(fit.r_squared > 0.9999);
    assert!(
        usl_fit(&points[..3]).is_none(),
        "3 client counts are too few"
    );
}

#[test]
fn retrograde_throughput_is_better_fitted_by_the_usl() {
    let mut noise = Noise::new(21);
    let steps: Vec<Step> = DOUBLING[..8]
        .iter()
        .map(|&c| {
            let x = noise.jitter(usl_throughput(100.0, 0.03, 0.001, c as f64), 0.02);
            step(c, x, c as f64 / x * 1000.0)
        })
        .collect();
    let d = diagnosed(&steps, &bare_context());
    // Throughput peaks near 32 clients and falls 42% by 128: contention, no pool.
    assert_eq!(d.kind, Kind::Contention, "{d:#?}");
    let usl = d.usl.unwrap();
    assert!(usl.kappa > 0.0, "{usl:?}");
    assert_eq!(d.better_model, Some(Model::Usl), "{d:#?}");
    assert!(usl.r_squared > d.pool.unwrap().r_squared);
    assert!(has(&d, |f| matches!(
        f,
        Fact::BetterModel { model: Model::Usl, pool_rms_error_rps, usl_rms_error_rps }
            if usl_rms_error_rps < pool_rms_error_rps
    )));
    assert!(has(&d, |f| matches!(
        f,
        Fact::Retrograde { peak_rps, last_rps, .. } if last_rps < peak_rps
    )));
}

/// One client against a route calling four stubs per request; `base_ms` is what the client waits.
fn fan_out_steps(base_ms: f64) -> Vec<Step> {
    [1u32, 2, 4, 8]
        .iter()
        .map(|&c| {
            let x = c as f64 * 1000.0 / base_ms;
            let mut s = with_mock(step(c, x, base_ms), 1200.0, 4.0, 4 * c as u64);
            let requests = s.requests;
            if let Some(ds) = s.downstream.as_mut() {
                ds.stubs = [1200.0, 400.0, 300.0, 210.0]
                    .iter()
                    .enumerate()
                    .map(|(i, &delay)| StubStats {
                        id: i.to_string(),
                        name: format!("GET /part{i}"),
                        requests,
                        delay_ms: Some(delay),
                    })
                    .collect();
            }
            s
        })
        .collect()
}

#[test]
fn fan_out_calls_are_told_parallel_or_serial() {
    let context = SweepContext {
        downstream_delay_ms: None,
        ..mock_context(0.0)
    };
    let d = diagnosed(&fan_out_steps(1212.0), &context);
    assert_eq!(d.fan_out, Some(FanOutShape::Parallel), "{d:#?}");
    // 1 client waits 1212 ms; the slowest call takes 1200 ms, the sum would be 2110 ms.
    let fan_out = facts(&d, |f| match f {
        Fact::FanOut {
            clients,
            latency_ms,
            slowest_ms,
            serial_ms,
            ..
        } => Some((
            *clients,
            latency_ms.round(),
            slowest_ms.round(),
            serial_ms.round(),
        )),
        _ => None,
    });
    assert_eq!(fan_out, [(1, 1212.0, 1200.0, 2110.0)]);
    assert_eq!(d.kind, Kind::NoLimitFound);

    let d = diagnosed(&fan_out_steps(2125.0), &context);
    assert_eq!(d.fan_out, Some(FanOutShape::Serial), "{d:#?}");
}

#[test]
fn a_generator_busy_with_a_shedders_fast_errors_does_not_hide_the_shedding() {
    // The shedder's 503s come back in 2 ms, so past the knee the generator is saturated; its
    // total rate keeps growing, so the limit is the target's.
    let steps: Vec<Step> = shedding_steps()
        .into_iter()
        .map(|mut s| {
            if s.clients > 30 {
                s.generator_cpu_pct = 97.0;
            }
            s
        })
        .collect();
    let d = diagnosed(&steps, &mock_context(50.0));
    assert_eq!(d.kind, Kind::ErrorBound, "{d:#?}");
    assert_near(d.limit.unwrap(), 30.0, 0.1);
    assert!(has(&d, |f| matches!(
        f,
        Fact::GeneratorBusy { generator_cpu_pct, past_limit: true, .. } if *generator_cpu_pct == 97.0
    )));
}

#[test]
fn one_thread_of_cpu_work_on_many_cores_is_cpu_bound_when_the_cores_are_known() {
    // One worker thread doing 10 ms of CPU per request on a 16-core machine: the target never
    // uses more than 1/16 of the machine, far from "saturated", yet CPU is its limit.
    let mut steps = cpu_steps(1, 10.0, false);
    for s in &mut steps {
        s.target_cpu_pct = Some(96.0 / 16.0);
    }
    let known = SweepContext {
        target_observed: true,
        cores: Some(16),
        ..mock_context(50.0)
    };
    let d = diagnosed(&steps, &known);
    assert_eq!(d.kind, Kind::CpuBound, "{d:#?}");
    assert_near(d.limit.unwrap(), 1.0, 0.1);
}

#[test]
fn a_starved_pool_is_sized_by_the_ceiling_the_mock_saw_at_every_plateau_step() {
    // A Go semaphore of 12 swept while the machine was short of CPU (load average ~8): the
    // plateau's throughput sagged, so Little's law says ~9.4, but the mock saw exactly 12 calls
    // in flight at every plateau step. (Recorded by tests/sweeps/targets.rs on this machine.)
    let table = [
        // clients, req/s, mean ms, mock mean in flight, mock max in flight
        (1, 18.0, 56.0, 1.0, 1),
        (2, 38.0, 54.0, 2.0, 2),
        (4, 74.0, 53.0, 3.9, 4),
        (8, 150.0, 54.0, 7.7, 8),
        (16, 232.0, 70.0, 11.8, 12),
        (12, 228.0, 54.0, 11.6, 12),
        (14, 198.0, 66.0, 10.4, 12),
        (28, 179.0, 157.0, 9.8, 12),
    ];
    let steps: Vec<Step> = table
        .iter()
        .map(|&(clients, x, mean_ms, mock_mean, mock_max)| {
            let mut s = with_mock(step(clients, x, mean_ms), 50.0, 1.0, mock_max);
            s.downstream_inflight.as_mut().unwrap().mean = mock_mean;
            s
        })
        .collect();
    let d = diagnosed(&steps, &mock_context(50.0));
    assert_eq!(d.kind, Kind::BlockingPool, "{d:#?}");
    assert_near(d.limit.unwrap(), 12.0, 0.1);
    assert!(
        has(&d, |f| matches!(
            f,
            Fact::MockCeiling {
                max_in_flight,
                reading: CeilingReading::SameAtEveryStep,
                ..
            } if *max_in_flight == 12.0
        )),
        "{d:#?}"
    );
}

#[test]
fn a_flat_plateau_does_not_make_the_usl_the_better_model() {
    // An event loop blocked 50 ms per request: ~20 req/s at every client count, so every step
    // is on the plateau and R² of either model means nothing.
    let mut noise = Noise::new(11);
    let steps: Vec<Step> = [1u32, 2, 4, 8, 16]
        .iter()
        .map(|&c| {
            let x = noise.jitter(19.6, 0.02);
            step(c, x, c as f64 / x * 1000.0)
        })
        .collect();
    let d = diagnosed(&steps, &bare_context());
    assert_eq!(d.kind, Kind::BlockingPool, "{d:#?}");
    assert_near(d.limit.unwrap(), 1.0, 0.1);
    assert_eq!(d.better_model, Some(Model::BoundedPool), "{d:#?}");
}

/// Steps of a sweep without a mock, the target's CPU observed: (clients, req/s, mean ms,
/// target CPU % of all cores).
fn observed_steps(table: &[(u32, f64, f64, f64)]) -> Vec<Step> {
    table
        .iter()
        .map(|&(clients, x, mean_ms, cpu)| {
            let mut s = step(clients, x, mean_ms);
            s.target_cpu_pct = Some(cpu);
            s
        })
        .collect()
}

#[test]
fn a_python_server_held_by_its_gil_is_one_core_of_cpu_work() {
    // tests/targets/py-cpu-gil swept on this 2-core machine while it was busy (recorded): one
    // request computes at a time. Little's law over the 1-client latency missed both ways
    // (1.39 when the first step waited for a core, 0.83 when threads fought over the GIL);
    // the cores the target kept busy say 1.
    let context = SweepContext {
        target_observed: true,
        cores: Some(2),
        ..bare_context()
    };
    let slow_first_step = observed_steps(&[
        (1, 24.0, 42.0, 36.0),
        (2, 33.0, 61.0, 48.0),
        (4, 32.0, 125.0, 49.0),
        (8, 34.5, 232.0, 50.0),
        (16, 37.5, 436.0, 48.0),
    ]);
    let gil_contention = observed_steps(&[
        (1, 43.0, 23.0, 46.0),
        (2, 35.4, 56.0, 48.0),
        (4, 37.4, 107.0, 49.0),
        (8, 33.5, 239.0, 50.0),
        (16, 28.5, 561.0, 50.0),
    ]);
    for steps in [slow_first_step, gil_contention] {
        let d = diagnosed(&steps, &context);
        assert_eq!(d.kind, Kind::CpuBound, "{d:#?}");
        assert_near(d.limit.unwrap(), 1.0, 0.1);
        assert!(has(&d, |f| matches!(f, Fact::CoresBusy { .. })), "{d:#?}");
    }
}

#[test]
fn a_machine_busy_with_other_work_is_named_beside_the_target() {
    let mut steps = observed_steps(&[
        (1, 177.0, 5.6, 47.0),
        (2, 250.0, 8.0, 60.0),
        (4, 280.0, 14.0, 62.0),
        (8, 290.0, 27.0, 64.0),
        (16, 295.0, 53.0, 63.0),
    ]);
    for s in &mut steps {
        s.machine_cpu_pct = Some(99.0);
        s.generator_cpu_pct = 8.0;
    }
    let context = SweepContext {
        target_observed: true,
        cores: Some(2),
        ..bare_context()
    };
    let d = diagnosed(&steps, &context);
    assert_eq!(d.kind, Kind::CpuBound, "{d:#?}");
    assert!(
        has(&d, |f| matches!(
            f,
            Fact::MachineCpu { machine_cpu_pct, contended: true, .. } if machine_cpu_pct.round() == 99.0
        )),
        "{d:#?}"
    );
}
