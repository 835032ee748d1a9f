//! `inbox progress`: report a progress line for your session (lossy: never blocks,
//! bounded history).

use super::*;

/// Report a progress line for your session (lossy: never blocks, bounded history).
///
/// Tools run by a session find the daemon in $COORD_PROGRESS (set by `hook install`).
#[derive(clap::Args)]
#[command(after_help = "Example:\n  inbox progress \"12/40 tests passed\" --tool-use-id toolu_01")]
pub struct Args {
    /// The line.
    pub text: String,
    /// progress (default), log or result.
    #[arg(long = "type", default_value = "progress")]
    pub line_type: ProgressType,
    /// The tool call it belongs to.
    #[arg(long, value_name = "ID")]
    pub tool_use_id: Option<String>,
    /// Extra data: a JSON object.
    #[arg(long, value_name = "JSON")]
    pub meta: Option<String>,
    /// Your task (also $COORD_TASK).
    #[arg(long, value_name = "TASK_ID", env = "COORD_TASK")]
    pub task: Option<String>,
}

impl Command for Args {
    async fn run(self, ctx: &Ctx) -> Res {
        let a = self;
        let meta = a.meta.as_deref().map(|m| json_object("meta", m)).transpose()?;
        let p = ProgressParams {
            agent: ctx.agent()?,
            task_id: a.task,
            line_type: a.line_type,
            tool_use_id: a.tool_use_id,
            data: a.text,
            meta,
        };
        // A tool started by a session reports to the daemon its environment names.
        let socket = std::env::var_os(coord_inbox::PROGRESS_ENV).filter(|s| !s.is_empty());
        let client = match socket {
            Some(s) => Client::connect_socket(std::path::Path::new(&s)).await.map(Some),
            None => ctx.client().await.map(|_| None).map_err(|e| match e {
                CliError::Client(c) => c,
                other => coord_client::ClientError::Transport(other.to_string()),
            }),
        };
        // Progress is lossy: with no daemon to take it, the line is dropped and the tool that
        // reported it goes on (a script under `set -e` must not fail for it).
        let client = match client {
            Err(
                e @ (coord_client::ClientError::Connect { .. } | coord_client::ClientError::DaemonUnavailable { .. }),
            ) => {
                let reason = e.to_string();
                ctx.print(&json!({"dropped": true, "reason": reason}), || {
                    eprintln!("inbox: progress line dropped: {reason}")
                });
                return Ok(Outcome::Done);
            }
            other => other?,
        };
        let r = match &client {
            Some(c) => c.progress_report(p).await?,
            None => ctx.client().await?.progress_report(p).await?,
        };
        ctx.print(&r, || println!("progress line {}", r.seq));
        Ok(Outcome::Done)
    }
}
