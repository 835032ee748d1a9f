//! The MCP tools of `inbox mcp`: their argument schemas, short descriptions, and the
//! daemon calls behind them. Each description is written for the agent reading the tool
//! list, so it says when to use the tool and what comes back, and stays short.

use std::time::Duration;

use coord_client::ClientError;
use coord_proto::ErrorCode;
use coord_proto::api::*;
use coord_proto::types::*;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{CallToolResult, Implementation, ServerCapabilities, ServerConfig};
use rmcp::{ServerHandler, schemars, tool, tool_handler, tool_router};
use serde::Deserialize;
use serde_json::{Value, json};

use super::finish::FinishArgs;
use super::{InboxMcp, ToolError};

const INSTRUCTIONS: &str = "\
coordd inbox for this agent session. Other sessions and people message you here: call \
check_inbox after each subagent or long step and treat what it returns as user input, \
with priority over your plan. Work flow: fetch_work, claim, update, and done or fail. \
When blocked, ask, then wait_reply (re-arm with the returned cursor until it wakes). \
Reserve files before editing shared ones. Errors carry a stable `code`.";

/// What `fetch_work` lists by default: new work and the work this agent holds.
const OPEN_WORK: [ThreadStatus; 4] =
    [ThreadStatus::Pending, ThreadStatus::Claimed, ThreadStatus::InProgress, ThreadStatus::Blocked];

/// Parse an enum given as text, naming the argument on error.
fn parse<T: std::str::FromStr<Err = String>>(arg: &str, v: &str) -> Result<T, ToolError> {
    v.parse::<T>().map_err(|e| ToolError::invalid(format!("{arg}: {e}")))
}

fn parse_opt<T: std::str::FromStr<Err = String>>(arg: &str, v: Option<&str>) -> Result<Option<T>, ToolError> {
    v.map(|s| parse(arg, s)).transpose()
}

fn message_input(summary: String, body: Option<String>) -> MessageInput {
    MessageInput { summary, body, ..Default::default() }
}

fn mail_view(m: &MailItem) -> Value {
    let mut v = json!({
        "message_id": m.message_id, "thread_id": m.thread_id, "from": m.from_agent,
        "priority": m.priority, "subject": m.subject, "summary": m.summary, "body": m.body,
        "sent_at": m.created_at,
    });
    if !m.task_id.is_empty() {
        v["task_id"] = json!(m.task_id);
    }
    if let Some(c) = m.category {
        v["category"] = json!(c);
    }
    if m.requires_ack {
        v["requires_ack"] = json!(true);
    }
    v
}

fn thread_view(t: &Thread) -> Value {
    let mut v = json!({
        "thread_id": t.thread_id, "subject": t.subject, "status": t.status, "priority": t.priority,
        "from": t.created_by, "updated_at": t.updated_at,
    });
    if !t.task_id.is_empty() {
        v["task_id"] = json!(t.task_id);
    }
    if let Some(l) = t.lease.as_ref().filter(|l| l.active) {
        v["held_by"] = json!(l.agent_id);
    }
    v
}

fn message_view(m: &Message) -> Value {
    json!({
        "message_id": m.message_id, "from": m.from_agent, "to": m.to_agent, "kind": m.kind,
        "summary": m.summary, "body": m.body, "sent_at": m.created_at,
    })
}

fn posted(r: MessageResult) -> Value {
    json!({
        "thread_id": r.thread.thread_id, "message_id": r.message.message_id,
        "thread_status": r.thread.status, "event_id": r.event_id,
    })
}

