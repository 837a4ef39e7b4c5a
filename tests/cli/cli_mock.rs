//! `chokepoint mock` on the command line: the one-line start, and bad input as one line, exit 2.
use chokepoint_testkit::Server;
use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Command, Stdio};

fn chokepoint() -> Command {
    Command::new(env!("CARGO_BIN_EXE_chokepoint"))
}

/// A scratch folder for this test, removed on drop.
struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str) -> Scratch {
        let dir = std::env::temp_dir().join(format!("cp-cli-mock-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Scratch(dir)
    }

    fn file(&self, name: &str, text: &str) -> PathBuf {
        let path = self.0.join(name);
        std::fs::File::create(&path)
            .and_then(|mut f| f.write_all(text.as_bytes()))
            .unwrap();
        path
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Runs `chokepoint mock ARGS` expecting it to refuse: returns its one stderr line.
fn refused(args: &[&str]) -> String {
    let output = chokepoint()
        .arg("mock")
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("the binary runs");
    assert_eq!(output.status.code(), Some(2), "{output:?}");
    let stderr = String::from_utf8_lossy(&output.stderr)
        .trim_end()
        .to_string();
    assert_eq!(stderr.lines().count(), 1, "one line: {stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    stderr
}

#[test]
fn unreadable_mappings() {
    let message = refused(&["--port", "0", "--mappings", "/no/such/dir"]);
    assert!(
        message.contains("cannot read mappings at /no/such/dir"),
        "{message}"
    );
}

#[test]
fn invalid_json_names_file_line_and_column() {
    let scratch = Scratch::new("json");
    let file = scratch.file(
        "bad.json",
        "{\n  \"request\": {\"url\": \"/a\"},\n  \"response\": {,}\n}\n",
    );
    let message = refused(&["--port", "0", "--mappings", file.to_str().unwrap()]);
    assert!(
        message.contains("bad.json: invalid JSON at line 3, column"),
        "{message}"
    );
}

#[test]
fn unknown_matcher_and_fault_names_name_the_json_path() {
    let scratch = Scratch::new("names");
    let file = scratch.file(
        "matcher.json",
        r#"{"request": {"queryParameters": {"q": {"equalsTo": "x"}}}, "response": {}}"#,
    );
    let message = refused(&["--port", "0", "--mappings", file.to_str().unwrap()]);
    assert!(
        message.contains(
            "matcher.json: $.request.queryParameters.q.equalsTo: unknown matcher 'equalsTo'"
        ),
        "{message}"
    );
    let file = scratch.file(
        "fault.json",
        r#"{"mappings": [{"request": {}, "response": {"fault": "CONNECTION_RESET"}}]}"#,
    );
    let message = refused(&["--port", "0", "--mappings", file.to_str().unwrap()]);
    assert!(
        message.contains("$.mappings[0].response.fault: unknown fault 'CONNECTION_RESET'"),
        "{message}"
    );
}

#[test]
fn a_regex_that_does_not_compile() {
    let scratch = Scratch::new("regex");
    let file = scratch.file(
        "re.json",
        r#"{"request": {"urlPattern": "/a/[0-9"}, "response": {}}"#,
    );
    let message = refused(&["--port", "0", "--mappings", file.to_str().unwrap()]);
    assert!(
        message.contains("$.request.urlPattern: the regex does not compile"),
        "{message}"
    );
}

#[test]
fn templates_and_proxies_the_mock_cannot_honour() {
    let scratch = Scratch::new("templating");
    let file = scratch.file(
        "t.json",
        r#"{"request": {}, "response": {"transformers": ["response-template"],
            "body": "{{capitalize request.method}}"}}"#,
    );
    let message = refused(&["--port", "0", "--mappings", file.to_str().unwrap()]);
    assert!(
        message.contains("$.response: response-template: body template: the helper 'capitalize' is not supported"),
        "{message}"
    );
    let message = refused(&["--port", "0", "--proxy-all", "ftp://127.0.0.1:9"]);
    assert!(message.contains("is not a base URL"), "{message}");
    let message = refused(&["--port", "0", "--proxy-all", "127.0.0.1:9"]);
    assert!(message.contains("write http://host:port"), "{message}");
}

#[test]
fn bad_flags() {
    assert!(refused(&["--delay", "soon"]).contains("soon"));
    assert!(refused(&["--delay", "-1s"]).contains("negative"));
    assert!(refused(&["--max-connections", "0"]).contains("at least 1"));
    assert!(refused(&["--max-concurrent-streams", "0"]).contains("at least 1"));
    assert!(refused(&["--max-concurrent-streams", "4294967296"]).contains("too many streams"));
    assert!(refused(&["--keepalive-timeout", "0s"]).contains("zero"));
}

#[test]
fn starts_with_one_line_then_refuses_a_port_in_use() {
    let mut mock = Server::spawn(
        "mock",
        chokepoint()
            .args([
                "mock",
                "--port",
                "0",
                "--delay",
                "1s",
                "--max-connections",
                "150",
                "--max-concurrent-streams",
                "128",
            ])
            .stdout(Stdio::piped())
            .stderr(Stdio::null()),
    );
    let mut line = String::new();
    BufReader::new(mock.child_mut().stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let prefix = "chokepoint mock listening on http://127.0.0.1:";
    assert!(line.starts_with(prefix), "{line}");
    assert!(
        line.contains("delay 1s")
            && line.contains("max connections 150")
            && line.contains("HTTP/2 streams per connection 128"),
        "{line}"
    );
    let port = line[prefix.len()..].split(' ').next().unwrap().to_string();
    let message = refused(&["--port", &port]);
    assert!(message.contains("already in use"), "{message}");
}

#[test]
fn a_folder_with_three_broken_files_names_all_three_in_one_run() {
    let scratch = Scratch::new("three-broken");
    std::fs::create_dir_all(scratch.0.join("mappings")).unwrap();
    scratch.file(
        "mappings/good.json",
        r#"{"request": {"url": "/ok"}, "response": {"status": "200"}}"#,
    );
    scratch.file(
        "mappings/type.json",
        r#"{"request": {"url": 42}, "response": {"status": 200}}"#,
    );
    scratch.file("mappings/syntax.json", "{\"request\": {\"url\": \"/a\",,}");
    scratch.file(
        "mappings/two.json",
        r#"{"request": {"url": "/b"}, "response": {"fault": "BOOM", "fixedDelayMilliseconds": -5}}"#,
    );
    let root = scratch.0.display().to_string();
    let output = chokepoint()
        .args(["mock", "--port", "0", "--mappings", &root])
        .stdin(Stdio::null())
        .output()
        .expect("the binary runs");
    assert_eq!(output.status.code(), Some(2), "{output:?}");
    let stderr = String::from_utf8_lossy(&output.stderr);
    let lines: Vec<&str> = stderr.lines().collect();
    assert!(!stderr.contains("panicked"), "{stderr}");
    // One line per problem (four, in three files), then the verdict.
    assert_eq!(lines.len(), 5, "{stderr}");
    assert!(lines
        .iter()
        .any(|l| l.contains("type.json: $.request.url: type error")));
    assert!(lines
        .iter()
        .any(|l| l.contains("syntax.json: invalid JSON at line 1")));
    assert!(lines
        .iter()
        .any(|l| l.contains("two.json: $.response.fault: unknown fault")));
    assert!(lines
        .iter()
        .any(|l| l.contains("two.json: $.response.fixedDelayMilliseconds: must be a number >= 0")));
    assert!(
        lines[4].contains("4 problems in the mappings") && lines[4].contains("nothing is served"),
        "{stderr}"
    );
    assert!(!stderr.contains("good.json"), "{stderr}");
}
