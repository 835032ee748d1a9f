//! The waits: `watch` and `wait-reply` (one file each), each one server-side subscription
//! with a local timeout. The subscription resumes by itself after a lost connection or a daemon restart
//! (`coord_client::EventStream`), so a wait neither misses nor repeats an event. Without a
//! cursor a wait starts at the newest event the daemon had when it subscribed. While it
//! waits, it says on stderr what it waits for (not under `--json`).

pub mod wait_reply;
pub mod watch;

use std::time::Duration;

use coord_cli::CliError;
use coord_cli::WaitReport;
use coord_cli::usage::one_of;
use coord_client::Client;
use coord_proto::api::{ControlApiClient, MailApiClient};
use coord_proto::types::*;
use serde_json::json;

use crate::commands::args::*;
use crate::output;
use coord_cli::{Command, Ctx, Outcome, Res};

/// What `watch --run` follows besides the inbox events: the run's task and run events.
const RUN_EVENTS: &[EventType] = &[
    EventType::RunCreated,
    EventType::RunDone,
    EventType::RunFailed,
    EventType::RunCancelled,
    EventType::RunResumed,
    EventType::RunMerged,
    EventType::TaskAdded,
    EventType::TaskDepsChanged,
    EventType::TaskReady,
    EventType::TaskDispatched,
    EventType::TaskInProgress,
    EventType::TaskBlocked,
    EventType::TaskDone,
    EventType::TaskFailed,
    EventType::TaskCancelled,
    EventType::TaskMerged,
    EventType::TaskMergeConflict,
    EventType::TaskEdited,
    EventType::TaskRemoved,
    EventType::CouncilStarted,
    EventType::CouncilVoting,
    EventType::CouncilDone,
];

/// A wait handed `message` to `agent`: its copies queued in the agent's (or the task's)
/// session mailbox count as delivered, so that no reminder or Stop hook announces it
/// again. Best effort: the wait has its answer either way.
pub async fn delivered(c: &Client, agent: Option<String>, task_id: Option<String>, message: Option<&Message>) {
    let Some(m) = message else { return };
    if agent.is_none() && task_id.is_none() {
        return;
    }
    let p = CheckParams { agent, task_id, message_ids: vec![m.message_id.clone()], ..Default::default() };
    let _ = c.mail_check(p).await;
}

/// `watch --progress`: progress lines as they come (lossy), optionally the recent ones first.
async fn watch_progress(ctx: &Ctx, a: watch::Args) -> Res {
    let filter = ProgressFilter { agent: a.of, after_seq: a.recent.then_some(0), ..Default::default() };
    let c = ctx.client().await?;
    let mut sub = c.progress_subscribe(filter).await?;
    let deadline = a.timeout_seconds.map(|s| tokio::time::Instant::now() + Duration::from_secs(s));
    let mut seen = 0u64;
    loop {
        let next = match deadline {
            Some(d) => match tokio::time::timeout_at(d, sub.next()).await {
                Ok(n) => n,
                Err(_) => break,
            },
            None => sub.next().await,
        };
        let line = match next {
            Some(Ok(line)) => line,
            Some(Err(e)) => return Err(CliError::Internal(format!("bad progress line: {e}"))),
            None => return Err(CliError::Internal("the daemon ended the progress feed".into())),
        };
        seen += 1;
        ctx.print(&json!({"progress": line}), || {
            let missed = if line.dropped > 0 { format!(" ({} missed before)", line.dropped) } else { String::new() };
            println!("[{}] {} {}: {}{missed}", line.at, line.agent, line.line_type, line.data)
        });
        if !a.follow || a.count.is_some_and(|n| seen >= n) {
            return Ok(Outcome::Done);
        }
    }
    Ok(if seen == 0 { Outcome::NoMatch } else { Outcome::Done })
}

/// How to resume a wait that timed out.
fn resume_hint(cursor: Option<i64>) -> String {
    cursor.map_or("the same --after-message".into(), |c| format!("--after-event {c}"))
}
