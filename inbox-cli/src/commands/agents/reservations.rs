//! `inbox reservations`: the active reservations; --path FILE answers "who holds this
//! file?".

use super::*;

/// List active reservations; --path FILE answers "who holds this file?".
#[derive(clap::Args)]
#[command(after_help = "Example:\n  inbox reservations --path src/db/schema.rs")]
pub struct Args {
    /// Only reservations for this task.
    #[arg(long, value_name = "TASK_ID")]
    pub task: Option<String>,
    /// Only reservations covering this file.
    #[arg(long, value_name = "FILE")]
    pub path: Option<String>,
    /// Include released and expired reservations (the history).
    #[arg(long)]
    pub all: bool,
    /// At most this many (default 50).
    #[arg(long)]
    pub limit: Option<u32>,
}

impl Command for Args {
    fn read_only(&self) -> bool {
        true
    }

    async fn run(self, ctx: &Ctx) -> Res {
        let a = self;
        let p = ReservationListParams {
            agent: ctx.explicit_agent(),
            task_id: a.task,
            path: a.path,
            include_history: a.all,
            limit: a.limit,
            after: None,
        };
        let c = ctx.client().await?;
        let r = coord_client::pages::all(p, |p| c.reservation_list(p)).await?;
        ctx.print(&r, || output::reservation_table(&r.reservations));
        Ok(Outcome::Done)
    }
}
