//! The place in words: the evidence sentence of a [`Fact::Place`] or a [`Fact::PlaceUnclear`],
//! its short line for the first screen and its rank there, and the one-line `attribution` of the
//! JSON, all rendered from the typed place ([`crate::place`] decides it). Which tool the evidence came from is said
//! every time: `/proc` sees a thread blocked on the network or parked in `futex`, a runtime's
//! stacks see the call.
use super::Teller;
use crate::finding::Finding;
use chokepoint_result::format::{clients, concurrency, count};
use chokepoint_result::{
    CoreCount, DefaultHere, Fact, Kind, Place, PlaceKind, PlaceSource, PlaceUnclearWhy, PoolSeen,
    Setting, StackSource, Stated, StatedHere, StatedIn, WaitKind,
};

/// The words of the place's facts; their key line comes right after a kind's headline.
pub(super) const TELLER: Teller = Teller {
    sentences: |fact, finding| sentence(fact, finding).into_iter().collect(),
    short: |fact, _| short(fact),
    rank: |_: Kind, fact| match fact {
        Fact::Place { .. } | Fact::PlaceUnclear { .. } => Some(1),
        _ => None,
    },
};

/// Frames named in a sentence, innermost first.
const FRAMES_TOLD: usize = 3;

/// The one-line `attribution`: where the limit sits, with the setting when known.
pub fn attribution(place: &Place) -> String {
    let mut line = where_line(place);
    if let (Some(server), Some(client)) = (&place.setting, &place.client_setting) {
        // A peer asked for its SETTINGS is named with its own setting; the mock's lists many.
        let streams = match place.source {
            Some(PlaceSource::PeerSettings) => {
                format!("`{}` of {}", server.setting, server.framework)
            }
            _ => "the downstream's streams per connection".to_string(),
        };
        line.push_str(&format!(
            "; its size: {streams} ({}) × the client's connections ({})",
            seen_and_default(place.stream_cap, server),
            seen_and_default(place.h2_connections, client)
        ));
        return line;
    }
    if let Some(setting) = &place.setting {
        line.push_str(&format!(
            "; its size: `{}` (default {})",
            setting.setting,
            default_told(setting)
        ));
    }
    line
}

/// A setting's default as told: its rule with what it gives on the target (`max(4, cpus) = 4
/// on 2 CPUs`) when it follows the cores, else its words from the catalogue.
fn default_told(setting: &Setting) -> String {
    match (&setting.size_rule, setting.default_here) {
        (
            Some(rule),
            Some(DefaultHere {
                size,
                counted: Some((what, n)),
            }),
        ) => {
            let what = match what {
                CoreCount::Cpus => "CPUs",
                CoreCount::Cores => "cores",
            };
            format!("{rule} = {size} on {n} {what}")
        }
        (Some(rule), _) => format!("{rule}, the target's cores unknown"),
        (None, _) => setting.default.clone(),
    }
}

/// When a connection pool's default here is not the cap seen: " — not the 4 seen here, so it was
/// set (`pool_max_conns=N ...`)"; when a growing pool grew past its default cap, that the
/// service raised it; empty when it agrees, or nothing gives it.
fn default_disagrees(place: &Place, setting: &Setting) -> String {
    if let (Some(PlaceKind::GrowingPool), Some(here), Some(threads)) =
        (place.kind, setting.default_here, place.size)
    {
        let cap = f64::from(here.size);
        return if threads > cap && !crate::place::matches_limit(threads, cap) {
            format!(
                "; the default is fewer, so the service raised it itself, to {} or more",
                count(threads)
            )
        } else {
            String::new()
        };
    }
    let seen = match place.source {
        Some(PlaceSource::Connections) => place.size,
        _ => place.held,
    };
    match (setting.default_here, seen) {
        (Some(here), Some(seen))
            if place.kind == Some(PlaceKind::ConnectionPool)
                && !crate::place::matches_limit(seen, f64::from(here.size)) =>
        {
            format!(
                "; that is not the {} held here, so the service sets `{}` itself",
                count(seen),
                setting.setting
            )
        }
        _ => String::new(),
    }
}

/// Whether the place says more than the finding's other facts already do: a CPU place
/// without a pool is only the CPU figure, a growing pool without a known setting only what
/// its own fact tells (the threads per step).
fn tells_more(place: &Place) -> bool {
    match place.kind {
        Some(PlaceKind::Cpu) => place.pool.is_some() || place.cpu_quota.is_some(),
        Some(PlaceKind::GrowingPool) => place.setting.is_some(),
        _ => true,
    }
}

