//! Output and exit codes, in one place: the JSON envelope, the readable text, and the
//! mapping of every error to the documented exit code.

use std::process::ExitCode;

use coord_client::ClientError;
use coord_proto::types::{Event, Message, Thread};
use serde_json::{Value, json};

/// Exit code: nothing matched (no work, a wait timed out).
pub const EXIT_NONE: u8 = 10;

#[derive(Debug)]
pub enum CliError {
    /// Bad flags or values caught before calling the daemon.
    Invalid(String),
    /// The daemon, the connection or the call failed.
    Client(ClientError),
    Internal(String),
}

impl From<ClientError> for CliError {
    fn from(e: ClientError) -> Self {
        CliError::Client(e)
    }
}

impl CliError {
    fn code(&self) -> &'static str {
        match self {
            CliError::Invalid(_) => "invalid_input",
            CliError::Client(e) => e.code(),
            CliError::Internal(_) => "internal",
        }
    }

    /// The documented exit code: 20 conflict, 30 invalid, 40 not found, 50 everything else.
    fn exit_code(&self) -> u8 {
        match self {
            CliError::Invalid(_) => 30,
            CliError::Client(e) => e.exit_code() as u8,
            CliError::Internal(_) => 50,
        }
    }

    fn message(&self) -> String {
        match self {
            CliError::Invalid(m) | CliError::Internal(m) => m.clone(),
            CliError::Client(e) => e.to_string(),
        }
    }

    fn details(&self) -> Option<&Value> {
        match self {
            CliError::Client(ClientError::Rpc { details, .. }) => details.as_ref(),
            _ => None,
        }
    }
}

/// Report an error (envelope on stdout with --json, text on stderr otherwise) and exit.
pub fn fail(json_mode: bool, command: &str, e: &CliError) -> ExitCode {
    if json_mode {
        let mut error = json!({"code": e.code(), "message": e.message()});
        if let Some(d) = e.details() {
            error["details"] = d.clone();
        }
        println!("{}", json!({"ok": false, "command": command, "error": error}));
    } else {
        eprintln!("inbox {command}: {} ({})", e.message(), e.code());
    }
    ExitCode::from(e.exit_code())
}

/// Usage errors are invalid input (30); --help and --version succeed.
pub fn clap_exit(e: clap::Error) -> ExitCode {
    use clap::error::ErrorKind;
    let _ = e.print();
    match e.kind() {
        ErrorKind::DisplayHelp | ErrorKind::DisplayVersion | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
            ExitCode::SUCCESS
        }
        _ => ExitCode::from(30),
    }
}

/// Print a success envelope: `{"ok":true,"command":..}` merged with `body`'s fields.
pub fn envelope(command: &str, body: Value) {
    let mut out = serde_json::Map::new();
    out.insert("ok".into(), Value::Bool(true));
    out.insert("command".into(), Value::String(command.into()));
    if let Value::Object(fields) = body {
        out.extend(fields);
    }
    println!("{}", Value::Object(out));
}

pub fn to_value<T: serde::Serialize>(v: &T) -> Value {
    serde_json::to_value(v).unwrap_or(Value::Null)
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
    println!("#{} {} {} [{}]{}: {}", e.event_id, e.event_type, e.thread_id, e.thread_status, by, e.summary);
}
