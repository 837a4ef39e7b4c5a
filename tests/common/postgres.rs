//! A real PostgreSQL for the tests whose target's downstream is a database: a cluster of its own
//! in a temporary folder (`initdb`), on a free port of 127.0.0.1 and a socket folder of its own,
//! stopped with its whole process group when dropped. PostgreSQL refuses to run as root, so as
//! root it runs as the `postgres` user Debian's package makes (`setpriv`, which execs: the group
//! leader is the server itself). `.ci/run` installs the package; without it the test fails.
use chokepoint_testkit::Server;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

/// A running PostgreSQL; `dsn()` reaches it as the superuser `postgres`, trusted on loopback.
pub struct Postgres {
    _server: Server,
    port: u16,
    _dir: TempFolder,
}

impl Postgres {
    pub fn start() -> Postgres {
        let bin = postgres_bin();
        let dir = TempFolder::new();
        let data = dir.path().join("data");
        let run_as_postgres = unsafe { libc::geteuid() } == 0;
        if run_as_postgres {
            let status = Command::new("chown")
                .args(["-R", "postgres:postgres"])
                .arg(dir.path())
                .status()
                .expect("chown runs");
            assert!(status.success(), "chown of the cluster's folder failed");
        }
        let as_owner = |program: &Path| {
            let mut command = if run_as_postgres {
                let mut c = Command::new("setpriv");
                c.args(["--reuid=postgres", "--regid=postgres", "--init-groups"])
                    .arg(program);
                c
            } else {
                Command::new(program)
            };
            command.env_remove("PGDATA");
            command
        };
        let output = as_owner(&bin.join("initdb"))
            .args(["--auth=trust", "--username=postgres", "--no-sync", "-D"])
            .arg(&data)
            .output()
            .expect("initdb runs");
        assert!(
            output.status.success(),
            "initdb failed: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        let sockets = dir.path().to_path_buf();
        let (server, port) =
            Server::spawn_on_free_port("postgres", Duration::from_secs(60), |port| {
                let mut command = as_owner(&bin.join("postgres"));
                command
                    .arg("-D")
                    .arg(&data)
                    .args(["-p", &port.to_string(), "-k"])
                    .arg(&sockets)
                    .args(["-c", "listen_addresses=127.0.0.1"])
                    // A test database: no durability needed, little memory.
                    .args(["-c", "fsync=off", "-c", "shared_buffers=16MB"])
                    .args(["-c", "max_connections=60"]);
                command
            });
        Postgres {
            _server: server,
            port,
            _dir: dir,
        }
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    pub fn dsn(&self) -> String {
        format!("postgresql://postgres@127.0.0.1:{}/postgres", self.port)
    }
}

/// The server binaries of the newest PostgreSQL Debian installed (`/usr/lib/postgresql/N/bin`).
fn postgres_bin() -> PathBuf {
    let mut versions: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|entry| {
            let version = entry.file_name().to_str()?.parse().ok()?;
            let bin = entry.path().join("bin");
            bin.join("postgres").exists().then_some((version, bin))
        })
        .collect();
    versions.sort();
    versions
        .pop()
        .map(|(_, bin)| bin)
        .expect("PostgreSQL's server is needed: apt-get install postgresql (.ci/run does)")
}

/// A folder removed when dropped (after the server that used it has stopped: fields drop in
/// order, the server first).
struct TempFolder(PathBuf);

impl TempFolder {
    fn new() -> TempFolder {
        let path = std::env::temp_dir().join(format!(
            "chokepoint-pg-{}-{}",
            std::process::id(),
            chokepoint_testkit::free_port()
        ));
        std::fs::create_dir_all(&path).expect("a temporary folder");
        TempFolder(path)
    }

    fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempFolder {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
