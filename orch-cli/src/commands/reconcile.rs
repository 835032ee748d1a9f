//! `orch reconcile`: re-derive task and run state from the inbox threads.

use super::prelude::*;

/// Re-derive task and run state from the inbox threads (idempotent repair).
#[derive(clap::Args)]
#[command(after_help = "Example:\n  orch reconcile --run R1")]
pub struct Args {
    /// The run.
    #[arg(long, value_name = "RUN_ID")]
    pub run: String,
}

impl Command for Args {
    async fn run(self, ctx: &Ctx) -> Res {
        let v = ctx.client().await?.reconcile(RunRef { run_id: self.run }).await?;
        ctx.print(&v, || {
            if v.tasks.is_empty() {
                println!("nothing to repair: every task agrees with its thread");
            } else {
                render::tasks(&v.tasks)
            }
        });
        Ok(Outcome::Done)
    }
}
