//! A client written from `docs/protocol.md` in plain Python (standard library only) speaks
//! to the real daemon: every typed control message, requests, the policy and progress.

use std::process::Command;

use coord_tests::Project;

#[test]
fn a_standard_library_python_script_sends_and_receives_every_control_type() {
    if Command::new("python3").arg("--version").output().is_err() {
        assert!(std::env::var_os("COORD_CI").is_none(), "python3 is required in CI (Debian package python3)");
        eprintln!("SKIPPED: python3 is not installed");
        return;
    }
    let p = Project::new();
    let d = p.serve();
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/python/control_client.py");
    let out = Command::new("python3").arg(script).arg(&d.socket).output().expect("run python3");
    let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "python client failed:\n{stdout}\n{stderr}");
    assert_eq!(stdout.trim(), "ok");
}
