//! Roles behind credentials, end to end (issue 26 §1): with `inbox init --require-credentials
//! --lead NAME`, a worker on its own authenticated connection can neither act on another
//! agent's threads, mail, reservations or runs, nor change the policy, the settings or the
//! roster; each try is refused (1120 `unauthenticated` or 1121 `not_permitted`) and changes
//! nothing. The lead and the admins can.

use coord_tests::{Project, RawConn, blocked_task, fails, ok, register};
use serde_json::{Value, json};

const ENV: &str = coord_proto::types::AGENT_SECRET_ENV;

/// Everything a refused write could have changed: the event stream, the policy, the
/// settings and roles, the agents (with their `last_seen_at`), mail and reservations. Read
/// on a connection authenticated as nobody, whose reads (as any agent) move no one's
/// `last_seen_at`.
fn state(socket: &std::path::Path) -> Vec<Value> {
    let c = &mut RawConn::connect(socket);
    let mut calls = vec![
        ("events.list", json!({"after": 0, "limit": 1000})),
        ("policy.get", json!({})),
        ("agents.list", json!({})),
        ("inbox.init", json!({})),
        ("reservations.list", json!({})),
        ("orch.runShow", json!({"run_id": "R1"})),
    ];
    for agent in ["leader", "other", "wkr"] {
        calls.push(("mail.list", json!({"agent": agent})));
    }
    calls.into_iter().map(|(m, p)| c.rpc(m, p)["result"].clone()).collect()
}

