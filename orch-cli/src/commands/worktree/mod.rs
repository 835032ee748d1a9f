//! `orch worktree`: list or prune attempt worktrees.

mod list;
mod prune;

use super::prelude;

coord_cli::subcommands! {
    /// The subcommands of `orch worktree`.
    pub enum Cmd {
        List(list::Args),
        Prune(prune::Args),
    }
}
