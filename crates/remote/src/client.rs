//! The sweep's side: [`RemoteObserver`] opens a session on an observer beside the target, then
//! opens and closes one window per step. Every request has a timeout, so an observer that dies
//! mid-sweep costs a step its evidence (a note), never a hang.
use crate::{ErrorBody, SessionRequest, SessionStarted, TargetView, SESSION_HEADER};
use chokepoint_observe::WindowObservation;
use std::time::Duration;

/// The longest to wait for a connection to the observer.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(3);
/// The longest any request but a window's close may take.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(10);
/// The longest a window's close may take: the stack tools' last dump (jcmd, py-spy) comes first.
const FINISH_TIMEOUT: Duration = Duration::from_secs(60);

/// A session held on an observer; dropping it ends the session.
#[derive(Debug)]
pub struct RemoteObserver {
    url: String,
    token: Option<String>,
    agent: ureq::Agent,
    session: String,
    target: TargetView,
}

impl RemoteObserver {
    /// Opens a session on the observer at `url` (`http://HOST:PORT`), or one line saying why not
    /// (it does not answer, refuses the token, serves another sweep, finds no target there).
    pub fn connect(
        url: &str,
        token: Option<String>,
        request: &SessionRequest,
    ) -> Result<RemoteObserver, String> {
        let url = url.trim_end_matches('/').to_string();
        // A connection per request: a step's window stays open longer than the server keeps
        // an idle connection (its header timeout), and a POST is not retried on a stale one.
        let agent = ureq::AgentBuilder::new()
            .timeout_connect(CONNECT_TIMEOUT)
            .timeout(REQUEST_TIMEOUT)
            .max_idle_connections(0)
            .build();
        let mut observer = RemoteObserver {
            url,
            token,
            agent,
            session: String::new(),
            target: TargetView::default(),
        };
        let started: SessionStarted = observer
            .request("POST", "/v1/sessions", REQUEST_TIMEOUT)
            .send_json(request)
            .map_err(|e| observer.refusal(e))?
            .into_json()
            .map_err(|e| {
                format!(
                    "--observer {}: its answer is not an observer's: {e}",
                    observer.url
                )
            })?;
        observer.session = started.session;
        observer.target = started.target;
        Ok(observer)
    }

    /// The observer's URL.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The target as the observer found it when the session opened.
    pub fn target(&self) -> &TargetView {
        &self.target
    }

    /// The target as the observer sees it now.
    pub fn target_now(&self) -> Result<TargetView, String> {
        let path = match self.target.listen_port {
            Some(port) => format!("/v1/target?port={port}"),
            None => "/v1/target".to_string(),
        };
        self.request("GET", &path, REQUEST_TIMEOUT)
            .call()
            .map_err(|e| self.failure(e))?
            .into_json()
            .map_err(|e| e.to_string())
    }

    /// Opens a window: the observer starts sampling the target.
    pub fn start_window(&self) -> Result<(), String> {
        self.request("POST", "/v1/steps/start", REQUEST_TIMEOUT)
            .call()
            .map(|_| ())
            .map_err(|e| self.failure(e))
    }

    /// Closes the window and returns what it saw.
    pub fn finish_window(&self) -> Result<WindowObservation, String> {
        self.request("POST", "/v1/steps/finish", FINISH_TIMEOUT)
            .call()
            .map_err(|e| self.failure(e))?
            .into_json()
            .map_err(|e| format!("its answer could not be read: {e}"))
    }

    fn request(&self, method: &str, path: &str, timeout: Duration) -> ureq::Request {
        let mut request = self
            .agent
            .request(method, &format!("{}{path}", self.url))
            .timeout(timeout);
        if let Some(token) = &self.token {
            request = request.set("Authorization", &format!("Bearer {token}"));
        }
        if !self.session.is_empty() {
            request = request.set(SESSION_HEADER, &self.session);
        }
        request
    }

    /// What went wrong mid-sweep, in a few words (for a step's note).
    fn failure(&self, err: ureq::Error) -> String {
        match err {
            ureq::Error::Status(status, response) => {
                format!("{status}: {}", error_text(response))
            }
            ureq::Error::Transport(transport) => format!("no answer ({transport})"),
        }
    }

    /// Why the session could not be opened, as the sweep's one line.
    fn refusal(&self, err: ureq::Error) -> String {
        let url = &self.url;
        match err {
            ureq::Error::Status(401, _) if self.token.is_none() => format!(
                "--observer {url}: the observer requires a token (401): give the file of its --token-file with --observer-token-file FILE"
            ),
            ureq::Error::Status(401, _) => format!(
                "--observer {url}: the observer refused the token (401): --observer-token-file must hold the token of the observer's --token-file"
            ),
            ureq::Error::Status(409, response) => format!(
                "--observer {url}: busy (409): {}",
                error_text(response)
            ),
            ureq::Error::Status(404, response) => format!(
                "--observer {url}: the observer finds no target (404): {}",
                error_text(response)
            ),
            ureq::Error::Status(status, response) => format!(
                "--observer {url}: unexpected answer {status}: {}; is a chokepoint observe of the same version there?",
                error_text(response)
            ),
            ureq::Error::Transport(transport) => format!(
                "--observer {url}: no observer answers there ({}); start chokepoint observe beside the target, or check the address and port",
                transport.to_string().replace('\n', " ")
            ),
        }
    }
}

impl Drop for RemoteObserver {
    fn drop(&mut self) {
        if !self.session.is_empty() {
            let _ = self
                .request("DELETE", "/v1/sessions/current", Duration::from_secs(2))
                .call();
        }
    }
}

fn error_text(response: ureq::Response) -> String {
    let text = response.into_string().unwrap_or_default();
    serde_json::from_str::<ErrorBody>(&text)
        .map(|body| body.error)
        .unwrap_or(text)
}
