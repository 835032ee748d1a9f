//! A real PostgreSQL server (Debian's packages) for the tests: started by the harness in a
//! temporary directory, listening only on a Unix socket there, run as an unprivileged
//! user (`initdb` and `postgres` refuse root: as root the harness runs them through
//! `runuser -u postgres`). Each test project gets a database of its own.
//!
//! The server is started under a small shell that waits on a pipe from the test process
//! and stops PostgreSQL (fast shutdown) when that pipe closes, so no server outlives its
//! test binary, however it ends.
//!
//! Missing PostgreSQL: under `COORD_CI=1` the tests fail with a clear message; otherwise
//! they print why they skip.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

/// The unprivileged user the server runs as when the tests run as root.
const PG_USER: &str = "postgres";
/// The database role the tests connect as (the cluster's superuser).
const ROLE: &str = "coord";

/// Which store the end-to-end suites run their daemons on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    Sqlite,
    Postgres,
}

/// The backend of this test binary: `COORD_TEST_STORE` (`sqlite` or `postgres`) when set,
/// else PostgreSQL for the `on_postgres` suite (which runs the end-to-end suites again)
/// and SQLite for every other.
pub fn backend() -> Backend {
    match std::env::var("COORD_TEST_STORE").as_deref() {
        Ok("postgres") => return Backend::Postgres,
        Ok("sqlite") => return Backend::Sqlite,
        _ => {}
    }
    let exe = std::env::current_exe().ok();
    let name = exe.as_deref().and_then(Path::file_name).and_then(|n| n.to_str()).unwrap_or_default();
    if name.starts_with("on_postgres") { Backend::Postgres } else { Backend::Sqlite }
}

/// The PostgreSQL binaries, or why there are none.
fn bindir() -> Result<PathBuf, String> {
    if let Ok(out) = Command::new("pg_config").arg("--bindir").output()
        && out.status.success()
    {
        let dir = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
        if dir.join("initdb").is_file() {
            return Ok(dir);
        }
    }
    let mut found: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
        .map(|d| d.flatten().map(|e| e.path().join("bin")).filter(|p| p.join("initdb").is_file()).collect())
        .unwrap_or_default();
    found.sort();
    found.pop().ok_or_else(|| "PostgreSQL is not installed (Debian: apt-get install postgresql)".to_string())
}

fn is_root() -> bool {
    Command::new("id").arg("-u").output().is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
}

/// A command run as the server's user.
fn as_pg_user(program: &Path) -> Command {
    if is_root() {
        let mut c = Command::new("runuser");
        c.args(["-u", PG_USER, "--"]).arg(program);
        c
    } else {
        Command::new(program)
    }
}

/// A PostgreSQL server of the tests.
pub struct Server {
    _dir: tempfile::TempDir,
    data: PathBuf,
    /// The socket directory (the URL's `host`).
    pub socket_dir: PathBuf,
    bin: PathBuf,
    running: Mutex<Option<(Child, ChildStdin)>>,
}

impl Server {
    /// A new server of the test's own (for tests that stop and start it).
    pub fn start() -> Result<Server, String> {
        let bin = bindir()?;
        let dir = tempfile::Builder::new().prefix("coord-pg-").tempdir_in("/tmp").map_err(|e| e.to_string())?;
        let root = dir.path().to_path_buf();
        if is_root() {
            let ok = Command::new("chown").arg(format!("{PG_USER}:")).arg(&root).status();
            if !ok.is_ok_and(|s| s.success()) {
                return Err(format!("cannot hand {} to the {PG_USER} user (is it there?)", root.display()));
            }
        }
        let data = root.join("data");
        let out = as_pg_user(&bin.join("initdb"))
            .args(["-D"])
            .arg(&data)
            .args(["-U", ROLE, "--auth=trust", "-E", "UTF8", "--no-sync", "--locale=C"])
            .output()
            .map_err(|e| format!("cannot run initdb: {e}"))?;
        if !out.status.success() {
            return Err(format!("initdb failed: {}", String::from_utf8_lossy(&out.stderr)));
        }
        let s = Server { socket_dir: root.clone(), data, bin, running: Mutex::new(None), _dir: dir };
        s.start_again()?;
        Ok(s)
    }

