//! A client written from `docs/protocol.md` in plain Python (standard library only) speaks
//! to the real daemon: every typed control message, requests, the policy and progress.

use std::process::Command;

use coord_tests::Project;

/// Is python3 installed? (It must be in CI.)
fn python3() -> bool {
    let there = Command::new("python3").arg("--version").output().is_ok();
    if !there {
        assert!(std::env::var_os("COORD_CI").is_none(), "python3 is required in CI (Debian package python3)");
        eprintln!("SKIPPED: python3 is not installed");
    }
    there
}

#[test]
fn a_standard_library_python_script_sends_and_receives_every_control_type() {
    if !python3() {
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

/// The Python client of docs/protocol.md §7.2, as printed there.
fn section_7_2_script() -> String {
    let doc = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/protocol.md")).unwrap();
    let section = &doc[doc.find("### 7.2 A Python client").expect("§7.2")..];
    let start = section.find("```python\n").expect("its script") + "```python\n".len();
    section[start..start + section[start..].find("\n```").unwrap()].to_string()
}

#[test]
fn the_protocol_documents_python_client_runs_against_the_daemon() {
    if !python3() {
        return;
    }
    let p = Project::new();
    let d = p.serve();
    let script = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(script.path(), section_7_2_script()).unwrap();
    let out = Command::new("python3").arg(script.path()).arg(&d.socket).output().expect("run python3");
    let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "the §7.2 client failed:\n{stdout}\n{stderr}");
    assert!(stdout.contains("second claim refused: 1004 lease_conflict"), "{stdout}");
    assert!(stdout.contains("event:") && stdout.contains("done: done"), "{stdout}");
    assert!(stdout.contains("batch: done") && stdout.contains("second: not_found"), "{stdout}");
}
