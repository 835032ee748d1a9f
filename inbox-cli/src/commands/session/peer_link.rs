//! `inbox peer link`: link two tasks as peers.

use super::*;

/// Link two tasks as peers: --task A --task B.
#[derive(clap::Args)]
#[command(after_help = "Example:\n  inbox peer link --task T-back --task T-front")]
pub struct Args {
    /// A task to link; give exactly two.
    #[arg(long = "task", value_name = "TASK_ID", num_args = 1, required = true)]
    pub tasks: Vec<String>,
}

impl Command for Args {
    async fn run(self, ctx: &Ctx) -> Res {
        let a = self;
        let p = match a.tasks.as_slice() {
            [x, y] => PeerLinkParams { task_id: x.clone(), peer_task_id: y.clone() },
            _ => return Err(CliError::Invalid("peer link takes exactly two --task".into())),
        };
        let r = ctx.client().await?.peers_link(p).await?;
        ctx.print(&r, || println!("{} is linked with {}", r.task_id, r.peers.join(", ")));
        Ok(Outcome::Done)
    }
}
