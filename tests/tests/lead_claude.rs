//! `coord-launch --lead claude` with the real Claude Code (pinned, `agent_cli`) as the lead,
//! against a scripted model server (`coord_tests::mock_model`), and scripted workers (the
//! `command` client): the lead plans two tasks with a dependency through `orch mcp`,
//! dispatches, gets the worker's question pushed into its session as a user turn (no
//! polling in the scenario: the model's script only orders its replies after the events
//! they need, with `orch wait`, a subscription), answers it, dispatches the second task
//! when it is ready, calls finish_run once the run is done (a run of thread tasks has no
//! branch to merge: the tool says so), and `coord-launch` exits 0. And a Claude Code lead
//! killed mid-run is started again with the run's state and carries the run to done.

#[path = "support/launch.rs"]
#[allow(dead_code, reason = "the launch suites use the rest")]
mod support;

use std::time::Duration;

use coord_proto::types::EventType;
use coord_tests::mock_model::anthropic::{Anthropic, claude_env, tool_results};
use coord_tests::mock_model::routes::Route;
use coord_tests::mock_model::{MockModel, Scenario, Turn, text, tool};
use coord_tests::{Project, agent_cli, bin, finish, finish_within};
use serde_json::json;
use support::{gate, kill_group_if_running, next_event, said, within};

/// The scripted worker (live): T1 asks and waits for the answer on its feed; T2 just works.
const WORKER: &str = r#"IFS= read -r first
inbox claim --agent "$COORD_AGENT" --thread "$COORD_THREAD" >/dev/null
if [ "$COORD_TASK" = T1 ]; then
  inbox update --agent "$COORD_AGENT" --thread "$COORD_THREAD" --status blocked --summary 'Which db?' >/dev/null
  while IFS= read -r line; do case "$line" in *'"kind":"answer"'*) break ;; esac; done
fi
inbox done --agent "$COORD_AGENT" --thread "$COORD_THREAD" --summary finished >/dev/null
while IFS= read -r line; do :; done"#;

/// A shell line that returns once run R1 has had an actionable event holding every one of
/// `needles` (`orch wait`: a subscription, one event at a time).
fn after(p: &Project, needles: &[&str]) -> String {
    let tests: String = needles.iter().map(|n| format!(" && case \"$v\" in *'{n}'*) true;; *) false;; esac")).collect();
    format!(
        "c=0; while :; do v=$({orch} --db {db} wait --run R1 --after-event $c --timeout-seconds 250 --json) || exit 1; \
         true{tests} && break; c=$(printf '%s' \"$v\" | sed 's/.*\"next_event_id\":\\([0-9]*\\).*/\\1/'); done",
        orch = bin("orch").display(),
        db = p.paths().db.display(),
    )
}

/// A project whose lead agent runs the real Claude Code (`None`: it is not installed, and
/// outside CI the test is skipped).
fn project_with_a_claude_lead() -> Option<Project> {
    let claude = agent_cli("claude")?;
    let p = Project::new();
    std::fs::create_dir_all(p.path().join(".agents")).unwrap();
    std::fs::write(
        p.path().join(".agents/launch.toml"),
        format!("[agents.lead]\nprogram = {:?}\n", claude.display().to_string()),
    )
    .unwrap();
    Some(p)
}

#[test]
fn claude_leads_plans_with_a_dependency_answers_the_pushed_question_and_finishes_the_run() {
    let Some(p) = project_with_a_claude_lead() else { return };
    let t1 = json!({"task_id": "T1", "title": "Schema", "kind": "thread", "assign_to": "w1",
                    "acceptance": "the schema is chosen"});
    let t2 = json!({"task_id": "T2", "title": "Login", "kind": "thread", "assign_to": "w2", "depends_on": ["T1"]});
    let turns = vec![
        Turn::reply(vec![tool("mcp__orch__add_task", t1)]),
        Turn::reply(vec![tool("mcp__orch__add_task", t2)]),
        Turn::reply(vec![tool("mcp__orch__dispatch", json!({}))]),
        Turn::reply(vec![text("Planned and dispatched; waiting.")]),
        Turn::reply(vec![tool("mcp__orch__answer", json!({"task_id": "T1", "summary": "Use SQLite"}))])
            .before(&after(&p, &["\"event_type\":\"task.blocked\""])),
        Turn::reply(vec![tool("mcp__orch__dispatch", json!({"task_id": "T2"}))])
            .before(&after(&p, &["\"event_type\":\"task.ready\"", "\"task_id\":\"T2\""])),
        Turn::reply(vec![tool("mcp__orch__finish_run", json!({}))])
            .before(&after(&p, &["\"event_type\":\"run.done\""])),
        Turn::reply(vec![text("The run is finished.")]),
    ];
    let mock = MockModel::start(Anthropic, Scenario::new(turns).cwd(p.path()));
    let config = tempfile::tempdir().unwrap();
    let mut l = p.launch().args(lead_flags(WORKER));
    for (k, v) in claude_env(&mock, config.path()) {
        l = l.env(&k, &v);
    }
    let out = finish(l.spawn());
    assert_eq!(out.code, 0, "{}\n{}\n{}", out.stdout, out.stderr, mock.transcript());

    // The plan went through orch mcp: T2 after T1, both done.
    let view = p.orch().json_flag().args(["run", "show", "--run", "R1"]).run().ok().json();
    assert_eq!(view["run"]["status"], "done", "{view}");
    let tasks = view["tasks"].as_array().unwrap();
    assert_eq!(tasks[1]["depends_on"], json!(["T1"]), "{view}");
    assert!(tasks.iter().all(|t| t["status"] == "done"), "{view}");

    // The question reached the lead's session as a user turn, pushed by the bridge.
    let pushed = mock.requests().into_iter().any(|r| {
        r.user_input.iter().any(|u| u.contains("[attention] task.blocked T1") && u.contains("question: Which db?"))
    });
    assert!(pushed, "{}", mock.transcript());
    // The answer went to T1's worker through orch mcp.
    let results: Vec<String> = mock.turn_requests().iter().flat_map(|r| tool_results(&r.body)).collect();
    assert!(results.iter().any(|r| r.contains("\"to\":\"w1\"")), "{results:?}");
}

