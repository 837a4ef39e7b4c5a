//! `chokepoint sweep` and `chokepoint demo` on bad input: one line on stderr, exit 2, no files.
use std::process::Command;

fn chokepoint(args: &[&str]) -> (i32, String) {
    let output = Command::new(env!("CARGO_BIN_EXE_chokepoint"))
        .args(args)
        .output()
        .expect("the binary runs");
    let stderr = String::from_utf8_lossy(&output.stderr).to_string();
    (output.status.code().unwrap_or(-1), stderr)
}

fn dead_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.local_addr().unwrap().port()
}

#[track_caller]
fn assert_one_line_error(args: &[&str], mentions: &str) {
    let (code, stderr) = chokepoint(args);
    assert_eq!(code, 2, "{args:?}: {stderr}");
    let lines: Vec<_> = stderr.lines().filter(|l| !l.trim().is_empty()).collect();
    assert_eq!(lines.len(), 1, "{args:?} printed {stderr}");
    assert!(
        lines[0].contains(mentions),
        "{args:?}: '{}' should mention '{mentions}'",
        lines[0]
    );
    assert!(!stderr.contains("panicked"), "{stderr}");
}

#[test]
fn a_what_if_that_cannot_be_run_is_refused_before_any_load() {
    let dead = format!("http://127.0.0.1:{}/", dead_port());
    let mock = format!("http://127.0.0.1:{}", dead_port());
    assert_one_line_error(&["sweep", &dead, "--what-if", "40"], "needs --mock");
    for (m, mentions) in [
        ("0", "1 to 1000000"),
        ("-3", "1 to 1000000"),
        ("forty", "not a pool size"),
        ("0x", "not a pool size"),
    ] {
        assert_one_line_error(&["sweep", &dead, "--mock", &mock, "--what-if", m], mentions);
    }
    assert_one_line_error(
        &[
            "sweep",
            &dead,
            "--mock",
            &mock,
            "--what-if",
            "80",
            "-c",
            "10,40",
        ],
        "raise --max-clients",
    );
}

#[test]
fn sweep_refuses_bad_input_in_one_line() {
    let dead = format!("http://127.0.0.1:{}/", dead_port());
    assert_one_line_error(&["sweep", "not a url"], "not a url");
    assert_one_line_error(&["sweep", &dead, "--step", "0s"], "zero");
    assert_one_line_error(&["sweep", &dead, "--step", "-1s"], "negative");
    assert_one_line_error(&["sweep", &dead, "--clients", "1,0,5"], "at least 1");
    assert_one_line_error(&["sweep", &dead, "--expect", "speed>3"], "speed");
    assert_one_line_error(
        &[
            "sweep",
            &dead,
            "--mock",
            &format!("http://127.0.0.1:{}", dead_port()),
        ],
        "--mock",
    );
}

