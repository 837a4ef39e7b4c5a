//! Several requests in one run: vegeta's plain targets format, and the order they are sent in.
//!
//! ```text
//! GET http://127.0.0.1:8080/items
//! X-Account: 8675309
//!
//! POST http://127.0.0.1:8080/items
//! Content-Type: application/json
//! @new-item.json
//! ```
//! A target is a `METHOD URL` line, then its header lines (`Name: value`), then an optional
//! `@file` line whose content is the body (the path as given, from the working directory, as
//! vegeta reads it); targets are separated by blank lines; lines starting with `#` are comments.
//! [`parse_targets`] names the line of any mistake. The engine sends them in turn: request `k` of
//! the run goes to target `order[k % order.len()]` ([`send_order`]), so with `-n` each target gets
//! its exact share, whichever order.
use crate::{parse_method, parse_url, LoadError};
use bytes::Bytes;
use rand::seq::SliceRandom;

/// One request of a targets file.
#[derive(Debug, Clone, PartialEq)]
pub struct RequestSpec {
    /// Request method.
    pub method: http::Method,
    /// The URL (same scheme, host and port for every target of a run).
    pub url: String,
    /// Its headers, in order.
    pub headers: Vec<(String, String)>,
    /// Its body (empty for none).
    pub body: Bytes,
}

/// The order targets are sent in.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum TargetsOrder {
    /// In the file's order, over and over.
    #[default]
    RoundRobin,
    /// Each round of one request per target in a random order.
    Random,
}

/// Rounds in the random order's table before it repeats.
const RANDOM_ROUNDS: usize = 64;

/// The table of target indexes request `k` is read from (`order[k % len]`): every target once per
/// round, so any run of whole rounds sends each target equally often.
pub(crate) fn send_order(targets: usize, order: TargetsOrder) -> Vec<usize> {
    let round: Vec<usize> = (0..targets.max(1)).collect();
    match order {
        TargetsOrder::RoundRobin => round,
        TargetsOrder::Random => {
            let mut rng = rand::thread_rng();
            let mut table = Vec::with_capacity(round.len() * RANDOM_ROUNDS);
            for _ in 0..RANDOM_ROUNDS {
                let mut shuffled = round.clone();
                shuffled.shuffle(&mut rng);
                table.extend(shuffled);
            }
            table
        }
    }
}

