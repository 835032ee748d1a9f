//! The merge queue (issue 36): every merge of a run with a verify command is verified on the
//! merge result by `orch merge-queue` before the integration branch moves to exactly that
//! commit; a failed verify or a conflict sends the task back to its worker with the
//! output or the files; a tip that moved meanwhile means verifying again; a task that
//! keeps failing stops after the run's merge retries; cancelling the run stops a running
//! verify. Workers are `coord-launch` sessions of the `command` client, or driven by hand.
//! Every wait is on an event, a process's end or a fifo.

use std::path::{Path, PathBuf};

use coord_client::Client;
use coord_proto::types::*;
use coord_tests::{Project, finish, git_in, git_project, next_run_event, pid_alive};
use serde_json::Value;

fn orch(p: &Project, args: &[&str]) -> Value {
    p.orch().json_flag().args(args).run().ok().json()
}

/// An executable script outside the repository's tracked files.
fn script(p: &Project, name: &str, body: &str) -> PathBuf {
    let path = p.write(name, &format!("#!/bin/sh\n{body}"));
    std::fs::set_permissions(&path, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    path
}

/// The verify command of these tests: no `*.txt` holds BROKEN or a conflict marker.
fn verify_script(p: &Project) -> PathBuf {
    script(
        p,
        "verify.sh",
        "bad=0\nfor f in *.txt; do [ -f \"$f\" ] || continue\n\
         if grep -q BROKEN \"$f\"; then echo \"BROKEN in $f\"; bad=1; fi\n\
         if grep -q '^<<<<<<<' \"$f\"; then echo \"conflict markers in $f\"; bad=1; fi\ndone\nexit $bad\n",
    )
}

/// Run `verify` on every commit the integration branch ever held (its reflog).
fn every_tip_passes(p: &Project, verify: &Path) -> usize {
    let tips = git_in(p.path(), &["reflog", "--format=%H", "orch/R1/integration"]);
    let check = p.path().join(".agents/check");
    for tip in tips.lines() {
        let _ = std::fs::remove_dir_all(&check);
        std::fs::create_dir_all(&check).unwrap();
        let archive = std::process::Command::new("sh")
            .arg("-c")
            .arg(format!("git archive {tip} | tar -x -C {}", check.display()))
            .current_dir(p.path())
            .status()
            .unwrap();
        assert!(archive.success());
        let ran = std::process::Command::new(verify).current_dir(&check).output().unwrap();
        assert!(
            ran.status.success(),
            "the integration branch held {tip}, which fails: {}",
            String::from_utf8_lossy(&ran.stdout)
        );
    }
    tips.lines().count()
}

/// The first message (the body) of a task's attempt's thread.
fn thread_body(p: &Project, task: &str, attempt: usize) -> String {
    let t = orch(p, &["task", "show", "--run", "R1", "--task", task]);
    let thread = t["attempts"][attempt - 1]["thread_id"].as_str().unwrap().to_string();
    let shown = p.inbox().json_flag().args(["show", "--thread", &thread]).run().ok().json();
    shown["messages"][0]["body"].as_str().unwrap_or_default().to_string()
}

/// The worker every session runs: T1 writes shared.txt; T2 commits BROKEN, then, sent
/// back, reads the output in its thread and fixes it; T3 writes shared.txt too, waits (a
/// question) until the test says T1 landed, and, sent back with the conflict, merges the
/// integration branch and resolves it.
const WORKER: &str = r#"set -e
A="$COORD_AGENT"; T="$COORD_THREAD"
inbox claim --agent "$A" --thread "$T" >/dev/null
commit() { git add -A && git -c user.email=w@e -c user.name=w commit -q -m "$1"; }
case "$COORD_TASK:$COORD_ATTEMPT" in
  T1:1) echo "from T1" > shared.txt; commit T1 ;;
  T2:1) echo BROKEN > T2.txt; commit "T2, broken" ;;
  T2:*) inbox show --thread "$T" | grep -q "BROKEN in T2.txt"; echo fixed > T2.txt; commit "T2, fixed" ;;
  T3:1) echo "from T3" > shared.txt; commit T3
        after=$(inbox --json update --agent "$A" --thread "$T" --status blocked --summary "waiting for T1" \
                | python3 -c 'import json,sys; print(json.load(sys.stdin)["event_id"])')
        inbox wait-reply --agent "$A" --thread "$T" --after-event "$after" >/dev/null ;;
  T3:*) inbox show --thread "$T" | grep -q "shared.txt"
        git -c user.email=w@e -c user.name=w merge -q orch/R1/integration >/dev/null 2>&1 || true
        echo "from T1 and T3" > shared.txt; git add shared.txt
        git -c user.email=w@e -c user.name=w commit -q --no-edit ;;
