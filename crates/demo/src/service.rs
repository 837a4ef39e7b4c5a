//! The routes: one HTTP/1.1 server (hyper), the pools, the clients, and a handler per route.
use crate::blocking_http::BlockingClient;
use crate::leaky::LeakedConnections;
use crate::pool::{FixedPool, PoolClosed, ThreadPerJob};
use crate::{cpu, DemoConfig, DemoError, DOWNSTREAM_TIMEOUT};
use bytes::Bytes;
use http::{Request, Response, StatusCode};
use http_body_util::{BodyExt, Empty, Full};
use hyper::body::Incoming;
use hyper_util::client::legacy::{connect::HttpConnector, Client};
use hyper_util::rt::{TokioExecutor, TokioIo};
use serde_json::{json, Value};
use std::convert::Infallible;
use std::io;
use std::net::{SocketAddr, ToSocketAddrs};
use std::sync::Arc;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// At most this many connections `/leaky` keeps open; the oldest is closed beyond it.
const MAX_LEAKED_CONNECTIONS: usize = 10_000;
/// The header naming the thread that made a blocking downstream call.
const WORKER_HEADER: &str = "x-chokepoint-worker";

/// Where the downstream is.
struct Downstream {
    /// `http://host:port` plus any base path, without a trailing slash.
    base: String,
    /// The `Host` header to send.
    host: String,
    addr: SocketAddr,
}

impl Downstream {
    fn parse(url: &str) -> Result<Self, DemoError> {
        let bad = |why: &str| {
            DemoError::Config(format!(
                "downstream '{url}' {why}: give a base URL such as http://127.0.0.1:9090"
            ))
        };
        let uri: http::Uri = url.trim().parse().map_err(|_| bad("is not a URL"))?;
        if uri.scheme_str() != Some("http") {
            return Err(bad("is not an http:// URL (https is not supported)"));
        }
        let authority = uri.authority().ok_or_else(|| bad("has no host"))?;
        let port = authority.port_u16().unwrap_or(80);
        let host = authority
            .host()
            .trim_start_matches('[')
            .trim_end_matches(']');
        let addr = (host, port)
            .to_socket_addrs()
            .map_err(|_| bad("names a host that does not resolve"))?
            .next()
            .ok_or_else(|| bad("names a host with no address"))?;
        let path = uri.path().trim_end_matches('/');
        if uri.query().is_some() {
            return Err(bad("has a query string"));
        }
        Ok(Self {
            base: format!("http://{authority}{path}"),
            host: authority.to_string(),
            addr,
        })
    }

    /// The path to request on the downstream for a route's own `path`.
    fn path_of(&self, path: &str) -> String {
        let base_path = self.base.splitn(4, '/').nth(3).unwrap_or_default();
        if base_path.is_empty() {
            path.to_string()
        } else {
            format!("/{base_path}{path}")
        }
    }
}

/// Everything the routes share.
pub(crate) struct App {
    config: DemoConfig,
    downstream: Downstream,
    actors: FixedPool,
    cpu_pool: FixedPool,
    dispatcher: FixedPool,
    elastic: ThreadPerJob,
    /// The pools' client: no cap of its own, so the pool is the limit.
    pool_client: Arc<BlockingClient>,
    /// `/blocking`'s client: at most `client_pool` calls at once.
    capped_client: Arc<BlockingClient>,
    async_client: Client<HttpConnector, Empty<Bytes>>,
    leaked: Arc<LeakedConnections>,
}

