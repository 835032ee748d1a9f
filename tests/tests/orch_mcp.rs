//! `orch mcp`, the lead's MCP server, driven by a real MCP client this project did not
//! write (`rmcp`'s), against the real daemon: the lead plans a run with a dependency,
//! dispatches it, waits for attention (a subscription), answers a worker's question,
//! answers a permission request, reviews a diff (a comment reaches the worker with its
//! anchor), and a worker's credentials are refused by the write tools.

use coord_tests::mcp_client::{Session, err, ok, session, tool_names, tool_set_tokens};
use coord_tests::{Project, git_in, git_project, ok_as, register};
use serde_json::{Value, json};

const TOOLS: [&str; 21] = [
    "add_task",
    "answer",
    "cancel",
    "comment",
    "council",
    "create_run",
    "diff",
    "dispatch",
    "edit_task",
    "finish_run",
    "merge",
    "reassign",
    "requests",
    "respond",
    "retry",
    "review",
    "shutdown_worker",
    "start_council",
    "status",
    "task",
    "wait_for_attention",
];

async fn lead(p: &Project, args: &[&str]) -> Session {
    let mut all = vec!["mcp", "--as", "lead"];
    all.extend_from_slice(args);
    session(p.orch().args(all).into_command()).await
}

/// The lead's run R1 through the tools: T1, and T2 which depends on T1, both for wkr.
async fn planned(s: &Session) {
    ok(s, "create_run", json!({"goal": "Ship login", "run_id": "R1"})).await;
    let t1 = json!({"task_id": "T1", "title": "Schema", "kind": "thread", "assign_to": "wkr",
                    "acceptance": "the users table exists"});
    ok(s, "add_task", t1).await;
    let t2 = json!({"task_id": "T2", "title": "Login", "kind": "thread", "assign_to": "wkr", "depends_on": ["T1"]});
    ok(s, "add_task", t2).await;
}

fn task<'a>(status: &'a Value, id: &str) -> &'a Value {
    status["tasks"].as_array().unwrap().iter().find(|t| t["task_id"] == id).unwrap_or_else(|| panic!("{id}: {status}"))
}

