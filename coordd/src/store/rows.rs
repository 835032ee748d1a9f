//! The row layer both backends share: every entity's column list, written once, and one
//! mapping per entity from a row selected with that list to its record.
//!
//! A mapping reads columns by their place in its list (`X_COLUMNS` and `x` below sit side by
//! side, so they change together), through [`RowRead`], which both drivers implement
//! (`rusqlite::Row` in `sqlite/tx.rs`, `postgres::Row` in `postgres/conn.rs`). The drivers
//! differ only in how a value is fetched; what a column means (text enums, RFC 3339 timestamps, JSON text, booleans) is
//! decided here. SQL dialects stay with each backend.

use coord_proto::types::*;

use crate::error::{Error, Result};
use crate::store::repos::{CouncilRow, LeaseRow, MailRow, MemberRow, RequestRow, StoredReservation, StoredThread};
use crate::time::Ts;

/// A column that could not be read as asked.
pub fn col_err(i: usize, e: impl std::fmt::Display) -> Error {
    Error::Storage(format!("column {i}: {e}"))
}

/// What a driver's row must offer: column values by position, with storage errors instead
/// of panics. Both drivers implement it; the mappings below take it as `&dyn RowRead`, so
/// one mapping serves rows of any statement lifetime.
pub trait RowRead {
    fn s(&self, i: usize) -> Result<String>;
    fn os(&self, i: usize) -> Result<Option<String>>;
    fn i(&self, i: usize) -> Result<i64>;
    fn oi(&self, i: usize) -> Result<Option<i64>>;
    /// A boolean (SQLite stores 0/1, PostgreSQL `boolean`).
    fn b(&self, i: usize) -> Result<bool>;
    fn f(&self, i: usize) -> Result<f64>;
}

/// How coordd stores its values, over any [`RowRead`]: protocol enums as text, timestamps as
/// fixed-width RFC 3339 text, JSON as text.
pub trait Cols: RowRead {
    fn u(&self, i: usize) -> Result<u32> {
        let v = self.i(i)?;
        u32::try_from(v).map_err(|e| col_err(i, e))
    }
    fn oi32(&self, i: usize) -> Result<Option<i32>> {
        self.oi(i)?.map(|v| i32::try_from(v).map_err(|e| col_err(i, e))).transpose()
    }
    /// A protocol enum stored as text.
    fn p<T: std::str::FromStr<Err = String>>(&self, i: usize) -> Result<T> {
        T::from_str(&self.s(i)?).map_err(|e| col_err(i, e))
    }
    fn op<T: std::str::FromStr<Err = String>>(&self, i: usize) -> Result<Option<T>> {
        self.os(i)?.map(|s| T::from_str(&s).map_err(|e| col_err(i, e))).transpose()
    }
    fn ts(&self, i: usize) -> Result<Ts> {
        Ts::parse(&self.s(i)?)
    }
    fn ots(&self, i: usize) -> Result<Option<Ts>> {
        self.os(i)?.map(|s| Ts::parse(&s)).transpose()
    }
    fn json(&self, i: usize) -> Result<serde_json::Value> {
        serde_json::from_str(&self.s(i)?).map_err(|e| col_err(i, e))
    }
}

impl<R: RowRead + ?Sized> Cols for R {}

/// A timestamp as stored.
pub fn ts_text(t: Ts) -> String {
    t.to_string()
}

/// An optional timestamp as stored.
pub fn opt_ts_text(t: Option<Ts>) -> Option<String> {
    t.map(ts_text)
}

/// Columns of [`thread`], with the lease joined in (from [`THREAD_FROM`]).
pub const THREAD_COLUMNS: &str = "t.thread_id, t.run_id, t.task_id, t.subject, t.created_by, \
     t.assigned_to, t.status, t.priority, t.latest_message_id, t.created_at, t.updated_at, \
     l.agent_id, l.lease_token, l.generation, l.claimed_at, l.expires_at, l.released_at";
pub const THREAD_FROM: &str = "threads t LEFT JOIN leases l ON l.thread_id = t.thread_id";