impl App {
    pub(crate) fn new(config: DemoConfig) -> Result<Arc<Self>, DemoError> {
        validate(&config)?;
        let downstream = Downstream::parse(&config.downstream)?;
        let pool = |name: &str, size: usize| {
            FixedPool::new(name, size).map_err(DemoError::io(format!(
                "cannot start {size} threads for {name}"
            )))
        };
        let pool_client = Arc::new(BlockingClient::new(
            downstream.addr,
            &downstream.host,
            None,
            DOWNSTREAM_TIMEOUT,
        ));
        let capped_client = Arc::new(BlockingClient::new(
            downstream.addr,
            &downstream.host,
            Some(config.client_pool),
            DOWNSTREAM_TIMEOUT,
        ));
        let mut connector = HttpConnector::new();
        connector.set_nodelay(true);
        connector.set_connect_timeout(Some(DOWNSTREAM_TIMEOUT));
        Ok(Arc::new(Self {
            actors: pool("actor-pool", config.actors)?,
            cpu_pool: pool("cpu-pool", config.cpu_pool)?,
            dispatcher: pool("blocking-dispatcher", config.dispatcher)?,
            elastic: ThreadPerJob::new("elastic-pool"),
            pool_client,
            capped_client,
            async_client: Client::builder(TokioExecutor::new()).build(connector),
            leaked: LeakedConnections::new(MAX_LEAKED_CONNECTIONS),
            downstream,
            config,
        }))
    }
}

impl Drop for App {
    fn drop(&mut self) {
        self.leaked.close_all();
    }
}

fn validate(config: &DemoConfig) -> Result<(), DemoError> {
    for (flag, value) in [
        ("--actors", config.actors),
        ("--cpu-pool", config.cpu_pool),
        ("--client-pool", config.client_pool),
        ("--dispatcher", config.dispatcher),
    ] {
        if !(1..=10_000).contains(&value) {
            return Err(DemoError::Config(format!(
                "{flag} {value} is out of range: give a pool size from 1 to 10000"
            )));
        }
    }
    if config.cpu_ms > 60_000 {
        return Err(DemoError::Config(format!(
            "--cpu-ms {} is too large: give at most 60000 ms of CPU per request",
            config.cpu_ms
        )));
    }
    if config.product_ids.is_empty() {
        return Err(DemoError::Config(
            "no product ids: give at least one, e.g. --products PROD-001,PROD-002".to_string(),
        ));
    }
    for id in &config.product_ids {
        let url_safe = |c: char| c.is_ascii_alphanumeric() || "-_.~".contains(c);
        if id.is_empty() || !id.chars().all(url_safe) {
            return Err(DemoError::Config(format!(
                "product id '{id}' is not usable in a URL: use letters, digits, '-', '_', '.'"
            )));
        }
    }
    Ok(())
}

/// Accepts connections until `shutdown` is cancelled; each connection is served on a task.
pub(crate) async fn accept_loop(
    listener: tokio::net::TcpListener,
    app: Arc<App>,
    shutdown: CancellationToken,
) {
    loop {
        let accepted = tokio::select! {
            _ = shutdown.cancelled() => break,
            accepted = listener.accept() => accepted,
        };
        let stream = match accepted {
            Ok((stream, _)) => stream,
            // Out of file descriptors and the like: let some connections close, then go on.
            Err(_) => {
                tokio::time::sleep(Duration::from_millis(10)).await;
                continue;
            }
        };
        let _ = stream.set_nodelay(true);
        let (app, shutdown) = (app.clone(), shutdown.clone());
        tokio::spawn(async move {
            let service = hyper::service::service_fn(move |request| {
                let app = app.clone();
                async move { Ok::<_, Infallible>(handle(&app, request).await) }
            });
            let connection = hyper::server::conn::http1::Builder::new()
                .serve_connection(TokioIo::new(stream), service);
            tokio::select! {
                _ = connection => {}
                _ = shutdown.cancelled() => {}
            }
        });
    }
    app.leaked.close_all();
}

