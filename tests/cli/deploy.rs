//! The Kubernetes manifests (deploy/kubernetes/): rendered for a given shard count and image,
//! then validated offline against the Kubernetes schemas with `kubernetes-validate --strict`
//! (PyPI; `.ci/run` installs it). A missing validator fails the test: it is not skipped.
use std::path::{Path, PathBuf};
use std::process::Command;

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("cp-deploy-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

fn render(out: &Path, shards: u32, image: &str, run: &[&str]) -> std::process::Output {
    Command::new("sh")
        .arg(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/deploy/kubernetes/render.sh"
        ))
        .args(["-n", &shards.to_string(), "-i", image])
        .args(["-s", "2030-01-01T00:00:00Z", "-r", "orders", "-o"])
        .arg(out)
        .arg("--")
        .args(run)
        .output()
        .expect("sh runs")
}

/// Runs the validator on `files`: (passed, what it printed).
fn validate(files: &[PathBuf]) -> (bool, String) {
    let output = Command::new("kubernetes-validate")
        .args(["--strict", "--quiet"])
        .args(files)
        .output()
        .unwrap_or_else(|e| {
            panic!(
                "kubernetes-validate cannot run ({e}): install it with \
                 `python3 -m pip install kubernetes-validate` (.ci/run does)"
            )
        });
    let text = String::from_utf8_lossy(&output.stdout).to_string()
        + &String::from_utf8_lossy(&output.stderr);
    (output.status.success(), text)
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap()
}

#[test]
fn sweep_manifests_render_for_n_shards_and_validate_strictly() {
    let out = scratch("sweep");
    let image = "registry.example.com/team/chokepoint:1.2.3";
    let rendered = render(
        &out,
        5,
        image,
        &[
            "sweep",
            "http://orders.shop.svc:8080/orders",
            "--clients",
            "100,200,400",
            "-H",
            "X-Note: it's",
        ],
    );
    assert!(rendered.status.success(), "{rendered:?}");
    let shards = read(&out.join("shards.yaml"));
    for expected in [
        "completionMode: Indexed",
        "completions: 5\n",
        "parallelism: 5\n",
        &format!("image: {image}\n"),
        "- $(JOB_COMPLETION_INDEX)/5\n",
        "- '2030-01-01T00:00:00Z'\n",
        "- 'X-Note: it''s'\n",
        "- /results/shard-$(JOB_COMPLETION_INDEX)\n",
        "topologyKey: kubernetes.io/hostname",
        "claimName: orders-results",
    ] {
        assert!(
            shards.contains(expected),
            "shards.yaml lacks {expected:?}:\n{shards}"
        );
    }
    let merge = read(&out.join("merge.yaml"));
    let inputs: Vec<&str> = merge
        .lines()
        .filter(|l| l.contains("- /results/shard-"))
        .collect();
    assert_eq!(inputs.len(), 5, "{merge}");
    assert!(merge.contains("- /results/shard-4\n") && merge.contains(&format!("image: {image}")));
    assert!(merge.contains("- /results/merged\n"), "{merge}");

    let files: Vec<PathBuf> = ["volume", "shards", "merge"]
        .iter()
        .map(|name| out.join(format!("{name}.yaml")))
        .collect();
    let (passed, said) = validate(&files);
    assert!(passed, "{said}");

    // The validator is strict for real: a misspelt field is refused.
    let broken = out.join("broken.yaml");
    std::fs::write(&broken, shards.replace("parallelism:", "paralelism:")).unwrap();
    let (passed, said) = validate(&[broken]);
    assert!(!passed && said.contains("paralelism"), "{said}");
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn load_manifests_write_json_per_shard_and_bad_input_is_refused() {
    let out = scratch("load");
    let rendered = render(
        &out,
        2,
        "chokepoint:dev",
        &["load", "http://a:80/", "-c", "50"],
    );
    assert!(rendered.status.success(), "{rendered:?}");
    let shards = read(&out.join("shards.yaml"));
    assert!(shards.contains("- /results/shard-$(JOB_COMPLETION_INDEX).json\n"));
    let merge = read(&out.join("merge.yaml"));
    assert!(merge.contains("- /results/shard-1.json\n") && !merge.contains("/results/merged\n"));
    let (passed, said) = validate(&[out.join("shards.yaml"), out.join("merge.yaml")]);
    assert!(passed, "{said}");

    for bad in [
        render(&out, 0, "x", &["load", "http://a/"]),
        render(&out, 2, "x", &["mock", "http://a/"]),
    ] {
        assert_eq!(bad.status.code(), Some(2), "{bad:?}");
        assert_eq!(String::from_utf8_lossy(&bad.stderr).lines().count(), 1);
    }
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn the_observer_sidecar_validates_strictly_and_never_listens_off_loopback_without_a_token() {
    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("deploy/kubernetes/observer.yaml");
    let (ok, text) = validate(std::slice::from_ref(&file));
    assert!(ok, "{text}");
    let manifest = read(&file);
    assert!(
        manifest.contains("shareProcessNamespace: true"),
        "{manifest}"
    );
    // The observer's args, one per line under `args:`, as `chokepoint observe` reads them.
    let args: Vec<&str> = manifest
        .split("args:\n")
        .nth(1)
        .expect("the observer's args")
        .lines()
        .map_while(|line| line.trim().strip_prefix("- "))
        .map(|arg| arg.trim_matches('"'))
        .collect();
    assert_eq!(args[0], "observe", "{args:?}");
    let listen = args
        .iter()
        .position(|a| *a == "--listen")
        .map(|i| args[i + 1]);
    assert_eq!(listen, Some("0.0.0.0:7070"));
    assert!(
        args.contains(&"--token-file"),
        "off loopback it needs its token: {args:?}"
    );
    // The binary takes these args (the token file aside, which only the pod has).
    let output = Command::new(env!("CARGO_BIN_EXE_chokepoint"))
        .args(&args)
        .output()
        .expect("the binary runs");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("--token-file /var/run/chokepoint/token: cannot read it"),
        "{stderr}"
    );
}
