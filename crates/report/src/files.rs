//! The files a sweep leaves behind: `DIR/result.json` (the JSON contract) and `DIR/report.html`;
//! and the others a command writes: `--json FILE`, `--junit FILE`, `compare --out DIR`'s
//! `compare.html`.
//!
//! Every write goes to a hidden temporary file beside the target and is renamed over it, so a
//! reader (or an interrupted sweep) never sees half a file.
use chokepoint_result::SweepResult;
use serde::Serialize;
use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// The name of a sweep's saved result inside its directory.
pub const RESULT_FILE: &str = "result.json";
/// The name of a sweep's HTML report inside its directory.
pub const REPORT_FILE: &str = "report.html";

/// Why a saved sweep could not be read back. Each message is one line naming the path and what
/// to do about it.
#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    /// The directory does not exist.
    #[error("no such directory: {0} (give the --out DIR of a sweep)")]
    NoDirectory(PathBuf),
    /// The path exists but is not a directory.
    #[error("{0} is not a directory (give the --out DIR of a sweep, not a file in it)")]
    NotADirectory(PathBuf),
    /// The directory has no `result.json`.
    #[error("no result.json in {0} (run `chokepoint sweep URL --out {0}` first)")]
    NoResult(PathBuf),
    /// `result.json` could not be read.
    #[error("cannot read {path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// What the OS said.
        source: io::Error,
    },
    /// `result.json` is not JSON, or not a sweep result.
    #[error("{path} is not a sweep result: {message} at line {line}, column {column}")]
    BadJson {
        /// The file.
        path: PathBuf,
        /// What serde_json found wrong.
        message: String,
        /// 1-based line of the problem.
        line: usize,
        /// 1-based column of the problem.
        column: usize,
    },
}

/// Writes `dir/result.json` atomically (creating `dir` if needed) and returns its path.
pub fn write_result(dir: &Path, result: &SweepResult) -> io::Result<PathBuf> {
    fs::create_dir_all(dir)?;
    let path = dir.join(RESULT_FILE);
    write_json_file(&path, result)?;
    Ok(path)
}

/// Reads `dir/result.json` back.
pub fn read_result(dir: &Path) -> Result<SweepResult, ReportError> {
    match fs::metadata(dir) {
        Err(_) => return Err(ReportError::NoDirectory(dir.to_path_buf())),
        Ok(meta) if !meta.is_dir() => return Err(ReportError::NotADirectory(dir.to_path_buf())),
        Ok(_) => {}
    }
    let path = dir.join(RESULT_FILE);
    let text = match fs::read_to_string(&path) {
        Ok(text) => text,
        Err(err) if err.kind() == io::ErrorKind::NotFound => {
            return Err(ReportError::NoResult(dir.to_path_buf()))
        }
        Err(source) => return Err(ReportError::Read { path, source }),
    };
    serde_json::from_str(&text).map_err(|err| {
        let location = format!(" at line {} column {}", err.line(), err.column());
        let full = err.to_string();
        let message = full.strip_suffix(&location).unwrap_or(&full).to_string();
        ReportError::BadJson {
            path,
            message,
            line: err.line(),
            column: err.column(),
        }
    })
}

/// Writes `dir/report.html` atomically (creating `dir` if needed) and returns its path.
pub fn write_html(dir: &Path, result: &SweepResult) -> io::Result<PathBuf> {
    fs::create_dir_all(dir)?;
    let path = dir.join(REPORT_FILE);
    write_atomic(&path, crate::html::render(result).as_bytes())?;
    Ok(path)
}

/// Writes JUnit XML of `suites` to `path` atomically (for `--junit FILE`). The parent directory
/// must exist.
pub fn write_junit(path: &Path, suites: &[crate::junit::Suite]) -> io::Result<()> {
    write_atomic(path, crate::junit::render(suites).as_bytes())
}

/// The name of `compare --out DIR`'s page inside its directory.
pub const COMPARE_FILE: &str = "compare.html";

/// Writes `dir/compare.html` (creating `dir` if needed) atomically and returns its path.
pub fn write_compare_html(
    dir: &Path,
    comparison: &chokepoint_compare::Comparison,
    before: &chokepoint_compare::Run,
    after: &chokepoint_compare::Run,
) -> io::Result<PathBuf> {
    fs::create_dir_all(dir)?;
    let path = dir.join(COMPARE_FILE);
    write_atomic(
        &path,
        crate::compare_html::render(comparison, before, after).as_bytes(),
    )?;
    Ok(path)
}

/// Writes any value as pretty JSON to `path` atomically (for `--json FILE`). The parent
/// directory must exist.
pub fn write_json_file(path: &Path, value: &impl Serialize) -> io::Result<()> {
    let mut bytes = serde_json::to_vec_pretty(value).map_err(io::Error::other)?;
    bytes.push(b'\n');
    write_atomic(path, &bytes)
}

/// Writes `bytes` to a temporary file beside `path`, flushes it, and renames it over `path`.
/// On failure the temporary file is removed and `path` is left as it was.
fn write_atomic(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let name = path
        .file_name()
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "path has no file name"))?;
    // Unique per process and per write, so concurrent writers never share a temporary file.
    static WRITES: AtomicU64 = AtomicU64::new(0);
    let tmp = path.with_file_name(format!(
        ".{}.{}-{}.tmp",
        name.to_string_lossy(),
        std::process::id(),
        WRITES.fetch_add(1, Ordering::Relaxed)
    ));
    let written = (|| {
        let mut file = fs::File::create(&tmp)?;
        file.write_all(bytes)?;
        file.sync_all()?;
        fs::rename(&tmp, path)
    })();
    if written.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    written.map_err(|err| io::Error::new(err.kind(), format!("{}: {err}", path.display())))
}
