//! Disk and file trouble: a full disk (a small tmpfs the test mounts), a read-only database
//! file, the socket file deleted under a running daemon, a database from a newer coordd.
//! Each gets a clear error, nothing acknowledged is lost, and the daemon recovers by itself
//! where it can.
#![cfg(target_os = "linux")]

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

use coord_tests::{Project, fails, ok, skip_or_fail, thread_id};

/// A small tmpfs mounted for one test (needs root, or CAP_SYS_ADMIN), unmounted on drop.
struct Tmpfs {
    dir: PathBuf,
}

impl Tmpfs {
    fn mount(size: &str) -> Option<Tmpfs> {
        let dir = tempfile::Builder::new().prefix("coord-fs-").tempdir_in("/tmp").ok()?.keep();
        let ok = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(&dir)
            .status()
            .is_ok_and(|s| s.success());
        if !ok {
            let _ = std::fs::remove_dir(&dir);
            return None;
        }
        Some(Tmpfs { dir })
    }

    fn path(&self) -> &Path {
        &self.dir
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(&self.dir).status();
        let _ = std::fs::remove_dir(&self.dir);
    }
}

/// Write zeros until the file system is full.
fn fill(path: &Path) {
    let mut f = std::fs::File::create(path).unwrap();
    let chunk = vec![0u8; 256 * 1024];
    while f.write_all(&chunk).is_ok() {}
    let _ = f.sync_all();
}

fn coordd_check(p: &Project) -> serde_json::Value {
    p.coordd().args(["check", "--json"]).run().ok().json()
}

/// A project on a fresh 24 MB tmpfs (keep the `Tmpfs` alive as long as the project); `None`
/// without the right to mount one.
fn project_on_small_disk() -> Option<(Tmpfs, Project)> {
    let fs = Tmpfs::mount("24m")?;
    let p = Project::new_in(fs.path());
    Some((fs, p))
}

/// A file holding a 2 MiB message body, for a send that needs space.
fn big_body() -> tempfile::NamedTempFile {
    let body = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(body.path(), "x".repeat(2 * 1024 * 1024)).unwrap();
    body
}

/// The thread ids `inbox list` shows.
fn listed(p: &Project) -> Vec<String> {
    let list = ok(p, &["list", "--limit", "100"]);
    list["threads"].as_array().unwrap().iter().map(|t| t["thread_id"].as_str().unwrap().to_string()).collect()
}

#[test]
fn a_full_disk_fails_writes_clearly_keeps_reads_and_recovers_when_space_returns() {
    let Some((fs, p)) = project_on_small_disk() else {
        return skip_or_fail("to mount a small tmpfs (root or CAP_SYS_ADMIN)");
    };
    let _d = p.serve();
    let acked: Vec<String> = (0..5)
        .map(|i| thread_id(&ok(&p, &["send", "--from", "lead", "--to", "w", "--summary", &format!("m{i}")])))
        .collect();
    let body = big_body();
    let big = ["send", "--from", "lead", "--to", "w", "--summary", "big", "--body-file", body.path().to_str().unwrap()];

    fill(&fs.path().join("ballast"));
    let refused = fails(&p, &big, 50, "io_write_failed");
    let msg = refused["error"]["message"].as_str().unwrap();
    assert!(msg.contains("disk") && msg.contains("full"), "a clear message: {msg}");
    // Reads keep working, and see every acknowledged write.
    let listed = listed(&p);
    for t in &acked {
        assert!(listed.contains(t), "{t} is still there");
    }

    // Space returns: the same daemon takes the same write, with no restart.
    std::fs::remove_file(fs.path().join("ballast")).unwrap();
    let stored = ok(&p, &big);
    let shown = ok(&p, &["show", "--thread", &thread_id(&stored)]);
    assert_eq!(shown["messages"][0]["body"].as_str().map(str::len), Some(2 * 1024 * 1024));
    let check = coordd_check(&p);
    assert_eq!(check["ok"], true, "{check}");
    assert_eq!(check["events"]["count"], 6, "five sends before, one after, none of the refused: {check}");
}

#[test]
fn a_read_only_database_file_is_refused_clearly_and_left_untouched() {
    let p = Project::new();
    let d = p.serve();
    let thr = thread_id(&ok(&p, &["send", "--from", "lead", "--to", "w", "--summary", "keep me"]));
    p.coordd().args(["stop"]).run().ok();
    d.wait();
    let db = p.paths().db;
    let before = std::fs::read(&db).unwrap();
    // Root ignores file modes: make the file immutable instead.
    let root = is_root();
    let locked = if root {
        Command::new("chattr").arg("+i").arg(&db).status().is_ok_and(|s| s.success())
    } else {
        std::fs::set_permissions(&db, std::os::unix::fs::PermissionsExt::from_mode(0o444)).is_ok()
    };
    if !locked {
        return skip_or_fail("chattr +i (root) or chmod to make the database read-only");
    }
    let refused = p.try_serve();
    if root {
        Command::new("chattr").arg("-i").arg(&db).status().unwrap();
    } else {
        std::fs::set_permissions(&db, std::os::unix::fs::PermissionsExt::from_mode(0o644)).unwrap();
    }
    let err = refused.err().expect("the daemon refuses a database it cannot write");
    assert!(err.contains("read-only"), "a clear message: {err}");
    assert_eq!(std::fs::read(&db).unwrap(), before, "the file was left untouched");
    let _d = p.serve();
    assert_eq!(ok(&p, &["show", "--thread", &thr])["thread"]["thread_id"], thr.as_str());
}