fn reservation_view(r: &Reservation) -> Value {
    json!({
        "scope": r.scope, "agent": r.agent_id, "task_id": r.task_id, "shared": r.shared,
        "state": r.state, "stale": r.stale, "expires_at": r.expires_at,
    })
}

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SendArgs {
    /// Recipient agent. Give exactly one of to, to_task, to_peer.
    #[serde(default)]
    to: Option<String>,
    /// Recipient task: whoever runs it gets the message, queued until it starts.
    #[serde(default)]
    to_task: Option<String>,
    /// true: send to the task(s) linked as this session's peers.
    #[serde(default)]
    to_peer: bool,
    /// Add the message to this thread instead of starting a new one.
    #[serde(default)]
    thread_id: Option<String>,
    /// One line: what this message is about.
    summary: String,
    #[serde(default)]
    body: Option<String>,
    /// low, normal (default), high or urgent.
    #[serde(default)]
    priority: Option<String>,
    /// Drop the message if still undelivered after this many seconds.
    #[serde(default)]
    expires_in_seconds: Option<u64>,
}

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FetchArgs {
    /// Thread statuses to include (default pending, claimed, in_progress, blocked).
    #[serde(default)]
    statuses: Vec<String>,
    /// At most this many threads (default 20).
    #[serde(default)]
    limit: Option<u32>,
}

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ClaimArgs {
    thread_id: String,
    /// Lease length (default 900).
    #[serde(default)]
    lease_seconds: Option<u64>,
}

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PostArgs {
    thread_id: String,
    /// One line.
    summary: String,
    #[serde(default)]
    body: Option<String>,
}

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReplyArgs {
    thread_id: String,
    summary: String,
    #[serde(default)]
    body: Option<String>,
    /// Recipient (default: the other side of the thread).
    #[serde(default)]
    to: Option<String>,
    /// answer (default), question, progress or control.
    #[serde(default)]
    kind: Option<String>,
}

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WaitArgs {
    thread_id: String,
    /// Cursor: wake on replies after this event id (the event_id of your ask, send_message
    /// or reply, or a previous wait_reply's cursor). Default: where this session left off,
    /// else after your latest message in the thread.
    #[serde(default)]
    after_event: Option<i64>,
    /// Give up after this many seconds (default and maximum: the server's limit, 45 unless
    /// configured). A longer one is cut to the limit, and the result says so (cut_to_seconds).
    #[serde(default)]
    timeout_seconds: Option<u64>,
}

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReserveArgs {
    /// A path or glob, relative to the project root (e.g. src/db/** or README.md).
    scope: String,
    /// Minutes until it expires, 5 to 1440 (default 120).
    #[serde(default)]
    ttl_minutes: Option<u32>,
    /// Shared (others may share it) instead of exclusive.
    #[serde(default)]
    shared: bool,
    /// Take over a stale reservation (past its expiry, never released) instead of failing.
    #[serde(default)]
    takeover_stale: bool,
    /// The task it is for (default: this session's task).
    #[serde(default)]
    task_id: Option<String>,
}

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReleaseArgs {
    scope: String,
}

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AgentsArgs {
    #[serde(default)]
    role: Option<String>,
    /// idle, busy or offline.
    #[serde(default)]
    status: Option<String>,
}

#[tool_router(vis = "pub(super)")]
impl InboxMcp {
    #[tool(description = "Deliver your new messages (urgent first) and mark them delivered: each is returned once. \
                          Treat them as user input.")]
    async fn check_inbox(&self) -> CallToolResult {
        let p = CheckParams { agent: Some(self.agent.clone()), task_id: self.task.clone(), ..Default::default() };
        self.run(|c| async move {
            let r = c.mail_check(p).await?;
            Ok(json!({"count": r.messages.len(), "messages": r.messages.iter().map(mail_view).collect::<Vec<_>>()}))
        })
        .await
    }

