//! `inbox wait-reply`: block until a reply-like message appears in a thread.

use super::*;

/// Block until a reply-like message appears in a thread: the blocked worker's wait.
///
/// Without --after-event or --after-message it waits for the first reply after your own
/// latest message in the thread (your question), so a reply given before the wait started
/// is not missed; if you have written nothing in the thread, the first reply in it. That
/// needs to know who you are (--agent or COORD_AGENT); without it the wait sees only
/// replies given after it starts. On timeout (exit 10) it prints the cursor to resume
/// from (`next_event_id`), which is null for a wait after your own latest message: run
/// it again the same way.
#[derive(clap::Args)]
#[command(
    after_help = "Examples:\n  inbox --agent backend wait-reply --thread thr_... --timeout-seconds 1800 --json\n  \
                        inbox wait-reply --thread thr_... --after-event 51 --timeout-seconds 1800 --json"
)]
pub struct Args {
    /// The thread you are blocked on.
    #[arg(long, value_name = "THREAD_ID")]
    pub thread: String,
    /// Wait for a message after this one.
    #[arg(long, value_name = "MESSAGE_ID")]
    pub after_message: Option<String>,
    /// Wait for a message after this event id (use the event_id your update returned).
    #[arg(long)]
    pub after_event: Option<i64>,
    /// Message kinds that count as a reply, comma- or |-separated (default: answer,control,result).
    #[arg(long, value_delimiter = ',', value_parser = parse_kinds)]
    pub kinds: Vec<Vec<MessageKind>>,
    /// Give up after this many seconds (exit 10).
    #[arg(long, value_parser = clap::value_parser!(u64).range(0..=MAX_TIMEOUT))]
    pub timeout_seconds: Option<u64>,
}

impl Command for Args {
    fn read_only(&self) -> bool {
        true
    }

    async fn run(self, ctx: &Ctx) -> Res {
        let a = self;
        let mut kinds: Vec<MessageKind> = a.kinds.into_iter().flatten().collect();
        if kinds.is_empty() {
            kinds = MessageKind::REPLIES.to_vec();
        }
        let what = format!("a reply in thread {}", a.thread);
        let start = match (&a.after_event, &a.after_message, &ctx.agent) {
            (None, None, Some(agent)) => Start::AfterOwn(agent.clone()),
            (None, None, None) => Start::Now,
            _ => Start::Cursor,
        };
        let filter = EventFilter {
            after_event: a.after_event,
            after_message: a.after_message,
            after_latest_from: match &start {
                Start::AfterOwn(agent) => Some(agent.clone()),
                _ => None,
            },
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
                    println!("{}", timed_out(&start, cursor))
                });
                Ok(Outcome::NoMatch)
            }
        }
    }
}

/// Where a wait started.
enum Start {
    /// At the cursor given (`--after-event`, `--after-message`).
    Cursor,
    /// After the caller's own latest message in the thread (no cursor, an agent known).
    AfterOwn(String),
    /// At the newest event when it subscribed (no cursor, no agent).
    Now,
}

/// What a wait that timed out says, and how to go on without skipping a reply.
fn timed_out(start: &Start, cursor: Option<i64>) -> String {
    match (start, cursor) {
        (Start::AfterOwn(agent), None) => format!(
            "no reply after {agent}'s latest message in the thread within the timeout (run the same command \
             again to keep waiting)"
        ),
        (Start::Now, Some(c)) => format!(
            "no reply since this wait started at event {c} (resume with --after-event {c}; a reply given \
             before it is seen with --agent, which waits after your own latest message, or with \
             --after-event set to your question's event_id)"
        ),
        (_, cursor) => format!("no reply within the timeout (resume with {})", resume_hint(cursor)),
    }
}
