use super::*;
use std::io::Write;

const BLOCKING: &str = r#"
# As Pekko's docs write it.
my-blocking-dispatcher {
  type = Dispatcher
  executor = "thread-pool-executor"
  thread-pool-executor {
    fixed-pool-size = 12
  }
  throughput = 1
}
"#;

fn args(line: &str) -> Vec<String> {
    line.split(' ').map(String::from).collect()
}

fn no_env() -> HashMap<String, String> {
    HashMap::new()
}

/// A fresh directory of this test's own.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "chokepoint-actor-config-{}-{name}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("a scratch directory");
    dir
}

/// A jar holding `entries` (name, text), deflated as `jar` writes them.
fn jar(path: &Path, entries: &[(&str, &str)]) {
    let mut writer = zip::ZipWriter::new(std::fs::File::create(path).expect("the jar"));
    let options = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated);
    for (name, text) in entries {
        writer.start_file(*name, options).expect("an entry");
        writer.write_all(text.as_bytes()).expect("its text");
    }
    writer.finish().expect("the jar written");
}

fn sizes(found: &[Stated]) -> Vec<(&str, u32, StatedIn)> {
    found
        .iter()
        .map(|s| (s.name.as_str(), s.value, s.from))
        .collect()
}

#[test]
fn the_application_conf_in_a_jar_on_the_classpath_sizes_the_dispatcher() {
    let dir = scratch("jar");
    jar(&dir.join("lib.jar"), &[("reference.conf", "x = 1")]);
    jar(
        &dir.join("app.jar"),
        &[
            ("META-INF/MANIFEST.MF", "Manifest-Version: 1.0\n"),
            ("application.conf", BLOCKING),
        ],
    );
    let line = args("/usr/lib/jvm/bin/java -Xss512k -cp classes:lib.jar:app.jar svc.Main --port 0");
    let found = stated_by(&line, &no_env(), &dir);
    assert_eq!(
        sizes(&found),
        [(
            "my-blocking-dispatcher.thread-pool-executor.fixed-pool-size",
            12,
            StatedIn::Configuration
        )]
    );
    let file = found[0].file.as_deref().expect("the file it came from");
    assert!(file.ends_with("app.jar!/application.conf"), "{file}");
    // `DIR/*` is the directory's jars, as the launcher expands it.
    let star = args("java -cp * svc.Main");
    assert_eq!(stated_by(&star, &no_env(), &dir).len(), 1);
    // `-jar` takes its jar, and ignores `-cp`.
    let fat = args("java -cp lib.jar -jar app.jar --port 0");
    assert_eq!(stated_by(&fat, &no_env(), &dir).len(), 1);
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn the_first_application_conf_on_the_classpath_wins_and_a_directory_counts() {
    let dir = scratch("first");
    std::fs::create_dir_all(dir.join("classes")).unwrap();
    std::fs::write(
        dir.join("classes/application.conf"),
        "io.thread-pool-executor.fixed-pool-size = 4\nio.fork-join-executor.parallelism-max = 6",
    )
    .unwrap();
    jar(
        &dir.join("app.jar"),
        &[(
            "application.conf",
            "io.thread-pool-executor.fixed-pool-size = 40",
        )],
    );
    let found = stated_by(&args("java -cp classes:app.jar Main"), &no_env(), &dir);
    assert_eq!(
        sizes(&found),
        [
            (
                "io.thread-pool-executor.fixed-pool-size",
                4,
                StatedIn::Configuration
            ),
            (
                "io.fork-join-executor.parallelism-max",
                6,
                StatedIn::Configuration
            ),
        ]
    );
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn config_file_replaces_the_classpaths_and_a_system_property_wins_over_both() {
    let dir = scratch("file");
    std::fs::write(dir.join("prod.conf"), BLOCKING.replace("12", "24")).unwrap();
    jar(&dir.join("app.jar"), &[("application.conf", BLOCKING)]);
    let line = args("java -Dconfig.file=prod.conf -cp app.jar Main");
    let found = stated_by(&line, &no_env(), &dir);
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].value, 24);
    assert!(found[0].file.as_deref().unwrap().ends_with("prod.conf"));
    // `config.resource` names another resource on the classpath.
    jar(
        &dir.join("res.jar"),
        &[("staging.conf", &BLOCKING.replace("12", "3"))],
    );
    let line = args("java -Dconfig.resource=/staging.conf -cp res.jar Main");
    assert_eq!(stated_by(&line, &no_env(), &dir)[0].value, 3);
    // A system property overrides the file, from the command line or JAVA_TOOL_OPTIONS; one
    // given to the program, after its main class, is no system property.
    let key = "my-blocking-dispatcher.thread-pool-executor.fixed-pool-size";
    let line = args(&format!("java -D{key}=8 -cp app.jar Main -D{key}=99"));
    assert_eq!(
        sizes(&stated_by(&line, &no_env(), &dir)),
        [(
            "-Dmy-blocking-dispatcher.thread-pool-executor.fixed-pool-size",
            8,
            StatedIn::CommandLine
        )]
    );
    let env: HashMap<String, String> =
        [("JAVA_TOOL_OPTIONS".to_string(), format!("-Xmx1g -D{key}=5"))].into();
    let found = stated_by(&args("java -cp app.jar Main"), &env, &dir);
    assert_eq!(
        sizes(&found),
        [(format!("-D{key}").as_str(), 5, StatedIn::Environment)]
    );
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn substitutions_read_the_processes_environment_or_stay_unresolved() {
    let dir = scratch("subst");
    let text = "io {\n  executor = \"thread-pool-executor\"\n  thread-pool-executor.fixed-pool-size = ${?IO_THREADS}\n  throughput = ${pekko.actor.default-dispatcher.throughput}\n}\nother.thread-pool-executor.fixed-pool-size = 7\n";
    std::fs::write(dir.join("application.conf"), text).unwrap();
    // The environment variable is set: resolving fails on the reference.conf substitution,
    // so the literal is read and the variable's value is not known.
    let env: HashMap<String, String> = [("IO_THREADS".to_string(), "9".to_string())].into();
    let found = stated_by(&args("java -cp . Main"), &env, &dir);
    assert_eq!(
        sizes(&found),
        [(
            "other.thread-pool-executor.fixed-pool-size",
            7,
            StatedIn::Configuration
        )]
    );
    // Without the reference.conf substitution the variable resolves, from the process's own
    // environment.
    std::fs::write(
        dir.join("application.conf"),
        "io.thread-pool-executor.fixed-pool-size = ${?IO_THREADS}\n",
    )
    .unwrap();
    let found = stated_by(&args("java -cp . Main"), &env, &dir);
    assert_eq!(
        sizes(&found),
        [(
            "io.thread-pool-executor.fixed-pool-size",
            9,
            StatedIn::Configuration
        )]
    );
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn what_is_no_size_or_no_configuration_gives_nothing() {
    let dir = scratch("nothing");
    let cases = [
        // Not HOCON at all.
        "io { thread-pool-executor { fixed-pool-size = ",
        // Not a whole number, a negative one, a key that is no sizing key.
        "io.thread-pool-executor.fixed-pool-size = 1.5\nx.thread-pool-executor.fixed-pool-size = -2\nfixed-pool-size = 3\nio.thread-pool-executor.core-pool-size-max = 64",
        // A password stays here.
        "db.password = \"hunter2\"",
    ];
    for text in cases {
        std::fs::write(dir.join("application.conf"), text).unwrap();
        assert!(
            stated_by(&args("java -cp . Main"), &no_env(), &dir).is_empty(),
            "{text}"
        );
    }
    // A classpath entry that is gone, a jar that is no zip, no classpath at all.
    std::fs::write(dir.join("broken.jar"), "not a zip").unwrap();
    assert!(stated_by(&args("java -cp gone.jar:broken.jar Main"), &no_env(), &dir).is_empty());
    assert!(stated_by(&args("java"), &no_env(), &dir).is_empty());
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn only_a_jvm_is_read_and_this_test_process_is_none() {
    assert!(is_java(&args(
        "/usr/lib/jvm/java-17-openjdk-amd64/bin/java -cp . Main"
    )));
    assert!(!is_java(&args("python3 -m http.server")));
    assert!(!is_java(&args("javac Main.java")));
    assert!(dispatcher_sizes(&[std::process::id() as i32]).is_empty());
}
