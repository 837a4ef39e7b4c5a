//! WireMock's recording (`/__admin/recordings/*`): a mock of a third party made from real
//! traffic. `start {"targetBaseUrl": URL}` adds a stub that forwards any request to URL (at the
//! default priority, newest, so it wins over the stubs already there, as in WireMock); each
//! exchange a proxy stub makes is captured ([`Recorder::capture`]); `stop` turns the exchanges
//! of the recording into stub mappings ([`generate`]), writes each to the mappings folder
//! (`name-id.json`, as WireMock names them; one file written whole then renamed into place),
//! serves them in place of the proxy stub and returns them. `snapshot` does the same from every
//! proxied exchange the journal holds (`--journal N`). `status` says `NeverStarted`,
//! `Recording` or `Stopped`.
//!
//! A recording holds at most [`MAX_RECORDED`] exchanges (more are counted and dropped); the
//! journal's, as many as the journal holds requests.
pub(crate) mod generate;

use crate::mapping;
use crate::state::MockState;
use bytes::Bytes;
use generate::{Exchange, RecordSpec};
use http::StatusCode;
use serde_json::{json, Value};
use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

/// Exchanges one recording keeps, at most.
pub const MAX_RECORDED: usize = 10_000;

#[derive(Debug, Default)]
enum Status {
    #[default]
    NeverStarted,
    Recording {
        proxy_stub_id: String,
        spec: RecordSpec,
        exchanges: Vec<Arc<Exchange>>,
        dropped: u64,
    },
    Stopped,
}

/// The recording state and the journal's proxied exchanges.
#[derive(Debug)]
pub(crate) struct Recorder {
    /// Where recorded mappings are written (`None`: they are served and returned only).
    folder: Option<PathBuf>,
    recording: AtomicBool,
    status: Mutex<Status>,
    journal_capacity: usize,
    journal: Mutex<VecDeque<Arc<Exchange>>>,
}

type Answer = (StatusCode, Value);

fn wiremock_error(status: StatusCode, code: u16, title: &str) -> Answer {
    (status, json!({"errors": [{"code": code, "title": title}]}))
}

impl Recorder {
    pub fn new(folder: Option<PathBuf>, journal_capacity: usize) -> Recorder {
        Recorder {
            folder,
            recording: AtomicBool::new(false),
            status: Mutex::new(Status::NeverStarted),
            journal_capacity,
            journal: Mutex::new(VecDeque::new()),
        }
    }

    fn status(&self) -> std::sync::MutexGuard<'_, Status> {
        self.status.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn journal(&self) -> std::sync::MutexGuard<'_, VecDeque<Arc<Exchange>>> {
        self.journal.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Whether proxied exchanges are wanted (a recording runs, or the journal is on).
    pub fn wants_exchanges(&self) -> bool {
        self.journal_capacity > 0 || self.recording.load(Ordering::Relaxed)
    }

    /// Keeps one proxied exchange.
    pub fn capture(&self, exchange: Exchange) {
        let exchange = Arc::new(exchange);
        if self.journal_capacity > 0 {
            let mut journal = self.journal();
            if journal.len() >= self.journal_capacity {
                journal.pop_front();
            }
            journal.push_back(Arc::clone(&exchange));
        }
        if self.recording.load(Ordering::Relaxed) {
            if let Status::Recording {
                exchanges, dropped, ..
            } = &mut *self.status()
            {
                if exchanges.len() < MAX_RECORDED {
                    exchanges.push(exchange);
                } else {
                    *dropped += 1;
                }
            }
        }
    }

    /// Forgets the journal's exchanges (with the journal).
    pub fn clear_journal(&self) {
        self.journal().clear();
    }
}

