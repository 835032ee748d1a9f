//! Simulated agents for the crash loop (a CI test) and the soak (`coord-bench --only
//! soak`): each does what a real agent does, through the real client on the real socket:
//! send work to a peer, fetch, claim, report progress, ask and wait for the answer, answer
//! the questions on its own threads, finish, read mail, reserve and release files, and the
//! calls the session and git hooks make. Every acknowledged write goes into the
//! [`Ledger`], every call's latency and error code into its statistics.

pub mod crash;
pub mod ledger;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use coord_client::{Client, ClientError};
use coord_proto::api::{AgentsApiClient, InboxApiClient, MailApiClient};
use coord_proto::types::*;
use tokio::sync::watch;

pub use ledger::{Acked, Findings, Ledger, OpStats, percentile, verify};

/// How one simulated agent behaves.
#[derive(Debug, Clone)]
pub struct AgentPlan {
    /// `w<index>`.
    pub index: usize,
    /// How many agents there are (work goes to the others).
    pub agents: usize,
    pub seed: u64,
    /// Pause between two steps (a real agent thinks).
    pub think: Duration,
    /// How long an agent waits for the answer to its question.
    pub answer_wait: Duration,
}

/// A small deterministic random number generator (xorshift64*).
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed.max(1).wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// A number in `0..n`.
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n.max(1)
    }
}

/// Where the agents connect, and when they stop. `restarts` changes each time the daemon
/// was started again (the crash loop); agents cut off by a crash wait for it.
#[derive(Clone)]
pub struct World {
    pub socket: PathBuf,
    pub ledger: Arc<Ledger>,
    pub stop: watch::Receiver<bool>,
    pub restarts: watch::Receiver<u64>,
}

/// A call failed because the daemon went away (not an error of the call).
fn is_disconnect(e: &ClientError) -> bool {
    matches!(e, ClientError::Transport(_) | ClientError::Connect { .. } | ClientError::DaemonUnavailable { .. })
}

/// One simulated agent, until `world.stop` is set.
pub async fn agent(plan: AgentPlan, mut world: World) {
    let me = format!("w{}", plan.index);
    let mut rng = Rng::new(plan.seed ^ (plan.index as u64 + 1).wrapping_mul(0x1234_5678_9abc));
    let mut client: Option<Client> = None;
    let mut step = 0u64;
    while !*world.stop.borrow() {
        let Some(c) = client.as_ref() else {
            match Client::connect_socket(&world.socket).await {
                Ok(c) => client = Some(c),
                Err(_) => {
                    // The daemon is down: wait for the next start (or the end).
                    tokio::select! {
                        _ = world.restarts.changed() => {}
                        _ = world.stop.changed() => {}
                        _ = tokio::time::sleep(Duration::from_millis(50)) => {}
                    }
                }
            }
            continue;
        };
        step += 1;
        let mut a = Act { c, me: &me, ledger: &world.ledger, rng: &mut rng, plan: &plan, step };
        let outcome = match a.rng.below(100) {
            0..25 => a.send_work().await,
            25..55 => a.work().await,
            55..72 => a.answer().await,
            72..82 => a.mail().await,
            82..91 => a.reserve().await,
            _ => a.hooks().await,
        };
        if let Err(e) = outcome
            && is_disconnect(&e)
        {
            client = None;
        }
        if !plan.think.is_zero() {
            tokio::time::sleep(plan.think).await;
        }
    }
}

/// One step of one agent.
struct Act<'a> {
    c: &'a Client,
    me: &'a str,
    ledger: &'a Ledger,
    rng: &'a mut Rng,
    plan: &'a AgentPlan,
    step: u64,
}

type Step = Result<(), ClientError>;

