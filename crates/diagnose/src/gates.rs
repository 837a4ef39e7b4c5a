//! `--expect` gates for CI: parsed when the arguments are read, evaluated on a finished sweep.
//!
//! A gate is `METRIC OP VALUE[@CLIENTS]`:
//! - finding gates: `limit>=100`, `knee>=20`, `kind!=blocking-pool` (kind takes `==`/`!=` only);
//! - step gates: latency `p50 p90 p95 p99 p999 mean max` with a unit `ms` or `s`
//!   (`p99<500ms@40`), `throughput` in successful requests per second (`throughput>=50@20`),
//!   `error_rate` as a percentage or a fraction (`error_rate<1%@40`, `error_rate<0.01`).
//!
//! Without `@N` a step gate must hold at every step; with `@N`, at the step with N clients
//! (repeats of that count are merged by their median).

use crate::points::{points, Point};
use chokepoint_result::{Diagnosis, Kind, Step};
use std::fmt;
use std::str::FromStr;

const METRICS: &str =
    "limit, knee, kind, p50, p90, p95, p99, p999, mean, max, throughput, error_rate";
const OPERATORS: &str = "<, <=, >, >=, ==, !=";

/// Why a gate could not be parsed: one line naming the gate, what is wrong and what is valid.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("invalid gate '{gate}': {problem}")]
pub struct GateError {
    gate: String,
    problem: String,
}

