//! coordd never leaks into the user's commits: `.agents/` is ignored through
//! `.git/info/exclude`, the session files of a dispatched worktree are ignored there (a
//! worker's `git add -A && git commit` commits only its work, and a merge carries nothing of
//! ours into `main`), a tracked `CLAUDE.md` is never modified, `hook install` in a person's
//! checkout keeps its files out of their commits, and the command the reminder names works
//! as typed in the session.

use coord_tests::{Project, git_in};
use serde_json::Value;

/// A project that is also a git repository with one commit on `main`, tracking a
/// `CLAUDE.md` of its own.
fn repo() -> Project {
    let p = Project::new();
    git_in(p.path(), &["init", "-q", "-b", "main"]);
    git_in(p.path(), &["config", "user.email", "t@example.com"]);
    git_in(p.path(), &["config", "user.name", "Test"]);
    p.write("README.md", "hello\n");
    p.write("CLAUDE.md", "# Team rules\n");
    git_in(p.path(), &["add", "README.md", "CLAUDE.md"]);
    git_in(p.path(), &["commit", "-q", "-m", "init"]);
    p
}

fn orch(p: &Project, args: &[&str]) -> Value {
    p.orch().json_flag().args(args).run().ok().json()
}

/// Dispatch one code task of run R1 to `w1`; its worktree and thread.
fn dispatched(p: &Project) -> (std::path::PathBuf, String) {
    orch(p, &["run", "create", "--goal", "g", "--id", "R1"]);
    orch(p, &["task", "add", "--run", "R1", "--id", "T1", "--title", "Schema", "--assign-to", "w1"]);
    let d = orch(p, &["dispatch", "--run", "R1", "--task", "T1"]);
    let wt = d["dispatches"][0]["worktree_path"].as_str().unwrap().into();
    (wt, d["dispatches"][0]["thread_id"].as_str().unwrap().to_string())
}

#[test]
fn init_keeps_the_state_folder_out_of_git() {
    let p = repo();
    p.inbox().args(["init"]).run().ok();
    assert!(p.path().join(".agents/coord.db").exists());
    git_in(p.path(), &["add", "-A"]);
    let staged = git_in(p.path(), &["status", "--porcelain"]);
    assert!(staged.is_empty(), "nothing of coordd's is staged: {staged}");
    let exclude = std::fs::read_to_string(p.path().join(".git/info/exclude")).unwrap();
    assert!(exclude.lines().any(|l| l == "/.agents/"), "{exclude}");
    // Idempotent: the line is written once.
    p.coordd().args(["stop"]).run().ok();
    p.inbox().args(["init"]).run().ok();
    let again = std::fs::read_to_string(p.path().join(".git/info/exclude")).unwrap();
    assert_eq!(again.matches("/.agents/").count(), 1, "{again}");
}

#[test]
fn a_workers_add_all_and_commit_carries_none_of_coordds_files() {
    let p = repo();
    let (wt, _) = dispatched(&p);
    // The session files are there, for the session...
    for f in [".claude/settings.local.json", ".mcp.json", "CLAUDE.local.md", "AGENTS.md"] {
        assert!(wt.join(f).exists(), "{f} was written");
    }
    let settings: Value =
        serde_json::from_str(&std::fs::read_to_string(wt.join(".claude/settings.local.json")).unwrap()).unwrap();
    assert_eq!(settings["enabledMcpjsonServers"], serde_json::json!(["coordd"]), "orch's worktrees approve the server");
    // ... but the tracked CLAUDE.md is untouched.
    assert_eq!(std::fs::read_to_string(wt.join("CLAUDE.md")).unwrap(), "# Team rules\n");
    assert!(std::fs::read_to_string(wt.join("CLAUDE.local.md")).unwrap().contains("coordd:mailbox:begin"));
    assert!(git_in(&wt, &["status", "--porcelain"]).is_empty(), "the worktree looks clean");

    std::fs::write(wt.join("schema.sql"), "create table t (id int);\n").unwrap();
    git_in(&wt, &["add", "-A"]);
    git_in(&wt, &["-c", "user.email=w@e", "-c", "user.name=w", "commit", "-q", "-m", "schema"]);
    let files = git_in(&wt, &["show", "--name-only", "--format=", "HEAD"]);
    assert_eq!(files.trim(), "schema.sql", "only the work is committed");

    // And nothing of ours reaches main through the merges.
    let thread = orch(&p, &["task", "show", "--run", "R1", "--task", "T1"])["attempts"][0]["thread_id"]
        .as_str()
        .unwrap()
        .to_string();
    p.inbox().args(["claim", "--agent", "w1", "--thread", &thread]).run().ok();
    p.inbox().args(["done", "--agent", "w1", "--thread", &thread, "--summary", "ok"]).run().ok();
    orch(&p, &["run", "finish", "--run", "R1"]);
    let tracked = git_in(p.path(), &["ls-files"]);
    assert_eq!(tracked.lines().collect::<Vec<_>>(), ["CLAUDE.md", "README.md", "schema.sql"]);
    assert!(git_in(p.path(), &["status", "--porcelain"]).is_empty(), "main's checkout stays clean");
}

