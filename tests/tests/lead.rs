//! `coord-launch --lead` (issue 35) with a scripted lead and scripted workers (the
//! `command` client, no model): the bridge creates the run, starts the lead in the main
//! checkout with its own credentials, pushes what needs it into its session as turns (a
//! worker's question arrives as a turn the lead reads on stdin: no polling anywhere), starts
//! the workers for the lead's dispatches, restarts a lead that was killed with the run's
//! state as its context, stops lead and workers on `orch cancel`, and exits 0 once the lead
//! brought the run to done. Every wait is on an event, a line the bridge says, or a
//! process's end.

#[path = "support/launch.rs"]
#[allow(dead_code, reason = "the other launch suites use the rest")]
mod support;

use coord_proto::types::*;
use coord_tests::{Project, finish, ok_as};
use support::*;

/// The scripted lead: on its first turn it plans T1 (w1) and T2 (w2, after T1) and
/// dispatches, unless it was restarted (then it dispatches what is ready); then it reads
/// its turns, saving each to lead-turns.jsonl, answers T1's question, dispatches T2 when it
/// is ready, and ends when the run is done.
const LEAD: &str = r#"IFS= read -r first; printf '%s\n' "$first" >> lead-turns.jsonl
printf '%s\n' "$COORD_AGENT_SECRET" > lead-secret
case "$first" in
  *restarted*) orch dispatch --run "$COORD_RUN" --all-ready >/dev/null 2>&1 ;;
  *) orch task add --run "$COORD_RUN" --id T1 --title Schema --kind thread --assign-to w1 >/dev/null
     orch task add --run "$COORD_RUN" --id T2 --title Login --kind thread --assign-to w2 --depends-on T1 >/dev/null
     [ -n "$LEAD_STOP_AFTER_PLAN" ] && exec sleep 600
     orch dispatch --run "$COORD_RUN" --all-ready >/dev/null ;;
esac
while IFS= read -r line; do
  printf '%s\n' "$line" >> lead-turns.jsonl
  case "$line" in
    *'task.blocked T1'*) orch answer --run "$COORD_RUN" --task T1 --summary 'Use SQLite' >/dev/null ;;
    *'task.ready T2'*) orch dispatch --run "$COORD_RUN" --task T2 >/dev/null ;;
    *'permission_request'*)
      id=$(printf '%s' "$line" | sed -n 's/.*"request_id":"\([^"]*\)".*/\1/p')
      inbox --agent "$COORD_AGENT" control --type permission_response \
        --payload "{\"request_id\":\"$id\",\"approved\":true,\"reason\":\"push your branch\"}" >/dev/null ;;
    *'run.done'*) break ;;
  esac
done"#;

/// The scripted worker (live): T1 asks and waits for the answer on its feed; T2 just works.
const WORKER: &str = r#"IFS= read -r first
inbox claim --agent "$COORD_AGENT" --thread "$COORD_THREAD" >/dev/null
if [ "$COORD_TASK" = T1 ] && [ -z "$NO_QUESTION" ]; then
  inbox update --agent "$COORD_AGENT" --thread "$COORD_THREAD" --status blocked --summary 'Which db?' >/dev/null
  while IFS= read -r line; do case "$line" in *'"kind":"answer"'*) break ;; esac; done
fi
if [ "$COORD_TASK" = T2 ] && [ -n "$DECISION" ]; then
  printf '{"session_id":"s","transcript_path":"/tmp/t.jsonl","cwd":"%s","permission_mode":"default","hook_event_name":"PreToolUse","tool_name":"Bash","tool_use_id":"toolu_1","tool_input":{"command":"git push origin HEAD","description":"Push the branch"}}' "$PWD" \
    | inbox --agent "$COORD_AGENT" hook claude pre-tool-use > "$DECISION"
fi
inbox done --agent "$COORD_AGENT" --thread "$COORD_THREAD" --summary finished >/dev/null
while IFS= read -r line; do :; done"#;

