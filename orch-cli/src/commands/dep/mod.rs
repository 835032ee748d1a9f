//! `orch dep`: add or remove a dependency between two tasks.

mod add;
mod remove;

use super::prelude;

coord_cli::subcommands! {
    /// The subcommands of `orch dep`.
    pub enum Cmd {
        Add(add::Args),
        Remove(remove::Args),
    }
}

/// The dependency: TASK on ON.
#[derive(clap::Args)]
pub struct Dep {
    /// The run.
    #[arg(long, value_name = "RUN_ID")]
    pub run: String,
    /// The dependent task.
    #[arg(long, value_name = "TASK_ID")]
    pub task: String,
    /// The task it depends on.
    #[arg(long, value_name = "TASK_ID")]
    pub on: String,
}

impl From<Dep> for coord_proto::types::DepParams {
    fn from(d: Dep) -> Self {
        coord_proto::types::DepParams { run_id: d.run, task_id: d.task, on: d.on }
    }
}
