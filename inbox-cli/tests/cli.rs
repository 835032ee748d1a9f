//! The `inbox` binary's own command line: help, usage errors and the no-daemon case.
//! (Having an integration test here also makes `cargo test --workspace` build the binary
//! for the end-to-end suites in `tests/`.)

use std::process::Command;

fn inbox(dir: &std::path::Path) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_inbox"));
    c.current_dir(dir).env_remove("COORD_DB").env_remove("COORD_AGENT").env_remove("COORD_NO_AUTOSTART");
    c
}

#[test]
fn help_lists_every_command_and_the_exit_codes() {
    let dir = tempfile::tempdir().unwrap();
    let out = inbox(dir.path()).arg("--help").output().unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    for cmd in [
        "init",
        "send",
        "fetch",
        "claim",
        "renew",
        "update",
        "reply",
        "done",
        "fail",
        "cancel",
        "list",
        "show",
        "watch",
        "wait-reply",
        "--db",
        "--json",
        "--agent",
        "Exit codes",
    ] {
        assert!(text.contains(cmd), "--help lacks {cmd}:\n{text}");
    }
}

#[test]
fn usage_errors_exit_30_without_starting_a_daemon() {
    let dir = tempfile::tempdir().unwrap();
    let out = inbox(dir.path()).args(["send", "--to", "w"]).output().unwrap();
    assert_eq!(out.status.code(), Some(30));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--summary"));
    let out = inbox(dir.path()).args(["fetch", "--json"]).output().unwrap();
    assert_eq!(out.status.code(), Some(30));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["ok"], false);
    assert_eq!(v["error"]["code"], "invalid_args");
    assert!(!dir.path().join(".agents").exists(), "a usage error must not start a daemon");
}

#[test]
fn absurd_timeouts_are_refused_not_overflowed() {
    let dir = tempfile::tempdir().unwrap();
    let out = inbox(dir.path()).args(["watch", "--timeout-seconds", "18446744073709551615"]).output().unwrap();
    assert_eq!(out.status.code(), Some(30), "{out:?}");
}

#[test]
fn no_autostart_reports_an_unavailable_daemon_with_exit_50() {
    let dir = tempfile::tempdir().unwrap();
    for how in ["flag", "env"] {
        let mut cmd = inbox(dir.path());
        cmd.args(["send", "--from", "a", "--to", "b", "--summary", "x", "--json"]);
        if how == "flag" {
            cmd.arg("--no-autostart");
        } else {
            cmd.env("COORD_NO_AUTOSTART", "1");
        }
        let out = cmd.output().unwrap();
        assert_eq!(out.status.code(), Some(50), "{how}: {out:?}");
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(v["error"]["code"], "daemon_unavailable", "{how}");
        assert_eq!(v["command"], "send");
    }
}
