//! Typed control messages end to end: every type through the Rust client and through the
//! CLI, unknown types and raw payloads untouched, requests answered once and only by their
//! addressee, retried sends stored once, and the lead's view (`orch wait`, `orch status`).

use std::time::Duration;

use coord_client::Client;
use coord_proto::api::{ControlApiClient, EventsApiClient};
use coord_proto::types::*;
use coord_tests::{Project, control_samples, fails, ok, ok_as, orch_wait, sample_sender};
use serde_json::{Value, json};

/// Only matters when something is broken.
const LIMIT: Duration = Duration::from_secs(60);

/// The typed messages addressed to `to` after `after`, as stored.
async fn typed_to(c: &Client, to: &str, after: i64) -> Vec<Message> {
    let filter = EventFilter {
        after_event: Some(after),
        to: Some(to.into()),
        message_types: vec![ANY_TYPE.into()],
        ..Default::default()
    };
    let r = c.events_list(EventsListParams { filter, limit: Some(100) }).await;
    r.unwrap().events.into_iter().filter_map(|e| e.message).collect()
}

async fn next_message(sub: &mut coord_client::EventStream) -> Message {
    let ev = sub.next_within(Some(LIMIT)).await.unwrap().expect("event");
    ev.message.expect("the event carries its message")
}

fn send_params(t: &str, payload: &Value) -> ControlSendParams {
    let (from, to) = sample_sender(t);
    let is_answer = t.ends_with("_response") || t.starts_with("shutdown_a") || t.starts_with("shutdown_rej");
    ControlSendParams {
        from: from.into(),
        msg_type: t.into(),
        to: if is_answer { None } else { Some(to.into()) },
        payload: payload.clone(),
        ..Default::default()
    }
}

#[tokio::test]
async fn every_type_round_trips_through_the_client_with_its_payload() {
    let p = Project::new();
    let _d = p.serve();
    let c = p.client().await;
    // A subscription for each side, opened before anything is sent.
    let mut subs = Vec::new();
    for who in ["lead", "w1"] {
        let f = EventFilter {
            after_event: Some(0),
            to: Some(who.into()),
            message_types: vec![ANY_TYPE.into()],
            ..Default::default()
        };
        subs.push(c.subscribe(f).await.unwrap());
    }
    for (t, payload) in control_samples() {
        let r = c.control_send(send_params(t, &payload)).await.unwrap_or_else(|e| panic!("{t}: {e}"));
        assert_eq!(r.message.msg_type.as_deref(), Some(t));
        // Stored as given; a shutdown request also gets its expiry from the daemon.
        let mut stored = r.message.payload_json.clone();
        if t == "shutdown_request" {
            assert!(stored.as_object_mut().unwrap().remove("expires_at").is_some(), "{t}: expires_at");
        }
        assert_eq!(stored, payload, "{t}: stored as given");
    }
    let samples = control_samples();
    let mut seen = 0;
    for (who, sub) in ["lead", "w1"].iter().zip(subs.iter_mut()) {
        let expected: Vec<_> = samples.iter().filter(|(t, _)| sample_sender(t).1 == *who).collect();
        for (t, payload) in expected {
            let mut m = next_message(sub).await;
            if m.payload_json["idle_reason"] == "shutdown" {
                m = next_message(sub).await; // what approving stop-1 told the lead
            }
            if *t == "shutdown_request" {
                m.payload_json.as_object_mut().unwrap().remove("expires_at");
            }
            assert_eq!((m.msg_type.as_deref(), &m.payload_json), (Some(*t), payload), "to {who}");
            assert_eq!(m.to_agent, *who);
            seen += 1;
        }
    }
    assert_eq!(seen, samples.len());

    // Requests are closed by their answers, with the answer attached.
    let all = c.control_requests(RequestsParams { include_closed: true, ..Default::default() }).await.unwrap();
    let status = |id: &str| all.requests.iter().find(|r| r.request_id == id).map(|r| r.status);
    for id in ["perm-1", "plan-1", "stop-1", "stop-2"] {
        assert_eq!(status(id), Some(RequestStatus::Answered), "{id}");
    }
    let perm = all.requests.iter().find(|r| r.request_id == "perm-1").unwrap();
    let answer = perm.response.as_ref().expect("answer");
    assert_eq!(answer.payload_json["updated_input"], json!({"command": "git push --dry-run"}));
    assert!(c.control_requests(RequestsParams::default()).await.unwrap().requests.is_empty(), "none open");
}

