//! Where the limit sits: from the finding (its kind, limit and knee) and the evidence of the
//! steps at or past the knee, the one place that holds the limit ([`Fact::Place`]), or what was
//! seen when the evidence points at none or at several ([`Fact::PlaceUnclear`]).
//!
//! The rules read pools by their counts, never by their names, so they hold for any service:
//! - **A held pool** (`blocking-pool`, and `error-bound`, whose limit is what it serves at
//!   once): the pool whose threads held in a wait number about the limit (within 15%, at least
//!   ±0.75 of a thread), at the plateau step where they were most. With the runtime's stacks, the
//!   wait is read from the frames: threads waiting on a downstream first, then on a lock or a
//!   pool's resource; when other threads of the pool queue for a pool's resource (a connection)
//!   beside the held ones, the place is a connection pool, for a lock or a permit a semaphore. Without stacks, `/proc`'s threads (the mean over the samples: the
//!   threads held through the step): those in a network wait first, less those that did not
//!   follow the load (there already at the fewest clients beyond one per client: an accept
//!   loop); then those parked in `futex` (which is also how an idle worker waits), only for a
//!   pool whose size followed clients up to the knee and stopped there, as a pool started on
//!   demand does.
//! - **A connection pool known to the process**: when threads of the held pool are parked
//!   beside the held ones (queued for something `/proc` cannot name), or no pool's threads hold
//!   the limit at all (an event loop holds its calls without a thread each), the target's
//!   connections to one downstream peer that stayed at about the limit while the clients grew
//!   past it are the place, *if* the process shows a connection pool the catalogue knows (a
//!   library file it has open or mapped, or the pool's own threads) whose default cap is those
//!   connections. The two together, or nothing: N connections alone are also what a semaphore
//!   of N in front of an unbounded client gives (go-semaphore), and a library alone says
//!   nothing of its size here. The handlers' own setting is then named as the knob not to turn.
//! - **connection-limit**: the connections to the downstream, never more than N at the steps
//!   past the knee while clients grew past N. When clients were left unanswered, the cap is in
//!   front of the target's work instead: a cap its proxy configuration sets on the swept port,
//!   or the target's own accept path, seen holding the clients answered while other
//!   connections waited unaccepted in its listen queue.
//! - **growing-pool**: the pool that grew ([`Fact::GrowingPool`]), at its largest step.
//! - **cpu-bound**: the CPU figure of the plateau, and the busiest pool (most threads running)
//!   when it clearly leads (1.5× the next).
//!
//! Of two pools or more that match, the one whose other threads queue for a lock or a resource
//! is the place (the others follow it: an HTTP client's goroutines, one per connection held).
//! Two pools that match otherwise, or none, name no place: the fact keeps what was seen (the matching
//! pools, or the most held ones, and the connections to the downstream) for the describer.
//! A pool the catalogue knows, by its name or by the frames its threads wait in, gets its
//! setting ([`Catalogue::setting_for`], [`Catalogue::setting_for_frames`]); the catalogue is the
//! one the caller passed in ([`Evidence::catalogue`]).
//!
//! The place is the last stage: it reads the decided kind and changes none. The rules read from
//! the target's connections (a known connection pool, connection-limit's place) are in
//! [`connections`].
mod connections;
pub(crate) use connections::downstream_stopped_at;

use crate::catalogue::Catalogue;
use crate::evidence::Evidence;
use crate::finding::Finding;
use crate::size_rule::UsableCores;
use chokepoint_result::{
    Fact, FrontCap, H2Peer, Kind, ListenQueue, Place, PlaceKind, PlaceSource, PlaceUnclearWhy,
    PoolSeen, PoolStacks, Setting, SharedStack, StackSource, Stated, Step, UpstreamCap, WaitKind,
};
use connections::{
    accept_cap_seen, accept_cap_shed, calls_at_once, configured_front_cap, configured_upstream_cap,
    connection_pool, known_connection_pool, most_downstream_calls, most_downstream_connections,
};

/// A held count matches the limit within this share of it...
const MATCH_SHARE: f64 = 0.15;
/// ...or within this many threads, whichever is wider.
const MATCH_THREADS: f64 = 0.75;
/// A thread is held when it was in the wait more than this share of the time.
const HELD_SHARE: f64 = 0.5;
/// The busiest pool is named for the CPU when it runs this many times the next one's threads.
const BUSIEST_LEAD: f64 = 1.5;
/// A pool started on demand was at most this share of its plateau size before the knee.
const GREW_SHARE: f64 = 0.75;
/// A pool's threads waiting for a lock or a resource are a queue from this share of its held ones.
const QUEUED_SHARE: f64 = 0.1;
/// Pools kept in a [`Fact::PlaceUnclear`] when none matched.
const SEEN_KEPT: usize = 3;

/// Whether `held` threads match a limit of `limit`. A pool holds at least one thread, so a
/// limit below one names none. `held` may be a mean over samples (`/proc`), which counts a
/// thread in the wait for its share of the time: the one worker of a pool of 1 whose calls
/// take 50 ms of its 57 ms per request reads 0.88 (a flake-hunt round's JVM common pool on 2
/// cores). More than half the time in the wait is a thread held.
pub(crate) fn matches_limit(held: f64, limit: f64) -> bool {
    limit >= 1.0 - MATCH_SHARE
        && held > HELD_SHARE
        && (held - limit).abs() <= (limit * MATCH_SHARE).max(MATCH_THREADS)
}

/// `finding` with its place fact after its own facts.
pub(crate) fn with_place(mut finding: Finding, evidence: &Evidence<'_>) -> Finding {
    let dispatchers = crate::actor_dispatcher::settings(evidence.steps, &evidence.context.stated);
    let known = Known {
        catalogue: evidence.catalogue,
        dispatchers: &dispatchers,
        libraries: &evidence.context.target_libraries,
        cores: usable_cores(evidence),
        h2_peers: &evidence.context.h2_peers,
        stated: &evidence.context.stated,
        upstream_caps: &evidence.context.upstream_caps,
        front_caps: &evidence.context.front_caps,
        listen_queue: evidence.context.listen_queue,
    };
    let place = facts(evidence.steps, &finding, &known);
    finding.facts.extend(place);
    finding
}

