//! A model-based test of the thread and lease state machine: random sequences of send,
//! claim, renew, update, reply, done, fail, cancel and clock moves run against the real
//! rules (SQLite in memory, a clock the test moves) and against a small reference model.
//! After every step the outcome and the stored thread match the model, and the invariants
//! hold: one live holder at most, generations only grow, terminal threads accept nothing,
//! and every change records exactly one event (a refused call, none).

use crate::domain::credentials::Acting;
use std::time::Duration;

use coord_proto::ErrorCode;
use coord_proto::types::*;
use proptest::prelude::*;

use super::thread;
use crate::domain::inbox::lease;
use crate::error::Result;
use crate::ops::messages;
use crate::store::sqlite::testing::Memory;

const AGENTS: [&str; 3] = ["w0", "w1", "w2"];

#[derive(Debug, Clone)]
enum Op {
    Send { to: usize },
    Claim { thread: usize, agent: usize, secs: u64 },
    Renew { thread: usize, agent: usize, token: Option<usize>, secs: u64 },
    Update { thread: usize, agent: usize, token: Option<usize>, blocked: bool },
    Reply { thread: usize, from: usize, answer: bool },
    Finish { thread: usize, agent: usize, token: Option<usize>, fail: bool },
    Cancel { thread: usize, agent: usize },
    Advance { secs: u64 },
}

fn op() -> impl Strategy<Value = Op> {
    let a = 0..AGENTS.len();
    let t = 0usize..8;
    let tok = prop::option::of(0usize..6);
    let secs = 1u64..600;
    prop_oneof![
        2 => a.clone().prop_map(|to| Op::Send { to }),
        4 => (t.clone(), a.clone(), secs.clone()).prop_map(|(thread, agent, secs)| Op::Claim { thread, agent, secs }),
        2 => (t.clone(), a.clone(), tok.clone(), secs).prop_map(|(thread, agent, token, secs)| Op::Renew { thread, agent, token, secs }),
        3 => (t.clone(), a.clone(), tok.clone(), any::<bool>()).prop_map(|(thread, agent, token, blocked)| Op::Update { thread, agent, token, blocked }),
        2 => (t.clone(), a.clone(), any::<bool>()).prop_map(|(thread, from, answer)| Op::Reply { thread, from, answer }),
        2 => (t.clone(), a.clone(), tok, any::<bool>()).prop_map(|(thread, agent, token, fail)| Op::Finish { thread, agent, token, fail }),
        1 => (t, a).prop_map(|(thread, agent)| Op::Cancel { thread, agent }),
        2 => (0u64..900).prop_map(|secs| Op::Advance { secs }),
    ]
}

/// The model of one lease: who, which grant, until when, released or not.
#[derive(Debug, Clone)]
struct MLease {
    holder: usize,
    token: String,
    generation: i64,
    expires_ms: i64,
    released: bool,
}

#[derive(Debug, Clone)]
struct MThread {
    id: String,
    status: ThreadStatus,
    lease: Option<MLease>,
    /// Every token ever granted on it, oldest first.
    tokens: Vec<String>,
}

/// What the model expects of a call: success, or a refusal (with its code when the model
/// can say which).
type Want = std::result::Result<(), Option<ErrorCode>>;

impl MThread {
    fn live(&self, now: i64) -> Option<&MLease> {
        self.lease.as_ref().filter(|l| !l.released && l.expires_ms > now)
    }

    /// A change to an open thread: refused once it is terminal.
    fn open(&self) -> Want {
        if self.status.is_terminal() { Err(Some(ErrorCode::InvalidTransition)) } else { Ok(()) }
    }

    /// An open thread, and `require_holder` as the protocol documents it.
    fn holder_check(&self, agent: usize, token: Option<&str>, now: i64) -> Want {
        self.open()?;
        let Some(l) = self.lease.as_ref().filter(|l| !l.released) else { return Err(Some(ErrorCode::NotLeaseHolder)) };
        if l.holder != agent {
            return Err(Some(ErrorCode::NotLeaseHolder));
        }
        if token.is_some_and(|t| t != l.token) {
            return Err(Some(ErrorCode::StaleLease));
        }
        if l.expires_ms <= now {
            return Err(Some(ErrorCode::LeaseExpired));
        }
        Ok(())
    }
}

struct Run {
    m: Memory,
    threads: Vec<MThread>,
    /// The highest generation seen per thread.
    generations: Vec<i64>,
}

impl Run {
    fn now(&self) -> i64 {
        use crate::time::Clock;
        self.m.clock.now().millis()
    }

    fn input(s: &str) -> MessageInput {
        MessageInput { summary: s.into(), ..Default::default() }
    }

