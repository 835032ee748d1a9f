//! One function per command: build the params, make the call, print the result.

use std::process::ExitCode;
use std::time::Duration;

use coord_client::{Client, ConnectOptions};
use coord_proto::types::*;
use serde_json::{Value, json};

use crate::cli::*;
use crate::output::{self, CliError, EXIT_NONE, envelope, to_value};
use crate::{agents, githook, mcp, session};

type Res = Result<ExitCode, CliError>;

/// `agent_explicit`: --agent was given on the command line (not only through COORD_AGENT).
pub async fn run(cli: Cli, agent_explicit: bool) -> Res {
    let mut opts = ConnectOptions::for_cwd(cli.db.as_deref());
    if cli.no_autostart {
        opts.autostart = false;
    }
    let ctx = Ctx { json: cli.json, agent: cli.agent, agent_explicit };
    match cli.command {
        Cmd::Hooks(HooksCmd::InstallGit(a)) => return githook::install(a.repo, &opts.paths.db, ctx.json),
        Cmd::Hooks(HooksCmd::PreCommit) => return githook::pre_commit(ctx.agent, opts).await,
        Cmd::Hook(HookCmd::Claude(a)) => return Ok(session::hook_claude(ctx.agent, a, opts).await),
        Cmd::Mcp(a) => return mcp::serve(ctx.agent, a, opts).await,
        _ => {}
    }
    // Validate what we can before connecting (and before starting a daemon).
    let prepared = match agents::prepare(&ctx, cli.command)? {
        Ok(p) => Prepared::Agents(p),
        Err(cmd) => match session::prepare(&ctx, cmd)? {
            Ok(p) => Prepared::Session(p),
            Err(cmd) => prepare(&ctx, cmd)?,
        },
    };
    let client = Client::connect(opts).await?;
    prepared.execute(&ctx, &client).await
}

pub struct Ctx {
    json: bool,
    pub agent: Option<String>,
    agent_explicit: bool,
}

impl Ctx {
    /// The --agent given on this command line, ignoring COORD_AGENT (for filters).
    pub fn explicit_agent(&self) -> Option<String> {
        self.agent.clone().filter(|_| self.agent_explicit)
    }

    pub fn agent(&self, what: &str) -> Result<String, CliError> {
        self.agent
            .clone()
            .ok_or_else(|| CliError::Invalid(format!("{what} is required: pass --agent NAME (or set COORD_AGENT)")))
    }

    fn agent_or(&self, explicit: Option<String>, flag: &str) -> Result<String, CliError> {
        match explicit {
            Some(a) => Ok(a),
            None => self
                .agent
                .clone()
                .ok_or_else(|| CliError::Invalid(format!("--{flag} is required (or pass --agent NAME)"))),
        }
    }
}

/// A command with its params checked, ready to run against a daemon.
enum Prepared {
    Init(InitParams),
    Agents(agents::Prepared),
    Session(session::Prepared),
    Send(SendParams),
    Fetch(FetchParams),
    Claim(ClaimParams),
    Renew(RenewParams),
    Update(UpdateParams),
    Reply(ReplyParams),
    Done(FinishParams),
    Fail(FinishParams),
    Cancel(CancelParams),
    List(ListParams),
    Show(ShowParams),
    Watch(EventFilter, WatchArgs),
    WaitReply(EventFilter, Option<u64>),
}

