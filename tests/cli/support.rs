//! What the modules that run the binary share: a temp directory of their own, the check that
//! bad input got one line on stderr and exit 2, and a `chokepoint mock` to load.
use std::path::PathBuf;
use std::process::{Command, Output};

/// A fresh directory under the temp dir, removed when dropped.
pub struct TempDir(pub PathBuf);

impl TempDir {
    pub fn new(name: &str) -> TempDir {
        let path =
            std::env::temp_dir().join(format!("chokepoint-cli-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&path);
        std::fs::create_dir_all(&path).expect("temp dir");
        TempDir(path)
    }

    pub fn entries(&self) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(&self.0)
            .expect("read dir")
            .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Bad input: exit 2, nothing on stdout, one line on stderr that names `needle`.
pub fn assert_one_line_error(output: &Output, needle: &str) {
    assert_eq!(output.status.code(), Some(2), "{output:?}");
    assert!(output.stdout.is_empty(), "{output:?}");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.starts_with("chokepoint: "), "{stderr}");
    assert!(stderr.contains(needle), "{stderr} lacks {needle}");
}

/// `chokepoint mock` on a free port with `args`, and its URL.
pub fn mock(args: &[&str]) -> (chokepoint_testkit::Server, String) {
    use std::io::BufRead;
    let mut server = chokepoint_testkit::Server::spawn(
        "mock",
        Command::new(env!("CARGO_BIN_EXE_chokepoint"))
            .args(["mock", "--port", "0"])
            .args(args)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null()),
    );
    let stdout = server.child_mut().stdout.take().unwrap();
    let mut lines = std::io::BufReader::new(stdout).lines();
    let line = lines.next().expect("a start line").unwrap();
    // Keep reading so that the mock never writes into a closed pipe.
    std::thread::spawn(move || for _ in lines {});
    let url = line
        .split_whitespace()
        .find(|w| w.starts_with("http://"))
        .unwrap_or_else(|| panic!("no URL in {line}"))
        .to_string();
    (server, url)
}

/// A `<testcase>` of a JUnit file: its suite's name, class name, name, and failure message.
#[derive(Debug)]
pub struct JunitCase {
    pub suite: String,
    pub classname: String,
    pub name: String,
    pub failure: Option<String>,
}

/// Reads a `--junit` file as the CI tools do, checking the shape the JUnit schema wants:
/// `<testsuites>` of `<testsuite name tests failures>` whose counts match their
/// `<testcase classname name>`s, a failed case holding one `<failure message>`. Parsed twice,
/// by roxmltree and by Python's `xml.etree` (another parser, the one many CI scripts use),
/// which must agree on every case.
pub fn junit_cases(path: &std::path::Path) -> Vec<JunitCase> {
    let text = std::fs::read_to_string(path).expect("the --junit file");
    let doc = roxmltree::Document::parse(&text).unwrap_or_else(|e| panic!("{e}: {text}"));
    let root = doc.root_element();
    assert_eq!(root.tag_name().name(), "testsuites", "{text}");
    let mut cases = Vec::new();
    let number = |node: roxmltree::Node, attr: &str| -> usize {
        node.attribute(attr)
            .unwrap_or_else(|| panic!("<{}> has no {attr}", node.tag_name().name()))
            .parse()
            .unwrap()
    };
    for suite in root.children().filter(roxmltree::Node::is_element) {
        assert_eq!(suite.tag_name().name(), "testsuite", "{text}");
        let name = suite.attribute("name").expect("a suite name").to_string();
        let mine: Vec<roxmltree::Node> = suite
            .children()
            .filter(|n| n.has_tag_name("testcase"))
            .collect();
        assert_eq!(number(suite, "tests"), mine.len(), "{text}");
        let failed = mine
            .iter()
            .filter(|c| c.children().any(|n| n.has_tag_name("failure")))
            .count();
        assert_eq!(number(suite, "failures"), failed, "{text}");
        for case in mine {
            let failures: Vec<roxmltree::Node> = case
                .children()
                .filter(|n| n.has_tag_name("failure"))
                .collect();
            assert!(failures.len() <= 1, "{text}");
            cases.push(JunitCase {
                suite: name.clone(),
                classname: case.attribute("classname").expect("classname").into(),
                name: case.attribute("name").expect("a case name").into(),
                failure: failures
                    .first()
                    .map(|f| f.attribute("message").expect("a failure message").into()),
            });
        }
    }
    assert_eq!(number(root, "tests"), cases.len(), "{text}");
    assert_eq!(
        number(root, "failures"),
        cases.iter().filter(|c| c.failure.is_some()).count()
    );
    // Python's reading: one line per case, classname TAB name TAB failure message or "-".
    let script = "import sys, xml.etree.ElementTree as E\n\
        root = E.parse(sys.argv[1]).getroot()\n\
        assert root.tag == 'testsuites'\n\
        for s in root.iter('testsuite'):\n\
        \x20   for c in s.iter('testcase'):\n\
        \x20       f = c.find('failure')\n\
        \x20       print(c.get('classname'), c.get('name'), '-' if f is None else f.get('message'), sep='\\t')\n";
    let python = Command::new("python3")
        .args(["-c", script])
        .arg(path)
        .output()
        .expect("python3 runs (scripts/install-test-deps.sh installs it)");
    assert!(python.status.success(), "{python:?}");
    let read: Vec<String> = String::from_utf8(python.stdout)
        .unwrap()
        .lines()
        .map(String::from)
        .collect();
    let ours: Vec<String> = cases
        .iter()
        .map(|c| {
            format!(
                "{}\t{}\t{}",
                c.classname,
                c.name,
                c.failure.as_deref().unwrap_or("-")
            )
        })
        .collect();
    assert_eq!(read, ours);
    cases
}