/// What names a place's setting: the catalogue, the library files the target had open or
/// mapped that it knows, the cores it counts (a default that follows them is evaluated with
/// them), the peers the sweep asked for their HTTP/2 SETTINGS (a stream cap's), and the values
/// its processes were started with that size a pool (`--workers 2`), and its proxies' caps on
/// their upstream servers.
pub(crate) struct Known<'a> {
    pub(crate) catalogue: &'a Catalogue,
    /// Actor systems' own dispatchers, by pool name ([`crate::actor_dispatcher`]).
    pub(crate) dispatchers: &'a [(String, Setting)],
    pub(crate) libraries: &'a [String],
    pub(crate) cores: Option<UsableCores>,
    pub(crate) h2_peers: &'a [H2Peer],
    pub(crate) stated: &'a [Stated],
    pub(crate) upstream_caps: &'a [UpstreamCap],
    /// Its proxies' caps on the client connections a frontend accepts, by port.
    pub(crate) front_caps: &'a [FrontCap],
    /// The accept queue of its listener on the swept port.
    pub(crate) listen_queue: Option<ListenQueue>,
}

impl Known<'_> {
    /// The setting of the pool named `pool`, with its default here: the catalogue's, or an
    /// actor system's dispatcher's.
    fn setting_for(&self, pool: &str) -> Option<Setting> {
        match self.catalogue.entry_for(pool) {
            Some(entry) => Some(entry.setting_on(self.cores.as_ref(), self.stated)),
            None => self
                .dispatchers
                .iter()
                .find(|(name, _)| name == pool)
                .map(|(_, setting)| setting.clone()),
        }
    }

    /// The setting of the thread pool (not a connection pool) one of whose frames is in
    /// `frames`: a pool read from `/proc` whose stacks show its code, not where it waits (a
    /// client's pool in the same frames would be another place).
    fn thread_pool_for_frames(&self, frames: &[String]) -> Option<Setting> {
        Some(
            self.catalogue
                .thread_pool_for_frames(frames)?
                .setting_on(self.cores.as_ref(), self.stated),
        )
    }

    /// The setting of the pool one of whose frames is in `frames`, with its default here.
    fn setting_for_frames(&self, frames: &[String]) -> Option<Setting> {
        Some(
            self.catalogue
                .entry_for_frames(frames)?
                .setting_on(self.cores.as_ref(), self.stated),
        )
    }
}

/// The cores the target counts: the sweep's count of the CPUs, and the smallest CPU quota its
/// group had at a step; `None` when the sweep did not count the CPUs.
fn usable_cores(evidence: &Evidence<'_>) -> Option<UsableCores> {
    Some(UsableCores {
        cpus: evidence.context.cores?,
        quota: evidence
            .steps
            .iter()
            .filter_map(|s| s.cpu_quota.as_ref().map(|q| q.cores))
            .reduce(f64::min),
    })
}

/// The place fact of a finding: none when the kind has no place or the steps past the knee
/// carry no evidence. Settings come from `known`.
pub(crate) fn facts(steps: &[Step], finding: &Finding, known: &Known<'_>) -> Vec<Fact> {
    let Some(knee) = finding.knee_clients else {
        return Vec::new();
    };
    let mut plateau: Vec<&Step> = steps.iter().filter(|s| s.clients >= knee).collect();
    plateau.sort_by_key(|s| s.clients);
    let before: Vec<&Step> = steps.iter().filter(|s| s.clients < knee).collect();
    let place = |place: Place| Fact::Place {
        place: Box::new(place),
    };
    let fact = match (finding.kind, finding.limit) {
        (Kind::BlockingPool | Kind::ErrorBound, Some(limit)) if limit > 0.0 => {
            let told = with_streams(&plateau, &before, limit, known);
            return accept_path_in_front(told, &plateau, limit, known);
        }
        // Clients left unanswered put the cap in front of the target's work: its connections to
        // a downstream then stop at the clients it serves, a consequence, not the place. A cap
        // its configuration sets on the connections it accepts on the swept port, equal to the
        // clients answered, is; else its accepted connections at the clients answered with
        // others waiting unaccepted are; else nothing seen names one (the fact says where such
        // caps sit).
        (Kind::ConnectionLimit, _) if left_clients_unanswered(finding) => {
            configured_front_cap(&plateau, finding.limit, known)
                .or_else(|| accept_cap_seen(&plateau, finding.limit, known))
                .map(place)
        }
        (Kind::ConnectionLimit, _) => connection_pool(&plateau).map(place),
        (Kind::GrowingPool, _) => growing_pool(finding, &plateau, known).map(place),
        (Kind::CpuBound, _) => cpu(&plateau, finding, known).map(place),
        _ => None,
    };
    fact.into_iter().collect()
}

/// A threshold in threads: a pool had a thread free to take a request (idle for a whole
/// thread's share of the step, not one caught between two tasks).
const IDLE_THREAD: f64 = 1.0;

/// A held pool's facts, or the accept path in front of it: when the target's connections past
/// the limit waited unaccepted at every step that asked for more ([`accept_cap_seen`]) while
/// the pool held the limit with a thread or more idle beside the held ones, the requests past
/// the limit never reached the pool. An idle thread takes the next request it is given; with
/// connections waiting unaccepted beside it, nothing gave it one: the queue stood in front of
/// the pool, in the listen queue, and what stopped at the limit is what accepts (Tomcat's
/// `maxConnections`, a connection cap of the server's own). A pool that accepts for itself
/// (pre-fork workers, each calling `accept` when free) has no idle worker while connections
/// wait, and stays the place ([`had_an_idle_thread`] tells its master from an idle thread).
/// With no place at all, the accept path is the place: the connections are direct evidence.
/// Pools that disagreed (`PlaceUnclear`), streams' caps and connection pools (their handlers
/// accept every connection) are left as they were.
fn accept_path_in_front(
    told: Vec<Fact>,
    plateau: &[&Step],
    limit: f64,
    known: &Known<'_>,
) -> Vec<Fact> {
    if let Some(shed) = accept_cap_shed(plateau, limit, known).filter(|_| no_pool_held(&told)) {
        return in_place_of_unclear(told, shed);
    }
    let Some(mut accept) = accept_cap_seen(plateau, Some(limit), known) else {
        return told;
    };
    // Pools that disagreed are left to say so: the accept path would be a third reading.
    if told
        .iter()
        .any(|fact| matches!(fact, Fact::PlaceUnclear { .. }))
    {
        return told;
    }
    let pool = told.iter().find_map(|fact| match fact {
        Fact::Place { place } => Some(place),
        _ => None,
    });
    match pool {
        Some(place)
            if place.kind == Some(PlaceKind::ThreadPool)
                && had_an_idle_thread(place, accept.size.unwrap_or(0.0), plateau, limit) =>
        {
            accept.not_sized_by = place.setting.clone();
            accept.pool_behind = Some(seen_of(place));
        }
        Some(_) => return told,
        None => {}
    }
    in_place_of_unclear(told, accept)
}