esac
inbox done --agent "$A" --thread "$T" --summary done >/dev/null
"#;

#[test]
fn a_failed_verify_and_a_conflict_go_back_to_their_workers_and_nothing_broken_lands() {
    let p = git_project();
    let verify = verify_script(&p);
    let worker = script(&p, "worker.sh", WORKER);
    let v = verify.display().to_string();
    orch(&p, &["run", "create", "--goal", "g", "--id", "R1", "--auto-merge", "--verify", &v]);
    for (t, w) in [("T1", "w1"), ("T2", "w2"), ("T3", "w3")] {
        orch(&p, &["task", "add", "--run", "R1", "--id", t, "--title", t, "--assign-to", w]);
    }
    let queue = p.orch().args(["merge-queue", "--run", "R1", "--until-done"]).spawn();
    let w = worker.display().to_string();
    let bridge = p.launch().args(["--run", "R1", "--command", &w, "--dispatch", "--until-done"]).spawn();
    // T3 lands after T1 (so it conflicts with it): answer T3's question once T1 merged.
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let c = p.client().await;
        let (mut merged, mut asked, mut after) = (false, false, 0);
        while !(merged && asked) {
            let ev = next_run_event(&c, "R1", after, &[EventType::TaskMerged, EventType::TaskBlocked]).await;
            after = ev.event_id;
            merged |= ev.event_type == EventType::TaskMerged && ev.task_id == "T1";
            asked |= ev.event_type == EventType::TaskBlocked && ev.task_id == "T3";
        }
    });
    orch(&p, &["answer", "--run", "R1", "--task", "T3", "--summary", "T1 landed: finish"]);
    let out = finish(bridge);
    assert_eq!(out.code, 0, "the run is done: {}", out.stderr);
    let out = finish(queue);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stdout.contains("T2: failed (exit 1)"), "{}", out.stdout);
    // T2 went back once with the command's output; T3 once with the conflicting file.
    let t2 = orch(&p, &["task", "show", "--run", "R1", "--task", "T2"]);
    assert_eq!(t2["attempts"].as_array().unwrap().len(), 2, "{t2}");
    assert!(thread_body(&p, "T2", 2).contains("BROKEN in T2.txt"), "{}", thread_body(&p, "T2", 2));
    let t3 = orch(&p, &["task", "show", "--run", "R1", "--task", "T3"]);
    assert_eq!(t3["attempts"].as_array().unwrap().len(), 2, "{t3}");
    assert!(thread_body(&p, "T3", 2).contains("- shared.txt"), "{}", thread_body(&p, "T3", 2));
    for t in ["T1", "T2", "T3"] {
        assert_eq!(orch(&p, &["task", "show", "--run", "R1", "--task", t])["task"]["merge_state"], "merged");
    }
    // Every commit the integration branch held passes the verify command.
    assert!(every_tip_passes(&p, &verify) >= 4);
    let shared = git_in(p.path(), &["show", "orch/R1/integration:shared.txt"]);
    assert_eq!(shared, "from T1 and T3\n");
}

/// Dispatch `id`; its worker claims it, writes `file`, commits and finishes.
fn work(p: &Project, id: &str, file: &str, text: &str) {
    let d = orch(p, &["dispatch", "--run", "R1", "--task", id]);
    finish_attempt(p, &d["dispatches"][0], file, text);
}

