//! `inbox wait-reply`: block until a reply-like message appears in a thread.

use super::*;

/// Block until a reply-like message appears in a thread: the blocked worker's wait.
#[derive(clap::Args)]
#[command(after_help = "Example:\n  inbox wait-reply --thread thr_... --after-event 51 --timeout-seconds 1800 --json")]
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
        let filter = EventFilter {
            after_event: a.after_event,
            after_message: a.after_message,
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
                    println!("no reply within the timeout (resume with {})", resume_hint(cursor))
                });
                Ok(Outcome::NoMatch)
            }
        }
    }
}
