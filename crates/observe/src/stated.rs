//! The values a target's processes were started with that size their pools: flags on the
//! command line (`gunicorn --workers 2 --threads 4`), JVM system properties (`-Dname=8`),
//! variables in the environment (`UV_THREADPOOL_SIZE=8`). The sweep asks for the names the
//! catalogue of known pools reads (`chokepoint_diagnose::catalogue`) and keeps whole numbers
//! only: a command line or an environment may hold secrets, and nothing else leaves here.
//!
//! Read once, when a sweep ends, through the `procfs` crate: `/proc/PID/cmdline` and
//! `/proc/PID/environ` (the environment as the process started; reading it needs the right to
//! trace the process, as the stacks do). A process that is gone or may not be read gives
//! nothing.
//!
//! A JVM also takes options from its environment, as if written on its command line: a
//! container's `JAVA_TOOL_OPTIONS` (any JVM) and `JDK_JAVA_OPTIONS` (the `java` launcher) go
//! before the command line's, `_JAVA_OPTIONS` after them, and the last of a repeated `-D` wins
//! ([`JVM_OPTIONS`]). Those count as the environment's.
use chokepoint_result::{Stated, StatedIn};
use procfs::process::Process;
use std::collections::HashMap;

/// The variables whose options a JVM reads as its command line's, and whether they go after
/// it (and win over it): HotSpot parses `JAVA_TOOL_OPTIONS`, then the command line (the `java`
/// launcher puts `JDK_JAVA_OPTIONS` in front of its own arguments), then `_JAVA_OPTIONS`
/// (`Arguments::parse_vm_init_args`,
/// https://github.com/openjdk/jdk/blob/ad7aeacd8475ca1b943f3812d2c62a6f06d05f35/src/hotspot/share/runtime/arguments.cpp).
pub const JVM_OPTIONS: [(&str, bool); 3] = [
    ("JAVA_TOOL_OPTIONS", false),
    ("JDK_JAVA_OPTIONS", false),
    ("_JAVA_OPTIONS", true),
];

/// Of `flags` and `variables`, those the processes `pids` state with a whole number: the first
/// process to state a name gives its value (a pre-fork master and its workers share one
/// command line).
pub fn stated_values(pids: &[i32], flags: &[String], variables: &[String]) -> Vec<Stated> {
    let mut found: Vec<Stated> = Vec::new();
    let mut keep = |name: &str, value: u32, from: StatedIn| {
        if !found.iter().any(|s| s.name == name) {
            found.push(Stated {
                name: name.to_string(),
                value,
                from,
                file: None,
            });
        }
    };
    for &pid in pids {
        let Ok(process) = Process::new(pid) else {
            continue;
        };
        let args = process.cmdline().unwrap_or_default();
        let environment = environment_of(&process);
        let (before, last) = (
            jvm_env_options(&environment, false),
            jvm_env_options(&environment, true),
        );
        for flag in flags {
            let stated = match (flag_value(&last, flag), flag_value(&args, flag)) {
                (Some(value), _) => Some((value, StatedIn::Environment)),
                (None, Some(value)) => Some((value, StatedIn::CommandLine)),
                (None, None) => flag_value(&before, flag).map(|v| (v, StatedIn::Environment)),
            };
            if let Some((value, from)) = stated {
                keep(flag, value, from);
            }
        }
        for variable in variables {
            let value = environment
                .get(variable.as_str())
                .and_then(|v| whole_number(v));
            if let Some(value) = value {
                keep(variable, value, StatedIn::Environment);
            }
        }
    }
    found
}

/// The options a JVM reads from `environment` as its command line's, those that go `after`
/// it or those before ([`JVM_OPTIONS`]), in order.
pub(crate) fn jvm_env_options(environment: &HashMap<String, String>, after: bool) -> Vec<String> {
    JVM_OPTIONS
        .iter()
        .filter(|(_, last)| *last == after)
        .filter_map(|(name, _)| environment.get(*name))
        .flat_map(|value| value.split_whitespace().map(String::from))
        .collect()
}

/// The environment a process started with, its variables that are UTF-8.
pub(crate) fn environment_of(process: &Process) -> HashMap<String, String> {
    process
        .environ()
        .unwrap_or_default()
        .into_iter()
        .filter_map(|(name, value)| Some((name.into_string().ok()?, value.into_string().ok()?)))
        .collect()
}

