//! `chokepoint observe`: the HTTP server (hyper 1) beside the target. Every request passes the
//! token check first ([`crate::auth`]); then one route each: `GET /v1/target`, `POST
//! /v1/sessions`, `DELETE /v1/sessions/current`, `POST /v1/steps/start`, `POST
//! /v1/steps/finish` (see the crate doc). Reading `/proc` and closing a window block, so they
//! run on tokio's blocking threads; one lock orders the requests.
use crate::sessions::{Held, Refusal, Sessions};
use crate::{auth, ErrorBody, SessionRequest, SessionStarted, TargetView, SESSION_HEADER};
use bytes::Bytes;
use chokepoint_observe::stacks::StackOptions;
use chokepoint_observe::{ObservedWindow, TargetSpec};
use http::{header, Method, Request, Response, StatusCode};
use http_body_util::{BodyExt, Full, Limited};
use hyper::body::Incoming;
use hyper_util::rt::{TokioIo, TokioTimer};
use std::convert::Infallible;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

/// How long a session is held without a request (a sweep that died keeps it no longer).
pub const LEASE: Duration = Duration::from_secs(600);
/// Connections served at once; more wait to be accepted.
const MAX_CONNECTIONS: usize = 16;
/// The largest request body read (a session request is ~80 bytes).
const MAX_BODY: usize = 16 * 1024;

/// Which processes are the target.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TargetChoice {
    /// This process and its descendants (`--pid`).
    Pid(i32),
    /// The process listening on this port here (`--port`).
    Port(u16),
    /// The process listening here on the port of the URL each sweep names.
    SweepPort,
}

/// How the observer serves.
#[derive(Debug, Clone)]
pub struct Settings {
    /// Every request must carry it (`--token-file`); `None` on loopback without one.
    pub token: Option<String>,
    /// Which processes are the target.
    pub target: TargetChoice,
    /// Which stack tools the windows may use: the observer's own flags, never a request's.
    pub stacks: StackOptions,
}

struct State {
    settings: Settings,
    sessions: tokio::sync::Mutex<Sessions>,
}

type Answer = Response<Full<Bytes>>;

/// Serves on `listener` until `shutdown` is cancelled.
pub async fn serve(listener: TcpListener, settings: Settings, shutdown: CancellationToken) {
    let state = Arc::new(State {
        settings,
        sessions: tokio::sync::Mutex::new(Sessions::default()),
    });
    let slots = Arc::new(tokio::sync::Semaphore::new(MAX_CONNECTIONS));
    loop {
        let permit = tokio::select! {
            _ = shutdown.cancelled() => break,
            permit = slots.clone().acquire_owned() => permit.expect("never closed"),
        };
        let stream = tokio::select! {
            _ = shutdown.cancelled() => break,
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => stream,
                Err(_) => continue, // the peer went away before accept, or no fd for now
            },
        };
        let state = state.clone();
        tokio::spawn(async move {
            let service = hyper::service::service_fn(move |req| handle(req, state.clone()));
            let _ = hyper::server::conn::http1::Builder::new()
                .timer(TokioTimer::new())
                .header_read_timeout(Duration::from_secs(10))
                .serve_connection(TokioIo::new(stream), service)
                .await;
            drop(permit);
        });
    }
    let mut sessions = state.sessions.lock().await;
    if let Some(window) = sessions.expire(Instant::now() + LEASE, Duration::ZERO) {
        let _ = tokio::task::spawn_blocking(move || window.finish()).await;
    }
}

