//! `coord-launch --lead CLIENT --goal "…"`: an agent in the lead's seat. Before the bridge
//! starts, the run is created (or `--run` taken), the lead agent registered with a secret
//! of its own (never the person's) and given the project's lead role (or made an admin
//! when the project already has another lead). Then, beside the bridge that starts the
//! workers for the lead's dispatches, a supervisor runs the lead session in the main
//! checkout with `orch mcp` registered for it: a live session (claude, command, and codex
//! through its app-server driver) gets what needs it pushed as turns (`crate::lead_attention`); a session that ends while the run is
//! active is started again with the run's state as its context; when the run is over the
//! lead's input is closed (done) or it is stopped (cancelled, failed).

use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::Context as _;
use coord_client::{Client, ClientError, ConnectOptions, EventStream};
use coord_proto::api::{AgentsApiClient, InboxApiClient, OrchApiClient};
use coord_proto::types::*;
use tokio::sync::oneshot;

use crate::bridge::{Finish, backoff_after};
use crate::config::{self, ClientKind, Layer};
use crate::lead_prompt::{self, LeadWork};
use crate::process::{self, Waiter};
use crate::say::Say;
use crate::{feed, lead_attention};

/// How many quick ends in a row (each under [`HEALTHY_RUN`]) before the lead is given up.
const MAX_QUICK_ENDS: u32 = 5;
const HEALTHY_RUN: Duration = Duration::from_secs(60);

/// What `--lead` asks for.
pub struct Ask {
    pub kind: ClientKind,
    pub goal: Option<String>,
    pub run: Option<String>,
    pub agent: String,
    /// The lead's own settings: `--lead-command`, `--lead-model`, over `[agents.<lead>]`.
    pub flags: Layer,
}

/// A prepared lead: its run, its identity and how to start it.
pub struct Lead {
    pub work: LeadWork,
    pub kind: ClientKind,
    pub layer: Layer,
    pub file: config::File,
    /// The workers' flags (for the prompt's list of clients).
    pub workers: Layer,
    pub connect: ConnectOptions,
    pub dir: PathBuf,
    pub grace: Duration,
    pub quiet: bool,
}

/// A binary beside this one, else its name (on `PATH`).
pub fn sibling(me: Option<&PathBuf>, name: &str) -> String {
    me.and_then(|e| e.parent().map(|d| d.join(name)))
        .filter(|p| p.is_file())
        .map_or_else(|| name.to_string(), |p| p.display().to_string())
}

/// Create or take the run, mint the lead's own secret and give it the lead's role.
/// Returns the run's id and the lead's secret (`None`: none was issued).
pub async fn prepare(connect: &ConnectOptions, ask: &Ask) -> anyhow::Result<(String, String, Option<String>)> {
    let c = Client::connect(connect.clone()).await?;
    let agent = ask.agent.clone();
    let reg = RegisterParams {
        agent_id: agent.clone(),
        role: "lead".into(),
        display_name: None,
        force_update: true,
        rotate_secret: true,
    };
    let secret = c.agent_register(reg).await.map_err(ClientError::from).context("registering the lead")?.secret;
    let roles = c.init(InitParams::default()).await.map_err(ClientError::from)?;
    let role = match roles.lead.as_deref() {
        None => Some(InitParams { lead: Some(agent.clone()), ..InitParams::default() }),
        Some(l) if l == agent || roles.admins.contains(&agent) => None,
        Some(_) => {
            let mut admins = roles.admins.clone();
            admins.push(agent.clone());
            Some(InitParams { admins: Some(admins), ..InitParams::default() })
        }
    };
    if let Some(p) = role {
        c.init(p).await.map_err(ClientError::from).context("giving the lead agent the project's lead role")?;
    }
    let existing = match &ask.run {
        Some(r) => match c.run_show(RunRef { run_id: r.clone() }).await.map_err(ClientError::from) {
            Ok(v) => Some(v),
            Err(e) if e.code() == "not_found" => None,
            Err(e) => return Err(e.into()),
        },
        None => None,
    };
    let view = match existing {
        Some(v) => v,
        None => {
            let goal = ask.goal.clone().filter(|g| !g.trim().is_empty()).ok_or_else(|| {
                anyhow::anyhow!("--lead needs --goal to create the run (or --run naming an existing run)")
            })?;
            let p = RunCreateParams { run_id: ask.run.clone(), goal, created_by: Some(agent), ..Default::default() };
            c.run_create(p).await.map_err(ClientError::from).context("creating the run")?
        }
    };
    Ok((view.run.run_id.clone(), view.run.goal.clone(), secret))
}

/// The supervisor's end of the bridge: it is told how the run finished, and tells the
/// bridge when it gave the lead up.
pub struct Supervised {
    pub end: oneshot::Sender<Finish>,
    pub gave_up: oneshot::Receiver<String>,
    pub done: tokio::task::JoinHandle<()>,
}