/// Whether the finding's place names pool `pool`, so that what `/proc` saw of it
/// ([`Fact::PoolWaiting`]) is told there and not again.
pub(crate) fn names_pool(finding: &Finding, pool: &str) -> bool {
    finding.facts.iter().any(|fact| match fact {
        Fact::Place { place } => {
            tells_more(place)
                && place.pool.as_deref().is_some_and(|named| {
                    // Linux cuts a thread's name; the stacks keep it whole.
                    named == pool
                        || (pool.len() == crate::pool_pattern::CUT_BYTES && named.starts_with(pool))
                })
        }
        _ => false,
    })
}

/// The evidence sentence of a place fact; `None` for any other fact.
pub(crate) fn sentence(fact: &Fact, finding: &Finding) -> Option<String> {
    match fact {
        Fact::Place { place } if tells_more(place) => {
            let mut s = format!("Where the limit sits: {}", where_line(place));
            if place.kind == Some(PlaceKind::ConnectionPool) && place.pool.is_none() {
                s.push_str(&connection_owner(place, finding));
            }
            if !matches!(
                place.kind,
                Some(PlaceKind::Cpu | PlaceKind::GrowingPool | PlaceKind::StreamCap)
            ) {
                s.push_str(&format!(", at {}", clients(place.clients)));
            }
            s.push('.');
            if let (Some(server), Some(client)) = (&place.setting, &place.client_setting) {
                s.push(' ');
                s.push_str(&both_sides_sentence(place, server, client));
            } else if let Some(setting) = &place.setting {
                s.push(' ');
                s.push_str(&setting_sentence(place, setting));
            }
            if let Some(setting) = &place.not_sized_by {
                s.push(' ');
                s.push_str(&not_the_knob_sentence(place, setting));
            }
            Some(s)
        }
        Fact::PlaceUnclear {
            clients: c,
            limit,
            why,
            seen,
            downstream_connections,
            downstream_calls,
            stacks,
            setting,
        } => Some(unclear(
            *c,
            *limit,
            *why,
            seen,
            (*downstream_connections, *downstream_calls),
            *stacks,
            setting.as_deref(),
        )),
        _ => None,
    }
}

/// The short line of a place fact, for the first screen.
pub(crate) fn short(fact: &Fact) -> Option<String> {
    match fact {
        Fact::Place { place } if tells_more(place) => {
            Some(format!("Where: {}.", attribution(place)))
        }
        Fact::PlaceUnclear { why, seen, .. } => Some(match why {
            PlaceUnclearWhy::SeveralMatch => format!(
                "Where: unclear, {} pools match the limit ({}).",
                seen.len(),
                names(seen)
            ),
            PlaceUnclearWhy::NoneMatch => {
                "Where: unclear, no pool's waiting threads match the limit.".to_string()
            }
            PlaceUnclearWhy::SettingDisagrees => format!(
                "Where: unclear, {} matches the limit but its processes state another size.",
                names(seen)
            ),
        }),
        _ => None,
    }
}

/// The clients an accept path left unserved, by where they were: `48 waiting unaccepted in its
/// listen queue`, `85 half-open (...)`, or both.
fn unserved_clients(place: &Place) -> String {
    let told = |n: Option<f64>| n.filter(|&n| n >= 0.5);
    let mut parts = Vec::new();
    let mut queue = Some(listen_queue(place));
    if let Some(n) = told(place.unaccepted) {
        parts.push(format!(
            "{} waiting unaccepted in {}",
            count(n),
            queue.take().unwrap_or_default()
        ));
    }
    if let Some(n) = told(place.half_open) {
        parts.push(format!(
            "{} half-open (established at the client's end, with no socket at the target's: the \
             handshake's last step dropped with {} full)",
            count(n),
            queue.unwrap_or_else(|| "it".to_string())
        ));
    }
    match parts.as_slice() {
        [] => "none seen".to_string(),
        _ => parts.join(" and "),
    }
}

