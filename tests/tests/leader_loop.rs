//! The leader loop of docs/orch.md §6.1, run exactly as the document shows it (the shell
//! block after its `tested:` marker) against a real daemon: it dispatches the ready tasks,
//! tells a worker's idle notification and a stopped worker apart from other thread events
//! (issue 31 item 7: typed messages arrive as `thread.created`/`thread.done`, so a loop
//! switching on `event_type` never saw them), and ends when the run is done.
#![cfg(unix)]

use std::io::{BufRead, BufReader};
use std::sync::mpsc;
use std::time::Duration;

use coord_tests::{Project, claude_hook, have, ok_as};

/// Only matters when something is broken: each step of the loop takes well under it.
const LIMIT: Duration = Duration::from_secs(120);

/// The shell block after the `tested:` marker of docs/orch.md.
fn the_documented_loop() -> String {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/orch.md");
    let doc = std::fs::read_to_string(path).expect("docs/orch.md");
    let at = doc.find("<!-- tested: tests/tests/leader_loop.rs -->").expect("the loop's marker in docs/orch.md");
    let block = &doc[at..];
    let start = block.find("```sh\n").expect("a sh block after the marker") + "```sh\n".len();
    let end = start + block[start..].find("```").expect("the block's end");
    block[start..end].to_string()
}

/// The loop's output, line by line, as it prints it.
struct Output {
    lines: mpsc::Receiver<String>,
    seen: Vec<String>,
}

impl Output {
    /// Read until a line contains `needle`.
    #[track_caller]
    fn wait_for(&mut self, needle: &str) {
        loop {
            let line = self
                .lines
                .recv_timeout(LIMIT)
                .unwrap_or_else(|_| panic!("the loop never printed {needle:?}; it printed {:#?}", self.seen));
            self.seen.push(line.clone());
            if line.contains(needle) {
                return;
            }
        }
    }
}

/// The thread of `task`'s current attempt, as its worker fetches it.
fn thread_of(p: &Project, worker: &str, task: &str) -> String {
    let work = ok_as(p, worker, &["fetch"]);
    let thread = work["threads"].as_array().unwrap().iter().find(|t| t["task_id"] == task);
    thread.unwrap_or_else(|| panic!("{worker} has no thread of {task}: {work}"))["thread_id"]
        .as_str()
        .unwrap()
        .to_string()
}

#[test]
fn the_documented_leader_loop_dispatches_sees_idle_and_stopped_workers_and_ends_with_the_run() {
    if !have("jq", "the leader loop of docs/orch.md") {
        return;
    }
    let p = Project::new();
    let _d = p.serve();
    let orch = |args: &[&str]| p.orch().args(args).json_flag().run().ok().json();
    orch(&["run", "create", "--goal", "G", "--id", "R1", "--created-by", "lead"]);
    for (id, title) in [("T1", "Schema"), ("T2", "Docs")] {
        orch(&["task", "add", "--run", "R1", "--id", id, "--title", title, "--kind", "thread", "--assign-to", "w1"]);
    }

    let mut child = p.sh(&the_documented_loop()).spawn();
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });
    let mut out = Output { lines: rx, seen: Vec::new() };

    // task.ready: the loop dispatches both tasks to their --assign-to.
    out.wait_for("wait for what needs you");
    let (t1, t2) = (thread_of(&p, "w1", "T1"), thread_of(&p, "w1", "T2"));
    ok_as(&p, "w1", &["claim", "--thread", &t1]);
    ok_as(&p, "w1", &["claim", "--thread", &t2]);
    ok_as(&p, "w1", &["done", "--thread", &t1, "--summary", "schema in"]);

    // idle_notification: a typed message in a `thread.created` event.
    ok_as(&p, "w1", &["idle", "--run", "R1", "--summary", "T1 is in"]);
    out.wait_for("w1 is idle");

    // shutdown_approved: a typed answer in a `thread.done` event. T2 is blocked by it.
    ok_as(&p, "lead", &["shutdown", "--to", "w1", "--run", "R1", "--task", "T2"]);
    let stop = claude_hook(&p, "w1", "T2", "post-tool-use").expect("the session of T2 is stopped");
    assert_eq!(stop["continue"], false, "{stop}");
    out.wait_for("w1 stopped (task T2)");

    // The lead gives T2 to another worker, who finishes it: run.done ends the loop.
    orch(&["reassign", "--run", "R1", "--task", "T2", "--to", "w2"]);
    let t2 = thread_of(&p, "w2", "T2");
    ok_as(&p, "w2", &["claim", "--thread", &t2]);
    ok_as(&p, "w2", &["done", "--thread", &t2, "--summary", "docs in"]);
    let status = child.wait().expect("the loop ends");
    assert!(status.success(), "the loop ended with {status}; it printed {:#?}", out.seen);
    while let Ok(line) = out.lines.recv_timeout(LIMIT) {
        out.seen.push(line);
    }
    assert_eq!(orch(&["run", "show", "--run", "R1"])["run"]["status"], "done");
}