#[tokio::test]
async fn every_type_round_trips_through_the_cli() {
    let p = Project::new();
    let _d = p.serve();
    for (t, payload) in control_samples() {
        let (from, to) = sample_sender(t);
        let mut args = vec!["control", "--type", t];
        let text = payload.to_string();
        args.extend(["--payload", &text]);
        if !t.ends_with("_response") && !t.starts_with("shutdown_a") && !t.starts_with("shutdown_rej") {
            args.extend(["--to", to]);
        }
        let v = ok_as(&p, from, &args);
        assert_eq!(v["message"]["type"], t);
    }
    // `inbox watch --type` selects by type; the payloads come back as the JSON they were.
    for (t, payload) in control_samples().into_iter().filter(|(t, _)| *t != "shutdown_request") {
        let v = ok(&p, &["watch", "--type", t, "--after-event", "0", "--timeout-seconds", "30"]);
        assert_eq!(v["event"]["message"]["type"], t);
        assert_eq!(v["event"]["message"]["payload_json"], payload, "{t}");
    }
    // `inbox requests` lists what is addressed to you; `--all` the answered ones too.
    let open = p.inbox().args(["--agent", "lead", "requests", "--json"]).run().code(10).json();
    assert_eq!(open["requests"], json!([]));
    let all = ok_as(&p, "lead", &["requests", "--all"]);
    assert_eq!(all["requests"].as_array().unwrap().len(), 2, "perm-1 and plan-1 were sent to lead");
}

#[tokio::test]
async fn unknown_types_and_raw_payloads_pass_through_untouched() {
    let p = Project::new();
    let _d = p.serve();
    let raw = r#"{"nested":{"list":[1,2,{"deep":true}]},"text":"a \"quoted\" line","n":12.5}"#;
    let v = ok_as(&p, "a1", &["control", "--type", "brand_new_type", "--to", "b1", "--payload", raw]);
    let expected: Value = serde_json::from_str(raw).unwrap();
    assert_eq!(v["message"]["payload_json"], expected, "an object, not a string holding JSON");
    assert_eq!(v["thread"]["status"], "done", "a notice is complete at birth");
    let c = p.client().await;
    let got = typed_to(&c, "b1", 0).await;
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].msg_type.as_deref(), Some("brand_new_type"));
    assert_eq!(got[0].payload_json, expected);
}

#[tokio::test]
async fn known_payloads_are_checked() {
    let p = Project::new();
    let _d = p.serve();
    let e = fails(
        &p,
        &[
            "--agent",
            "w1",
            "control",
            "--type",
            "idle_notification",
            "--to",
            "lead",
            "--payload",
            r#"{"idle_reason":"sleepy"}"#,
        ],
        30,
        "invalid_input",
    );
    assert!(e["error"]["message"].as_str().unwrap().contains("sleepy"), "{e}");
    fails(&p, &["--agent", "lead", "permit", "--request", "nope", "--allow"], 40, "not_found");
    // A payload that is not a JSON object is a bad flag value, refused before any call.
    fails(&p, &["--agent", "w1", "control", "--type", "x", "--to", "a", "--payload", "[1]"], 30, "invalid_args");
}

#[tokio::test]
async fn only_the_addressee_answers_a_request_and_only_once() {
    let p = Project::new();
    let _d = p.serve();
    let payload = r#"{"request_id":"r1","tool_name":"Bash","input":{"command":"rm -rf build"}}"#;
    ok_as(&p, "w1", &["control", "--type", "permission_request", "--to", "lead", "--payload", payload]);
    fails(&p, &["--agent", "intruder", "permit", "--request", "r1", "--allow"], 20, "response_forbidden");
    let v = ok_as(&p, "lead", &["permit", "--request", "r1", "--deny", "--reason", "not now"]);
    assert_eq!(v["message"]["to_agent"], "w1", "the answer goes to the requester");
    assert_eq!(v["thread"]["status"], "done");
    let again = fails(&p, &["--agent", "lead", "permit", "--request", "r1", "--allow"], 30, "invalid_transition");
    assert!(again["error"]["message"].as_str().unwrap().contains("already answered"), "{again}");

    // A request its sender withdrew (cancelled its thread) cannot be answered either.
    let v = ok_as(&p, "w1", &["plan", "--plan", "rewrite everything", "--to", "lead"]);
    let request = v["request_id"].as_str().unwrap().to_string();
    ok_as(&p, "w1", &["cancel", "--thread", v["thread"]["thread_id"].as_str().unwrap(), "--reason", "gave up"]);
    let e = fails(&p, &["--agent", "lead", "approve-plan", "--request", &request], 30, "invalid_transition");
    assert!(e["error"]["message"].as_str().unwrap().contains("cancelled"), "{e}");
    fails(&p, &["--agent", "lead", "permit", "--request", &request, "--allow"], 30, "invalid_input");
}

