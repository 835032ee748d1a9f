//! `orch top` in a real terminal (tmux): the screen shows the agents, blocked questions and
//! recent events, and redraws when an event arrives (a running session's new log lines
//! included). `orch status` draws the dependency
//! tree with the agent of each attempt. Skips without tmux, but fails under `COORD_CI`.

use std::process::Command;
use std::time::{Duration, Instant};

use coord_tests::*;

#[path = "support/launch.rs"]
#[allow(dead_code, reason = "this suite uses part of what the launch suites share")]
mod support;

/// A private tmux server running one command in a 160x45 window.
struct Tmux {
    socket: String,
}

impl Tmux {
    fn start(p: &Project, cmd: &str) -> Option<Tmux> {
        if Command::new("tmux").arg("-V").output().is_err() {
            if std::env::var_os("COORD_CI").is_some() {
                panic!("tmux is not installed; CI needs it for the terminal view test (.ci/run installs it)");
            }
            eprintln!("SKIPPED: tmux is not installed; set COORD_CI=1 to make this fail");
            return None;
        }
        // One tmux server per view: the tests of this file run at once.
        static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        let socket = format!("coord-top-{}-{n}", std::process::id());
        let script = format!(
            "cd '{}' && exec env COORDD_BIN='{}' TERM=xterm-256color {}",
            p.path().display(),
            bin("coordd").display(),
            cmd
        );
        let ok = Command::new("tmux")
            .args(["-L", &socket, "-f", "/dev/null", "new-session", "-d", "-x", "160", "-y", "45", &script])
            .status()
            .unwrap();
        assert!(ok.success(), "tmux new-session failed");
        Some(Tmux { socket })
    }