/// Whether no pool's threads came near the limit: no place, and no pools that matched it as
/// well as each other. The accept path that sheds ([`accept_cap_shed`]) is then the place, read
/// before the accept path whose queue stood ([`accept_cap_seen`]): closing connections by the
/// thousand a second keeps a few in the listen queue between two accepts, so a server that
/// sheds shows a queue too (Node at `maxConnections` 16: 1.6–7.3 waiting, beside 80,000 resets
/// a step). The shedding is direct evidence (the connections kept and those closed
/// unanswered), and an event loop holds its calls without a thread each; a pool held at the
/// limit too is evidence of its own, and is left as it was.
fn no_pool_held(told: &[Fact]) -> bool {
    told.iter().all(|fact| match fact {
        Fact::Place { .. } => false,
        Fact::PlaceUnclear { why, .. } => *why == PlaceUnclearWhy::NoneMatch,
        _ => true,
    })
}

/// `told` with `place` in place of what it said of the pools (a place, or why there was none).
fn in_place_of_unclear(told: Vec<Fact>, place: Place) -> Vec<Fact> {
    let mut kept: Vec<Fact> = told
        .into_iter()
        .filter(|fact| !matches!(fact, Fact::Place { .. } | Fact::PlaceUnclear { .. }))
        .collect();
    kept.push(Fact::Place {
        place: Box::new(place),
    });
    kept
}

/// Whether the held pool `place` had a thread free beside the held ones at the plateau, while
/// the accept path held `accepted` connections at once.
///
/// A runtime's stacks show a thread idle in its wait for work; this is trusted for runtimes
/// whose servers accept on a thread (goroutine) of their own, apart from the pool that serves
/// (the JVM's: Tomcat's `Acceptor`, Jetty's and Netty's acceptors; Go's
/// `net/http.(*Server).Serve`), never forking workers.
///
/// `/proc` shows the threads beside the held ones, not what they wait for: idle workers, or
/// requests queued inside the process (for a lock, a lease). They are read as idle only when
/// none of the pool's threads is a process's main thread (a pre-fork server's master sleeps
/// beside its busy workers and takes no request; each worker is a process too), and when the
/// connections accepted at once were no more than the calls held (by less than a thread): each
/// request queued inside the process holds an accepted connection, so with none the queue was
/// all in the listen queue, in front of the pool. The calls held are the pool's threads seen in
/// the call, or the most calls the downstream saw at once ([`calls_at_once`]) when more: a
/// sample of threads misses those between two calls (a connection's request being read, its
/// response written, the next connection accepted: Jetty's 16 connections held 14 threads in
/// the call in one sweep on a busy machine, while the mock saw 16 at once), and a gate inside
/// the process in front of the call (a lease, a semaphore) keeps the downstream's count below
/// the accepted connections at every moment.
fn had_an_idle_thread(place: &Place, accepted: f64, plateau: &[&Step], limit: f64) -> bool {
    let held = place.held.unwrap_or(0.0);
    let spare = place.size.unwrap_or(0.0) - held >= IDLE_THREAD;
    match place.source {
        Some(PlaceSource::Stacks(
            StackSource::JcmdThreadPrint
            | StackSource::JcmdVirtualThreads
            | StackSource::Jfr
            | StackSource::Pprof,
        )) => spare,
        Some(PlaceSource::Proc) => {
            let calls_held = calls_at_once(plateau, limit).map_or(held, |calls| calls.max(held));
            spare
                && accepted < calls_held + IDLE_THREAD
                && place
                    .pool
                    .as_deref()
                    .is_some_and(|name| threads_of_one_process(name, plateau))
        }
        _ => false,
    }
}

/// Whether `/proc`'s pool `name` was threads, none of them a process's main thread, at every
/// plateau step (`false` for steps recorded before main threads were counted).
fn threads_of_one_process(name: &str, plateau: &[&Step]) -> bool {
    !plateau.is_empty()
        && plateau.iter().all(|step| {
            step.threads_by_pool
                .as_ref()
                .and_then(|t| t.pools.iter().find(|p| p.pool == name))
                .is_some_and(|pool| pool.main_threads == Some(0.0))
        })
}

/// Whether the finding read clients the target never answered ([`Fact::ClientsUnanswered`]).
fn left_clients_unanswered(finding: &Finding) -> bool {
    finding
        .facts
        .iter()
        .any(|fact| matches!(fact, Fact::ClientsUnanswered { .. }))
}

/// A held pool's place (below), after what the mock's HTTP/2 counts (or a peer's SETTINGS) say
/// of the stream cap ([`crate::stream_cap`]): the cap is the place when the calls stopped at
/// the streams the target's connections allow and no pool's threads held the limit too; a pool
/// held at the limit as well (or a second peer's cap) is direct evidence of its own, and the
/// two name no one place.
fn with_streams(plateau: &[&Step], before: &[&Step], limit: f64, known: &Known<'_>) -> Vec<Fact> {
    let streams = crate::stream_cap::read(plateau, limit, known.h2_peers);
    let mut told: Vec<Fact> = streams.iter().map(|s| s.fact()).collect();
    let pool = held_pool(plateau, before, limit, known);
    let caps: Vec<Place> = streams.iter().filter_map(|s| s.place()).collect();
    if caps.is_empty() {
        told.extend(pool);
        return told;
    }
    // Threads `/proc` saw parked in `futex` are the weakest reading it gives: an idle worker
    // parks so too (a Go runtime's idle threads, whose goroutines are no threads at all), and
    // the tier that reads them asks only that the pool stopped growing at the knee. The stream
    // counts are direct evidence (every stream counted, the cap the server enforced or sent):
    // they outrank it. A pool seen holding calls on the network stays a rival.
    let pool = pool.filter(|fact| !parked_in_futex(fact));
    // A pool held at the limit comes first among those seen, the caps after it.
    let mut matching: Vec<Place> = match pool {
        Some(Fact::Place { place }) => vec![*place],
        _ => Vec::new(),
    };
    matching.extend(caps);
    if matching.len() == 1 {
        told.extend(matching.pop().map(|place| Fact::Place {
            place: Box::new(place),
        }));
        return told;
    }
    told.push(Fact::PlaceUnclear {
        clients: matching.last().map_or(0, |cap| cap.clients),
        limit,
        why: PlaceUnclearWhy::SeveralMatch,
        seen: matching.iter().map(seen_of).collect(),
        downstream_connections: most_downstream_connections(plateau).map(|(_, _, n)| n),
        downstream_calls: most_downstream_calls(plateau),
        stacks: plateau
            .iter()
            .find_map(|s| s.stacks.as_ref().and_then(|st| st.source)),
        setting: None,
    });
    told
}

