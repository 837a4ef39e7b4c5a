//! The finding as the JSON carries it: its [`Kind`], the models' fits and the [`Diagnosis`]
//! record, a [`Finding`] with the words its teller (the diagnosis crate) writes for it. The
//! record reads and writes `result.json`'s `diagnosis` object through `DiagnosisJson`, which
//! fixes its keys.
use crate::{Fact, FanOutShape, Finding, Model, Overload, Peak, Place, Plateau, WhatIf};
use serde::{Deserialize, Serialize};

/// The kind of limit a sweep found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Kind {
    /// A fixed pool of workers held for the whole of a blocking call.
    BlockingPool,
    /// The target's CPU is the limit.
    CpuBound,
    /// Connections run out and come back in batches (periodic stalls).
    ConnectionLimit,
    /// Errors or timeouts start past some concurrency.
    ErrorBound,
    /// The generator's own CPU was saturated: the result is not about the target.
    GeneratorBound,
    /// Throughput kept following clients up to the largest step.
    NoLimitFound,
    /// The whole machine's CPU was saturated at the plateau, the target's CPU unknown or the
    /// generator sharing its cores: the limit is the machine, not something in the target.
    MachineSaturated,
    /// Throughput peaked and fell as clients grew: more clients cost throughput (lock
    /// contention, thrashing; the USL's κ).
    Contention,
    /// A pool that starts a thread per blocked call instead of queueing: its threads grew with
    /// the clients past the point where throughput stopped following them.
    GrowingPool,
}

impl Kind {
    /// The kind's name as it appears in JSON and on the command line (`blocking-pool`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::BlockingPool => "blocking-pool",
            Kind::CpuBound => "cpu-bound",
            Kind::ConnectionLimit => "connection-limit",
            Kind::ErrorBound => "error-bound",
            Kind::GeneratorBound => "generator-bound",
            Kind::NoLimitFound => "no-limit-found",
            Kind::MachineSaturated => "machine-saturated",
            Kind::Contention => "contention",
            Kind::GrowingPool => "growing-pool",
        }
    }

    /// Every kind, in the order DESIGN.md lists them.
    pub const ALL: [Kind; 9] = [
        Kind::BlockingPool,
        Kind::CpuBound,
        Kind::ConnectionLimit,
        Kind::ErrorBound,
        Kind::GeneratorBound,
        Kind::NoLimitFound,
        Kind::MachineSaturated,
        Kind::Contention,
        Kind::GrowingPool,
    ];

    /// Parses a kind's name (`blocking-pool`, ...).
    pub fn parse(name: &str) -> Option<Kind> {
        Kind::ALL.into_iter().find(|k| k.as_str() == name)
    }
}

impl std::fmt::Display for Kind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A Universal Scalability Law fit: X(N) = λN / (1 + σ(N−1) + κN(N−1)).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct UslFit {
    /// Contention (serial fraction).
    pub sigma: f64,
    /// Coherency (crosstalk) cost.
    pub kappa: f64,
    /// Throughput of one client, per second.
    pub lambda: f64,
    /// Concurrency of peak throughput, √((1−σ)/κ); `None` when κ is 0.
    pub n_max: Option<f64>,
    /// Coefficient of determination of the fit on the measured steps.
    pub r_squared: f64,
}

impl UslFit {
    /// The throughput the law gives at `clients`.
    pub fn throughput(&self, clients: f64) -> f64 {
        let n = clients;
        self.lambda * n / (1.0 + self.sigma * (n - 1.0) + self.kappa * n * (n - 1.0))
    }
}

/// The bounded-pool model: X(N) = min(N / base latency, limit / service time).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct PoolFit {
    /// The pool size the model puts behind the plateau.
    pub limit: f64,
    /// The plateau throughput, per second.
    pub plateau_rps: f64,
    /// Coefficient of determination of the fit on the measured steps.
    pub r_squared: f64,
    /// The base latency L0 of the model's rising part, ms (0 in results written before it was
    /// recorded).
    #[serde(default)]
    pub base_latency_ms: f64,
}