/// The lead's flags, with the scripted workers (`command`, live) of `worker`.
fn lead_flags(worker: &str) -> [&str; 11] {
    ["--lead", "claude", "--goal", "Ship login", "--run", "R1", "--command", worker, "--live", "--grace-seconds", "60"]
}

/// A Claude Code lead killed mid-run (its whole process group, `orch mcp` with it) is
/// started again: its new session's prompt says it was restarted and where the run stands,
/// the worker it dispatched goes on, and the restarted lead finishes the run.
#[test]
fn a_killed_claude_code_lead_is_restarted_with_the_runs_state_and_finishes_the_run() {
    let Some(p) = project_with_a_claude_lead() else { return };
    let gate = gate(&p);
    // The worker claims T1, then waits for the test before it is done.
    let worker = format!(
        "IFS= read -r first; inbox claim --agent \"$COORD_AGENT\" --thread \"$COORD_THREAD\" >/dev/null; \
         read go < '{}'; inbox done --agent \"$COORD_AGENT\" --thread \"$COORD_THREAD\" --summary finished >/dev/null; \
         while IFS= read -r line; do :; done",
        gate.display()
    );
    let t1 = json!({"task_id": "T1", "title": "Schema", "kind": "thread", "assign_to": "w1"});
    // Each session is a conversation of its own: the restarted one plays its own script.
    let first = Scenario::new(vec![
        Turn::reply(vec![tool("mcp__orch__add_task", t1)]),
        Turn::reply(vec![tool("mcp__orch__dispatch", json!({}))]),
        Turn::reply(vec![text("Planned and dispatched; waiting.")]),
    ]);
    let restarted = Scenario::new(vec![
        Turn::reply(vec![text("Back; T1 is with its worker.")]),
        Turn::reply(vec![tool("mcp__orch__finish_run", json!({}))])
            .before(&after(&p, &["\"event_type\":\"run.done\""])),
        Turn::reply(vec![text("The run is finished.")]),
    ])
    .cwd(p.path());
    let routes = vec![Route::new("you were restarted", restarted), Route::new("", first.cwd(p.path()))];
    let mock = MockModel::routed(Anthropic, routes);
    let config = tempfile::tempdir().unwrap();
    let mut l = p.launch().args(lead_flags(&worker));
    for (k, v) in claude_env(&mock, config.path()) {
        l = l.env(&k, &v);
    }
    let mut b = l.spawn();
    said(&mut b, "T1 a1 started");
    // The worker has claimed T1 (the restarted lead is to be told it is in progress).
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let c = p.client().await;
        within("T1 in progress", next_event(&c, 0, &[EventType::TaskInProgress])).await
    });
    let bound = Duration::from_secs(120);
    let planned = mock.wait_for(bound, |r| r.route == 1 && r.turn == Some(2));
    assert!(planned.is_some(), "the first lead never ended its planning turn\n{}", mock.transcript());
    let pid: i64 =
        std::fs::read_to_string(p.path().join(".agents/launch/R1/lead.pid")).unwrap().trim().parse().unwrap();
    kill_group_if_running(pid);
    said(&mut b, "restarting it with the run's state");
    let back = mock.wait_for(bound, |r| r.route == 0 && r.turn == Some(0));
    let back = back.unwrap_or_else(|| panic!("the restarted lead never asked its model\n{}", mock.transcript()));
    let prompt = back.user_input.join("\n");
    assert!(prompt.contains("- T1 [in_progress] Schema (worker w1)"), "{prompt}");
    open_gate(&gate);
    let out = finish_within(b, Duration::from_secs(300));
    assert_eq!(out.code, 0, "{}\n{}\n{}", out.stdout, out.stderr, mock.transcript());
    let view = p.orch().json_flag().args(["run", "show", "--run", "R1"]).run().ok().json();
    assert_eq!(view["run"]["status"], "done", "{view}");
    let finished = mock.turn_requests().iter().any(|r| r.route == 0 && r.turn == Some(2));
    assert!(finished, "the restarted lead called finish_run\n{}", mock.transcript());
}

/// Let the waiting worker go: write to its fifo, which blocks until the worker reads it
/// (bounded: a worker that is gone fails the test instead of hanging it).
fn open_gate(gate: &std::path::Path) {
    let (wrote, written) = std::sync::mpsc::channel();
    let gate = gate.to_path_buf();
    std::thread::spawn(move || wrote.send(std::fs::write(&gate, "go\n")));
    let r = written.recv_timeout(Duration::from_secs(120));
    assert!(matches!(r, Ok(Ok(()))), "the worker never read its gate: {r:?}");
}