/// Whether a place fact is a `/proc` pool read from its threads parked in `futex`.
fn parked_in_futex(fact: &Fact) -> bool {
    matches!(fact, Fact::Place { place }
        if place.source == Some(PlaceSource::Proc) && place.waiting == Some(WaitKind::Lock))
}

/// A place as one of several seen to match the limit.
fn seen_of(place: &Place) -> PoolSeen {
    PoolSeen {
        pool: match place.kind {
            Some(PlaceKind::StreamCap) => STREAMS_SEEN.to_string(),
            _ => place.pool.clone().unwrap_or_default(),
        },
        threads: place.size.unwrap_or(0.0),
        held: place.held.unwrap_or(0.0),
        waiting: place.waiting,
        source: place.source,
        frames: place.frames.clone(),
    }
}

/// The name a stream cap goes by among places seen ([`PoolSeen::pool`]).
pub(crate) const STREAMS_SEEN: &str = "HTTP/2 streams";

/// A pool held at one step: what the decision compares with the limit.
#[derive(Debug, Clone)]
struct Held {
    clients: u32,
    seen: PoolSeen,
    /// Others of the pool waiting to get in: for a lock, a permit or a pool's resource (stacks
    /// only).
    queued: Option<SharedStack>,
    /// `/proc`'s threads in the wait that did not follow the load, left out of `held`.
    background: Option<f64>,
    /// `/proc`: the pool's threads parked in `futex` beside those held on the network (the
    /// mean over the samples); 0 otherwise (the stacks tell a queue by its frames: `queued`).
    parked_elsewhere: f64,
    /// `/proc`: the frames the runtime's stacks showed for the same pool at the same step,
    /// whatever its threads did there ([`frames_of_any`]); empty otherwise.
    frames_beside: Vec<String>,
    /// `/proc`: of the same pool in the runtime's stacks at the same step, the threads not
    /// idle (not in the pool's wait for work); `None` without stacks of it.
    busy_in_dump: Option<f64>,
    syscall: Option<String>,
    snapshots: Option<u32>,
    recording_s: Option<f64>,
}

impl Held {
    /// Whether `/proc` saw threads of the pool parked beside the held ones, beyond those parked
    /// already at the fewest clients: queued for something (see `into_place`).
    fn parked_beside(&self) -> bool {
        self.parked_elsewhere >= (QUEUED_SHARE * self.seen.held).max(1.0)
    }

    /// Whether every thread of the pool (less those that did not follow the load) was held:
    /// a pool that is the limit has no thread to spare. One with threads beyond the held ones
    /// has spares or a queue, and `/proc` cannot tell which when they were there from the
    /// fewest clients (a pool started whole, or grown during the warm-up: java-httpclient5's
    /// 20 handlers, 5 in the call, 15 parked at every step).
    fn fully_held(&self) -> bool {
        let threads = self.seen.threads - self.background.unwrap_or(0.0);
        matches_limit(self.seen.held, threads)
    }

    /// The place this pool is, with the catalogue's setting when it knows the pool by its name
    /// or by the frames its threads wait in. With threads queued in front of a resource, the
    /// limit is that resource (a connection pool, a semaphore), not the pool of threads that
    /// queue for it: its frames are asked first.
    fn into_place(self, known: &Known<'_>) -> Place {
        let by_queue = || known.setting_for_frames(&self.queued.as_ref()?.frames);
        let by_pool = || {
            known
                .setting_for(&self.seen.pool)
                .or_else(|| known.setting_for_frames(&self.seen.frames))
                .or_else(|| known.thread_pool_for_frames(&self.frames_beside))
        };
        // A pool's own setting is the knob only when nothing else holds its threads back.
        // Threads queued for a resource beside the held ones (the stacks' `queued`) make the
        // resource the limit. From /proc, the same shows as threads of the pool parked in
        // futex beside those on the network: past the knee a pool that is the limit has no
        // thread to spare (a spare one would take a queued request), so threads parked there
        // beyond those parked already at the fewest clients are queued for something (a
        // client's connection, a lock). Threads running are the pool
        // at work (PHP-FPM's children run PHP between calls) and do not count against it.
        // Raising a pool whose threads queue elsewhere adds threads that wait too: a wrong
        // knob, worse than none.
        let (setting, not_sized_by) = match self.queued {
            // The held ones' frames may name the same pool (pgxpool's Exec around both the
            // query and the wait for a connection): then it is the knob, not one to leave.
            Some(_) => {
                let setting = by_queue();
                let pool = by_pool().filter(|pool| Some(pool) != setting.as_ref());
                (setting, pool)
            }
            None if !self.parked_beside() => (by_pool(), None),
            None => (None, by_pool()),
        };
        let kind = match self.queued.as_ref().and_then(|q| q.waiting) {
            Some(WaitKind::PoolAcquire) => PlaceKind::ConnectionPool,
            Some(_) => PlaceKind::Semaphore,
            None => PlaceKind::ThreadPool,
        };
        Place {
            kind: Some(kind),
            pool: Some(self.seen.pool),
            size: Some(self.seen.threads),
            held: Some(self.seen.held),
            waiting: self.seen.waiting,
            frames: self.seen.frames,
            clients: self.clients,
            source: self.seen.source,
            background: self.background,
            busy_in_dump: self
                .busy_in_dump
                .filter(|_| self.seen.waiting == Some(WaitKind::Lock)),
            syscall: self.syscall,
            snapshots: self.snapshots,
            recording_s: self.recording_s,
            setting,
            not_sized_by,
            queued: self.queued,
            ..Place::default()
        }
    }
}