impl PoolFit {
    /// The ideal line the model rises along: clients / L0 (infinite when L0 is unknown).
    pub fn ideal(&self, clients: f64) -> f64 {
        clients / (self.base_latency_ms / 1000.0)
    }

    /// The throughput the model gives at `clients`: min(clients / L0, plateau).
    pub fn throughput(&self, clients: f64) -> f64 {
        self.ideal(clients).min(self.plateau_rps)
    }
}

/// The finding in words, as the diagnosis crate writes them.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Words {
    /// One sentence, as the seed's author would write it.
    pub summary: String,
    /// Sentences with the numbers behind the finding, each traceable to the steps.
    pub evidence: Vec<String>,
    /// The evidence that decides the finding, in at most four short lines.
    pub key_evidence: Vec<String>,
    /// Where in the target the limit sits, in one line; `None` without a place.
    pub attribution: Option<String>,
}

/// Tells a [`Finding`] in [`Words`]. `By` is the teller's own type: through it the orphan rule
/// lets the diagnosis crate, which writes the sentences, implement this for `Finding`; with
/// that one teller, callers of [`Finding::into_diagnosis`] never name it.
pub trait Tell<By> {
    /// The finding's words.
    fn tell(&self) -> Words;
}

impl Finding {
    /// The JSON record: this finding with the words its teller writes.
    pub fn into_diagnosis<By>(self) -> Diagnosis
    where
        Finding: Tell<By>,
    {
        let words = self.tell();
        Diagnosis::new(self, words)
    }
}

/// The diagnosis: the [`Finding`] and its words. In `result.json` the finding's fields are
/// written flat beside the words (`DiagnosisJson` fixes the keys).
///
/// `place` and `overload` are held once, in fields (`place` here, `finding.overload`), not
/// among `finding.facts`: the diagnosis and its tests read them by name. The JSON still writes
/// each twice, as a key and as a fact at the index in `facts` where the diagnosis put it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(from = "DiagnosisJson", into = "DiagnosisJson")]
pub struct Diagnosis {
    /// What was decided. Its `facts` lack the [`Fact::Place`] and [`Fact::Overload`] the
    /// diagnosis read: those are [`Diagnosis::place`] and the finding's `overload`.
    pub finding: Finding,
    /// One sentence, as the seed's author would write it.
    pub summary: String,
    /// Sentences with the numbers behind the finding, each traceable to the steps.
    pub evidence: Vec<String>,
    /// The evidence that decides the finding, in at most four short lines.
    pub key_evidence: Vec<String>,
    /// Where in the target the limit sits (a thread pool's name, ...), rendered from `place`.
    pub attribution: Option<String>,
    /// Where the limit sits, typed; `None` when the evidence points at no one place.
    pub place: Option<Place>,
    /// What the pool at another size would serve (`sweep --what-if M`), when asked.
    pub what_if: Option<WhatIf>,
    /// Where the `place` and `overload` facts stand among the facts in JSON.
    held_at: HeldAt,
}

/// The index in the JSON `facts` of the [`Fact::Place`] and the [`Fact::Overload`]; `None`
/// when the facts have none (a finding from before facts were recorded, or one made by hand).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
struct HeldAt {
    place: Option<usize>,
    overload: Option<usize>,
}

impl Diagnosis {
    /// The diagnosis of `finding` told in `words`; its place and overload facts move to the
    /// fields.
    pub fn new(mut finding: Finding, words: Words) -> Diagnosis {
        let (held_at, place, overload) = take_held(&mut finding.facts);
        finding.overload = finding.overload.or(overload);
        Diagnosis {
            finding,
            summary: words.summary,
            evidence: words.evidence,
            key_evidence: words.key_evidence,
            attribution: words.attribution,
            place,
            what_if: None,
            held_at,
        }
    }