/// The whole number `args` give `flag`, the last time they give it (as argument parsers take
/// a repeated flag): `--workers 2`, `--workers=2`, `-Dname=2`, and a short flag's `-w2`.
pub fn flag_value(args: &[String], flag: &str) -> Option<u32> {
    let short = flag.len() == 2 && flag.starts_with('-') && !flag.starts_with("--");
    let mut value = None;
    for (i, arg) in args.iter().enumerate() {
        let given = if arg == flag {
            args.get(i + 1).map(String::as_str)
        } else if let Some(rest) = arg.strip_prefix(flag) {
            match rest.strip_prefix('=') {
                Some(after) => Some(after),
                None if short => Some(rest),
                None => None,
            }
        } else {
            None
        };
        if let Some(number) = given.and_then(whole_number) {
            value = Some(number);
        }
    }
    value
}

/// A whole number as a flag or a variable writes it.
fn whole_number(text: &str) -> Option<u32> {
    text.trim().parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::{Command, Stdio};

    fn args(line: &str) -> Vec<String> {
        line.split(' ').map(String::from).collect()
    }

    #[test]
    fn a_flag_is_read_in_every_form_a_parser_takes_the_last_one_winning() {
        let line = args("gunicorn -w 3 --threads=4 --bind 127.0.0.1:8000 app:app --workers 2");
        assert_eq!(flag_value(&line, "--workers"), Some(2));
        assert_eq!(flag_value(&line, "-w"), Some(3));
        assert_eq!(flag_value(&line, "--threads"), Some(4));
        assert_eq!(flag_value(&args("uwsgi -p4"), "-p"), Some(4));
        let jvm = args("java -Dreactor.netty.ioWorkerCount=6 -jar app.jar");
        assert_eq!(flag_value(&jvm, "-Dreactor.netty.ioWorkerCount"), Some(6));
        // A longer flag that starts like one is another flag; a value that is no number is
        // not a size.
        assert_eq!(flag_value(&args("x --workers-max=9"), "--workers"), None);
        assert_eq!(flag_value(&args("x --workers auto"), "--workers"), None);
        assert_eq!(flag_value(&args("x --workers"), "--workers"), None);
    }

    /// Waits until the child runs Python itself: not the fork, nor a launcher in between (a
    /// pyenv shim runs `/usr/bin/env bash` first), whose command line and environment are
    /// read mid-exec at times.
    fn wait_for_python(pid: i32) {
        for _ in 0..400 {
            let line = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
            let program = line.split(|b| *b == 0).next().unwrap_or_default();
            let name = program.rsplit(|b| *b == b'/').next().unwrap_or_default();
            if name.starts_with(b"python") {
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
    }

    #[test]
    fn a_child_s_command_line_and_environment_are_read_and_only_the_names_asked_for_kept() {
        // A program that takes any flag: Python leaves those after its script to the script.
        let mut child = Command::new("python3")
            .args(["-c", "import time; time.sleep(30)", "--threads", "4"])
            .env("UV_THREADPOOL_SIZE", "8")
            .env("A_SECRET", "12")
            .stdout(Stdio::null())
            .spawn()
            .expect("python3 starts");
        let pid = child.id() as i32;
        wait_for_python(pid);
        let found = stated_values(
            &[pid],
            &["--threads".to_string(), "--workers".to_string()],
            &["UV_THREADPOOL_SIZE".to_string()],
        );
        child.kill().ok();
        child.wait().ok();
        let mut jvm = Command::new("python3")
            .args(["-c", "import time; time.sleep(30)", "-Dpool.size=6"])
            .env("JAVA_TOOL_OPTIONS", "-Xmx64m -Dpool.size=3 -Dloops=2")
            .env("_JAVA_OPTIONS", "-Dqueue=9")
            .env("JDK_JAVA_OPTIONS", "-Dqueue=1")
            .stdout(Stdio::null())
            .spawn()
            .expect("python3 starts");
        let jvm_pid = jvm.id() as i32;
        wait_for_python(jvm_pid);
        let names = ["-Dpool.size", "-Dloops", "-Dqueue"].map(String::from);
        let options = stated_values(&[jvm_pid], &names, &[]);
        jvm.kill().ok();
        jvm.wait().ok();
        // The command line wins over JAVA_TOOL_OPTIONS, _JAVA_OPTIONS over both.
        let told: Vec<(&str, u32, StatedIn)> = options
            .iter()
            .map(|s| (s.name.as_str(), s.value, s.from))
            .collect();
        assert_eq!(
            told,
            vec![
                ("-Dpool.size", 6, StatedIn::CommandLine),
                ("-Dloops", 2, StatedIn::Environment),
                ("-Dqueue", 9, StatedIn::Environment),
            ]
        );
        assert_eq!(
            found,
            vec![
                Stated {
                    name: "--threads".into(),
                    value: 4,
                    from: StatedIn::CommandLine,
                    file: None,
                },
                Stated {
                    name: "UV_THREADPOOL_SIZE".into(),
                    value: 8,
                    from: StatedIn::Environment,
                    file: None,
                },
            ]
        );
    }
}
