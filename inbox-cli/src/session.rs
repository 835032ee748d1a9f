//! The session mailbox commands of `inbox`: check, pending, withdraw, peer link, hook
//! install, and the Claude Code hook handler (`inbox hook claude <event>`).

use std::io::Read;
use std::process::ExitCode;
use std::time::Duration;

use coord_client::{Client, ConnectOptions};
use coord_proto::types::*;
use serde_json::{Value, json};

use crate::cli::*;
use crate::commands::Ctx;
use crate::output::{CliError, envelope, to_value};

type Res = Result<ExitCode, CliError>;

/// How long a hook waits for an absent daemon before giving up silently.
const HOOK_CONNECT: Duration = Duration::from_millis(100);
/// How long a hook waits for its calls once connected.
const HOOK_CALLS: Duration = Duration::from_secs(3);
/// Claude Code caps hook output at 10,000 characters; stay under it.
const MAX_CONTEXT: usize = 9000;

pub enum Prepared {
    Check(CheckParams),
    Pending(PendingParams),
    Withdraw(MailRef),
    PeerLink(PeerLinkParams),
    Install(InstallHooksParams),
}

pub fn prepare(ctx: &Ctx, cmd: Cmd) -> Result<Result<Prepared, Cmd>, CliError> {
    Ok(Ok(match cmd {
        Cmd::Check(a) => Prepared::Check(CheckParams { agent: ctx.agent.clone(), task_id: a.task, priorities: vec![] }),
        Cmd::Pending(a) => {
            Prepared::Pending(PendingParams { agent: ctx.agent.clone(), task_id: a.task, remind: false })
        }
        Cmd::Withdraw(a) => {
            Prepared::Withdraw(MailRef { agent: ctx.agent("withdraw --agent")?, message_id: a.message })
        }
        Cmd::Peer(PeerCmd::Link(a)) => match a.tasks.as_slice() {
            [x, y] => Prepared::PeerLink(PeerLinkParams { task_id: x.clone(), peer_task_id: y.clone() }),
            _ => return Err(CliError::Invalid("peer link takes exactly two --task".into())),
        },
        Cmd::Hook(HookCmd::Install(a)) => {
            let cwd = std::env::current_dir().map_err(|e| CliError::Internal(e.to_string()))?;
            let dir = a.dir.map_or(cwd.clone(), |d| cwd.join(d));
            Prepared::Install(InstallHooksParams {
                dir: dir.display().to_string(),
                agent: ctx.agent.clone(),
                task_id: a.task,
                thread_id: None,
                inbox_bin: std::env::current_exe().ok().map(|p| p.display().to_string()),
            })
        }
        other => return Ok(Err(other)),
    }))
}

impl Prepared {
    pub async fn execute(self, json: bool, c: &Client) -> Res {
        match self {
            Prepared::Check(p) => {
                let r = c.mail_check(p).await?;
                if json {
                    envelope("check", to_value(&r));
                } else if r.messages.is_empty() {
                    println!("no new messages");
                } else {
                    print!("{}", context(&r.messages));
                }
            }
            Prepared::Pending(p) => {
                let r = c.mail_pending(p).await?;
                if json {
                    envelope("pending", json!({"pending": r.pending, "urgent": r.urgent}));
                } else {
                    println!("{} pending ({} urgent)", r.pending, r.urgent);
                }
            }
            Prepared::Withdraw(p) => {
                let r = c.mail_withdraw(p).await?;
                if json {
                    envelope("withdraw", to_value(&r));
                } else {
                    println!("withdrew {} from {}", r.message_id, r.recipients.join(", "));
                }
            }
            Prepared::PeerLink(p) => {
                let r = c.peers_link(p).await?;
                if json {
                    envelope("peer link", to_value(&r));
                } else {
                    println!("{} is linked with {}", r.task_id, r.peers.join(", "));
                }
            }
            Prepared::Install(p) => {
                let r = c.install_hooks(p).await?;
                if json {
                    envelope("hook install", to_value(&r));
                } else {
                    for f in &r.files {
                        println!("wrote {f}");
                    }
                }
            }
        }
        Ok(ExitCode::SUCCESS)
    }
}

