//! The `bb agent` contract through the real `inbox` binary and daemon: identity, mail with
//! read/ack, broadcast, strict agents, status, events and the worker workflow (the seed's
//! test matrix, section 10).

use coord_tests::{Project, fails, message_id, ok, thread_id};
use serde_json::Value;

fn register(p: &Project, id: &str, role: &str) -> Value {
    ok(p, &["agent", "register", "--name", id, "--role", role])
}

fn send_mail(p: &Project, from: &str, to: &str, category: &str, task: &str, summary: &str) -> Value {
    ok(p, &["send", "--from", from, "--to", to, "--category", category, "--task", task, "--summary", summary])
}

#[test]
fn identity_register_duplicate_force_update_show_and_list() {
    let p = Project::new();
    let _d = p.serve();
    let r = ok(&p, &["agent", "register", "--name", "agent-ui-1", "--role", "ui", "--display", "UI Agent 1"]);
    let a = &r["agent"];
    assert_eq!(a["agent_id"], "agent-ui-1");
    assert_eq!(a["display_name"], "UI Agent 1");
    assert_eq!(a["role"], "ui");
    assert_eq!(a["status"], "idle");
    assert_eq!(a["registered"], true);
    assert_eq!(a["version"], 1);
    assert!(r["event_id"].as_i64().unwrap() > 0);

    fails(&p, &["agent", "register", "--name", "agent-ui-1", "--role", "ui"], 20, "duplicate_agent_id");

    let u = ok(&p, &["agent", "register", "--name", "agent-ui-1", "--role", "frontend", "--force-update"]);
    assert_eq!(u["agent"]["role"], "frontend");
    assert_eq!(u["agent"]["display_name"], "UI Agent 1", "a force update without --display keeps the name");
    assert_eq!(u["agent"]["version"], 2);
    assert_eq!(u["agent"]["created_at"], a["created_at"]);

    for bad in ["ab", "Agent-1", "agent_1", "-agent", "agent-", "a--b", &"a".repeat(49), "broadcast"] {
        fails(&p, &["agent", "register", &format!("--name={bad}"), "--role", "ui"], 30, "invalid_args");
    }
    assert_eq!(register(&p, &"a".repeat(48), "x")["agent"]["agent_id"].as_str().unwrap().len(), 48);
    fails(&p, &["agent", "register", "--name", "agent-x", "--role", "  "], 30, "invalid_args");

    register(&p, "agent-graph-1", "graph");
    register(&p, "agent-api-1", "backend");
    let shown = ok(&p, &["agent", "show", "--agent", "agent-graph-1"]);
    assert_eq!(shown["agent"]["role"], "graph");
    fails(&p, &["agent", "show", "--agent", "nobody-here"], 40, "agent_not_found");

    let ids = |v: &Value| -> Vec<String> {
        v["agents"].as_array().unwrap().iter().map(|a| a["agent_id"].as_str().unwrap().to_string()).collect()
    };
    let all = ok(&p, &["agent", "list"]);
    let mut sorted = ids(&all);
    sorted.sort();
    assert_eq!(ids(&all), sorted, "list is sorted by id");
    assert_eq!(ids(&ok(&p, &["agent", "list", "--role", "graph"])), ["agent-graph-1"]);

    let hb = ok(&p, &["agent", "heartbeat", "--agent", "agent-api-1", "--status", "busy"]);
    assert_eq!(hb["agent"]["status"], "busy");
    assert!(hb["event_id"].is_i64());
    let same = ok(&p, &["agent", "heartbeat", "--agent", "agent-api-1", "--status", "busy"]);
    assert!(same["event_id"].is_null(), "no status change, no event");
    assert_eq!(ids(&ok(&p, &["agent", "list", "--status", "busy"])), ["agent-api-1"]);
    p.inbox().args(["agent", "heartbeat", "--agent", "agent-api-1", "--status", "asleep"]).run().code(30);
}

