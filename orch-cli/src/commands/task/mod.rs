//! `orch task`: add, list, show, edit, assign or remove tasks.

mod add;
mod assign;
mod edit;
mod list;
mod remove;
mod show;

use super::prelude;

coord_cli::subcommands! {
    /// The subcommands of `orch task`.
    pub enum Cmd {
        Add(add::Args),
        List(list::Args),
        Show(show::Args),
        Edit(edit::Args),
        Assign(assign::Args),
        Remove(remove::Args),
    }
}
