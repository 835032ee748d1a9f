//! `orch run`: create, edit, list, show, finish or cancel runs.

mod budget;
mod cancel;
mod create;
mod edit;
mod finish;
mod list;
mod show;

use super::prelude;

coord_cli::subcommands! {
    /// The subcommands of `orch run`.
    pub enum Cmd {
        Create(create::Args),
        Edit(edit::Args),
        List(list::Args),
        Show(show::Args),
        Finish(finish::Args),
        Budget(budget::Args),
        Cancel(cancel::Args),
    }
}
