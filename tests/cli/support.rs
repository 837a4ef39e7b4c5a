//! What the modules that run the binary share: a temp directory of their own, and the check
//! that bad input got one line on stderr and exit 2.
use std::path::PathBuf;
use std::process::Output;

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
