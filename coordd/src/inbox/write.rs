//! Inbox state changes. Each function runs inside the writer's transaction, checks the
//! current state, writes its rows and appends exactly one event, so a change and its event
//! commit together or not at all.

use std::time::SystemTime;

use coord_proto::types::*;
use coord_proto::{AppError, DEFAULT_LEASE_SECONDS, ErrorCode, MAX_LEASE_SECONDS};
use rusqlite::{Connection, OptionalExtension};
use serde_json::{Value, json};

use super::*;
use crate::db::WriteCtx;
use crate::error::{Error, Result};
use crate::events::{self, Draft};
use crate::util;

/// The clock of one operation: one instant, used for every timestamp it writes.
struct Clock {
    at: SystemTime,
    now: String,
}

impl Clock {
    fn new() -> Self {
        let at = util::now();
        Clock { at, now: util::ts(at) }
    }
}

fn empty_object() -> Value {
    Value::Object(Default::default())
}

/// Everything needed to append one message and its event to a thread.
struct Append<'a> {
    /// True when the thread does not exist yet: insert it instead of updating it.
    new_thread: bool,
    thread: Thread,
    event_type: EventType,
    actor: &'a str,
    from: &'a str,
    to: String,
    kind: MessageKind,
    input: MessageInput,
}

/// Insert the event, the message and its artifacts, update the thread, mark the thread read
/// for the sender, and queue the event. `a.thread` already carries the new state.
fn append(ctx: &mut WriteCtx<'_>, clock: &Clock, a: Append<'_>) -> Result<MessageResult> {
    let conn = ctx.conn;
    let message_id = util::new_id("msg");
    let mut thread = a.thread;
    thread.latest_message_id = Some(message_id.clone());
    thread.updated_at = clock.now.clone();
    let payload = a.input.payload_json.unwrap_or_else(empty_object);
    let draft = Draft {
        message_id: Some(&message_id),
        message_kind: Some(a.kind),
        ..Draft::for_thread(a.event_type, &thread, a.actor, &a.input.summary, &payload, &clock.now)
    };
    let event_id = events::insert(conn, &draft)?;
    if a.new_thread {
        // Inserted once with its final values, before the message that references it.
        insert_thread(conn, &thread)?;
    }
    let body = a.input.body.unwrap_or_default();
    conn.prepare_cached(
        "INSERT INTO messages (message_id, thread_id, from_agent, to_agent, kind, summary, body, \
         payload_json, created_at, event_id) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
    )?
    .execute(rusqlite::params![
        message_id,
        thread.thread_id,
        a.from,
        a.to,
        a.kind.as_str(),
        a.input.summary,
        body,
        payload.to_string(),
        clock.now,
        event_id,
    ])?;
    let mut artifacts = Vec::with_capacity(a.input.artifacts.len());
    for art in a.input.artifacts {
        let artifact = Artifact {
            artifact_id: util::new_id("art"),
            message_id: message_id.clone(),
            path: art.path,
            kind: art.kind.unwrap_or_else(|| "file".into()),
            metadata_json: art.metadata_json.unwrap_or_else(empty_object),
            created_at: clock.now.clone(),
        };
        conn.prepare_cached(
            "INSERT INTO artifacts (artifact_id, message_id, path, kind, metadata_json, created_at) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
        )?
        .execute(rusqlite::params![
            artifact.artifact_id,
            artifact.message_id,
            artifact.path,
            artifact.kind,
            artifact.metadata_json.to_string(),
            artifact.created_at,
        ])?;
        artifacts.push(artifact);
    }
    if !a.new_thread {
        save_thread(conn, &thread)?;
        // The sender has read the thread up to its own message. (A new thread holds
        // nothing addressed to its sender yet, so there is no mark to write.)
        mark_read_through(conn, a.from, &thread.thread_id, event_id)?;
    }
    let message = Message {
        message_id: message_id.clone(),
        thread_id: thread.thread_id.clone(),
        from_agent: a.from.to_string(),
        to_agent: a.to,
        kind: a.kind,
        summary: a.input.summary.clone(),
        body,
        payload_json: payload.clone(),
        created_at: clock.now.clone(),
        event_id,
        artifacts,
    };
    events::publish(ctx, event_id, &draft, Some(message.clone()));
    // orch reacts in the same transaction (task and run state, councils).
    crate::orch::reconcile::on_thread(ctx, &thread, a.actor, &clock.now)?;
    Ok(MessageResult { thread, message, event_id })
}