/// Start supervising the lead (in a task of its own).
pub fn supervise(lead: Lead) -> Supervised {
    let (end_tx, end_rx) = oneshot::channel();
    let (gave_tx, gave_rx) = oneshot::channel();
    let done = tokio::spawn(async move {
        let mut say = Say::new(lead.quiet, &crate::say::log_path(&lead.dir));
        if let Err(why) = lead.run(end_rx, &mut say).await {
            say.warn(&format!("the lead is given up: {why}"));
            let _ = gave_tx.send(why);
        }
    });
    Supervised { end: end_tx, gave_up: gave_rx, done }
}

/// One running lead session.
struct Session {
    id: String,
    pid: i32,
    waiter: Waiter,
    writer: Option<feed::Writer>,
    attention: Option<EventStream>,
    started: Instant,
    /// The run's end was written into the session.
    told_end: bool,
}

impl Lead {
    fn log(&self) -> PathBuf {
        self.dir.join("lead.log")
    }

    async fn run(&self, mut end: oneshot::Receiver<Finish>, say: &mut Say) -> Result<(), String> {
        let client = Client::connect(self.connect.clone()).await.map_err(|e| e.to_string())?;
        let mut cursor = client.server_info().last_event_id;
        let mut note = None;
        let mut quick = 0;
        loop {
            let mut s = self.start(&client, note.take(), cursor).await.map_err(|e| format!("cannot start: {e:#}"))?;
            say.line(&format!(
                "lead started: {} @{}, pid {}, log {}",
                self.kind.name(),
                self.work.agent,
                s.pid,
                self.log().display()
            ));
            let ended = loop {
                let next = async {
                    match s.attention.as_mut() {
                        Some(a) => a.next().await,
                        None => std::future::pending().await,
                    }
                };
                tokio::select! {
                    e = s.waiter.wait() => {
                        process::signal_session(s.pid, &s.id, libc::SIGKILL).await;
                        break e;
                    }
                    f = &mut end => {
                        self.finish(&mut s, f.unwrap_or(Finish::Cancelled), say).await;
                        return Ok(());
                    }
                    ev = next => match ev {
                        Some(Ok(ev)) => {
                            cursor = cursor.max(ev.event_id);
                            s.tell(&client, &self.work.run_id, &ev, say).await;
                        }
                        _ => s.attention = None,
                    },
                }
            };
            feed::remove(&self.log());
            let how = ended.code.map_or_else(
                || ended.signal.map_or("ended".into(), |s| format!("killed by signal {s}")),
                |c| format!("exit code {c}"),
            );
            let view = client.run_show(RunRef { run_id: self.work.run_id.clone() }).await;
            let view = view.map_err(|e| e.to_string())?;
            if view.run.status != RunStatus::Active {
                say.line(&format!("lead ended ({how}); run {} is {}", self.work.run_id, view.run.status.as_str()));
                let _ = end.await;
                return Ok(());
            }
            quick = if s.started.elapsed() < HEALTHY_RUN { quick + 1 } else { 0 };
            if quick >= MAX_QUICK_ENDS {
                return Err(format!("its session ended {quick} times in a row within a minute ({how})"));
            }
            say.line(&format!("lead ended ({how}) while the run is active; restarting it with the run's state"));
            note = Some(lead_prompt::restart_note(&view));
            tokio::select! {
                _ = tokio::time::sleep(backoff_after(quick)) => {}
                f = &mut end => {
                    let _ = f;
                    return Ok(());
                }
            }
        }
    }

    /// Start a lead session: its feed (live clients), its process, its first turn.
    async fn start(&self, c: &Client, note: Option<String>, cursor: i64) -> anyhow::Result<Session> {
        std::fs::create_dir_all(&self.dir)?;
        let id = coord_client::ids::new_id("ses");
        let mcp = self.dir.join("lead-mcp.json");
        write_private(&mcp, &serde_json::to_vec_pretty(&lead_prompt::mcp_config(&self.work))?)?;
        let mut prompt = lead_prompt::prompt(&self.work, &self.file, &self.workers);
        if let Some(n) = &note {
            prompt.push_str("\n\n");
            prompt.push_str(n);
        }
        let mut spec = lead_prompt::spec(self.kind, &self.layer, &self.work, &prompt, &mcp, &id)?;
        let log = self.log();
        spec.stdin = Some(feed::make(&log, &id)?.fifo);
        if self.kind == ClientKind::Codex {
            crate::codex_live::wrap(&mut spec, &self.work.me, &self.dir.join("lead.jsonl"));
        }
        let (pid, waiter) = process::spawn(&spec, &log)?;
        std::fs::write(self.dir.join("lead.pid"), pid.to_string())?;
        let format = if self.kind == ClientKind::Claude { feed::Format::ClaudeStream } else { feed::Format::Lines };
        let mut w = feed::Writer::open(&feed::fifo_of(&log), format, feed::seed_of(&id))?;
        let first = feed::Turn {
            line_type: "turn",
            id: feed::uuid(w.seed, 0),
            kind: "task",
            text: prompt,
            run_id: Some(self.work.run_id.clone()),
            ..feed::Turn::default()
        };
        w.write(&first).await?;
        let attention = Some(lead_attention::subscribe(c, &self.work.run_id, cursor).await?);
        Ok(Session { id, pid, waiter, writer: Some(w), attention, started: Instant::now(), told_end: false })
    }

