//! Pushed attention: what needs a live lead, written into its session as turns. One
//! server-side subscription follows the run's events the lead acts on (the selection
//! `orch mcp`'s `wait_for_attention` and the lead's Stop hook use: [`EventType::ACTIONABLE`]
//! and the workers' requests, [`MessageType::lead_actionable`]); each event becomes one
//! turn, a blocked task's with the worker's question. Never a poll.

use coord_client::{Client, ClientError, EventStream};
use coord_proto::api::OrchApiClient;
use coord_proto::types::*;

use crate::feed::{self, Turn};

/// Follow what needs the lead of `run_id` after `after`.
pub async fn subscribe(c: &Client, run_id: &str, after: i64) -> Result<EventStream, ClientError> {
    let f = EventFilter {
        after_event: Some(after),
        run_id: Some(run_id.to_string()),
        event_types: EventType::ACTIONABLE.to_vec(),
        message_types: MessageType::lead_actionable(),
        ..Default::default()
    };
    c.subscribe(f).await
}

/// The question a blocked task's worker asked (the worker's latest message on it).
async fn question(c: &Client, run_id: &str, task_id: &str) -> Option<Message> {
    let p = RunPageParams { run_id: run_id.to_string(), after: None };
    let blocked = coord_client::pages::all(p, |p| c.blocked(p)).await.ok()?.blocked;
    blocked.into_iter().find(|b| b.task.task_id == task_id).and_then(|b| b.question)
}

/// What the lead should do about an event, in a few words.
fn hint(ev: &Event, msg_type: Option<&str>) -> &'static str {
    match (ev.event_type, msg_type) {
        (_, Some("permission_request" | "plan_approval_request")) => "approve or deny it with respond",
        (_, Some(_)) => "",
        (EventType::TaskBlocked, _) => "answer it with answer",
        (EventType::TaskDone, _) => "review it (diff) and merge it",
        (EventType::TaskReady, _) => "dispatch it",
        (EventType::TaskFailed | EventType::LeaseExpired, _) => "retry, reassign or cancel it",
        (EventType::TaskMergeConflict | EventType::TaskVerifyFailed, _) => "retry it or send it back",
        (EventType::RunDone | EventType::RunFailed, _) => "the run is over: end your turn",
        _ => "",
    }
}

/// The turn an event becomes in the lead's session.
pub async fn turn_of(c: &Client, run_id: &str, ev: &Event, seed: u64) -> Turn {
    let msg_type = ev.message.as_ref().and_then(|m| m.msg_type.clone());
    let what = msg_type.clone().unwrap_or_else(|| ev.event_type.as_str().to_string());
    let task = if ev.task_id.is_empty() { String::new() } else { format!(" {}", ev.task_id) };
    let mut text = format!("[attention] {what}{task} by {} (event {}): {}", ev.actor, ev.event_id, ev.summary);
    if ev.event_type == EventType::TaskBlocked
        && let Some(q) = question(c, run_id, &ev.task_id).await
    {
        text.push_str(&format!("\n  question: {}", q.summary));
        for line in q.body.lines() {
            text.push_str(&format!("\n    {line}"));
        }
    }
    // A request is named by its payload's `request_id` (what a response carries), else its
    // message.
    let request_id = ev.message.as_ref().filter(|_| msg_type.is_some()).map(|m| {
        let id = payload_request_id(&m.payload_json).map_or_else(|| m.message_id.clone(), str::to_string);
        text.push_str(&format!("\n  request_id {id}, payload {}", m.payload_json));
        id
    });
    let h = hint(ev, msg_type.as_deref());
    if !h.is_empty() {
        text.push_str(&format!("\n  ({h})"));
    }
    Turn {
        line_type: "turn",
        id: feed::uuid(seed, ev.event_id),
        kind: "attention",
        text,
        run_id: Some(run_id.to_string()),
        task_id: Some(ev.task_id.clone()).filter(|t| !t.is_empty()),
        thread_id: Some(ev.thread_id.clone()).filter(|t| !t.is_empty()),
        event_id: Some(ev.event_id),
        request_id,
        ..Turn::default()
    }
}