#[test]
fn last_seen_advances_on_every_call_and_unknown_names_are_recorded() {
    let p = Project::new();
    let _d = p.serve();
    register(&p, "agent-ui-1", "ui");
    let seen = |p: &Project| ok(p, &["agent", "show", "--agent", "agent-ui-1"])["agent"]["last_seen_at"].clone();
    let mut last = seen(&p);
    for call in [
        vec!["send", "--from", "agent-ui-1", "--to", "stranger", "--summary", "hi"],
        vec!["--agent", "agent-ui-1", "fetch"],
        vec!["mail", "--agent", "agent-ui-1"],
        vec!["agent", "heartbeat", "--agent", "agent-ui-1"],
    ] {
        let out = p.inbox().args(&call).json_flag().run();
        assert!(out.code == 0 || out.code == 10, "{out:?}");
        let now = seen(&p);
        assert!(now.as_str() >= last.as_str(), "{call:?}: {now} < {last}");
        assert_ne!(now, last, "{call:?} must advance last_seen_at");
        last = now;
    }
    // Without strict agents, the unknown recipient was recorded, unregistered.
    let all = ok(&p, &["agent", "list", "--all"]);
    let stranger = all["agents"].as_array().unwrap().iter().find(|a| a["agent_id"] == "stranger").unwrap().clone();
    assert_eq!(stranger["registered"], false);
    assert!(stranger["last_seen_at"].is_null(), "never made a call");
    let registered = ok(&p, &["agent", "list", "--registered"]);
    assert!(registered["agents"].as_array().unwrap().iter().all(|a| a["registered"] == true));
    // Registering a recorded agent is not a duplicate.
    assert_eq!(register(&p, "stranger", "ops")["agent"]["registered"], true);
}

#[test]
fn strict_agents_refuse_unknown_senders_and_recipients() {
    let p = Project::new();
    let _d = p.serve();
    assert_eq!(ok(&p, &["init", "--strict-agents"])["strict_agents"], true);
    register(&p, "agent-ui-1", "ui");
    register(&p, "agent-graph-1", "graph");
    fails(&p, &["send", "--from", "ghost-1", "--to", "agent-ui-1", "--summary", "x"], 40, "unknown_sender");
    fails(&p, &["send", "--from", "agent-ui-1", "--to", "ghost-1", "--summary", "x"], 40, "unknown_recipient");
    fails(&p, &["read", "--agent", "ghost-1", "--message", "msg_x"], 40, "agent_not_found");
    send_mail(&p, "agent-ui-1", "agent-graph-1", "INFO", "bb-1", "fine");
    send_mail(&p, "agent-ui-1", "broadcast", "DECISION", "bb-1", "broadcast is exempt");
    assert!(
        ok(&p, &["agent", "list", "--all"])["agents"].as_array().unwrap().iter().all(|a| a["agent_id"] != "ghost-1")
    );
    // The setting is stored in the database: it survives a restart, and can be lifted.
    assert_eq!(ok(&p, &["init"])["strict_agents"], true);
    assert_eq!(ok(&p, &["init", "--no-strict-agents"])["strict_agents"], false);
    ok(&p, &["send", "--from", "ghost-1", "--to", "agent-ui-1", "--summary", "now accepted"]);
}

