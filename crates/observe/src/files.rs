//! The files a target's processes have mapped or open: which libraries it runs (a jar the JVM
//! holds open, a Python C extension or a shared object mapped in). The sweep keeps those the
//! catalogue of known pools names (`chokepoint_diagnose::catalogue`), so that a connection
//! pool can be named by the client library that holds it.
//!
//! Read once, when a sweep ends: a library is loaded at its first use and stays. Through the
//! `procfs` crate: `/proc/PID/maps` (its path column) and `/proc/PID/fd` (each descriptor's
//! target). A process that is gone or may not be read gives nothing.
use procfs::process::{FDTarget, MMapPath, Process};
use std::collections::BTreeSet;
use std::path::Path;

/// Whether a path names a library: a jar, a shared object (`.so`, `.so.1`), a Node addon.
fn is_library(path: &Path) -> bool {
    let name = path
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or_default();
    name.ends_with(".jar")
        || name.ends_with(".node")
        || name.ends_with(".so")
        || name.contains(".so.")
}

/// The library files the processes `pids` have mapped or open, each once, in order.
pub fn library_files(pids: &[i32]) -> Vec<String> {
    let mut found = BTreeSet::new();
    for &pid in pids {
        let Ok(process) = Process::new(pid) else {
            continue;
        };
        if let Ok(maps) = process.maps() {
            for map in maps {
                if let MMapPath::Path(path) = map.pathname {
                    if is_library(&path) {
                        found.insert(path.display().to_string());
                    }
                }
            }
        }
        if let Ok(fds) = process.fd() {
            for fd in fds.flatten() {
                if let FDTarget::Path(path) = fd.target {
                    if is_library(&path) {
                        found.insert(path.display().to_string());
                    }
                }
            }
        }
    }
    found.into_iter().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn libraries_are_jars_shared_objects_and_addons_only() {
        let table = [
            ("/opt/app/lib/httpclient5-5.3.1.jar", true),
            ("/usr/lib/x86_64-linux-gnu/libssl.so.3", true),
            (
                "/usr/lib/python3/dist-packages/aiohttp/_http_parser.cpython-311-x86_64-linux-gnu.so",
                true,
            ),
            ("/app/build/Release/addon.node", true),
            ("/tmp/cp-target.log", false),
            ("/srv/data/answers.sol", false),
            ("/usr/lib/python3.11/socket.py", false),
        ];
        for (path, want) in table {
            assert_eq!(is_library(Path::new(path)), want, "{path}");
        }
    }

    #[test]
    fn this_test_process_maps_its_c_library() {
        let own = std::process::id() as i32;
        let files = library_files(&[own]);
        assert!(
            files.iter().any(|f| f.contains("libc.so")),
            "no libc among {files:?}"
        );
        assert!(library_files(&[i32::MAX]).is_empty(), "no such process");
    }
}
