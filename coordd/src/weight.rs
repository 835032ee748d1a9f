//! An event's JSON size, estimated without serializing it: what the bus budgets its
//! events by (`bus.rs`) and what a list of events is bounded by (`domain::events`, the
//! backends' `events_page`, through `bound::fit`). It sits below both, so the rules weigh
//! events without knowing the bus.

use coord_proto::types::Event;
use serde_json::Value;

/// Fixed overhead of an event's JSON (keys, numbers, timestamps), in bytes.
pub const EVENT_OVERHEAD: usize = 512;

/// The event's JSON size, estimated without serializing it (on the writer thread).
pub fn weight(e: &Event) -> usize {
    let strings = [&e.source, &e.run_id, &e.task_id, &e.thread_id, &e.actor, &e.assigned_to, &e.created_by];
    let mut n = EVENT_OVERHEAD + e.summary.len() + json_weight(&e.payload_json);
    n += strings.iter().map(|s| s.len()).sum::<usize>();
    n += e.message_type.as_ref().map_or(0, |t| t.len() + 20);
    if let Some(m) = &e.message {
        n += EVENT_OVERHEAD + m.summary.len() + m.body.len() + json_weight(&m.payload_json);
        n += m.message_id.len() + m.thread_id.len() + m.from_agent.len() + m.to_agent.len();
        if let Some(mail) = &e.mail {
            n += 64 + mail.recipients.iter().map(|r| r.len() + 4).sum::<usize>();
        }
        for a in &m.artifacts {
            n += 256 + a.path.len() + a.kind.len() + json_weight(&a.metadata_json);
        }
    }
    n
}

/// A JSON value's size, roughly (iterative: payloads may be deep).
fn json_weight(v: &Value) -> usize {
    let mut n = 0;
    let mut stack = vec![v];
    while let Some(v) = stack.pop() {
        n += match v {
            Value::Null | Value::Bool(_) | Value::Number(_) => 8,
            Value::String(s) => s.len() + 2,
            Value::Array(items) => {
                stack.extend(items);
                2 + items.len()
            }
            Value::Object(map) => {
                stack.extend(map.values());
                2 + map.keys().map(|k| k.len() + 4).sum::<usize>()
            }
        };
    }
    n
}
