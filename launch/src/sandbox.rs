//! `--sandbox` (or `sandbox = true` in `.agents/launch.toml`): a Claude Code session runs
//! its shell in Claude Code's own sandbox (bubblewrap on Linux), set up so the worker's
//! shell cannot read `.agents/` (the database, the dashboard's token, the logs, the bridge's
//! secret hand-over files) while `inbox` still reaches the daemon's socket, and so its Read
//! and Edit tools are denied the same files. What was measured with Claude Code 2.1.332:
//!
//! * `sandbox.filesystem.denyRead` of `.agents` hides the directory from the shell (a
//!   `cat .agents/dashboard.json` says "No such file or directory"); `allowRead` brings
//!   back the socket and the session's worktree (under `.agents/worktrees/`), and
//!   `allowWrite` lets it write there.
//! * On Linux the sandbox's seccomp filter blocks every Unix socket unless
//!   `network.allowAllUnixSockets` is on (`allowUnixSockets` paths are macOS only), so it
//!   is on: the daemon's socket is the one the worker must reach.
//! * The sandbox covers the Bash tool only: the Read and Edit tools are kept off the same
//!   files by `permissions.deny` rules, which hold in `bypassPermissions` mode too.

use std::path::{Path, PathBuf};

use serde_json::json;

/// The paths a sandboxed session is set up around.
pub struct Paths<'a> {
    /// The project's `.agents` directory.
    pub agents_dir: &'a Path,
    /// The daemon's socket.
    pub socket: &'a Path,
    /// Where the session runs (its worktree or scratch directory).
    pub cwd: &'a Path,
}

fn abs(p: &Path) -> PathBuf {
    std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf())
}

/// A linked worktree's repository `.git` (where its commits are written), from the
/// worktree's `.git` file (`gitdir: <repo>/.git/worktrees/<name>`).
fn common_git_dir(cwd: &Path) -> Option<PathBuf> {
    let text = std::fs::read_to_string(cwd.join(".git")).ok()?;
    let gitdir = PathBuf::from(text.strip_prefix("gitdir:")?.trim());
    let worktrees = gitdir.parent()?;
    (worktrees.file_name()? == "worktrees").then(|| worktrees.parent().map(Path::to_path_buf)).flatten()
}

/// The settings (`claude --settings <json>`) of a sandboxed Claude Code session.
pub fn claude_settings(p: &Paths<'_>) -> String {
    let agents = abs(p.agents_dir).display().to_string();
    let cwd = abs(p.cwd).display().to_string();
    let mut write = vec![cwd.clone()];
    write.extend(common_git_dir(p.cwd).map(|d| d.display().to_string()));
    // Claude Code's rules name an absolute path with a leading `//`.
    let rules: Vec<String> = [format!("/{agents}/*"), format!("/{agents}/launch/**")]
        .iter()
        .flat_map(|path| [format!("Read({path})"), format!("Edit({path})")])
        .collect();
    json!({
        "permissions": {"deny": rules},
        "sandbox": {
            "enabled": true,
            "failIfUnavailable": true,
            "allowUnsandboxedCommands": false,
            "autoAllowBashIfSandboxed": true,
            "network": {"allowAllUnixSockets": true},
            "filesystem": {
                "denyRead": [agents],
                "allowRead": [abs(p.socket).display().to_string(), cwd],
                "allowWrite": write,
            },
        },
    })
    .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_agents_dir_is_denied_but_the_socket_and_the_worktree_are_not() {
        let p = Paths {
            agents_dir: Path::new("/p/.agents"),
            socket: Path::new("/p/.agents/coordd.sock"),
            cwd: Path::new("/p/.agents/worktrees/R1/T1"),
        };
        let s: serde_json::Value = serde_json::from_str(&claude_settings(&p)).unwrap();
        let fs = &s["sandbox"]["filesystem"];
        assert_eq!(fs["denyRead"], json!(["/p/.agents"]));
        assert_eq!(fs["allowRead"], json!(["/p/.agents/coordd.sock", "/p/.agents/worktrees/R1/T1"]));
        assert_eq!(s["sandbox"]["network"]["allowAllUnixSockets"], true);
        assert!(s["permissions"]["deny"].as_array().unwrap().contains(&json!("Read(//p/.agents/*)")));
    }
}