    /// The kind of limit.
    pub fn kind(&self) -> Kind {
        self.finding.kind
    }

    /// The size of the limit in concurrent requests; `None` when none was found.
    pub fn limit(&self) -> Option<f64> {
        self.finding.limit
    }

    /// The first step where throughput stopped following clients.
    pub fn knee_clients(&self) -> Option<u32> {
        self.finding.knee_clients
    }

    /// The base latency L0 of the ideal line, ms; `None` when unknown.
    pub fn base_latency_ms(&self) -> Option<f64> {
        self.finding.base_latency_ms
    }

    /// The plateau the limit stands on.
    pub fn plateau(&self) -> Option<&Plateau> {
        self.finding.plateau.as_ref()
    }

    /// The USL fit, when there were enough steps.
    pub fn usl(&self) -> Option<UslFit> {
        self.finding.usl
    }

    /// The bounded-pool model's fit, when it applies.
    pub fn pool(&self) -> Option<PoolFit> {
        self.finding.pool
    }

    /// The model that fits the steps better, when both were fitted.
    pub fn better_model(&self) -> Option<Model> {
        self.finding.better_model
    }

    /// Whether fanned-out downstream calls look parallel or serial.
    pub fn fan_out(&self) -> Option<FanOutShape> {
        self.finding.fan_out
    }

    /// What overload did to the service past the knee.
    pub fn overload(&self) -> Option<&Overload> {
        self.finding.overload.as_ref()
    }

    /// The step with the most successful throughput.
    pub fn peak(&self) -> Option<Peak> {
        self.finding.peak
    }

    /// What the diagnosis read, in the order of the evidence, but for the place and the
    /// overload (see [`Diagnosis::finding`]).
    pub fn facts(&self) -> &[Fact] {
        &self.finding.facts
    }

    /// The facts as `result.json` writes them: the place and overload facts back where they
    /// stood.
    fn written_facts(&self) -> Vec<Fact> {
        let place = self.place.as_ref().map(|place| Fact::Place {
            place: Box::new(place.clone()),
        });
        let overload = self
            .finding
            .overload
            .as_ref()
            .map(|overload| Fact::Overload {
                overload: overload.clone(),
            });
        let mut held: Vec<(usize, Fact)> = [
            (self.held_at.place, place),
            (self.held_at.overload, overload),
        ]
        .into_iter()
        .filter_map(|(at, fact)| Some((at?, fact?)))
        .collect();
        // The lower index first: the higher one counts it.
        held.sort_by_key(|(at, _)| *at);
        let mut facts = self.finding.facts.clone();
        for (at, fact) in held {
            facts.insert(at.min(facts.len()), fact);
        }
        facts
    }
}

/// Takes the first [`Fact::Place`] and [`Fact::Overload`] out of `facts`, with where they stood.
fn take_held(facts: &mut Vec<Fact>) -> (HeldAt, Option<Place>, Option<Overload>) {
    let mut at = HeldAt::default();
    let (mut place, mut overload) = (None, None);
    let mut kept = Vec::with_capacity(facts.len());
    for (i, fact) in std::mem::take(facts).into_iter().enumerate() {
        match fact {
            Fact::Place { place: p } if at.place.is_none() => {
                at.place = Some(i);
                place = Some(*p);
            }
            Fact::Overload { overload: o } if at.overload.is_none() => {
                at.overload = Some(i);
                overload = Some(o);
            }
            fact => kept.push(fact),
        }
    }
    *facts = kept;
    (at, place, overload)
}

