//! `orch` is a placeholder in this release: its help says so and every command refuses.
//! (This test also makes `cargo test --workspace` build the binary.)

use std::process::Command;

#[test]
fn help_says_orch_is_not_implemented_yet() {
    let out = Command::new(env!("CARGO_BIN_EXE_orch")).arg("--help").output().unwrap();
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).contains("NOT IMPLEMENTED YET"));
}

#[test]
fn commands_refuse_with_exit_30() {
    let out = Command::new(env!("CARGO_BIN_EXE_orch")).args(["run", "list"]).output().unwrap();
    assert_eq!(out.status.code(), Some(30));
    assert!(String::from_utf8_lossy(&out.stderr).contains("not implemented yet"));
}