/// `/__admin/recordings/*`: the status and the JSON body of the answer.
pub(crate) fn admin(state: &MockState, method: &http::Method, path: &str, body: &Bytes) -> Answer {
    let recorder = &state.recorder;
    let spec = || -> Result<RecordSpec, Answer> {
        RecordSpec::parse(body)
            .map_err(|reason| wiremock_error(StatusCode::UNPROCESSABLE_ENTITY, 10, &reason))
    };
    match (method, path) {
        (&http::Method::GET, "/__admin/recordings/status") => {
            let status = match &*recorder.status() {
                Status::NeverStarted => "NeverStarted",
                Status::Recording { .. } => "Recording",
                Status::Stopped => "Stopped",
            };
            (StatusCode::OK, json!({"status": status}))
        }
        (&http::Method::POST, "/__admin/recordings/start") => {
            let spec = match spec() {
                Ok(spec) => spec,
                Err(answer) => return answer,
            };
            let Some(target) = spec.target_base_url.clone() else {
                return wiremock_error(
                    StatusCode::UNPROCESSABLE_ENTITY,
                    10,
                    "give the server to record: {\"targetBaseUrl\": \"http://host:port\"}",
                );
            };
            let proxy = match mapping::proxy_all(&target) {
                Ok(mut proxy) => {
                    proxy.priority = mapping::DEFAULT_PRIORITY;
                    proxy
                }
                Err(err) => {
                    return wiremock_error(StatusCode::UNPROCESSABLE_ENTITY, 10, &err.to_string())
                }
            };
            let mut status = recorder.status();
            if let Status::Recording { proxy_stub_id, .. } = &*status {
                state.remove_stub(proxy_stub_id);
            }
            *status = Status::Recording {
                proxy_stub_id: proxy.id.clone(),
                spec,
                exchanges: Vec::new(),
                dropped: 0,
            };
            recorder.recording.store(true, Ordering::Relaxed);
            state.upsert_stub(proxy);
            (StatusCode::OK, json!({}))
        }
        (&http::Method::POST, "/__admin/recordings/stop") => {
            let mut status = recorder.status();
            let Status::Recording {
                proxy_stub_id,
                spec,
                exchanges,
                dropped,
            } = std::mem::replace(&mut *status, Status::Stopped)
            else {
                return wiremock_error(StatusCode::BAD_REQUEST, 30, "Not currently recording.");
            };
            recorder.recording.store(false, Ordering::Relaxed);
            drop(status);
            state.remove_stub(&proxy_stub_id);
            if dropped > 0 {
                eprintln!(
                    "chokepoint mock: the recording kept its first {MAX_RECORDED} exchanges; \
                     {dropped} more were not recorded"
                );
            }
            keep(state, &spec, &exchanges)
        }
        (&http::Method::POST, "/__admin/recordings/snapshot") => {
            let spec = match spec() {
                Ok(spec) => spec,
                Err(answer) => return answer,
            };
            if recorder.journal_capacity == 0 {
                return wiremock_error(
                    StatusCode::INTERNAL_SERVER_ERROR,
                    500,
                    "The request journal is disabled: a snapshot is made from it, start the \
                     mock with --journal N",
                );
            }
            let exchanges: Vec<Arc<Exchange>> = recorder.journal().iter().cloned().collect();
            keep(state, &spec, &exchanges)
        }
        _ => wiremock_error(
            StatusCode::NOT_FOUND,
            404,
            &format!("no admin endpoint {method} {path}"),
        ),
    }
}

/// Makes the mappings, writes them (when asked and there is a folder), serves them, and
/// answers with them.
fn keep(state: &MockState, spec: &RecordSpec, exchanges: &[Arc<Exchange>]) -> Answer {
    let recorded = generate::mappings(exchanges, spec.repeats_as_scenarios);
    if spec.persist {
        if let Some(folder) = &state.recorder.folder {
            if let Err(reason) = write_all(folder, &recorded) {
                return wiremock_error(StatusCode::INTERNAL_SERVER_ERROR, 500, &reason);
            }
        } else if !recorded.is_empty() {
            eprintln!(
                "chokepoint mock: {} recorded mappings are served but not written: start the \
                 mock with --mappings DIR to keep them",
                recorded.len()
            );
        }
    }
    for recorded in &recorded {
        match mapping::parse_mappings(&recorded.json.to_string(), "recording") {
            Ok(parsed) => parsed.into_iter().for_each(|m| state.upsert_stub(m)),
            Err(err) => eprintln!("chokepoint mock: a recorded mapping cannot be served: {err}"),
        }
    }
    let list: Vec<Value> = recorded.iter().rev().map(|r| r.json.clone()).collect();
    match spec.output_ids {
        true => {
            let ids: Vec<Value> = list.iter().map(|m| m["id"].clone()).collect();
            (StatusCode::OK, json!({"ids": ids}))
        }
        false => (StatusCode::OK, json!({"mappings": list})),
    }
}

/// Writes each mapping to `folder/<file name>`: whole to a hidden file, then renamed.
fn write_all(folder: &Path, recorded: &[generate::Recorded]) -> Result<(), String> {
    std::fs::create_dir_all(folder)
        .map_err(|e| format!("cannot create {}: {e}", folder.display()))?;
    for recorded in recorded {
        let path = folder.join(&recorded.file_name);
        let partial = folder.join(format!(".{}.partial", recorded.file_name));
        let text = serde_json::to_string_pretty(&recorded.json).unwrap_or_default();
        std::fs::write(&partial, text + "\n")
            .and_then(|()| std::fs::rename(&partial, &path))
            .map_err(|e| {
                let _ = std::fs::remove_file(&partial);
                format!("cannot write {}: {e}", path.display())
            })?;
    }
    Ok(())
}