#[test]
fn hook_install_in_a_persons_checkout_stays_out_of_their_commits() {
    let p = repo();
    let r = p.inbox().args(["--agent", "me", "hook", "install", "--json"]).run().ok().json();
    assert_eq!(r["files"].as_array().unwrap().len(), 4, "{r}");
    assert_eq!(std::fs::read_to_string(p.path().join("CLAUDE.md")).unwrap(), "# Team rules\n", "tracked: untouched");
    git_in(p.path(), &["add", "-A"]);
    let staged = git_in(p.path(), &["status", "--porcelain"]);
    assert!(staged.is_empty(), "nothing to commit: {staged}");
    let exclude = std::fs::read_to_string(p.path().join(".git/info/exclude")).unwrap();
    for f in ["/.claude/settings.local.json", "/.mcp.json", "/CLAUDE.local.md", "/AGENTS.md"] {
        assert!(exclude.lines().any(|l| l == f), "{f} excluded:\n{exclude}");
    }
    let settings = std::fs::read_to_string(p.path().join(".claude/settings.local.json")).unwrap();
    assert!(!settings.contains("enabledMcpjsonServers"), "approval stays opt-in here: {settings}");
}

/// The command between backticks after `run ` in a text.
fn command_in(text: &str) -> String {
    let start = text.find("run `").unwrap_or_else(|| panic!("no command in: {text}")) + 5;
    text[start..].split('`').next().unwrap().to_string()
}

fn sh_in(dir: &std::path::Path, cmd: &str) -> std::process::Output {
    std::process::Command::new("sh")
        .arg("-c")
        .arg(cmd)
        .current_dir(dir)
        .env_remove("COORD_AGENT")
        .env_remove("COORD_TASK")
        .env_remove("COORD_DB")
        .output()
        .unwrap()
}

#[test]
fn the_reminder_and_the_instructions_name_a_command_that_works_as_typed() {
    let p = repo();
    let (wt, _) = dispatched(&p);
    p.inbox().args(["send", "--from", "lead", "--to-task", "T1", "--summary", "Use UUID keys"]).run().ok();
    let settings: Value =
        serde_json::from_str(&std::fs::read_to_string(wt.join(".claude/settings.local.json")).unwrap()).unwrap();
    let hook = settings["hooks"]["PostToolUse"][0]["hooks"][0]["command"].as_str().unwrap().to_string();
    // The worker runs the task's thread (T1's mail reaches it once it holds the thread).
    let thread = orch(&p, &["task", "show", "--run", "R1", "--task", "T1"])["attempts"][0]["thread_id"]
        .as_str()
        .unwrap()
        .to_string();
    p.inbox().args(["claim", "--agent", "w1", "--thread", &thread]).run().ok();
    let out = sh_in(&wt, &hook);
    let reminder: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {out:?}"));
    let context = reminder["hookSpecificOutput"]["additionalContext"].as_str().unwrap().to_string();
    assert!(context.contains("check_inbox"), "the MCP tool comes first: {context}");
    let typed = sh_in(&wt, &command_in(&context));
    assert!(typed.status.success(), "`{}` failed: {typed:?}", command_in(&context));
    assert!(String::from_utf8_lossy(&typed.stdout).contains("Use UUID keys"));
    // The instructions' command works the same way.
    p.inbox().args(["send", "--from", "lead", "--to-task", "T1", "--summary", "Also index them"]).run().ok();
    let note = std::fs::read_to_string(wt.join("CLAUDE.local.md")).unwrap();
    let typed = sh_in(&wt, &command_in(&note));
    assert!(typed.status.success(), "{typed:?}");
    assert!(String::from_utf8_lossy(&typed.stdout).contains("Also index them"));
}

#[test]
fn reinstalling_moves_hooks_an_earlier_version_left_in_settings_json() {
    let p = repo();
    let old = serde_json::json!({"hooks": {
        "Stop": [
            {"hooks": [{"type": "command", "command": "/old/inbox --agent me hook claude stop"}]},
            {"hooks": [{"type": "command", "command": "notify-send done"}]}
        ],
        "PostToolUse": [{"hooks": [{"type": "command", "command": "/old/inbox --agent me hook claude post-tool-use"}]}]
    }});
    std::fs::create_dir_all(p.path().join(".claude")).unwrap();
    std::fs::write(p.path().join(".claude/settings.json"), old.to_string()).unwrap();
    let r = p.inbox().args(["--agent", "me", "hook", "install", "--json"]).run().ok().json();
    assert!(r["notes"].to_string().contains("settings.json"), "{r}");
    let kept: Value =
        serde_json::from_str(&std::fs::read_to_string(p.path().join(".claude/settings.json")).unwrap()).unwrap();
    assert_eq!(
        kept,
        serde_json::json!({"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "notify-send done"}]}]}})
    );
    let local = std::fs::read_to_string(p.path().join(".claude/settings.local.json")).unwrap();
    assert_eq!(local.matches("hook claude stop").count(), 1, "{local}");
}