/// For each pool, the step where `held` counted most of its threads (the fewest clients on a
/// tie), with what `held` read there; pools that held none are left out. Of two steps that
/// held about as many (within the match tolerance), the one whose stacks show the pool's other
/// threads queued wins: a dump is one instant, and at one step the requests waiting for the
/// held ones may be in transit (tests/targets/java-httpclient5 at twice its 5 connections: 5
/// in the call, 15 idle, no queue in that dump; 5 and 15 queued for a lease at four times).
fn most_held<'s>(plateau: &[&'s Step], held: impl Fn(&'s Step) -> Vec<Held>) -> Vec<Held> {
    let close = |a: f64, b: f64| (a - b).abs() <= (a.max(b) * MATCH_SHARE).max(MATCH_THREADS);
    let better = |one: &Held, than: &Held| {
        if close(one.seen.held, than.seen.held) && one.queued.is_some() != than.queued.is_some() {
            one.queued.is_some()
        } else {
            one.seen.held > than.seen.held
        }
    };
    let mut best: Vec<Held> = Vec::new();
    for step in plateau {
        for one in held(step) {
            if one.seen.held <= 0.0 {
                continue;
            }
            match best.iter_mut().find(|b| b.seen.pool == one.seen.pool) {
                Some(b) if better(&one, b) => *b = one,
                Some(_) => {}
                None => best.push(one),
            }
        }
    }
    best.sort_by(|a, b| {
        b.seen
            .held
            .total_cmp(&a.seen.held)
            .then(a.seen.pool.cmp(&b.seen.pool))
    });
    best
}

/// The frames most of `pool`'s threads doing `kind` shared.
fn frames_of(pool: &PoolStacks, kind: WaitKind) -> Vec<String> {
    pool.stacks
        .iter()
        .filter(|s| s.waiting == Some(kind))
        .max_by(|a, b| a.threads.total_cmp(&b.threads))
        .map(|s| s.frames.clone())
        .unwrap_or_default()
}

/// Whether `stack` is another state inside the call whose frames are `call` (its innermost
/// frames, with maybe one more inside: the GIL a thread waits for to go on).
fn inside(stack: &SharedStack, call: &[String]) -> bool {
    stack.waiting != Some(WaitKind::Downstream)
        && !call.is_empty()
        && stack.frames.ends_with(call)
        && stack.frames.len() <= call.len() + 1
}

/// The largest group of `pool`'s threads waiting to get in beside the `held` ones: for a lock
/// or a pool's resource, at least one thread and a tenth of the held ones (a thread passing
/// through a lock is not a queue).
fn queued(pool: &PoolStacks, held: f64, call: &[String]) -> Option<SharedStack> {
    pool.stacks
        .iter()
        .filter(|s| matches!(s.waiting, Some(WaitKind::Lock | WaitKind::PoolAcquire)))
        .filter(|s| !inside(s, call))
        .filter(|s| s.threads >= (QUEUED_SHARE * held).max(1.0))
        .max_by(|a, b| a.threads.total_cmp(&b.threads))
        .cloned()
}

/// The runtime's view of one pool held in `kind` at `step`.
fn stacks_held(step: &Step, pool: &PoolStacks, kind: WaitKind) -> Held {
    let stacks = step.stacks.as_ref();
    let frames = frames_of(pool, kind);
    let in_call = |stack: &SharedStack| kind == WaitKind::Downstream && inside(stack, &frames);
    // A slot is held from the call's start to its end: a dump that catches a thread inside the
    // call on a CPU (reading the answer) or waiting for the GIL to go on with it still shows
    // the slot held (py-threadpool's 6 workers read 5 in the socket and 1 on the GIL).
    let held = pool.threads_in(kind)
        + pool
            .stacks
            .iter()
            .filter(|s| in_call(s))
            .map(|s| s.threads)
            .sum::<f64>();
    let queued = (kind == WaitKind::Downstream)
        .then(|| queued(pool, held, &frames))
        .flatten();
    Held {
        clients: step.clients,
        seen: PoolSeen {
            pool: pool.pool.clone(),
            threads: pool.threads,
            held,
            waiting: Some(kind),
            source: stacks.and_then(|s| s.source).map(PlaceSource::Stacks),
            frames,
        },
        queued,
        background: None,
        parked_elsewhere: 0.0,
        frames_beside: Vec::new(),
        busy_in_dump: None,
        syscall: None,
        snapshots: stacks.map(|s| s.snapshots).filter(|n| *n > 0),
        recording_s: stacks.and_then(|s| s.recording_s),
    }
}

/// Each pool's held threads in one of `kinds`, from the runtime's stacks (the kind with the
/// most threads, per pool).
fn from_stacks(plateau: &[&Step], kinds: &[WaitKind]) -> Vec<Held> {
    most_held(plateau, |step| {
        let Some(stacks) = &step.stacks else {
            return Vec::new();
        };
        stacks
            .pools
            .iter()
            .filter_map(|pool| {
                kinds
                    .iter()
                    .map(|kind| stacks_held(step, pool, *kind))
                    .max_by(|a, b| a.seen.held.total_cmp(&b.seen.held))
            })
            .collect()
    })
}

/// How `/proc` counts a pool's threads held in a wait (or running, for the CPU).
#[derive(Debug, Clone, Copy, PartialEq)]
enum ProcWait {
    Socket,
    Futex,
    /// Not a wait: on a CPU or ready to run.
    Running,
}

/// Each pool's threads in `wait` from `/proc`: the mean over the samples, which counts the
/// threads held through the step rather than those passing through the wait. A network wait's
/// threads that did not follow the load are set aside ([`background`]).
fn from_proc(plateau: &[&Step], before: &[&Step], wait: ProcWait) -> Vec<Held> {
    most_held(plateau, |step| {
        let Some(threads) = &step.threads_by_pool else {
            return Vec::new();
        };
        threads
            .pools
            .iter()
            .map(|pool| {
                let dumped = same_pool_in_dump(step, &pool.pool);
                let parked = match wait {
                    ProcWait::Socket => {
                        (pool.mean.lock_wait - parked_already(&pool.pool, before)).max(0.0)
                    }
                    ProcWait::Futex | ProcWait::Running => 0.0,
                };
                let (held, waiting, background, syscall) = match wait {
                    ProcWait::Socket => {
                        let background = background(&pool.pool, before);
                        let syscall = pool
                            .waits_on
                            .iter()
                            .find(|w| w.on != "futex")
                            .map(|w| w.on.clone());
                        let held = (pool.mean.socket_wait - background).max(0.0);
                        (held, WaitKind::Downstream, background, syscall)
                    }
                    ProcWait::Futex => (
                        pool.mean.lock_wait,
                        WaitKind::Lock,
                        0.0,
                        Some("futex".to_string()),
                    ),
                    ProcWait::Running => (pool.mean.running, WaitKind::Running, 0.0, None),
                };
                Held {
                    clients: step.clients,
                    seen: PoolSeen {
                        pool: pool.pool.clone(),
                        threads: pool.most.threads,
                        held,
                        waiting: Some(waiting),
                        source: Some(PlaceSource::Proc),
                        frames: Vec::new(),
                    },
                    queued: None,
                    background: (background > 0.0).then_some(background),
                    parked_elsewhere: parked,
                    frames_beside: dumped.map_or(Vec::new(), frames_of_any),
                    busy_in_dump: dumped.map(busy_of),
                    syscall,
                    snapshots: None,
                    recording_s: None,
                }
            })
            .collect()
    })
}