fn is_root() -> bool {
    Command::new("id").arg("-u").output().is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
}

#[test]
fn a_deleted_socket_file_is_re_created_by_the_running_daemon() {
    let p = Project::new();
    let mut d = p.serve();
    let thr = thread_id(&ok(&p, &["send", "--from", "lead", "--to", "w", "--summary", "before"]));
    std::fs::remove_file(&d.socket).unwrap();
    d.wait_for_log("socket re-created");
    // Clients reach the same daemon again (no second daemon: it would not get the lock).
    let list = p.inbox().args(["list", "--json"]).env("COORD_NO_AUTOSTART", "1").run().ok().json();
    assert_eq!(list["threads"][0]["thread_id"], thr.as_str());
    let status = p.coordd().args(["status", "--json"]).run().ok().json();
    assert_eq!(status["pid"], d.pid());
}

#[test]
fn a_database_from_a_newer_coordd_is_refused_and_left_untouched() {
    let p = Project::new();
    let d = p.serve();
    ok(&p, &["send", "--from", "lead", "--to", "w", "--summary", "data"]);
    p.coordd().args(["stop"]).run().ok();
    d.wait();
    let db = p.paths().db;
    // SQLite keeps user_version (the schema version) big-endian at offset 60 of the header.
    let mut bytes = std::fs::read(&db).unwrap();
    bytes[60..64].copy_from_slice(&999u32.to_be_bytes());
    std::fs::write(&db, &bytes).unwrap();
    let err = p.try_serve().err().expect("a newer schema is refused");
    assert!(err.contains("newer coordd") && err.contains("999"), "a clear message: {err}");
    assert_eq!(std::fs::read(&db).unwrap(), bytes, "the file was left untouched");
    let cli = p.inbox().args(["list", "--json"]).run();
    assert_eq!(cli.code, 50, "the CLI cannot start a daemon either: {cli:?}");
    assert!(cli.stdout.contains("newer coordd") || cli.stderr.contains("newer coordd"), "{cli:?}");
}

/// Issue 26 §3, the exact reproduction: fill the disk until sends fail with 1150, free
/// space, send a few, stop, fill again. `coordd serve` used to exit ("cannot open the
/// database … disk is full"); it now starts read-only, says so, keeps serving reads, and
/// takes writes again once space returns, without a restart.
#[test]
fn a_daemon_restarted_on_a_full_disk_starts_read_only_and_recovers_when_space_returns() {
    let Some((fs, p)) = project_on_small_disk() else {
        return skip_or_fail("to mount a small tmpfs (root or CAP_SYS_ADMIN)");
    };
    let d = p.serve();
    let send = |summary: &str| ok(&p, &["send", "--from", "lead", "--to", "w", "--summary", summary]);
    let first = thread_id(&send("before"));
    let body = big_body();
    let big = ["send", "--from", "lead", "--to", "w", "--summary", "big", "--body-file", body.path().to_str().unwrap()];
    fill(&fs.path().join("ballast"));
    fails(&p, &big, 50, "io_write_failed");
    std::fs::remove_file(fs.path().join("ballast")).unwrap();
    let acked: Vec<String> = (0..3).map(|i| thread_id(&send(&format!("after{i}")))).collect();
    p.coordd().args(["stop"]).run().ok();
    d.wait();
    fill(&fs.path().join("ballast"));

    let mut d = p.try_serve().expect("the daemon starts on a full disk");
    // It says so: in the log, in status and in system.hello.
    d.wait_for_log("read-only");
    let status = p.coordd().args(["status", "--json"]).run().ok().json();
    assert_eq!(status["read_only"]["reason"], "disk_full", "{status}");
    // Reads keep working and see every acknowledged write.
    let listed = listed(&p);
    for t in acked.iter().chain([&first]) {
        assert!(listed.contains(t), "{t} is still there: {listed:?}");
    }
    // Every write says why it is refused, with a stable code.
    let refused = fails(&p, &["send", "--from", "lead", "--to", "w", "--summary", "refused"], 50, "read_only");
    let msg = refused["error"]["message"].as_str().unwrap();
    assert!(msg.contains("read-only") && msg.contains("disk") && msg.contains("full"), "a clear message: {msg}");

    // Space returns: the same daemon takes writes again.
    std::fs::remove_file(fs.path().join("ballast")).unwrap();
    let later = thread_id(&send("later"));
    ok(&p, &["show", "--thread", &later]);
    let status = p.coordd().args(["status", "--json"]).run().ok().json();
    assert!(status["read_only"].is_null(), "{status}");
    drop(d);
    let check = coordd_check(&p);
    assert_eq!(check["ok"], true, "{check}");
}
