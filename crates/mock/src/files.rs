//! `__files` served for a GET no stub matched, as WireMock serves it: a file with a content type
//! from its extension (WireMock's default, `application/json`, for an unknown one), a folder's
//! `index.html`, 403 for a folder without one, nothing (a 404 follows) for a missing path.
use bytes::Bytes;
use http::HeaderValue;
use std::path::{Component, Path, PathBuf};

/// Why a stub's `bodyFileName` cannot be read.
#[derive(Debug)]
pub(crate) enum BodyFileError {
    /// The name leads outside `__files`.
    Outside,
    /// The file cannot be read.
    Io(std::io::Error),
}

/// Reads a stub's `bodyFileName` from `root`. A name may climb out and back in
/// (`../__files/x`, as WireMock resolves it) but must end inside `root`, symbolic links
/// included.
pub(crate) fn read_body_file(root: &Path, name: &str) -> Result<Bytes, BodyFileError> {
    let relative = Path::new(name);
    if relative.is_absolute() {
        return Err(BodyFileError::Outside);
    }
    let canonical_root = root.canonicalize().map_err(BodyFileError::Io)?;
    // Resolve `..` by the words of the name, as WireMock does, before touching the disk: a
    // name may climb out of __files only to come back in.
    let mut resolved = canonical_root.clone();
    for component in relative.components() {
        match component {
            Component::Normal(part) => resolved.push(part),
            Component::ParentDir => {
                resolved.pop();
            }
            _ => {}
        }
    }
    if !resolved.starts_with(&canonical_root) {
        return Err(BodyFileError::Outside);
    }
    let file = resolved.canonicalize().map_err(BodyFileError::Io)?;
    // `..` or a symbolic link inside __files may still lead outside it.
    if !file.starts_with(&canonical_root) {
        return Err(BodyFileError::Outside);
    }
    std::fs::read(&file)
        .map(Bytes::from)
        .map_err(BodyFileError::Io)
}

/// What `__files` holds at a path.
pub(crate) enum Answer {
    /// A file (or a folder's `index.html`).
    File {
        /// Its content.
        bytes: Bytes,
        /// Its content type.
        content_type: HeaderValue,
    },
    /// A folder with no `index.html`.
    Forbidden,
    /// Nothing there (or outside `__files`).
    Missing,
}

/// Looks the request path up in `root` (read off the worker thread).
pub(crate) async fn lookup(root: &Path, path: &str) -> Answer {
    let Some(relative) = resolve(path) else {
        return Answer::Missing;
    };
    let root = root.to_path_buf();
    tokio::task::spawn_blocking(move || read(&root, &relative))
        .await
        .unwrap_or(Answer::Missing)
}

/// The request path, percent-decoded, as a path inside the root; `None` when it climbs out.
fn resolve(path: &str) -> Option<PathBuf> {
    let decoded = crate::matching::percent_decode_path(path);
    let mut out = PathBuf::new();
    for component in Path::new(decoded.trim_start_matches('/')).components() {
        match component {
            Component::Normal(part) => out.push(part),
            Component::CurDir => {}
            Component::ParentDir => {
                if !out.pop() {
                    return None;
                }
            }
            _ => return None,
        }
    }
    Some(out)
}

fn read(root: &Path, relative: &Path) -> Answer {
    let Ok(canonical_root) = root.canonicalize() else {
        return Answer::Missing;
    };
    let Ok(target) = canonical_root.join(relative).canonicalize() else {
        return Answer::Missing;
    };
    // A symbolic link inside __files may lead outside it.
    if !target.starts_with(&canonical_root) {
        return Answer::Missing;
    }
    if target.is_dir() {
        return match std::fs::read(target.join("index.html")) {
            Ok(bytes) => Answer::File {
                bytes: Bytes::from(bytes),
                content_type: HeaderValue::from_static("text/html;charset=utf-8"),
            },
            Err(_) => Answer::Forbidden,
        };
    }
    match std::fs::read(&target) {
        Ok(bytes) => Answer::File {
            bytes: Bytes::from(bytes),
            content_type: HeaderValue::from_static(content_type(&target)),
        },
        Err(_) => Answer::Missing,
    }
}

/// The content type WireMock gives a file of `__files`, by extension.
fn content_type(path: &Path) -> &'static str {
    let extension = path
        .extension()
        .and_then(|e| e.to_str())
        .unwrap_or("")
        .to_ascii_lowercase();
    match extension.as_str() {
        "txt" | "text" => "text/plain",
        "html" | "htm" => "text/html",
        "xml" => "application/xml",
        "js" => "text/javascript",
        "css" => "text/css",
        "csv" => "text/csv",
        "png" => "image/png",
        "jpg" | "jpeg" => "image/jpeg",
        "gif" => "image/gif",
        "svg" => "image/svg+xml",
        "pdf" => "application/pdf",
        "bin" => "application/octet-stream",
        _ => "application/json",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_paths_resolve_inside_the_root() {
        let table = [
            ("/static/hello.txt", Some("static/hello.txt")),
            ("/static/../static/a.txt", Some("static/a.txt")),
            ("/static/hel%6co.txt", Some("static/hello.txt")),
            ("/", Some("")),
            ("/../secret", None),
            ("/a/../../secret", None),
        ];
        for (path, expected) in table {
            assert_eq!(resolve(path), expected.map(PathBuf::from), "{path}");
        }
    }

    #[test]
    fn content_types_follow_wiremock() {
        let table = [
            ("a.txt", "text/plain"),
            ("a.JSON", "application/json"),
            ("a.yaml", "application/json"),
            ("noext", "application/json"),
            ("a.bin", "application/octet-stream"),
        ];
        for (name, expected) in table {
            assert_eq!(content_type(Path::new(name)), expected, "{name}");
        }
    }
}