    fn pick(&self, i: usize) -> Option<usize> {
        (!self.threads.is_empty()).then(|| i % self.threads.len())
    }

    fn token(&self, t: usize, pick: Option<usize>) -> Option<String> {
        let tokens = &self.threads[t].tokens;
        pick.filter(|_| !tokens.is_empty()).map(|i| tokens[i % tokens.len()].clone())
    }

    fn step(&mut self, op: &Op) -> std::result::Result<(), TestCaseError> {
        let now = self.now();
        let before = self.m.events().len();
        let (t, want, got, event): (Option<usize>, Want, Result<()>, Option<EventType>) = match *op {
            Op::Advance { secs } => {
                self.m.advance(Duration::from_secs(secs));
                return self.check_all();
            }
            Op::Send { to } => {
                let p = SendParams {
                    from: "lead".into(),
                    to: AGENTS[to].into(),
                    message: Self::input("task"),
                    ..Default::default()
                };
                let r = self.m.write(|tx, now| messages::send(tx, now, p)).unwrap();
                self.threads.push(MThread {
                    id: r.thread.thread_id,
                    status: ThreadStatus::Pending,
                    lease: None,
                    tokens: vec![],
                });
                self.generations.push(0);
                (Some(self.threads.len() - 1), Ok(()), Ok(()), Some(EventType::ThreadCreated))
            }
            Op::Claim { thread, agent, secs } => {
                let Some(t) = self.pick(thread) else { return Ok(()) };
                let mt = &self.threads[t];
                let want = mt.open().and_then(|()| match mt.live(now) {
                    Some(l) if l.holder != agent => Err(Some(ErrorCode::LeaseConflict)),
                    _ => Ok(()),
                });
                let p =
                    ClaimParams { agent: AGENTS[agent].into(), thread_id: mt.id.clone(), lease_seconds: Some(secs) };
                let got = self.m.write(|tx, now| messages::claim(tx, now, p, &Acting::daemon()));
                if let Ok(r) = &got {
                    let mt = &mut self.threads[t];
                    let generation = mt.lease.as_ref().map_or(1, |l| l.generation + 1);
                    prop_assert_eq!(r.lease.generation, generation, "one generation per grant");
                    mt.lease = Some(MLease {
                        holder: agent,
                        token: r.lease.lease_token.clone(),
                        generation,
                        expires_ms: now + secs as i64 * 1000,
                        released: false,
                    });
                    mt.tokens.push(r.lease.lease_token.clone());
                    mt.status = ThreadStatus::Claimed;
                }
                (Some(t), want, got.map(|_| ()), Some(EventType::ThreadClaimed))
            }
            Op::Renew { thread, agent, token, secs } => {
                let Some(t) = self.pick(thread) else { return Ok(()) };
                let tok = self.token(t, token);
                let mt = &self.threads[t];
                let want = mt.holder_check(agent, tok.as_deref(), now);
                let p = RenewParams {
                    agent: AGENTS[agent].into(),
                    thread_id: mt.id.clone(),
                    lease_seconds: Some(secs),
                    lease_token: tok,
                };
                let got = self.m.write(|tx, now| lease::renew(tx, now, p)).map(|_| ());
                if got.is_ok() {
                    let l = self.threads[t].lease.as_mut().unwrap();
                    l.expires_ms = l.expires_ms.max(now + secs as i64 * 1000);
                }
                (Some(t), want, got, Some(EventType::LeaseRenewed))
            }
            Op::Update { thread, agent, token, blocked } => {
                let Some(t) = self.pick(thread) else { return Ok(()) };
                let tok = self.token(t, token);
                let mt = &self.threads[t];
                let want = mt.holder_check(agent, tok.as_deref(), now);
                let status = if blocked { ThreadStatus::Blocked } else { ThreadStatus::InProgress };
                let p = UpdateParams {
                    agent: AGENTS[agent].into(),
                    thread_id: mt.id.clone(),
                    status: Some(status),
                    lease_token: tok,
                    message: Self::input("u"),
                };
                let got = self.m.write(|tx, now| messages::update(tx, now, p)).map(|_| ());
                if got.is_ok() {
                    self.threads[t].status = status;
                }
                let event = if blocked { EventType::ThreadBlocked } else { EventType::ThreadProgress };
                (Some(t), want, got, Some(event))
            }
            Op::Reply { thread, from, answer } => {
                let Some(t) = self.pick(thread) else { return Ok(()) };
                let mt = &self.threads[t];
                let want = mt.open();
                let kind = if answer { MessageKind::Answer } else { MessageKind::Progress };
                let p = ReplyParams {
                    from: AGENTS[from].into(),
                    thread_id: mt.id.clone(),
                    kind: Some(kind),
                    message: Self::input("r"),
                    ..Default::default()
                };
                let got = self.m.write(|tx, now| messages::reply(tx, now, p, &Acting::daemon())).map(|_| ());
                if got.is_ok() && answer && self.threads[t].status == ThreadStatus::Blocked {
                    self.threads[t].status = ThreadStatus::InProgress;
                }
                (Some(t), want, got, Some(EventType::ThreadReplied))
            }
            Op::Finish { thread, agent, token, fail } => {
                let Some(t) = self.pick(thread) else { return Ok(()) };
                let tok = self.token(t, token);
                let mt = &self.threads[t];
                let want = mt.holder_check(agent, tok.as_deref(), now);
                let p = FinishParams {
                    agent: AGENTS[agent].into(),
                    thread_id: mt.id.clone(),
                    lease_token: tok,
                    message: Self::input("f"),
                };
                let status = if fail { ThreadStatus::Failed } else { ThreadStatus::Done };
                let got = self.m.write(|tx, now| messages::finish(tx, now, p, status)).map(|_| ());
                if got.is_ok() {
                    let mt = &mut self.threads[t];
                    mt.status = status;
                    mt.lease.as_mut().unwrap().released = true;
                }
                let event = if fail { EventType::ThreadFailed } else { EventType::ThreadDone };
                (Some(t), want, got, Some(event))
            }
            Op::Cancel { thread, agent } => {
                let Some(t) = self.pick(thread) else { return Ok(()) };
                let mt = &self.threads[t];
                let want = mt.open();
                let p = CancelParams {
                    agent: AGENTS[agent].into(),
                    thread_id: mt.id.clone(),
                    reason: "stop".into(),
                    ..Default::default()
                };
                let got = self.m.write(|tx, now| messages::cancel(tx, now, p, &Acting::daemon())).map(|_| ());
                if got.is_ok() {
                    let mt = &mut self.threads[t];
                    mt.status = ThreadStatus::Cancelled;
                    if let Some(l) = &mut mt.lease {
                        l.released = true;
                    }
                }
                (Some(t), want, got, Some(EventType::ThreadCancelled))
            }
        };
        // The outcome is the model's.
        match (&want, &got) {
            (Ok(()), Ok(())) => {}
            (Err(code), Err(e)) => {
                if let Some(c) = code {
                    prop_assert_eq!(e.code(), Some(*c), "{:?}: {}", op, e);
                }
            }
            _ => {
                prop_assert!(false, "{:?}: the model expected {:?}, the rules said {:?}", op, want, got.as_ref().err())
            }
        }
        // Exactly one event per change, none for a refusal.
        let events = self.m.events();
        let added = &events[before..];
        if got.is_ok() {
            prop_assert_eq!(added.len(), 1, "{:?} recorded {} events", op, added.len());
            prop_assert_eq!(Some(added[0].event_type), event);
            prop_assert_eq!(&added[0].thread_id, &self.threads[t.unwrap()].id);
        } else {
            prop_assert!(added.is_empty(), "a refused {:?} recorded an event", op);
        }
        self.check_all()
    }

