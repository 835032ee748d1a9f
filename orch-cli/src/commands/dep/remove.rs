//! `orch dep remove`: a task no longer depends on another.

use super::prelude::*;

/// TASK no longer depends on ON.
#[derive(clap::Args)]
#[command(after_help = "Example:\n  orch dep remove --run R1 --task T3 --on T2")]
pub struct Args {
    #[command(flatten)]
    pub dep: super::Dep,
}

impl Command for Args {
    async fn run(self, ctx: &Ctx) -> Res {
        let v = ctx.client().await?.dep_remove(self.dep.into()).await?;
        ctx.print(&v, || render::task(&v));
        Ok(Outcome::Done)
    }
}
