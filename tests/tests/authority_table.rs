//! The authority table, walked: every write method `rpc.discover` lists, with who may call
//! it (its `x-authority`, generated from `proto/src/authority.rs`), is tried with
//! credentials required by a client that knows only the document:
//!
//! - on a connection authenticated as nobody: refused, every one;
//! - by the worker `w-a`, authenticated as itself, naming the other worker `w-b` as the
//!   agent it acts for: refused `unauthenticated`;
//! - by `w-a` as itself, on `w-b`'s objects (its claimed thread, its mail, its reservation,
//!   its permission request, its launched session, its task's mailbox), on the lead's run
//!   and on the lead's powers: refused, unless the table lets any agent do it to nothing of
//!   anyone else's (then it succeeds);
//! - through the dashboard's WebSocket (the URL read from `.agents/dashboard.json`, as a
//!   worker's shell of the same user could), authenticated as `w-a`: the same, and what the
//!   page may never do, or do as another agent, refused `page_acts_as_overseer`.
//!
//! Nothing of `w-b`'s or the lead's changes. Runs on PostgreSQL too (`on_postgres`).

use coord_tests::team::{Team, code};
use coord_tests::*;
use serde_json::{Value, json};

/// What a refusal for want of authority looks like: the credentials and roles codes, and
/// the object rules that hold by name.
const REFUSALS: &[&str] = &[
    "unauthenticated",
    "not_permitted",
    "page_acts_as_overseer",
    "not_lease_holder",
    "response_forbidden",
    "message_not_found",
    "ack_forbidden",
    "withdraw_forbidden",
    "release_forbidden",
];

/// The objects the walk aims at.
struct Fixture {
    /// `w-b`'s thread of T1, claimed by it; `w-a`'s of T2, blocked on its question.
    thread_b: String,
    thread_a: String,
    /// The lead's mail to `w-b`.
    mail_b: String,
    /// A session the lead's launcher records for `w-b`'s attempt.
    session_b: String,
    /// A directory to install hooks into.
    dir: tempfile::TempDir,
}

/// The lead's run R1: T1 for `w-b` (claimed), T2 for `w-a` (blocked on a question); mail to
/// `w-b` and to its task; `w-b`'s reservation and permission request; a launched session
/// for `w-b`'s attempt. Then credentials are required.
fn fixture(t: &Team) -> Fixture {
    let thr = t.dispatched(&[("T1", "w-b"), ("T2", "w-a")]);
    let (thread_b, thread_a) = (thr[0].clone(), thr[1].clone());
    ok_as(&t.p, "w-b", &["claim", "--thread", &thread_b]);
    ok_as(&t.p, "w-a", &["claim", "--thread", &thread_a]);
    ok_as(&t.p, "w-a", &["update", "--thread", &thread_a, "--status", "blocked", "--summary", "which db?"]);
    let mail = ok(&t.p, &["send", "--from", "leader", "--to", "w-b", "--summary", "a note"]);
    ok(&t.p, &["send", "--from", "leader", "--to-task", "T1", "--summary", "for T1's session"]);
    ok_as(&t.p, "w-b", &["reserve", "--scope", "src/b.rs", "--task", "T1"]);
    let mut c = t.anonymous();
    let request = json!({"request_id": "perm-b", "tool_name": "Bash", "tool_use_id": "toolu_1",
        "description": "push", "input": {"command": "git push"}});
    let sent = c.rpc(
        "control.send",
        json!({"from": "w-b", "to": "leader", "type": "permission_request",
        "payload": request}),
    );
    assert!(sent["result"].is_object(), "{sent}");
    let session = c.rpc("launch.sessionStart", launch_start(&thread_b));
    let session_b = session["result"]["session_id"].as_str().unwrap_or_else(|| panic!("{session}")).to_string();
    t.require_credentials();
    Fixture { thread_b, thread_a, mail_b: message_id(&mail), session_b, dir: tempfile::tempdir().unwrap() }
}

fn launch_start(thread: &str) -> Value {
    json!({"run_id": "R1", "task_id": "T1", "thread_id": thread, "client": "command", "pid": 4242,
        "launcher": "coord-launch:R1", "cwd": "/tmp", "log_path": "/tmp/log"})
}