/// "its listen queue of 5 (the backlog its `listen()` asked for)", with the size when the
/// sweep read it, and the kernel's cap when that is what the size is.
fn listen_queue(place: &Place) -> String {
    match place.listen_queue {
        Some(queue) if queue.somaxconn == Some(queue.size) => format!(
            "its listen queue of {} (`net.core.somaxconn`, the most any `listen()` backlog gets on \
             its machine)",
            queue.size
        ),
        Some(queue) => format!(
            "its listen queue of {} (the backlog its `listen()` asked for)",
            queue.size
        ),
        None => "its listen queue".to_string(),
    }
}

/// What an accept path did with the connections past the ones it held: "closed the others'
/// connections unanswered as it accepted them, 900 a second", or "left the others unserved, on
/// average 48 waiting unaccepted in its listen queue; the kernel dropped 12 handshakes…".
fn the_others_connections(place: &Place) -> String {
    if let Some(per_s) = place.closed_unanswered_per_s {
        return format!(
            "closed the others' connections unanswered as it accepted them, {} a second",
            count(per_s)
        );
    }
    format!(
        "left the others unserved, on average {}{}",
        unserved_clients(place),
        match place.listen_overflows {
            Some(dropped) if dropped > 0 => format!(
                "; the kernel dropped {dropped} handshake{} with a listen queue full",
                if dropped == 1 { "" } else { "s" }
            ),
            _ => String::new(),
        }
    )
}

/// `pool `actor-pool`: 20 threads, 20 waiting on a downstream call in `a` ← `b` (jcmd
/// Thread.print, 3 dumps)`, and the forms for `/proc`, connections and the CPU.
fn where_line(place: &Place) -> String {
    let size = place.size.unwrap_or(0.0);
    let held = place.held.unwrap_or(0.0);
    let pool = place.pool.as_deref().unwrap_or("?");
    let from = source_words(place);
    match (place.kind, place.source) {
        (Some(PlaceKind::Cpu), _) => {
            let cpu = match (place.cpu_quota, place.cpu_pct) {
                (Some(quota), _) => format!(
                    "the CPU quota of its control group, {} of a core's time",
                    count(quota)
                ),
                (None, Some(pct)) => format!("the CPU, {pct:.0}% of all cores at the plateau"),
                (None, None) => "the CPU".to_string(),
            };
            match &place.pool {
                Some(pool) => format!(
                    "{cpu}; the busiest pool `{pool}`: {} of its {} threads on a CPU or waiting for one at {} ({from})",
                    count(held),
                    count(size),
                    clients(place.clients)
                ),
                None => cpu,
            }
        }
        (Some(PlaceKind::StreamCap), _) => format!(
            "the HTTP/2 streams the downstream allows on the connections the target keeps to it, \
             {} × {} streams = {}, {} in flight at once at {} ({from})",
            match place.h2_connections.unwrap_or(0) {
                1 => "1 connection".to_string(),
                n => format!("{n} connections"),
            },
            place.stream_cap.unwrap_or(0),
            count(size),
            count(held),
            clients(place.clients)
        ),
        (Some(PlaceKind::GrowingPool), _) => format!(
            "pool `{pool}`, grown to {} threads at {}, a thread per blocked call ({from})",
            count(size),
            clients(place.clients)
        ),
        (Some(PlaceKind::ConnectionPool), Some(PlaceSource::Connections)) => format!(
            "{} connections to the downstream{}, never more ({from})",
            count(size),
            place
                .peer_port
                .map(|port| format!(" (port {port})"))
                .unwrap_or_default()
        ),
        (Some(PlaceKind::AcceptCap), Some(PlaceSource::Connections)) => format!(
            "the target's accept path{}: it held {} client connections at once (the median of \
             the steps past them{}) and {} ({from})",
            place
                .peer_port
                .map(|port| format!(" on port {port}"))
                .unwrap_or_default(),
            count(size),
            if crate::place::matches_limit(held, size) {
                String::new()
            } else {
                format!("; {} at {}", count(held), clients(place.clients))
            },
            the_others_connections(place),
        ),
        (Some(PlaceKind::AcceptCap), _) => format!(
            "the proxy `{pool}`'s cap of {} client connections accepted at once on the swept port, `{}`: \
             the connections past it wait unaccepted ({from})",
            count(size),
            place.shown_by.as_deref().unwrap_or("?")
        ),
        (_, Some(PlaceSource::Config)) => format!(
            "the proxy `{pool}`'s cap of {} at once on its upstream{}, `{}` ({from})",
            count(size),
            place
                .peer_port
                .map(|port| format!(" (port {port}), where its connections went"))
                .unwrap_or_default(),
            place.shown_by.as_deref().unwrap_or("?")
        ),
        (_, Some(PlaceSource::Proc)) => format!(
            "{} of {} threads of `{pool}` {} ({from}{})",
            count(held),
            count(size),
            proc_wait_words(place),
            place
                .background
                .map(|n| format!(
                    "; beside {} more there already at the fewest clients",
                    count(n)
                ))
                .unwrap_or_default()
        ),
        _ => {
            let threads = match place.source {
                Some(PlaceSource::Stacks(StackSource::Pprof)) => "goroutines",
                _ => "threads",
            };
            let mut s = format!(
                "pool `{pool}`: {} {threads}, {} {}",
                count(size),
                count(held),
                waiting_words(place.waiting)
            );
            if !place.frames.is_empty() {
                s.push_str(" in ");
                s.push_str(&frames(&place.frames));
            }
            if let Some(queued) = &place.queued {
                s.push_str(&format!(
                    ", {} more {}",
                    count(queued.threads),
                    waiting_words(queued.waiting)
                ));
                if !queued.frames.is_empty() {
                    s.push_str(" in ");
                    s.push_str(&frames(&queued.frames));
                }
                s.push_str(&match place.kind {
                    Some(PlaceKind::ConnectionPool) => format!(
                        ": a pool of {} in front of the downstream",
                        concurrency(held)
                    ),
                    _ => format!(
                        ": a lock or semaphore lets {} through at a time",
                        concurrency(held)
                    ),
                });
            }
            format!("{s} ({from})")
        }
    }
}