/// Every frame the runtime's stacks showed for a pool, whatever its threads were doing: for a
/// pool `/proc` placed, what its code is. A JVM carrier thread pinned by a virtual thread shows
/// only `jdk.internal.vm.Continuation.run`, which tells the pool is the virtual threads'
/// scheduler.
fn frames_of_any(pool: &PoolStacks) -> Vec<String> {
    pool.stacks.iter().flat_map(|s| s.frames.clone()).collect()
}

/// A pool's threads the runtime's stacks showed busy: not in its wait for work.
fn busy_of(pool: &PoolStacks) -> f64 {
    pool.stacks
        .iter()
        .filter(|s| s.waiting != Some(WaitKind::Idle))
        .map(|s| s.threads)
        .sum()
}

/// The one pool of the runtime's stacks at `step` that is `/proc`'s pool `name`: of that name,
/// or the one whose names come out as it once Linux cut them to 15 bytes and the observer
/// stripped the counter (`ForkJoinPool-1-worker` is `/proc`'s `ForkJoinPool-1`), as the
/// catalogue's patterns meet `/proc`'s names ([`crate::pool_pattern`]).
/// A dumped name holding a pattern's `#` or `*` is compared whole only.
fn same_pool_in_dump<'s>(step: &'s Step, name: &str) -> Option<&'s PoolStacks> {
    let comes_out_as = |dumped: &str| {
        !dumped.contains(['#', '*'])
            && crate::pool_pattern::Pattern::new(dumped).is_ok_and(|p| p.matches_pool(name))
    };
    let mut same = step
        .stacks
        .as_ref()?
        .pools
        .iter()
        .filter(|p| p.pool == name || comes_out_as(&p.pool));
    let one = same.next()?;
    same.next().is_none().then_some(one)
}

/// Whether `/proc`'s threads of a pool parked in `futex` were held: the runtime's stacks of the
/// same step showed as many of its threads busy (not in its wait for work). An idle worker
/// parks in `futex` too, and `/proc` cannot tell the two; the dump can. A JVM carrier parked
/// while the dump shows it carrying a virtual thread is one that virtual thread pinned: an
/// unpinned one unmounts when it parks, and its carrier goes back to the pool's wait for
/// work (JEP 444, "Pinning").
fn busy_in_dump(held: &Held) -> bool {
    held.busy_in_dump
        .is_some_and(|busy| matches_limit(busy, held.seen.held))
}

/// The threads of `/proc`'s pool `name` in a network wait that did not follow the load: at the
/// fewest clients observed before the knee, those beyond one per client (an accept loop, a
/// listener polling its socket), in whole threads.
pub(crate) fn background(name: &str, before: &[&Step]) -> f64 {
    background_beside_calls(name, before, |step| f64::from(step.clients))
}

/// The threads of `/proc`'s pool `name` in a network wait at the fewest clients of `before`,
/// less `calls` there (the threads the load itself kept in a network wait), in whole threads.
pub(crate) fn background_beside_calls(
    name: &str,
    before: &[&Step],
    calls: impl Fn(&Step) -> f64,
) -> f64 {
    at_fewest_clients(name, before).map_or(0.0, |(step, pool)| {
        (pool.mean.socket_wait - calls(step)).round().max(0.0)
    })
}

/// `/proc`'s pool `name` at the fewest clients observed before the knee, with that step.
fn at_fewest_clients<'s>(
    name: &str,
    before: &[&'s Step],
) -> Option<(&'s Step, &'s chokepoint_result::PoolThreads)> {
    let (step, threads) = before
        .iter()
        .filter_map(|step| Some((*step, step.threads_by_pool.as_ref()?)))
        .min_by_key(|(step, _)| step.clients)?;
    Some((step, threads.pools.iter().find(|p| p.pool == name)?))
}

/// The threads of `/proc`'s pool `name` parked in `futex` at the fewest clients observed before
/// the knee: those that park whatever the load (a pre-fork master, an idle helper, a pool's
/// pre-started spare threads), which say nothing of a queue. Only the parked threads that came
/// with the load are threads queued for something (gunicorn's processes under /proc alone had
/// one parked at every step, and lost `--workers` to the knob guard before this).
fn parked_already(name: &str, before: &[&Step]) -> f64 {
    at_fewest_clients(name, before).map_or(0.0, |(_, pool)| pool.mean.lock_wait.round())
}

/// Whether `/proc`'s pool `name` followed clients before the knee and stopped there: smaller
/// (≤ 75%) at some step before it, about the same size at every step past it.
fn grew_until_the_knee(name: &str, plateau: &[&Step], before: &[&Step]) -> bool {
    let size = |step: &&Step| {
        step.threads_by_pool
            .as_ref()?
            .pools
            .iter()
            .find(|p| p.pool == name)
            .map(|p| p.most.threads)
    };
    let past: Vec<f64> = plateau.iter().filter_map(size).collect();
    let (Some(low), Some(high)) = (
        past.iter().copied().reduce(f64::min),
        past.iter().copied().reduce(f64::max),
    ) else {
        return false;
    };
    let steady = matches_limit(low, high);
    let grew = before
        .iter()
        .filter(|s| s.threads_by_pool.is_some())
        .any(|s| size(s).unwrap_or(0.0) <= GREW_SHARE * low);
    steady && grew
}