fn insert_thread(conn: &Connection, t: &Thread) -> Result<()> {
    conn.prepare_cached(
        "INSERT INTO threads (thread_id, run_id, task_id, subject, created_by, assigned_to, status, \
         priority, latest_message_id, created_at, updated_at) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
    )?
    .execute(rusqlite::params![
        t.thread_id,
        t.run_id,
        t.task_id,
        t.subject,
        t.created_by,
        t.assigned_to,
        t.status.as_str(),
        t.priority.as_str(),
        t.latest_message_id,
        t.created_at,
        t.updated_at,
    ])?;
    Ok(())
}

/// Write a thread's mutable columns back.
fn save_thread(conn: &Connection, t: &Thread) -> Result<()> {
    conn.prepare_cached(
        "UPDATE threads SET assigned_to = ?2, status = ?3, latest_message_id = ?4, updated_at = ?5 \
         WHERE thread_id = ?1",
    )?
    .execute(rusqlite::params![
        t.thread_id,
        t.assigned_to,
        t.status.as_str(),
        t.latest_message_id,
        t.updated_at
    ])?;
    Ok(())
}

fn mark_read_through(conn: &Connection, agent: &str, thread_id: &str, event_id: i64) -> Result<()> {
    conn.prepare_cached(
        "INSERT INTO reads (agent_id, thread_id, read_event_id) VALUES (?1, ?2, ?3) \
         ON CONFLICT (agent_id, thread_id) DO UPDATE \
         SET read_event_id = MAX(read_event_id, excluded.read_event_id)",
    )?
    .execute(rusqlite::params![agent, thread_id, event_id])?;
    Ok(())
}

fn open_thread(conn: &Connection, thread_id: &str, clock: &Clock) -> Result<Thread> {
    check_id("thread_id", thread_id)?;
    let t = read::thread(conn, thread_id, &clock.now)?;
    if t.status.is_terminal() {
        return Err(Error::app(
            ErrorCode::InvalidTransition,
            format!("thread '{thread_id}' is {} and accepts no further changes", t.status),
        ));
    }
    Ok(t)
}

/// The stored lease row of a thread.
struct LeaseRow {
    agent: String,
    token: String,
    expires_at: String,
    released_at: Option<String>,
}

fn lease_row(conn: &Connection, thread_id: &str) -> Result<Option<LeaseRow>> {
    Ok(conn
        .prepare_cached("SELECT agent_id, lease_token, expires_at, released_at FROM leases WHERE thread_id = ?1")?
        .query_row([thread_id], |r| {
            Ok(LeaseRow { agent: r.get(0)?, token: r.get(1)?, expires_at: r.get(2)?, released_at: r.get(3)? })
        })
        .optional()?)
}

/// Only the agent holding the thread's live lease may act as its worker; with a token, only
/// the process holding that exact grant.
fn require_holder(conn: &Connection, t: &Thread, agent: &str, token: Option<&str>, clock: &Clock) -> Result<()> {
    let holder = |msg: String| Error::app(ErrorCode::NotLeaseHolder, msg);
    let Some(LeaseRow { agent: holder_agent, token: holder_token, expires_at, released_at }) =
        lease_row(conn, &t.thread_id)?
    else {
        return Err(holder(format!("thread '{}' is not claimed; claim it first", t.thread_id)));
    };
    if released_at.is_some() {
        return Err(holder(format!("the lease on thread '{}' was released", t.thread_id)));
    }
    if holder_agent != agent {
        let active = expires_at.as_str() > clock.now.as_str();
        let e = if active {
            Error::App(
                AppError::new(
                    ErrorCode::NotLeaseHolder,
                    format!("thread '{}' is leased by '{holder_agent}', not '{agent}'", t.thread_id),
                )
                .with_details(json!({"holder": holder_agent, "expires_at": expires_at})),
            )
        } else {
            holder(format!("'{agent}' does not hold the lease on thread '{}'", t.thread_id))
        };
        return Err(e);
    }
    if let Some(tok) = token
        && tok != holder_token
    {
        return Err(Error::app(
            ErrorCode::StaleLease,
            format!(
                "lease token does not match the current lease on thread '{}' (a newer claim replaced it)",
                t.thread_id
            ),
        ));
    }
    if expires_at.as_str() <= clock.now.as_str() {
        return Err(Error::App(
            AppError::new(
                ErrorCode::LeaseExpired,
                format!("the lease on thread '{}' expired at {expires_at}; claim it again", t.thread_id),
            )
            .with_details(json!({"expired_at": expires_at})),
        ));
    }
    Ok(())
}

