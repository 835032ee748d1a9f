//! Output of `inbox`: the readable text. The JSON envelope and the one mapping of errors
//! to exit codes are shared with `orch` in `coord_client::cli`.

use coord_proto::types::{Event, Message, Thread};

pub use coord_client::cli::{CliError, EXIT_NONE, clap_exit, envelope, to_value};

/// Report an error and exit with its code (see `coord_client::cli`).
pub fn fail(json_mode: bool, command: &str, e: &CliError) -> std::process::ExitCode {
    coord_client::cli::fail(json_mode, "inbox", command, e)
}

fn short(s: &str, n: usize) -> String {
    if s.chars().count() <= n { s.to_string() } else { format!("{}…", s.chars().take(n - 1).collect::<String>()) }
}

/// One line per thread, with a header.
pub fn thread_table(threads: &[Thread]) {
    println!("{:<24} {:<11} {:<6} {:<16} {:<12} SUBJECT", "THREAD", "STATUS", "PRIO", "ASSIGNED", "RUN/TASK");
    for t in threads {
        let rt = if t.run_id.is_empty() && t.task_id.is_empty() {
            "-".into()
        } else {
            format!("{}/{}", t.run_id, t.task_id)
        };
        println!(
            "{:<24} {:<11} {:<6} {:<16} {:<12} {}",
            t.thread_id,
            t.status.as_str(),
            t.priority.as_str(),
            short(&t.assigned_to, 16),
            short(&rt, 12),
            t.subject
        );
    }
}

pub fn thread_header(t: &Thread) {
    println!("{}  {}", t.thread_id, t.subject);
    println!(
        "  status {}  priority {}  created by {}  assigned to {}",
        t.status, t.priority, t.created_by, t.assigned_to
    );
    if !t.run_id.is_empty() || !t.task_id.is_empty() {
        println!("  run {}  task {}", t.run_id, t.task_id);
    }
    if let Some(l) = &t.lease {
        let state = if l.active { "active" } else { "inactive" };
        println!("  lease {} by {} until {} (generation {})", state, l.agent_id, l.expires_at, l.generation);
    }
}

pub fn message_block(m: &Message) {
    println!("[{}] #{} {} {} -> {}: {}", m.created_at, m.event_id, m.kind, m.from_agent, m.to_agent, m.summary);
    for line in m.body.lines() {
        println!("    {line}");
    }
    if m.payload_json.as_object().is_some_and(|o| !o.is_empty()) {
        println!("    payload: {}", m.payload_json);
    }
    for a in &m.artifacts {
        let meta = if a.metadata_json.as_object().is_some_and(|o| !o.is_empty()) {
            format!(" {}", a.metadata_json)
        } else {
            String::new()
        };
        println!("    artifact [{}] {}{}", a.kind, a.path, meta);
    }
}

pub fn event_line(e: &Event) {
    let by = if e.actor.is_empty() { String::new() } else { format!(" by {}", e.actor) };
    let status = e.thread_status.map(|s| s.as_str()).or(e.task_status.map(|s| s.as_str())).unwrap_or("-");
    println!("#{} {} {} [{status}]{}: {}", e.event_id, e.event_type, e.thread_id, by, e.summary);
}