#[test]
fn mail_send_read_ack_and_state_filters() {
    let p = Project::new();
    let _d = p.serve();
    register(&p, "agent-ui-1", "ui");
    register(&p, "agent-graph-1", "graph");
    let handoff = send_mail(&p, "agent-ui-1", "agent-graph-1", "HANDOFF", "bb-dcv.6", "Edge direction patch ready");
    assert_eq!(handoff["message"]["category"], "HANDOFF");
    assert_eq!(handoff["message"]["requires_ack"], true, "HANDOFF requires an ack by default");
    let info = send_mail(&p, "agent-ui-1", "agent-graph-1", "info", "bb-dcv.6", "FYI");
    assert_eq!(info["message"]["category"], "INFO", "categories are case-insensitive on input");
    assert_eq!(info["message"]["requires_ack"], false);
    let asked = ok(
        &p,
        &[
            "send",
            "--from",
            "agent-ui-1",
            "--to",
            "agent-graph-1",
            "--category",
            "DECISION",
            "--task",
            "bb-2",
            "--requires-ack",
            "--summary",
            "pick one",
        ],
    );
    assert_eq!(asked["message"]["requires_ack"], true);
    let blocked = ok(
        &p,
        &[
            "send",
            "--from",
            "agent-ui-1",
            "--to",
            "agent-graph-1",
            "--category",
            "BLOCKED",
            "--task",
            "bb-2",
            "--no-ack",
            "--summary",
            "no ack please",
        ],
    );
    assert_eq!(blocked["message"]["requires_ack"], false);
    fails(
        &p,
        &[
            "send",
            "--from",
            "agent-ui-1",
            "--to",
            "agent-graph-1",
            "--category",
            "URGENT",
            "--task",
            "t",
            "--summary",
            "x",
        ],
        30,
        "invalid_category",
    );
    fails(
        &p,
        &["send", "--from", "agent-ui-1", "--to", "agent-graph-1", "--category", "INFO", "--summary", "x"],
        30,
        "missing_task_id",
    );

    // Newest first; all unread.
    let mail = ok(&p, &["mail", "--agent", "agent-graph-1"]);
    let items = mail["mail"].as_array().unwrap();
    assert_eq!(items.len(), 4);
    assert_eq!(items[0]["message_id"], blocked["message"]["message_id"]);
    assert_eq!(items[3]["message_id"], handoff["message"]["message_id"]);
    assert!(items.iter().all(|m| m["state"] == "unread" && m["to_agent"] == "agent-graph-1"));
    assert_eq!(items[3]["subject"], "Edge direction patch ready");
    assert_eq!(ok(&p, &["mail", "--agent", "agent-graph-1", "--task", "bb-2"])["mail"].as_array().unwrap().len(), 2);
    assert_eq!(ok(&p, &["mail", "--agent", "agent-graph-1", "--limit", "1"])["mail"].as_array().unwrap().len(), 1);
    fails(&p, &["mail", "--agent", "agent-graph-1", "--limit", "501"], 30, "invalid_args");
    assert!(ok(&p, &["mail", "--agent", "agent-ui-1"])["mail"].as_array().unwrap().is_empty(), "senders get no copy");

    // unread -> read -> acked; acked is terminal.
    let m = message_id(&handoff);
    let read = ok(&p, &["read", "--agent", "agent-graph-1", "--message", &m]);
    assert_eq!(read["mail"]["state"], "read");
    assert!(read["mail"]["read_at"].is_string());
    assert!(ok(&p, &["read", "--agent", "agent-graph-1", "--message", &m])["event_id"].is_null());
    fails(&p, &["ack", "--agent", "agent-ui-1", "--message", &m], 20, "ack_forbidden");
    fails(&p, &["ack", "--agent", "agent-graph-1", "--message", "msg_missing"], 40, "message_not_found");
    fails(&p, &["read", "--agent", "agent-graph-1", "--message", "msg_missing"], 40, "message_not_found");
    let acked = ok(&p, &["ack", "--agent", "agent-graph-1", "--message", &m]);
    assert_eq!(acked["mail"]["state"], "acked");
    assert_eq!(acked["mail"]["read_at"], read["mail"]["read_at"]);
    assert!(acked["mail"]["acked_at"].is_string());
    let again = ok(&p, &["read", "--agent", "agent-graph-1", "--message", &m]);
    assert_eq!(again["mail"]["state"], "acked", "acked is terminal");
    // An INFO message may be acked straight from unread.
    let i = ok(&p, &["ack", "--agent", "agent-graph-1", "--message", &message_id(&info)]);
    assert_eq!(i["mail"]["state"], "acked");
    assert!(i["mail"]["read_at"].is_string());

    let count =
        |state: &str| ok(&p, &["mail", "--agent", "agent-graph-1", "--state", state])["mail"].as_array().unwrap().len();
    assert_eq!((count("unread"), count("read"), count("acked")), (2, 0, 2));

    // Mail is built on threads: `show` of the message's thread shows it.
    let shown = ok(&p, &["show", "--thread", &thread_id(&handoff)]);
    assert_eq!(shown["messages"][0]["message_id"], m.as_str());
    assert_eq!(shown["messages"][0]["category"], "HANDOFF");
}

