//! The sizes a JVM application's own configuration gives its actor dispatchers (Akka, Apache
//! Pekko): `my-blocking-dispatcher.thread-pool-executor.fixed-pool-size = 16`, the recipe both
//! projects' docs give for blocking calls, written in the `application.conf` of the
//! application's jar. A dispatcher's threads say its id (`crates/diagnose` `actor_dispatcher`);
//! this says the size its configuration gives it, so the finding can check it against the
//! threads it held.
//!
//! Read as Typesafe Config's `ConfigFactory.load()` reads it, which both actor systems call at
//! their start: the JVM's system properties (`-D…`) win over the application's configuration,
//! which is the file `-Dconfig.file` names, else the classpath resource `-Dconfig.resource`
//! names, else every `application.conf` on the classpath, the first entry of the classpath
//! winning (`ConfigFactory.load(ClassLoader, Config)`:
//! `defaultOverrides(loader).withFallback(config).withFallback(defaultReference)`,
//! https://github.com/lightbend/config/blob/04529e5b0d3316f6d4ef80d402a404d3f38c760f/config/src/main/java/com/typesafe/config/ConfigFactory.java;
//! `DefaultConfigLoadingStrategy.parseApplicationConfig`,
//! https://github.com/lightbend/config/blob/09e2d57e18aaa59af3308da61cba61df8846073f/config/src/main/java/com/typesafe/config/DefaultConfigLoadingStrategy.java).
//! The classpath is `-cp`/`-classpath`/`--class-path` (a `DIR/*` entry is that directory's
//! jars), else `-jar`'s jar, else `CLASSPATH`, else the working directory. Not read: a
//! `config.url`, `application.json` and `application.properties`, the libraries'
//! `reference.conf` (the dispatcher's own defaults, which the catalogue states).
//!
//! Data flows one way: a process's command line, environment and working directory in; one
//! [`Stated`] per sizing key out (`StatedIn::Configuration` with the file, or the command line
//! or environment for a `-D` override), the first source to state a key winning. Only whole
//! numbers at the sizing keys ([`SIZING_KEYS`]) leave here: a configuration holds secrets too.
//! HOCON is parsed by the `hocon-parser` crate (substitutions resolved with the process's own
//! environment, or left unresolved when they name what only a library's `reference.conf`
//! holds), and jars are read by the `zip` crate. A file that is gone, unreadable or malformed
//! gives nothing.
use crate::stated::{environment_of, jvm_env_options};
use chokepoint_result::{Stated, StatedIn};
use hocon::{HoconValue, ParseOptions};
use procfs::process::Process;
use std::collections::HashMap;
use std::io::Read;
use std::path::{Path, PathBuf};

/// The keys, under a dispatcher's id, whose whole numbers size it: a thread-pool-executor's
/// fixed size, a fork-join-executor's bounds.
pub const SIZING_KEYS: [&str; 3] = [
    "thread-pool-executor.fixed-pool-size",
    "fork-join-executor.parallelism-min",
    "fork-join-executor.parallelism-max",
];

/// The resource the application's configuration is read from unless `config.resource` or
/// `config.file` names another.
const APPLICATION_CONF: &str = "application.conf";
/// Files a `DIR/*` classpath entry or a classpath may add, at most: a classpath of thousands
/// of jars is read only so far.
const MOST_ENTRIES: usize = 512;
/// The largest configuration read, bytes: an `application.conf` is a few kilobytes.
const MOST_BYTES: u64 = 4 << 20;

/// The dispatcher sizes the JVMs among `pids` state, each key once (the first process to
/// state it wins).
pub fn dispatcher_sizes(pids: &[i32]) -> Vec<Stated> {
    let mut found: Vec<Stated> = Vec::new();
    for &pid in pids {
        let Ok(process) = Process::new(pid) else {
            continue;
        };
        let args = process.cmdline().unwrap_or_default();
        if !is_java(&args) {
            continue;
        }
        let environment = environment_of(&process);
        let cwd = process.cwd().unwrap_or_default();
        for stated in stated_by(&args, &environment, &cwd) {
            if !found.iter().any(|s| s.name == stated.name) {
                found.push(stated);
            }
        }
    }
    found
}

/// Whether a command line is the `java` launcher's.
fn is_java(args: &[String]) -> bool {
    args.first()
        .and_then(|exe| Path::new(exe).file_name())
        .is_some_and(|name| name == "java")
}