fn lease_seconds(v: Option<u64>) -> Result<u64> {
    match v.unwrap_or(DEFAULT_LEASE_SECONDS) {
        0 => Err(Error::invalid("lease_seconds must be at least 1")),
        n if n > MAX_LEASE_SECONDS => Err(Error::invalid(format!("lease_seconds must be at most {MAX_LEASE_SECONDS}"))),
        n => Ok(n),
    }
}

/// `inbox.send`: create a thread with its first message, or append to an open thread.
pub fn send(ctx: &mut WriteCtx<'_>, p: SendParams) -> Result<MessageResult> {
    check_agent("from", &p.from)?;
    check_agent("to", &p.to)?;
    check_message(&p.message)?;
    let clock = Clock::new();
    if let Some(thread_id) = &p.thread_id {
        let thread = open_thread(ctx.conn, thread_id, &clock)?;
        for (field, given, have) in [("run_id", &p.run_id, &thread.run_id), ("task_id", &p.task_id, &thread.task_id)] {
            if let Some(g) = given
                && g != have
            {
                return Err(Error::invalid(format!(
                    "{field} '{g}' does not match thread '{thread_id}' ({field} '{have}')"
                )));
            }
        }
        return append(
            ctx,
            &clock,
            Append {
                new_thread: false,
                thread,
                event_type: EventType::MessageSent,
                actor: &p.from,
                from: &p.from,
                to: p.to.clone(),
                kind: p.kind.unwrap_or(MessageKind::Progress),
                input: p.message,
            },
        );
    }
    // Without a subject, the summary's first line stands in (shortened to fit).
    let subject = match &p.subject {
        Some(s) => s.clone(),
        None => p.message.summary.lines().next().unwrap_or_default().chars().take(200).collect(),
    };
    check_subject(&subject)?;
    let thread = Thread {
        thread_id: util::new_id("thr"),
        run_id: p.run_id.clone().unwrap_or_default(),
        task_id: p.task_id.clone().unwrap_or_default(),
        subject,
        created_by: p.from.clone(),
        assigned_to: p.to.clone(),
        status: ThreadStatus::Pending,
        priority: p.priority.unwrap_or(Priority::Normal),
        latest_message_id: None,
        created_at: clock.now.clone(),
        updated_at: clock.now.clone(),
        lease: None,
    };
    append(
        ctx,
        &clock,
        Append {
            new_thread: true,
            thread,
            event_type: EventType::ThreadCreated,
            actor: &p.from,
            from: &p.from,
            to: p.to.clone(),
            kind: p.kind.unwrap_or(MessageKind::Task),
            input: p.message,
        },
    )
}

/// `inbox.claim`: grant a lease unless another agent holds a live one. Any agent may claim;
/// the thread becomes assigned to the claimer. Re-claiming by the holder grants a new lease
/// (new token, next generation), which fences off any older process of that agent.
pub fn claim(ctx: &mut WriteCtx<'_>, p: ClaimParams) -> Result<LeaseResult> {
    check_agent("agent", &p.agent)?;
    let secs = lease_seconds(p.lease_seconds)?;
    let clock = Clock::new();
    let conn = ctx.conn;
    let mut thread = open_thread(conn, &p.thread_id, &clock)?;
    if let Some(l) = &thread.lease
        && l.active
        && l.agent_id != p.agent
    {
        return Err(Error::App(
            AppError::new(
                ErrorCode::LeaseConflict,
                format!("thread '{}' is already claimed by '{}' until {}", thread.thread_id, l.agent_id, l.expires_at),
            )
            .with_details(json!({"holder": l.agent_id, "expires_at": l.expires_at})),
        ));
    }
    let generation = thread.lease.as_ref().map_or(1, |l| l.generation + 1);
    let lease = Lease {
        thread_id: thread.thread_id.clone(),
        agent_id: p.agent.clone(),
        lease_token: util::new_token(),
        generation,
        claimed_at: clock.now.clone(),
        expires_at: util::ts_after(clock.at, secs),
    };
    conn.prepare_cached(
        "INSERT INTO leases (thread_id, agent_id, lease_token, claimed_at, expires_at, released_at, generation) \
         VALUES (?1, ?2, ?3, ?4, ?5, NULL, ?6) \
         ON CONFLICT (thread_id) DO UPDATE SET agent_id = excluded.agent_id, \
         lease_token = excluded.lease_token, claimed_at = excluded.claimed_at, \
         expires_at = excluded.expires_at, released_at = NULL, generation = excluded.generation, \
         expiry_reported = 0",
    )?
    .execute(rusqlite::params![
        lease.thread_id,
        lease.agent_id,
        lease.lease_token,
        lease.claimed_at,
        lease.expires_at,
        lease.generation
    ])?;
    thread.status = ThreadStatus::Claimed;
    thread.assigned_to = p.agent.clone();
    thread.updated_at = clock.now.clone();
    thread.lease = Some(LeaseView {
        agent_id: lease.agent_id.clone(),
        generation,
        claimed_at: lease.claimed_at.clone(),
        expires_at: lease.expires_at.clone(),
        active: true,
    });
    save_thread(conn, &thread)?;
    let last = read::last_message_event(conn, &thread.thread_id)?;
    mark_read_through(conn, &p.agent, &thread.thread_id, last)?;
    let summary = format!("claimed by {} (generation {generation})", p.agent);
    let payload = json!({"generation": generation, "expires_at": lease.expires_at});
    let event_id = lease_event(ctx, &thread, EventType::ThreadClaimed, &p.agent, &summary, &payload, &clock)?;
    crate::orch::reconcile::on_thread(ctx, &thread, &p.agent, &clock.now)?;
    Ok(LeaseResult { thread, lease, event_id })
}