/// How `/proc` saw the held threads wait.
fn proc_wait_words(place: &Place) -> String {
    match (place.waiting, place.busy_in_dump) {
        (Some(WaitKind::Lock), Some(busy)) => format!(
            "parked in `futex`, where the runtime's dump of the step showed {} of them busy, not \
             waiting for work",
            count(busy)
        ),
        (Some(WaitKind::Lock), None) => {
            "parked in `futex` (a lock, a condition or a future: /proc cannot tell which)"
                .to_string()
        }
        _ => match &place.syscall {
            Some(call) => format!("blocked on the network, in `{call}`"),
            None => "blocked on the network".to_string(),
        },
    }
}

/// A wait as the stacks read it.
fn waiting_words(waiting: Option<WaitKind>) -> &'static str {
    waiting.map_or("waiting", WaitKind::as_words)
}

/// `` `a` ← `b` ← `c` ``, innermost first; past three, the first two, then `…` and the last
/// (the service's own frame, which the tools keep last).
fn frames(frames: &[String]) -> String {
    let quoted = |f: &String| format!("`{f}`");
    let told: Vec<String> = if frames.len() <= FRAMES_TOLD {
        frames.iter().map(quoted).collect()
    } else {
        let mut told: Vec<String> = frames[..FRAMES_TOLD - 1].iter().map(quoted).collect();
        told.push("…".to_string());
        told.extend(frames.last().map(quoted));
        told
    };
    told.join(" ← ")
}

/// `/proc`, `connections`, `jcmd Thread.print, 3 dumps`, `JFR, 5.0 s recording`.
fn source_words(place: &Place) -> String {
    match place.source {
        Some(PlaceSource::Proc) | None => "/proc".to_string(),
        Some(PlaceSource::Connections) => "the target's connections, /proc".to_string(),
        Some(PlaceSource::Mock) => "the mock's counts".to_string(),
        Some(PlaceSource::Config) => {
            "the configuration file its command line names, and no thread held in the wait"
                .to_string()
        }
        Some(PlaceSource::PeerSettings) => {
            "the target's connections, /proc, and the downstream's HTTP/2 SETTINGS".to_string()
        }
        Some(PlaceSource::Stacks(tool)) => stacks_words(tool, place.snapshots, place.recording_s),
    }
}

fn stacks_words(tool: StackSource, snapshots: Option<u32>, recording_s: Option<f64>) -> String {
    match (snapshots, recording_s) {
        (_, Some(seconds)) => format!("{}, {seconds:.1} s recording", tool.as_str()),
        (Some(n), None) => format!(
            "{}, {n} dump{}",
            tool.as_str(),
            if n == 1 { "" } else { "s" }
        ),
        (None, None) => tool.as_str().to_string(),
    }
}