    /// The stored threads match the model, and the invariants hold.
    fn check_all(&mut self) -> std::result::Result<(), TestCaseError> {
        let now = self.now();
        for (i, mt) in self.threads.iter().enumerate() {
            let (stored, _) = self.m.read(|tx, now| thread::load(tx, &mt.id, now)).unwrap();
            prop_assert_eq!(stored.status, mt.status, "{}", mt.id);
            match (&stored.lease, &mt.lease) {
                (None, None) => {}
                (Some(s), Some(l)) => {
                    // At most one live holder, and it is the model's.
                    prop_assert_eq!(s.active, mt.live(now).is_some());
                    prop_assert_eq!(&s.agent_id, AGENTS[l.holder]);
                    prop_assert_eq!(s.generation, l.generation);
                    // Generations only grow.
                    prop_assert!(s.generation >= self.generations[i]);
                    self.generations[i] = s.generation;
                    if mt.status.is_terminal() {
                        prop_assert!(!s.active, "a terminal thread holds no live lease");
                    }
                }
                (s, l) => prop_assert!(false, "{}: stored lease {:?}, model {:?}", mt.id, s, l),
            }
        }
        Ok(())
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn the_thread_and_lease_rules_follow_the_model(ops in prop::collection::vec(op(), 1..80)) {
        let mut run = Run { m: Memory::new(), threads: vec![], generations: vec![] };
        for op in &ops {
            run.step(op)?;
        }
    }
}