/// A pool held at about the limit: from the stacks when they name one, else from `/proc`.
fn held_pool(plateau: &[&Step], before: &[&Step], limit: f64, known: &Known<'_>) -> Option<Fact> {
    let observed = plateau
        .iter()
        .any(|s| s.stacks.is_some() || s.threads_by_pool.is_some());
    if !observed {
        return None;
    }
    let tiers: [Vec<Held>; 4] = [
        from_stacks(plateau, &[WaitKind::Downstream]),
        from_stacks(plateau, &[WaitKind::Lock, WaitKind::PoolAcquire]),
        from_proc(plateau, before, ProcWait::Socket),
        from_proc(plateau, before, ProcWait::Futex)
            .into_iter()
            .filter(|held| {
                grew_until_the_knee(&held.seen.pool, plateau, before) || busy_in_dump(held)
            })
            .collect(),
    ];
    for tier in &tiers {
        let matching: Vec<&Held> = tier
            .iter()
            .filter(|h| matches_limit(h.seen.held, limit))
            .collect();
        // Of several, the one pool whose other threads queue for a lock or a resource is the
        // gate; the rest follow it (an HTTP client's goroutines, one per connection it holds).
        let gates: Vec<&Held> = matching
            .iter()
            .copied()
            .filter(|h| h.queued.is_some())
            .collect();
        let matching = if matching.len() > 1 && gates.len() == 1 {
            gates
        } else {
            matching
        };
        match matching.as_slice() {
            [] => continue,
            // Threads of the pool parked beside those on the network queue for something
            // /proc cannot name, or are spares it cannot tell from a queue; a connection pool
            // the process shows, whose default cap is the connections seen, is that
            // something. A pool whose every thread is held stays the place (direct evidence).
            [one] if one.queued.is_none() && (one.parked_beside() || !one.fully_held()) => {
                return Some(match known_connection_pool(plateau, limit, known) {
                    Some(mut pool) => {
                        pool.queued_threads = Some(one.seen.clone());
                        pool.not_sized_by = known.setting_for(&one.seen.pool);
                        Fact::Place {
                            place: Box::new(pool),
                        }
                    }
                    None => unless_its_setting_disagrees(plateau, limit, one, known),
                });
            }
            [one] => return Some(unless_its_setting_disagrees(plateau, limit, one, known)),
            several => {
                return Some(unclear(
                    plateau,
                    limit,
                    PlaceUnclearWhy::SeveralMatch,
                    several.iter().map(|h| (*h).clone()).collect(),
                ))
            }
        }
    }
    // No pool's threads held the limit (an event loop holds its calls without a thread each):
    // a connection pool the process shows, whose default cap is the connections seen, or a
    // proxy's configured cap on the upstream its connections went to.
    if let Some(pool) = known_connection_pool(plateau, limit, known)
        .or_else(|| configured_upstream_cap(plateau, limit, known))
    {
        return Some(Fact::Place {
            place: Box::new(pool),
        });
    }
    // None matched: the most held pools of the best evidence there was.
    let seen = if plateau.iter().any(|s| s.stacks.is_some()) {
        from_stacks(
            plateau,
            &[WaitKind::Downstream, WaitKind::Lock, WaitKind::PoolAcquire],
        )
    } else {
        tiers[2].clone()
    };
    Some(unclear(
        plateau,
        limit,
        PlaceUnclearWhy::NoneMatch,
        seen.into_iter().take(SEEN_KEPT).collect(),
    ))
}

/// The place `one` is, unless its processes state a size that is not what it held: gunicorn
/// started with `--workers 2 --threads 4` takes 8 calls at once, so 4 held at the limit say
/// the 8 are not what stops it (4 of them wait elsewhere, or idle behind a gate in front of
/// them). Its setting is then a wrong knob: the finding says what it saw and names none. The
/// held count is a mean over samples, read with the same tolerance as against the limit.
fn unless_its_setting_disagrees(
    plateau: &[&Step],
    limit: f64,
    one: &Held,
    known: &Known<'_>,
) -> Fact {
    let mut place = one.clone().into_place(known);
    if let (Some(generic), Some(stated)) = (&place.setting, stated_for(plateau, one, known)) {
        if generic.stated_here.is_none() {
            place.setting = Some(stated);
        }
    }
    let disagrees = |setting: &Setting| stated_is_held(setting, one.seen.held) == Some(false);
    match place.setting.as_ref().filter(|s| disagrees(s)) {
        Some(setting) => {
            let setting = Box::new(setting.clone());
            let why = PlaceUnclearWhy::SettingDisagrees;
            let mut fact = unclear(plateau, limit, why, vec![one.clone()]);
            if let Fact::PlaceUnclear { setting: told, .. } = &mut fact {
                *told = Some(setting);
            }
            fact
        }
        None => Fact::Place {
            place: Box::new(place),
        },
    }
}

/// The setting of a pool `/proc` saw at the plateau whose processes state a size that is what
/// `one` held (gunicorn's processes, started with `--workers 2 --threads 4`, when py-spy holds
/// 8 of the `ThreadPoolExecutor-0` each gthread worker makes with `max_workers=threads`).
/// Values the processes were started with that give exactly the calls held are the service's
/// own statement of its size: they name the knob over an entry matched by a name any code may
/// give its pool (CPython names every unnamed executor so).
fn stated_for(plateau: &[&Step], one: &Held, known: &Known<'_>) -> Option<Setting> {
    plateau
        .iter()
        .filter_map(|step| step.threads_by_pool.as_ref())
        .flat_map(|threads| &threads.pools)
        .filter(|pool| pool.pool != one.seen.pool)
        .filter_map(|pool| known.setting_for(&pool.pool))
        .find(|setting| stated_is_held(setting, one.seen.held) == Some(true))
}

/// Whether the size a setting's processes state is the `held` count (a mean over samples, so
/// with the place's tolerance); `None` when they state none.
fn stated_is_held(setting: &Setting, held: f64) -> Option<bool> {
    let stated = setting.stated_here.as_ref()?;
    Some(matches_limit(held, f64::from(stated.size)))
}

/// The fact for evidence that named no one place.
fn unclear(plateau: &[&Step], limit: f64, why: PlaceUnclearWhy, held: Vec<Held>) -> Fact {
    let clients = held
        .first()
        .map(|h| h.clients)
        .or_else(|| plateau.last().map(|s| s.clients))
        .unwrap_or(0);
    Fact::PlaceUnclear {
        clients,
        limit,
        why,
        seen: held.into_iter().map(|h| h.seen).collect(),
        downstream_connections: most_downstream_connections(plateau).map(|(_, _, n)| n),
        downstream_calls: most_downstream_calls(plateau),
        stacks: plateau
            .iter()
            .find_map(|s| s.stacks.as_ref().and_then(|st| st.source)),
        setting: None,
    }
}