/// Whose cap the connections met: the mock's own, or the target's (a client-side pool).
fn connection_owner(place: &Place, finding: &Finding) -> String {
    let cap = finding.facts.iter().find_map(|f| match f {
        Fact::DownstreamConnections { mock_cap, .. } => *mock_cap,
        _ => None,
    });
    match (cap, place.held) {
        (Some(cap), Some(served)) if served >= cap as f64 => {
            format!(", the mock serving {cap}, its own cap")
        }
        _ => ", a client-side connection pool".to_string(),
    }
}

/// "The catalogue knows `pool`: Framework, sized by `setting` (default 20; source); it had 20
/// threads here."
fn setting_sentence(place: &Place, setting: &Setting) -> String {
    if place.cpu_quota.is_some() {
        return format!(
            "The quota is {}: `{}` ({}).",
            setting.framework, setting.setting, setting.source
        );
    }
    let here = match (place.kind, place.source, place.size, &place.shown_by) {
        // An accept path that sheds, its cap named by the process the catalogue knows for one.
        (Some(PlaceKind::AcceptCap), Some(PlaceSource::Connections), Some(n), Some(shown_by))
            if place.closed_unanswered_per_s.is_some() =>
        {
            format!(
                "; the target's {shown_by} closed the connections past {} as it accepted them, \
                 as this cap does",
                count(n)
            )
        }
        // An accept path's cap named by where its accepting waited (the runtime's stacks).
        (Some(PlaceKind::AcceptCap), Some(PlaceSource::Connections), Some(n), Some(shown_by)) => {
            format!(
                "; the stacks showed {shown_by}, its accepting parked on a full cap, with {} connections accepted",
                count(n)
            )
        }
        (_, Some(PlaceSource::Connections), Some(n), Some(shown_by)) => format!(
            "; the target had {} (`{shown_by}`), and its default cap is the {} connections held here",
            if shown_by.starts_with("threads ") {
                "its threads".to_string()
            } else {
                "its library open".to_string()
            },
            count(n)
        ),
        (_, Some(PlaceSource::Connections), Some(n), None) => {
            format!("; it held {} connections here", count(n))
        }
        (_, Some(PlaceSource::Config), Some(n), _) => {
            format!("; its configuration sets {} for that server", count(n))
        }
        // Threads queued for a connection: the pool they queue for holds the calls in flight.
        (_, _, _, _) if queued_for_connections(place) => place
            .held
            .map(|n| format!("; {} connections were in use here", count(n)))
            .unwrap_or_default(),
        (_, _, Some(n), _) => format!("; it had {} threads here", count(n)),
        (_, _, None, _) => String::new(),
    };
    let known = if queued_for_connections(place) {
        "the pool they queue for".to_string()
    } else {
        place
            .pool
            .as_deref()
            .map_or("it".to_string(), |p| format!("`{p}`"))
    };
    format!(
        "The catalogue knows {known}: {}, sized by `{}` (default {}; {}){here}{}{}.",
        setting.framework,
        setting.setting,
        default_told(setting),
        setting.source,
        default_disagrees(place, setting),
        stated_agrees(setting),
    )
}

/// "; its processes were started with `--workers 2` and `--threads 4` on their command line:
/// 8 at once, as held" when they state its size (the place stage names a setting whose stated
/// size disagrees with what was held nowhere); empty otherwise.
fn stated_agrees(setting: &Setting) -> String {
    setting.stated_here.as_ref().map_or(String::new(), |here| {
        format!(
            "; its processes were started with {}: {} at once, as held",
            stated_list(here),
            here.size
        )
    })
}

/// The values a process stated, as written where they were read: "`--workers 2` and
/// `--threads 4` on their command line, `UV_THREADPOOL_SIZE=8` in their environment".
fn stated_list(here: &StatedHere) -> String {
    let written = |s: &Stated| match (s.from, s.file.as_deref()) {
        (StatedIn::Configuration, Some(file)) => format!("`{} = {}` (`{file}`)", s.name, s.value),
        (StatedIn::Configuration, None) => format!("`{} = {}`", s.name, s.value),
        _ if s.name.starts_with("-D") || s.from == StatedIn::Environment => {
            format!("`{}={}`", s.name, s.value)
        }
        _ => format!("`{} {}`", s.name, s.value),
    };
    [
        (StatedIn::CommandLine, "on their command line"),
        (StatedIn::Environment, "in their environment"),
        (
            StatedIn::Configuration,
            "in their application's configuration",
        ),
    ]
    .iter()
    .filter_map(|(from, where_read)| {
        let values: Vec<String> = here
            .by
            .iter()
            .filter(|s| s.from == *from)
            .map(written)
            .collect();
        (!values.is_empty()).then(|| format!("{} {where_read}", values.join(" and ")))
    })
    .collect::<Vec<_>>()
    .join(", ")
}