/// The worker of dispatch `d` claims it, writes `file`, commits and finishes.
fn finish_attempt(p: &Project, d: &Value, file: &str, text: &str) {
    let (wt, thread, worker) = (
        PathBuf::from(d["worktree_path"].as_str().unwrap()),
        d["thread_id"].as_str().unwrap().to_string(),
        d["assigned_to"].as_str().unwrap().to_string(),
    );
    p.inbox().args(["claim", "--agent", &worker, "--thread", &thread]).run().ok();
    std::fs::write(wt.join(file), text).unwrap();
    git_in(&wt, &["add", "-A"]);
    git_in(&wt, &["-c", "user.email=w@e", "-c", "user.name=w", "commit", "-q", "-m", file]);
    p.inbox().args(["done", "--agent", &worker, "--thread", &thread, "--summary", "done"]).run().ok();
}

async fn event_of(c: &Client, after: i64, t: EventType) -> Event {
    next_run_event(c, "R1", after, &[t]).await
}

/// A verify whose first run waits at the fifo `gate` until the test writes a line; later
/// runs pass at once.
fn gated_verify(p: &Project) -> (PathBuf, PathBuf) {
    let gate = p.path().join("gate");
    assert!(std::process::Command::new("mkfifo").arg(&gate).status().unwrap().success());
    let body = format!("if [ ! -e {g}.seen ]; then touch {g}.seen; read x < {g}; fi\nexit 0\n", g = gate.display());
    (gate, script(p, "verify.sh", &body))
}

#[test]
fn a_candidate_is_verified_again_when_the_integration_tip_moved_meanwhile() {
    let p = git_project();
    let (gate, verify) = gated_verify(&p);
    orch(
        &p,
        &["run", "create", "--goal", "g", "--id", "R1", "--auto-merge", "--verify", &verify.display().to_string()],
    );
    orch(&p, &["task", "add", "--run", "R1", "--id", "T1", "--title", "T1", "--assign-to", "w1"]);
    let queue = p.orch().args(["merge-queue", "--run", "R1"]).spawn();
    work(&p, "T1", "one.txt", "1\n");
    let rt = tokio::runtime::Runtime::new().unwrap();
    let c = rt.block_on(p.client());
    let verifying = rt.block_on(event_of(&c, 0, EventType::TaskVerifying));
    // Someone moves the integration branch while T1 is verified.
    let rev = |r: &str| git_in(p.path(), &["rev-parse", r]).trim().to_string();
    let tip = rev("orch/R1/integration");
    let outside = git_in(p.path(), &["commit-tree", &format!("{tip}^{{tree}}"), "-p", &tip, "-m", "outside"]);
    let outside = outside.trim();
    git_in(p.path(), &["update-ref", "refs/heads/orch/R1/integration", outside, &tip]);
    std::fs::write(&gate, "go\n").unwrap();
    let again = rt.block_on(event_of(&c, verifying.event_id, EventType::TaskMergeQueued));
    assert_eq!(again.payload_json["requeued"], true, "{again:?}");
    let merged = rt.block_on(event_of(&c, again.event_id, EventType::TaskMerged));
    let status = orch(&p, &["status", "--run", "R1"]);
    let cand = &status["tasks"][0]["candidate"];
    assert_eq!((cand["state"].clone(), cand["verifications"].clone()), ("merged".into(), 2.into()), "{status}");
    assert_eq!(cand["tip"], outside, "verified again on the new tip");
    assert_eq!(rev("orch/R1/integration"), merged.payload_json["commit"].as_str().unwrap());
    assert_eq!(rev("orch/R1/integration^1"), outside, "on top of the outside commit");
    orch(&p, &["cancel", "--run", "R1", "--reason", "done here"]);
    assert_eq!(finish(queue).code, 0);
}

