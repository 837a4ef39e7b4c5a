use super::*;

#[test]
fn a_jvms_initial_active_count_is_read_from_vm_info() {
    for (text, count) in [
        // JDK 17.0.15 (a run of `jcmd PID VM.info` here), a JVM started in a half-core group.
        (
            "Host: AMD EPYC, 2 cores, 15G\n\nCPU: total 2 (initial active 1) (2 cores per cpu, 1 threads per core) family 25",
            Some(1),
        ),
        ("CPU: total 64 (initial active 64) (32 cores per cpu, 2 threads per core)", Some(64)),
        // Read without a space after `CPU:` too (older JDKs printed `CPU:total`).
        ("CPU:total 16 (initial active 16) (8 cores per cpu, 2 threads per core)", Some(16)),
        // The container section's `active_processor_count` is today's, not the start's.
        ("active_processor_count: 1\n", None),
        ("", None),
    ] {
        assert_eq!(jvm_initial_active(text), count, "{text:?}");
    }
}

#[test]
fn the_environment_gives_gomaxprocs_and_godebug() {
    let environ = b"HOME=/root\0GOMAXPROCS=4\0GODEBUG=containermaxprocs=0\0";
    assert_eq!(env_var(environ, "GOMAXPROCS").as_deref(), Some("4"));
    assert_eq!(
        env_var(environ, "GODEBUG").as_deref(),
        Some("containermaxprocs=0")
    );
    assert_eq!(env_var(environ, "PATH"), None);
    assert_eq!(env_var(b"XGOMAXPROCS=4\0", "GOMAXPROCS"), None);
}

#[test]
fn the_allowed_cpus_are_counted_from_their_list() {
    for (list, count) in [
        ("0-1", Some(2)),
        ("0-15", Some(16)),
        ("0-31,64-95", Some(64)),
        ("3", Some(1)),
        ("0,2,4-5", Some(4)),
    ] {
        let status = format!("Name:\tgo-cpu\nCpus_allowed_list:\t{list}\nMems_allowed:\t1\n");
        assert_eq!(allowed_cpus(&status), count, "{list}");
    }
    assert_eq!(allowed_cpus("Name:\tx\n"), None);
}

#[test]
fn gos_default_follows_the_quota_from_go_1_25_unless_the_godebug_says_not() {
    for (version, default, env, follows) in [
        ("go1.24.3", "", "", false),
        ("go1.25.0", "", "", true),
        ("go1.26.8", "", "", true),
        // A go.mod at `go 1.19` built by 1.26: the build keeps the old default.
        (
            "go1.26.8",
            "containermaxprocs=0,updatemaxprocs=0",
            "",
            false,
        ),
        // The environment decides over the build.
        (
            "go1.26.8",
            "containermaxprocs=0",
            "containermaxprocs=1",
            true,
        ),
        (
            "go1.25.1",
            "",
            "updatemaxprocs=0,containermaxprocs=0",
            false,
        ),
        ("devel go1.27-abc", "", "", false),
        ("go1.9", "", "", false),
    ] {
        assert_eq!(
            go_follows_quota(version, default, env),
            follows,
            "{version} {default:?} {env:?}"
        );
    }
}

#[test]
fn gos_default_is_the_cpus_or_the_quota_rounded_up_and_two_at_least() {
    // (CPUs, the quota it follows, GOMAXPROCS), on 2, 16 and 64 cores.
    for (cpus, quota, procs) in [
        (2, None, 2),
        (2, Some(0.5), 2),
        (2, Some(8.0), 2),
        (16, None, 16),
        (16, Some(0.5), 2),
        (16, Some(2.5), 3),
        (16, Some(4.0), 4),
        (64, None, 64),
        (64, Some(1.0), 2),
        (64, Some(12.2), 13),
        (64, Some(100.0), 64),
    ] {
        assert_eq!(
            go_default(cpus, quota),
            procs,
            "{cpus} cpus, quota {quota:?}"
        );
    }
}

/// A binary's bytes with a Go 1.18+ `.go.buildinfo` header at a 16-byte boundary.
/// The module info is wrapped in binary sentinels, as the linker writes it (not UTF-8).
fn binary_with_buildinfo(version: &str, modinfo: &str, flags: u8) -> Vec<u8> {
    const SENTINEL: &[u8] = b"0w\xaf\x0c\x92t\x08\x02A\xe1\xc1\x07\xe6\xd6\x18\xe6";
    let mut wrapped = SENTINEL.to_vec();
    wrapped.extend_from_slice(modinfo.as_bytes());
    wrapped.extend_from_slice(SENTINEL);
    let mut bytes = vec![0u8; 48];
    bytes.extend_from_slice(BUILDINFO_MAGIC);
    bytes.push(8); // pointer size
    bytes.push(flags);
    bytes.extend_from_slice(&[0u8; 16]);
    for text in [version.as_bytes(), &wrapped] {
        let mut length = text.len();
        loop {
            let byte = (length & 0x7f) as u8;
            length >>= 7;
            bytes.push(if length > 0 { byte | 0x80 } else { byte });
            if length == 0 {
                break;
            }
        }
        bytes.extend_from_slice(text);
    }
    bytes.extend_from_slice(&[0u8; 64]);
    bytes
}

#[test]
fn a_go_binarys_toolchain_and_default_godebug_are_read_from_its_build_info() {
    // The modinfo's lines as `go version -m` prints them, longer than one varint byte.
    let modinfo = format!(
        "path\tchokepoint/targets/gocpu\nmod\tchokepoint/targets/gocpu\t(devel)\t\nbuild\tDefaultGODEBUG=containermaxprocs=0,updatemaxprocs=0\nbuild\tGOARCH=amd64\n{}",
        "build\tX=y\n".repeat(20)
    );
    let binary = binary_with_buildinfo("go1.26.8", &modinfo, 0x2);
    assert_eq!(
        go_build_info(&binary),
        Some(GoBuild {
            version: "go1.26.8".into(),
            default_godebug: "containermaxprocs=0,updatemaxprocs=0".into(),
        })
    );
    let without = binary_with_buildinfo("go1.25.0", "path\tx\n", 0x2);
    assert_eq!(
        go_build_info(&without).map(|b| b.default_godebug),
        Some(String::new())
    );
    // Before Go 1.18 the header points at the strings: not read.
    assert_eq!(go_build_info(&binary_with_buildinfo("go1.16", "", 0)), None);
    assert_eq!(go_build_info(b"\x7fELF not go at all"), None);
}