async fn handle(app: &Arc<App>, request: Request<Incoming>) -> Response<Full<Bytes>> {
    let path = request.uri().path().to_string();
    match path.as_str() {
        "/" => json_response(StatusCode::OK, &routes_json_of(app)),
        "/actors" => on_pool(app, &app.actors, "/actors").await,
        "/global" => on_pool(app, &app.cpu_pool, "/global").await,
        "/dispatcher" => on_pool(app, &app.dispatcher, "/dispatcher").await,
        "/blocking" => {
            let client = app.capped_client.clone();
            let answer = app
                .elastic
                .run(move || {
                    let worker = current_thread_name();
                    (client.get("/blocking"), worker)
                })
                .await;
            blocking_answer("/blocking", answer)
        }
        "/async" => match async_get(app, "/async").await {
            Ok((status, body)) => downstream_answer("/async", status, body, None),
            Err(err) => failed("/async", &err),
        },
        "/recommendations" => recommendations(app, true).await,
        "/recommendations-serial" => recommendations(app, false).await,
        "/cpu" => {
            let budget = Duration::from_millis(app.config.cpu_ms);
            match tokio::task::spawn_blocking(move || cpu::burn(budget)).await {
                Ok(checksum) => json_response(
                    StatusCode::OK,
                    &json!({"cpu_ms": app.config.cpu_ms, "checksum": checksum}),
                ),
                Err(_) => text_response(StatusCode::SERVICE_UNAVAILABLE, "cpu work was cancelled"),
            }
        }
        "/leaky" => {
            let answer = app
                .leaked
                .call(
                    app.downstream.addr,
                    &app.downstream.host,
                    &app.downstream.path_of("/leaky"),
                    DOWNSTREAM_TIMEOUT,
                )
                .await;
            match answer {
                Ok((status, body)) => downstream_answer("/leaky", status, body, None),
                Err(err) => failed("/leaky", &err),
            }
        }
        _ => text_response(
            StatusCode::NOT_FOUND,
            &format!("no route {path}: GET / lists the routes"),
        ),
    }
}

/// Runs a blocking downstream call of `route` on `pool` and answers with what came back.
async fn on_pool(app: &Arc<App>, pool: &FixedPool, route: &'static str) -> Response<Full<Bytes>> {
    let client = app.pool_client.clone();
    let path = app.downstream.path_of(route);
    let answer = pool
        .run(move || {
            let worker = current_thread_name();
            (client.get(&path), worker)
        })
        .await;
    blocking_answer(route, answer)
}

fn current_thread_name() -> String {
    std::thread::current()
        .name()
        .unwrap_or("unnamed")
        .to_string()
}

type BlockingAnswer = Result<(io::Result<crate::blocking_http::Response>, String), PoolClosed>;

fn blocking_answer(route: &str, answer: BlockingAnswer) -> Response<Full<Bytes>> {
    match answer {
        Ok((Ok(response), worker)) => downstream_answer(
            route,
            response.status,
            Bytes::from(response.body),
            Some(&worker),
        ),
        Ok((Err(err), _)) => failed(route, &err.to_string()),
        Err(PoolClosed) => text_response(
            StatusCode::SERVICE_UNAVAILABLE,
            &format!("{route}: the pool is stopped"),
        ),
    }
}

/// 200 with the downstream's body when it answered 2xx, else 502.
fn downstream_answer(
    route: &str,
    status: u16,
    body: Bytes,
    worker: Option<&str>,
) -> Response<Full<Bytes>> {
    if !(200..300).contains(&status) {
        return text_response(
            StatusCode::BAD_GATEWAY,
            &format!("{route}: the downstream answered {status}"),
        );
    }
    let mut response = Response::new(Full::new(body));
    if let Some(worker) = worker.and_then(|w| http::HeaderValue::from_str(w).ok()) {
        response.headers_mut().insert(WORKER_HEADER, worker);
    }
    response
}

fn failed(route: &str, why: &str) -> Response<Full<Bytes>> {
    let why = why.replace(['\r', '\n'], " ");
    text_response(
        StatusCode::BAD_GATEWAY,
        &format!("{route}: the downstream call failed: {why}"),
    )
}

