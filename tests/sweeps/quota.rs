//! A CPU quota found on a real control group (issue 23): tests/targets/go-cpu (a Go handler
//! that hashes on every core) in a cgroup v1 `cpu` group made here with half a core's quota
//! (cfs_quota_us 50000 per 100000), and the same service without one. Needs root and the v1
//! `cpu` controller at /sys/fs/cgroup/cpu (this machine and CI have both; a machine without
//! fails the test, as a missing tool does). And what the runtime did with the core count it
//! saw: Go's GOMAXPROCS from go-cpu's build info, and a JVM moved into a half-core group after it
//! started, whose `jcmd VM.info` still says the machine's cores, beside one started inside it
//! (1: the quota rounded up).
use crate::common;

use chokepoint_result::{
    CpuQuota, Fact, Kind, PlaceKind, Runtime, RuntimeCores, RuntimeCoresSource,
};
use common::*;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The v1 `cpu` hierarchy.
const CPU_HIERARCHY: &str = "/sys/fs/cgroup/cpu";

/// A cgroup v1 `cpu` group with a CFS quota, removed when dropped (its processes gone).
struct QuotaGroup(PathBuf);

impl QuotaGroup {
    fn new(name: &str, quota_us: u64, period_us: u64) -> QuotaGroup {
        let root = Path::new(CPU_HIERARCHY);
        assert!(
            root.join("cgroup.procs").exists(),
            "no cgroup v1 cpu controller at {CPU_HIERARCHY}: this test makes a group there (as root)"
        );
        let dir = root.join(format!("{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir(&dir);
        std::fs::create_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
        let group = QuotaGroup(dir);
        group.write("cpu.cfs_period_us", &period_us.to_string());
        group.write("cpu.cfs_quota_us", &quota_us.to_string());
        group
    }

    fn write(&self, file: &str, value: &str) {
        std::fs::write(self.0.join(file), value)
            .unwrap_or_else(|e| panic!("{}/{file}: {e}", self.0.display()));
    }

    /// Moves `pid` (all its threads) into the group.
    fn add(&self, pid: i32) {
        self.write("cgroup.procs", &pid.to_string());
    }
}

impl Drop for QuotaGroup {
    fn drop(&mut self) {
        // The group's processes are stopped by then (the Target drops first): rmdir succeeds.
        for _ in 0..50 {
            if std::fs::remove_dir(&self.0).is_ok() {
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
        eprintln!("could not remove {}", self.0.display());
    }
}

/// tests/targets/go-cpu on a free port.
fn launch_go_cpu() -> Target {
    let mut command = Command::new(build_go_target("go-cpu"));
    command.args(["-port", "0"]);
    Target::launch("go-cpu", command)
}

#[test]
fn a_go_service_in_a_half_core_group_is_cpu_bound_at_its_quota_and_says_so() {
    assert!(
        toolchain_present("go", "version"),
        "go is needed (.ci/run installs it)"
    );
    let _one = one_at_a_time();
    let group = QuotaGroup::new("cp-quota", 50_000, 100_000);
    let target = launch_go_cpu();
    group.add(target.pid());
    let result = sweep_target(&target, Some(vec![1, 2, 4, 8]), STEP, 8, None);
    drop(target);
    for step in &result.steps {
        println!("{} clients: quota {:?}", step.clients, step.cpu_quota);
    }
    // go-cpu's go.mod says `go 1.19`: its build keeps `containermaxprocs=0`, and GOMAXPROCS is
    // the machine's CPUs, read from the binary's build info and told beside the quota.
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get()) as u32;
    let runtime = result
        .steps
        .iter()
        .find_map(|s| s.cpu_quota.as_ref()?.runtime_cores.clone())
        .expect("go-cpu's GOMAXPROCS");
    assert_eq!((runtime.runtime, runtime.cores), (Runtime::Go, cpus));
    assert!(
        matches!(&runtime.source, RuntimeCoresSource::GoDefault { version, follows_quota: false } if version.starts_with("go1.")),
        "{runtime:?}"
    );
    assert_finding("go-cpu in half a core", &result, Kind::CpuBound, 0.5);
    let diagnosis = result.diagnosis.as_ref().expect("a diagnosis");
    assert!(
        diagnosis
            .facts()
            .iter()
            .any(|f| matches!(f, Fact::CpuQuota { quota_cores, .. } if *quota_cores == 0.5)),
        "{:?}",
        diagnosis.evidence
    );
    let said = diagnosis.evidence.join(" ");
    assert!(
        said.contains(&format!(
            "Go runs goroutines on {cpus} cores at once (GOMAXPROCS)"
        )) && said.contains("GOMAXPROCS=1"),
        "{said}"
    );
    let place = diagnosis.place.as_ref().expect("a place");
    assert_eq!(place.kind, Some(PlaceKind::Cpu));
    assert_eq!(place.cpu_quota, Some(0.5));
    assert!(
        diagnosis.summary.contains("CPU quota"),
        "{}",
        diagnosis.summary
    );
}

#[test]
fn the_same_service_without_a_quota_is_told_no_quota() {
    assert!(
        toolchain_present("go", "version"),
        "go is needed (.ci/run installs it)"
    );
    let _one = one_at_a_time();
    let target = launch_go_cpu();
    let result = sweep_target(&target, Some(vec![1, 2, 4, 8]), STEP, 8, None);
    drop(target);
    let diagnosis = assert_kind("go-cpu", &result, Kind::CpuBound);
    assert!(result.steps.iter().all(|s| s.cpu_quota.is_none()));
    assert!(!diagnosis
        .facts()
        .iter()
        .any(|f| matches!(f, Fact::CpuQuota { .. })));
    assert!(
        !diagnosis.summary.contains("quota"),
        "{}",
        diagnosis.summary
    );
}

/// The quota the JVM twin `jvm` showed in one step of 2 clients on `/actors` (stacks off, no
/// warm-up: the step reads the group and `jcmd VM.info`); the JVM is stopped after.
fn quota_at_one_step(name: &str, jvm: Target, mock: &chokepoint_mock::RunningMock) -> CpuQuota {
    let mut config = chokepoint_experiment::SweepConfig::new(&jvm.url_of("/actors"))
        .expect("a URL")
        .with_target_pid(jvm.pid());
    config.stacks.enabled = false;
    config.warmup_limit = std::time::Duration::ZERO;
    let result = sweep_with(name, config, Some(vec![2]), STEP, 2, Some(mock));
    drop(jvm);
    result.steps[0]
        .cpu_quota
        .clone()
        .expect("the group's quota")
}

/// The JVM twin sized its threads for the cores it saw at its start (the machine's); moved into
/// a half-core group after, it keeps them, and each step's quota says so from `jcmd VM.info`.
#[test]
fn a_jvm_moved_into_a_half_core_group_shows_the_cores_it_sized_itself_for() {
    assert!(
        toolchain_present("java", "-version") && toolchain_present("jcmd", "-h"),
        "a JDK is needed (.ci/run installs it)"
    );
    let _one = one_at_a_time();
    let mock = mock_with_delay();
    let jvm = launch_jvm(&mock);
    let group = QuotaGroup::new("cp-quota-jvm", 50_000, 100_000);
    group.add(jvm.pid());
    let quota = quota_at_one_step("jvm in half a core", jvm, &mock);
    assert_eq!(quota.cores, 0.5);
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get()) as u32;
    assert_eq!(
        quota.runtime_cores,
        Some(RuntimeCores {
            runtime: Runtime::Jvm,
            cores: cpus,
            source: RuntimeCoresSource::JcmdVmInfo,
        })
    );
}

/// The JVM twin started inside a half-core group: JDK 17 sizes itself for the quota rounded up
/// (container support, JDK-8146115: `ceil(cfs_quota_us / cfs_period_us)` active processors), so
/// `jcmd VM.info` says 1 where the twin moved in after its start says the machine's cores.
#[test]
fn a_jvm_started_inside_a_half_core_group_sized_itself_for_one_core() {
    assert!(
        toolchain_present("java", "-version") && toolchain_present("jcmd", "-h"),
        "a JDK is needed (.ci/run installs it)"
    );
    let _one = one_at_a_time();
    let mock = mock_with_delay();
    let group = QuotaGroup::new("cp-quota-jvm-start", 50_000, 100_000);
    // The shell joins the group, then becomes the JVM (same PID): the JVM starts inside it.
    let mut command = Command::new("sh");
    command
        .arg("-c")
        .arg(r#"echo $$ > "$0/cgroup.procs" && exec java "$@""#)
        .arg(&group.0)
        .args(crate::common::java_program(
            &Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/jvm/BlockingDemo.java"),
        ))
        .args(["--port", "0", "--downstream", &mock.url()])
        .args(["--actors", "20", "--dispatcher", "16"]);
    let jvm = Target::launch("jvm started in half a core", command);
    let quota = quota_at_one_step("jvm started in half a core", jvm, &mock);
    assert_eq!(quota.cores, 0.5);
    assert_eq!(
        quota.runtime_cores,
        Some(RuntimeCores {
            runtime: Runtime::Jvm,
            cores: 1,
            source: RuntimeCoresSource::JcmdVmInfo,
        })
    );
}
