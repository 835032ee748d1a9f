//! `inbox reserve`: reserve a file scope (path or glob) for a task, exclusive unless
//! --shared.

use super::*;

/// Reserve a file scope (path or glob) for a task, exclusive unless --shared.
#[derive(clap::Args)]
#[command(after_help = "Example:\n  inbox reserve --agent backend --scope \"src/db/**\" --task T1 --ttl 120")]
pub struct Args {
    /// A path or glob relative to the project root (`*`, `?`, `[..]`, `**`); a directory
    /// name covers everything below it.
    #[arg(long, value_name = "GLOB")]
    pub scope: String,
    /// The task the reservation serves (required; also $COORD_TASK).
    #[arg(long, value_name = "TASK_ID", env = "COORD_TASK")]
    pub task: Option<String>,
    /// Minutes until it expires: 5 to 1440 (default 120).
    #[arg(long, value_name = "MINUTES")]
    pub ttl: Option<u32>,
    /// Shared: coexists with other shared reservations, never with an exclusive one.
    #[arg(long)]
    pub shared: bool,
    /// Take over overlapping reservations that have expired (bumps the generation).
    #[arg(long)]
    pub takeover_stale: bool,
}

impl Command for Args {
    async fn run(self, ctx: &Ctx) -> Res {
        let a = self;
        let task = a.task.filter(|t| !t.trim().is_empty()).ok_or_else(|| {
            CliError::Invalid(format!(
                "say which task you reserve {} for: pass --task TASK_ID (or set COORD_TASK)",
                a.scope
            ))
        })?;
        let p = ReserveParams {
            agent: ctx.agent()?,
            scope: a.scope,
            task_id: Some(task),
            ttl_minutes: a.ttl,
            shared: a.shared,
            takeover_stale: a.takeover_stale,
        };
        let r = ctx.client().await?.reserve(p).await?;
        ctx.print(&r, || {
            for t in &r.taken_over {
                println!("took over {}'s stale reservation of {}", t.agent_id, t.scope);
            }
            let verb = if r.renewed { "extended" } else { "reserved" };
            println!("{verb}: {}", output::reservation_line(&r.reservation));
        });
        Ok(Outcome::Done)
    }
}