/// The lead's flags of coord-launch, for the team below.
const LEAD_FLAGS: [&str; 8] = ["--lead", "command", "--goal", "Ship login", "--run", "R1", "--lead-command", LEAD];

/// The workers' flags of coord-launch, for the team below.
const WORKER_FLAGS: [&str; 5] = ["--command", WORKER, "--live", "--grace-seconds", "5"];

fn team(p: &Project, env: &[(&str, &str)]) -> std::process::Child {
    // The project is here (not in a directory above the test's).
    std::fs::create_dir_all(p.path().join(".agents")).unwrap();
    let args = [&LEAD_FLAGS[..], &WORKER_FLAGS[..]].concat();
    let mut l = p.launch().args(args);
    for (k, v) in env {
        l = l.env(k, v);
    }
    l.spawn()
}

/// Wait until the lead planned T2 (the second task it adds; a lead started with
/// LEAD_STOP_AFTER_PLAN then sleeps).
async fn planned(p: &Project) {
    let c = p.client().await;
    let mut after = 0;
    loop {
        let ev = next_event(&c, after, &[EventType::TaskAdded]).await;
        if ev.task_id == "T2" {
            return;
        }
        after = ev.event_id;
    }
}

fn lead_turns(p: &Project) -> Vec<serde_json::Value> {
    let text = std::fs::read_to_string(p.path().join("lead-turns.jsonl")).expect("lead-turns.jsonl");
    text.lines().map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}"))).collect()
}

/// The whole loop: the lead plans two tasks with a dependency, the worker's question
/// reaches the lead's session as a turn, the lead answers, dispatches T2 once T1 is done,
/// the run is done and the bridge exits 0.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lead_plans_answers_the_pushed_question_and_the_bridge_exits_0_when_the_run_is_done() {
    let p = Project::new();
    let out = finish(team(&p, &[]));
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    let view = orch(&p, &["run", "show", "--run", "R1"]);
    assert_eq!(view["run"]["status"], "done", "{view}");
    assert_eq!(view["run"]["created_by"], "lead", "{view}");
    let turns = lead_turns(&p);
    assert_eq!((turns[0]["kind"].as_str(), turns[0]["run_id"].as_str()), (Some("task"), Some("R1")));
    assert!(turns[0]["text"].as_str().unwrap().contains("Ship login"), "{}", turns[0]);
    let asked = turns.iter().find(|t| t["text"].as_str().unwrap().contains("task.blocked T1")).expect("pushed");
    assert_eq!(asked["kind"], "attention", "{asked}");
    assert!(asked["text"].as_str().unwrap().contains("question: Which db?"), "{asked}");
    let t2 = orch(&p, &["task", "show", "--run", "R1", "--task", "T2"]);
    assert_eq!(t2["task"]["status"], "done", "{t2}");
}

/// The lead runs with a secret of its own, registered for the `lead` agent, never the
/// person's; and the lead holds the project's lead role.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_lead_gets_its_own_secret_and_the_projects_lead_role() {
    let p = Project::new();
    let out = finish(team(&p, &[("COORD_AGENT_SECRET", ""), ("NO_QUESTION", "1")]));
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    let secret = std::fs::read_to_string(p.path().join("lead-secret")).unwrap();
    assert!(secret.trim().starts_with("cs_lead_"), "{secret}");
    let c = p.client().await;
    use coord_proto::api::{AgentsApiClient, InboxApiClient};
    let p_auth = AuthenticateParams { agent_id: "lead".into(), secret: secret.trim().to_string() };
    c.agent_authenticate(p_auth).await.expect("the lead's own secret authenticates it");
    let roles = c.init(InitParams::default()).await.unwrap();
    assert_eq!(roles.lead.as_deref(), Some("lead"));
}

