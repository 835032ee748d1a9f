//! `orch task show`: a task with its attempts.

use super::prelude::*;

/// Show a task with its attempts.
#[derive(clap::Args)]
#[command(after_help = "Example:\n  orch task show --run R1 --task T2")]
pub struct Args {
    #[command(flatten)]
    pub task: TaskArg,
}

impl Command for Args {
    fn read_only(&self) -> bool {
        true
    }

    async fn run(self, ctx: &Ctx) -> Res {
        let client = ctx.client().await?;
        let v =
            coord_client::pages::all(TaskShowParams::from(TaskRef::from(self.task)), |p| client.task_show(p)).await?;
        ctx.print(&v, || render::task(&v));
        Ok(Outcome::Done)
    }
}