#[test]
fn a_worker_can_change_nothing_that_is_not_its_own() {
    let p = Project::new();
    let d = p.serve();
    let leader = register(&p, "leader");
    let worker = register(&p, "wkr");
    register(&p, "other");
    // The lead's run R1, whose task T1 `other` holds (blocked on a question); mail to
    // `other`; `other`'s reservation; the lead's policy.
    let (thread, _) = blocked_task(&p, "other", "which database?");
    let mail = ok(&p, &["send", "--from", "leader", "--to", "other", "--summary", "a note"]);
    let message = mail["message"]["message_id"].as_str().unwrap().to_string();
    let mut lead = RawConn::connect_as(&d.socket, "leader", &leader);
    let reserved = lead.rpc("reservations.reserve", json!({"agent": "other", "scope": "src/db.rs", "task_id": "T1"}));
    assert!(reserved["result"].is_object(), "{reserved}");
    let gate = json!({"lead": "leader", "rules": [{"tool": "Bash(git push*)"}]});
    let set = lead.rpc("policy.set", json!({"actor": "leader", "policy": gate}));
    assert!(set["result"].is_object(), "{set}");
    ok(&p, &["init", "--require-credentials", "--lead", "leader"]);
    let before = state(&d.socket);

    let mut w = RawConn::connect_as(&d.socket, "wkr", &worker);
    let own = json!({"lead": "wkr", "rules": [{"tool": "Bash(git push*)", "approver": "wkr"}]});
    let as_other = |extra: Value| {
        let mut base = json!({"agent": "other", "thread_id": thread, "summary": "mine now"});
        base.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
        base
    };
    let tries: Vec<(&str, Value, &str)> = vec![
        // Project settings, the roster and the policy: the lead's.
        ("policy.set", json!({"actor": "wkr", "policy": own}), "not_permitted"),
        ("policy.set", json!({"actor": "leader", "policy": own}), "unauthenticated"),
        ("inbox.init", json!({"require_credentials": false}), "not_permitted"),
        ("inbox.init", json!({"lead": "wkr"}), "not_permitted"),
        ("inbox.init", json!({"admins": ["wkr"]}), "not_permitted"),
        ("inbox.init", json!({"strict_agents": true}), "not_permitted"),
        ("agents.register", json!({"agent_id": "w-new", "role": "worker"}), "not_permitted"),
        (
            "agents.register",
            json!({"agent_id": "leader", "role": "worker", "force_update": true, "rotate_secret": true}),
            "not_permitted",
        ),
        ("orch.worktreePrune", json!({}), "not_permitted"),
        // Another agent's threads, mail, reservations and presence.
        ("agents.heartbeat", json!({"agent_id": "other"}), "unauthenticated"),
        ("inbox.send", json!({"from": "leader", "to": "wkr", "summary": "go ahead"}), "unauthenticated"),
        ("inbox.claim", json!({"agent": "other", "thread_id": thread}), "unauthenticated"),
        ("inbox.renew", json!({"agent": "other", "thread_id": thread}), "unauthenticated"),
        ("inbox.update", as_other(json!({"status": "in_progress"})), "unauthenticated"),
        ("inbox.done", as_other(json!({})), "unauthenticated"),
        ("inbox.fail", as_other(json!({})), "unauthenticated"),
        ("inbox.reply", json!({"from": "leader", "thread_id": thread, "summary": "mine now"}), "unauthenticated"),
        ("inbox.cancel", json!({"agent": "leader", "thread_id": thread, "reason": "mine"}), "unauthenticated"),
        ("inbox.markRead", json!({"agent": "other", "thread_id": thread, "read_through_event": 1}), "unauthenticated"),
        ("mail.read", json!({"agent": "other", "message_id": message}), "unauthenticated"),
        ("mail.ack", json!({"agent": "other", "message_id": message}), "unauthenticated"),
        ("mail.withdraw", json!({"agent": "leader", "message_id": message}), "unauthenticated"),
        ("reservations.reserve", json!({"agent": "other", "scope": "docs/x.md", "task_id": "T1"}), "unauthenticated"),
        ("reservations.release", json!({"agent": "other", "scope": "src/db.rs"}), "unauthenticated"),
        ("control.send", json!({"from": "leader", "type": "answer", "to": "other", "payload": {}}), "unauthenticated"),
        ("progress.report", json!({"agent": "other", "line_type": "text", "data": "x"}), "unauthenticated"),
        // The lead's run.
        ("orch.runCreate", json!({"goal": "mine", "created_by": "leader"}), "unauthenticated"),
        ("orch.taskAdd", json!({"run_id": "R1", "task_id": "T9", "title": "x"}), "unauthenticated"),
        ("orch.depAdd", json!({"run_id": "R1", "task_id": "T1", "on": "T1"}), "unauthenticated"),
        ("orch.depRemove", json!({"run_id": "R1", "task_id": "T1", "on": "T1"}), "unauthenticated"),
        ("orch.dispatch", json!({"run_id": "R1", "task_id": "T1", "to": "wkr"}), "unauthenticated"),
        ("orch.retry", json!({"run_id": "R1", "task_id": "T1"}), "unauthenticated"),
        ("orch.reassign", json!({"run_id": "R1", "task_id": "T1", "to": "wkr"}), "unauthenticated"),
        ("orch.answer", json!({"run_id": "R1", "task_id": "T1", "summary": "mine now"}), "unauthenticated"),
        ("orch.cancel", json!({"run_id": "R1", "task_id": "T1", "reason": "mine"}), "unauthenticated"),
        ("orch.councilStart", json!({"run_id": "R1", "topic": "x", "reviewers": ["wkr"]}), "unauthenticated"),
        ("orch.taskEdit", json!({"run_id": "R1", "task_id": "T1", "title": "mine"}), "unauthenticated"),
        ("orch.taskRemove", json!({"run_id": "R1", "task_id": "T1"}), "unauthenticated"),
        ("orch.merge", json!({"run_id": "R1"}), "unauthenticated"),
        ("orch.runFinish", json!({"run_id": "R1"}), "unauthenticated"),
        ("orch.worktreePrune", json!({"run_id": "R1"}), "unauthenticated"),
        // The lead's merge queue and review (issue 36): no verify switched off, no verify
        // reported passed, no approval or comment, as the lead or as itself.
        ("orch.runEdit", json!({"run_id": "R1", "verify": "", "require_approval": false}), "unauthenticated"),
        ("orch.queueNext", json!({"run_id": "R1"}), "unauthenticated"),
        (
            "orch.queueReport",
            json!({"run_id": "R1", "task_id": "T1", "attempt": 1, "commit": "0".repeat(40), "passed": true}),
            "unauthenticated",
        ),
        ("orch.reviewApprove", json!({"run_id": "R1", "task_id": "T1"}), "unauthenticated"),
        ("orch.reviewApprove", json!({"run_id": "R1", "task_id": "T1", "author": "wkr"}), "unauthenticated"),
        ("orch.reviewRequestChanges", json!({"run_id": "R1", "task_id": "T1", "author": "wkr"}), "unauthenticated"),
        (
            "orch.reviewComment",
            json!({"run_id": "R1", "task_id": "T1", "path": "a.rs", "line": 1, "body": "x", "author": "wkr"}),
            "unauthenticated",
        ),
        // The lead's run's budget (issue 33): a worker can neither lift nor spend it.
        ("launch.budgetSet", json!({"run_id": "R1", "max_cost_usd": 1000.0}), "unauthenticated"),
    ];
    for (method, params, code) in &tries {
        let r = w.rpc(method, params.clone());
        assert_eq!(r["error"]["data"]["code"], *code, "{method} {params}: {r}");
    }
    for (after, before) in state(&d.socket).iter().zip(&before) {
        assert_eq!(after, before, "a refused write changes nothing");
    }
    // The connection is still usable, and the worker still does its own work.
    let own_mail = w.rpc("inbox.send", json!({"from": "wkr", "to": "leader", "summary": "done"}));
    assert!(own_mail["result"].is_object(), "{own_mail}");
}

