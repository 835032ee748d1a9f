//! The session-mailbox figures: whole-process `inbox pending` (run after every tool call)
//! and the Claude Code hook handler, each spawned as a session would spawn it.

use std::time::Instant;

use coord_tests::Project;

use crate::{ms, percentile, report};

/// Queue `n` messages for `agent`, so the measured commands have a mailbox to count.
fn seed(p: &Project, agent: &str, n: usize) {
    for i in 0..n {
        let out = p.inbox().args(["send", "--from", "lead", "--to", agent, "--summary", &format!("m{i}")]).run();
        assert_eq!(out.code, 0, "{out:?}");
    }
}

/// Time `runs` whole-process runs of `inbox ARGS` with `stdin`, each one exiting 0.
fn time_runs(p: &Project, args: &[&str], stdin: &str, runs: usize) -> Vec<std::time::Duration> {
    let mut lat = Vec::with_capacity(runs);
    for _ in 0..runs {
        let t0 = Instant::now();
        let out = p.inbox().args(args).stdin(stdin.as_bytes()).run();
        lat.push(t0.elapsed());
        assert_eq!(out.code, 0, "{out:?}");
    }
    lat.sort();
    lat
}

fn summary(lat: &[std::time::Duration]) -> String {
    format!("p50 {}  p99 {}", ms(percentile(lat, 0.5)), ms(percentile(lat, 0.99)))
}

/// `inbox --agent A pending --task T --json` against the warm daemon, 20 messages queued.
pub fn pending(p: &Project, runs: usize) {
    seed(p, "bench-pending", 20);
    let lat = time_runs(p, &["--agent", "bench-pending", "pending", "--task", "T-bench", "--json"], "", runs);
    report(&format!("whole-process `inbox pending --json`, 20 queued ({runs} runs)"), summary(&lat));
}

/// `inbox hook claude post-tool-use` and `stop`, fed a hook's JSON on stdin, with mail
/// queued (post-tool-use reminds once, then finds nothing new) and with none (stop).
pub fn hook(p: &Project, runs: usize) {
    seed(p, "bench-hook", 20);
    let post = r#"{"session_id":"s1","transcript_path":"/tmp/t.jsonl","cwd":"/tmp","permission_mode":"default",
        "hook_event_name":"PostToolUse","tool_name":"Bash","tool_input":{"command":"ls"},
        "tool_response":{"stdout":"","stderr":"","interrupted":false},"tool_use_id":"toolu_1"}"#;
    let args = ["--agent", "bench-hook", "hook", "claude", "post-tool-use", "--task", "T-bench"];
    // The hook fails open (exit 0, no output) without a daemon: prove it reaches this one.
    let first = p.inbox().args(args).stdin(post.as_bytes()).run();
    assert!(first.stdout.contains("additionalContext"), "the hook did not reach the daemon: {first:?}");
    let lat = time_runs(p, &args, post, runs);
    report(&format!("whole-process hook claude post-tool-use ({runs} runs)"), summary(&lat));
    let stop = r#"{"session_id":"s1","transcript_path":"/tmp/t.jsonl","cwd":"/tmp","permission_mode":"default",
        "hook_event_name":"Stop","stop_hook_active":false}"#;
    let args = ["--agent", "bench-idle", "hook", "claude", "stop", "--task", "T-idle"];
    let lat = time_runs(p, &args, stop, runs);
    report(&format!("whole-process hook claude stop, empty inbox ({runs} runs)"), summary(&lat));
}
