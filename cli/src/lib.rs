//! coord-cli: what the `inbox` and `orch` command-line tools share. The JSON envelope, the
//! error type of a command, and the one mapping of every error to its [`Exit`] status.
//!
//! With `--json` a command prints exactly one envelope on stdout:
//! `{"ok":true,"command":...,...fields}` or
//! `{"ok":false,"command":...,"error":{"code":...,"message":...,"details"?:...}}`.
//!
//! A command reaches the daemon through a [`Connection`], opened on its first use: a
//! command whose arguments are wrong, or that needs no daemon, never connects (nor starts
//! one). [`command`] is the shape of one command in both CLIs: its [`Ctx`], its
//! [`Outcome`], the [`Command`] trait and the [`subcommands!`] list. [`usage`] holds the
//! command-line machinery both CLIs share (usage errors, help, completions), [`table`] the
//! text output for people, [`requests`] how a team-control request is answered, [`mcp`] what both MCP servers share.

pub mod command;
pub mod mcp;
pub mod requests;
pub mod table;
pub mod usage;

pub mod dashboard;

use std::path::Path;
use std::process::ExitCode;

use coord_client::{Client, ClientError, ConnectOptions};
use coord_proto::{ErrorCode, Exit};
use serde_json::{Value, json};

pub use command::{Command, Ctx, Outcome, Res};

