//! Issue 32's authority defects, end to end: with credentials required, a worker
//! authenticated as itself (or a client authenticated as nobody) tries each route that got
//! through, and is refused with a clear code while nothing changes. The lead (or the
//! thread's party) still can. Who may call what: `proto/src/authority.rs`; the
//! table-driven walk over every write method is `authority_table.rs`.

use coord_tests::team::{Team, code};
use coord_tests::*;
use serde_json::{Value, json};

/// The status of task `task` of run R1.
fn task_status(t: &Team, task: &str) -> Value {
    let v = t.anonymous().rpc("orch.taskShow", json!({"run_id": "R1", "task_id": task}));
    v["result"]["task"]["status"].clone()
}

/// The status of thread `thread`.
fn thread_status(t: &Team, thread: &str) -> Value {
    t.anonymous().rpc("inbox.show", json!({"thread_id": thread}))["result"]["thread"]["status"].clone()
}

#[test]
fn only_the_lead_learns_the_dashboards_url_which_is_the_overseers_credential() {
    let t = Team::new();
    t.require_credentials();
    let url = dashboard_url_as(&t.p, t.secret("leader"));
    for (who, mut c) in [("a worker", t.conn("w-a")), ("nobody", t.anonymous())] {
        let status = c.rpc("dashboard.status", json!({}));
        assert_eq!(status["result"]["running"], true, "{status}");
        assert!(status["result"]["url"].is_null(), "{who} learns the token from dashboard.status: {status}");
        // Nor by asking the daemon to serve it, which answers with the URL.
        let started = c.rpc("dashboard.start", json!({}));
        assert!(started["result"].is_null(), "{who} started the dashboard and got {started}");
    }
    assert_eq!(t.conn("leader").rpc("dashboard.status", json!({}))["result"]["url"], url.as_str());
}

#[test]
fn the_page_never_stops_the_daemon_or_installs_hooks() {
    let t = Team::new();
    let mut page = WsConn::open(&dashboard_url(&t.p), None).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let hooks = json!({"dir": dir.path(), "agent": "w-a", "inbox_bin": "/bin/sh"});
    assert_eq!(code(&page.rpc("session.installHooks", hooks)), "page_acts_as_overseer");
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0, "no hook written");
    assert_eq!(code(&page.rpc("system.shutdown", json!({}))), "page_acts_as_overseer");
    assert!(t.anonymous().rpc("system.hello", json!({}))["result"].is_object(), "the daemon still serves");
}

#[test]
fn a_worker_cannot_cancel_another_workers_task() {
    let t = Team::new();
    let thr = t.dispatched(&[("T1", "w-b")]);
    t.require_credentials();
    let refused = t.conn("w-a").rpc("inbox.cancel", json!({"agent": "w-a", "thread_id": thr[0], "reason": "mine"}));
    assert_eq!(code(&refused), "not_permitted", "{refused}");
    assert_eq!(thread_status(&t, &thr[0]), "pending");
    assert_eq!(task_status(&t, "T1"), "dispatched");
}

#[test]
fn a_worker_cannot_claim_another_workers_dispatched_thread_to_fail_it() {
    let t = Team::new();
    let thr = t.dispatched(&[("T1", "w-b")]);
    t.require_credentials();
    let mut wa = t.conn("w-a");
    let claim = wa.rpc("inbox.claim", json!({"agent": "w-a", "thread_id": thr[0]}));
    assert_eq!(code(&claim), "not_permitted", "{claim}");
    let fail = wa.rpc("inbox.fail", json!({"agent": "w-a", "thread_id": thr[0], "summary": "gave up"}));
    assert_eq!(code(&fail), "not_lease_holder", "{fail}");
    assert_eq!((thread_status(&t, &thr[0]), task_status(&t, "T1")), (json!("pending"), json!("dispatched")));
    // Its worker claims it.
    assert!(t.conn("w-b").rpc("inbox.claim", json!({"agent": "w-b", "thread_id": thr[0]}))["result"].is_object());
}

