//! `orch task remove`: a task that was never dispatched.

use super::prelude::*;

/// Remove a task that was never dispatched (its dependents lose the dependency).
#[derive(clap::Args)]
#[command(after_help = "Example:\n  orch task remove --run R1 --task T9")]
pub struct Args {
    #[command(flatten)]
    pub task: TaskArg,
}

impl Command for Args {
    async fn run(self, ctx: &Ctx) -> Res {
        let v = ctx.client().await?.task_remove(self.task.into()).await?;
        ctx.print(&v, || {
            let freed = if v.dependents.is_empty() {
                String::new()
            } else {
                format!("; {} no longer depend on it", v.dependents.join(", "))
            };
            println!("removed {} from run {}{freed}", v.task_id, v.run_id)
        });
        Ok(Outcome::Done)
    }
}
