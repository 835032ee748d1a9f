//! `orch hook`: the hooks of a one-shot lead session (Claude Code or Codex, which runs
//! Claude-shaped hooks), so that an agent leading a run is told what needs it without
//! polling. `session-start` gives the session the run's state as context; `stop` keeps the
//! session going while the run is active and something needs the lead (handing over what
//! came in, read through one subscription) or workers are still working. A hook never
//! fails the session: with no daemon (it never starts one) or no such run it prints
//! nothing and succeeds.
//!
//! What the lead has been handed is remembered per run in `.agents/lead/<run>.cursor`, so
//! nothing is handed over twice and nothing is missed between two stops.

use std::io::Read;
use std::path::PathBuf;
use std::time::Duration;

use coord_client::Client;
use serde_json::{Value, json};

use super::prelude::*;
use crate::attention;

/// How long a hook waits for an absent daemon before giving up silently.
const HOOK_CONNECT: Duration = Duration::from_millis(500);

/// The lead session's hooks: `session-start` (the run's state as context) and `stop`
/// (keep going while the run needs the lead).
#[derive(clap::Args)]
#[command(after_help = "Examples (.claude/settings.json of the lead's checkout):\n  \
    {\"hooks\": {\"SessionStart\": [{\"hooks\": [{\"type\": \"command\", \"command\": \"orch hook session-start --run R1\"}]}],\n             \
    \"Stop\": [{\"hooks\": [{\"type\": \"command\", \"command\": \"orch hook stop --run R1\", \"timeout\": 120}]}]}}")]
pub struct Args {
    /// The hook event.
    #[arg(value_enum)]
    pub event: LeadHook,
    /// The run the session leads (also $COORD_RUN).
    #[arg(long, value_name = "RUN_ID", env = "COORD_RUN")]
    pub run: String,
    /// stop: how long to wait for something that needs the lead before handing the turn back
    /// anyway (keep it under the hook's timeout in the client's settings).
    #[arg(long, value_name = "SECONDS", default_value_t = 50, value_parser = clap::value_parser!(u64).range(0..=3600))]
    pub wait_seconds: u64,
}

/// The hook events of a lead session.
#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum LeadHook {
    SessionStart,
    Stop,
}

impl Command for Args {
    async fn run(self, ctx: &Ctx) -> Res {
        let _ = std::io::stdin().read_to_string(&mut String::new());
        let mut opts = ctx.connect_options().clone();
        opts.autostart = false;
        let cursor_file = opts.paths.db.parent().map(|d| d.join("lead").join(format!("{}.cursor", self.run)));
        let Ok(Ok(c)) = tokio::time::timeout(HOOK_CONNECT, Client::connect(opts)).await else {
            return Ok(Outcome::Done);
        };
        let out = match self.event {
            LeadHook::SessionStart => session_start(&c, &self.run, cursor_file).await,
            LeadHook::Stop => stop(&c, &self.run, cursor_file, Duration::from_secs(self.wait_seconds)).await,
        };
        if let Some(v) = out {
            println!("{v}");
        }
        Ok(Outcome::Done)
    }
}

/// The run's state, as the session's opening context; the cursor starts here.
async fn session_start(c: &Client, run: &str, cursor_file: Option<PathBuf>) -> Option<Value> {
    let g = coord_client::pages::all(RunViewParams { run_id: run.to_string(), after: None }, |p| c.view_run(p))
        .await
        .ok()?;
    save_cursor(cursor_file, g.last_event_id);
    let mut text = format!(
        "You lead run {} ({}), status {}. Use the `orch` MCP tools: plan with add_task, dispatch, then \
         loop on wait_for_attention and act on what it returns until every task is merged; then finish_run.\n\nTasks:\n",
        g.run.run_id, g.run.goal, g.run.status
    );
    for t in &g.tasks {
        let worker = t.worker.as_deref().map_or(String::new(), |w| format!(" @{w}"));
        text.push_str(&format!("- {} [{}]{worker}: {}\n", t.task.task_id, t.task.status, t.task.title));
        if let Some(q) = &t.question {
            text.push_str(&format!("  question: {}\n", q.summary));
        }
    }
    if g.tasks.is_empty() {
        text.push_str("(none yet)\n");
    }
    Some(json!({"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": text}}))
}

/// Block the stop while the run needs the lead: what came in since the last hand-over
/// (waiting up to `wait` for it), else the workers still working.
async fn stop(c: &Client, run: &str, cursor_file: Option<PathBuf>, wait: Duration) -> Option<Value> {
    let g = coord_client::pages::all(RunViewParams { run_id: run.to_string(), after: None }, |p| c.view_run(p))
        .await
        .ok()?;
    if g.run.status != RunStatus::Active {
        return None;
    }
    let after = cursor_file.as_ref().and_then(|f| std::fs::read_to_string(f).ok()).and_then(|s| s.trim().parse().ok());
    let got = attention::next(c, run, after, wait).await.ok()?;
    save_cursor(cursor_file, got.cursor);
    if !got.items.is_empty() {
        return Some(block(format!(
            "Run {run} needs you, its lead. Act on these (answer, respond, retry, merge), then call \
             wait_for_attention again:\n\n{}",
            attention::text(&got.items)
        )));
    }
    let working: Vec<String> = g
        .tasks
        .iter()
        .filter(|t| t.task.status.is_live())
        .map(|t| format!("{} ({})", t.task.task_id, t.task.status))
        .collect();
    if working.is_empty() {
        return None;
    }
    Some(block(format!(
        "Run {run} is still active and workers are working on {}. Do not stop: call wait_for_attention and act \
         on what it returns.",
        working.join(", ")
    )))
}

fn block(reason: String) -> Value {
    json!({"decision": "block", "reason": reason})
}

fn save_cursor(file: Option<PathBuf>, cursor: i64) {
    if let Some(f) = file {
        if let Some(dir) = f.parent() {
            let _ = std::fs::create_dir_all(dir);
        }
        let _ = std::fs::write(f, cursor.to_string());
    }
}