fn prepare(ctx: &Ctx, cmd: Cmd) -> Result<Prepared, CliError> {
    Ok(match cmd {
        Cmd::Init(a) => Prepared::Init(InitParams {
            strict_agents: if a.strict_agents {
                Some(true)
            } else if a.no_strict_agents {
                Some(false)
            } else {
                None
            },
        }),
        Cmd::Send(a) => Prepared::Send(SendParams {
            from: ctx.agent_or(a.from, "from")?,
            to: a.to.unwrap_or_default(),
            to_task: a.to_task,
            // --to-peer: the peers of your own task (--task, else $COORD_TASK).
            to_peer: if a.to_peer {
                Some(a.task.clone().or_else(|| std::env::var("COORD_TASK").ok()).ok_or_else(|| {
                    CliError::Invalid("--to-peer needs your task: pass --task TASK_ID (or set COORD_TASK)".into())
                })?)
            } else {
                None
            },
            expires_in_seconds: a.expires_in,
            thread_id: a.thread,
            subject: a.subject,
            run_id: a.run,
            task_id: if a.to_peer { None } else { a.task },
            kind: a.kind,
            priority: a.priority,
            category: a.category,
            requires_ack: if a.requires_ack {
                Some(true)
            } else if a.no_ack {
                Some(false)
            } else {
                None
            },
            message: content(a.content)?,
        }),
        Cmd::Fetch(a) => Prepared::Fetch(FetchParams {
            agent: ctx.agent("fetch --agent")?,
            statuses: a.status,
            limit: a.limit,
            unread: a.unread,
        }),
        Cmd::Claim(a) => {
            if a.lease_token.is_some() {
                return Err(CliError::Invalid("claim takes no --lease-token: it grants a new one".into()));
            }
            Prepared::Claim(ClaimParams {
                agent: ctx.agent("claim --agent")?,
                thread_id: a.thread,
                lease_seconds: a.lease_seconds,
            })
        }
        Cmd::Renew(a) => Prepared::Renew(RenewParams {
            agent: ctx.agent("renew --agent")?,
            thread_id: a.thread,
            lease_seconds: a.lease_seconds,
            lease_token: a.lease_token,
        }),
        Cmd::Update(a) => Prepared::Update(UpdateParams {
            agent: ctx.agent("update --agent")?,
            thread_id: a.thread,
            status: a.status,
            lease_token: a.lease_token,
            message: content(a.content)?,
        }),
        Cmd::Reply(a) => Prepared::Reply(ReplyParams {
            from: ctx.agent_or(a.from, "from")?,
            to: a.to,
            thread_id: a.thread,
            kind: a.kind,
            message: content(a.content)?,
        }),
        Cmd::Done(a) => Prepared::Done(finish(ctx, a, "done")?),
        Cmd::Fail(a) => Prepared::Fail(finish(ctx, a, "fail")?),
        Cmd::Cancel(a) => Prepared::Cancel(CancelParams {
            agent: ctx.agent("cancel --agent")?,
            thread_id: a.thread,
            reason: a.reason,
            artifacts: artifacts(a.artifacts)?,
        }),
        Cmd::List(a) => Prepared::List(ListParams {
            agent: ctx.agent.clone(),
            statuses: a.status,
            created_by: a.created_by,
            assigned_to: a.assigned_to,
            run_id: a.run,
            task_id: a.task,
            limit: a.limit,
        }),
        Cmd::Show(a) => Prepared::Show(ShowParams { thread_id: a.thread }),
        Cmd::Agent(_)
        | Cmd::Mail(_)
        | Cmd::Read(_)
        | Cmd::Ack(_)
        | Cmd::Reserve(_)
        | Cmd::Release(_)
        | Cmd::Reservations(_)
        | Cmd::Status(_)
        | Cmd::Hooks(_)
        | Cmd::Check(_)
        | Cmd::Pending(_)
        | Cmd::Withdraw(_)
        | Cmd::Peer(_)
        | Cmd::Hook(_)
        | Cmd::Mcp(_) => return Err(CliError::Internal("command routed to the wrong handler".into())),
        Cmd::Watch(a) => {
            let filter = EventFilter {
                after_event: a.after_event,
                after_message: a.after_message.clone(),
                thread_id: a.thread.clone(),
                run_id: a.run.clone(),
                agent: ctx.agent.clone(),
                statuses: a.status.clone(),
                event_types: EventType::INBOX.to_vec(),
                ..Default::default()
            };
            Prepared::Watch(filter, a)
        }
        Cmd::WaitReply(a) => {
            let mut kinds: Vec<MessageKind> = a.kinds.into_iter().flatten().collect();
            if kinds.is_empty() {
                kinds = MessageKind::REPLIES.to_vec();
            }
            let filter = EventFilter {
                after_event: a.after_event,
                after_message: a.after_message,
                thread_id: Some(a.thread),
                kinds,
                ..Default::default()
            };
            Prepared::WaitReply(filter, a.timeout_seconds)
        }
    })
}