#[test]
fn a_catalogue_of_ones_own_that_cannot_be_used_is_refused_in_one_line() {
    let dead = format!("http://127.0.0.1:{}/", dead_port());
    let dir = std::env::temp_dir().join(format!("cp-catalogue-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let no_source = dir.join("no-source.toml");
    std::fs::write(
        &no_source,
        "[[pool]]\nframework = \"ours\"\nthreads = [\"ours-#\"]\nsetting = \"ours.size\"\ndefault = \"4\"\nsource = \"\"\n",
    )
    .unwrap();
    let not_toml = dir.join("not-toml.toml");
    std::fs::write(&not_toml, "[[pool]\n").unwrap();
    let missing = dir.join("missing.toml");
    let (no_source, not_toml, missing) = (
        no_source.to_str().unwrap(),
        not_toml.to_str().unwrap(),
        missing.to_str().unwrap(),
    );
    assert_one_line_error(
        &["sweep", &dead, "--catalogue", no_source],
        "its source is empty",
    );
    assert_one_line_error(
        &["sweep", &dead, "--catalogue", not_toml],
        "not a catalogue of pools",
    );
    assert_one_line_error(&["sweep", &dead, "--catalogue", missing], "cannot read it");
    assert_one_line_error(&["merge", "x.json", "--catalogue", missing], "--catalogue");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn sweep_of_a_dead_port_says_nobody_listens_and_writes_nothing() {
    let dir = std::env::temp_dir().join(format!("cp-sweep-dead-{}", std::process::id()));
    let dead = format!("http://127.0.0.1:{}/", dead_port());
    let (code, stderr) = chokepoint(&[
        "sweep",
        &dead,
        "--clients",
        "1",
        "--step",
        "1s",
        "--out",
        dir.to_str().unwrap(),
    ]);
    assert_eq!(code, 2, "{stderr}");
    assert!(!dir.join("result.json").exists());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn demo_refuses_an_unknown_scenario() {
    assert_one_line_error(&["demo", "--only", "nonsense"], "nonsense");
    assert_one_line_error(
        &["demo", "--json", "/no/such/folder/x.json"],
        "does not exist",
    );
}

#[test]
fn sweep_of_a_service_that_answers_nothing_stops_at_once_and_writes_nothing() {
    // A loopback server that closes every connection it accepts, before any response; it stops
    // with the test (the listener is dropped when the thread's loop ends on the flag).
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/", listener.local_addr().unwrap());
    listener.set_nonblocking(true).unwrap();
    let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let stop = done.clone();
    let server = std::thread::spawn(move || {
        while !stop.load(std::sync::atomic::Ordering::Relaxed) {
            match listener.accept() {
                Ok((stream, _)) => drop(stream),
                Err(_) => std::thread::sleep(std::time::Duration::from_millis(5)),
            }
        }
    });
    let out = std::env::temp_dir().join(format!("cp-sweep-closed-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&out);
    let (code, stderr) = chokepoint(&["sweep", &url, "--out", out.to_str().unwrap()]);
    done.store(true, std::sync::atomic::Ordering::Relaxed);
    server.join().unwrap();
    assert_eq!(code, 2, "{stderr}");
    let lines: Vec<_> = stderr.lines().filter(|l| !l.trim().is_empty()).collect();
    assert_eq!(lines.len(), 1, "{stderr}");
    assert!(lines[0].contains("every request failed"), "{stderr}");
    assert!(
        !out.exists(),
        "nothing is written for a target that never answered"
    );
}

#[test]
fn a_sweep_into_a_pipe_prints_its_rows_and_no_live_line() {
    // The target: a mock in this process, each answer after 10 ms.
    let target = chokepoint_mock::start(
        "127.0.0.1:0".parse().unwrap(),
        chokepoint_mock::MockConfig {
            fixed_delay: Some(std::time::Duration::from_millis(10)),
            ..Default::default()
        },
    )
    .unwrap();
    let url = target.url();
    let output = Command::new(env!("CARGO_BIN_EXE_chokepoint"))
        .args(["sweep", &format!("{url}/x"), "-c", "1,3", "--step", "500ms"])
        .args(["--pid", "none"])
        .output()
        .expect("the binary runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{output:?}");
    // The table: its header, then one row per step, each a line of its own.
    let table: Vec<&str> = stdout.lines().take_while(|l| !l.is_empty()).collect();
    assert_eq!(table.len(), 3, "{stdout}");
    assert!(table[0].starts_with("clients"), "{stdout}");
    for (row, clients) in table[1..].iter().zip(["1", "3"]) {
        assert_eq!(row.split_whitespace().next(), Some(clients), "{stdout}");
    }
    // Nothing of the live line of a step under way: no redraws, no escapes, not its words.
    assert!(
        !stdout.contains('\r') && !stdout.contains('\x1b'),
        "{stdout:?}"
    );
    assert!(
        !stdout.contains(" left ·") && !stdout.contains("ramping up"),
        "{stdout}"
    );
}

#[test]
fn a_path_that_answers_404_to_everything_is_refused_at_once_in_one_line() {
    // A mock that knows GET /orders only: /ordres (a typo) gets WireMock's 404.
    let dir = std::env::temp_dir().join(format!("cp-sweep-404-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("mappings")).unwrap();
    std::fs::write(
        dir.join("mappings/orders.json"),
        r#"{"request": {"method": "GET", "url": "/orders"}, "response": {"status": 200, "body": "[]"}}"#,
    )
    .unwrap();
    let (_mock, url) = crate::support::mock(&["--mappings", dir.to_str().unwrap()]);
    let out = dir.join("out");
    let started = std::time::Instant::now();
    let wrong = format!("{url}/ordres");
    let args = [
        "sweep",
        &wrong,
        "--pid",
        "none",
        "--out",
        out.to_str().unwrap(),
    ];
    assert_one_line_error(&args, "404");
    let (_, stderr) = chokepoint(&args);
    assert!(stderr.contains("check the path"), "{stderr}");
    // Before any step: the 20-30 s of measuring 404s are gone, and nothing was written.
    assert!(started.elapsed() < std::time::Duration::from_secs(10));
    assert!(!out.join("result.json").exists());
    // The right path sweeps as before (one short step is enough to tell).
    let right = format!("{url}/orders");
    let (code, stderr) = chokepoint(&[
        "sweep",
        &right,
        "--pid",
        "none",
        "--clients",
        "1",
        "--step",
        "1s",
    ]);
    assert_eq!(code, 0, "{stderr}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn ctrl_c_keeps_the_finished_steps_writes_the_report_and_exits_130() {
    use std::io::BufRead;
    let (_mock, url) = crate::support::mock(&["--delay", "20ms"]);
    let dir = std::env::temp_dir().join(format!("cp-sweep-sigint-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let mut sweep = chokepoint_testkit::Server::spawn(
        "sweep",
        Command::new(env!("CARGO_BIN_EXE_chokepoint"))
            .args(["sweep", &format!("{url}/"), "--pid", "none", "--step-fixed"])
            .args(["--clients", "1,2,4,8,16,32", "--step", "2s", "--out"])
            .arg(&dir)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped()),
    );
    // The header, then the first step's row: interrupt during the second step.
    let stdout = sweep.child_mut().stdout.take().unwrap();
    let mut lines = std::io::BufReader::new(stdout).lines();
    let mut rows = 0;
    while rows < 2 {
        let line = lines.next().expect("the sweep prints its steps").unwrap();
        if !line.trim().is_empty() {
            rows += 1;
        }
    }
    // SAFETY: kill(2) on the sweep this test started.
    unsafe { libc::kill(sweep.pid(), libc::SIGINT) };
    std::thread::spawn(move || for _ in lines {});
    let status = sweep.child_mut().wait().expect("the sweep ends");
    assert_eq!(status.code(), Some(130), "an interrupted sweep exits 130");
    let result: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("result.json")).unwrap()).unwrap();
    assert_eq!(result["interrupted"], true);
    assert!(!result["steps"].as_array().unwrap().is_empty());
    assert!(dir.join("report.html").exists());
    let _ = std::fs::remove_dir_all(&dir);
}