#[test]
fn broadcast_gives_each_registered_recipient_its_own_state() {
    let p = Project::new();
    let _d = p.serve();
    for (id, role) in [("lead-1", "lead"), ("worker-a", "w"), ("worker-b", "w"), ("worker-c", "w")] {
        register(&p, id, role);
    }
    let b = send_mail(&p, "lead-1", "broadcast", "HANDOFF", "bb-9", "everyone: rebase on main");
    let m = message_id(&b);
    assert_eq!(b["message"]["to_agent"], "broadcast");
    ok(&p, &["read", "--agent", "worker-a", "--message", &m]);
    ok(&p, &["ack", "--agent", "worker-b", "--message", &m]);
    let state_of = |agent: &str| ok(&p, &["mail", "--agent", agent])["mail"][0]["state"].clone();
    assert_eq!(state_of("worker-a"), "read");
    assert_eq!(state_of("worker-b"), "acked");
    assert_eq!(state_of("worker-c"), "unread");
    assert!(ok(&p, &["mail", "--agent", "lead-1"])["mail"].as_array().unwrap().is_empty());
    let st = ok(&p, &["status", "--task", "bb-9"]);
    assert_eq!(st["counts"]["unread"], 1);
    assert_eq!(st["counts"]["read"], 1);
    assert_eq!(st["counts"]["acked"], 1);
    assert_eq!(st["counts"]["unacked_required"], 2);
    let waiting: Vec<&str> =
        st["unacked"].as_array().unwrap().iter().map(|u| u["to_agent"].as_str().unwrap()).collect();
    assert_eq!(waiting, ["worker-a", "worker-c"]);
}

#[test]
fn status_summarises_mixed_states_by_task_and_agent() {
    let p = Project::new();
    let _d = p.serve();
    for id in ["agent-ui-1", "agent-graph-1", "agent-api-1"] {
        register(&p, id, "dev");
    }
    let h1 = send_mail(&p, "agent-ui-1", "agent-graph-1", "HANDOFF", "bb-1", "h1");
    let h2 = send_mail(&p, "agent-ui-1", "agent-api-1", "BLOCKED", "bb-1", "h2");
    send_mail(&p, "agent-api-1", "agent-graph-1", "INFO", "bb-2", "i1");
    ok(&p, &["ack", "--agent", "agent-api-1", "--message", &message_id(&h2)]);
    ok(&p, &["reserve", "--agent", "agent-graph-1", "--scope", "src/graph/**", "--task", "bb-1"]);
    ok(&p, &["reserve", "--agent", "agent-api-1", "--scope", "api", "--task", "bb-2"]);
    ok(&p, &["reserve", "--agent", "agent-api-1", "--scope", "old", "--task", "bb-2"]);
    ok(&p, &["release", "--agent", "agent-api-1", "--scope", "old"]);

    let all = ok(&p, &["status"]);
    assert_eq!(all["reservations"].as_array().unwrap().len(), 2);
    let c = &all["counts"];
    assert_eq!(
        (c["unread"].as_u64(), c["acked"].as_u64(), c["unacked_required"].as_u64()),
        (Some(2), Some(1), Some(1))
    );
    assert_eq!((c["reservations_active"].as_u64(), c["reservations_released"].as_u64()), (Some(2), Some(1)));
    let u = &all["unacked"][0];
    assert_eq!(u["message_id"], h1["message"]["message_id"]);
    assert!(u["waiting_seconds"].is_u64());

    let bb1 = ok(&p, &["status", "--task", "bb-1"]);
    assert_eq!(bb1["reservations"][0]["scope"], "src/graph/**");
    assert_eq!(bb1["counts"]["unread"], 1);
    assert_eq!(bb1["counts"]["acked"], 1);
    let api = ok(&p, &["--agent", "agent-api-1", "status"]);
    assert_eq!(api["reservations"][0]["scope"], "api");
    assert_eq!(api["counts"]["acked"], 1, "counts are of the agent's own mail");
    assert_eq!(api["counts"]["unread"], 0);
    assert!(api["unacked"].as_array().unwrap().is_empty());
    // COORD_AGENT alone does not narrow a status (it names who you are, not a filter).
    let env = p.inbox().args(["status"]).env("COORD_AGENT", "agent-api-1").json_flag().run().ok().json();
    assert_eq!(env["reservations"].as_array().unwrap().len(), 2);
    let text = p.inbox().args(["status"]).run().ok().stdout;
    assert!(text.contains("src/graph/** by agent-graph-1"), "{text}");
}