fn finish(ctx: &Ctx, a: FinishArgs, cmd: &str) -> Result<FinishParams, CliError> {
    Ok(FinishParams {
        agent: ctx.agent(&format!("{cmd} --agent"))?,
        thread_id: a.thread,
        lease_token: a.lease_token,
        message: content(a.content)?,
    })
}

fn parse_object(flag: &str, text: &str) -> Result<Value, CliError> {
    let v: Value =
        serde_json::from_str(text).map_err(|e| CliError::Invalid(format!("--{flag} is not valid JSON: {e}")))?;
    if !v.is_object() {
        return Err(CliError::Invalid(format!("--{flag} must be a JSON object, got {v}")));
    }
    Ok(v)
}

fn content(c: Content) -> Result<MessageInput, CliError> {
    let body = coord_client::cli::body(c.body, c.body_file.as_deref())?;
    let payload_json = c.payload_json.as_deref().map(|p| parse_object("payload-json", p)).transpose()?;
    Ok(MessageInput { summary: c.summary, body, payload_json, artifacts: artifacts(c.artifacts)? })
}

/// Pair --artifact with --artifact-kind and --artifact-metadata-json by position.
fn artifacts(a: ArtifactArgs) -> Result<Vec<ArtifactInput>, CliError> {
    let n = a.paths.len();
    for (flag, len) in [("artifact-kind", a.kinds.len()), ("artifact-metadata-json", a.metadata.len())] {
        if len > 1 && len != n || (len == 1 && n == 0) {
            return Err(CliError::Invalid(format!(
                "--{flag} given {len} times for {n} --artifact: give one for all, or one per --artifact"
            )));
        }
    }
    let pick = |v: &Vec<String>, i: usize| if v.len() == 1 { v.first().cloned() } else { v.get(i).cloned() };
    (0..n)
        .map(|i| {
            Ok(ArtifactInput {
                path: a.paths[i].clone(),
                kind: pick(&a.kinds, i),
                metadata_json: pick(&a.metadata, i).map(|m| parse_object("artifact-metadata-json", &m)).transpose()?,
            })
        })
        .collect()
}

fn ok() -> Res {
    Ok(ExitCode::SUCCESS)
}

impl Prepared {
    async fn execute(self, ctx: &Ctx, c: &Client) -> Res {
        let json = ctx.json;
        match self {
            Prepared::Init(p) => {
                let r = c.init(p).await?;
                if json {
                    envelope("init", to_value(&r));
                } else {
                    println!(
                        "initialized {} (schema v{}, {} journal)\ndaemon socket {}\nstrict agents {}",
                        r.db,
                        r.schema_version,
                        r.journal_mode,
                        r.socket,
                        if r.strict_agents { "on" } else { "off" }
                    );
                }
                ok()
            }
            Prepared::Agents(p) => p.execute(json, c).await,
            Prepared::Session(p) => p.execute(json, c).await,
            Prepared::Send(p) => message_result("send", json, c.send(p).await?),
            Prepared::Update(p) => message_result("update", json, c.update(p).await?),
            Prepared::Reply(p) => message_result("reply", json, c.reply(p).await?),
            Prepared::Done(p) => message_result("done", json, c.done(p).await?),
            Prepared::Fail(p) => message_result("fail", json, c.fail(p).await?),
            Prepared::Cancel(p) => message_result("cancel", json, c.cancel(p).await?),
            Prepared::Fetch(p) => {
                let r = c.fetch(p).await?;
                threads("fetch", json, &r.threads);
                Ok(if r.threads.is_empty() { ExitCode::from(EXIT_NONE) } else { ExitCode::SUCCESS })
            }
            Prepared::List(p) => {
                threads("list", json, &c.list(p).await?.threads);
                ok()
            }
            Prepared::Claim(p) => lease_result("claim", json, c.claim(p).await?),
            Prepared::Renew(p) => lease_result("renew", json, c.renew(p).await?),
            Prepared::Show(p) => {
                let thread_id = p.thread_id.clone();
                let r = c.show(p).await?;
                if let Some(agent) = &ctx.agent {
                    c.mark_read(MarkReadParams { agent: agent.clone(), thread_id }).await?;
                }
                if json {
                    envelope("show", to_value(&r));
                } else {
                    output::thread_header(&r.thread);
                    println!();
                    for m in &r.messages {
                        output::message_block(m);
                    }
                }
                ok()
            }
            Prepared::Watch(filter, a) => watch(c, json, filter, a).await,
            Prepared::WaitReply(filter, timeout) => wait_reply(c, json, filter, timeout).await,
        }
    }
}

