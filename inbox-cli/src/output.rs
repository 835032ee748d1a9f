//! The readable text output of `inbox`: tables and blocks for people, and mail as context
//! for an agent (`check`, the Claude Code hooks). The JSON envelope is `coord_cli`'s.

use coord_proto::types::{Agent, Event, MailItem, Message, Reservation, StatusResult, Thread};

/// Claude Code caps hook output at 10,000 characters; stay under it.
const MAX_CONTEXT: usize = 9000;

fn short(s: &str, n: usize) -> String {
    if s.chars().count() <= n { s.to_string() } else { format!("{}…", s.chars().take(n - 1).collect::<String>()) }
}

/// One line per thread, with a header.
pub fn thread_table(threads: &[Thread]) {
    println!("{:<30} {:<11} {:<6} {:<16} {:<12} SUBJECT", "THREAD", "STATUS", "PRIO", "ASSIGNED", "RUN/TASK");
    for t in threads {
        let rt = if t.run_id.is_empty() && t.task_id.is_empty() {
            "-".into()
        } else {
            format!("{}/{}", t.run_id, t.task_id)
        };
        println!(
            "{:<30} {:<11} {:<6} {:<16} {:<12} {}",
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

pub fn agent_table(agents: &[Agent]) {
    if agents.is_empty() {
        println!("no agents");
        return;
    }
    println!("{:<24} {:<12} {:<8} {:<5} {:<24} DISPLAY", "AGENT", "ROLE", "STATUS", "REG", "LAST SEEN");
    for a in agents {
        println!(
            "{:<24} {:<12} {:<8} {:<5} {:<24} {}",
            a.agent_id,
            short(&a.role, 12),
            a.status.as_str(),
            if a.registered { "yes" } else { "no" },
            a.last_seen_at.as_deref().unwrap_or("-"),
            a.display_name
        );
    }
}

pub fn agent_block(a: &Agent) {
    println!("{}  {}", a.agent_id, a.display_name);
    println!("  role {}  status {}  registered {}", a.role, a.status, if a.registered { "yes" } else { "no" });
    println!(
        "  created {}  last seen {}  version {}",
        a.created_at,
        a.last_seen_at.as_deref().unwrap_or("never"),
        a.version
    );
}

fn category(m: &MailItem) -> &'static str {
    m.category.map_or("-", |c| c.as_str())
}

pub fn mail_table(mail: &[MailItem]) {
    if mail.is_empty() {
        println!("no mail");
        return;
    }
    println!(
        "{:<30} {:<6} {:<8} {:<3} {:<16} {:<10} {:<24} SUMMARY",
        "MESSAGE", "STATE", "CATEGORY", "ACK", "FROM", "TASK", "SENT"
    );
    for m in mail {
        println!(
            "{:<30} {:<6} {:<8} {:<3} {:<16} {:<10} {:<24} {}",
            m.message_id,
            m.state.as_str(),
            category(m),
            if m.requires_ack { "yes" } else { "no" },
            short(&m.from_agent, 16),
            short(&m.task_id, 10),
            m.created_at,
            m.summary
        );
    }
}

pub fn mail_block(m: &MailItem) {
    println!(
        "[{}] {} {} -> {} ({}, task {}): {}",
        m.created_at,
        category(m),
        m.from_agent,
        m.to_agent,
        m.kind,
        m.task_id,
        m.summary
    );
    for line in m.body.lines() {
        println!("    {line}");
    }
    println!(
        "    thread {}  read {}  acked {}",
        m.thread_id,
        m.read_at.as_deref().unwrap_or("-"),
        m.acked_at.as_deref().unwrap_or("-")
    );
}

pub fn reservation_line(r: &Reservation) -> String {
    let mode = if r.shared { "shared" } else { "exclusive" };
    let state = if r.stale { "stale".to_string() } else { r.state.to_string() };
    format!(
        "{} by {} ({mode}, {state}, task {}, generation {}, until {})",
        r.scope, r.agent_id, r.task_id, r.generation, r.expires_at
    )
}

pub fn reservation_table(rs: &[Reservation]) {
    if rs.is_empty() {
        println!("no reservations");
        return;
    }
    println!("{:<32} {:<20} {:<9} {:<8} {:<10} {:<4} EXPIRES", "SCOPE", "AGENT", "MODE", "STATE", "TASK", "GEN");
    for r in rs {
        println!(
            "{:<32} {:<20} {:<9} {:<8} {:<10} {:<4} {}",
            r.scope,
            short(&r.agent_id, 20),
            if r.shared { "shared" } else { "exclusive" },
            if r.stale { "stale" } else { r.state.as_str() },
            short(&r.task_id, 10),
            r.generation,
            r.expires_at
        );
    }
}

pub fn status(s: &StatusResult) {
    println!("Active reservations ({}):", s.reservations.len());
    for r in &s.reservations {
        println!("  {}", reservation_line(r));
    }
    println!("Unacked messages requiring an ack ({}):", s.unacked.len());
    for u in &s.unacked {
        let m = &u.mail;
        println!(
            "  {} {} {} -> {} task {} waiting {}s: {}",
            m.message_id,
            category(m),
            m.from_agent,
            m.to_agent,
            m.task_id,
            u.waiting_seconds,
            m.summary
        );
    }
    let c = &s.counts;
    println!("Mail: {} unread, {} read, {} acked", c.unread, c.read, c.acked);
    println!(
        "Reservations: {} active, {} stale, {} released, {} expired",
        c.reservations_active, c.reservations_stale, c.reservations_released, c.reservations_expired
    );
}

/// Messages as context for an agent: one block each, newest last, within the size cap.
pub fn agent_context(messages: &[MailItem]) -> String {
    let mut out = String::new();
    for m in messages {
        let mut block = format!(
            "[{}] from {} (message {}, thread {}{}): {}\n",
            m.priority,
            m.from_agent,
            m.message_id,
            m.thread_id,
            if m.task_id.is_empty() { String::new() } else { format!(", task {}", m.task_id) },
            m.summary
        );
        for line in m.body.lines() {
            block.push_str("    ");
            block.push_str(line);
            block.push('\n');
        }
        if out.len() + block.len() > MAX_CONTEXT {
            out.push_str("(more messages: run `inbox mail` to see them all)\n");
            break;
        }
        out.push_str(&block);
    }
    out
}