pub fn thread(r: &dyn RowRead) -> Result<StoredThread> {
    let lease = match r.os(11)? {
        None => None,
        Some(agent_id) => Some(LeaseRow {
            agent_id,
            token: r.s(12)?,
            generation: r.i(13)?,
            claimed_at: r.ts(14)?,
            expires_at: r.ts(15)?,
            released_at: r.ots(16)?,
        }),
    };
    let thread = Thread {
        thread_id: r.s(0)?,
        run_id: r.s(1)?,
        task_id: r.s(2)?,
        subject: r.s(3)?,
        created_by: r.s(4)?,
        assigned_to: r.s(5)?,
        status: r.p(6)?,
        priority: r.p(7)?,
        latest_message_id: r.os(8)?,
        created_at: r.s(9)?,
        updated_at: r.s(10)?,
        lease: None,
    };
    Ok(StoredThread { thread, lease })
}

/// Columns of [`lease`], from `leases`.
pub const LEASE_COLUMNS: &str = "thread_id, agent_id, lease_token, generation, claimed_at, expires_at, released_at";

/// A lease row with its thread.
pub fn lease(r: &dyn RowRead) -> Result<(String, LeaseRow)> {
    Ok((
        r.s(0)?,
        LeaseRow {
            agent_id: r.s(1)?,
            token: r.s(2)?,
            generation: r.i(3)?,
            claimed_at: r.ts(4)?,
            expires_at: r.ts(5)?,
            released_at: r.ots(6)?,
        },
    ))
}

/// Columns of [`message`], from `messages m`.
pub const MESSAGE_COLUMNS: &str = "m.message_id, m.thread_id, m.from_agent, m.to_agent, m.kind, \
     m.summary, m.body, m.payload_json, m.created_at, m.event_id, m.category, m.requires_ack, m.msg_type";

/// Two messages of one event (a page never splits them).
pub fn same_event(a: &Message, b: &Message) -> bool {
    a.event_id == b.event_id
}

/// A message without its artifacts.
pub fn message(r: &dyn RowRead) -> Result<Message> {
    Ok(Message {
        message_id: r.s(0)?,
        thread_id: r.s(1)?,
        from_agent: r.s(2)?,
        to_agent: r.s(3)?,
        kind: r.p(4)?,
        summary: r.s(5)?,
        body: r.s(6)?,
        payload_json: r.json(7)?,
        created_at: r.s(8)?,
        event_id: r.i(9)?,
        category: r.op(10)?,
        requires_ack: r.b(11)?,
        msg_type: r.os(12)?,
        artifacts: Vec::new(),
    })
}

/// Columns of [`artifact`], from `artifacts a`.
pub const ARTIFACT_COLUMNS: &str = "a.artifact_id, a.message_id, a.path, a.kind, a.metadata_json, a.created_at";

pub fn artifact(r: &dyn RowRead) -> Result<Artifact> {
    Ok(Artifact {
        artifact_id: r.s(0)?,
        message_id: r.s(1)?,
        path: r.s(2)?,
        kind: r.s(3)?,
        metadata_json: r.json(4)?,
        created_at: r.s(5)?,
    })
}

/// Columns of [`event`], from `events e`.
pub const EVENT_COLUMNS: &str = "e.event_id, e.event_type, e.source, e.run_id, e.task_id, e.thread_id, \
     e.actor, e.assigned_to, e.created_by, e.thread_status, e.message_id, e.summary, \
     e.payload_json, e.created_at, e.task_status";

/// An event without its message (an empty `thread_status` is none).
pub fn event(r: &dyn RowRead) -> Result<Event> {
    let thread_status = r.s(9)?;
    Ok(Event {
        event_id: r.i(0)?,
        event_type: r.p(1)?,
        source: r.s(2)?,
        run_id: r.s(3)?,
        task_id: r.s(4)?,
        thread_id: r.s(5)?,
        actor: r.s(6)?,
        assigned_to: r.s(7)?,
        created_by: r.s(8)?,
        thread_status: if thread_status.is_empty() { None } else { Some(r.p(9)?) },
        task_status: r.op(14)?,
        message_id: r.os(10)?,
        summary: r.s(11)?,
        payload_json: r.json(12)?,
        created_at: r.s(13)?,
        message: None,
        message_type: None,
        mail: None,
    })
}