/// The `diagnosis` object of `result.json`, key for key in the order it is written: the
/// contract DESIGN.md documents ("add fields, never rename, never drop"). `place` and
/// `overload` are written both as keys and as facts, from the one copy a [`Diagnosis`] holds.
#[derive(Serialize, Deserialize)]
struct DiagnosisJson {
    kind: Kind,
    limit: Option<f64>,
    knee_clients: Option<u32>,
    summary: String,
    evidence: Vec<String>,
    usl: Option<UslFit>,
    #[serde(default)]
    pool: Option<PoolFit>,
    #[serde(default)]
    better_model: Option<Model>,
    #[serde(default)]
    fan_out: Option<FanOutShape>,
    attribution: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    place: Option<Place>,
    #[serde(default)]
    base_latency_ms: Option<f64>,
    #[serde(default)]
    plateau: Option<Plateau>,
    #[serde(default)]
    facts: Vec<Fact>,
    #[serde(default)]
    key_evidence: Vec<String>,
    #[serde(default)]
    overload: Option<Overload>,
    #[serde(default)]
    peak: Option<Peak>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    what_if: Option<WhatIf>,
}

impl From<Diagnosis> for DiagnosisJson {
    fn from(d: Diagnosis) -> DiagnosisJson {
        let facts = d.written_facts();
        let f = d.finding;
        DiagnosisJson {
            kind: f.kind,
            limit: f.limit,
            knee_clients: f.knee_clients,
            summary: d.summary,
            evidence: d.evidence,
            usl: f.usl,
            pool: f.pool,
            better_model: f.better_model,
            fan_out: f.fan_out,
            attribution: d.attribution,
            place: d.place,
            base_latency_ms: f.base_latency_ms,
            plateau: f.plateau,
            facts,
            key_evidence: d.key_evidence,
            overload: f.overload,
            peak: f.peak,
            what_if: d.what_if,
        }
    }
}

