//! `orch status`: the run's task graph, its sessions and its open requests.

use super::prelude::*;
use serde_json::json;

/// Draw the run's task graph with the state of each task and the agent of each attempt
/// (--watch: keep it live, as `orch top --run`).
#[derive(clap::Args)]
#[command(after_help = "Examples:\n  orch status --run R1\n  orch status --run R1 --watch")]
pub struct Args {
    /// The run.
    #[arg(long, value_name = "RUN_ID")]
    pub run: String,
    /// Stay open and redraw as events arrive (the terminal view of `orch top`).
    #[arg(long)]
    pub watch: bool,
}

impl Command for Args {
    fn read_only(&self) -> bool {
        true
    }

    async fn run(self, ctx: &Ctx) -> Res {
        if self.watch {
            return super::top::Args { run: Some(self.run) }.run(ctx).await;
        }
        // The run's graph, and the requests of its workers still waiting for an answer.
        let c = ctx.client().await?;
        let v = coord_client::pages::all(RunViewParams { run_id: self.run.clone(), after: None }, |p| c.view_run(p))
            .await?;
        let open = RequestsParams { run_id: Some(self.run), ..Default::default() };
        let requests = coord_client::pages::all(open, |p| c.control_requests(p)).await?.requests;
        let mut out = serde_json::to_value(&v).unwrap_or_default();
        out["open_requests"] = json!(requests);
        ctx.print(&out, || {
            let nodes: Vec<crate::tree::Node<'_>> = v.tasks.iter().map(Into::into).collect();
            crate::tree::print(&v.run, &nodes);
            crate::sessions::print(&v.sessions);
            crate::usage::print(v.usage.as_ref());
            render::requests(&requests);
        });
        Ok(Outcome::Done)
    }
}
