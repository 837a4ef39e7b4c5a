//! Mapping files and folders: which files, in which order, and the `__files` folder beside them.
//!
//! The files are read in the order WireMock reads them (the folder's own order, `readdir(3)`,
//! depth first, as Java's `File.listFiles` returns it), because that order breaks ties between
//! stubs of equal priority: the stub loaded last wins.
use super::{parse_mappings_with_files, Mapping};
use crate::MockError;
use std::path::{Path, PathBuf};

/// Where mappings were found: the files to parse and the `__files` folder for `bodyFileName`.
#[derive(Debug, Clone)]
pub struct MappingSource {
    /// Mapping files, in WireMock's load order.
    pub files: Vec<PathBuf>,
    /// The `__files` folder, if there is one.
    pub files_root: Option<PathBuf>,
}

/// Finds the mapping files of a file or folder. A folder with a `mappings/` subfolder is a
/// WireMock root (`mappings/**/*.json` and `__files/` beside it); any other folder holds the
/// `*.json` mappings itself (and its subfolders', except `__files`), with `__files` inside it or
/// beside it.
pub fn locate(path: &Path) -> Result<MappingSource, MockError> {
    let read_error = |error: std::io::Error| MockError::Read {
        path: path.display().to_string(),
        error,
    };
    let meta = std::fs::metadata(path).map_err(read_error)?;
    if meta.is_file() {
        let folder = path.parent().unwrap_or(Path::new("."));
        return Ok(MappingSource {
            files: vec![path.to_path_buf()],
            files_root: files_root_near(folder),
        });
    }
    let (mappings_dir, files_root) = if path.join("mappings").is_dir() {
        let root = path.join("__files");
        (path.join("mappings"), root.is_dir().then_some(root))
    } else {
        (path.to_path_buf(), files_root_near(path))
    };
    let mut files = Vec::new();
    collect_json(&mappings_dir, &mut files)?;
    Ok(MappingSource { files, files_root })
}

fn files_root_near(folder: &Path) -> Option<PathBuf> {
    let inside = folder.join("__files");
    if inside.is_dir() {
        return Some(inside);
    }
    let beside = folder.parent()?.join("__files");
    beside.is_dir().then_some(beside)
}

fn collect_json(dir: &Path, out: &mut Vec<PathBuf>) -> Result<(), MockError> {
    let read_error = |error: std::io::Error| MockError::Read {
        path: dir.display().to_string(),
        error,
    };
    for entry in std::fs::read_dir(dir).map_err(read_error)? {
        let entry = entry.map_err(read_error)?;
        let path = entry.path();
        if path.is_dir() {
            if entry.file_name() != "__files" {
                collect_json(&path, out)?;
            }
        } else if path.extension().is_some_and(|ext| ext == "json") {
            out.push(path);
        }
    }
    Ok(())
}

/// Loads the mappings of a file or folder (see [`locate`]). Every problem of every file is
/// reported at once ([`MockError::Problems`]); nothing is loaded when there is one.
pub fn load_mappings(path: &Path) -> Result<Vec<Mapping>, MockError> {
    let source = locate(path)?;
    let mut mappings = Vec::new();
    let mut problems = Vec::new();
    for file in &source.files {
        let text = match std::fs::read_to_string(file) {
            Ok(text) => text,
            Err(error) => {
                problems.push(MockError::Read {
                    path: file.display().to_string(),
                    error,
                });
                continue;
            }
        };
        let name = file.display().to_string();
        match parse_mappings_with_files(&text, &name, source.files_root.as_deref()) {
            Ok(parsed) => mappings.extend(parsed),
            Err(err) => problems.extend(err.into_problems()),
        }
    }
    match MockError::from_problems(problems) {
        Some(err) => Err(err),
        None => Ok(mappings),
    }
}

/// The services of a WireMock root's `grpc/` folder: every `.dsc` and `.desc` descriptor set
/// in it, in one schema, as WireMock's gRPC extension loads them; `None` when the folder is not
/// there or holds none. `path` is the folder given as `--mappings` (a root).
pub fn grpc_schema(path: &Path) -> Result<Option<chokepoint_grpc::Schema>, MockError> {
    let folder = path.join("grpc");
    if !folder.is_dir() {
        return Ok(None);
    }
    let read_error = |at: &Path, error: std::io::Error| MockError::Read {
        path: at.display().to_string(),
        error,
    };
    let mut files: Vec<PathBuf> = std::fs::read_dir(&folder)
        .map_err(|e| read_error(&folder, e))?
        .flatten()
        .map(|entry| entry.path())
        .filter(|file| {
            matches!(
                file.extension().and_then(|e| e.to_str()),
                Some("dsc" | "desc")
            )
        })
        .collect();
    files.sort();
    if files.is_empty() {
        return Ok(None);
    }
    let mut sets = Vec::new();
    for file in files {
        let bytes = std::fs::read(&file).map_err(|e| read_error(&file, e))?;
        sets.push((bytes, file.display().to_string()));
    }
    chokepoint_grpc::Schema::from_descriptor_sets(&sets)
        .map(Some)
        .map_err(|e| MockError::Grpc(e.to_string()))
}