    /// Start the (stopped) server and wait until it accepts connections.
    pub fn start_again(&self) -> Result<(), String> {
        // The shell stops PostgreSQL when its stdin (our pipe) closes.
        // A `.cleanup` file in its directory asks it to remove the directory afterwards.
        let script = r#"root="$1"; pg="$2"; shift 2; "$pg" "$@" & pid=$!; cat >/dev/null; kill -INT "$pid"; wait "$pid"; if [ -e "$root/.cleanup" ]; then rm -rf "$root"; fi"#;
        let mut cmd = as_pg_user(Path::new("/bin/sh"));
        cmd.args(["-c", script, "sh"])
            .arg(&self.socket_dir)
            .arg(self.bin.join("postgres"))
            .arg("-D")
            .arg(&self.data)
            .arg("-k");
        cmd.arg(&self.socket_dir).args([
            "-c",
            "listen_addresses=",
            "-c",
            "fsync=off",
            "-c",
            "synchronous_commit=on",
            "-c",
            "full_page_writes=off",
            "-c",
            "max_connections=300",
        ]);
        // `coord-bench --only pg` with COORD_BENCH_PG_STATEMENTS=1 reports the statements'
        // server time (pg_stat_statements).
        if std::env::var("COORD_BENCH_PG_STATEMENTS").is_ok_and(|v| v == "1") {
            cmd.args([
                "-c",
                "shared_preload_libraries=pg_stat_statements",
                "-c",
                "pg_stat_statements.track_planning=on",
            ]);
        }

        let log = std::fs::File::create(self.socket_dir.join("server.log")).map_err(|e| e.to_string())?;
        let mut child = cmd
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .map_err(|e| format!("cannot start postgres: {e}"))?;
        let stdin = child.stdin.take().ok_or("no stdin")?;
        *self.running.lock().unwrap() = Some((child, stdin));
        let start = Instant::now();
        loop {
            let url = self.url("postgres");
            if off_runtime(move || postgres::Client::connect(&url, postgres::NoTls).is_ok()) {
                return Ok(());
            }
            if start.elapsed() > Duration::from_secs(60) {
                let log = std::fs::read_to_string(self.socket_dir.join("server.log")).unwrap_or_default();
                return Err(format!("PostgreSQL did not start within 60 s:\n{log}"));
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Stop the server (fast shutdown) and wait for it.
    pub fn stop(&self) {
        if let Some((mut child, stdin)) = self.running.lock().unwrap().take() {
            drop(stdin);
            let _ = child.wait();
        }
    }

    /// The server's main process (its postmaster: every connection's process is its child),
    /// from `postmaster.pid` in its data directory; `None` when it is not running.
    pub fn postmaster_pid(&self) -> Option<u32> {
        let pidfile = std::fs::read_to_string(self.data.join("postmaster.pid")).ok()?;
        pidfile.lines().next()?.trim().parse().ok()
    }

    /// `pgbench` against the database `db` of this server (Debian ships it with the server):
    /// a command to add the rest of its arguments to.
    pub fn pgbench(&self, db: &str) -> Command {
        let mut c = Command::new(self.bin.join("pgbench"));
        c.arg("-h").arg(&self.socket_dir).args(["-U", ROLE, "-d", db]);
        c
    }

    /// The URL of a database on this server.
    pub fn url(&self, db: &str) -> String {
        format!("postgres:///{db}?host={}&user={ROLE}", self.socket_dir.display())
    }

    /// A new, empty database; its URL.
    pub fn database(&self) -> String {
        static N: AtomicU32 = AtomicU32::new(0);
        let name = format!("t{}_{}", std::process::id(), N.fetch_add(1, Ordering::SeqCst));
        let (admin, create) = (self.url("postgres"), format!("CREATE DATABASE {name}"));
        off_runtime(move || {
            let mut c = postgres::Client::connect(&admin, postgres::NoTls).expect("connect to the test server");
            c.batch_execute(&create).expect("create database");
        });
        self.url(&name)
    }

    /// A connection to a database URL of this server.
    pub fn connect(url: &str) -> postgres::Client {
        let url = url.to_string();
        off_runtime(move || postgres::Client::connect(&url, postgres::NoTls).expect("connect to PostgreSQL"))
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop();
        let _ = std::io::stderr().flush();
    }
}

/// Run `f` on a thread of its own: the synchronous client starts a runtime of its own,
/// which tokio refuses inside an async test.
pub fn off_runtime<T: Send>(f: impl FnOnce() -> T + Send) -> T {
    std::thread::scope(|s| s.spawn(f).join().expect("PostgreSQL helper thread"))
}

/// The server shared by this test binary, started on first use; `None` (after saying why)
/// when PostgreSQL is missing and `COORD_CI` is not set.
pub fn shared() -> Option<&'static Server> {
    static SERVER: OnceLock<Result<Server, String>> = OnceLock::new();
    let started = SERVER.get_or_init(|| {
        let s = Server::start()?;
        // Never dropped: the shell removes the directory when this process ends.
        let _ = std::fs::write(s.socket_dir.join(".cleanup"), "");
        Ok(s)
    });
    match started {
        Ok(s) => Some(s),
        Err(e) => {
            missing(e);
            None
        }
    }
}

/// Fail under CI, else say why the test does nothing.
#[track_caller]
pub fn missing(why: &str) {
    if std::env::var("COORD_CI").is_ok_and(|v| !v.is_empty() && v != "0") {
        panic!("PostgreSQL is required under COORD_CI=1: {why}");
    }
    eprintln!("SKIPPED (no PostgreSQL): {why}. Install Debian's `postgresql` package to run it.");
}