    #[tool(
        description = "Your mailbox at a glance: queued message counts, messages waiting for your ack, \
                          your active file reservations.",
        annotations(read_only_hint = true)
    )]
    async fn inbox_status(&self) -> CallToolResult {
        let (agent, task) = (self.agent.clone(), self.task.clone());
        self.run(|c| async move {
            let pending = PendingParams { agent: Some(agent.clone()), task_id: task.clone(), remind: false };
            let status = StatusParams { agent: Some(agent.clone()), task_id: None };
            let (p, s) = tokio::join!(c.mail_pending(pending), c.status(status));
            let (p, s) = (p?, s?);
            let unacked: Vec<Value> = s
                .unacked
                .iter()
                .filter(|u| u.mail.to_agent == agent)
                .map(|u| json!({"message": mail_view(&u.mail), "waiting_seconds": u.waiting_seconds}))
                .collect();
            let mine: Vec<Value> =
                s.reservations.iter().filter(|r| r.agent_id == agent).map(reservation_view).collect();
            Ok(json!({
                "agent": agent, "task_id": task, "pending": p.pending, "urgent": p.urgent,
                "unacked": unacked, "reservations": mine,
            }))
        })
        .await
    }

    #[tool(description = "Send a message to an agent (to), a task (to_task) or your linked peer (to_peer); \
                          it starts a thread unless thread_id is given.")]
    async fn send_message(&self, Parameters(a): Parameters<SendArgs>) -> CallToolResult {
        let p = (|| -> Result<SendParams, ToolError> {
            Ok(SendParams {
                from: self.agent.clone(),
                to: a.to.unwrap_or_default(),
                to_task: a.to_task,
                to_peer: if a.to_peer { Some(self.task("to_peer")?) } else { None },
                expires_in_seconds: a.expires_in_seconds,
                thread_id: a.thread_id,
                priority: parse_opt("priority", a.priority.as_deref())?,
                message: message_input(a.summary, a.body),
                ..Default::default()
            })
        })();
        self.run(|c| async move { Ok(self.remember(c.send(p?).await?)) }).await
    }

    #[tool(
        description = "List threads assigned to you (work to do), highest priority first. Does not claim.",
        annotations(read_only_hint = true)
    )]
    async fn fetch_work(&self, Parameters(a): Parameters<FetchArgs>) -> CallToolResult {
        let statuses: Result<Vec<ThreadStatus>, ToolError> = if a.statuses.is_empty() {
            Ok(OPEN_WORK.to_vec())
        } else {
            a.statuses.iter().map(|s| parse("statuses", s)).collect()
        };
        let agent = self.agent.clone();
        self.run(|c| async move {
            let p = FetchParams { agent, statuses: statuses?, limit: a.limit.or(Some(20)), unread: false, after: None };
            let r = coord_client::pages::all(p, |p| c.fetch(p)).await?;
            Ok(json!({"threads": r.threads.iter().map(thread_view).collect::<Vec<_>>()}))
        })
        .await
    }

    #[tool(description = "Claim a thread: an exclusive lease, so nobody else works on it. \
                          If you hold it already, this extends your lease (the status stays).")]
    async fn claim(&self, Parameters(a): Parameters<ClaimArgs>) -> CallToolResult {
        let agent = self.agent.clone();
        self.run(|c| async move {
            // Renew first: a fresh claim would reset a blocked thread to claimed.
            let renew = RenewParams {
                agent: agent.clone(),
                thread_id: a.thread_id.clone(),
                lease_seconds: a.lease_seconds,
                lease_token: None,
            };
            let (r, renewed) = match c.renew(renew).await.map_err(ClientError::from) {
                Ok(r) => (r, true),
                Err(ClientError::Rpc { app: Some(ErrorCode::NotLeaseHolder | ErrorCode::LeaseExpired), .. }) => {
                    let p = ClaimParams { agent, thread_id: a.thread_id, lease_seconds: a.lease_seconds };
                    (c.claim(p).await?, false)
                }
                Err(e) => return Err(e.into()),
            };
            Ok(json!({"thread": thread_view(&r.thread), "lease_expires_at": r.lease.expires_at,
                      "renewed": renewed, "event_id": r.event_id}))
        })
        .await
    }

    #[tool(description = "Report progress on a thread you hold (status in_progress).")]
    async fn update(&self, Parameters(a): Parameters<PostArgs>) -> CallToolResult {
        let p = self.update_params(a, ThreadStatus::InProgress);
        self.run(|c| async move { Ok(posted(c.update(p).await?)) }).await
    }

    #[tool(description = "Ask a blocking question on a thread you hold (status blocked). \
                          Then call wait_reply with the returned event_id as after_event.")]
    async fn ask(&self, Parameters(a): Parameters<PostArgs>) -> CallToolResult {
        let p = self.update_params(a, ThreadStatus::Blocked);
        self.run(|c| async move { Ok(self.remember(c.update(p).await?)) }).await
    }

    #[tool(description = "Wait for a reply (answer, result or control) in a thread, up to a bounded time. \
                          Without a cursor it waits after your latest message there (a reply given before is \
                          not missed). Returns woke=false and a cursor on timeout: call again with \
                          after_event=cursor (or without it when the cursor is null). \
                          A timeout_seconds above the server's limit is cut to it (cut_to_seconds in the result).")]
    async fn wait_reply(&self, Parameters(a): Parameters<WaitArgs>) -> CallToolResult {
        let wait = a.timeout_seconds.map_or(self.max_wait, |s| Duration::from_secs(s).min(self.max_wait));
        // Said, not silent: the agent learns the limit and can re-arm instead of giving up.
        let cut = a.timeout_seconds.is_some_and(|s| Duration::from_secs(s) > self.max_wait);
        let after_event = a.after_event.or(self.cursor(&a.thread_id));
        self.run(|c| async move {
            let filter = EventFilter {
                after_event,
                // No cursor at all (a new session): the daemon starts after this agent's
                // latest message in the thread, so a reply given before is not missed.
                after_latest_from: after_event.is_none().then(|| self.agent.clone()),
                thread_id: Some(a.thread_id.clone()),
                kinds: MessageKind::REPLIES.to_vec(),
                ..Default::default()
            };
            // Resumes by itself if the daemon restarts while it waits.
            let mut sub = c.subscribe(filter).await?;
            let deadline = tokio::time::Instant::now() + wait;
            let woke = loop {
                let left = deadline.saturating_duration_since(tokio::time::Instant::now());
                let Some(ev) = (if left.is_zero() { None } else { sub.next_within(Some(left)).await? }) else {
                    break None;
                };
                // Your own answer or result is not the reply you are waiting for.
                if ev.message.as_ref().is_none_or(|m| m.from_agent != self.agent) {
                    break Some(ev);
                }
            };
            // None: it started after this agent's latest message and saw nothing; the next
            // call without a cursor starts there again.
            let cursor = sub.cursor();
            if let Some(c) = cursor {
                self.set_cursor(&a.thread_id, c);
            }
            if let Some(ev) = &woke {
                crate::commands::waits::delivered(&c, Some(self.agent.clone()), self.task.clone(), ev.message.as_ref())
                    .await;
            }
            let mut out = match woke {
                Some(ev) => json!({"woke": true, "cursor": cursor, "message": ev.message.as_ref().map(message_view)}),
                None => json!({"woke": false, "cursor": cursor, "waited_seconds": wait.as_secs()}),
            };
            if cut {
                out["cut_to_seconds"] = json!(wait.as_secs());
            }
            Ok(out)
        })
        .await
    }

    #[tool(description = "Reply inside a thread (an answer to a blocked thread resumes its worker).")]
    async fn reply(&self, Parameters(a): Parameters<ReplyArgs>) -> CallToolResult {
        let kind = parse_opt("kind", a.kind.as_deref());
        let from = self.agent.clone();
        self.run(|c| async move {
            let p = ReplyParams {
                from,
                to: a.to,
                thread_id: a.thread_id,
                kind: kind?,
                message: message_input(a.summary, a.body),
            };
            Ok(self.remember(c.reply(p).await?))
        })
        .await
    }

    #[tool(description = "Finish a thread you hold, with its result (summary, details in body, files in artifacts).")]
    async fn done(&self, Parameters(a): Parameters<FinishArgs>) -> CallToolResult {
        let p = self.finish_params(a).await;
        self.run(|c| async move { Ok(posted(c.done(p).await?)) }).await
    }

    #[tool(description = "Fail a thread you hold, saying why (files such as logs in artifacts).")]
    async fn fail(&self, Parameters(a): Parameters<FinishArgs>) -> CallToolResult {
        let p = self.finish_params(a).await;
        self.run(|c| async move { Ok(posted(c.fail(p).await?)) }).await
    }

    #[tool(description = "Reserve a file scope (path or glob) before editing it; conflicts name the holder.")]
    async fn reserve(&self, Parameters(a): Parameters<ReserveArgs>) -> CallToolResult {
        let p = ReserveParams {
            agent: self.agent.clone(),
            scope: a.scope,
            task_id: a.task_id.or_else(|| self.task.clone()),
            ttl_minutes: a.ttl_minutes,
            shared: a.shared,
            takeover_stale: a.takeover_stale,
        };
        self.run(|c| async move {
            let r = c.reserve(p).await?;
            Ok(json!({"reservation": reservation_view(&r.reservation), "renewed": r.renewed,
                      "taken_over": r.taken_over.iter().map(|t| t.agent_id.clone()).collect::<Vec<_>>()}))
        })
        .await
    }

    #[tool(description = "Release your reservation of a scope.")]
    async fn release(&self, Parameters(a): Parameters<ReleaseArgs>) -> CallToolResult {
        let p = ReleaseParams { agent: self.agent.clone(), scope: a.scope };
        self.run(|c| async move { Ok(json!({"reservation": reservation_view(&c.release(p).await?.reservation)})) })
            .await
    }

    #[tool(
        description = "List the registered agents: id, role, status (idle, busy, offline), last seen.",
        annotations(read_only_hint = true)
    )]
    async fn list_agents(&self, Parameters(a): Parameters<AgentsArgs>) -> CallToolResult {
        let status = parse_opt("status", a.status.as_deref());
        self.run(|c| async move {
            let p = AgentListParams { role: a.role, status: status?, include_unregistered: false, after: None };
            let agents: Vec<Value> = coord_client::pages::all(p, |p| c.agent_list(p))
                .await?
                .agents
                .iter()
                .map(|a| json!({"agent": a.agent_id, "role": a.role, "status": a.status, "last_seen_at": a.last_seen_at}))
                .collect();
            Ok(json!({"agents": agents}))
        })
        .await
    }
}

impl InboxMcp {
    /// The result of a message this session wrote and may wait on: its event becomes the
    /// thread's remembered `wait_reply` cursor.
    fn remember(&self, r: MessageResult) -> Value {
        self.set_cursor(&r.thread.thread_id, r.event_id);
        posted(r)
    }

    fn update_params(&self, a: PostArgs, status: ThreadStatus) -> UpdateParams {
        UpdateParams {
            agent: self.agent.clone(),
            thread_id: a.thread_id,
            status: Some(status),
            lease_token: None,
            message: message_input(a.summary, a.body),
        }
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for InboxMcp {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("coordd-inbox", env!("CARGO_PKG_VERSION")))
            .with_instructions(format!("{INSTRUCTIONS} You are agent `{}`.", self.agent))
    }
}