#[test]
fn the_lead_and_its_admins_change_the_rules_and_the_lead_changes_only_with_their_secret() {
    let p = Project::new();
    let _d = p.serve();
    let leader = register(&p, "leader");
    let deputy = register(&p, "deputy");
    let worker = register(&p, "wkr");
    let inbox = |secret: &str, args: &[&str]| p.inbox().args(args).json_flag().env(ENV, secret).run();
    let first = ok(&p, &["init", "--require-credentials", "--lead", "leader", "--admin", "deputy"]);
    assert_eq!((first["lead"].clone(), first["admins"].clone()), (json!("leader"), json!(["deputy"])), "{first}");

    // Without a secret, changing the lead is refused; a worker's secret does not do either.
    fails(&p, &["init", "--lead", "wkr"], 20, "unauthenticated");
    assert_eq!(inbox(&worker, &["init", "--lead", "wkr"]).code(20).json()["error"]["code"], "not_permitted");
    // An admin may change the policy and the roster; the lead may hand over the lead.
    let policy = p.inbox().args(["--agent", "deputy", "policy", "lead", "deputy"]).json_flag().env(ENV, &deputy).run();
    policy.ok();
    let added = inbox(&deputy, &["agent", "register", "--name", "w-new", "--role", "worker"]).ok().json();
    assert!(added["secret"].is_string(), "{added}");
    let handed = inbox(&leader, &["init", "--lead", "wkr"]).ok().json();
    assert_eq!(handed["lead"], "wkr", "{handed}");
    assert_eq!(inbox(&leader, &["init", "--lead", "leader"]).code(20).json()["error"]["code"], "not_permitted");
    inbox(&worker, &["init", "--lead", "leader"]).ok();
}

#[test]
fn credentials_are_required_only_with_a_lead_that_can_prove_itself() {
    let p = Project::new();
    let _d = p.serve();
    let no_lead = fails(&p, &["init", "--require-credentials"], 30, "lead_required");
    assert!(no_lead["error"]["message"].as_str().unwrap().contains("lead"), "{no_lead}");
    // An agent only seen, never registered, has no secret.
    ok(&p, &["send", "--from", "ghost", "--to", "w1", "--summary", "hi"]);
    fails(&p, &["init", "--require-credentials", "--lead", "ghost"], 30, "lead_required");
    let off = ok(&p, &["init"]);
    assert_eq!((off["require_credentials"].clone(), off["lead"].clone()), (json!(false), Value::Null), "{off}");
}