fn lease_event(
    ctx: &mut WriteCtx<'_>,
    thread: &Thread,
    event_type: EventType,
    actor: &str,
    summary: &str,
    payload: &Value,
    clock: &Clock,
) -> Result<i64> {
    events::record(ctx, &Draft::for_thread(event_type, thread, actor, summary, payload, &clock.now))
}

/// `inbox.renew`: extend the holder's live lease.
pub fn renew(ctx: &mut WriteCtx<'_>, p: RenewParams) -> Result<LeaseResult> {
    check_agent("agent", &p.agent)?;
    let secs = lease_seconds(p.lease_seconds)?;
    let clock = Clock::new();
    let conn = ctx.conn;
    let mut thread = open_thread(conn, &p.thread_id, &clock)?;
    require_holder(conn, &thread, &p.agent, p.lease_token.as_deref(), &clock)?;
    // Renewing never shortens a lease: the new expiry is the later of the two.
    let expires_at = util::ts_after(clock.at, secs);
    conn.prepare_cached("UPDATE leases SET expires_at = MAX(expires_at, ?2) WHERE thread_id = ?1")?
        .execute(rusqlite::params![thread.thread_id, expires_at])?;
    let lease = conn
        .prepare_cached(
            "SELECT thread_id, agent_id, lease_token, generation, claimed_at, expires_at \
             FROM leases WHERE thread_id = ?1",
        )?
        .query_row([&thread.thread_id], |r| {
            Ok(Lease {
                thread_id: r.get(0)?,
                agent_id: r.get(1)?,
                lease_token: r.get(2)?,
                generation: r.get(3)?,
                claimed_at: r.get(4)?,
                expires_at: r.get(5)?,
            })
        })?;
    if let Some(l) = &mut thread.lease {
        l.expires_at = lease.expires_at.clone();
        l.active = true;
    }
    let summary = format!("lease renewed by {} until {}", p.agent, lease.expires_at);
    let payload = json!({"generation": lease.generation, "expires_at": lease.expires_at});
    let event_id = lease_event(ctx, &thread, EventType::LeaseRenewed, &p.agent, &summary, &payload, &clock)?;
    Ok(LeaseResult { thread, lease, event_id })
}

/// `inbox.update`: progress (`in_progress`) or a block (`blocked`) from the holder.
pub fn update(ctx: &mut WriteCtx<'_>, p: UpdateParams) -> Result<MessageResult> {
    check_agent("agent", &p.agent)?;
    check_message(&p.message)?;
    let status = p.status.unwrap_or(ThreadStatus::InProgress);
    let (kind, event_type) = match status {
        ThreadStatus::InProgress => (MessageKind::Progress, EventType::ThreadProgress),
        ThreadStatus::Blocked => (MessageKind::Question, EventType::ThreadBlocked),
        other => {
            return Err(Error::invalid(format!(
                "update status must be in_progress or blocked, not {other} (use done, fail or cancel)"
            )));
        }
    };
    let clock = Clock::new();
    let mut thread = open_thread(ctx.conn, &p.thread_id, &clock)?;
    require_holder(ctx.conn, &thread, &p.agent, p.lease_token.as_deref(), &clock)?;
    thread.status = status;
    let to = thread.created_by.clone();
    append(
        ctx,
        &clock,
        Append { new_thread: false, thread, event_type, actor: &p.agent, from: &p.agent, to, kind, input: p.message },
    )
}

