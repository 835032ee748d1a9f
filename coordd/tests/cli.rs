//! The `coordd` binary's own command line. (Having an integration test here also makes
//! `cargo test --workspace` build the binary for the end-to-end suites in `tests/`.)

use std::process::Command;

fn coordd() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_coordd"));
    c.env_remove("COORD_DB");
    c
}

#[test]
fn help_explains_the_subcommands() {
    let out = coordd().arg("--help").output().unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    for word in ["serve", "status", "stop", "--db", ".agents/coord.db"] {
        assert!(text.contains(word), "--help lacks {word}:\n{text}");
    }
}

#[test]
fn status_and_stop_report_a_daemon_that_is_not_running() {
    let dir = tempfile::tempdir().unwrap();
    let out = coordd().current_dir(dir.path()).args(["status", "--json"]).output().unwrap();
    assert_eq!(out.status.code(), Some(3), "{out:?}");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["running"], false);
    let out = coordd().current_dir(dir.path()).arg("stop").output().unwrap();
    assert!(out.status.success(), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stdout).contains("not running"));
}