/// A non-blocking GET of `path` on the downstream.
async fn async_get(app: &App, path: &str) -> Result<(u16, Bytes), String> {
    let uri: http::Uri = format!("{}{path}", app.downstream.base)
        .parse()
        .map_err(|e| format!("bad downstream URL: {e}"))?;
    let call = async {
        let response = app.async_client.get(uri).await.map_err(|e| e.to_string())?;
        let status = response.status().as_u16();
        let body = response
            .into_body()
            .collect()
            .await
            .map_err(|e| e.to_string())?
            .to_bytes();
        Ok::<_, String>((status, body))
    };
    tokio::time::timeout(DOWNSTREAM_TIMEOUT, call)
        .await
        .map_err(|_| format!("no answer within {DOWNSTREAM_TIMEOUT:?}"))?
}

/// `/recommendations` (parallel) and `/recommendations-serial`: one product per id.
async fn recommendations(app: &Arc<App>, parallel: bool) -> Response<Full<Bytes>> {
    let route = if parallel {
        "/recommendations"
    } else {
        "/recommendations-serial"
    };
    let paths: Vec<String> = app
        .config
        .product_ids
        .iter()
        .map(|id| format!("/product/{id}"))
        .collect();
    let mut answers = Vec::with_capacity(paths.len());
    if parallel {
        let mut calls = tokio::task::JoinSet::new();
        for (index, path) in paths.iter().enumerate() {
            let (app, path) = (app.clone(), path.clone());
            calls.spawn(async move { (index, async_get(&app, &path).await) });
        }
        while let Some(done) = calls.join_next().await {
            match done {
                Ok(answer) => answers.push(answer),
                Err(err) => return failed(route, &err.to_string()),
            }
        }
        answers.sort_by_key(|(index, _)| *index);
    } else {
        for (index, path) in paths.iter().enumerate() {
            answers.push((index, async_get(app, path).await));
        }
    }
    let mut products = Vec::with_capacity(answers.len());
    for ((_, answer), path) in answers.into_iter().zip(&paths) {
        match answer {
            Ok((status, body)) if (200..300).contains(&status) => products
                .push(serde_json::from_slice::<Value>(&body).unwrap_or_else(|_| {
                    Value::String(String::from_utf8_lossy(&body).into_owned())
                })),
            Ok((status, _)) => {
                return text_response(
                    StatusCode::BAD_GATEWAY,
                    &format!("{route}: the downstream answered {status} for {path}"),
                )
            }
            Err(err) => return failed(route, &format!("{path}: {err}")),
        }
    }
    json_response(StatusCode::OK, &json!({ "recommendations": products }))
}

/// The `GET /` listing of the routes and their configured limits.
pub fn routes_json(config: &DemoConfig) -> Value {
    let pool = |path: &str, pool: &str, limit: usize, seed: &str, what: &str| {
        json!({"path": path, "what": what, "seed": seed, "pool": pool, "limit": limit,
               "expected_kind": "blocking-pool", "downstream_path": path})
    };
    let products: Vec<String> = config
        .product_ids
        .iter()
        .map(|id| format!("/product/{id}"))
        .collect();
    json!({
        "service": "chokepoint demo-service",
        "downstream": config.downstream,
        "routes": [
            pool("/actors", "actor-pool", config.actors, "000",
                 "a fixed pool of threads makes a blocking downstream call"),
            pool("/global", "cpu-pool", config.cpu_pool, "000, 002",
                 "a blocking downstream call on a pool sized to the cores"),
            {"path": "/blocking", "what": "a thread per request, but the blocking client allows a fixed number of calls at once",
             "seed": "000", "pool": "elastic-pool", "limit": config.client_pool,
             "expected_kind": "blocking-pool", "downstream_path": "/blocking"},
            pool("/dispatcher", "blocking-dispatcher", config.dispatcher, "002",
                 "a blocking downstream call on a fixed custom pool"),
            {"path": "/async", "what": "a non-blocking downstream call", "seed": "004",
             "pool": null, "limit": null, "expected_kind": "no-limit-found",
             "downstream_path": "/async"},
            {"path": "/recommendations", "what": "one non-blocking downstream call per product, in parallel",
             "seed": "004", "pool": null, "limit": null, "expected_kind": "no-limit-found",
             "downstream_path": products},
            {"path": "/recommendations-serial", "what": "one non-blocking downstream call per product, one after another",
             "seed": "004", "pool": null, "limit": null, "expected_kind": "no-limit-found",
             "downstream_path": products},
            {"path": "/cpu", "what": "CPU work per request, on tokio's blocking pool", "seed": "003",
             "pool": null, "limit": null, "cpu_ms": config.cpu_ms, "cores": crate::available_cores(),
             "expected_kind": "cpu-bound", "downstream_path": null},
            {"path": "/leaky", "what": "a new downstream connection per request, left open", "seed": "001",
             "pool": null, "limit": null, "expected_kind": "connection-limit",
             "downstream_path": "/leaky"},
        ]
    })
}

