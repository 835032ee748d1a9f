//! What simulated agents were told, and the checks against what the daemon stored: every
//! acknowledged write is in the event stream as acknowledged, event ids have no gap, and no
//! two claims of a thread got the same lease generation.

use std::collections::{BTreeMap, HashMap};
use std::sync::Mutex;
use std::time::Duration;

use coord_client::Client;
use coord_proto::api::EventsApiClient;
use coord_proto::types::*;

/// One acknowledged write: the event the daemon said it recorded.
#[derive(Debug, Clone)]
pub struct Acked {
    pub op: &'static str,
    pub event_id: i64,
    pub thread_id: String,
    pub message_id: Option<String>,
    /// For a claim: the lease generation granted.
    pub generation: Option<i64>,
    pub agent: String,
}

/// Latencies and outcomes of one operation kind.
#[derive(Debug, Default, Clone)]
pub struct OpStats {
    pub micros: Vec<u32>,
    /// Errors by their stable code.
    pub errors: BTreeMap<String, u64>,
}

/// Everything the agents recorded, shared between them.
#[derive(Default)]
pub struct Ledger {
    acked: Mutex<Vec<Acked>>,
    ops: Mutex<BTreeMap<&'static str, OpStats>>,
    called: tokio::sync::Notify,
}

impl Ledger {
    pub fn ack(&self, a: Acked) {
        self.acked.lock().unwrap().push(a);
    }

    /// Record one call: its latency, and its error code if it failed.
    pub fn op(&self, op: &'static str, took: Duration, error: Option<&str>) {
        let mut ops = self.ops.lock().unwrap();
        let s = ops.entry(op).or_default();
        s.micros.push(took.as_micros().min(u128::from(u32::MAX)) as u32);
        if let Some(code) = error {
            *s.errors.entry(code.to_string()).or_default() += 1;
        }
        drop(ops);
        self.called.notify_waiters();
    }

    /// Resolves after the next call is recorded (or a little later).
    pub async fn progress(&self) {
        self.called.notified().await
    }

    pub fn acked(&self) -> Vec<Acked> {
        self.acked.lock().unwrap().clone()
    }

    pub fn stats(&self) -> BTreeMap<&'static str, OpStats> {
        self.ops.lock().unwrap().clone()
    }

    /// Calls made so far.
    pub fn calls(&self) -> usize {
        self.ops.lock().unwrap().values().map(|s| s.micros.len()).sum()
    }
}

/// What [`verify`] found wrong (empty when all is well).
#[derive(Debug, Default)]
pub struct Findings {
    pub events: usize,
    pub last_event_id: i64,
    pub problems: Vec<String>,
    /// Acknowledged writes checked.
    pub acked: usize,
}

impl Findings {
    pub fn ok(&self) -> bool {
        self.problems.is_empty()
    }
}

/// Read the whole event stream and hold the acknowledged writes against it.
pub async fn verify(client: &Client, acked: &[Acked]) -> Result<Findings, coord_client::ClientError> {
    let mut events: HashMap<i64, Event> = HashMap::new();
    let mut after = 0;
    let mut last_event_id;
    loop {
        let filter = EventFilter { after_event: Some(after), ..Default::default() };
        let page = client.events_list(EventsListParams { filter, limit: Some(coord_proto::MAX_LIMIT) }).await?;
        last_event_id = page.last_event_id;
        let Some(last) = page.events.last().map(|e| e.event_id) else { break };
        after = last;
        events.extend(page.events.into_iter().map(|e| (e.event_id, e)));
    }
    let mut f = Findings { events: events.len(), last_event_id, acked: acked.len(), ..Default::default() };
    if events.len() as i64 != last_event_id {
        f.problems.push(format!("{} events stored, but ids run to {last_event_id}: a gap", events.len()));
    }
    let mut grants: HashMap<(&str, i64), &str> = HashMap::new();
    for a in acked {
        let Some(e) = events.get(&a.event_id) else {
            f.problems.push(format!("acknowledged {} (event {}) is missing", a.op, a.event_id));
            continue;
        };
        if !a.thread_id.is_empty() && (e.thread_id != a.thread_id || e.message_id != a.message_id) {
            f.problems.push(format!("event {} is not the acknowledged {} on {}", a.event_id, a.op, a.thread_id));
        }
        if let Some(g) = a.generation {
            if e.payload_json["generation"].as_i64() != Some(g) {
                f.problems.push(format!("claim event {} does not carry generation {g}", a.event_id));
            }
            if let Some(other) = grants.insert((a.thread_id.as_str(), g), a.agent.as_str()) {
                f.problems.push(format!("generation {g} of {} granted twice ({other}, {})", a.thread_id, a.agent));
            }
        }
    }
    // Generations only grow, one step per claim.
    let mut last_generation: HashMap<&str, i64> = HashMap::new();
    let mut ids: Vec<&i64> = events.keys().collect();
    ids.sort();
    for id in ids {
        let e = &events[id];
        if e.event_type != EventType::ThreadClaimed {
            continue;
        }
        let g = e.payload_json["generation"].as_i64().unwrap_or(0);
        let prev = last_generation.insert(e.thread_id.as_str(), g).unwrap_or(0);
        if g != prev + 1 {
            f.problems.push(format!("{}: generation {g} after {prev}", e.thread_id));
        }
    }
    Ok(f)
}

/// Percentile `p` (0..=100) of sorted latencies, in microseconds.
pub fn percentile(sorted: &[u32], p: f64) -> u32 {
    if sorted.is_empty() {
        return 0;
    }
    let i = ((p / 100.0) * (sorted.len() - 1) as f64).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}
