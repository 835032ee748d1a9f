//! Local files only their owner can read: `.agents/` and `.agents/worktrees/` are 0700; the
//! database, its WAL and SHM files, the log, the lock and details files, the autostart lock
//! and the policy snapshot 0600, in a new project (even under umask 000) and, tightened on
//! start, in an older one; and `orch dashboard --open` hands the browser a 0600 file that
//! redirects to the URL, so the token is never on a command line.
#![cfg(unix)]

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use coord_tests::*;

fn mode(p: &Path) -> u32 {
    std::fs::metadata(p).unwrap_or_else(|e| panic!("{}: {e}", p.display())).permissions().mode() & 0o777
}

fn set_mode(p: &Path, m: u32) {
    std::fs::set_permissions(p, std::fs::Permissions::from_mode(m)).unwrap();
}

/// Every data file that exists, with its mode.
fn data_modes(p: &Project) -> Vec<(String, u32)> {
    let dir = p.path().join(".agents");
    ["coord.db", "coord.db-wal", "coord.db-shm", "coordd.log"]
        .iter()
        .map(|f| dir.join(f))
        .filter(|f| f.exists())
        .map(|f| (f.file_name().unwrap().to_string_lossy().into_owned(), mode(&f)))
        .collect()
}

#[test]
fn a_new_project_has_its_state_folder_0700_and_its_data_files_0600() {
    let p = Project::new();
    ok(&p, &["send", "--from", "lead", "--to", "w1", "--summary", "the secret plan"]);
    assert_eq!(mode(&p.path().join(".agents")), 0o700);
    let files = data_modes(&p);
    let names: Vec<&str> = files.iter().map(|(n, _)| n.as_str()).collect();
    assert!(names.contains(&"coordd.log"), "{names:?}");
    if p.store_url().is_none() {
        assert!(names.contains(&"coord.db") && names.contains(&"coord.db-wal"), "{names:?}");
    }
    for (name, m) in files {
        assert_eq!(m, 0o600, "{name} is {m:o}");
    }
}

#[test]
fn an_older_project_is_tightened_on_start_and_the_log_says_so() {
    let p = Project::new();
    let d = p.serve();
    ok(&p, &["send", "--from", "lead", "--to", "w1", "--summary", "the secret plan"]);
    d.signal("TERM");
    let dir = p.path().join(".agents");
    std::fs::write(dir.join("coordd.log"), "an old log\n").unwrap();
    set_mode(&dir, 0o755);
    set_mode(&dir.join("coordd.log"), 0o644);
    if p.store_url().is_none() {
        set_mode(&dir.join("coord.db"), 0o644);
    }

    let mut d = p.serve();
    let line = d.wait_for_log("tightened local file modes");
    assert!(line.contains("coordd.log"), "{line}");
    assert_eq!(mode(&dir), 0o700);
    for (name, m) in data_modes(&p) {
        assert_eq!(m, 0o600, "{name} is {m:o}");
    }
}

#[test]
fn dashboard_open_hands_the_browser_a_private_redirect_file_not_the_token() {
    let p = Project::new();
    let seen = p.path().join("browser-args");
    let browser = p.write(
        "fake-browser",
        &format!("#!/bin/sh\nprintf '%s' \"$1\" > '{}.tmp'\nmv '{0}.tmp' '{0}'\n", seen.display()),
    );
    set_mode(&browser, 0o755);
    let info =
        p.orch().args(["dashboard", "--open"]).json_flag().env("BROWSER", browser.to_str().unwrap()).run().ok().json();
    let url = info["url"].as_str().unwrap();
    let token = url.trim_end_matches('/').rsplit('/').next().unwrap();

    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while !seen.exists() {
        assert!(std::time::Instant::now() < deadline, "the browser was not started");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let arg = std::fs::read_to_string(&seen).unwrap();
    assert!(arg.starts_with("file://"), "{arg}");
    assert!(!arg.contains(token), "the token is not on the browser's command line: {arg}");
    let file = Path::new(arg.strip_prefix("file://").unwrap());
    assert_eq!(mode(file), 0o600);
    let page = std::fs::read_to_string(file).unwrap();
    assert!(page.contains(&format!("content=\"0;url={url}\"")), "{page}");
}

/// The lock, details, autostart lock and policy snapshot of a project, with their modes.
fn state_modes(p: &Project) -> Vec<(&'static str, u32)> {
    let dir = p.path().join(".agents");
    ["coordd.lock", "coordd.info", "coordd.start", "coordd.policy.json"]
        .into_iter()
        .map(|f| (f, mode(&dir.join(f))))
        .collect()
}

#[test]
fn the_lock_details_autostart_and_policy_files_are_0600_even_under_umask_000() {
    let p = Project::new();
    // The client starts the daemon (taking the autostart lock), which inherits the umask.
    // Setting the policy rewrites its snapshot before it answers.
    p.sh("umask 000 && inbox send --from lead --to w1 --summary 'the secret plan' && inbox --agent lead policy lead lead")
        .run()
        .ok();
    for (name, m) in state_modes(&p) {
        assert_eq!(m, 0o600, "{name} is {m:o}");
    }
}

#[test]
fn the_worktrees_folder_is_0700_even_under_umask_000() {
    let p = git_project();
    let d = coord_tests::serve_with_command(p.sh("umask 000 && exec coordd \"$0\" \"$@\"").into_command(), &[])
        .expect("the daemon starts");
    for args in [
        &["run", "create", "--goal", "g", "--id", "R1"][..],
        &["task", "add", "--run", "R1", "--id", "T1", "--title", "t", "--assign-to", "w1"],
        &["dispatch", "--run", "R1", "--task", "T1"],
    ] {
        p.orch().args(args).run().ok();
    }
    let worktrees = p.path().join(".agents/worktrees");
    assert_eq!(mode(&worktrees), 0o700);
    assert_eq!(mode(&worktrees.join("R1")), 0o700);
    drop(d);
}

#[test]
fn older_lock_details_policy_and_worktrees_are_tightened_on_start() {
    let p = Project::new();
    let d = p.serve();
    ok_as(&p, "lead", &["policy", "lead", "lead"]);
    d.signal("TERM");
    let dir = p.path().join(".agents");
    std::fs::create_dir(dir.join("worktrees")).unwrap();
    set_mode(&dir.join("worktrees"), 0o755);
    std::fs::write(dir.join("coordd.start"), "").unwrap();
    for f in ["coordd.lock", "coordd.start", "coordd.policy.json"] {
        set_mode(&dir.join(f), 0o644);
    }

    let mut d = p.serve();
    let line = d.wait_for_log("tightened local file modes");
    assert!(line.contains("worktrees") && line.contains("coordd.start"), "{line}");
    assert_eq!(mode(&dir.join("worktrees")), 0o700);
    for (name, m) in state_modes(&p) {
        assert_eq!(m, 0o600, "{name} is {m:o}");
    }
}