/// Messages as context for an agent: one block each, newest last, within the size cap.
fn context(messages: &[MailItem]) -> String {
    let mut out = String::new();
    for m in messages {
        let mut block = format!(
            "[{}] from {} (message {}, thread {}{}): {}\n",
            m.priority,
            m.from_agent,
            m.message_id,
            m.thread_id,
            if m.task_id.is_empty() { String::new() } else { format!(", task {}", m.task_id) },
            m.summary
        );
        for line in m.body.lines() {
            block.push_str("    ");
            block.push_str(line);
            block.push('\n');
        }
        if out.len() + block.len() > MAX_CONTEXT {
            out.push_str("(more messages: run `inbox mail` to see them all)\n");
            break;
        }
        out.push_str(&block);
    }
    out
}

fn senders(messages: &[MailItem]) -> String {
    let mut s: Vec<&str> = messages.iter().map(|m| m.from_agent.as_str()).collect();
    s.sort();
    s.dedup();
    s.join(", ")
}

/// `inbox hook claude <event>`: answer one Claude Code hook. Never fails the session: any
/// problem (no daemon, no identity, bad input) prints nothing and exits 0.
pub async fn hook_claude(agent: Option<String>, a: HookClaudeArgs, mut opts: ConnectOptions) -> ExitCode {
    // The hook's JSON is drained but not needed: what to say depends only on the mailbox
    // (`stop_hook_active` needs no case, since what blocked a stop is delivered by then).
    let _ = std::io::stdin().read_to_string(&mut String::new());
    if agent.is_none() && a.task.is_none() {
        return ExitCode::SUCCESS;
    }
    opts.autostart = false;
    let Ok(Ok(client)) = tokio::time::timeout(HOOK_CONNECT, Client::connect(opts)).await else {
        return ExitCode::SUCCESS;
    };
    if let Ok(Some(answer)) = tokio::time::timeout(HOOK_CALLS, answer(&client, agent, a)).await {
        println!("{answer}");
    }
    ExitCode::SUCCESS
}

/// The hook's JSON answer, if it has something to say.
async fn answer(c: &Client, agent: Option<String>, a: HookClaudeArgs) -> Option<Value> {
    let task_id = a.task.clone();
    let heartbeat = |status: AgentStatus| {
        let agent = agent.clone();
        async move {
            if let Some(agent_id) = agent {
                let _ = c.agent_heartbeat(HeartbeatParams { agent_id, status: Some(status) }).await;
            }
        }
    };
    let check = |priorities: Vec<Priority>| {
        c.mail_check(CheckParams { agent: agent.clone(), task_id: task_id.clone(), priorities })
    };
    let context_for = |event: &str, messages: &[MailItem]| {
        json!({"hookSpecificOutput": {"hookEventName": event, "additionalContext": format!(
            "New inbox messages ({}). Treat them as user input, with priority over your current plan:\n\n{}",
            messages.len(), context(messages))}})
    };
    match a.event {
        HookEvent::PostToolUse => {
            let p = PendingParams { agent: agent.clone(), task_id: task_id.clone(), remind: true };
            let (_, r) = tokio::join!(heartbeat(AgentStatus::Busy), c.mail_pending(p));
            let r = r.ok().filter(|r| !r.new.is_empty())?;
            let urgent = if r.urgent > 0 { format!(", {} urgent", r.urgent) } else { String::new() };
            let text = format!(
                "Inbox: {} pending message(s){urgent}, new from {}. Read them now with `inbox check`, then continue.",
                r.pending,
                senders(&r.new)
            );
            Some(json!({"hookSpecificOutput": {"hookEventName": "PostToolUse", "additionalContext": text}}))
        }
        HookEvent::Stop => {
            // Only mail not delivered before blocks, so the same messages never block twice.
            let wanted = vec![Priority::Urgent, Priority::High, Priority::Normal];
            let r = check(wanted).await.ok().filter(|r| !r.messages.is_empty());
            let Some(r) = r else {
                heartbeat(AgentStatus::Idle).await;
                return None;
            };
            Some(json!({"decision": "block", "reason": format!(
                "Before stopping, handle {} new inbox message(s), as user input:\n\n{}",
                r.messages.len(), context(&r.messages))}))
        }
        HookEvent::UserPromptSubmit => {
            let (_, r) = tokio::join!(heartbeat(AgentStatus::Busy), check(vec![]));
            let r = r.ok().filter(|r| !r.messages.is_empty())?;
            Some(context_for("UserPromptSubmit", &r.messages))
        }
        HookEvent::SessionStart => {
            let (_, r) = tokio::join!(heartbeat(AgentStatus::Idle), check(vec![]));
            let r = r.ok().filter(|r| !r.messages.is_empty())?;
            Some(context_for("SessionStart", &r.messages))
        }
    }
}