impl From<DiagnosisJson> for Diagnosis {
    fn from(j: DiagnosisJson) -> Diagnosis {
        let finding = Finding {
            kind: j.kind,
            limit: j.limit,
            knee_clients: j.knee_clients,
            base_latency_ms: j.base_latency_ms,
            plateau: j.plateau,
            usl: j.usl,
            pool: j.pool,
            better_model: j.better_model,
            fan_out: j.fan_out,
            overload: j.overload,
            peak: j.peak,
            facts: j.facts,
        };
        let words = Words {
            summary: j.summary,
            evidence: j.evidence,
            key_evidence: j.key_evidence,
            attribution: j.attribution,
        };
        let mut d = Diagnosis::new(finding, words);
        d.place = j.place.or(d.place);
        d.what_if = j.what_if;
        d
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn kind_names_round_trip_through_json_and_parse() {
        for kind in Kind::ALL {
            let json = serde_json::to_string(&kind).unwrap();
            assert_eq!(json, format!("\"{}\"", kind.as_str()));
            assert_eq!(Kind::parse(kind.as_str()), Some(kind));
        }
        assert_eq!(Kind::parse("blocking_pool"), None);
    }

    fn knee(clients: u32) -> Fact {
        Fact::Knee {
            clients,
            efficiency: 0.5,
            threshold: 0.9,
        }
    }

    fn place() -> Place {
        Place {
            pool: Some("worker".into()),
            clients: 40,
            ..Place::default()
        }
    }

    fn overload() -> Overload {
        Overload::Queues {
            from_clients: 20,
            to_clients: 40,
            throughput_rps: 19.7,
            from_latency_ms: 1010.0,
            to_latency_ms: 2020.0,
        }
    }

    /// A finding as the diagnosis gives it: the overload in its field and among the facts,
    /// the place among the facts.
    fn finding() -> Finding {
        let mut finding = Finding::bare(
            Kind::BlockingPool,
            vec![
                knee(20),
                Fact::Overload {
                    overload: overload(),
                },
                knee(40),
                Fact::Place {
                    place: Box::new(place()),
                },
            ],
        );
        finding.overload = Some(overload());
        finding
    }

    #[test]
    fn the_place_and_the_overload_are_held_once_and_written_twice_where_they_stood() {
        let found = finding();
        let d = Diagnosis::new(found.clone(), Words::default());
        assert_eq!(d.facts(), [knee(20), knee(40)]);
        assert_eq!(d.place, Some(place()));
        assert_eq!(d.overload(), Some(&overload()));
        let json = serde_json::to_value(&d).expect("JSON");
        assert_eq!(
            json["facts"],
            serde_json::to_value(&found.facts).expect("JSON")
        );
        assert_eq!(json["place"], serde_json::to_value(place()).expect("JSON"));
        assert_eq!(
            json["overload"],
            serde_json::to_value(overload()).expect("JSON")
        );
        let back: Diagnosis = serde_json::from_value(json.clone()).expect("read back");
        assert_eq!(back, d);
        assert_eq!(serde_json::to_value(&back).expect("JSON"), json);
    }

    #[test]
    fn keys_are_written_in_the_order_they_always_were() {
        // Set by hand, so that no fact repeats the `place` and `overload` keys.
        let mut d = Diagnosis::new(Finding::bare(Kind::BlockingPool, vec![]), Words::default());
        d.place = Some(place());
        d.finding.overload = Some(overload());
        let text = serde_json::to_string(&d).expect("JSON");
        let keys = [
            "kind",
            "limit",
            "knee_clients",
            "summary",
            "evidence",
            "usl",
            "pool",
            "better_model",
            "fan_out",
            "attribution",
            "place",
            "base_latency_ms",
            "plateau",
            "facts",
            "key_evidence",
            "overload",
            "peak",
        ];
        let at: Vec<usize> = keys
            .iter()
            .map(|k| text.find(&format!("\"{k}\":")).expect(k))
            .collect();
        assert!(at.windows(2).all(|w| w[0] < w[1]), "{text}");
    }

    #[test]
    fn a_place_or_overload_set_by_hand_is_a_key_but_no_fact() {
        let mut d = Diagnosis::new(
            Finding::bare(Kind::BlockingPool, vec![knee(20)]),
            Words::default(),
        );
        d.place = Some(place());
        d.finding.overload = Some(overload());
        let json = serde_json::to_value(&d).expect("JSON");
        assert_eq!(
            json["facts"],
            serde_json::to_value([knee(20)]).expect("JSON")
        );
        assert_eq!(json["place"]["pool"], "worker");
        assert_eq!(json["overload"]["behaviour"], "queues");
        assert_eq!(
            serde_json::from_value::<Diagnosis>(json).expect("read back"),
            d
        );
    }

    #[test]
    fn a_what_if_is_written_and_read_back_and_left_out_when_not_asked() {
        let mut d = Diagnosis::new(Finding::bare(Kind::BlockingPool, vec![]), Words::default());
        assert!(!serde_json::to_string(&d).expect("JSON").contains("what_if"));
        d.what_if = Some(WhatIf {
            pool: Some(40),
            name: Some("actor-pool".into()),
            from_pool: Some(20),
            predicted_rps: Some(379.0),
            measured_by: crate::MeasuredBy::Emulation,
            next_limit: Some(crate::NextLimit::Concurrency { in_flight: 14 }),
            bound_rps: Some(2100.0),
            cpu_ms_per_request: Some(0.95),
            usable_cores: Some(2.0),
            pool_rps: Some(373.0),
            delay_ms: Some(100.0),
            hold_ms: Some(107.0),
            emulated_delay_ms: Some(50.0),
            steps: vec![],
            not_emulated: None,
            summary: "With `actor-pool` at 40 ...".into(),
        });
        let json = serde_json::to_value(&d).expect("JSON");
        assert_eq!(json["what_if"]["measured_by"], "emulation");
        assert_eq!(json["what_if"]["next_limit"]["kind"], "concurrency");
        assert_eq!(json["what_if"]["predicted_rps"], 379.0);
        let back: Diagnosis = serde_json::from_value(json).expect("read back");
        assert_eq!(back, d);
    }
}