impl Act<'_> {
    /// Time a call and record its outcome.
    async fn call<T>(
        &self,
        op: &'static str,
        fut: impl Future<Output = Result<T, jsonrpsee::core::client::Error>>,
    ) -> Result<T, ClientError> {
        let t = Instant::now();
        let r = fut.await.map_err(ClientError::from);
        let code = match &r {
            Err(e) if is_disconnect(e) => Some("disconnected"),
            Err(e) => Some(e.code()),
            Ok(_) => None,
        };
        self.ledger.op(op, t.elapsed(), code);
        r
    }

    fn ack(&self, op: &'static str, event_id: i64, thread: &str, message: Option<&str>, generation: Option<i64>) {
        self.ledger.ack(Acked {
            op,
            event_id,
            thread_id: thread.to_string(),
            message_id: message.map(str::to_string),
            generation,
            agent: self.me.to_string(),
        });
    }

    fn input(&self, summary: String) -> MessageInput {
        MessageInput { summary, body: Some(format!("step {} of {}", self.step, self.me)), ..Default::default() }
    }

    async fn send_work(&mut self) -> Step {
        let peer =
            (self.plan.index + 1 + self.rng.below(self.plan.agents.max(2) as u64 - 1) as usize) % self.plan.agents;
        let p = SendParams {
            from: self.me.into(),
            to: format!("w{peer}"),
            kind: Some(MessageKind::Task),
            message: self.input(format!("task {} from {}", self.step, self.me)),
            ..Default::default()
        };
        let r = self.call("send", self.c.send(p)).await?;
        self.ack("send", r.event_id, &r.thread.thread_id, Some(&r.message.message_id), None);
        Ok(())
    }

    /// Fetch, claim, progress, maybe ask and wait, done.
    async fn work(&mut self) -> Step {
        let fetch = FetchParams {
            agent: self.me.into(),
            statuses: vec![ThreadStatus::Pending],
            limit: Some(5),
            ..Default::default()
        };
        let threads = self.call("fetch", self.c.fetch(fetch)).await?.threads;
        let Some(t) = threads.first() else { return Ok(()) };
        let claim = ClaimParams { agent: self.me.into(), thread_id: t.thread_id.clone(), lease_seconds: Some(600) };
        let Ok(l) = self.call("claim", self.c.claim(claim)).await else { return Ok(()) };
        self.ack("claim", l.event_id, &t.thread_id, None, Some(l.lease.generation));
        let token = Some(l.lease.lease_token.clone());
        let ask = self.rng.below(100) < 30;
        let update = |status, summary: String| UpdateParams {
            agent: self.me.into(),
            thread_id: t.thread_id.clone(),
            status: Some(status),
            lease_token: token.clone(),
            message: self.input(summary),
        };
        let r = self.call("progress", self.c.update(update(ThreadStatus::InProgress, "working".into()))).await?;
        self.ack("progress", r.event_id, &t.thread_id, Some(&r.message.message_id), None);
        if ask {
            let r = self.call("ask", self.c.update(update(ThreadStatus::Blocked, "which way?".into()))).await?;
            self.ack("ask", r.event_id, &t.thread_id, Some(&r.message.message_id), None);
            self.wait_for_answer(&t.thread_id, r.event_id).await?;
        }
        let done = FinishParams {
            agent: self.me.into(),
            thread_id: t.thread_id.clone(),
            lease_token: token.clone(),
            message: self.input("done".into()),
        };
        let r = self.call("done", self.c.done(done)).await?;
        self.ack("done", r.event_id, &t.thread_id, Some(&r.message.message_id), None);
        Ok(())
    }

    async fn wait_for_answer(&self, thread: &str, after: i64) -> Step {
        let filter = EventFilter {
            thread_id: Some(thread.into()),
            after_event: Some(after),
            kinds: vec![MessageKind::Answer],
            ..Default::default()
        };
        let t = Instant::now();
        let mut stream = self.c.subscribe(filter).await?;
        let got = stream.next_within(Some(self.plan.answer_wait)).await;
        let code = match &got {
            Ok(Some(_)) => None,
            Ok(None) => Some("wait_timed_out"),
            Err(e) if is_disconnect(e) => Some("disconnected"),
            Err(e) => Some(e.code()),
        };
        self.ledger.op("wait", t.elapsed(), code);
        got.map(|_| ())
    }

    /// Answer the questions on threads this agent created.
    async fn answer(&mut self) -> Step {
        let list = ListParams {
            created_by: Some(self.me.into()),
            statuses: vec![ThreadStatus::Blocked],
            limit: Some(5),
            ..Default::default()
        };
        let blocked = self.call("list", self.c.list(list)).await?.threads;
        for t in &blocked {
            let p = ReplyParams {
                from: self.me.into(),
                thread_id: t.thread_id.clone(),
                kind: Some(MessageKind::Answer),
                message: self.input("this way".into()),
                ..Default::default()
            };
            if let Ok(r) = self.call("answer", self.c.reply(p)).await {
                self.ack("answer", r.event_id, &t.thread_id, Some(&r.message.message_id), None);
            }
        }
        Ok(())
    }

    async fn mail(&mut self) -> Step {
        let p =
            MailParams { agent: self.me.into(), state: Some(MailState::Unread), limit: Some(5), ..Default::default() };
        let mail = self.call("mail.list", self.c.mail_list(p)).await?.mail;
        let Some(m) = mail.first() else { return Ok(()) };
        let r = MailRef { agent: self.me.into(), message_id: m.message_id.clone() };
        let read = self.call("mail.read", self.c.mail_read(r)).await?;
        if let Some(e) = read.event_id {
            self.ack("mail.read", e, "", None, None);
        }
        Ok(())
    }

    async fn reserve(&mut self) -> Step {
        let scope = format!("src/{}/{}.rs", self.me, self.rng.below(4));
        let p = ReserveParams {
            agent: self.me.into(),
            scope: scope.clone(),
            task_id: Some(format!("T-{}", self.me)),
            ..Default::default()
        };
        let r = self.call("reserve", self.c.reserve(p)).await?;
        self.ack("reserve", r.event_id, "", None, None);
        let r = self.call("release", self.c.release(ReleaseParams { agent: self.me.into(), scope })).await?;
        self.ack("release", r.event_id, "", None, None);
        Ok(())
    }

    /// What the Claude Code hook (deliver mail into the session) and the git pre-commit
    /// hook (may I commit these paths?) ask.
    async fn hooks(&mut self) -> Step {
        let check = CheckParams { agent: Some(self.me.into()), ..Default::default() };
        let r = self.call("hook.mail_check", self.c.mail_check(check)).await?;
        if let Some(e) = r.event_id {
            self.ack("hook.mail_check", e, "", None, None);
        }
        let paths = CheckPathsParams {
            agent: Some(self.me.into()),
            paths: vec![format!("src/{}/0.rs", self.me)],
            offset: None,
        };
        self.call("hook.reservations_check", self.c.reservation_check(paths)).await?;
        Ok(())
    }
}
