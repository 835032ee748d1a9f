//! Error codes of the protocol: the JSON-RPC standard ones and coordd's stable application
//! codes. Each application code is declared once, in the [`error_codes!`] table below: its
//! number (the JSON-RPC `code`), its snake_case name (in `error.data.code`, and what the CLIs
//! print) and the [`Exit`] status the CLIs map it to.

use serde::{Deserialize, Serialize};

use crate::Exit;

/// The one table of JSON-RPC and transport codes: `NAME = number, "name";`.
macro_rules! protocol_codes {
    ($( $(#[doc = $doc:literal])+ $var:ident = $num:literal, $name:literal; )+) => {
        $( $(#[doc = $doc])+ pub const $var: i32 = $num; )+

        /// The JSON-RPC and transport codes, `(number, name, meaning)`, for documentation
        /// (the OpenRPC document and `docs/protocol.md` are generated from it).
        pub const PROTOCOL_CODES: &[(i32, &str, &str)] = &[$(($num, $name, concat!($($doc, "\n"),+))),+];
    };
}

protocol_codes! {
    /// JSON-RPC: invalid JSON was received.
    PARSE_ERROR = -32700, "parse_error";
    /// JSON-RPC: the JSON sent is not a valid request object.
    INVALID_REQUEST = -32600, "invalid_request";
    /// JSON-RPC: the method does not exist.
    METHOD_NOT_FOUND = -32601, "method_not_found";
    /// JSON-RPC: invalid method parameters.
    INVALID_PARAMS = -32602, "invalid_params";
    /// JSON-RPC: internal error.
    INTERNAL_ERROR = -32603, "internal_error";
    /// A request line longer than [`crate::MAX_REQUEST_BYTES`] (server error range).
    REQUEST_TOO_LARGE = -32001, "request_too_large";
    /// Too many open subscriptions on one connection.
    TOO_MANY_SUBSCRIPTIONS = -32002, "too_many_subscriptions";
    /// The daemon holds too many bytes of unfinished request lines across its connections;
    /// this line was discarded (retry later). `data.code`: `request_budget_exceeded`.
    REQUEST_BUDGET_EXCEEDED = -32003, "request_budget_exceeded";
    /// An unfinished request line waited too long for its next byte and was discarded.
    /// `data.code`: `partial_line_timeout`.
    PARTIAL_LINE_TIMEOUT = -32004, "partial_line_timeout";
    /// In the last notification of a subscription the daemon ended because its client did not
    /// read its events: resubscribe after `data.details.cursor`. `data.code`:
    /// `subscriber_too_slow`.
    SUBSCRIBER_TOO_SLOW = -32005, "subscriber_too_slow";
    /// A member of a batch that was not run: the replies of the members before it already
    /// hold a reply's worth (`MAX_REPLY_BYTES` less 64 KiB); send it again (alone or in a
    /// later batch). `data.code`: `batch_reply_too_large`.
    BATCH_REPLY_TOO_LARGE = -32006, "batch_reply_too_large";
}

/// The one table of application error codes: `Variant = number, "name", Exit;`.
macro_rules! error_codes {
    ($( $(#[doc = $doc:literal])+ $var:ident = $num:literal, $name:literal, $exit:ident; )+) => {
        /// Stable application error codes. The number travels as the JSON-RPC error
        /// `code`; the snake_case name travels in `error.data.code`.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
        pub enum ErrorCode {
            $( $(#[doc = $doc])+ #[serde(rename = $name)] $var, )+
        }

        impl ErrorCode {
            /// All application codes, for documentation and exhaustive tests.
            pub const ALL: &'static [ErrorCode] = &[$(ErrorCode::$var),+];

            /// The numeric JSON-RPC error code.
            pub const fn rpc_code(self) -> i32 {
                match self { $(ErrorCode::$var => $num),+ }
            }

            /// The application code for a numeric JSON-RPC code, if it is one of ours.
            pub const fn from_rpc_code(code: i32) -> Option<Self> {
                match code { $($num => Some(ErrorCode::$var),)+ _ => None }
            }

            /// The stable snake_case name.
            pub const fn as_str(self) -> &'static str {
                match self { $(ErrorCode::$var => $name),+ }
            }

            /// What the code means: its doc comment, the one source of its meaning (the
            /// OpenRPC document and `docs/protocol.md` are generated from it).
            pub fn meaning(self) -> String {
                let raw: &str = match self { $(ErrorCode::$var => concat!($($doc, "\n"),+)),+ };
                raw.lines().map(str::trim).collect::<Vec<_>>().join(" ").trim().to_string()
            }

            /// The exit status the CLIs use for this error.
            pub const fn exit(self) -> Exit {
                match self { $(ErrorCode::$var => Exit::$exit),+ }
            }
        }
    };
}

error_codes! {
    /// A parameter is missing, blank, malformed or out of range (agent name, summary, limit,
    /// lease_seconds, payload not an object, update status, reply kind, run_id or task_id mismatch,
    /// negative cursor, ...). orch: a malformed run or task id, a run or task that already exists,
    /// a self-dependency or a cycle, dispatch without a worker or a repository, reassign without a
    /// new worker, duplicate reviewers, and every git failure (repository, strict mode, base
    /// revision, worktree).
    InvalidInput = 1001, "invalid_input", Invalid;
    /// The thread is `done`, `failed` or `cancelled` and accepts no further changes. orch: the run
    /// is cancelled; the task's status does not allow the call (dispatch needs `ready`; retry
    /// `failed` or `cancelled` with attempts left; reassign and answer a live attempt; dependency
    /// changes `pending` or `ready`; cancel a non-terminal task); a worktree branch or directory
    /// already exists.
    InvalidTransition = 1002, "invalid_transition", Invalid;
    /// Unknown thread or `after_message`; orch: unknown run, task, dependency or council.
    NotFound = 1003, "not_found", NotFound;
    /// `claim`: another agent holds a live lease. `orch.dispatch`, `orch.retry`, `orch.reassign`:
    /// the task changed while the call was preparing its worktrees (another call raced it); try
    /// again. `details`: `{"holder","expires_at"}` for `claim`.
    LeaseConflict = 1004, "lease_conflict", Conflict;
    /// The caller does not hold the thread's lease (never claimed, released, or held by someone
    /// else). `details`: `{"holder","expires_at"}` when another agent holds a live lease.
    NotLeaseHolder = 1005, "not_lease_holder", Conflict;
    /// The caller's lease has expired. Claim again. `details`: `{"expired_at"}`.
    LeaseExpired = 1006, "lease_expired", Conflict;
    /// The `lease_token` is not the current one: a newer claim (possibly by the same agent)
    /// replaced it.
    StaleLease = 1007, "stale_lease", Conflict;
    /// The database failed (a write that failed because the disk is full, the file or file system
    /// is read-only, or an I/O error is `1150 io_write_failed` instead, for every method).
    Storage = 1050, "storage", Internal;
    /// Internal error, or the daemon is shutting down.
    Internal = 1051, "internal", Internal;
    /// Agents layer: an argument is missing, malformed or out of range: an agent id that breaks the
    /// rule (or is `broadcast`), a blank or long role, a long display name, a malformed agent name
    /// (`agents.show`, `agents.heartbeat`, `reservations.*`), a TTL outside 5..1440, a refused
    /// scope or path, a `mail.list` limit outside 1..500.
    InvalidArgs = 1101, "invalid_args", Invalid;
    /// `inbox.send`: a category other than HANDOFF, BLOCKED, DECISION or INFO.
    InvalidCategory = 1102, "invalid_category", Invalid;
    /// `agents.show` of an unknown id; strict agents: an unregistered agent in `mail.read`,
    /// `mail.ack`, `reservations.reserve`, `reservations.release`, or an unknown one in
    /// `agents.heartbeat`.
    AgentNotFound = 1103, "agent_not_found", NotFound;
    /// `agents.register` of a registered id without `force_update`.
    DuplicateAgentId = 1104, "duplicate_agent_id", Conflict;
    /// Strict agents: `inbox.send` or `inbox.reply` from an unregistered agent.
    UnknownSender = 1105, "unknown_sender", NotFound;
    /// Strict agents: `inbox.send` or `inbox.reply` to an unregistered agent (`broadcast` is
    /// exempt).
    UnknownRecipient = 1106, "unknown_recipient", NotFound;
    /// A task id is required and missing: a categorised `inbox.send`, `reservations.reserve` (named
    /// `missing_bead_id`, exit 40, before protocol documents of §8).
    MissingTaskId = 1107, "missing_task_id", Invalid;
    /// `mail.read`/`mail.ack`: no such message; `mail.read`: not sent to the caller.
    MessageNotFound = 1108, "message_not_found", NotFound;
    /// `mail.ack` of a message not sent to the caller.
    AckForbidden = 1109, "ack_forbidden", Conflict;
    /// The scope overlaps another agent's live reservation. `details`: `{"conflicts":
    /// [Reservation]}`.
    ReservationConflict = 1110, "reservation_conflict", Conflict;
    /// The scope overlaps only stale reservations of other agents; retry with `takeover_stale`.
    /// `details`: `{"stale": [Reservation]}`.
    ReservationStaleFound = 1111, "reservation_stale_found", Conflict;
    /// `reservations.release`: no active reservation has this scope.
    ReservationNotFound = 1112, "reservation_not_found", NotFound;
    /// `reservations.release`: the scope is held by another agent.
    ReleaseForbidden = 1113, "release_forbidden", Conflict;
    /// `mail.withdraw` by someone other than the message's sender (§3.53).
    WithdrawForbidden = 1114, "withdraw_forbidden", Conflict;
    /// Credentials are required (§3.3) and this connection is not authenticated as the agent the
    /// write acts for (or as any agent, for a write that names none); or `agents.authenticate` with
    /// a wrong secret (§3.57).
    Unauthenticated = 1120, "unauthenticated", Conflict;
    /// Credentials are required and this connection's agents hold no role that may make this
    /// call: the policy, the settings, the roster, stopping the daemon, the dashboard and hooks
    /// are the lead's and the admins'; or the object is not the acting agent's (a thread
    /// assigned to another, another's thread to cancel, its own question to answer, another
    /// task's mailbox) (§3.58).
    NotPermitted = 1121, "not_permitted", Conflict;
    /// `inbox.init`: credentials cannot be required without a lead that is a registered agent with
    /// a secret (§3.58).
    LeadRequired = 1122, "lead_required", Invalid;
    /// `control.send` of an answer by someone other than the agent the request was addressed to
    /// (or, for a request to the lead, the dashboard's overseer: §3.66) (§3.59).
    ResponseForbidden = 1201, "response_forbidden", Conflict;
    /// `control.send` with a `message_id` already used by a different message (another sender or
    /// type).
    DuplicateMessageId = 1202, "duplicate_message_id", Conflict;
    /// A write could not be saved: the disk is full, the database file or its file system is
    /// read-only, or an I/O error, for any method (nothing of the call was saved; retry once the
    /// cause is fixed, reads keep working); or any database or internal failure in an agents-layer
    /// write (§3.38). The `inbox` CLI also uses it when it cannot write a git hook.
    IoWriteFailed = 1150, "io_write_failed", Internal;
    /// A database or internal failure in an agents-layer read. The `inbox` CLI also uses it when it
    /// cannot run `git` (an unreadable `--body-file` is the caller's mistake: `invalid_args`, 30).
    IoReadFailed = 1151, "io_read_failed", Internal;
    /// The daemon runs read-only (§3.1: it started while the disk was too full to open the database
    /// for writing) and the database still cannot be opened for writing: any write, nothing of it
    /// saved. Free space and retry: the next write reopens the database and is taken. Reads keep
    /// working. `system.hello`'s `read_only` says why.
    ReadOnly = 1323, "read_only", Internal;
    /// `dashboard.start`: the daemon cannot listen on the port asked for (in use, or not allowed)
    /// (§3.64).
    PortUnavailable = 1160, "port_unavailable", Conflict;
    /// `orch.runFinish`: a task's merge is in conflict, or merging the integration branch into the
    /// target branch conflicts; nothing was changed (§3.69).
    MergeConflict = 1203, "merge_conflict", Conflict;
    /// A wait or subscription's cursor is past the latest id: `events.subscribe` with `after_event`
    /// above the latest event (every `wait-reply`, `watch`, `orch wait`, MCP `wait_reply`),
    /// `progress.subscribe` with `after_seq` above the latest progress line. Nothing could ever
    /// wake such a wait; take the cursor from a write's `event_id`, or give none. `details`:
    /// `{"latest"}`: the latest event id (or progress line number).
    CursorAhead = 1301, "cursor_ahead", Invalid;
    /// `launch.sessionExit`: no launched session has that id (§3.70).
    SessionNotFound = 1400, "session_not_found", NotFound;
    /// `launch.sessionExit`: the session's end was already recorded (§3.70).
    SessionEnded = 1401, "session_ended", Conflict;
    /// `launch.sessionStart`: the attempt already has a running session (another launcher
    /// started it first), or its thread has ended (its session already ran); nothing was
    /// recorded: stop what you started and leave the attempt to it. `details`: `{"session_id",
    /// "pid", "host", "launcher"}` of the running one (§3.71).
    SessionRunning = 1402, "session_running", Conflict;
    /// A call from the dashboard's page writes as an agent other than its overseer (without that
    /// agent's secret), sets the policy, starts or stops the dashboard, stops the daemon or
    /// installs hooks; allowed with `coordd serve --dashboard-acts-as-anyone` (§3.66).
    PageActsAsOverseer = 1420, "page_acts_as_overseer", Conflict;
}

impl std::fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The `data` member of an application error object: `{"code": "<name>", ...details}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ErrorData {
    /// The stable snake_case name of the error.
    pub code: ErrorCode,
    /// Optional machine-readable details (for example the current lease holder).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub details: Option<serde_json::Value>,
}

/// An application error: a code, a human-readable message and optional details.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{code}: {message}")]
pub struct AppError {
    /// Stable error name (`snake_case`).
    pub code: ErrorCode,
    /// Human-readable message; the code, not this text, is stable.
    pub message: String,
    /// Structured details of the error, when it has some.
    pub details: Option<serde_json::Value>,
}

impl AppError {
    /// An error with this code and message and no details.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        AppError { code, message: message.into(), details: None }
    }

    /// The same error carrying structured details.
    pub fn with_details(mut self, details: serde_json::Value) -> Self {
        self.details = Some(details);
        self
    }

    /// An `invalid_input` error.
    pub fn invalid(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::InvalidInput, message)
    }

    /// A `not_found` error.
    pub fn not_found(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::NotFound, message)
    }
}

impl From<AppError> for jsonrpsee::types::ErrorObjectOwned {
    fn from(e: AppError) -> Self {
        let data = ErrorData { code: e.code, details: e.details };
        jsonrpsee::types::ErrorObject::owned(e.code.rpc_code(), e.message, Some(data))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_round_trip_and_are_unique() {
        for &c in ErrorCode::ALL {
            assert_eq!(ErrorCode::from_rpc_code(c.rpc_code()), Some(c));
            let json = serde_json::to_string(&c).unwrap();
            assert_eq!(json, format!("\"{}\"", c.as_str()));
            assert_eq!(serde_json::from_str::<ErrorCode>(&json).unwrap(), c);
        }
        let mut codes: Vec<_> = ErrorCode::ALL.iter().map(|c| c.rpc_code()).collect();
        codes.sort();
        codes.dedup();
        assert_eq!(codes.len(), ErrorCode::ALL.len());
    }

    #[test]
    fn exit_statuses_follow_the_documented_classes() {
        assert_eq!(ErrorCode::LeaseConflict.exit(), Exit::Conflict);
        assert_eq!(ErrorCode::InvalidArgs.exit(), Exit::Invalid);
        assert_eq!(ErrorCode::MissingTaskId.exit(), Exit::Invalid);
        assert_eq!(ErrorCode::IoReadFailed.exit(), Exit::Internal);
    }
}