impl GateError {
    fn new(gate: &str, problem: impl Into<String>) -> GateError {
        GateError {
            gate: gate.to_string(),
            problem: problem.into(),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    Lt,
    Le,
    Gt,
    Ge,
    Eq,
    Ne,
}

impl Op {
    fn holds(self, measured: f64, bound: f64) -> bool {
        // Equality on measured numbers allows for the rounding of what was printed.
        let close = (measured - bound).abs() <= 1e-9 * bound.abs().max(1.0);
        match self {
            Op::Lt => measured < bound,
            Op::Le => measured <= bound || close,
            Op::Gt => measured > bound,
            Op::Ge => measured >= bound || close,
            Op::Eq => close,
            Op::Ne => !close,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum LatencyStat {
    P50,
    P90,
    P95,
    P99,
    P999,
    Mean,
    Max,
}

#[derive(Debug, Clone, PartialEq)]
enum Check {
    Limit(f64),
    Knee(f64),
    Kind(Kind),
    /// Bound in milliseconds.
    Latency(LatencyStat, f64),
    /// Bound in successful requests per second.
    Throughput(f64),
    /// Bound as a fraction.
    ErrorRate(f64),
}

/// One `--expect` gate.
#[derive(Debug, Clone, PartialEq)]
pub struct Gate {
    text: String,
    op: Op,
    check: Check,
    at_clients: Option<u32>,
}

impl fmt::Display for Gate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

impl FromStr for Gate {
    type Err = GateError;

    fn from_str(s: &str) -> Result<Gate, GateError> {
        let text: String = s.chars().filter(|c| !c.is_whitespace()).collect();
        if text.is_empty() {
            return Err(GateError::new(
                s,
                format!("empty; write METRIC OP VALUE[@CLIENTS], e.g. 'p99<500ms@40' (metrics: {METRICS})"),
            ));
        }
        let op_start = text.find(['<', '>', '=', '!']).ok_or_else(|| {
            GateError::new(
                &text,
                format!("no operator; use one of {OPERATORS}, e.g. 'limit>=100'"),
            )
        })?;
        let metric = &text[..op_start];
        let rest = &text[op_start..];
        let (op, rest) = [
            ("<=", Op::Le),
            (">=", Op::Ge),
            ("==", Op::Eq),
            ("!=", Op::Ne),
            ("<", Op::Lt),
            (">", Op::Gt),
        ]
        .into_iter()
        .find_map(|(sym, op)| rest.strip_prefix(sym).map(|r| (op, r)))
        .ok_or_else(|| {
            let sym: String = rest.chars().take_while(|c| "<>=!".contains(*c)).collect();
            GateError::new(
                &text,
                format!("unknown operator '{sym}'; use one of {OPERATORS}"),
            )
        })?;
        if rest.starts_with(['<', '>', '=', '!']) {
            let sym: String = text[op_start..]
                .chars()
                .take_while(|c| "<>=!".contains(*c))
                .collect();
            return Err(GateError::new(
                &text,
                format!("unknown operator '{sym}'; use one of {OPERATORS}"),
            ));
        }
        let (value, at_clients) = match rest.split_once('@') {
            Some((value, at)) => {
                let clients = at.parse::<u32>().ok().filter(|&c| c > 0).ok_or_else(|| {
                    GateError::new(
                        &text,
                        format!("'@{at}' is not a client count; write '@' and a whole number above 0, e.g. '@40'"),
                    )
                })?;
                (value, Some(clients))
            }
            None => (rest, None),
        };
        if value.is_empty() {
            return Err(GateError::new(&text, "no value after the operator"));
        }
        let latency = match metric {
            "p50" => Some(LatencyStat::P50),
            "p90" => Some(LatencyStat::P90),
            "p95" => Some(LatencyStat::P95),
            "p99" => Some(LatencyStat::P99),
            "p999" => Some(LatencyStat::P999),
            "mean" => Some(LatencyStat::Mean),
            "max" => Some(LatencyStat::Max),
            _ => None,
        };
        let check = if let Some(stat) = latency {
            Check::Latency(stat, parse_latency(&text, value)?)
        } else {
            match metric {
                "limit" | "knee" | "kind" if at_clients.is_some() => {
                    return Err(GateError::new(
                        &text,
                        format!(
                            "'{metric}' is a property of the whole sweep; remove '@{}'",
                            at_clients.unwrap_or(0)
                        ),
                    ))
                }
                "limit" => Check::Limit(parse_number(&text, value, "a number, e.g. 'limit>=100'")?),
                "knee" => Check::Knee(parse_number(
                    &text,
                    value,
                    "a client count, e.g. 'knee>=20'",
                )?),
                "kind" => {
                    if !matches!(op, Op::Eq | Op::Ne) {
                        return Err(GateError::new(
                            &text,
                            "a kind can only be compared with == or !=, e.g. 'kind!=blocking-pool'",
                        ));
                    }
                    let kind = Kind::parse(value).ok_or_else(|| {
                        let kinds: Vec<&str> = Kind::ALL.iter().map(|k| k.as_str()).collect();
                        GateError::new(
                            &text,
                            format!("unknown kind '{value}'; use one of {}", kinds.join(", ")),
                        )
                    })?;
                    Check::Kind(kind)
                }
                "throughput" => {
                    let number = value
                        .strip_suffix("rps")
                        .or_else(|| value.strip_suffix("/s"))
                        .unwrap_or(value);
                    Check::Throughput(parse_number(
                        &text,
                        number,
                        "requests per second, e.g. 'throughput>=50@20'",
                    )?)
                }
                "error_rate" => Check::ErrorRate(parse_rate(&text, value)?),
                _ => {
                    return Err(GateError::new(
                        &text,
                        format!("unknown metric '{metric}'; use one of {METRICS}"),
                    ))
                }
            }
        };
        Ok(Gate {
            text,
            op,
            check,
            at_clients,
        })
    }
}

fn parse_number(gate: &str, value: &str, expected: &str) -> Result<f64, GateError> {
    value
        .parse::<f64>()
        .ok()
        .filter(|v| v.is_finite())
        .ok_or_else(|| GateError::new(gate, format!("'{value}' is not a number; write {expected}")))
}

fn parse_latency(gate: &str, value: &str) -> Result<f64, GateError> {
    let split = value
        .find(|c: char| c.is_ascii_alphabetic())
        .unwrap_or(value.len());
    let (number, unit) = value.split_at(split);
    let scale = match unit {
        "ms" => 1.0,
        "s" => 1000.0,
        "" => {
            return Err(GateError::new(
                gate,
                format!("latency '{value}' has no unit; add ms or s, e.g. '500ms'"),
            ))
        }
        other => {
            return Err(GateError::new(
                gate,
                format!("unknown unit '{other}'; use ms or s, e.g. '500ms' or '2s'"),
            ))
        }
    };
    Ok(parse_number(gate, number, "a latency such as '500ms' or '2s'")? * scale)
}

fn parse_rate(gate: &str, value: &str) -> Result<f64, GateError> {
    let (number, scale) = match value.strip_suffix('%') {
        Some(n) => (n, 0.01),
        None => (value, 1.0),
    };
    let rate = parse_number(
        gate,
        number,
        "a percentage or a fraction, e.g. '1%' or '0.01'",
    )? * scale;
    if !(0.0..=1.0).contains(&rate) {
        return Err(GateError::new(
            gate,
            format!("error rate '{value}' is outside 0..100%; write e.g. '1%' or '0.01'"),
        ));
    }
    Ok(rate)
}

fn fmt_num(v: f64) -> String {
    if (v == v.trunc() && v.abs() < 1e15) || v.abs() >= 100.0 {
        format!("{v:.0}")
    } else if v.abs() >= 1.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.3}")
    }
}

impl Gate {
    /// The measured value at one point and how to print it.
    fn measure(&self, p: &Point<'_>) -> Option<(f64, String)> {
        p.steps.first()?;
        let lat = |f: fn(&chokepoint_result::LatencyMs) -> f64| -> f64 {
            crate::points::median(p.steps.iter().map(|s| f(&s.latency_ms)))
        };
        Some(match &self.check {
            Check::Latency(stat, _) => {
                let (name, v) = match stat {
                    LatencyStat::P50 => ("p50", lat(|l| l.p50)),
                    LatencyStat::P90 => ("p90", lat(|l| l.p90)),
                    LatencyStat::P95 => ("p95", lat(|l| l.p95)),
                    LatencyStat::P99 => ("p99", lat(|l| l.p99)),
                    LatencyStat::P999 => ("p999", lat(|l| l.p999)),
                    LatencyStat::Mean => ("mean", lat(|l| l.mean)),
                    LatencyStat::Max => ("max", lat(|l| l.max)),
                };
                (v, format!("{name} was {} ms", fmt_num(v)))
            }
            Check::Throughput(_) => (p.ok_x, format!("throughput was {} req/s", fmt_num(p.ok_x))),
            Check::ErrorRate(_) => (
                p.error_rate,
                format!("error rate was {:.2}%", p.error_rate * 100.0),
            ),
            _ => return None,
        })
    }

    fn bound(&self) -> f64 {
        match &self.check {
            Check::Limit(v)
            | Check::Knee(v)
            | Check::Latency(_, v)
            | Check::Throughput(v)
            | Check::ErrorRate(v) => *v,
            Check::Kind(_) => 0.0,
        }
    }

    /// `None` when the gate holds, else the failure sentence.
    fn failure(&self, pts: &[Point<'_>], diagnosis: &Diagnosis) -> Option<String> {
        let fail = |why: String| Some(format!("gate '{}' failed: {why}", self.text));
        match &self.check {
            Check::Kind(kind) => {
                let holds = match self.op {
                    Op::Eq => diagnosis.kind() == *kind,
                    _ => diagnosis.kind() != *kind,
                };
                (!holds).then(|| {
                    format!(
                        "gate '{}' failed: the kind was {}",
                        self.text,
                        diagnosis.kind()
                    )
                })
            }
            Check::Limit(bound) => match diagnosis.limit() {
                Some(limit) if self.op.holds(limit, *bound) => None,
                Some(limit) => fail(format!("the limit was {}", fmt_num(limit))),
                None => fail(format!("no limit was found ({})", diagnosis.kind())),
            },
            Check::Knee(bound) => match diagnosis.knee_clients() {
                Some(knee) if self.op.holds(knee as f64, *bound) => None,
                Some(knee) => fail(format!("the knee was at {knee} clients")),
                None => fail("no knee was found".to_string()),
            },
            _ => {
                let candidates: Vec<&Point<'_>> = match self.at_clients {
                    Some(n) => match pts.iter().find(|p| p.clients == n) {
                        Some(p) => vec![p],
                        None => {
                            let measured: Vec<String> =
                                pts.iter().map(|p| p.clients.to_string()).collect();
                            return fail(format!(
                                "no step ran with {n} clients (steps: {})",
                                if measured.is_empty() {
                                    "none".to_string()
                                } else {
                                    measured.join(", ")
                                }
                            ));
                        }
                    },
                    None => pts.iter().collect(),
                };
                if candidates.is_empty() {
                    return fail("no step was measured".to_string());
                }
                let failed: Vec<(u32, String)> = candidates
                    .iter()
                    .filter_map(|p| {
                        let (v, said) = self.measure(p)?;
                        (!self.op.holds(v, self.bound())).then_some((p.clients, said))
                    })
                    .collect();
                let (clients, said) = failed.first()?;
                let more = match failed.len() {
                    1 => String::new(),
                    2 => " (and at 1 more step)".to_string(),
                    n => format!(" (and at {} more steps)", n - 1),
                };
                let unit = if *clients == 1 { "client" } else { "clients" };
                fail(format!("{said} at {clients} {unit}{more}"))
            }
        }
    }
}

/// Evaluates gates on a finished sweep: one sentence per failed gate, naming the gate, the
/// measured value and the step, e.g. "gate 'p99<500ms@40' failed: p99 was 2027 ms at 40
/// clients". Empty when every gate holds.
pub fn check_gates(gates: &[Gate], steps: &[Step], diagnosis: &Diagnosis) -> Vec<String> {
    let pts = points(steps);
    gates
        .iter()
        .filter_map(|g| g.failure(&pts, diagnosis))
        .collect()
}
