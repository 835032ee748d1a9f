//! `wait_for_attention`, the lead's one wait: the next events of the run that need the
//! lead (a question, a permission or plan request, a done, failed or conflicting task, a
//! shutdown answered, a council to read, the run's end), after a cursor. It is a
//! server-side subscription, as `orch wait` is: the lead never polls.

use std::time::Duration;

use coord_proto::types::*;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::CallToolResult;
use rmcp::{schemars, tool, tool_router};
use serde::Deserialize;
use serde_json::{Value, json};

use coord_client::Client;
use coord_proto::api::OrchApiClient;

use super::{OrchMcp, ToolError};

/// The most events one call returns; the rest wait for the next call (the cursor).
const MAX_EVENTS: usize = 20;

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WaitArgs {
    /// Return events after this one (default: after the last one returned, at first the session's start).
    #[serde(default)]
    after_event: Option<i64>,
    /// Give up after this many seconds (default and most: the server's bound).
    #[serde(default)]
    timeout_seconds: Option<u64>,
}

/// One event as the lead reads it: what happened (the control message's type when it is
/// one), to which task, by whom, and what a request asks.
fn attention_item(e: &Event) -> Value {
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
async fn add_questions(c: &Client, run_id: &str, items: &mut [Value]) -> Result<(), ToolError> {
    if !items.iter().any(|v| v["type"] == EventType::TaskBlocked.as_str()) {
        return Ok(());
    }
    let p = RunPageParams { run_id: run_id.to_string(), after: None };
    let blocked = coord_client::pages::all(p, |p| c.blocked(p)).await?.blocked;
    for v in items.iter_mut().filter(|v| v["type"] == EventType::TaskBlocked.as_str()) {
        if let Some(q) =
            blocked.iter().find(|b| v["task_id"] == b.task.task_id.as_str()).and_then(|b| b.question.as_ref())
        {
            v["question"] = json!({"summary": q.summary, "body": q.body});
        }
    }
    Ok(())
}

#[tool_router(router = attention_router, vis = "pub(super)")]
impl OrchMcp {
    #[tool(
        description = "Block until something needs you (a question, a request, a task done or failed, the run's \
                       end); returns those events and the cursor. Call again after acting.",
        annotations(read_only_hint = true)
    )]
    async fn wait_for_attention(&self, Parameters(a): Parameters<WaitArgs>) -> CallToolResult {
        let run_id = self.run_id();
        let timeout = a.timeout_seconds.map_or(self.max_wait, |s| Duration::from_secs(s).min(self.max_wait));
        self.run(|c| async move {
            let after = a.after_event.or(self.cursor());
            let run_id = run_id?;
            let filter = EventFilter {
                after_event: after,
                run_id: Some(run_id.clone()),
                event_types: EventType::ACTIONABLE.to_vec(),
                message_types: MessageType::lead_actionable(),
                ..Default::default()
            };
            let mut sub = c.subscribe(filter).await?;
            let mut events = Vec::new();
            if let Some(first) = sub.next_within(Some(timeout)).await? {
                events.push(first);
                // Whatever else already came is returned with it, without waiting again.
                while events.len() < MAX_EVENTS
                    && let Some(e) = sub.next_within(Some(Duration::ZERO)).await?
                {
                    events.push(e);
                }
            }
            let cursor = events.last().map(|e| e.event_id).or(sub.cursor()).unwrap_or_default();
            self.set_cursor(cursor);
            let mut items: Vec<Value> = events.iter().map(attention_item).collect();
            add_questions(&c, &run_id, &mut items).await?;
            Ok(json!({
                "woke": !events.is_empty(),
                "events": items,
                "cursor": cursor,
            }))
        })
        .await
    }
}