/// The params of one try of `method` acting as `actor` (in the field naming the acting
/// agent, where the method has one), aimed at what is not `w-a`'s. `None`: the walk has no
/// try for this method yet, which fails it.
fn params(f: &Fixture, method: &str, actor: &str) -> Option<Value> {
    let (b, a) = (&f.thread_b, &f.thread_a);
    Some(match method {
        "system.shutdown" | "dashboard.start" | "dashboard.stop" => json!({}),
        "session.installHooks" => json!({"dir": f.dir.path(), "agent": actor, "inbox_bin": "/bin/sh"}),
        "inbox.init" => json!({"require_credentials": false}),
        "agents.register" => json!({"agent_id": "w-new", "role": "worker"}),
        "agents.authenticate" => json!({"agent_id": "w-b", "secret": format!("cs_w-b_{}", "0".repeat(64))}),
        "agents.heartbeat" => json!({"agent_id": actor, "status": "busy"}),
        "reservations.reserve" => json!({"agent": actor, "scope": "src/a.rs", "task_id": "T2"}),
        "reservations.release" => json!({"agent": actor, "scope": "src/b.rs"}),
        "inbox.send" => json!({"from": actor, "to": "leader", "summary": "hello"}),
        "inbox.claim" | "inbox.renew" => json!({"agent": actor, "thread_id": b}),
        "inbox.update" | "inbox.done" | "inbox.fail" => json!({"agent": actor, "thread_id": b, "summary": "mine"}),
        "inbox.reply" => json!({"from": actor, "thread_id": a, "kind": "answer", "summary": "answered myself"}),
        "inbox.cancel" => json!({"agent": actor, "thread_id": b, "reason": "mine"}),
        "inbox.markRead" => json!({"agent": actor, "thread_id": b, "read_through_event": 1}),
        "orch.runCreate" => json!({"goal": "mine", "created_by": actor}),
        "orch.taskAdd" => json!({"run_id": "R1", "task_id": "T9", "title": "mine"}),
        "orch.depAdd" | "orch.depRemove" => json!({"run_id": "R1", "task_id": "T1", "on": "T2"}),
        "orch.dispatch" | "orch.reassign" => json!({"run_id": "R1", "task_id": "T1", "to": actor}),
        "orch.retry" | "orch.taskRemove" => json!({"run_id": "R1", "task_id": "T1"}),
        "orch.reconcile" | "orch.merge" | "orch.runFinish" | "orch.worktreePrune" => json!({"run_id": "R1"}),
        "orch.answer" => json!({"run_id": "R1", "task_id": "T2", "from": actor, "summary": "answered myself"}),
        "orch.cancel" => json!({"run_id": "R1", "task_id": "T1", "reason": "mine"}),
        "orch.councilStart" => json!({"run_id": "R1", "topic": "mine", "reviewers": [actor]}),
        "orch.taskEdit" => json!({"run_id": "R1", "task_id": "T1", "title": "mine"}),
        "orch.runEdit" => json!({"run_id": "R1", "verify": "true"}),
        "orch.queueNext" => json!({"run_id": "R1"}),
        "orch.queueReport" => json!({"run_id": "R1", "task_id": "T1", "attempt": 1,
            "commit": "0000000000000000000000000000000000000000", "passed": true}),
        "orch.reviewComment" => json!({"run_id": "R1", "task_id": "T1", "path": "src/lib.rs", "line": 1,
            "body": "mine", "author": actor}),
        "orch.reviewApprove" | "orch.reviewRequestChanges" => json!({"run_id": "R1", "task_id": "T1", "author": actor}),
        "mail.read" | "mail.ack" | "mail.withdraw" => json!({"agent": actor, "message_id": f.mail_b}),
        "mail.check" => json!({"agent": actor, "task_id": "T1"}),
        "mail.pending" => json!({"agent": actor, "task_id": "T1", "remind": true}),
        "peers.link" => json!({"task_id": "T1", "peer_task_id": "T2"}),
        "launch.sessionStart" => launch_start(b),
        "launch.sessionExit" => json!({"session_id": f.session_b, "exit_code": 1, "fail_attempt": true}),
        "launch.sessionTail" => json!({"session_id": f.session_b, "lines": ["all tests passed"]}),
        "launch.usage" => json!({"session_id": f.session_b, "input_tokens": 1, "output_tokens": 1,
            "cache_read_tokens": 0, "cache_write_tokens": 0}),
        "launch.budgetSet" => json!({"run_id": "R1", "max_cost_usd": 1000.0}),
        "control.send" => json!({"from": actor, "type": "permission_response",
            "payload": {"request_id": "perm-b", "approved": true}}),
        "policy.set" => json!({"actor": actor, "policy": {"lead": actor, "rules": [{"tool": "Bash(git push*)"}]}}),
        "progress.report" => json!({"agent": actor, "line_type": "text", "data": "working"}),
        _ => return None,
    })
}

