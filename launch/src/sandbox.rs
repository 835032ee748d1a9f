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
//!
//! A Codex session gets a permission profile of its own (`-c default_permissions=…`), what
//! was measured with Codex 0.171.0 (`codex sandbox`, bubblewrap on Linux):
//!
//! * Its legacy `workspace-write` sandbox limits writes, not reads: the shell read
//!   `.agents/dashboard.json`. A permission profile denies reads: `"none"` on the globs
//!   `.agents/*`, `.agents/.*`, `.agents/launch/*/*.*` and `.agents/launch/*/logs/**`
//!   makes `cat` of each say "Permission denied", while the daemon's socket (matched too) still connects. Denying the directory
//!   `.agents` itself made the socket unreachable (`EACCES`), hence the globs.
//! * Unix sockets need the profile's `network.enabled` (else `EPERM`), which also opens
//!   the network: Codex has no per-socket rule on Linux.
//! * The session's worktree and its repository's `.git` are writable; the rest of the
//!   machine is readable (the CLIs, the toolchains). Not `/tmp`: Codex keeps `.git`,
//!   `.codex` and `.agents` of every writable root read-only, and makes an empty directory
//!   to mount over when one is missing, so a writable `/tmp` left `/tmp/.git` behind (every
//!   project under `/tmp` then resolved to `/tmp`).

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

/// The profile's name in the session's configuration.
const CODEX_PROFILE: &str = "coordd_worker";

/// The `-c` options of a sandboxed Codex session: its permission profile, selected.
pub fn codex_args(p: &Paths<'_>) -> Vec<String> {
    let agents = abs(p.agents_dir).display().to_string();
    let mut rules: Vec<(String, &str)> = vec![("/".into(), "read")];
    rules.push((abs(p.cwd).display().to_string(), "write"));
    rules.extend(common_git_dir(p.cwd).map(|d| (d.display().to_string(), "write")));
    // Not `launch/**`: a thread task's session runs in `launch/<run>/scratch/`.
    for glob in ["*", ".*", "launch/*/*.*", "launch/*/logs/**"] {
        rules.push((format!("{agents}/{glob}"), "none"));
    }
    let table: Vec<String> =
        rules.iter().map(|(path, access)| format!("{}={}", toml_str(path), toml_str(access))).collect();
    [
        format!("default_permissions={}", toml_str(CODEX_PROFILE)),
        format!("permissions.{CODEX_PROFILE}.filesystem={{{},glob_scan_max_depth=4}}", table.join(",")),
        format!("permissions.{CODEX_PROFILE}.network.enabled=true"),
    ]
    .into_iter()
    .flat_map(|v| ["-c".to_string(), v])
    .collect()
}

/// A TOML basic string.
fn toml_str(s: &str) -> String {
    serde_json::Value::String(s.to_string()).to_string()
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

    #[test]
    fn codex_gets_a_profile_that_denies_the_agents_files_and_writes_the_worktree() {
        let p = Paths {
            agents_dir: Path::new("/p/.agents"),
            socket: Path::new("/p/.agents/coordd.sock"),
            cwd: Path::new("/p/.agents/worktrees/R1/T1"),
        };
        let a = codex_args(&p);
        assert_eq!(a.iter().filter(|x| *x == "-c").count(), 3, "{a:?}");
        assert!(a.contains(&"default_permissions=\"coordd_worker\"".to_string()), "{a:?}");
        let fs = a.iter().find(|x| x.starts_with("permissions.coordd_worker.filesystem=")).unwrap();
        for rule in [
            "\"/\"=\"read\"",
            "\"/p/.agents/worktrees/R1/T1\"=\"write\"",
            "\"/p/.agents/*\"=\"none\"",
            "\"/p/.agents/.*\"=\"none\"",
            "\"/p/.agents/launch/*/logs/**\"=\"none\"",
        ] {
            assert!(fs.contains(rule), "{rule} in {fs}");
        }
        assert!(a.contains(&"permissions.coordd_worker.network.enabled=true".to_string()), "{a:?}");
    }
}
