//! `orch wait`: block until the run's next actionable event (a server-side subscription).

use super::prelude::*;
use std::time::Duration;

use coord_cli::WaitReport;
use serde_json::json;

/// Block until the next actionable event of the run (server-side subscription).
#[derive(clap::Args)]
#[command(after_help = "Example:\n  orch wait --run R1 --after-event 42 --timeout-seconds 600 --json")]
pub struct Args {
    /// The run.
    #[arg(long, value_name = "RUN_ID")]
    pub run: String,
    /// Return the first actionable event after this event id (default: now). Use the
    /// event_id `dispatch --json` returned.
    #[arg(long)]
    pub after_event: Option<i64>,
    /// Give up after this many seconds (exit 10; at most ten years).
    #[arg(long, value_parser = clap::value_parser!(u64).range(0..=315_360_000))]
    pub timeout_seconds: Option<u64>,
}

impl Command for Args {
    fn read_only(&self) -> bool {
        true
    }

    async fn run(self, ctx: &Ctx) -> Res {
        let c = ctx.client().await?;
        // What the lead acts on: actionable events, and the workers' permission requests,
        // idle notifications and plan approval requests (either one wakes the wait).
        let filter = EventFilter {
            after_event: self.after_event,
            run_id: Some(self.run.clone()),
            event_types: EventType::ACTIONABLE.to_vec(),
            message_types: MessageType::lead_actionable(),
            ..Default::default()
        };
        // Make sure the run exists: a wait on a typo would otherwise block forever.
        c.ready(TaskListParams { run_id: self.run.clone(), statuses: vec![], limit: Some(1), after: None }).await?;
        let report = WaitReport::new("orch", ctx.json);
        let mut sub = c.subscribe(filter).await?.on_notice(report.notices());
        report.waiting(&format!("the next actionable event of run {}", self.run), sub.cursor(), self.timeout_seconds);
        match sub.next_within(self.timeout_seconds.map(Duration::from_secs)).await? {
            Some(ev) => {
                // `type`: what a leader loop switches on (a typed message is recorded by a
                // plain thread event, so its event_type alone does not say what it is).
                let out = json!({"woke": true, "next_event_id": ev.event_id, "type": ev.what(), "event": ev});
                ctx.print(&out, || render::event(&ev));
                Ok(Outcome::Done)
            }
            None => {
                let after = sub.cursor().unwrap_or_default();
                ctx.print(&json!({"woke": false, "next_event_id": after, "type": null, "event": null}), || {
                    println!("nothing actionable within the timeout (resume with --after-event {after})")
                });
                Ok(Outcome::NoMatch)
            }
        }
    }
}