    /// The run is over: a done run's lead has its input closed and the grace to end; any
    /// other is stopped.
    async fn finish(&self, s: &mut Session, f: Finish, say: &mut Say) {
        if f == Finish::Done && s.writer.is_some() {
            // The lead reads the run's end (its cue to finish) before its input closes.
            let c = Client::connect(self.connect.clone()).await;
            let until_told = async {
                while let (false, Some(a), Ok(c)) = (s.told_end, s.attention.as_mut(), c.as_ref()) {
                    match a.next().await {
                        Some(Ok(ev)) => s.tell(c, &self.work.run_id, &ev, say).await,
                        _ => break,
                    }
                }
            };
            let _ = tokio::time::timeout(self.grace, until_told).await;
        }
        if let (Finish::Done, Some(w)) = (f, s.writer.as_mut()) {
            w.close();
            if tokio::time::timeout(self.grace, s.waiter.wait()).await.is_ok() {
                process::signal_session(s.pid, &s.id, libc::SIGKILL).await;
                feed::remove(&self.log());
                return;
            }
        }
        process::stop(s.pid, &s.id, &mut s.waiter, self.grace).await;
        feed::remove(&self.log());
        say.line("lead stopped: the run is over");
    }
}

impl Session {
    /// Write what needs the lead into its session (a live one).
    async fn tell(&mut self, c: &Client, run_id: &str, ev: &Event, say: &mut Say) {
        self.told_end |= matches!(ev.event_type, EventType::RunDone | EventType::RunFailed);
        if let Some(w) = self.writer.as_mut() {
            let t = lead_attention::turn_of(c, run_id, ev, w.seed).await;
            if let Err(e) = w.write(&t).await {
                say.warn(&format!("lead: cannot write a turn into its session: {e}"));
            }
        }
    }
}

/// Write a file only its owner reads (it holds the lead's secret).
fn write_private(path: &std::path::Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write as _;
    use std::os::unix::fs::OpenOptionsExt as _;
    let _ = std::fs::remove_file(path);
    let mut f = std::fs::OpenOptions::new().create_new(true).write(true).mode(0o600).open(path)?;
    f.write_all(bytes)
}

impl Lead {
    /// The lead of the bridge `o` runs: in the main checkout (the directory around
    /// `.agents/`), with what `.agents/launch.toml` says of its agent under its own flags.
    pub fn new(
        o: &crate::bridge::Options,
        ask: Ask,
        run_id: String,
        goal: String,
        secret: Option<String>,
        me: Option<&PathBuf>,
    ) -> Lead {
        let mut layer = o.config.resolve(&ask.agent, Some("lead"), &ask.flags);
        layer.client = Some(ask.kind);
        let cwd = o.agents_dir.parent().map_or_else(|| PathBuf::from("."), PathBuf::from);
        let work = LeadWork {
            run_id: run_id.clone(),
            goal,
            agent: ask.agent,
            secret,
            cwd,
            db: o.db.clone(),
            orch: sibling(me, "orch"),
            me: o.me.clone(),
        };
        Lead {
            work,
            kind: ask.kind,
            layer,
            file: o.config.clone(),
            workers: o.flags.clone(),
            connect: o.connect.clone(),
            dir: o.agents_dir.join("launch").join(&run_id),
            grace: o.grace,
            quiet: o.quiet,
        }
    }
}

/// Run the bridge with the lead beside it: the bridge ends when the run is over (or on
/// `stop`, or when the lead is given up), then the lead is ended as the run's end says.
pub async fn with_bridge(
    bridge: crate::bridge::Bridge,
    lead: Lead,
    stop: impl std::future::Future<Output = ()>,
) -> anyhow::Result<crate::bridge::Outcome> {
    let mut s = supervise(lead);
    let gave_up = &mut s.gave_up;
    let stop = async move {
        tokio::select! {
            _ = stop => {}
            Ok(_) = gave_up => {}
        }
    };
    let out = bridge.run(stop).await?;
    let gave_up = s.gave_up.try_recv().ok();
    let f = match out {
        crate::bridge::Outcome::Finished(f) | crate::bridge::Outcome::Stopped(Some(f)) => f,
        // Stopped by a signal while the run goes on: the lead is stopped too.
        crate::bridge::Outcome::Stopped(None) => Finish::Cancelled,
    };
    let _ = s.end.send(f);
    let _ = s.done.await;
    match gave_up {
        Some(why) => Err(anyhow::anyhow!("the lead could not be kept running: {why}")),
        None => Ok(out),
    }
}