#[test]
fn a_task_that_keeps_failing_stops_after_the_runs_merge_retries_with_the_reason() {
    let p = git_project();
    let verify = script(&p, "verify.sh", "echo 'tests: 1 failed'\nexit 3\n");
    let v = verify.display().to_string();
    orch(&p, &["run", "create", "--goal", "g", "--id", "R1", "--auto-merge", "--verify", &v, "--merge-retries", "1"]);
    orch(&p, &["task", "add", "--run", "R1", "--id", "T1", "--title", "T1", "--assign-to", "w1"]);
    let queue = p.orch().args(["merge-queue", "--run", "R1"]).spawn();
    let cursor = orch(&p, &["dispatch", "--run", "R1", "--task", "T1"])["event_id"].to_string();
    let t = orch(&p, &["task", "show", "--run", "R1", "--task", "T1"]);
    let first = serde_json::json!({"worktree_path": t["attempts"][0]["worktree_path"], "thread_id": t["attempts"][0]["thread_id"], "assigned_to": "w1"});
    finish_attempt(&p, &first, "a.txt", "a\n");
    // The lead's wait wakes on the failed verify, with the output; the task went back.
    let mut after = cursor;
    let failed = loop {
        let w = p.orch().args(["--json", "wait", "--run", "R1", "--after-event", &after]).run().ok().json();
        if w["event"]["event_type"] == "task.verify_failed" {
            break w["event"].clone();
        }
        after = w["next_event_id"].to_string();
    };
    assert!(failed["payload_json"]["output"].as_str().unwrap().contains("tests: 1 failed"), "{failed}");
    assert_eq!(failed["payload_json"]["returned"]["attempt"], 2, "{failed}");
    let t = orch(&p, &["task", "show", "--run", "R1", "--task", "T1"]);
    assert_eq!(t["task"]["status"], "dispatched");
    let second = serde_json::json!({"worktree_path": t["attempts"][1]["worktree_path"], "thread_id": t["attempts"][1]["thread_id"], "assigned_to": "w1"});
    // The new worktree continues from the first attempt's work.
    assert!(PathBuf::from(second["worktree_path"].as_str().unwrap()).join("a.txt").exists());
    finish_attempt(&p, &second, "b.txt", "b\n");
    // The second failure is past the budget: the task fails, saying why.
    let after = failed["event_id"].to_string();
    let mut after = after;
    let fail = loop {
        let w = p.orch().args(["--json", "wait", "--run", "R1", "--after-event", &after]).run().ok().json();
        if w["event"]["event_type"] == "task.failed" {
            break w["event"].clone();
        }
        after = w["next_event_id"].to_string();
    };
    assert_eq!(fail["payload_json"]["merge"]["cause"], "verify_failed", "{fail}");
    assert!(fail["summary"].as_str().unwrap().contains("merge_retries"), "{fail}");
    assert_eq!(orch(&p, &["run", "show", "--run", "R1"])["run"]["status"], "failed");
    // orch reconcile does not undo it, and nothing landed.
    orch(&p, &["reconcile", "--run", "R1"]);
    assert_eq!(orch(&p, &["task", "show", "--run", "R1", "--task", "T1"])["task"]["status"], "failed");
    assert_eq!(git_in(p.path(), &["rev-parse", "orch/R1/integration"]), git_in(p.path(), &["rev-parse", "main"]));
    orch(&p, &["cancel", "--run", "R1", "--reason", "done here"]);
    assert_eq!(finish(queue).code, 0);
}

#[test]
fn cancelling_the_run_stops_a_running_verify_with_its_whole_process_group() {
    let p = git_project();
    let (pidfile, ready) = (p.path().join("verify.pid"), p.path().join("ready"));
    assert!(std::process::Command::new("mkfifo").arg(&ready).status().unwrap().success());
    // The verify starts a child in its group and says so through the fifo, then waits.
    let verify = script(
        &p,
        "verify.sh",
        &format!("sleep 1000 &\necho $! > {}\necho up > {}\nwait\n", pidfile.display(), ready.display()),
    );
    orch(
        &p,
        &["run", "create", "--goal", "g", "--id", "R1", "--auto-merge", "--verify", &verify.display().to_string()],
    );
    orch(&p, &["task", "add", "--run", "R1", "--id", "T1", "--title", "T1", "--assign-to", "w1"]);
    let queue = p.orch().args(["merge-queue", "--run", "R1", "--grace-seconds", "2"]).spawn();
    work(&p, "T1", "a.txt", "a\n");
    assert_eq!(std::fs::read_to_string(&ready).unwrap(), "up\n");
    let child: i64 = std::fs::read_to_string(&pidfile).unwrap().trim().parse().unwrap();
    assert!(pid_alive(child));
    orch(&p, &["cancel", "--run", "R1", "--reason", "stop"]);
    let out = finish(queue);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stdout.contains("cancelled"), "{}", out.stdout);
    assert!(!pid_alive(child), "the verify's child was stopped with its group");
    assert_eq!(git_in(p.path(), &["rev-parse", "orch/R1/integration"]), git_in(p.path(), &["rev-parse", "main"]));
}