/// The sizes one JVM's command line `args`, `environment` and working directory `cwd` state:
/// `-D` overrides first, then its application configuration's.
pub fn stated_by(
    args: &[String],
    environment: &HashMap<String, String>,
    cwd: &Path,
) -> Vec<Stated> {
    let properties = system_properties(args, environment);
    let mut found: Vec<Stated> = properties
        .iter()
        .filter(|(key, _)| is_sizing_key(key))
        .filter_map(|(key, (value, from))| {
            Some(Stated {
                name: format!("-D{key}"),
                value: value.trim().parse().ok()?,
                from: *from,
                file: None,
            })
        })
        .collect();
    // In one order whatever the map's: a result written twice reads the same.
    found.sort_by(|a, b| a.name.cmp(&b.name));
    for (file, text) in application_configuration(args, environment, &properties, cwd) {
        let Some(root) = parse(&text, &file, environment) else {
            continue;
        };
        let mut sizes = Vec::new();
        sizing_values(&root, "", &mut sizes);
        for (key, value) in sizes {
            let overridden = found
                .iter()
                .any(|s| s.name == key || s.name.strip_prefix("-D") == Some(key.as_str()));
            if !overridden {
                found.push(Stated {
                    name: key,
                    value,
                    from: StatedIn::Configuration,
                    file: Some(file.clone()),
                });
            }
        }
    }
    found
}

fn is_sizing_key(key: &str) -> bool {
    SIZING_KEYS.iter().any(|leaf| {
        key.len() > leaf.len() + 1
            && key.ends_with(leaf)
            && key[..key.len() - leaf.len()].ends_with('.')
    })
}

/// The JVM's `-Dname=value` options with where each was read, the last of a repeated one
/// winning, in HotSpot's order (`stated::JVM_OPTIONS`).
fn system_properties(
    args: &[String],
    environment: &HashMap<String, String>,
) -> HashMap<String, (String, StatedIn)> {
    let from_env = |after: bool| jvm_env_options(environment, after);
    // Only the JVM's own options: those after the main class or `-jar JAR` are the program's.
    let jvm_args = &args[1.min(args.len())..jvm_options_end(args)];
    let mut properties = HashMap::new();
    let sources = [
        (from_env(false), StatedIn::Environment),
        (jvm_args.to_vec(), StatedIn::CommandLine),
        (from_env(true), StatedIn::Environment),
    ];
    for (options, from) in sources {
        for option in options {
            if let Some((name, value)) = option.strip_prefix("-D").and_then(|o| o.split_once('=')) {
                properties.insert(name.to_string(), (value.to_string(), from));
            }
        }
    }
    properties
}

/// The index past the JVM's own options in `args`: the first argument that is not an option
/// (the main class or source file), or past `-jar JAR`.
fn jvm_options_end(args: &[String]) -> usize {
    let mut i = 1;
    while i < args.len() {
        let arg = &args[i];
        if arg == "-jar" {
            return (i + 2).min(args.len());
        }
        if !arg.starts_with('-') {
            return i;
        }
        // Options that take their value as the next argument.
        i += if takes_value(arg) { 2 } else { 1 };
    }
    args.len()
}

fn takes_value(option: &str) -> bool {
    matches!(
        option,
        "-cp"
            | "-classpath"
            | "--class-path"
            | "-p"
            | "--module-path"
            | "--add-modules"
            | "--add-opens"
            | "--add-exports"
            | "--add-reads"
            | "-m"
            | "--module"
    )
}

/// The application's configuration files, each with a name saying where it was read
/// (`/srv/app.conf`, `/srv/app.jar!/application.conf`) and its text, in the order they win.
fn application_configuration(
    args: &[String],
    environment: &HashMap<String, String>,
    properties: &HashMap<String, (String, StatedIn)>,
    cwd: &Path,
) -> Vec<(String, String)> {
    if let Some((file, _)) = properties.get("config.file") {
        let path = cwd.join(file);
        return read_limited_file(&path)
            .map(|text| (path.display().to_string(), text))
            .into_iter()
            .collect();
    }
    let resource = properties
        .get("config.resource")
        .map_or(APPLICATION_CONF, |(name, _)| name.trim_start_matches('/'));
    classpath(args, environment, cwd)
        .iter()
        .filter_map(|entry| resource_in(entry, resource))
        .collect()
}