/// Parses a targets file's text. `file` names it in messages; `read_body` reads an `@file` body.
/// Every target must be on the first target's server (scheme, host, port): a run loads one server.
pub fn parse_targets(
    text: &str,
    file: &str,
    read_body: &dyn Fn(&str) -> std::io::Result<Vec<u8>>,
) -> Result<Vec<RequestSpec>, LoadError> {
    let bad = |line: usize, why: String| {
        LoadError::Config(format!("--targets {file} line {line}: {why}"))
    };
    let mut targets: Vec<RequestSpec> = Vec::new();
    let mut origin = None;
    let mut current: Option<RequestSpec> = None;
    for (index, raw) in text.lines().enumerate() {
        let number = index + 1;
        let line = raw.trim();
        if line.starts_with('#') {
            continue;
        }
        if line.is_empty() {
            targets.extend(current.take());
            continue;
        }
        let Some(target) = current.as_mut() else {
            let (method, url) = line.split_once(char::is_whitespace).ok_or_else(|| {
                bad(
                    number,
                    format!(
                        "'{line}' is not a request line: write it as 'GET http://host:port/path'"
                    ),
                )
            })?;
            let method = parse_method(method).map_err(|e| bad(number, e.to_string()))?;
            let url = url.trim();
            let parsed = parse_url(url).map_err(|e| bad(number, e.to_string()))?;
            let this_origin = (parsed.tls, parsed.host.clone(), parsed.port);
            match &origin {
                None => origin = Some(this_origin),
                Some(first) if *first != this_origin => {
                    return Err(bad(
                        number,
                        format!(
                            "{url} is not on the same server as the first target (one run loads \
                             one server: same scheme, host and port)"
                        ),
                    ))
                }
                Some(_) => {}
            }
            current = Some(RequestSpec {
                method,
                url: url.to_string(),
                headers: Vec::new(),
                body: Bytes::new(),
            });
            continue;
        };
        if let Some(path) = line.strip_prefix('@') {
            if !target.body.is_empty() {
                return Err(bad(
                    number,
                    "a second @body line: a target has one body".into(),
                ));
            }
            let body = read_body(path.trim())
                .map_err(|e| bad(number, format!("the body file {path} cannot be read ({e})")))?;
            target.body = Bytes::from(body);
            continue;
        }
        let header = line.split_once(':').and_then(|(name, value)| {
            let name = name.trim();
            http::HeaderName::from_bytes(name.as_bytes())
                .ok()
                .filter(|_| http::HeaderValue::from_str(value.trim()).is_ok())
                .map(|_| (name.to_string(), value.trim().to_string()))
        });
        match header {
            Some(header) => target.headers.push(header),
            None => {
                return Err(bad(
                    number,
                    format!(
                        "'{line}' is not a header ('Name: value') or a body ('@file'); targets \
                         are separated by a blank line"
                    ),
                ))
            }
        }
    }
    targets.extend(current);
    if targets.is_empty() {
        return Err(LoadError::Config(format!(
            "--targets {file}: no target in it: write one 'GET http://host:port/path' line per request"
        )));
    }
    Ok(targets)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bodies(path: &str) -> std::io::Result<Vec<u8>> {
        match path {
            "item.json" => Ok(b"{\"a\":1}".to_vec()),
            _ => Err(std::io::Error::from(std::io::ErrorKind::NotFound)),
        }
    }

    fn parse(text: &str) -> Result<Vec<RequestSpec>, String> {
        parse_targets(text, "t.txt", &bodies).map_err(|e| e.to_string())
    }

    #[test]
    fn three_targets_with_headers_and_a_body() {
        let targets = parse(
            "# the list, a detail and a new item\n\
             GET http://127.0.0.1:8080/items\n\
             X-Account: 8675309\n\
             \n\
             get http://127.0.0.1:8080/items/1\n\
             \n\
             \n\
             POST http://127.0.0.1:8080/items\n\
             Content-Type: application/json\n\
             @item.json\n",
        )
        .unwrap();
        assert_eq!(targets.len(), 3);
        assert_eq!(
            targets[0].headers,
            vec![("X-Account".into(), "8675309".into())]
        );
        assert_eq!(targets[1].method, http::Method::GET);
        assert_eq!(targets[1].url, "http://127.0.0.1:8080/items/1");
        assert_eq!(targets[2].method, http::Method::POST);
        assert_eq!(targets[2].body, Bytes::from_static(b"{\"a\":1}"));
    }

    #[test]
    fn mistakes_are_named_by_line() {
        // (file, the line named, a word of the reason)
        let table = [
            ("GET\n", "line 1", "request line"),
            ("GET http://h:1/\nnot a header\n", "line 2", "not a header"),
            (
                "GET http://h:1/\n\nGE(T http://h:1/\n",
                "line 3",
                "HTTP method",
            ),
            ("GET ftp://h/\n", "line 1", "usable URL"),
            (
                "GET http://h:1/\n\nGET http://h:2/\n",
                "line 3",
                "same server",
            ),
            (
                "GET http://h:1/\n\nGET https://h:1/\n",
                "line 3",
                "same server",
            ),
            (
                "POST http://h:1/\n@missing.json\n",
                "line 2",
                "cannot be read",
            ),
            (
                "POST http://h:1/\n@item.json\n@item.json\n",
                "line 3",
                "second @body",
            ),
        ];
        for (text, line, why) in table {
            let message = parse(text).unwrap_err();
            assert!(message.contains(line), "{text:?}: {message}");
            assert!(message.contains(why), "{text:?}: {message}");
            assert!(message.starts_with("--targets t.txt"), "{message}");
        }
        assert!(parse("# only a comment\n\n")
            .unwrap_err()
            .contains("no target"));
    }

    #[test]
    fn every_order_sends_each_target_once_per_round() {
        for order in [TargetsOrder::RoundRobin, TargetsOrder::Random] {
            let table = send_order(3, order);
            assert_eq!(table.len() % 3, 0);
            for round in table.chunks(3) {
                let mut sorted = round.to_vec();
                sorted.sort();
                assert_eq!(sorted, vec![0, 1, 2], "{order:?}");
            }
        }
        assert_eq!(send_order(3, TargetsOrder::RoundRobin), vec![0, 1, 2]);
        assert_eq!(send_order(0, TargetsOrder::RoundRobin), vec![0]);
    }
}