/// Columns of [`mail`], from [`MAIL_FROM`] (or a backend's variant of it).
pub const MAIL_COLUMNS: &str = "x.recipient, x.message_id, x.event_id, m.thread_id, t.run_id, t.task_id, t.subject, \
     m.from_agent, m.kind, m.category, m.summary, m.body, m.requires_ack, m.created_at, x.state, x.priority, \
     x.delivered_at, x.read_at, x.acked_at, x.expires_at, x.withdrawn_at, x.reminded_at";
pub const MAIL_FROM: &str =
    "mail x JOIN messages m ON m.message_id = x.message_id JOIN threads t ON t.thread_id = m.thread_id";
/// Delivery order of mail: urgent first (sort ascending, then oldest).
pub const MAIL_PRIORITY_RANK: &str =
    "CASE x.priority WHEN 'urgent' THEN 0 WHEN 'high' THEN 1 WHEN 'normal' THEN 2 ELSE 3 END";

/// Two copies of one message (a timeline page never splits them).
pub fn same_message(a: &MailRow, b: &MailRow) -> bool {
    a.event_id == b.event_id
}

pub fn mail(r: &dyn RowRead) -> Result<MailRow> {
    Ok(MailRow {
        recipient: r.s(0)?,
        message_id: r.s(1)?,
        event_id: r.i(2)?,
        thread_id: r.s(3)?,
        run_id: r.s(4)?,
        task_id: r.s(5)?,
        subject: r.s(6)?,
        from_agent: r.s(7)?,
        kind: r.p(8)?,
        category: r.op(9)?,
        summary: r.s(10)?,
        body: r.s(11)?,
        requires_ack: r.b(12)?,
        created_at: r.s(13)?,
        state: r.p(14)?,
        priority: r.p(15)?,
        delivered_at: r.ots(16)?,
        read_at: r.ots(17)?,
        acked_at: r.ots(18)?,
        expires_at: r.ots(19)?,
        withdrawn_at: r.ots(20)?,
        reminded_at: r.ots(21)?,
    })
}

/// A copy as `Events::events_mail` reads it: `event_id, recipient, priority, expires_at`.
pub fn copy_of(r: &dyn RowRead) -> Result<crate::store::repos::CopyOf> {
    Ok((r.i(0)?, r.s(1)?, r.p(2)?, r.ots(3)?))
}

/// Columns of [`agent`], from `agents` (also its insert order).
pub const AGENT_COLUMNS: &str = "agent_id, display_name, role, status, registered, created_at, last_seen_at, version";

pub fn agent(r: &dyn RowRead) -> Result<Agent> {
    Ok(Agent {
        agent_id: r.s(0)?,
        display_name: r.s(1)?,
        role: r.s(2)?,
        status: r.p(3)?,
        registered: r.b(4)?,
        created_at: r.s(5)?,
        last_seen_at: r.os(6)?,
        version: r.i(7)?,
    })
}

/// Columns of [`reservation`], from `reservations`.
pub const RESERVATION_COLUMNS: &str =
    "reservation_id, scope, agent_id, task_id, shared, state, generation, created_at, expires_at, released_at";

/// A reservation (`stale` is the domain's to derive).
pub fn reservation(r: &dyn RowRead) -> Result<StoredReservation> {
    Ok(StoredReservation {
        expires: r.ts(8)?,
        reservation: Reservation {
            reservation_id: r.s(0)?,
            scope: r.s(1)?,
            agent_id: r.s(2)?,
            task_id: r.s(3)?,
            shared: r.b(4)?,
            state: r.p(5)?,
            stale: false,
            generation: r.i(6)?,
            created_at: r.s(7)?,
            expires_at: r.s(8)?,
            released_at: r.os(9)?,
        },
    })
}

/// Columns of [`council`], from `councils` (also its insert order).
pub const COUNCIL_COLUMNS: &str = "run_id, council_id, topic, body, phase, groups_json, created_at, updated_at";

