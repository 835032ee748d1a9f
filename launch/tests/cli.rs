//! `coord-launch` without a daemon: its help shows examples and exit statuses, and bad
//! arguments exit 30 before anything connects.

use std::process::Command;

fn launch(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_coord-launch")).args(args).env("COORD_NO_AUTOSTART", "1").output().unwrap()
}

#[test]
fn help_shows_examples_and_exit_statuses() {
    let out = launch(&["--help"]);
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("Examples:") && text.contains("--until-done") && text.contains("Exit status"), "{text}");
}

#[test]
fn bad_arguments_exit_30() {
    assert_eq!(launch(&["--run", "R1", "--client", "vim"]).status.code(), Some(30));
    assert_eq!(launch(&["--client", "claude"]).status.code(), Some(30), "--run is required");
    assert_eq!(launch(&["--run", "R1", "--max-sessions", "0"]).status.code(), Some(30));
}

#[test]
fn a_bad_config_file_is_reported_with_its_key() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join(".agents")).unwrap();
    std::fs::write(dir.path().join(".agents/launch.toml"), "[defaults]\nclinet = \"claude\"\n").unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_coord-launch"))
        .args(["--run", "R1"])
        .current_dir(dir.path())
        .env("COORD_NO_AUTOSTART", "1")
        .env_remove("COORD_DB")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3));
    assert!(String::from_utf8_lossy(&out.stderr).contains("clinet"), "{}", String::from_utf8_lossy(&out.stderr));
}