/// `inbox.reply`: anyone may reply inside an open thread. An `answer` to a blocked thread
/// moves it back to `in_progress`.
pub fn reply(ctx: &mut WriteCtx<'_>, p: ReplyParams) -> Result<MessageResult> {
    check_agent("from", &p.from)?;
    if let Some(to) = &p.to {
        check_agent("to", to)?;
    }
    check_message(&p.message)?;
    let kind = p.kind.unwrap_or(MessageKind::Answer);
    if !matches!(kind, MessageKind::Answer | MessageKind::Question | MessageKind::Progress | MessageKind::Control) {
        return Err(Error::invalid(format!("reply kind must be answer, question, progress or control, not {kind}")));
    }
    let clock = Clock::new();
    let mut thread = open_thread(ctx.conn, &p.thread_id, &clock)?;
    let to = p.to.clone().unwrap_or_else(|| {
        if p.from == thread.assigned_to { thread.created_by.clone() } else { thread.assigned_to.clone() }
    });
    if kind == MessageKind::Answer && thread.status == ThreadStatus::Blocked {
        thread.status = ThreadStatus::InProgress;
    }
    append(
        ctx,
        &clock,
        Append {
            new_thread: false,
            thread,
            event_type: EventType::ThreadReplied,
            actor: &p.from,
            from: &p.from,
            to,
            kind,
            input: p.message,
        },
    )
}

fn release_lease(conn: &Connection, thread_id: &str, clock: &Clock) -> Result<()> {
    conn.prepare_cached("UPDATE leases SET released_at = ?2 WHERE thread_id = ?1 AND released_at IS NULL")?
        .execute(rusqlite::params![thread_id, clock.now])?;
    Ok(())
}

/// `inbox.done` / `inbox.fail`: the holder finishes the thread with a `result` message and
/// the lease is released.
pub fn finish(ctx: &mut WriteCtx<'_>, p: FinishParams, status: ThreadStatus) -> Result<MessageResult> {
    check_agent("agent", &p.agent)?;
    check_message(&p.message)?;
    let event_type = match status {
        ThreadStatus::Done => EventType::ThreadDone,
        ThreadStatus::Failed => EventType::ThreadFailed,
        other => return Err(Error::Internal(format!("finish with status {other}"))),
    };
    let clock = Clock::new();
    let mut thread = open_thread(ctx.conn, &p.thread_id, &clock)?;
    require_holder(ctx.conn, &thread, &p.agent, p.lease_token.as_deref(), &clock)?;
    release_lease(ctx.conn, &thread.thread_id, &clock)?;
    thread.status = status;
    if let Some(l) = &mut thread.lease {
        l.active = false;
    }
    let to = thread.created_by.clone();
    append(
        ctx,
        &clock,
        Append {
            new_thread: false,
            thread,
            event_type,
            actor: &p.agent,
            from: &p.agent,
            to,
            kind: MessageKind::Result,
            input: p.message,
        },
    )
}

/// `inbox.cancel`: anyone may cancel an open thread (typically its creator); any lease is
/// released and the holder is told with a `control` message.
pub fn cancel(ctx: &mut WriteCtx<'_>, p: CancelParams) -> Result<MessageResult> {
    check_agent("agent", &p.agent)?;
    check_summary(&p.reason).map_err(|e| Error::invalid(e.to_app().message.replace("summary", "reason")))?;
    check_artifacts(&p.artifacts)?;
    let clock = Clock::new();
    let mut thread = open_thread(ctx.conn, &p.thread_id, &clock)?;
    release_lease(ctx.conn, &thread.thread_id, &clock)?;
    thread.status = ThreadStatus::Cancelled;
    if let Some(l) = &mut thread.lease {
        l.active = false;
    }
    let to = if p.agent == thread.assigned_to { thread.created_by.clone() } else { thread.assigned_to.clone() };
    let input = MessageInput { summary: p.reason, body: None, payload_json: None, artifacts: p.artifacts };
    append(
        ctx,
        &clock,
        Append {
            new_thread: false,
            thread,
            event_type: EventType::ThreadCancelled,
            actor: &p.agent,
            from: &p.agent,
            to,
            kind: MessageKind::Control,
            input,
        },
    )
}

/// `inbox.markRead`: the agent has read the thread's messages up to now.
pub fn mark_read(ctx: &mut WriteCtx<'_>, p: MarkReadParams) -> Result<MarkReadResult> {
    check_agent("agent", &p.agent)?;
    check_id("thread_id", &p.thread_id)?;
    let clock = Clock::new();
    read::thread(ctx.conn, &p.thread_id, &clock.now)?;
    let last = read::last_message_event(ctx.conn, &p.thread_id)?;
    mark_read_through(ctx.conn, &p.agent, &p.thread_id, last)?;
    Ok(MarkReadResult { thread_id: p.thread_id, agent: p.agent, read_through_event: last })
}