/// A lead killed mid-run is started again, told it was restarted with the run's state,
/// and carries the run to done.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_lead_is_restarted_with_the_runs_state_and_finishes_the_run() {
    let p = Project::new();
    let mut b = team(&p, &[("LEAD_STOP_AFTER_PLAN", "1"), ("NO_QUESTION", "1")]);
    said(&mut b, "lead started");
    planned(&p).await;
    let pid: i64 =
        std::fs::read_to_string(p.path().join(".agents/launch/R1/lead.pid")).unwrap().trim().parse().unwrap();
    kill_group(pid);
    said(&mut b, "restarting it with the run's state");
    let out = finish(b);
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    let turns = lead_turns(&p);
    let restarted = turns.iter().find(|t| t["kind"] == "task" && t["text"].as_str().unwrap().contains("restarted"));
    let text = restarted.expect("the restarted lead's first turn")["text"].as_str().unwrap().to_string();
    assert!(text.contains("T1 [ready]") && text.contains("T2 [pending]"), "{text}");
    assert_eq!(orch(&p, &["run", "show", "--run", "R1"])["run"]["status"], "done");
}

/// `orch cancel` of the run stops the lead and the workers, and the bridge exits 2.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancelling_the_run_stops_the_lead_and_the_bridge_exits_2() {
    let p = Project::new();
    let mut b = team(&p, &[("LEAD_STOP_AFTER_PLAN", "1")]);
    said(&mut b, "lead started");
    planned(&p).await;
    orch(&p, &["cancel", "--run", "R1", "--reason", "changed our mind"]);
    let out = finish(b);
    assert_eq!(out.code, 2, "{}\n{}", out.stdout, out.stderr);
    assert!(out.stdout.contains("lead stopped"), "{}", out.stdout);
    let pid: i32 =
        std::fs::read_to_string(p.path().join(".agents/launch/R1/lead.pid")).unwrap().trim().parse().unwrap();
    assert!(!std::path::Path::new(&format!("/proc/{pid}")).exists(), "the lead is gone");
}

/// A worker's gated `git push` (the real PreToolUse hook, as Claude Code runs it) reaches the
/// lead's session as a pushed permission request; the lead approves it, and the hook
/// allows the call.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_workers_gated_git_push_is_pushed_to_the_lead_which_approves_it() {
    let p = Project::new();
    let _d = p.serve();
    ok_as(&p, "lead", &["policy", "lead", "lead"]);
    ok_as(&p, "lead", &["policy", "gate", "Bash(git push*)"]);
    let decision = p.path().join("decision.json");
    let out = finish(team(&p, &[("NO_QUESTION", "1"), ("DECISION", &decision.display().to_string())]));
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    let d: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&decision).unwrap()).unwrap();
    assert_eq!(d["hookSpecificOutput"]["permissionDecision"], "allow", "{d}");
    assert!(d["hookSpecificOutput"]["permissionDecisionReason"].as_str().unwrap().contains("push your branch"), "{d}");
    let asked = lead_turns(&p).into_iter().find(|t| t["text"].as_str().unwrap().contains("permission_request"));
    let asked = asked.expect("the request was pushed to the lead");
    assert!(asked["text"].as_str().unwrap().contains("git push origin HEAD"), "{asked}");
}

/// `orch team` is coord-launch's lead mode under `orch`: the same team, from `orch team
/// --lead command --goal … -- <coord-launch flags>`, exits 0 with the run done.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn orch_team_runs_the_lead_mode_of_coord_launch_to_a_done_run() {
    let p = Project::new();
    std::fs::create_dir_all(p.path().join(".agents")).unwrap();
    let args = [&["team"][..], &LEAD_FLAGS[..], &["--"][..], &WORKER_FLAGS[..]].concat();
    let out = finish(p.orch().args(args).spawn());
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    assert!(out.stdout.contains("lead started: command @lead"), "{}", out.stdout);
    let view = orch(&p, &["run", "show", "--run", "R1"]);
    assert_eq!(view["run"]["status"], "done", "{view}");
    assert!(lead_turns(&p).iter().any(|t| t["text"].as_str().unwrap().contains("task.blocked T1")));
}