async fn handle(req: Request<Incoming>, state: Arc<State>) -> Result<Answer, Infallible> {
    let given = req
        .headers()
        .get(header::AUTHORIZATION)
        .map(|v| v.as_bytes());
    if !auth::authorized(state.settings.token.as_deref(), given) {
        let mut answer = error(
            StatusCode::UNAUTHORIZED,
            "this observer needs its token: send Authorization: Bearer TOKEN (sweep --observer-token-file FILE)",
        );
        answer.headers_mut().insert(
            header::WWW_AUTHENTICATE,
            "Bearer".parse().expect("a header"),
        );
        return Ok(answer);
    }
    let session = req
        .headers()
        .get(SESSION_HEADER)
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    let mut sessions = state.sessions.lock().await;
    if let Some(window) = sessions.expire(Instant::now(), LEASE) {
        tokio::task::spawn_blocking(move || window.finish());
    }
    let now = Instant::now();
    let (method, path) = (req.method().clone(), req.uri().path().to_string());
    let answer = match (method, path.as_str()) {
        (Method::GET, "/v1/target") => {
            // The session's own sweep sees its target as the session found it (a forwarder
            // followed); anyone else, as the settings and the port find it now.
            if let Ok(held) = sessions.current(session.as_deref(), now) {
                let (roots, port) = (held.spec.roots.clone(), held.spec.listen_port);
                let forwarder = held.forwarder.clone();
                return Ok(json(StatusCode::OK, &view(roots, port, forwarder).await));
            }
            let port = query_port(req.uri().query());
            let settings = state.settings.clone();
            match blocking(move || find_target(&settings, port)).await {
                Ok((roots, port)) => json(StatusCode::OK, &view(roots, port, None).await),
                Err(why) => error(StatusCode::NOT_FOUND, &why),
            }
        }
        (Method::POST, "/v1/sessions") => {
            let request: SessionRequest = match read_json(req).await {
                Ok(request) => request,
                Err(answer) => return Ok(answer),
            };
            if let Err(Refusal::Busy { idle_for }) = sessions.open_check(now) {
                return Ok(busy(idle_for));
            }
            let (settings, asked) = (state.settings.clone(), request.clone());
            let found = blocking(move || {
                find_target(&settings, asked.listen_port)
                    .map(|(roots, port)| follow_forwarder(&settings, roots, port, &asked))
            })
            .await;
            match found {
                Err(why) => error(StatusCode::NOT_FOUND, &why),
                Ok((roots, listen_port, forwarder)) => {
                    let id = format!("{:032x}", rand::random::<u128>());
                    let held = Held {
                        id: id.clone(),
                        last_seen: now,
                        spec: TargetSpec {
                            roots: roots.clone(),
                            skip_thread_prefixes: Vec::new(),
                            listen_port,
                            mock_port: request.mock_port,
                            stacks: state.settings.stacks.clone(),
                        },
                        forwarder: forwarder.clone(),
                        interval: Duration::from_millis(request.interval_ms.clamp(50, 10_000)),
                        window: None,
                    };
                    match sessions.open(held, now) {
                        Err(Refusal::Busy { idle_for }) => busy(idle_for),
                        _ => json(
                            StatusCode::CREATED,
                            &SessionStarted {
                                session: id,
                                target: view(roots, listen_port, forwarder).await,
                            },
                        ),
                    }
                }
            }
        }
        (Method::DELETE, "/v1/sessions/current") => match sessions.close(session.as_deref()) {
            Ok(window) => {
                if let Some(window) = window {
                    blocking(move || window.finish()).await;
                }
                empty(StatusCode::NO_CONTENT)
            }
            Err(_) => not_yours(),
        },
        (Method::POST, "/v1/steps/start") => match sessions.current(session.as_deref(), now) {
            Err(_) => not_yours(),
            Ok(held) if held.window.is_some() => error(
                StatusCode::CONFLICT,
                "a window is open already: POST /v1/steps/finish first",
            ),
            Ok(held) => {
                let (cpu, spec, interval) = (held.cpu_scope(), held.spec.clone(), held.interval);
                held.window =
                    Some(blocking(move || ObservedWindow::start(Some(cpu), Some(spec), interval)).await);
                empty(StatusCode::NO_CONTENT)
            }
        },
        (Method::POST, "/v1/steps/finish") => match sessions.current(session.as_deref(), now) {
            Err(_) => not_yours(),
            Ok(held) => match held.window.take() {
                None => error(
                    StatusCode::CONFLICT,
                    "no window is open: POST /v1/steps/start first",
                ),
                Some(window) => json(StatusCode::OK, &blocking(move || window.finish()).await),
            },
        },
        _ => error(
            StatusCode::NOT_FOUND,
            "no such route: GET /v1/target, POST /v1/sessions, POST /v1/steps/start, POST /v1/steps/finish, DELETE /v1/sessions/current",
        ),
    };
    Ok(answer)
}

/// The target's roots and its port, as the settings and the sweep's port find them.
fn find_target(
    settings: &Settings,
    sweep_port: Option<u16>,
) -> Result<(Vec<i32>, Option<u16>), String> {
    let listening = |port: u16| {
        let found = chokepoint_observe::listening_processes(port).unwrap_or_default();
        if found.is_empty() {
            Err(format!(
                "no process this observer may read listens on port {port} here; start the target, or start the observer with --pid PID"
            ))
        } else {
            Ok((found, Some(port)))
        }
    };
    match settings.target {
        TargetChoice::Pid(pid) => match chokepoint_observe::process_tree(pid) {
            Ok(_) => Ok((vec![pid], sweep_port)),
            Err(_) => Err(format!(
                "process {pid} (the observer's --pid) is gone; restart the observer with the target's process id"
            )),
        },
        TargetChoice::Port(port) => listening(port),
        TargetChoice::SweepPort => match sweep_port {
            Some(port) => listening(port),
            None => Err("no port given: ask for /v1/target?port=PORT, or start the observer with --port or --pid".into()),
        },
    }
}

