//! A step counts requests answered in its window and the mock counts calls begun in the same
//! window, so each end of the window can hold up to the calls in flight that one counts and
//! the other does not. With a long call and a short step the clients move in waves and the
//! counts differ by a whole wave: the aiohttp service of the tuning set (100 connections held
//! 500 ms, 2 s steps) counted 3 waves of answers and 4 of calls at its fewest clients in one
//! CI run, read 1.33 calls per request, lost the mock's delay as the time a slot is held and
//! came out a pool of 88. Tables of that shape on 2, 16 and 64 cores, and a real second call per
//! request in the same waves, which must still read as two.
use crate::common;
use chokepoint_result::{Fact, Kind, Step, SweepContext};
use common::*;

const DELAY_MS: f64 = 500.0;
const STEP_S: f64 = 2.0;

/// A pool of `pool` connections held `DELAY_MS` each, swept in `STEP_S` steps whose clients
/// start together: below the pool a step counts 3 waves of answers and 4 waves of calls;
/// at and past it the pool turns over every `DELAY_MS` and the mock counts one wave of calls
/// more than the answers. `calls` calls per request, made side by side.
fn waves(pool: u32, clients: &[u32], calls: u64) -> Vec<Step> {
    let rounds = STEP_S * 1000.0 / DELAY_MS; // 4
    clients
        .iter()
        .map(|&c| {
            let served = c.min(pool);
            let answered = (rounds - 1.0) * f64::from(served);
            let x = answered / STEP_S;
            let mean_ms = f64::from(c) / (f64::from(served) * 1000.0 / DELAY_MS) * 1000.0 + 5.0;
            let mut s = step(c, x, mean_ms);
            s.load.duration_s = STEP_S;
            s.load.requests = answered as u64;
            s.load.ok = answered as u64;
            let begun = rounds * f64::from(served) * calls as f64;
            let mut s = with_mock(s, DELAY_MS, calls as f64, u64::from(served) * calls);
            if let Some(d) = s.downstream.as_mut() {
                d.requests = begun as u64;
                d.stubs[0].requests = begun as u64;
            }
            if let Some(d) = s.downstream_inflight.as_mut() {
                d.mean = f64::from(served) * calls as f64 * 0.97;
            }
            s
        })
        .collect()
}

fn context(cores: u32) -> SweepContext {
    SweepContext {
        cores: Some(cores),
        ..mock_context(DELAY_MS)
    }
}

#[test]
fn a_wave_more_of_calls_than_answers_is_still_one_call_per_request() {
    for cores in [2, 16, 64] {
        let pool = 50 * cores;
        let clients = [pool / 4, pool / 2, 2 * pool, 3 * pool];
        let d = diagnosed(&waves(pool, &clients, 1), &context(cores));
        assert_eq!(d.kind, Kind::BlockingPool, "{cores} cores: {d:#?}");
        let limit = d.limit.expect("a limit");
        assert!(
            (limit - f64::from(pool)).abs() <= 0.05 * f64::from(pool),
            "{cores} cores: limit {limit} for a pool of {pool}"
        );
        assert!(
            !has(&d, |f| matches!(f, Fact::FanOut { .. })),
            "{cores} cores: no fan-out: {:#?}",
            d.facts
        );
    }
}

#[test]
fn two_calls_per_request_in_the_same_waves_still_read_as_two() {
    for cores in [2, 16, 64] {
        let pool = 50 * cores;
        let clients = [pool / 4, pool / 2, 2 * pool, 3 * pool];
        let d = diagnosed(&waves(pool, &clients, 2), &context(cores));
        assert!(
            has(&d, |f| matches!(
                f,
                Fact::FanOut { calls_per_request, .. } if *calls_per_request > 1.8
            )),
            "{cores} cores: two calls per request: {:#?}",
            d.facts
        );
    }
}