pub fn council(r: &dyn RowRead) -> Result<CouncilRow> {
    Ok(CouncilRow {
        run_id: r.s(0)?,
        council_id: r.s(1)?,
        topic: r.s(2)?,
        body: r.s(3)?,
        phase: r.p(4)?,
        groups_json: r.s(5)?,
        created_at: r.s(6)?,
        updated_at: r.s(7)?,
    })
}

/// Columns of [`member`], from `council_members` (also its insert order).
pub const MEMBER_COLUMNS: &str =
    "run_id, council_id, reviewer, ord, brainstorm_thread_id, brainstorm_json, vote_thread_id, vote_json";

pub fn member(r: &dyn RowRead) -> Result<MemberRow> {
    Ok(MemberRow {
        run_id: r.s(0)?,
        council_id: r.s(1)?,
        reviewer: r.s(2)?,
        ord: r.i(3)?,
        brainstorm_thread_id: r.s(4)?,
        brainstorm_json: r.os(5)?,
        vote_thread_id: r.os(6)?,
        vote_json: r.os(7)?,
    })
}

/// Columns of [`run`], from `runs` (also its insert order).
pub const RUN_COLUMNS: &str = "run_id, goal, status, created_by, auto_retry, created_at, updated_at, auto_merge, \
     repo, base_branch, base_rev, integration_branch, verify, require_approval, merge_retries";

pub fn run(r: &dyn RowRead) -> Result<Run> {
    Ok(Run {
        run_id: r.s(0)?,
        goal: r.s(1)?,
        status: r.p(2)?,
        created_by: r.s(3)?,
        auto_retry: r.u(4)?,
        created_at: r.s(5)?,
        updated_at: r.s(6)?,
        auto_merge: r.b(7)?,
        repo: r.os(8)?,
        base_branch: r.os(9)?,
        base_rev: r.os(10)?,
        integration_branch: r.os(11)?,
        verify: r.os(12)?,
        require_approval: r.b(13)?,
        merge_retries: r.u(14)?,
    })
}

/// Columns of [`task`], from `tasks t`.
pub const TASK_COLUMNS: &str = "t.run_id, t.task_id, t.title, t.body, t.acceptance, t.priority, t.assign_to, \
     t.role, t.kind, t.max_attempts, t.status, t.attempt, t.created_at, t.updated_at, t.merge_state, \
     t.merge_commit, t.resolves, t.verify";

/// A task; `depends_on` is filled in separately.
pub fn task(r: &dyn RowRead) -> Result<Task> {
    Ok(Task {
        run_id: r.s(0)?,
        task_id: r.s(1)?,
        title: r.s(2)?,
        body: r.s(3)?,
        acceptance: r.s(4)?,
        priority: r.p(5)?,
        assign_to: r.os(6)?,
        role: r.os(7)?,
        kind: r.p(8)?,
        max_attempts: r.u(9)?,
        status: r.p(10)?,
        attempt: r.u(11)?,
        depends_on: Vec::new(),
        created_at: r.s(12)?,
        updated_at: r.s(13)?,
        merge_state: r.op(14)?,
        merge_commit: r.os(15)?,
        resolves: r.os(16)?,
        verify: r.os(17)?,
    })
}

/// Columns of [`attempt`], from `attempts` (also its insert order).
pub const ATTEMPT_COLUMNS: &str = "run_id, task_id, attempt, thread_id, worker, status, repo, worktree_path, \
     branch, base_rev, base_branch, previous_thread_id, started_at, ended_at, host";

pub fn attempt(r: &dyn RowRead) -> Result<Attempt> {
    Ok(Attempt {
        run_id: r.s(0)?,
        task_id: r.s(1)?,
        attempt: r.u(2)?,
        thread_id: r.s(3)?,
        worker: r.s(4)?,
        status: r.p(5)?,
        repo: r.os(6)?,
        worktree_path: r.os(7)?,
        branch: r.os(8)?,
        base_rev: r.os(9)?,
        base_branch: r.os(10)?,
        previous_thread_id: r.os(11)?,
        started_at: r.s(12)?,
        ended_at: r.os(13)?,
        host: r.os(14)?,
    })
}

/// Columns of [`launch`], from `launch_sessions` (also its insert order).
pub const LAUNCH_COLUMNS: &str = "session_id, run_id, task_id, attempt, thread_id, agent, client, pid, host, \
     launcher, cwd, log_path, tmux_window, state, started_at, ended_at, exit_code, signal, reason, log_tail, mode";