/// Whether the place is a connection pool its threads were seen queueing for (the stacks).
fn queued_for_connections(place: &Place) -> bool {
    place.kind == Some(PlaceKind::ConnectionPool) && place.queued.is_some()
}

/// A stream cap's two knobs, one on each side of the connections.
fn both_sides_sentence(place: &Place, server: &Setting, client: &Setting) -> String {
    format!(
        "Its size is set on both sides, and raising either raises it: {}, {} ({}; {}); \
         and {}, {} ({}; {}).",
        server.framework,
        server.setting,
        seen_and_default(place.stream_cap, server),
        server.source,
        client.framework,
        client.setting,
        seen_and_default(place.h2_connections, client),
        client.source
    )
}

/// A setting's value seen on the target beside its default: "8 here; default 128". The value
/// seen is no default: a configured one (the mock's `--max-concurrent-streams 8`) must not be
/// told as one.
fn seen_and_default(seen: Option<u64>, setting: &Setting) -> String {
    match seen {
        Some(n) => format!("{n} here; default {}", setting.default),
        None => format!("default {}", setting.default),
    }
}

/// Why the pool's own setting is not named: its size is not what stops at the limit.
fn not_the_knob_sentence(place: &Place, setting: &Setting) -> String {
    if let (Some(PlaceKind::AcceptCap), Some(pool)) = (place.kind, &place.pool_behind) {
        return format!(
            "Not `{}` ({}, default {}): `{}` had {} threads, {} of them held and {} idle while connections waited unaccepted, so the requests past {} never reached it; raising it adds idle threads.",
            setting.setting,
            setting.framework,
            setting.default,
            pool.pool,
            count(pool.threads),
            count(pool.held),
            count((pool.threads - pool.held).max(0.0)),
            count(place.size.unwrap_or(pool.held))
        );
    }
    if let Some(threads) = &place.queued_threads {
        let parked = (threads.threads - threads.held).max(0.0);
        return format!(
            "Not `{}` ({}, default {}): `{}` had {} threads, {} of them on the network and {} parked beside them (queued for a connection, or idle), so its size is not what stops at {}; raising it adds threads that wait too.",
            setting.setting,
            setting.framework,
            setting.default,
            threads.pool,
            count(threads.threads),
            count(threads.held),
            count(parked),
            count(place.size.unwrap_or(threads.held))
        );
    }
    let pool = place.pool.as_deref().unwrap_or("?");
    let held = count(place.held.unwrap_or(0.0));
    let size = count(place.size.unwrap_or(0.0));
    let why = match &place.queued {
        Some(_) => "its other threads queue for what the held ones hold".to_string(),
        None => format!("it had {size} threads, {held} of them on the network and others parked in `futex`, queued for something else"),
    };
    format!(
        "Not `{}` ({}, default {}): {why}, so the size of `{pool}` is not what stops at {held}; raising it adds threads that wait too.",
        setting.setting, setting.framework, setting.default
    )
}

/// The pools' names: `` `a`, `b` ``.
fn names(seen: &[PoolSeen]) -> String {
    seen.iter()
        .map(|p| format!("`{}`", p.pool))
        .collect::<Vec<_>>()
        .join(", ")
}

