//! `chokepoint load` from the outside: bad input is one line on stderr, exit code 2, and no file;
//! a good run writes its JSON report.
use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::path::PathBuf;
use std::process::{Command, Output};

fn chokepoint(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_chokepoint"))
        .args(args)
        .output()
        .expect("the chokepoint binary runs")
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("cp-cli-load-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A port nobody listens on (bound, then released).
fn dead_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// A keep-alive HTTP server answering "ok" on its own threads, for the life of the test.
fn ok_server() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            std::thread::spawn(move || {
                let mut reader = BufReader::new(stream.try_clone().unwrap());
                let mut writer = stream;
                let mut line = String::new();
                loop {
                    line.clear();
                    match reader.read_line(&mut line) {
                        Ok(0) | Err(_) => return,
                        Ok(_) if line == "\r\n" => {
                            let response = b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok";
                            if writer.write_all(response).is_err() {
                                return;
                            }
                        }
                        Ok(_) => {}
                    }
                }
            });
        }
    });
    url
}

#[test]
fn bad_input_is_one_line_exit_2_and_no_file() {
    let dir = scratch("bad");
    let json = dir.join("out.json");
    let json = json.to_str().unwrap();
    let live = ok_server();
    let dead = format!("http://127.0.0.1:{}/", dead_port());
    let missing_body = dir.join("no-such-body.txt");
    let tls_to_plain = live.replace("http://", "https://");
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (vec!["ht!tp://x y"], "URL"),
        (vec!["localhost:8080/"], "URL"),
        (vec!["ftp://127.0.0.1/"], "http or https"),
        (vec![&tls_to_plain], "is it an https:// server"),
        (vec![], "<URL>"),
        (
            vec!["--targets", "no-such-targets.txt"],
            "--targets no-such-targets.txt",
        ),
        (vec![&dead], "nothing listens on"),
        (vec![&live, "-c", "0"], "at least 1"),
        (vec![&live, "-d", "0s"], "zero"),
        (vec![&live, "-n", "10", "-d", "5s"], "cannot be used with"),
        (
            vec![&live, "--body-file", missing_body.to_str().unwrap()],
            "--body-file",
        ),
        (vec![&live, "--rate", "0"], "above 0"),
        (vec![&live, "-m", "GE T"], "not an HTTP method"),
        (vec![&live, "-H", "no colon"], "Name: value"),
    ];
    for (args, needle) in cases {
        let mut all = vec!["load", "-n", "5"];
        if args.iter().any(|a| *a == "-n" || *a == "-d") {
            all.truncate(1);
        }
        all.extend(args.iter().copied());
        all.extend(["--json", json]);
        let out = chokepoint(&all);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{all:?}: {stderr}");
        assert_eq!(stderr.trim_end().lines().count(), 1, "{all:?}: {stderr}");
        assert!(stderr.contains(needle), "{all:?}: {stderr}");
        assert!(!std::path::Path::new(json).exists(), "{all:?} wrote {json}");
        assert_eq!(
            std::fs::read_dir(&dir).unwrap().count(),
            0,
            "{all:?} left a file"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_run_prints_the_report_and_writes_json_and_hdr_log() {
    let dir = scratch("good");
    let json = dir.join("load.json");
    let hdr = dir.join("load.hlog");
    let url = ok_server();
    let out = chokepoint(&[
        "load",
        &url,
        "-c",
        "2",
        "-n",
        "50",
        "--json",
        json.to_str().unwrap(),
        "--hdr-log",
        hdr.to_str().unwrap(),
    ]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("Complete requests:      50"), "{stdout}");
    assert!(stdout.contains("summary ="), "{stdout}");
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(report["requests"], 50);
    assert_eq!(report["ok"], 50);
    let log = std::fs::read_to_string(&hdr).unwrap();
    assert!(log.lines().any(|l| l.contains(",HISTF")), "{log}");
    assert_eq!(
        std::fs::read_dir(&dir).unwrap().count(),
        2,
        "temp files left"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