/// A method of the document with its rule.
struct Rule {
    method: String,
    /// `read`, `anyone`, `agent`, `as_agent`, `lead`.
    caller: String,
    /// The params field naming the acting agent.
    field: Option<String>,
    object: String,
    /// `reads`, `as_overseer`, `as_connection`, `never`.
    page: String,
}

impl Rule {
    /// Does the table let an agent, as itself, do this to what is not its own? Only a call
    /// any agent may make with no object rule.
    fn allows_worker(&self) -> bool {
        matches!(self.caller.as_str(), "agent" | "as_agent") && self.object == "none"
    }
}

/// Every write method of `rpc.discover`, with its rule.
fn write_methods(t: &Team) -> Vec<Rule> {
    let doc = t.anonymous().rpc("rpc.discover", json!({}));
    let methods = doc["result"]["methods"].as_array().expect("methods");
    let mut out = Vec::new();
    for m in methods.iter().filter(|m| m.get("x-authority").is_some()) {
        let a = &m["x-authority"];
        let text = |k: &str| a[k].as_str().unwrap_or_else(|| panic!("{m}: x-authority.{k}")).to_string();
        if text("caller") == "read" {
            continue;
        }
        out.push(Rule {
            method: m["name"].as_str().unwrap().to_string(),
            caller: text("caller"),
            field: a["field"].as_str().map(str::to_string),
            object: text("object"),
            page: text("page"),
        });
    }
    assert!(out.len() > 40, "rpc.discover lists {} write methods", out.len());
    out
}

/// Check one try: refused for want of authority (exactly `want`, if given), or allowed.
#[track_caller]
fn expect(route: &str, method: &str, params: &Value, reply: &Value, refused: bool, want: Option<&str>) {
    let got = code(reply).as_str().unwrap_or("");
    if refused {
        match want {
            Some(w) => assert_eq!(got, w, "{route}: {method} {params}: {reply}"),
            None => assert!(REFUSALS.contains(&got), "{route}: {method} {params} was not refused: {reply}"),
        }
    } else {
        assert!(reply["result"].is_object() || reply["result"].is_array(), "{route}: {method} {params}: {reply}");
    }
}

