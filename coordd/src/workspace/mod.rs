//! The files the daemon writes outside its store: git worktrees for code attempts
//! ([`git`]) and agent-session integration files ([`sessions`]). All of it blocks (disk
//! and git I/O): callers run it in `spawn_blocking`, never on the writer thread or an
//! executor thread, and never inside a write transaction.

pub mod git;
pub mod sessions;