#[test]
fn a_worker_cannot_record_or_end_the_session_of_another_workers_attempt() {
    let t = Team::new();
    let thr = t.dispatched(&[("T1", "w-b")]);
    t.require_credentials();
    let start = json!({"run_id": "R1", "task_id": "T1", "thread_id": thr[0], "client": "command", "pid": 4242,
        "launcher": "coord-launch:R1", "cwd": "/tmp", "log_path": "/tmp/log"});
    // The lead's launcher records the session; the worker may neither record one nor end it.
    let session = t.conn("leader").rpc("launch.sessionStart", start.clone());
    let session = session["result"]["session_id"].as_str().unwrap_or_else(|| panic!("{session}")).to_string();
    let mut wa = t.conn("w-a");
    assert_eq!(code(&wa.rpc("launch.sessionStart", start)), "unauthenticated");
    let exit = wa.rpc("launch.sessionExit", json!({"session_id": session, "exit_code": 1, "fail_attempt": true}));
    assert_eq!(code(&exit), "unauthenticated", "{exit}");
    assert_eq!((thread_status(&t, &thr[0]), task_status(&t, "T1")), (json!("pending"), json!("dispatched")));
    let sessions = t.anonymous().rpc("launch.sessionList", json!({"run_id": "R1"}));
    assert_eq!(sessions["result"]["sessions"][0]["state"], "running", "{sessions}");
}

#[test]
fn a_worker_cannot_take_another_tasks_queued_mail() {
    let t = Team::new();
    t.dispatched(&[("T1", "w-a"), ("T2", "w-b")]);
    ok(&t.p, &["send", "--from", "leader", "--to-task", "T2", "--summary", "use the v2 schema"]);
    t.require_credentials();
    let mut wa = t.conn("w-a");
    for params in [
        json!({"agent": "w-a", "task_id": "T2"}),
        json!({"task_id": "T2"}),
        json!({"agent": "w-a", "task_id": "T2", "remind": true}),
    ] {
        let method = if params.get("remind").is_some() { "mail.pending" } else { "mail.check" };
        let r = wa.rpc(method, params.clone());
        assert_eq!(code(&r), "not_permitted", "{method} {params}: {r}");
    }
    let got = t.conn("w-b").rpc("mail.check", json!({"agent": "w-b", "task_id": "T2"}));
    let messages = got["result"]["messages"].as_array().unwrap_or_else(|| panic!("{got}"));
    assert!(messages.iter().any(|m| m["summary"] == "use the v2 schema"), "T2's worker still gets its mail: {got}");
}

/// `w-a` asks the lead for permission; the request's thread.
fn permission_request(t: &Team) -> String {
    let payload = json!({"request_id": "perm-a", "tool_name": "Bash", "tool_use_id": "toolu_1",
        "description": "push", "input": {"command": "git push"}});
    let sent = t.conn("w-a").rpc(
        "control.send",
        json!({"from": "w-a", "to": "leader", "type": "permission_request",
        "payload": payload}),
    );
    sent["result"]["thread"]["thread_id"].as_str().unwrap_or_else(|| panic!("{sent}")).to_string()
}

/// The state of request `perm-a`.
fn request_status(t: &Team) -> Value {
    let r = t.anonymous().rpc("control.requests", json!({"request_id": "perm-a", "include_closed": true}));
    r["result"]["requests"][0]["status"].clone()
}

#[test]
fn the_requester_cannot_claim_or_finish_the_leads_request_thread() {
    let t = Team::new();
    t.require_credentials();
    let thread = permission_request(&t);
    let mut wa = t.conn("w-a");
    assert_eq!(code(&wa.rpc("inbox.claim", json!({"agent": "w-a", "thread_id": thread}))), "not_permitted");
    let done = wa.rpc("inbox.done", json!({"agent": "w-a", "thread_id": thread, "summary": "approved, by me"}));
    assert_eq!(code(&done), "not_lease_holder", "{done}");
    assert_eq!(request_status(&t), "open");
}

