//! The `orch` binary's own command line: help, usage errors and the no-daemon case.
//! (Having an integration test here also makes `cargo test --workspace` build the binary
//! for the end-to-end suites in `tests/`.)

use std::process::Command;

fn orch(dir: &std::path::Path) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_orch"));
    c.current_dir(dir).env_remove("COORD_DB").env_remove("COORD_NO_AUTOSTART");
    c
}

#[test]
fn help_lists_every_command_and_the_exit_codes() {
    let dir = tempfile::tempdir().unwrap();
    let out = orch(dir.path()).arg("--help").output().unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    for cmd in [
        "run",
        "task",
        "dep",
        "ready",
        "dispatch",
        "reconcile",
        "wait",
        "blocked",
        "answer",
        "retry",
        "reassign",
        "cancel",
        "status",
        "worktree",
        "council",
        "Exit codes",
    ] {
        assert!(text.contains(cmd), "--help lacks {cmd}:\n{text}");
    }
    let out = orch(dir.path()).args(["dispatch", "--help"]).output().unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    for flag in ["--all-ready", "--repo", "--base", "--strict", "--no-worktree", "--to"] {
        assert!(text.contains(flag), "dispatch --help lacks {flag}");
    }
}

#[test]
fn usage_errors_exit_30_without_starting_a_daemon() {
    let dir = tempfile::tempdir().unwrap();
    let out = orch(dir.path()).args(["task", "add", "--run", "R1"]).output().unwrap();
    assert_eq!(out.status.code(), Some(30));
    let out = orch(dir.path()).args(["dispatch", "--run", "R1", "--task", "T1", "--all-ready"]).output().unwrap();
    assert_eq!(out.status.code(), Some(30), "--task and --all-ready conflict");
    assert!(!dir.path().join(".agents").exists(), "a usage error must not start a daemon");
}

#[test]
fn no_autostart_reports_an_unavailable_daemon_with_exit_50() {
    let dir = tempfile::tempdir().unwrap();
    let out = orch(dir.path()).args(["--json", "--no-autostart", "run", "create", "--goal", "g"]).output().unwrap();
    assert_eq!(out.status.code(), Some(50));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["ok"], false);
    assert_eq!(v["command"], "run create");
    assert_eq!(v["error"]["code"], "daemon_unavailable");
}
