//! The waits: `watch` and `wait-reply`, each one server-side subscription with a local
//! timeout. The subscription resumes by itself after a lost connection or a daemon restart
//! (`coord_client::EventStream`), so a wait neither misses nor repeats an event. Without a
//! cursor a wait starts at the newest event the daemon had when it subscribed. While it
//! waits, it says on stderr what it waits for (not under `--json`).

use std::time::Duration;

use coord_cli::CliError;
use coord_cli::WaitReport;
use coord_client::Client;
use coord_proto::api::{ControlApiClient, MailApiClient};
use coord_proto::types::*;
use serde_json::json;

use crate::cli::{WaitReplyArgs, WatchArgs};
use crate::ctx::{Ctx, Outcome, Res};
use crate::output;

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

pub async fn watch(ctx: &Ctx, a: WatchArgs) -> Res {
    if a.progress {
        return watch_progress(ctx, a).await;
    }
    // With --type, the message types say what to watch (event types would match the rest).
    let mut event_types = if a.types.is_empty() { EventType::INBOX.to_vec() } else { Vec::new() };
    if a.run.is_some() && a.types.is_empty() {
        event_types.extend_from_slice(RUN_EVENTS);
    }
    let what = match (&a.thread, &a.run) {
        (Some(t), _) => format!("activity in thread {t}"),
        (None, Some(r)) => format!("activity in run {r}"),
        (None, None) => "matching activity".to_string(),
    };
    let filter = EventFilter {
        after_event: a.after_event,
        after_message: a.after_message,
        thread_id: a.thread,
        run_id: a.run,
        agent: if a.to.is_some() { None } else { ctx.agent.clone() },
        statuses: a.status,
        event_types,
        to: a.to,
        message_types: a.types,
        ..Default::default()
    };
    let report = WaitReport::new("inbox", ctx.json);
    let mut sub = ctx.client().await?.subscribe(filter).await?.on_notice(report.notices());
    report.waiting(&what, sub.cursor(), a.timeout_seconds);
    let deadline = a.timeout_seconds.map(|s| tokio::time::Instant::now() + Duration::from_secs(s));
    let mut seen = 0u64;
    loop {
        let left = deadline.map(|d| d.saturating_duration_since(tokio::time::Instant::now()));
        let ev = match left {
            Some(d) if d.is_zero() => None,
            _ => sub.next_within(left).await?,
        };
        let Some(ev) = ev else { break };
        seen += 1;
        let envelope = if a.follow {
            json!({"event": ev})
        } else {
            json!({"woke": true, "next_event_id": ev.event_id, "event": ev})
        };
        ctx.print(&envelope, || output::event_line(&ev));
        if !a.follow || a.count.is_some_and(|n| seen >= n) {
            return Ok(Outcome::Done);
        }
    }
    if !a.follow {
        let cursor = sub.cursor();
        ctx.print(&json!({"woke": false, "next_event_id": cursor, "event": null}), || {
            println!("no matching activity within the timeout (resume with {})", resume_hint(cursor))
        });
    }
    Ok(if seen == 0 { Outcome::NoMatch } else { Outcome::Done })
}

pub async fn wait_reply(ctx: &Ctx, a: WaitReplyArgs) -> Res {
    let mut kinds: Vec<MessageKind> = a.kinds.into_iter().flatten().collect();
    if kinds.is_empty() {
        kinds = MessageKind::REPLIES.to_vec();
    }
    let what = format!("a reply in thread {}", a.thread);
    let filter = EventFilter {
        after_event: a.after_event,
        after_message: a.after_message,
        thread_id: Some(a.thread),
        kinds,
        ..Default::default()
    };
    let report = WaitReport::new("inbox", ctx.json);
    let mut sub = ctx.client().await?.subscribe(filter).await?.on_notice(report.notices());
    report.waiting(&what, sub.cursor(), a.timeout_seconds);
    match sub.next_within(a.timeout_seconds.map(Duration::from_secs)).await? {
        Some(ev) => {
            delivered(ctx.client().await?, ctx.agent.clone(), None, ev.message.as_ref()).await;
            let envelope = json!({"woke": true, "next_event_id": ev.event_id, "message": ev.message, "event": ev});
            ctx.print(&envelope, || {
                if let Some(m) = &ev.message {
                    output::message_block(m);
                    println!("next event id: {}", ev.event_id);
                }
            });
            Ok(Outcome::Done)
        }
        None => {
            let cursor = sub.cursor();
            ctx.print(&json!({"woke": false, "next_event_id": cursor, "message": null}), || {
                println!("no reply within the timeout (resume with {})", resume_hint(cursor))
            });
            Ok(Outcome::NoMatch)
        }
    }
}

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
async fn watch_progress(ctx: &Ctx, a: WatchArgs) -> Res {
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