/// Found by the real-CLI acceptance (launch_agents.rs): the requester's `answer` reply in
/// its own permission request's thread was taken. The answer is the recipient's.
#[test]
fn the_requester_cannot_answer_its_own_request_in_its_thread() {
    let t = Team::new();
    t.require_credentials();
    let thread = permission_request(&t);
    let answer = |who: &str| {
        t.conn(who)
            .rpc("inbox.reply", json!({"from": who, "thread_id": thread, "kind": "answer", "summary": "approved"}))
    };
    assert_eq!(code(&answer("w-a")), "not_permitted", "the requester answered its own request");
    assert_eq!(request_status(&t), "open");
    assert!(answer("leader")["result"].is_object(), "its recipient may reply in it");
}

#[test]
fn a_worker_cannot_withdraw_another_workers_request() {
    let t = Team::new();
    t.require_credentials();
    let thread = permission_request(&t);
    let cancel = |who: &str| t.conn(who).rpc("inbox.cancel", json!({"agent": who, "thread_id": thread, "reason": "x"}));
    assert_eq!(code(&cancel("w-b")), "not_permitted");
    assert_eq!(request_status(&t), "open");
    assert!(cancel("w-a")["result"].is_object(), "its requester withdraws it");
    assert_eq!(request_status(&t), "cancelled");
}

#[test]
fn a_worker_cannot_answer_its_own_question() {
    let t = Team::new();
    let (thread, _) = blocked_task(&t.p, "w-a", "which database?");
    t.require_credentials();
    let mut wa = t.conn("w-a");
    let answer = wa.rpc("orch.answer", json!({"run_id": "R1", "task_id": "T1", "from": "w-a", "summary": "sqlite"}));
    assert_eq!(code(&answer), "not_permitted", "{answer}");
    let reply =
        wa.rpc("inbox.reply", json!({"from": "w-a", "thread_id": thread, "kind": "answer", "summary": "sqlite"}));
    assert_eq!(code(&reply), "not_permitted", "{reply}");
    assert_eq!(task_status(&t, "T1"), "blocked");
    // Another worker's answer is not the lead's either; the lead's is.
    let other = t.conn("w-b").rpc("inbox.reply", json!({"from": "w-b", "thread_id": thread, "summary": "postgres"}));
    assert_eq!(code(&other), "not_permitted", "{other}");
    t.orch("leader", &["answer", "--run", "R1", "--task", "T1", "--summary", "postgres"]).ok();
    assert_eq!(task_status(&t, "T1"), "in_progress");
}

#[test]
fn only_the_lead_stops_the_daemon_serves_the_dashboard_or_installs_hooks() {
    let t = Team::new();
    t.require_credentials();
    let dir = tempfile::tempdir().unwrap();
    let hooks = json!({"dir": dir.path(), "agent": "w-a", "inbox_bin": "/bin/sh"});
    for (mut c, want) in [(t.anonymous(), "unauthenticated"), (t.conn("w-a"), "not_permitted")] {
        for (method, params) in [
            ("session.installHooks", hooks.clone()),
            ("dashboard.start", json!({})),
            ("dashboard.stop", json!({})),
            ("system.shutdown", json!({})),
        ] {
            let r = c.rpc(method, params);
            assert_eq!(code(&r), want, "{method}: {r}");
        }
    }
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0, "no hook written");
    assert!(t.anonymous().rpc("system.hello", json!({}))["result"].is_object(), "the daemon still serves");
    let installed = t.conn("leader").rpc("session.installHooks", hooks);
    assert!(installed["result"]["files"].is_array(), "the lead installs them: {installed}");
}

#[test]
fn coordd_stop_still_stops_a_daemon_whose_shutdown_is_the_leads() {
    let t = Team::new();
    t.require_credentials();
    let stopped = t.p.coordd().args(["stop", "--json"]).run().ok().json();
    assert_eq!(stopped["stopped"], true, "the daemon's own user stops it by signal: {stopped}");
    let Team { d, .. } = t;
    assert!(d.wait().success());
}