pub fn launch(r: &dyn RowRead) -> Result<LaunchSession> {
    Ok(LaunchSession {
        session_id: r.s(0)?,
        run_id: r.s(1)?,
        task_id: r.s(2)?,
        attempt: r.u(3)?,
        thread_id: r.s(4)?,
        agent: r.s(5)?,
        client: r.s(6)?,
        pid: r.i(7)?,
        host: r.s(8)?,
        launcher: r.s(9)?,
        cwd: r.s(10)?,
        log_path: r.s(11)?,
        tmux_window: r.os(12)?,
        state: r.p(13)?,
        started_at: r.s(14)?,
        ended_at: r.os(15)?,
        exit_code: r.oi32(16)?,
        signal: r.oi32(17)?,
        reason: r.os(18)?,
        log_tail: r.os(19)?,
        mode: r.p(20)?,
    })
}

/// Columns of [`search_hit`] from `messages m` and `threads t`, before the two each backend
/// computes: the score (lower is better) and the snippet.
pub const SEARCH_HIT_COLUMNS: &str = "m.message_id, m.thread_id, t.run_id, t.task_id, t.subject, m.from_agent, \
     m.to_agent, m.kind, m.summary, m.created_at, m.event_id";

pub fn search_hit(r: &dyn RowRead) -> Result<SearchHit> {
    Ok(SearchHit {
        message_id: r.s(0)?,
        thread_id: r.s(1)?,
        run_id: r.s(2)?,
        task_id: r.s(3)?,
        subject: r.s(4)?,
        from_agent: r.s(5)?,
        to_agent: r.s(6)?,
        kind: r.p(7)?,
        summary: r.s(8)?,
        created_at: r.s(9)?,
        event_id: r.i(10)?,
        score: r.f(11)?,
        snippet: r.s(12)?,
    })
}

/// Columns of [`request`], from `requests r`.
pub const REQUEST_COLUMNS: &str =
    "r.request_id, r.msg_type, r.thread_id, r.message_id, r.from_agent, r.to_agent, r.run_id, r.task_id, r.created_at";

pub fn request(r: &dyn RowRead) -> Result<RequestRow> {
    Ok(RequestRow {
        request_id: r.s(0)?,
        msg_type: r.s(1)?,
        thread_id: r.s(2)?,
        message_id: r.s(3)?,
        from_agent: r.s(4)?,
        to_agent: r.s(5)?,
        run_id: r.s(6)?,
        task_id: r.s(7)?,
        created_at: r.s(8)?,
    })
}

/// Columns of [`session_usage`] (`launch_usage`).
pub const USAGE_COLUMNS: &str = "session_id, run_id, task_id, agent, input_tokens, output_tokens, \
     cache_read_tokens, cache_write_tokens, cost_micro_usd, max_cost_micro_usd, max_tokens, updated_at";

pub fn session_usage(r: &dyn RowRead) -> Result<SessionUsage> {
    Ok(SessionUsage {
        session_id: r.s(0)?,
        run_id: r.s(1)?,
        task_id: r.s(2)?,
        agent: r.s(3)?,
        usage: Usage {
            input_tokens: r.i(4)?,
            output_tokens: r.i(5)?,
            cache_read_tokens: r.i(6)?,
            cache_write_tokens: r.i(7)?,
            cost_usd: from_micro(r.i(8)?),
        },
        budget: Budget { max_cost_usd: r.oi(9)?.map(from_micro), max_tokens: r.oi(10)? },
        updated_at: r.s(11)?,
    })
}

/// Columns of [`run_budget`] (`run_budgets`).
pub const RUN_BUDGET_COLUMNS: &str = "run_id, max_cost_micro_usd, max_tokens, reached_at";

pub fn run_budget(r: &dyn RowRead) -> Result<RunBudget> {
    Ok(RunBudget {
        run_id: r.s(0)?,
        budget: Budget { max_cost_usd: r.oi(1)?.map(from_micro), max_tokens: r.oi(2)? },
        reached_at: r.os(3)?,
    })
}