/// `` `pool` (6 of 71 threads blocked on the network, /proc) ``.
fn seen_words(pool: &PoolSeen) -> String {
    if let Some(PlaceSource::Mock | PlaceSource::PeerSettings) = pool.source {
        return format!(
            "`{}` ({} in flight of the {} the connections allow, {})",
            pool.pool,
            count(pool.held),
            count(pool.threads),
            match pool.source {
                Some(PlaceSource::Mock) => "the mock's counts",
                _ => "the target's connections and the downstream's SETTINGS",
            }
        );
    }
    let wait = match (pool.source, pool.waiting) {
        (Some(PlaceSource::Proc), Some(WaitKind::Lock)) => "parked in `futex`",
        (Some(PlaceSource::Proc), Some(WaitKind::Running)) => "running",
        (Some(PlaceSource::Proc), _) => "blocked on the network",
        (_, waiting) => waiting_words(waiting),
    };
    let at = if pool.frames.is_empty() {
        String::new()
    } else {
        format!(" in {}", frames(&pool.frames[..pool.frames.len().min(1)]))
    };
    let from = match pool.source {
        Some(PlaceSource::Stacks(tool)) => tool.as_str(),
        _ => "/proc",
    };
    format!(
        "`{}` ({} of {} threads {wait}{at}, {from})",
        pool.pool,
        count(pool.held),
        count(pool.threads)
    )
}

/// What was seen when no one place was: the pools, the connections, what would tell.
fn unclear(
    at: u32,
    limit: f64,
    why: PlaceUnclearWhy,
    seen: &[PoolSeen],
    (downstream_connections, downstream_calls): (Option<u32>, Option<u32>),
    stacks: Option<StackSource>,
    setting: Option<&Setting>,
) -> String {
    let pools = seen.iter().map(seen_words).collect::<Vec<_>>().join(", ");
    let mut s = match why {
        PlaceUnclearWhy::SettingDisagrees => {
            let stated = setting.and_then(|s| Some((s, s.stated_here.as_ref()?)));
            let (told, knob) = match stated {
                Some((setting, here)) => (
                    format!(
                        "its processes were started with {}: {} at once ({})",
                        stated_list(here),
                        here.size,
                        setting.framework
                    ),
                    format!("`{}` is not the knob", setting.setting),
                ),
                None => (
                    "its processes state another size".to_string(),
                    "its setting is not the knob".to_string(),
                ),
            };
            format!(
                "Where the limit sits is unclear: at {} {pools} held about the limit of {}, but {told}. \
                 So that pool is not what stops at {}: its other threads wait for something else, or \
                 something in front of it lets fewer calls in, and {knob}.",
                clients(at),
                concurrency(limit),
                concurrency(limit),
            )
        }
        PlaceUnclearWhy::SeveralMatch => format!(
            "Where the limit sits is unclear: at {} {} pools held about {} threads each, {pools}; \
             the evidence cannot tell which of them holds it.",
            clients(at),
            seen.len(),
            concurrency(limit)
        ),
        PlaceUnclearWhy::NoneMatch if seen.is_empty() => format!(
            "Where the limit sits is unclear: at {} no pool of the target had threads held waiting on the network.",
            clients(at)
        ),
        PlaceUnclearWhy::NoneMatch => format!(
            "Where the limit sits is unclear: no pool's waiting threads came near the limit of {} at {}; \
             the most held: {pools}.",
            concurrency(limit),
            clients(at)
        ),
    };
    if let Some(n) = downstream_connections.filter(|n| *n > 0) {
        let stopped = crate::place::downstream_stopped_at(n, downstream_calls, limit);
        let near = crate::place::matches_limit(f64::from(n), limit);
        s.push_str(&format!(
            " The target held at most {n} connections to the downstream at once{}.",
            match (stopped, near, downstream_calls) {
                (true, _, _) =>
                    ", about the limit: something in it lets only that many calls out at a time \
                 (a connection pool, a semaphore), which this evidence cannot name"
                        .to_string(),
                (false, true, Some(calls)) => format!(
                    " in the samples, but the mock saw {calls} calls at once: nothing in front of \
                     the downstream stopped at the limit"
                ),
                _ => String::new(),
            }
        ));
    }
    let had_stacks = seen
        .iter()
        .any(|p| matches!(p.source, Some(PlaceSource::Stacks(_))));
    match stacks {
        Some(tool) if !had_stacks => s.push_str(&format!(
            " The runtime's stacks ({}) showed no thread held in a call either: an event loop holds its calls without a thread each, so the limit is in what it awaits (a client's pool, a semaphore).",
            tool.as_str()
        )),
        Some(_) => {}
        None if !had_stacks => s.push_str(
            " The runtime's own stacks (jcmd for a JVM, py-spy for CPython, --pprof for Go) would say where its threads wait.",
        ),
        None => {}
    }
    s
}