/// The JVM's classpath entries, as paths.
fn classpath(args: &[String], environment: &HashMap<String, String>, cwd: &Path) -> Vec<PathBuf> {
    let options = &args[..jvm_options_end(args)];
    let given = options.iter().enumerate().find_map(|(i, arg)| {
        if matches!(arg.as_str(), "-cp" | "-classpath" | "--class-path") {
            return options.get(i + 1).cloned();
        }
        arg.strip_prefix("--class-path=").map(String::from)
    });
    let jar = options
        .iter()
        .position(|arg| arg == "-jar")
        .and_then(|i| args.get(i + 1).cloned());
    let written = match (jar, given) {
        // `-jar` ignores `-cp`: the jar (and its manifest's Class-Path, not read here).
        (Some(jar), _) => jar,
        (None, Some(given)) => given,
        (None, None) => environment
            .get("CLASSPATH")
            .cloned()
            .unwrap_or_else(|| ".".into()),
    };
    let mut entries = Vec::new();
    for entry in written.split(':').filter(|e| !e.is_empty()) {
        match entry.strip_suffix('*') {
            Some(dir) if dir.is_empty() || dir.ends_with('/') => {
                let mut jars: Vec<PathBuf> = std::fs::read_dir(cwd.join(dir))
                    .into_iter()
                    .flatten()
                    .filter_map(|e| e.ok().map(|e| e.path()))
                    .filter(|p| p.extension().is_some_and(|x| x == "jar" || x == "JAR"))
                    .collect();
                // The JVM takes them in directory order, which is not defined: sorted here.
                jars.sort();
                entries.extend(jars);
            }
            _ => entries.push(cwd.join(entry)),
        }
        if entries.len() >= MOST_ENTRIES {
            entries.truncate(MOST_ENTRIES);
            break;
        }
    }
    entries
}

/// `resource` in the classpath `entry` (a directory or a jar), with where it was read.
fn resource_in(entry: &Path, resource: &str) -> Option<(String, String)> {
    if entry.is_dir() {
        let path = entry.join(resource);
        return read_limited_file(&path).map(|text| (path.display().to_string(), text));
    }
    let mut jar = zip::ZipArchive::new(std::fs::File::open(entry).ok()?).ok()?;
    let mut file = jar.by_name(resource).ok()?;
    if file.size() > MOST_BYTES {
        return None;
    }
    let mut text = String::new();
    file.read_to_string(&mut text).ok()?;
    Some((format!("{}!/{resource}", entry.display()), text))
}

fn read_limited_file(path: &Path) -> Option<String> {
    let file = std::fs::File::open(path).ok()?;
    if file.metadata().ok()?.len() > MOST_BYTES {
        return None;
    }
    let mut text = String::new();
    file.take(MOST_BYTES).read_to_string(&mut text).ok()?;
    Some(text)
}

/// The configuration's root object: resolved with the process's environment, or, when a
/// substitution names what only a library's `reference.conf` holds, unresolved (a literal
/// size reads the same either way).
fn parse(text: &str, file: &str, environment: &HashMap<String, String>) -> Option<HoconValue> {
    let base = Path::new(file).parent().map(Path::to_path_buf);
    let options = |resolve: bool| {
        let mut options = ParseOptions::defaults()
            .with_resolve_substitutions(resolve)
            .with_env(environment.clone());
        if let Some(base) = &base {
            options = options.with_base_dir(base.clone());
        }
        options
    };
    let config = hocon::parse_string_with_options(text, options(true))
        .or_else(|_| hocon::parse_string_with_options(text, options(false)))
        .ok()?;
    let fields = config
        .keys()
        .into_iter()
        .filter_map(|key| Some((key.to_string(), config.get(key)?.clone())))
        .collect();
    Some(HoconValue::Object(fields))
}

/// Every whole number at a sizing key under `value`, with its path.
fn sizing_values(value: &HoconValue, path: &str, into: &mut Vec<(String, u32)>) {
    match value.as_object() {
        Some(fields) => {
            for (key, child) in fields {
                let child_path = if path.is_empty() {
                    key.clone()
                } else {
                    format!("{path}.{key}")
                };
                sizing_values(child, &child_path, into);
            }
        }
        None if is_sizing_key(path) => {
            if let Some(number) = value.as_i64().and_then(|n| u32::try_from(n).ok()) {
                into.push((path.to_string(), number));
            }
        }
        None => {}
    }
}

#[cfg(test)]
mod tests;