fn message_result(cmd: &str, json: bool, r: MessageResult) -> Res {
    if json {
        envelope(cmd, to_value(&r));
    } else {
        let t = &r.thread;
        let verb = match cmd {
            "send" => "sent",
            "update" => "updated",
            "reply" => "replied",
            "done" => "done",
            "fail" => "failed",
            _ => "cancelled",
        };
        println!(
            "{verb}: {} {} -> {} in {} [{}]",
            r.message.message_id, r.message.from_agent, r.message.to_agent, t.thread_id, t.status
        );
        println!("  {}  (event {})", r.message.summary, r.event_id);
    }
    ok()
}

fn lease_result(cmd: &str, json: bool, r: LeaseResult) -> Res {
    if json {
        envelope(cmd, to_value(&r));
    } else {
        let l = &r.lease;
        println!(
            "{} {} by {} until {} (generation {})",
            if cmd == "claim" { "claimed" } else { "renewed" },
            l.thread_id,
            l.agent_id,
            l.expires_at,
            l.generation
        );
        println!("  lease token {}", l.lease_token);
        println!("  subject: {}", r.thread.subject);
    }
    ok()
}

fn threads(cmd: &str, json: bool, threads: &[Thread]) {
    if json {
        envelope(cmd, json!({"threads": threads}));
    } else if threads.is_empty() {
        println!("no matching threads");
    } else {
        output::thread_table(threads);
    }
}

/// Without a cursor, waits start at the newest event the daemon had when we connected, so
/// nothing committed between connecting and subscribing is missed.
fn default_cursor(c: &Client, filter: &mut EventFilter) -> i64 {
    if filter.after_event.is_none() && filter.after_message.is_none() {
        filter.after_event = Some(c.hello().last_event_id);
    }
    filter.after_event.unwrap_or(c.hello().last_event_id)
}

async fn wait_reply(c: &Client, json: bool, mut filter: EventFilter, timeout: Option<u64>) -> Res {
    let cursor = default_cursor(c, &mut filter);
    let mut sub = c.subscribe(filter).await?;
    match sub.next_within(timeout.map(Duration::from_secs)).await? {
        Some(ev) => {
            if json {
                envelope(
                    "wait-reply",
                    json!({"woke": true, "next_event_id": ev.event_id, "message": ev.message, "event": ev}),
                );
            } else if let Some(m) = &ev.message {
                output::message_block(m);
                println!("next event id: {}", ev.event_id);
            }
            ok()
        }
        None => {
            if json {
                envelope("wait-reply", json!({"woke": false, "next_event_id": cursor, "message": null}));
            } else {
                println!("no reply within the timeout (resume with --after-event {cursor})");
            }
            Ok(ExitCode::from(EXIT_NONE))
        }
    }
}

async fn watch(c: &Client, json: bool, mut filter: EventFilter, a: WatchArgs) -> Res {
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
        if json {
            if a.follow {
                envelope("watch", json!({"event": ev}));
            } else {
                envelope("watch", json!({"woke": true, "next_event_id": ev.event_id, "event": ev}));
            }
        } else {
            output::event_line(&ev);
        }
        if !a.follow || a.count.is_some_and(|n| seen >= n) {
            return ok();
        }
    }
    if !a.follow {
        if json {
            envelope("watch", json!({"woke": false, "next_event_id": cursor, "event": null}));
        } else {
            println!("no matching activity within the timeout (resume with --after-event {cursor})");
        }
    }
    Ok(if seen == 0 { ExitCode::from(EXIT_NONE) } else { ExitCode::SUCCESS })
}