/// What must not have changed: `w-b`'s thread (claimed, by it), T1 and the lead's run,
/// the request, the session, `w-b`'s mail, the policy and the roles.
fn untouched(t: &Team, f: &Fixture) {
    let mut c = t.anonymous();
    let thread = c.rpc("inbox.show", json!({"thread_id": f.thread_b}))["result"]["thread"].clone();
    assert_eq!((thread["status"].clone(), thread["lease"]["agent_id"].clone()), (json!("claimed"), json!("w-b")));
    let task = c.rpc("orch.taskShow", json!({"run_id": "R1", "task_id": "T1"}))["result"]["task"].clone();
    assert_eq!((task["status"].clone(), task["title"].clone()), (json!("in_progress"), json!("T1")), "{task}");
    let blocked = c.rpc("orch.taskShow", json!({"run_id": "R1", "task_id": "T2"}))["result"]["task"]["status"].clone();
    assert_eq!(blocked, "blocked", "w-a's question is unanswered");
    let request = c.rpc("control.requests", json!({"request_id": "perm-b", "include_closed": true}));
    assert_eq!(request["result"]["requests"][0]["status"], "open", "{request}");
    let sessions = c.rpc("launch.sessionList", json!({"run_id": "R1"}));
    let ours: Vec<&Value> = sessions["result"]["sessions"].as_array().unwrap().iter().collect();
    assert_eq!(ours.len(), 1, "no session recorded but the lead's: {sessions}");
    assert_eq!(ours[0]["state"], "running", "{sessions}");
    let mail = c.rpc("mail.list", json!({"agent": "w-b"}));
    let note = mail["result"]["mail"].as_array().unwrap().iter().find(|m| m["message_id"] == f.mail_b.as_str());
    assert_eq!(note.map(|m| m["state"].clone()), Some(json!("unread")), "{mail}");
    let init = c.rpc("inbox.init", json!({}))["result"].clone();
    assert_eq!((init["require_credentials"].clone(), init["lead"].clone()), (json!(true), json!("leader")));
    assert!(c.rpc("agents.show", json!({"agent_id": "w-new"}))["error"].is_object(), "nobody registered w-new");
    assert_eq!(c.rpc("policy.get", json!({}))["result"]["policy"]["rules"], json!([]), "the policy is unchanged");
}

#[test]
fn every_write_method_is_refused_to_a_worker_unless_the_table_allows_it() {
    let t = Team::new();
    let f = fixture(&t);
    let rules = write_methods(&t);
    let missing: Vec<&str> =
        rules.iter().map(|r| r.method.as_str()).filter(|m| params(&f, m, "w-a").is_none()).collect();
    assert!(missing.is_empty(), "give these write methods a try in authority_table.rs's params(): {missing:?}");

    let (mut anonymous, mut wa) = (t.anonymous(), t.conn("w-a"));
    for r in &rules {
        let own = params(&f, &r.method, "w-a").unwrap();
        // Nobody: every write is refused.
        expect("nobody", &r.method, &own, &anonymous.rpc(&r.method, own.clone()), true, None);
        // As the other worker: the connection is not it.
        if r.field.is_some() {
            let other = params(&f, &r.method, "w-b").unwrap();
            let reply = wa.rpc(&r.method, other.clone());
            expect("w-a as w-b", &r.method, &other, &reply, true, Some("unauthenticated"));
        }
        // As itself, on what is not its own and on the lead's powers.
        let want = if r.caller == "lead" { Some("not_permitted") } else { None };
        expect("w-a", &r.method, &own, &wa.rpc(&r.method, own.clone()), !r.allows_worker(), want);
    }
    untouched(&t, &f);
}

#[test]
fn through_the_dashboards_websocket_a_worker_gets_no_more_than_on_the_socket() {
    let t = Team::new();
    let f = fixture(&t);
    let rules = write_methods(&t);
    dashboard_url_as(&t.p, t.secret("leader"));
    // What a worker's shell of the same user can read (docs/security.md).
    let saved: Value =
        serde_json::from_str(&std::fs::read_to_string(t.p.paths().db.with_file_name("dashboard.json")).unwrap())
            .expect("dashboard.json");
    let url = format!("http://127.0.0.1:{}/{}/", saved["port"], saved["token"].as_str().unwrap());
    let mut page = WsConn::open(&url, None).expect("the WebSocket");
    let auth = page.rpc("agents.authenticate", json!({"agent_id": "w-a", "secret": t.secret("w-a")}));
    assert!(auth["result"].is_object(), "{auth}");
    for r in &rules {
        let own = params(&f, &r.method, "w-a").unwrap();
        if r.page == "never" {
            expect("page", &r.method, &own, &page.rpc(&r.method, own.clone()), true, Some("page_acts_as_overseer"));
            continue;
        }
        if r.field.is_some() {
            let other = params(&f, &r.method, "w-b").unwrap();
            let reply = page.rpc(&r.method, other.clone());
            expect("page as w-b", &r.method, &other, &reply, true, Some("page_acts_as_overseer"));
        }
        expect("page as w-a", &r.method, &own, &page.rpc(&r.method, own.clone()), !r.allows_worker(), None);
    }
    untouched(&t, &f);
}