/// The roots with, when the process on the sweep's port is a forwarder, the process it passes
/// the probe's requests on to: the forwarder followed as `--pid auto` follows it, the probe
/// sent from here to the forwarder's own listener. A `--pid` target is taken as given.
fn follow_forwarder(
    settings: &Settings,
    mut roots: Vec<i32>,
    port: Option<u16>,
    request: &SessionRequest,
) -> (Vec<i32>, Option<u16>, Option<chokepoint_result::Forwarder>) {
    use chokepoint_observe::forward::{forwarder_among, probe};
    let listener = match (settings.target, port) {
        (TargetChoice::Pid(_), _) | (_, None) => None,
        (_, Some(port)) => chokepoint_observe::listening_address(port),
    };
    let Some((listener, (pid, name))) = listener.zip(forwarder_among(&roots)) else {
        return (roots, port, None);
    };
    let probe = probe::Probe {
        host: listener.ip().to_string(),
        port: listener.port(),
        path: request.probe_path.clone().unwrap_or_else(|| "/".into()),
        tls: request.tls,
    };
    let skip: Vec<u16> = request.mock_port.into_iter().collect();
    let forwarder = probe::follow(pid, &probe, &skip).map(|f| f.into_forwarder(name, pid));
    // The served process first: the service, whose stacks, quota and runtime are read from
    // the first root (as the sweep's `with_listening_target` orders them).
    let mut served: Vec<i32> = forwarder
        .iter()
        .flat_map(|f| f.served_pids.iter().copied())
        .collect();
    served.append(&mut roots);
    (served, port, forwarder)
}

async fn view(
    roots: Vec<i32>,
    listen_port: Option<u16>,
    forwarder: Option<chokepoint_result::Forwarder>,
) -> TargetView {
    blocking(move || {
        let pids: Vec<i32> = roots
            .iter()
            .flat_map(|&root| chokepoint_observe::process_tree(root).unwrap_or_default())
            .collect();
        TargetView {
            quota_cores: roots
                .first()
                .and_then(|&root| chokepoint_observe::cgroup::QuotaGroup::of(root))
                .map(|group| group.cores),
            library_files: chokepoint_observe::files::library_files(&pids),
            roots,
            pids,
            listen_port,
            cores: chokepoint_observe::available_cores() as u32,
            machine_cores: chokepoint_observe::machine_cores() as u32,
            version: env!("CARGO_PKG_VERSION").to_string(),
            forwarder,
        }
    })
    .await
}

async fn blocking<T: Send + 'static>(work: impl FnOnce() -> T + Send + 'static) -> T {
    tokio::task::spawn_blocking(work)
        .await
        .expect("the observer's blocking work does not panic")
}

fn query_port(query: Option<&str>) -> Option<u16> {
    query?
        .split('&')
        .find_map(|pair| pair.strip_prefix("port="))
        .and_then(|port| port.parse().ok())
}

async fn read_json<T: serde::de::DeserializeOwned>(req: Request<Incoming>) -> Result<T, Answer> {
    let body = Limited::new(req.into_body(), MAX_BODY)
        .collect()
        .await
        .map_err(|_| {
            error(
                StatusCode::PAYLOAD_TOO_LARGE,
                "the body is too large or was cut",
            )
        })?
        .to_bytes();
    serde_json::from_slice(&body).map_err(|e| {
        error(
            StatusCode::BAD_REQUEST,
            &format!("the body is not the JSON expected: {e}"),
        )
    })
}

fn busy(idle_for: Duration) -> Answer {
    error(
        StatusCode::CONFLICT,
        &format!(
            "another sweep is using this observer (its last request {} s ago); it is free when that sweep ends, or {} s after its last request",
            idle_for.as_secs(),
            LEASE.as_secs()
        ),
    )
}

fn not_yours() -> Answer {
    error(
        StatusCode::CONFLICT,
        "no session of yours is open (it ended, or another sweep holds the observer): POST /v1/sessions first",
    )
}

fn json<T: serde::Serialize>(status: StatusCode, value: &T) -> Answer {
    let body = serde_json::to_vec(value).expect("the observer's answers serialize");
    let mut answer = Response::new(Full::new(Bytes::from(body)));
    *answer.status_mut() = status;
    answer.headers_mut().insert(
        header::CONTENT_TYPE,
        "application/json".parse().expect("a header"),
    );
    answer
}

fn error(status: StatusCode, message: &str) -> Answer {
    json(
        status,
        &ErrorBody {
            error: message.to_string(),
        },
    )
}

fn empty(status: StatusCode) -> Answer {
    let mut answer = Response::new(Full::new(Bytes::new()));
    *answer.status_mut() = status;
    answer
}