/// The pool that grew instead of queueing, at its largest step, as the growing-pool rule read
/// it from `/proc`; named as the runtime's stacks name it when they show the same pool (Linux
/// cuts `RxCachedThreadScheduler-7` to `RxCachedThreadS`), or, where the runtime names no OS
/// thread and `/proc` sees the whole process as one pool (CPython: every thread `python3`),
/// the one dumped pool that holds the threads the load added ([`dumped_pool_that_grew`]).
fn growing_pool(finding: &Finding, plateau: &[&Step], known: &Known<'_>) -> Option<Place> {
    finding.facts.iter().find_map(|fact| match fact {
        Fact::GrowingPool {
            pool,
            clients,
            threads,
            ..
        } => {
            let mut place = Place {
                kind: Some(PlaceKind::GrowingPool),
                pool: Some(pool.clone()),
                size: threads.last().copied(),
                clients: clients.last().copied().unwrap_or(0),
                source: Some(PlaceSource::Proc),
                ..Place::default()
            };
            for step in plateau.iter().rev() {
                if let Some(same) = same_pool_in_dump(step, pool) {
                    // The same threads under their full name: `/proc` counted them all.
                    place.pool = Some(same.pool.clone());
                    break;
                }
                let Some(dumped) = dumped_pool_that_grew(step, pool, clients, threads) else {
                    continue;
                };
                // Only the dump tells these threads from the process's others: its count and
                // step are the pool's (256 `AnyIO worker thread`s, not /proc's 257 `python3`).
                place.pool = Some(dumped.pool.clone());
                place.size = Some(dumped.threads);
                place.clients = step.clients;
                if let Some(stacks) = &step.stacks {
                    place.source = stacks.source.map(PlaceSource::Stacks);
                    place.snapshots = Some(stacks.snapshots);
                }
                break;
            }
            let name = place.pool.clone().unwrap_or_default();
            place.setting = known.setting_for(&name).or_else(|| known.setting_for(pool));
            Some(place)
        }
        _ => None,
    })
}

/// The pool of `step`'s dump that holds the threads the load added to `/proc`'s pool `pool`,
/// from that pool's threads per step (`clients`, `threads`), as [`grown_in_dump`] reads it.
pub(crate) fn dumped_pool_that_grew<'s>(
    step: &'s Step,
    pool: &str,
    clients: &[u32],
    threads: &[f64],
) -> Option<&'s PoolStacks> {
    let at = clients.iter().position(|&c| c == step.clients)?;
    let (&fewest, &at_fewest) = (clients.first()?, threads.first()?);
    // What stood at the fewest clients beside a thread per client: the process's own threads
    // (the main thread, an event loop).
    let own = (at_fewest - f64::from(fewest)).max(0.0);
    grown_in_dump(step, pool, threads.get(at)? - own)
}

/// The one pool of `step`'s dump that holds the `grown` threads the load added to `/proc`'s
/// pool `name` (within [`matches_limit`]), when `/proc`'s pool holds its process's main thread
/// and no dumped pool is `name`: the runtime gave its threads no OS name of their own, so
/// `/proc` cannot tell them apart, and the dumped pool with the threads that grew is the pool
/// that grew. A JVM names its threads: there `/proc`'s pool is never the main thread's, and a
/// dumped pool of another name is another pool. Another dumped pool as large leaves it unnamed.
fn grown_in_dump<'s>(step: &'s Step, name: &str, grown: f64) -> Option<&'s PoolStacks> {
    let holds_the_main_thread = step.threads_by_pool.as_ref().is_some_and(|observed| {
        observed
            .pools
            .iter()
            .any(|p| p.pool == name && p.main_threads.is_some_and(|main| main >= 1.0))
    });
    let pools = &step.stacks.as_ref()?.pools;
    if !holds_the_main_thread || pools.iter().any(|p| p.pool == name) {
        return None;
    }
    let mut holding = pools.iter().filter(|p| matches_limit(p.threads, grown));
    let one = holding.next()?;
    holding.next().is_none().then_some(one)
}

/// The CPU at the plateau, as the diagnosis read it.
fn plateau_cpu(finding: &Finding) -> Option<f64> {
    finding.facts.iter().find_map(|fact| match fact {
        Fact::CpuSaturated { target_cpu_pct, .. } | Fact::CoresBusy { target_cpu_pct, .. } => {
            Some(*target_cpu_pct)
        }
        Fact::CpuPerRequest {
            plateau_cpu_pct, ..
        } => Some(*plateau_cpu_pct),
        _ => None,
    })
}

/// Each pool's running threads past the knee: from the stacks when there are, else `/proc`
/// (the mean over the samples).
fn running(plateau: &[&Step]) -> Vec<Held> {
    if plateau.iter().any(|s| s.stacks.is_some()) {
        return from_stacks(plateau, &[WaitKind::Running]);
    }
    from_proc(plateau, &[], ProcWait::Running)
}

/// The CPU, with the busiest pool when one clearly leads.
fn cpu(plateau: &[&Step], finding: &Finding, known: &Known<'_>) -> Option<Place> {
    let cpu_pct = plateau_cpu(finding);
    let pools = running(plateau);
    let busiest = match pools.as_slice() {
        [first, rest @ ..]
            if first.seen.held >= 0.5
                && rest
                    .first()
                    .is_none_or(|next| first.seen.held >= BUSIEST_LEAD * next.seen.held) =>
        {
            Some(first.clone())
        }
        _ => None,
    };
    if cpu_pct.is_none() && busiest.is_none() {
        return None;
    }
    let from = plateau.first()?.clients;
    let mut place = match busiest {
        Some(held) => held.into_place(known),
        None => Place {
            clients: from,
            source: Some(PlaceSource::Proc),
            ..Place::default()
        },
    };
    place.kind = Some(PlaceKind::Cpu);
    place.cpu_pct = cpu_pct;
    if let Some(quota) = finding.facts.iter().find_map(|fact| match fact {
        Fact::CpuQuota { quota_cores, .. } => Some(*quota_cores),
        _ => None,
    }) {
        place.cpu_quota = Some(quota);
        place.setting = Some(quota_setting());
    }
    Some(place)
}

/// The knob of a CFS quota: the container's or the pod's CPU limit.
fn quota_setting() -> Setting {
    Setting {
        framework: "the kernel's CFS bandwidth control (a container's or a pod's CPU limit)".into(),
        setting: "docker run --cpus N; Kubernetes resources.limits.cpu; the group's cpu.max (v2) or cpu.cfs_quota_us (v1)".into(),
        default: "no quota".into(),
        source: "https://github.com/torvalds/linux/blob/9d7da69a1e85db2cdbbaae78dd7eda4eeaa1eb1c/Documentation/scheduler/sched-bwc.rst".into(),
        ..Setting::default()
    }
}

#[cfg(test)]
mod tests;