fn routes_json_of(app: &App) -> Value {
    routes_json(&app.config)
}

fn json_response(status: StatusCode, value: &Value) -> Response<Full<Bytes>> {
    let mut response = Response::new(Full::new(Bytes::from(value.to_string())));
    *response.status_mut() = status;
    response.headers_mut().insert(
        http::header::CONTENT_TYPE,
        http::HeaderValue::from_static("application/json"),
    );
    response
}

fn text_response(status: StatusCode, message: &str) -> Response<Full<Bytes>> {
    let mut response = Response::new(Full::new(Bytes::from(format!("{message}\n"))));
    *response.status_mut() = status;
    response.headers_mut().insert(
        http::header::CONTENT_TYPE,
        http::HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_downstream_urls() {
        let plain = Downstream::parse("http://127.0.0.1:9090").expect("valid");
        assert_eq!(plain.base, "http://127.0.0.1:9090");
        assert_eq!(plain.path_of("/actors"), "/actors");
        let prefixed = Downstream::parse("http://127.0.0.1:9090/api/").expect("valid");
        assert_eq!(prefixed.base, "http://127.0.0.1:9090/api");
        assert_eq!(prefixed.path_of("/actors"), "/api/actors");
        for bad in [
            "https://127.0.0.1:1",
            "127.0.0.1:9090",
            "not a url",
            "http://h:1/?q=1",
        ] {
            let err = Downstream::parse(bad).err().expect("rejected");
            assert!(err.to_string().contains("downstream"), "{err}");
        }
    }

    #[test]
    fn rejects_unusable_settings_naming_the_flag() {
        let zero_pool = DemoConfig {
            actors: 0,
            ..DemoConfig::default()
        };
        let err = validate(&zero_pool).expect_err("zero pool");
        assert!(err.to_string().contains("--actors"), "{err}");
        let bad_id = DemoConfig {
            product_ids: vec!["a/b".to_string()],
            ..DemoConfig::default()
        };
        assert!(validate(&bad_id).is_err());
        assert!(validate(&DemoConfig::default()).is_ok());
    }

    #[test]
    fn lists_every_route_with_its_limit() {
        let listing = routes_json(&DemoConfig {
            actors: 7,
            ..DemoConfig::default()
        });
        let routes = listing["routes"].as_array().expect("routes");
        let paths: Vec<&str> = routes.iter().filter_map(|r| r["path"].as_str()).collect();
        assert_eq!(
            paths,
            [
                "/actors",
                "/global",
                "/blocking",
                "/dispatcher",
                "/async",
                "/recommendations",
                "/recommendations-serial",
                "/cpu",
                "/leaky"
            ]
        );
        assert_eq!(routes[0]["limit"], 7);
        assert_eq!(routes[2]["limit"], 25);
        assert_eq!(routes[3]["limit"], 16);
    }
}