    fn screen(&self) -> String {
        let out = Command::new("tmux").args(["-L", &self.socket, "capture-pane", "-p"]).output().unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Wait until the screen shows every one of `texts` (the terminal's readiness; there is
    /// no event to wait on outside the pane, so the screen is read until it does).
    #[track_caller]
    fn wait_for(&self, texts: &[&str]) -> String {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let s = self.screen();
            if texts.iter().all(|t| s.contains(t)) {
                return s;
            }
            assert!(Instant::now() < deadline, "screen never showed {texts:?}:\n{s}");
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    fn keys(&self, keys: &str) {
        Command::new("tmux").args(["-L", &self.socket, "send-keys", keys]).status().unwrap();
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = Command::new("tmux").args(["-L", &self.socket, "kill-server"]).status();
    }
}

#[test]
fn top_redraws_when_mail_and_a_question_arrive() {
    let p = Project::new();
    ok(&p, &["agent", "register", "--name", "wkr-1", "--role", "worker"]);
    let top = format!("'{}' top", bin("orch").display());
    let Some(t) = Tmux::start(&p, &top) else { return };
    t.wait_for(&["orch top", "live", "wkr-1", "nothing is blocked"]);

    ok(&p, &["send", "--from", "lead", "--to", "wkr-1", "--summary", "hello from the lead"]);
    let s = t.wait_for(&["hello from the lead", "thread.created"]);
    let row = s.lines().find(|l| l.contains("wkr-1") && !l.contains("hello")).expect("the agent's row");
    assert!(row.trim_end().trim_end_matches('│').trim_end().ends_with('1'), "one unread: {row}");

    blocked_task(&p, "wkr-1", "which database?");
    t.wait_for(&["R1/T1", "@wkr-1: which database?", "busy"]);

    t.keys("q");
}

#[test]
fn status_draws_each_task_under_its_dependency_with_the_attempts_agent() {
    let p = Project::new();
    let orch = |args: &[&str]| p.orch().args(args).json_flag().run().ok().json();
    orch(&["run", "create", "--goal", "G", "--id", "R1"]);
    orch(&[
        "task",
        "add",
        "--run",
        "R1",
        "--id",
        "A",
        "--title",
        "first root",
        "--kind",
        "thread",
        "--assign-to",
        "planned",
    ]);
    orch(&["task", "add", "--run", "R1", "--id", "C", "--title", "second root", "--kind", "thread"]);
    orch(&["task", "add", "--run", "R1", "--id", "B", "--title", "needs A", "--depends-on", "A", "--kind", "thread"]);
    orch(&["task", "add", "--run", "R1", "--id", "D", "--title", "needs C", "--depends-on", "C", "--kind", "thread"]);
    orch(&["dispatch", "--run", "R1", "--task", "A", "--to", "actual"]);

    let out = p.orch().args(["status", "--run", "R1"]).run().ok().stdout;
    let lines: Vec<&str> = out.lines().collect();
    let at =
        |id: &str| lines.iter().position(|l| l.contains(&format!(" {id}  "))).unwrap_or_else(|| panic!("{id}:\n{out}"));
    assert_eq!(at("B"), at("A") + 1, "B right under A:\n{out}");
    assert!(lines[at("B")].contains("└─"), "B is A's child:\n{out}");
    assert!(at("C") > at("B") && !lines[at("C")].contains("└─"), "C is a root, not under B:\n{out}");
    assert!(lines[at("D")].contains("└─") && at("D") == at("C") + 1, "D under C:\n{out}");
    assert!(lines[at("A")].contains("@actual") && !lines[at("A")].contains("planned"), "the attempt's agent:\n{out}");

    let v = orch(&["status", "--run", "R1"]);
    let a = v["tasks"].as_array().unwrap().iter().find(|t| t["task"]["task_id"] == "A").unwrap().clone();
    assert_eq!(a["worker"], "actual", "{a}");
    assert_eq!(a["task"]["assign_to"], "planned");
}

#[test]
fn top_follows_a_daemon_restart() {
    let p = Project::new();
    ok(&p, &["agent", "register", "--name", "wkr-2", "--role", "worker"]);
    let top = format!("'{}' top", bin("orch").display());
    let Some(t) = Tmux::start(&p, &top) else { return };
    t.wait_for(&["orch top", "live", "wkr-2"]);
    p.coordd().args(["stop"]).run().ok();
    // The send starts a new daemon; the view's stream and reads reconnect to it.
    ok(&p, &["send", "--from", "lead", "--to", "wkr-2", "--summary", "after the restart"]);
    let s = t.wait_for(&["after the restart", "live"]);
    assert!(!s.contains("disconnected") && !s.contains("coordd: started"), "{s}");
    let row = s.lines().find(|l| l.contains("wkr-2") && !l.contains("after")).expect("the agent's row");
    assert!(row.trim_end().trim_end_matches('│').trim_end().ends_with('1'), "one unread, read again: {row}");
    t.keys("q");
}

#[test]
fn top_shows_a_launched_session_when_it_starts() {
    let p = Project::new();
    p.orch().json_flag().args(["run", "create", "--goal", "g", "--id", "R1"]).run().ok();
    p.orch()
        .json_flag()
        .args(["task", "add", "--run", "R1", "--id", "T1", "--title", "T1", "--kind", "thread", "--assign-to", "w1"])
        .run()
        .ok();
    let d = p.orch().json_flag().args(["dispatch", "--run", "R1", "--all-ready"]).run().ok().json();
    let thread = d["dispatches"][0]["thread_id"].as_str().expect("a dispatched thread").to_string();
    let top = format!("'{}' top", bin("orch").display());
    let Some(t) = Tmux::start(&p, &top) else { return };
    t.wait_for(&["orch top", "no launched sessions"]);
    // A launcher records its session through the public method, as coord-launch does.
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        use coord_proto::api::LaunchApiClient;
        let start = serde_json::json!({"run_id": "R1", "task_id": "T1", "thread_id": thread, "client": "command",
            "pid": 424242, "launcher": "a-test", "cwd": "/tmp", "log_path": "/tmp/none.log"});
        p.client().await.session_start(serde_json::from_value(start).unwrap()).await.expect("session recorded");
    });
    t.wait_for(&["R1/T1 a1 command one_shot @w1 pid 424242"]);
}

#[test]
fn top_shows_a_running_sessions_new_line_as_it_comes() {
    let p = Project::new();
    support::thread_run(&p, &[], &["T1"]);
    let gate = support::gate(&p);
    // Up, then silent until the test opens the gate; then one more line, and no event of
    // its own after it: it waits on a FIFO of its own (reopening the gate could meet the
    // test's write end still open, read its end of file and end the session).
    let hold = p.path().join("hold");
    assert!(std::process::Command::new("mkfifo").arg(&hold).status().unwrap().success());
    let script = format!(
        "IFS= read -r first; {}; read go < '{}'; echo 'now migrating the schema'; read go < '{}'",
        support::UP,
        gate.display(),
        hold.display()
    );
    let top = format!("'{}' top", bin("orch").display());
    let Some(t) = Tmux::start(&p, &top) else { return };
    t.wait_for(&["orch top", "no launched sessions"]);
    let mut bridge = support::bridge(&p, &script, &["--dispatch", "--live"]);
    t.wait_for(&["R1/T1 a1 command live @w1", "thread.progress"]);
    std::fs::write(&gate, "go\n").unwrap();
    let s = t.wait_for(&["now migrating the schema"]);
    let row = s.lines().find(|l| l.contains("now migrating the schema")).unwrap();
    assert!(row.contains("R1/T1 a1 command live @w1") && row.contains("running"), "in the session's row: {s}");
    t.keys("q");
    let rt = tokio::runtime::Runtime::new().unwrap();
    let session = rt.block_on(async { support::sessions(&p.client().await).await.remove(0) });
    support::kill_group(session.pid);
    bridge.kill().unwrap();
    bridge.wait().unwrap();
}