#[test]
fn the_bridge_with_merge_queue_runs_the_verifier_and_ends_once_it_merged() {
    let p = git_project();
    let verify = verify_script(&p);
    let worker = script(&p, "worker.sh", WORKER);
    orch(
        &p,
        &["run", "create", "--goal", "g", "--id", "R1", "--auto-merge", "--verify", &verify.display().to_string()],
    );
    orch(&p, &["task", "add", "--run", "R1", "--id", "T1", "--title", "T1", "--assign-to", "w1"]);
    let w = worker.display().to_string();
    let args = ["--run", "R1", "--command", &w, "--dispatch", "--until-done", "--merge-queue"];
    let out = finish(p.launch().args(args).spawn());
    assert_eq!(out.code, 0, "{}", out.stderr);
    // The bridge's verifier verified T1 and merged it before the bridge ended.
    assert_eq!(orch(&p, &["task", "show", "--run", "R1", "--task", "T1"])["task"]["merge_state"], "merged");
    let log = std::fs::read_to_string(p.path().join(".agents/merge-queue/R1/verifier.log")).unwrap();
    assert!(log.contains("T1: passed") && log.contains("stopped (the run is done)"), "{log}");
}

#[test]
fn ctrl_c_stops_a_verifier_that_waits_for_work_after_a_verify() {
    let p = git_project();
    let verify = verify_script(&p);
    orch(
        &p,
        &["run", "create", "--goal", "g", "--id", "R1", "--auto-merge", "--verify", &verify.display().to_string()],
    );
    // T2, never done, keeps the run open: the verifier waits for work once T1 merged.
    for t in ["T1", "T2"] {
        orch(&p, &["task", "add", "--run", "R1", "--id", t, "--title", t, "--assign-to", "w1"]);
    }
    let queue = p.orch().args(["merge-queue", "--run", "R1"]).spawn();
    work(&p, "T1", "a.txt", "a\n");
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async { next_run_event(&p.client().await, "R1", 0, &[EventType::TaskMerged]).await });
    let sent = std::process::Command::new("kill").args(["-INT", &queue.id().to_string()]).status().unwrap();
    assert!(sent.success());
    let out = finish(queue);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stdout.contains("stopped (interrupted) after 1 verification"), "{}", out.stdout);
}

#[test]
fn the_verify_command_does_not_get_the_verifiers_agent_secret() {
    let p = git_project();
    let secret = coord_tests::register(&p, "leader");
    let verify =
        script(&p, "verify.sh", "if [ -n \"$COORD_AGENT_SECRET\" ]; then echo 'the secret leaked'; exit 1; fi\n");
    orch(
        &p,
        &["run", "create", "--goal", "g", "--id", "R1", "--auto-merge", "--verify", &verify.display().to_string()],
    );
    orch(&p, &["task", "add", "--run", "R1", "--id", "T1", "--title", "T1", "--assign-to", "w1"]);
    // The lead's verifier, authenticated with its secret; the verify runs T1's code.
    let queue = p.orch().args(["merge-queue", "--run", "R1", "--until-done"]).env(AGENT_SECRET_ENV, &secret).spawn();
    work(&p, "T1", "a.txt", "a\n");
    let rt = tokio::runtime::Runtime::new().unwrap();
    let types = [EventType::TaskMerged, EventType::TaskVerifyFailed];
    let ev = rt.block_on(async { next_run_event(&p.client().await, "R1", 0, &types).await });
    assert_eq!(ev.event_type, EventType::TaskMerged, "{}", ev.payload_json);
    let out = finish(queue);
    assert_eq!(out.code, 0, "{}", out.stderr);
}

