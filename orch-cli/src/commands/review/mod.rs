//! `orch review`: comment on lines of a task's diff, approve it, or request changes (the
//! comments go to the worker as one message with `file:line` anchors).

mod approve;
mod comment;
mod request_changes;

use super::prelude;

coord_cli::subcommands! {
    /// The subcommands of `orch review`.
    pub enum Cmd {
        Comment(comment::Args),
        Approve(approve::Args),
        RequestChanges(request_changes::Args),
    }
}
