//! The readable text output of `inbox`: tables and blocks for people, and mail as context
//! for an agent (`check`, the Claude Code hooks). The JSON envelope is `coord_cli`'s.

use coord_cli::table;
use coord_proto::types::{Agent, Event, MailItem, Message, Reservation, SearchHit, StatusResult, Thread};

/// Claude Code caps hook output at 10,000 characters; stay under it.
const MAX_CONTEXT: usize = 9000;

/// One line per thread, with a header, fitted to the terminal.
pub fn thread_table(threads: &[Thread]) {
    let rows: Vec<[String; 6]> = threads
        .iter()
        .map(|t| {
            let rt = if t.run_id.is_empty() && t.task_id.is_empty() {
                "-".into()
            } else {
                format!("{}/{}", t.run_id, t.task_id)
            };
            [
                t.thread_id.clone(),
                t.status.to_string(),
                t.priority.to_string(),
                t.assigned_to.clone(),
                rt,
                t.subject.clone(),
            ]
        })
        .collect();
    let caps = [40, 11, 6, 16, 16, usize::MAX];
    print!("{}", table::render(["THREAD", "STATUS", "PRIO", "ASSIGNED", "RUN/TASK", "SUBJECT"], &rows, caps));
}

/// Search hits, best first: where each is, then its snippet.
pub fn search_hits(hits: &[SearchHit]) {
    if hits.is_empty() {
        println!("no message matches");
        return;
    }
    let width = table::width().unwrap_or(usize::MAX);
    for h in hits {
        let task = if h.task_id.is_empty() { String::new() } else { format!(" {}/{}", h.run_id, h.task_id) };
        let head = format!(
            "{} {} {} -> {} [{}]{task} in {} ({}): {}",
            h.created_at, h.message_id, h.from_agent, h.to_agent, h.kind, h.thread_id, h.subject, h.summary
        );
        println!("{}", table::cut(&head, width));
        println!("    {}", h.snippet.replace('\n', " "));
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
    let place = match (e.thread_id.is_empty(), e.task_id.is_empty()) {
        (false, _) => e.thread_id.clone(),
        (true, false) => format!("{}/{}", e.run_id, e.task_id),
        (true, true) => e.run_id.clone(),
    };
    println!("{} #{} {} {place} [{status}]{}: {}", e.created_at, e.event_id, e.event_type, by, e.summary);
}

pub fn agent_table(agents: &[Agent]) {
    if agents.is_empty() {
        println!("no agents");
        return;
    }
    let rows: Vec<[String; 6]> = agents
        .iter()
        .map(|a| {
            [
                a.agent_id.clone(),
                a.role.clone(),
                a.status.to_string(),
                if a.registered { "yes" } else { "unregistered" }.to_string(),
                a.last_seen_at.clone().unwrap_or_else(|| "-".into()),
                a.display_name.clone(),
            ]
        })
        .collect();
    let caps = [32, 12, 8, 12, 24, usize::MAX];
    print!("{}", table::render(["AGENT", "ROLE", "STATUS", "REGISTERED", "LAST SEEN", "DISPLAY"], &rows, caps));
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

/// Mail, one line each. STATE is the copy's whole lifecycle (queued, delivered, read,
/// acked, expired, withdrawn), so `mail`, `check` and `withdraw` agree on it.
pub fn mail_table(mail: &[MailItem]) {
    if mail.is_empty() {
        println!("no mail");
        return;
    }
    let rows: Vec<[String; 8]> = mail
        .iter()
        .map(|m| {
            [
                m.message_id.clone(),
                m.delivery.to_string(),
                category(m).to_string(),
                if m.requires_ack { "yes" } else { "no" }.to_string(),
                m.from_agent.clone(),
                m.task_id.clone(),
                m.created_at.clone(),
                m.summary.clone(),
            ]
        })
        .collect();
    let caps = [40, 9, 8, 3, 16, 12, 24, usize::MAX];
    let head = ["MESSAGE", "STATE", "CATEGORY", "ACK", "FROM", "TASK", "SENT", "SUMMARY"];
    print!("{}", table::render(head, &rows, caps));
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
    let rows: Vec<[String; 7]> = rs
        .iter()
        .map(|r| {
            [
                r.agent_id.clone(),
                if r.shared { "shared" } else { "exclusive" }.to_string(),
                if r.stale { "stale".to_string() } else { r.state.to_string() },
                r.task_id.clone(),
                r.generation.to_string(),
                r.expires_at.clone(),
                r.scope.clone(),
            ]
        })
        .collect();
    let caps = [20, 9, 8, 12, 4, 24, usize::MAX];
    print!("{}", table::render(["AGENT", "MODE", "STATE", "TASK", "GEN", "EXPIRES", "SCOPE"], &rows, caps));
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