#[test]
fn orch_status_shows_the_verify_command_and_the_queue_in_order() {
    let p = git_project();
    let (gate, verify) = gated_verify(&p);
    let v = verify.display().to_string();
    orch(&p, &["run", "create", "--goal", "g", "--id", "R1", "--auto-merge", "--verify", &v]);
    for t in ["T1", "T2", "T3"] {
        orch(&p, &["task", "add", "--run", "R1", "--id", t, "--title", t, "--assign-to", "w1"]);
    }
    let queue = p.orch().args(["merge-queue", "--run", "R1", "--until-done"]).spawn();
    let rt = tokio::runtime::Runtime::new().unwrap();
    let c = rt.block_on(p.client());
    work(&p, "T1", "one.txt", "1\n");
    let verifying = rt.block_on(event_of(&c, 0, EventType::TaskVerifying));
    work(&p, "T2", "two.txt", "2\n");
    let mut after = verifying.event_id;
    for t in ["T2", "T3"] {
        if t == "T3" {
            work(&p, "T3", "three.txt", "3\n");
        }
        let ev = rt.block_on(event_of(&c, after, EventType::TaskMergeQueued));
        assert_eq!(ev.task_id, t, "{ev:?}");
        after = ev.event_id;
    }
    let status = orch(&p, &["status", "--run", "R1"]);
    assert_eq!(status["run"]["verify"], v.as_str(), "{status}");
    let at = |i: usize| {
        let cand = &status["tasks"][i]["candidate"];
        (cand["task_id"].as_str().unwrap_or_default().to_string(), cand["state"].clone(), cand["position"].clone())
    };
    assert_eq!(at(0), ("T1".into(), "verifying".into(), 1.into()), "{status}");
    assert_eq!(at(1), ("T2".into(), "queued".into(), 2.into()), "{status}");
    assert_eq!(at(2), ("T3".into(), "queued".into(), 3.into()), "{status}");
    let text = p.orch().args(["status", "--run", "R1"]).run().ok().stdout;
    assert!(text.contains(&format!("verify: {v}")), "{text}");
    assert!(text.contains("merge queue: 1. T1 verifying, 2. T2 queued, 3. T3 queued"), "{text}");
    std::fs::write(&gate, "go\n").unwrap();
    let out = finish(queue);
    assert_eq!(out.code, 0, "{}", out.stderr);
    for t in ["T1", "T2", "T3"] {
        assert_eq!(orch(&p, &["task", "show", "--run", "R1", "--task", t])["task"]["merge_state"], "merged");
    }
}

#[test]
fn a_verify_past_its_timeout_is_stopped_and_its_task_goes_back_saying_so() {
    let p = git_project();
    // The verify never ends by itself: it waits on a fifo nobody writes.
    let never = p.path().join("never");
    assert!(std::process::Command::new("mkfifo").arg(&never).status().unwrap().success());
    let verify = script(&p, "verify.sh", &format!("echo checking\nread x < {}\n", never.display()));
    let v = verify.display().to_string();
    orch(&p, &["run", "create", "--goal", "g", "--id", "R1", "--auto-merge", "--verify", &v]);
    orch(&p, &["task", "add", "--run", "R1", "--id", "T1", "--title", "T1", "--assign-to", "w1"]);
    let args = ["merge-queue", "--run", "R1", "--timeout-seconds", "1", "--grace-seconds", "1"];
    let queue = p.orch().args(args).spawn();
    work(&p, "T1", "a.txt", "a\n");
    let rt = tokio::runtime::Runtime::new().unwrap();
    let failed = rt.block_on(async { event_of(&p.client().await, 0, EventType::TaskVerifyFailed).await });
    assert_eq!(failed.payload_json["timed_out"], true, "{}", failed.payload_json);
    assert!(failed.summary.contains("timed out"), "{}", failed.summary);
    assert!(failed.payload_json["output"].as_str().unwrap_or_default().contains("checking"), "{}", failed.payload_json);
    assert!(thread_body(&p, "T1", 2).contains("it timed out"), "{}", thread_body(&p, "T1", 2));
    // The verify's log is kept under .agents/.
    let log = failed.payload_json["log_path"].as_str().unwrap().to_string();
    assert!(log.contains(".agents/merge-queue/R1/logs/"), "{log}");
    assert!(std::fs::read_to_string(&log).unwrap().contains("checking"), "{log}");
    assert_eq!(git_in(p.path(), &["rev-parse", "orch/R1/integration"]), git_in(p.path(), &["rev-parse", "main"]));
    orch(&p, &["cancel", "--run", "R1", "--reason", "done here"]);
    assert_eq!(finish(queue).code, 0);
}
