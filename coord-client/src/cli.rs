//! What the `inbox` and `orch` command-line tools share: the JSON envelope, and the one
//! mapping of every error to the documented exit codes (0 ok, 10 nothing matched,
//! 20 conflict, 30 invalid, 40 not found, 50 storage/internal/unavailable).

use std::process::ExitCode;

use serde_json::{Value, json};

use crate::ClientError;

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

/// Exit code: nothing matched (no work, a wait timed out).
pub const EXIT_NONE: u8 = 10;

#[derive(Debug)]
pub enum CliError {
    /// Bad flags or values caught before calling the daemon.
    Invalid(String),
    /// The daemon, the connection or the call failed.
    Client(ClientError),
    /// A local failure with one of the protocol's codes (e.g. `io_write_failed`).
    App(coord_proto::ErrorCode, String),
    Internal(String),
}

impl From<ClientError> for CliError {
    fn from(e: ClientError) -> Self {
        CliError::Client(e)
    }
}

impl CliError {
    pub fn code(&self) -> &'static str {
        match self {
            CliError::Invalid(_) => "invalid_input",
            CliError::Client(e) => e.code(),
            CliError::App(c, _) => c.as_str(),
            CliError::Internal(_) => "internal",
        }
    }

    /// The documented exit code: 20 conflict, 30 invalid, 40 not found, 50 everything else.
    pub fn exit_code(&self) -> u8 {
        match self {
            CliError::Invalid(_) => 30,
            CliError::Client(e) => e.exit_code() as u8,
            CliError::App(c, _) => c.exit_code() as u8,
            CliError::Internal(_) => 50,
        }
    }

    pub fn message(&self) -> String {
        match self {
            CliError::Invalid(m) | CliError::Internal(m) | CliError::App(_, m) => m.clone(),
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
pub fn fail(json_mode: bool, program: &str, command: &str, e: &CliError) -> ExitCode {
    if json_mode {
        let mut error = json!({"code": e.code(), "message": e.message()});
        if let Some(d) = e.details() {
            error["details"] = d.clone();
        }
        println!("{}", json!({"ok": false, "command": command, "error": error}));
    } else {
        eprintln!("{program} {command}: {} ({})", e.message(), e.code());
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

/// Read `--body-file` (`-` for stdin), or take `--body`.
pub fn body(body: Option<String>, file: Option<&std::path::Path>) -> Result<Option<String>, CliError> {
    match file {
        Some(path) if path.as_os_str() == "-" => {
            let mut s = String::new();
            std::io::Read::read_to_string(&mut std::io::stdin(), &mut s)
                .map_err(|e| CliError::Invalid(format!("cannot read the body from stdin: {e}")))?;
            Ok(Some(s))
        }
        Some(path) => std::fs::read_to_string(path).map(Some).map_err(|e| {
            CliError::App(
                coord_proto::ErrorCode::IoReadFailed,
                format!("cannot read --body-file {}: {e}", path.display()),
            )
        }),
        None => Ok(body),
    }
}
