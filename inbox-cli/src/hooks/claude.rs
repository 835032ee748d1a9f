//! `inbox hook claude EVENT`: the handler the installed Claude Code and Codex hooks run.
//! The permission events (pre-tool-use, permission-request) are answered by
//! `permission_hook`, the others by `claude_hook`.

use super::*;

/// Claude Code hook handler: reads the hook's JSON on stdin, prints the hook's JSON
/// answer. Fails open: with no daemon it prints nothing and exits 0.
#[derive(clap::Args)]
#[command(
    after_help = "Example (what the installed hooks run):\n  inbox --agent backend hook claude post-tool-use --task T1 < hook.json"
)]
pub struct Args {
    #[command(flatten)]
    pub a: HookClaudeArgs,
}

impl Command for Args {
    async fn run(self, ctx: &Ctx) -> Res {
        match self.a.event {
            HookEvent::PreToolUse | HookEvent::PermissionRequest => permission_hook::answer(ctx, self.a).await,
            _ => claude_hook::answer(ctx, self.a).await,
        }
    }
}