/// Wait for attention until an event of `kind` comes; every event returned on the way.
async fn attention_until(s: &Session, kind: &str) -> Vec<Value> {
    let mut seen = Vec::new();
    loop {
        let w = ok(s, "wait_for_attention", json!({})).await;
        let events = w["events"].as_array().unwrap().clone();
        let found = events.iter().any(|e| e["type"] == kind);
        seen.extend(events);
        if found {
            return seen;
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_lead_plans_a_run_with_a_dependency_and_dispatches_only_what_is_ready() {
    let p = Project::new();
    let _d = p.serve();
    let s = lead(&p, &[]).await;
    assert_eq!(tool_names(&s).await, TOOLS);

    planned(&s).await;
    ok(&s, "edit_task", json!({"task_id": "T2", "title": "Login form", "body": "email and password"})).await;
    let d = ok(&s, "dispatch", json!({})).await;
    assert_eq!(d["dispatched"], json!([{"task_id": "T1", "attempt": 1, "worker": "wkr"}]), "{d}");

    let st = ok(&s, "status", json!({})).await;
    assert_eq!(st["run"]["run_id"], "R1");
    assert_eq!((&task(&st, "T1")["status"], &task(&st, "T1")["worker"]), (&json!("dispatched"), &json!("wkr")));
    assert_eq!((&task(&st, "T2")["status"], &task(&st, "T2")["depends_on"]), (&json!("pending"), &json!(["T1"])));
    let t2 = ok(&s, "task", json!({"task_id": "T2"})).await;
    assert_eq!((&t2["task"]["title"], &t2["task"]["body"]), (&json!("Login form"), &json!("email and password")));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_question_wakes_wait_for_attention_and_the_answer_reaches_the_worker() {
    let p = Project::new();
    let _d = p.serve();
    let s = lead(&p, &[]).await;
    planned(&s).await;
    let d = ok(&s, "dispatch", json!({"task_id": "T1"})).await;
    assert_eq!(d["dispatched"][0]["worker"], "wkr");
    let thread =
        ok(&s, "task", json!({"task_id": "T1"})).await["attempts"][0]["thread_id"].as_str().unwrap().to_string();

    // The worker claims T1 and asks; the lead's wait wakes on the block, question included.
    ok_as(&p, "wkr", &["claim", "--thread", &thread]);
    let asked = ok_as(&p, "wkr", &["update", "--thread", &thread, "--status", "blocked", "--summary", "Which DB?"]);
    let seen = attention_until(&s, "task.blocked").await;
    let blocked = seen.iter().find(|e| e["type"] == "task.blocked").unwrap();
    assert_eq!(
        (&blocked["task_id"], &blocked["question"]["summary"]),
        (&json!("T1"), &json!("Which DB?")),
        "{blocked}"
    );

    // The answer goes to the worker's thread, after its question.
    ok(&s, "answer", json!({"task_id": "T1", "summary": "PostgreSQL"})).await;
    let after = asked["event_id"].as_i64().unwrap().to_string();
    let reply =
        ok_as(&p, "wkr", &["wait-reply", "--thread", &thread, "--after-event", &after, "--timeout-seconds", "60"]);
    assert_eq!(reply["message"]["summary"], "PostgreSQL", "{reply}");

    // Done: the lead is woken again, and T2 becomes ready to dispatch.
    ok_as(&p, "wkr", &["done", "--thread", &thread, "--summary", "schema in"]);
    attention_until(&s, "task.done").await;
    let d = ok(&s, "dispatch", json!({})).await;
    assert_eq!(d["dispatched"][0]["task_id"], "T2", "{d}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_permission_request_reaches_the_lead_who_allows_it() {
    let p = Project::new();
    let _d = p.serve();
    let s = lead(&p, &[]).await;
    planned(&s).await;
    ok(&s, "dispatch", json!({"task_id": "T1"})).await;
    let payload = json!({"request_id": "perm-1", "tool_name": "Bash", "tool_use_id": "toolu_1",
                         "description": "push", "input": {"command": "git push"}});
    let sent = ok_as(
        &p,
        "wkr",
        &["control", "--type", "permission_request", "--run", "R1", "--task", "T1", "--payload", &payload.to_string()],
    );

    let seen = attention_until(&s, "permission_request").await;
    let asked = seen.iter().find(|e| e["type"] == "permission_request").unwrap();
    assert_eq!(asked["payload"]["input"]["command"], "git push", "{asked}");
    let open = ok(&s, "requests", json!({})).await;
    assert_eq!(open["requests"][0]["request_id"], "perm-1", "{open}");

    let r = ok(&s, "respond", json!({"request_id": "perm-1", "approve": true, "reason": "fine"})).await;
    assert_eq!(r["type"], "permission_response", "{r}");
    assert_eq!(ok(&s, "requests", json!({})).await["requests"], json!([]));
    let thread = sent["thread"]["thread_id"].as_str().unwrap();
    let shown = ok_as(&p, "wkr", &["show", "--thread", thread]);
    let last = shown["messages"].as_array().unwrap().last().unwrap().clone();
    assert_eq!((&last["type"], &last["payload_json"]["approved"]), (&json!("permission_response"), &json!(true)));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_worker_s_credentials_are_refused_by_the_write_tools() {
    let p = Project::new();
    let _d = p.serve();
    let lead_secret = register(&p, "lead");
    let worker_secret = register(&p, "wkr");
    coord_tests::ok(&p, &["init", "--require-credentials", "--lead", "lead"]);
    let env = coord_proto::types::AGENT_SECRET_ENV;

    let l = session(p.orch().args(["mcp", "--as", "lead"]).env(env, &lead_secret).into_command()).await;
    planned(&l).await;
    let w = session(p.orch().args(["mcp", "--as", "wkr", "--run", "R1"]).env(env, &worker_secret).into_command()).await;
    for (tool, args) in [
        ("add_task", json!({"task_id": "T9", "title": "mine"})),
        ("dispatch", json!({})),
        ("cancel", json!({"reason": "because"})),
        ("merge", json!({})),
        ("comment", json!({"task_id": "T1", "path": "a.txt", "line": 1, "body": "mine"})),
        ("review", json!({"task_id": "T1", "approve": true})),
    ] {
        let e = err(&w, tool, args).await;
        assert!(["not_permitted", "unauthenticated"].contains(&e["code"].as_str().unwrap()), "{tool}: {e}");
    }
    // Nothing changed: the lead sees its two tasks, none dispatched.
    let st = ok(&l, "status", json!({})).await;
    assert_eq!(st["tasks"].as_array().unwrap().len(), 2, "{st}");
    assert_eq!(task(&st, "T1")["status"], "ready", "{st}");
}

/// Issue 36 through the lead's tools: `diff` shows a done task's change, `comment` anchors
/// a remark to a line, `review` with approve false sends it to the worker in a new attempt.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_lead_reviews_a_diff_and_its_comment_reaches_the_worker_with_its_anchor() {
    let p = git_project();
    let _d = p.serve();
    let orch = |args: &[&str]| p.orch().json_flag().args(args).run().ok().json();
    orch(&["run", "create", "--goal", "g", "--id", "R1", "--require-approval"]);
    orch(&["task", "add", "--run", "R1", "--id", "T1", "--title", "T1", "--assign-to", "wkr"]);
    let d = orch(&["dispatch", "--run", "R1", "--task", "T1"]);
    let (wt, thread) =
        (d["dispatches"][0]["worktree_path"].as_str().unwrap(), d["dispatches"][0]["thread_id"].as_str().unwrap());
    p.inbox().args(["claim", "--agent", "wkr", "--thread", thread]).run().ok();
    std::fs::write(std::path::Path::new(wt).join("two.txt"), "a\nb\n").unwrap();
    git_in(std::path::Path::new(wt), &["add", "-A"]);
    git_in(std::path::Path::new(wt), &["-c", "user.email=w@e", "-c", "user.name=w", "commit", "-q", "-m", "work"]);
    p.inbox().args(["done", "--agent", "wkr", "--thread", thread, "--summary", "done"]).run().ok();

    // The lead is the run's creator (no --as).
    let s = session(p.orch().args(["mcp", "--run", "R1"]).into_command()).await;
    let diff = ok(&s, "diff", json!({"task_id": "T1"})).await;
    let text = diff["diff"].as_str().unwrap();
    assert!(text.contains("added two.txt  +2 -0") && text.contains("\n+a\n+b\n"), "{diff}");
    ok(&s, "comment", json!({"task_id": "T1", "path": "two.txt", "line": 2, "body": "b should be c"})).await;
    let r = ok(&s, "review", json!({"task_id": "T1", "approve": false, "summary": "one fix"})).await;
    assert_eq!((r["sent_comments"].clone(), r["attempt"].clone()), (1.into(), 2.into()), "{r}");
    let t = orch(&["task", "show", "--run", "R1", "--task", "T1"]);
    let thread = t["attempts"][1]["thread_id"].as_str().unwrap();
    let shown = p.inbox().json_flag().args(["show", "--thread", thread]).run().ok().json();
    assert!(shown["messages"][0]["body"].as_str().unwrap().contains("- two.txt:2: b should be c"), "{shown}");
}

/// Issue 35's bound on the lead's tool set: at most 3,000 tokens for every definition
/// (measured with the public o200k and cl100k encodings; coord-bench prints the figures).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_lead_tool_set_stays_within_3000_tokens() {
    let p = Project::new();
    let _d = p.serve();
    let size = tool_set_tokens(&lead(&p, &[]).await).await;
    assert_eq!(size.tools, TOOLS.len());
    assert!(size.o200k.max(size.cl100k) <= 3000, "{size:?}");
}

/// The lead, in the main checkout, dispatches a code task with no repository named: its
/// worktree comes from the git repository around the lead, as with `orch dispatch` (the
/// tool used to refuse: "code tasks get a git worktree: give the repository").
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_lead_dispatches_a_code_task_into_a_worktree_of_its_repository() {
    let p = git_project();
    let _d = p.serve();
    let s = lead(&p, &[]).await;
    ok(&s, "create_run", json!({"goal": "Ship login", "run_id": "R1"})).await;
    ok(&s, "add_task", json!({"task_id": "T1", "title": "Schema", "kind": "code", "assign_to": "wkr"})).await;
    let d = ok(&s, "dispatch", json!({})).await;
    assert_eq!(d["dispatched"], json!([{"task_id": "T1", "attempt": 1, "worker": "wkr"}]), "{d}");
    let t = p.orch().json_flag().args(["task", "show", "--run", "R1", "--task", "T1"]).run().ok().json();
    let wt = t["attempts"][0]["worktree_path"].as_str().unwrap_or_else(|| panic!("a worktree: {t}"));
    assert!(git_in(p.path(), &["worktree", "list"]).contains(wt), "{t}");
}