/// Restore the default SIGPIPE action, so `orch status | head -1` ends quietly instead of
/// panicking on a closed pipe. Call first thing in `main`.
pub fn reset_sigpipe() {
    #[cfg(unix)]
    // SAFETY: setting a signal's disposition to SIG_DFL at start-up, before any thread
    // exists, has no preconditions.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}

/// Why a command failed.
#[derive(Debug, thiserror::Error)]
pub enum CliError {
    /// Bad flags or values, caught before calling the daemon (`invalid_args`).
    #[error("{0}")]
    Invalid(String),
    /// The daemon, the connection or the call failed.
    #[error(transparent)]
    Client(#[from] ClientError),
    /// A local failure with one of the protocol's codes (e.g. `io_read_failed`).
    #[error("{1}")]
    App(ErrorCode, String),
    /// Something that should not happen (the runtime could not start, ...).
    #[error("{0}")]
    Internal(String),
}

impl From<jsonrpsee::core::client::Error> for CliError {
    fn from(e: jsonrpsee::core::client::Error) -> Self {
        CliError::Client(e.into())
    }
}

impl CliError {
    /// The stable snake_case code printed in envelopes and messages.
    pub fn code(&self) -> &'static str {
        match self {
            CliError::Invalid(_) => ErrorCode::InvalidArgs.as_str(),
            CliError::Client(e) => e.code(),
            CliError::App(c, _) => c.as_str(),
            CliError::Internal(_) => ErrorCode::Internal.as_str(),
        }
    }

    /// The exit status: the one place a command's error becomes one.
    pub fn exit(&self) -> Exit {
        match self {
            CliError::Invalid(_) => Exit::Invalid,
            CliError::Client(e) => e.exit(),
            CliError::App(c, _) => c.exit(),
            CliError::Internal(_) => Exit::Internal,
        }
    }

    fn details(&self) -> Option<&Value> {
        match self {
            CliError::Client(ClientError::Rpc { details, .. }) => details.as_ref(),
            _ => None,
        }
    }
}

/// The daemon connection of one command, opened (and the daemon started, unless
/// auto-start is off) when the command first asks for it.
pub struct Connection {
    opts: ConnectOptions,
    client: tokio::sync::OnceCell<Client>,
    read_only: bool,
}

impl Connection {
    /// The project around the current directory, or the `--db` given; `--no-autostart`
    /// turns auto-start off (as `COORD_NO_AUTOSTART` does).
    pub fn new(db: Option<&Path>, no_autostart: bool) -> Connection {
        let mut opts = ConnectOptions::for_cwd(db);
        if no_autostart {
            opts.autostart = false;
        }
        Connection { opts, client: tokio::sync::OnceCell::new(), read_only: false }
    }

    /// The command only reads: outside a project (no database yet) it says so instead of
    /// creating one; writes and `init` still create it.
    pub fn read_only(mut self, yes: bool) -> Connection {
        self.read_only = yes;
        self
    }

    /// Say on stderr when this command starts the daemon (not under `--json`).
    pub fn announce_start(mut self, yes: bool) -> Connection {
        self.opts.on_start = yes.then_some(say_started as fn(u32, &Path));
        self
    }

    /// Where the daemon is and whether it may be started, for a command that connects its
    /// own way (or only needs the paths).
    pub fn options(&self) -> &ConnectOptions {
        &self.opts
    }

    /// The client, connected on the first call.
    pub async fn client(&self) -> Result<&Client, CliError> {
        if self.read_only && self.client.get().is_none() {
            self.check_project()?;
        }
        Ok(self.client.get_or_try_init(|| Client::connect(self.opts.clone())).await?)
    }

    /// A read-only command needs an existing project: a database (or a recorded or named
    /// PostgreSQL store, which an auto-started daemon opens), or a daemon serving it.
    fn check_project(&self) -> Result<(), CliError> {
        let p = &self.opts.paths;
        if coord_client::paths::project_exists(&p.db) || coord_client::autostart::daemon_listening(&p.socket) {
            return Ok(());
        }
        let root = p.db.parent().and_then(Path::parent).unwrap_or(&p.db);
        Err(CliError::App(
            ErrorCode::NotFound,
            format!(
                "no coordd project here ({} has no {}); run `inbox init` in the project's root to create one",
                root.display(),
                p.db.strip_prefix(root).unwrap_or(&p.db).display()
            ),
        ))
    }
}

/// Report an error (the envelope on stdout with --json, a line on stderr otherwise) and
/// return its exit status.
pub fn fail(json_mode: bool, program: &str, command: &str, e: &CliError) -> ExitCode {
    if json_mode {
        let mut error = json!({"code": e.code(), "message": e.to_string()});
        if let Some(d) = e.details() {
            error["details"] = d.clone();
        }
        println!("{}", json!({"ok": false, "command": command, "error": error}));
    } else {
        eprintln!("{program} {command}: {e} ({})", e.code());
    }
    e.exit().into()
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

/// Any serializable value as JSON (the protocol's types never fail to serialize).
pub fn to_value<T: serde::Serialize>(v: &T) -> Value {
    serde_json::to_value(v).unwrap_or(Value::Null)
}

/// Parse a flag's value that must be a JSON object (`--payload-json`, `--meta`, ...).
pub fn json_object(flag: &str, text: &str) -> Result<Value, CliError> {
    let v: Value =
        serde_json::from_str(text).map_err(|e| CliError::Invalid(format!("--{flag} is not valid JSON: {e}")))?;
    if !v.is_object() {
        return Err(CliError::Invalid(format!("--{flag} must be a JSON object, got {v}")));
    }
    Ok(v)
}

/// Read `--body-file` (`-` for stdin), or take `--body`.
pub fn body(body: Option<String>, file: Option<&std::path::Path>) -> Result<Option<String>, CliError> {
    match file {
        Some(path) if path.as_os_str() == "-" => {
            let mut s = String::new();
            std::io::Read::read_to_string(&mut std::io::stdin(), &mut s)
                .map_err(|e| CliError::Invalid(format!("cannot read the body from stdin: {e}")))?;
            Ok(Some(s))
        }
        // A file that is missing or unreadable is the caller's mistake, not the daemon's.
        Some(path) => std::fs::read_to_string(path)
            .map(Some)
            .map_err(|e| CliError::Invalid(format!("cannot read --body-file {}: {e}", path.display()))),
        None => Ok(body),
    }
}

/// How a wait reports on stderr while it waits: what it waits for when it starts, and a
/// line when it loses its daemon and when it resumes. Silent under `--json` (scripts read
/// stdout; stderr stays quiet too).
pub struct WaitReport {
    program: &'static str,
    quiet: bool,
}

impl WaitReport {
    pub fn new(program: &'static str, json: bool) -> WaitReport {
        WaitReport { program, quiet: json }
    }

    /// Say what the command waits for (`what`, e.g. "a reply in thread thr_1").
    pub fn waiting(&self, what: &str, after_event: Option<i64>, timeout_seconds: Option<u64>) {
        if self.quiet {
            return;
        }
        let after = after_event.map_or(String::new(), |e| format!(" after event {e}"));
        let limit =
            timeout_seconds.map_or(" (no time limit; Ctrl-C to stop)".to_string(), |s| format!(" (up to {s} s)"));
        eprintln!("{}: waiting for {what}{after}{limit}...", self.program);
    }

    /// The stream's notices, as lines on stderr (nothing under `--json`).
    pub fn notices(&self) -> impl FnMut(&coord_client::Notice) + Send + 'static {
        let (program, quiet) = (self.program, self.quiet);
        move |n| {
            if quiet {
                return;
            }
            match n {
                coord_client::Notice::Reconnecting { after_event, reason } => eprintln!(
                    "{program}: lost the daemon ({reason}); waiting for it to come back to resume after event {} \
                     (a wait never starts one: `coordd serve` or any other command does)",
                    after_event.map_or("(the starting message)".into(), |e| e.to_string())
                ),
                coord_client::Notice::Resumed { .. } => eprintln!("{program}: reconnected; still waiting"),
            }
        }
    }
}

/// One line on stderr when a command starts the project's daemon.
fn say_started(pid: u32, project: &Path) {
    eprintln!("coordd: started the daemon for {} (pid {pid})", project.display());
}
