//! The files the daemon writes outside its store: git worktrees for code attempts
//! ([`git`]), the runs' integration branches and merges ([`merge`]), the merge queue's candidates, scratch worktree and verified moves ([`queue`]), agent-session
//! integration files ([`sessions`], Codex's in [`codex`], Gemini CLI's in [`gemini`], opencode's in [`opencode`], all built of [`session_files`]), and the ignore rules that keep all of it out of the
//! user's commits ([`ignore`]). All of it blocks (disk
//! and git I/O): callers run it in `spawn_blocking`, never on the writer thread or an
//! executor thread, and never inside a write transaction.

pub mod codex;
pub mod diff;
pub mod gemini;
pub mod git;
pub mod ignore;
pub mod merge;
pub mod opencode;
pub mod queue;
pub mod session_files;
pub mod sessions;
