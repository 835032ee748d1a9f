//! `coord-launch --lead claude` with the real Claude Code (pinned, `agent_cli`) as the lead,
//! against a scripted model server (`coord_tests::mock_model`), and scripted workers (the
//! `command` client): the lead plans two tasks with a dependency through `orch mcp`,
//! dispatches, gets the worker's question pushed into its session as a user turn (no
//! polling in the scenario: the model's script only orders its replies after the events
//! they need, with `orch wait`, a subscription), answers it, dispatches the second task
//! when it is ready, calls finish_run once the run is done (a run of thread tasks has no
//! branch to merge: the tool says so), and `coord-launch` exits 0.

use coord_tests::mock_model::anthropic::{Anthropic, claude_env, tool_results};
use coord_tests::mock_model::{MockModel, Scenario, Turn, text, tool};
use coord_tests::{Project, agent_cli, bin, finish};
use serde_json::json;

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

#[test]
fn claude_leads_plans_with_a_dependency_answers_the_pushed_question_and_finishes_the_run() {
    let Some(claude) = agent_cli("claude") else { return };
    let p = Project::new();
    std::fs::create_dir_all(p.path().join(".agents")).unwrap();
    std::fs::write(
        p.path().join(".agents/launch.toml"),
        format!("[agents.lead]\nprogram = {:?}\n", claude.display().to_string()),
    )
    .unwrap();
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
    let args = [
        "--lead",
        "claude",
        "--goal",
        "Ship login",
        "--run",
        "R1",
        "--command",
        WORKER,
        "--live",
        "--grace-seconds",
        "60",
    ];
    let mut l = p.launch().args(args);
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
