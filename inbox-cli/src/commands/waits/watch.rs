//! `inbox watch`: block until matching activity appears (a server-side subscription, no
//! polling).

use super::*;

/// Block until matching activity appears (a server-side subscription, no polling).
#[derive(clap::Args)]
#[command(
    after_help = "Examples:\n  inbox watch --agent backend --timeout-seconds 600\n  inbox watch --run R1 --follow    # the run's threads, tasks and merges, with timestamps"
)]
pub struct Args {
    /// Only threads whose status after the event is one of these, comma-separated.
    #[arg(long, value_delimiter = ',', value_parser = one_of(ThreadStatus::ALL))]
    pub status: Vec<ThreadStatus>,
    /// Only this thread.
    #[arg(long, value_name = "THREAD_ID")]
    pub thread: Option<String>,
    /// Only this run: its threads' events, and its task, merge and run events.
    #[arg(long, value_name = "RUN_ID")]
    pub run: Option<String>,
    /// Start after this event id (default: now). Events already stored after it are
    /// delivered first.
    #[arg(long)]
    pub after_event: Option<i64>,
    /// Start after the event that recorded this message.
    #[arg(long, value_name = "MESSAGE_ID")]
    pub after_message: Option<String>,
    /// Give up after this many seconds (exit 10 when nothing came).
    #[arg(long, value_parser = clap::value_parser!(u64).range(0..=MAX_TIMEOUT))]
    pub timeout_seconds: Option<u64>,
    /// Keep printing events (one line each) instead of returning after the first.
    #[arg(long)]
    pub follow: bool,
    /// With --follow: stop after this many events.
    #[arg(long, requires = "follow")]
    pub count: Option<u64>,
    /// Only typed messages of these types, comma-separated (`*`: any type), e.g.
    /// permission_request,idle_notification.
    #[arg(long = "type", value_name = "TYPE", value_delimiter = ',')]
    pub types: Vec<String>,
    /// Only messages addressed to this agent.
    #[arg(long, value_name = "AGENT")]
    pub to: Option<String>,
    /// Follow progress lines from tool subprocesses instead of events (lossy, live).
    #[arg(long, conflicts_with_all = ["status", "thread", "run", "after_event", "after_message", "types", "to"])]
    pub progress: bool,
    /// With --progress: only lines of this agent.
    #[arg(long, value_name = "AGENT", requires = "progress")]
    pub of: Option<String>,
    /// With --progress: start with the recent lines the daemon still holds.
    #[arg(long, requires = "progress")]
    pub recent: bool,
}

impl Command for Args {
    fn read_only(&self) -> bool {
        true
    }

    async fn run(self, ctx: &Ctx) -> Res {
        let a = self;
        if a.progress {
            return watch_progress(ctx, a).await;
        }
        // With --type, the message types say what to watch (event types would match the rest).
        let mut event_types = if a.types.is_empty() { EventType::INBOX.to_vec() } else { Vec::new() };
        if a.run.is_some() && a.types.is_empty() {
            event_types.extend_from_slice(RUN_EVENTS);
        }
        let what = match (&a.thread, &a.run) {
            (Some(t), _) => format!("activity in thread {t}"),
            (None, Some(r)) => format!("activity in run {r}"),
            (None, None) => "matching activity".to_string(),
        };
        let filter = EventFilter {
            after_event: a.after_event,
            after_message: a.after_message,
            thread_id: a.thread,
            run_id: a.run,
            agent: if a.to.is_some() { None } else { ctx.agent.clone() },
            statuses: a.status,
            event_types,
            to: a.to,
            message_types: a.types,
            ..Default::default()
        };
        let report = WaitReport::new("inbox", ctx.json);
        let mut sub = ctx.client().await?.subscribe(filter).await?.on_notice(report.notices());
        report.waiting(&what, sub.cursor(), a.timeout_seconds);
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
            let envelope = if a.follow {
                json!({"event": ev})
            } else {
                json!({"woke": true, "next_event_id": ev.event_id, "event": ev})
            };
            ctx.print(&envelope, || output::event_line(&ev));
            if !a.follow || a.count.is_some_and(|n| seen >= n) {
                return Ok(Outcome::Done);
            }
        }
        if !a.follow {
            let cursor = sub.cursor();
            ctx.print(&json!({"woke": false, "next_event_id": cursor, "event": null}), || {
                println!("no matching activity within the timeout (resume with {})", resume_hint(cursor))
            });
        }
        Ok(if seen == 0 { Outcome::NoMatch } else { Outcome::Done })
    }
}