#[test]
fn watch_sees_registrations_mail_reads_acks_and_reservations() {
    let p = Project::new();
    let _d = p.serve();
    register(&p, "agent-ui-1", "ui");
    register(&p, "agent-graph-1", "graph");
    let s = send_mail(&p, "agent-ui-1", "agent-graph-1", "HANDOFF", "bb-1", "go");
    ok(&p, &["read", "--agent", "agent-graph-1", "--message", &message_id(&s)]);
    ok(&p, &["ack", "--agent", "agent-graph-1", "--message", &message_id(&s)]);
    ok(&p, &["agent", "heartbeat", "--agent", "agent-graph-1", "--status", "busy"]);
    ok(&p, &["reserve", "--agent", "agent-graph-1", "--scope", "src", "--task", "bb-1"]);
    ok(&p, &["release", "--agent", "agent-graph-1", "--scope", "src"]);
    let out = p.inbox().args(["watch", "--after-event", "0", "--follow", "--count", "8"]).json_flag().run().ok();
    let types: Vec<String> =
        out.json_lines().iter().map(|e| e["event"]["event_type"].as_str().unwrap().to_string()).collect();
    assert_eq!(
        types,
        [
            "agent.registered",
            "agent.registered",
            "thread.created",
            "mail.read",
            "mail.acked",
            "agent.status",
            "reservation.created",
            "reservation.released"
        ]
    );
}

/// The seed's workflow: a claimed task and the coordination layer together.
#[test]
fn workflow_claim_reserve_handoff_ack_release() {
    let p = Project::new();
    let _d = p.serve();
    register(&p, "lead-1", "lead");
    register(&p, "worker-1", "backend");
    // The leader hands a task over; the worker claims it (the seed's `bd --claim`).
    let task = send_mail(&p, "lead-1", "worker-1", "HANDOFF", "bb-7", "Implement the parser");
    let thr = thread_id(&task);
    ok(&p, &["claim", "--agent", "worker-1", "--thread", &thr]);
    ok(&p, &["ack", "--agent", "worker-1", "--message", &message_id(&task)]);
    let r = ok(&p, &["reserve", "--agent", "worker-1", "--scope", "src/parser/**", "--task", "bb-7"]);
    assert_eq!(r["reservation"]["generation"], 1);
    let e = fails(&p, &["reserve", "--agent", "worker-1", "--scope", "src/parser/**"], 30, "invalid_args");
    assert!(e["error"]["message"].as_str().unwrap().contains("--task"), "in the user's words: {e}");
    let st = ok(&p, &["status", "--task", "bb-7"]);
    assert_eq!(st["reservations"].as_array().unwrap().len(), 1);
    assert_eq!(st["counts"]["unacked_required"], 0);
    // Done: the result goes back in the same thread, and the scope is released.
    ok(&p, &["done", "--agent", "worker-1", "--thread", &thr, "--summary", "parser done"]);
    ok(&p, &["release", "--agent", "worker-1", "--scope", "src/parser/**"]);
    let lead_mail = ok(&p, &["mail", "--agent", "lead-1"]);
    assert_eq!(lead_mail["mail"][0]["summary"], "parser done");
    assert_eq!(lead_mail["mail"][0]["kind"], "result");
    let st = ok(&p, &["status", "--task", "bb-7"]);
    assert!(st["reservations"].as_array().unwrap().is_empty());
    assert_eq!(st["counts"]["reservations_released"], 1);
}
