//! The waits: `watch` and `wait-reply`, each one server-side subscription with a local
//! timeout. Without a cursor a wait starts at the newest event the daemon had when we
//! connected, so nothing committed between connecting and subscribing is missed.

use std::time::Duration;

use coord_cli::CliError;
use coord_client::Client;
use coord_proto::api::ControlApiClient;
use coord_proto::types::*;
use serde_json::json;

use crate::cli::{WaitReplyArgs, WatchArgs};
use crate::ctx::{Ctx, Outcome, Res};
use crate::output;

pub async fn watch(ctx: &Ctx, a: WatchArgs) -> Res {
    if a.progress {
        return watch_progress(ctx, a).await;
    }
    // With --type, the message types say what to watch (event types would match the rest).
    let event_types = if a.types.is_empty() { EventType::INBOX.to_vec() } else { Vec::new() };
    let mut filter = EventFilter {
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
    let c = ctx.client().await?;
    let mut cursor = default_cursor(c, &mut filter);
    let mut sub = c.subscribe(filter).await?;
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
        cursor = ev.event_id;
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
        ctx.print(&json!({"woke": false, "next_event_id": cursor, "event": null}), || {
            println!("no matching activity within the timeout (resume with --after-event {cursor})")
        });
    }
    Ok(if seen == 0 { Outcome::NoMatch } else { Outcome::Done })
}

pub async fn wait_reply(ctx: &Ctx, a: WaitReplyArgs) -> Res {
    let mut kinds: Vec<MessageKind> = a.kinds.into_iter().flatten().collect();
    if kinds.is_empty() {
        kinds = MessageKind::REPLIES.to_vec();
    }
    let mut filter = EventFilter {
        after_event: a.after_event,
        after_message: a.after_message,
        thread_id: Some(a.thread),
        kinds,
        ..Default::default()
    };
    let c = ctx.client().await?;
    let cursor = default_cursor(c, &mut filter);
    let mut sub = c.subscribe(filter).await?;
    match sub.next_within(a.timeout_seconds.map(Duration::from_secs)).await? {
        Some(ev) => {
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
            ctx.print(&json!({"woke": false, "next_event_id": cursor, "message": null}), || {
                println!("no reply within the timeout (resume with --after-event {cursor})")
            });
            Ok(Outcome::NoMatch)
        }
    }
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

/// Start at the daemon's newest event as of connecting when the filter has no cursor;
/// returns the cursor to report on a timeout.
fn default_cursor(c: &Client, filter: &mut EventFilter) -> i64 {
    let last = c.server_info().last_event_id;
    if filter.after_event.is_none() && filter.after_message.is_none() {
        filter.after_event = Some(last);
    }
    filter.after_event.unwrap_or(last)
}