#[tokio::test]
async fn a_retried_send_with_the_same_message_id_is_stored_once() {
    let p = Project::new();
    let _d = p.serve();
    let c = p.client().await;
    let id = coord_inbox::new_message_id();
    let params = ControlSendParams {
        from: "lead".into(),
        to: Some("w1".into()),
        msg_type: "task_assignment".into(),
        payload: json!({"task_id": "T1", "subject": "s"}),
        message_id: Some(id.clone()),
        ..Default::default()
    };
    let first = c.control_send(params.clone()).await.unwrap();
    let second = c.control_send(params.clone()).await.unwrap();
    assert!(!first.duplicate && second.duplicate);
    assert_eq!((first.message.message_id, second.event_id), (id.clone(), first.event_id));
    assert_eq!(typed_to(&c, "w1", 0).await.len(), 1);
    let clash = ControlSendParams { msg_type: "other".into(), ..params };
    let e = c.control_send(clash).await.unwrap_err();
    assert_eq!(coord_client::ClientError::from(e).code(), "duplicate_message_id");
}

#[tokio::test]
async fn the_recipient_defaults_to_the_runs_creator_then_the_policys_lead() {
    let p = Project::new();
    let _d = p.serve();
    p.orch().args(["run", "create", "--id", "R1", "--goal", "g", "--created-by", "boss", "--json"]).run().ok();
    let v = ok_as(&p, "w1", &["idle", "--run", "R1", "--summary", "all green"]);
    assert_eq!(v["message"]["to_agent"], "boss");
    fails(&p, &["--agent", "w1", "idle"], 30, "invalid_input");
    ok_as(&p, "boss", &["policy", "lead", "chief"]);
    let v = ok_as(&p, "w1", &["idle", "--reason", "failed", "--failure-reason", "disk full"]);
    assert_eq!(v["message"]["to_agent"], "chief");
    assert_eq!(v["message"]["payload_json"]["idle_reason"], "failed");
}

#[tokio::test]
async fn orch_wait_wakes_the_lead_on_requests_and_idle_workers_and_status_lists_them() {
    let p = Project::new();
    let _d = p.serve();
    p.orch().args(["run", "create", "--id", "R1", "--goal", "g", "--created-by", "lead", "--json"]).run().ok();
    let mut cursor = 0;
    let perm = r#"{"tool_name":"Bash","input":{"command":"git push"}}"#;
    ok_as(&p, "w1", &["control", "--type", "permission_request", "--run", "R1", "--payload", perm]);
    let v = orch_wait(&p, "R1", cursor);
    assert_eq!(v["event"]["message"]["type"], "permission_request");
    cursor = v["next_event_id"].as_i64().unwrap();
    ok_as(&p, "w2", &["plan", "--plan", "step 1", "--run", "R1", "--task", "T2"]);
    let v = orch_wait(&p, "R1", cursor);
    assert_eq!(v["event"]["message"]["type"], "plan_approval_request");
    cursor = v["next_event_id"].as_i64().unwrap();
    ok_as(&p, "w1", &["idle", "--run", "R1"]);
    assert_eq!(orch_wait(&p, "R1", cursor)["event"]["message"]["type"], "idle_notification");

    let status = p.orch().args(["status", "--run", "R1", "--json"]).run().ok().json();
    let open: Vec<&str> =
        status["open_requests"].as_array().unwrap().iter().map(|r| r["type"].as_str().unwrap()).collect();
    assert_eq!(open, vec!["permission_request", "plan_approval_request"]);
    let text = p.orch().args(["status", "--run", "R1"]).run().ok().stdout;
    assert!(text.contains("open requests:") && text.contains("permit --request"), "{text}");
}
