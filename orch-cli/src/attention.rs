//! What needs the lead: the run's events a lead acts on (a question, a permission or plan
//! request, a done, failed or conflicting task, a shutdown answered, a council to read, the
//! run's end), read after a cursor through one server-side subscription, as `orch wait`
//! does. `orch mcp`'s `wait_for_attention` and the lead's Stop hook (`orch hook stop`) both
//! read it here, so the lead sees the same items whichever way it is told.

use std::time::Duration;

use coord_client::{Client, ClientError};
use coord_proto::api::OrchApiClient;
use coord_proto::types::*;
use serde_json::{Value, json};

/// The most events one read returns; the rest wait for the next (the cursor).
const MAX_EVENTS: usize = 20;

/// What one read returned: the items, and the cursor to read after next time.
pub struct Attention {
    pub items: Vec<Value>,
    pub cursor: i64,
}

/// The run's next events that need the lead after `after` (default: now), waiting up to
/// `timeout` for the first; whatever else already came is returned with it.
pub async fn next(c: &Client, run_id: &str, after: Option<i64>, timeout: Duration) -> Result<Attention, ClientError> {
    let filter = EventFilter {
        after_event: after,
        run_id: Some(run_id.to_string()),
        event_types: EventType::ACTIONABLE.to_vec(),
        message_types: MessageType::lead_actionable(),
        ..Default::default()
    };
    let mut sub = c.subscribe(filter).await?;
    let mut events = Vec::new();
    if let Some(first) = sub.next_within(Some(timeout)).await? {
        events.push(first);
        while events.len() < MAX_EVENTS
            && let Some(e) = sub.next_within(Some(Duration::ZERO)).await?
        {
            events.push(e);
        }
    }
    let cursor = events.last().map(|e| e.event_id).or(sub.cursor()).or(after).unwrap_or_default();
    let mut items: Vec<Value> = events.iter().map(item).collect();
    add_questions(c, run_id, &mut items).await?;
    Ok(Attention { items, cursor })
}

/// One event as the lead reads it: what happened (the control message's type when it is
/// one), to which task, by whom, and what a request asks.
fn item(e: &Event) -> Value {
    let msg_type = e.message.as_ref().and_then(|m| m.msg_type.clone());
    let mut v = json!({
        "event_id": e.event_id, "type": msg_type.clone().unwrap_or_else(|| e.event_type.as_str().to_string()),
        "task_id": e.task_id, "actor": e.actor, "summary": e.summary,
    });
    if let Some(m) = e.message.as_ref().filter(|_| msg_type.is_some()) {
        v["request_id"] = json!(m.message_id);
        v["payload"] = m.payload_json.clone();
    }
    v
}

/// The blocked tasks' questions, added to their `task.blocked` items (the event names the
/// block; the question is the worker's latest message, which `orch.blocked` reads).
async fn add_questions(c: &Client, run_id: &str, items: &mut [Value]) -> Result<(), ClientError> {
    let blocked_type = EventType::TaskBlocked.as_str();
    if !items.iter().any(|v| v["type"] == blocked_type) {
        return Ok(());
    }
    let p = RunPageParams { run_id: run_id.to_string(), after: None };
    let blocked = coord_client::pages::all(p, |p| c.blocked(p)).await?.blocked;
    for v in items.iter_mut().filter(|v| v["type"] == blocked_type) {
        let question =
            blocked.iter().find(|b| v["task_id"] == b.task.task_id.as_str()).and_then(|b| b.question.as_ref());
        if let Some(q) = question {
            v["question"] = json!({"summary": q.summary, "body": q.body});
        }
    }
    Ok(())
}

/// The items as lines for a person or a model: one per item, a question's or request's
/// details indented under it.
pub fn text(items: &[Value]) -> String {
    let mut out = String::new();
    for v in items {
        let task = v["task_id"].as_str().filter(|t| !t.is_empty()).map_or(String::new(), |t| format!(" {t}"));
        out.push_str(&format!(
            "- #{} {}{task} by {}: {}\n",
            v["event_id"],
            str(&v["type"]),
            str(&v["actor"]),
            str(&v["summary"])
        ));
        if let Some(q) = v.get("question") {
            out.push_str(&format!("  question: {}\n", str(&q["summary"])));
            if let Some(b) = q["body"].as_str().filter(|b| !b.is_empty()) {
                out.push_str(&format!("  {b}\n"));
            }
        }
        if let Some(id) = v.get("request_id") {
            out.push_str(&format!("  request_id {id}, payload {}\n", v["payload"]));
        }
    }
    out
}

fn str(v: &Value) -> &str {
    v.as_str().unwrap_or_default()
}
