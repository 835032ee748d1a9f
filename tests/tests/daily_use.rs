//! Daily use of the daemons: read-only commands outside a project say so instead of
//! creating one, autostart says in one line that it started a daemon, `coordd list` shows
//! the running daemons, and an idle timeout stops a daemon that nobody uses (never one with
//! a subscriber or a live lease).

use coord_tests::{Project, finish, ok, thread_id};

#[test]
fn read_only_commands_outside_a_project_say_so_and_create_nothing() {
    let p = Project::new();
    for (program, args) in [("inbox", &["list"][..]), ("inbox", &["mail", "--agent", "w"]), ("orch", &["run", "list"])]
    {
        let run = if program == "inbox" { p.inbox() } else { p.orch() };
        let v = run.args(args).json_flag().run().code(40).json();
        assert_eq!(v["error"]["code"], "not_found");
        assert!(v["error"]["message"].as_str().unwrap().contains("inbox init"), "a hint: {v}");
    }
    assert!(!p.path().join(".agents").exists(), "nothing created");
    // Writes (and init) create the project.
    ok(&p, &["send", "--from", "a", "--to", "b", "--summary", "hello"]);
    assert!(p.path().join(".agents/coord.db").exists());
    ok(&p, &["list"]);
}

/// Each command declares beside itself whether it only reads (`Command::read_only`): every
/// one that does, in both CLIs, refuses to create a project.
#[test]
fn every_read_only_command_of_both_clis_outside_a_project_says_so() {
    let p = Project::new();
    let inbox: &[&[&str]] = &[
        &["fetch", "--agent", "w"],
        &["list"],
        &["show", "--thread", "thr_1"],
        &["watch", "--agent", "w", "--timeout-seconds", "1"],
        &["wait-reply", "--thread", "thr_1", "--timeout-seconds", "1"],
        &["search", "word"],
        &["agent", "list"],
        &["agent", "show", "--agent", "w"],
        &["mail", "--agent", "w"],
        &["reservations"],
        &["status"],
        &["pending", "--agent", "w"],
        &["requests", "--agent", "w"],
        &["policy", "show"],
        &["policy", "check", "--agent", "w", "--tool", "Bash"],
    ];
    let orch: &[&[&str]] = &[
        &["run", "list"],
        &["run", "show", "--run", "R1"],
        &["task", "list", "--run", "R1"],
        &["task", "show", "--run", "R1", "--task", "T1"],
        &["ready", "--run", "R1"],
        &["wait", "--run", "R1", "--timeout-seconds", "1"],
        &["blocked", "--run", "R1"],
        &["status", "--run", "R1"],
        &["worktree", "list"],
        &["council", "list", "--run", "R1"],
        &["council", "status", "--run", "R1", "--council", "C1"],
        &["council", "report", "--run", "R1", "--council", "C1"],
    ];
    let runs = inbox.iter().map(|a| (p.inbox(), a)).chain(orch.iter().map(|a| (p.orch(), a)));
    for (program, args) in runs {
        let v = program.args(*args).json_flag().run().code(40).json();
        assert_eq!(v["error"]["code"], "not_found", "{args:?}: {v}");
        let command = v["command"].as_str().unwrap_or_default();
        assert!(!command.is_empty() && args.join(" ").starts_with(command), "the name clap matched: {v}");
    }
    assert!(!p.path().join(".agents").exists(), "nothing created");
}

#[test]
fn autostart_says_so_in_one_line_on_stderr_but_not_under_json() {
    let p = Project::new();
    let out = p.inbox().args(["init"]).run().ok();
    let lines: Vec<&str> = out.stderr.lines().filter(|l| l.contains("started the daemon")).collect();
    assert_eq!(lines.len(), 1, "{}", out.stderr);
    assert!(lines[0].contains(&p.path().display().to_string()) && lines[0].contains("pid"), "{}", lines[0]);
    let again = p.inbox().args(["list"]).run().ok();
    assert!(!again.stderr.contains("started"), "only when it starts one: {}", again.stderr);
    let q = Project::new();
    let quiet = q.inbox().args(["init", "--json"]).run().ok();
    assert!(quiet.stderr.is_empty(), "{}", quiet.stderr);
}

#[test]
fn coordd_list_shows_the_running_daemons_and_forgets_killed_ones() {
    let p = Project::new();
    let d = p.serve();
    let pid = d.pid();
    let mine = |v: &serde_json::Value| v["daemons"].as_array().unwrap().iter().find(|x| x["pid"] == pid).cloned();
    let listed = p.coordd().args(["list", "--json"]).run().ok().json();
    let me = mine(&listed).unwrap_or_else(|| panic!("{listed}"));
    assert_eq!(me["project"], p.path().display().to_string());
    assert_eq!(me["clients"], 0);
    let text = p.coordd().args(["list"]).run().ok().stdout;
    assert!(text.contains("PROJECT") && text.contains(&pid.to_string()), "{text}");
    d.kill9();
    let after = p.coordd().args(["list", "--json"]).run().json();
    assert!(mine(&after).is_none(), "{after}");
}

/// Read the daemon's log until a line contains `what`.
fn wait_for(log: &mut impl Iterator<Item = std::io::Result<String>>, what: &str) {
    for line in log.by_ref() {
        if line.unwrap().contains(what) {
            return;
        }
    }
    panic!("the daemon's log ended before saying {what:?}");
}

#[test]
fn the_idle_timeout_spares_a_daemon_with_a_subscriber_or_a_live_lease() {
    let p = Project::new();
    let mut d = p.serve_with(&["--idle-timeout", "2"], &[]);
    let mut log = d.log();
    // A waiter keeps it running.
    let watcher = p.inbox().args(["watch", "--timeout-seconds", "600", "--no-autostart"]).spawn();
    wait_for(&mut log, "kept running");
    let sent = ok(&p, &["send", "--from", "lead", "--to", "w1", "--summary", "task"]);
    finish(watcher).ok();
    // A live lease keeps it running too.
    let thr = thread_id(&sent);
    ok(&p, &["claim", "--agent", "w1", "--thread", &thr, "--lease-seconds", "600"]);
    wait_for(&mut log, "live_lease=true");
    ok(&p, &["done", "--agent", "w1", "--thread", &thr, "--summary", "ok"]);
    // Nothing left: it stops by itself.
    wait_for(&mut log, "idle timeout: no calls");
    wait_for(&mut log, "coordd stopped");
    assert!(d.wait().success());
    let st = p.coordd().args(["status", "--json"]).run().code(3).json();
    assert_eq!(st["running"], false);
}
