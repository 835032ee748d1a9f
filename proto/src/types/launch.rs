//! Entities, params and results of launched sessions (`launch.*`): the worker processes a
//! launch bridge such as `coord-launch` starts for dispatched attempts, recorded so that
//! `orch status`, `orch top` and the dashboard can show them, and so that a session that
//! ends without finishing its thread fails its attempt.

use serde::{Deserialize, Serialize};

string_enum!(
    /// Where a launched session stands.
    SessionState {
        /// Its process is running.
        Running = "running",
        /// Its process ended (see `exit_code`, `signal`).
        Exited = "exited",
        /// The launcher stopped it (cancel, reassign, shutdown, wall-clock limit).
        Stopped = "stopped",
        /// Its launcher found it gone without seeing it end (the host rebooted, or the
        /// process died while no launcher watched it).
        Lost = "lost",
    }
);

string_enum!(
    /// How a launched session takes its work.
    SessionMode {
        /// Its input stays open: answers, mail, shutdown requests (and, with session reuse,
        /// the agent's next task) reach the running process as new turns.
        Live = "live",
        /// Started with its prompt and runs to its end; what is committed for its worker
        /// reaches it only at a hook or a wait.
        OneShot = "one_shot",
    }
);

impl Default for SessionMode {
    /// What a launcher that does not say runs (every launcher before live sessions).
    fn default() -> Self {
        SessionMode::OneShot
    }
}

/// One worker session a launcher started for an attempt.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct LaunchSession {
    /// The launched session (`ses_…`).
    pub session_id: String,
    /// The run (`run_…`).
    pub run_id: String,
    /// The task id, unique within its run.
    pub task_id: String,
    /// The attempt's number and thread.
    pub attempt: u32,
    /// The thread (`thr_…`).
    pub thread_id: String,
    /// The agent the attempt is assigned to.
    pub agent: String,
    /// How it was started: `claude`, `codex`, `command`, or another launcher's name.
    pub client: String,
    /// The session's process id (and process group leader).
    pub pid: i64,
    /// The host it runs on.
    pub host: String,
    /// Who launched it (a launcher's own name, e.g. `coord-launch:R1`).
    pub launcher: String,
    /// The directory it runs in.
    pub cwd: String,
    /// The file its stdout and stderr go to.
    pub log_path: String,
    /// The tmux window it runs in, when it runs in one.
    #[serde(default)]
    pub tmux_window: Option<String>,
    /// `live` or `one_shot` (what its launcher said; `one_shot` when it said nothing).
    /// Sessions of one reused process (`coord-launch --reuse-sessions`) share its `pid`
    /// and `log_path`, one session per attempt.
    #[serde(default)]
    pub mode: SessionMode,
    /// State.
    pub state: SessionState,
    /// When it started.
    pub started_at: String,
    /// When it ended, or null while it runs.
    #[serde(default)]
    pub ended_at: Option<String>,
    /// Exit code, when the process exited.
    #[serde(default)]
    pub exit_code: Option<i32>,
    /// Signal that ended it, when one did.
    #[serde(default)]
    pub signal: Option<i32>,
    /// Why it ended, in a line (e.g. "cancelled", "exited 3 without done or fail").
    #[serde(default)]
    pub reason: Option<String>,
    /// The last lines of its log: while it runs, the newest its launcher's output filter
    /// reported (`launch.sessionTail`, at most [`MAX_TAIL_LINES`] lines, null until the
    /// first); once it ended, the lines at its end.
    #[serde(default)]
    pub log_tail: Option<String>,
}

/// Params of `launch.sessionStart`: record a session that was just started.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SessionStartParams {
    /// The run of the attempt.
    pub run_id: String,
    /// The task of the attempt.
    pub task_id: String,
    /// The attempt's thread; it must be the task's attempt.
    pub thread_id: String,
    /// The agent CLI: `claude` or `codex`.
    pub client: String,
    /// The session's process id (the agent CLI the launcher started); positive.
    #[schemars(range(min = 1))]
    pub pid: i64,
    /// Name of the launcher that started it (for example `coord-launch:R1`).
    pub launcher: String,
    /// Working directory of the session.
    pub cwd: String,
    /// Where the session's output is logged.
    pub log_path: String,
    /// The tmux window it runs in, if any.
    #[serde(default)]
    pub tmux_window: Option<String>,
    /// Defaults to the daemon's host.
    #[serde(default)]
    pub host: Option<String>,
    /// The session's id, chosen by the launcher (`ses_` and 26 lowercase base32hex
    /// characters) so that it can be put in the session's environment before the process
    /// starts: `coord-launch` sets `COORD_SESSION` to it and finds the session's processes
    /// by it. Default: a new id. A call retried with the same id, thread and pid returns
    /// the session it recorded; another session's id is refused (`invalid_input`).
    #[serde(default)]
    pub session_id: Option<String>,
    /// `live` or `one_shot` (default: `one_shot`, what launchers that predate live
    /// sessions run).
    #[serde(default)]
    pub mode: Option<SessionMode>,
}

/// Params of `launch.sessionExit`: record how a session ended.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SessionExitParams {
    /// The launched session (`ses_…`).
    pub session_id: String,
    /// `exited`, `stopped` or `lost`.
    pub state: Option<SessionState>,
    /// Exit code, when the process exited.
    #[serde(default)]
    pub exit_code: Option<i32>,
    /// Signal that ended it, when one did.
    #[serde(default)]
    pub signal: Option<i32>,
    /// Why, in words.
    #[serde(default)]
    pub reason: Option<String>,
    /// Last lines of its log.
    #[serde(default)]
    pub log_tail: Option<String>,
    /// Fail the attempt's thread if it is still open (the session ended without `done` or
    /// `fail`), with the reason and the log's tail; the run's retry rules then apply.
    #[serde(default)]
    pub fail_attempt: bool,
    /// The launcher stopped the session because its worker did not answer this shutdown
    /// request (its `request_id`) in time. The request must be an open `shutdown_request`
    /// to the session's agent, for the session's task or for no task. The daemon then ends
    /// it as an approved one would: the worker's thread for the task is blocked ("worker
    /// stopped") and its lease released, the request's thread is closed (`cancelled`,
    /// "not answered"), and the requester gets an `idle_notification` (reason `shutdown`)
    /// saying the request went unanswered. Only the run's creator, the lead or an admin
    /// may give it while credentials are required. Leave out `fail_attempt`.
    #[serde(default)]
    pub shutdown_request_id: Option<String>,
}

/// The most lines one `launch.sessionTail` carries.
pub const MAX_TAIL_LINES: usize = 10;

/// The most characters of one line of a `launch.sessionTail`.
pub const MAX_TAIL_LINE_CHARS: usize = 500;

/// Params of `launch.sessionTail`: the last lines of a running session's log, as its
/// launcher's output filter wrote them.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SessionTailParams {
    /// The launched session (`ses_…`).
    pub session_id: String,
    /// Its log's last lines, oldest first: at most [`MAX_TAIL_LINES`], each at most
    /// [`MAX_TAIL_LINE_CHARS`] characters, with no line break or NUL in a line.
    pub lines: Vec<String>,
}

/// Result of `launch.sessionTail`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SessionTailResult {
    /// Whether the tail was recorded: `false` when the session had already ended (its
    /// tail is then the one its end recorded) or the tail was the one it has.
    pub recorded: bool,
    /// The `launch.tail` event that recorded it (0: none).
    pub event_id: i64,
}

/// Params of `launch.sessionList`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SessionListParams {
    /// Only this run.
    #[serde(default)]
    pub run_id: Option<String>,
    /// Only this task.
    #[serde(default)]
    pub task_id: Option<String>,
    /// Only sessions of this launcher.
    #[serde(default)]
    pub launcher: Option<String>,
    /// Only sessions still running.
    #[serde(default)]
    pub running_only: bool,
    /// Only sessions after this one in the list's order (a `next_after` of an earlier page).
    #[serde(default)]
    pub after: Option<String>,
}

/// Result of `launch.sessionExit`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SessionExitResult {
    /// The session.
    pub session: LaunchSession,
    /// Whether the call failed the attempt's thread.
    pub failed_attempt: bool,
    /// The event that recorded the change; usable as an `after_event` cursor.
    pub event_id: i64,
}

/// Result of `launch.sessionList`: oldest first.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SessionsResult {
    /// The sessions.
    pub sessions: Vec<LaunchSession>,
    /// The list stopped early to keep the reply under [`crate::MAX_REPLY_BYTES`]
    /// (protocol §1.7): continue with `after` = `next_after`.
    #[serde(default)]
    pub truncated: bool,
    /// Where to continue when `truncated`: the `session_id` of the last session returned.
    #[serde(default)]
    pub next_after: Option<String>,
}

impl LaunchSession {
    /// How an ended session ended, in words: `exit 0`, `signal 9`, `stopped (exit 143):
    /// the attempt was cancelled`, `lost: <why>`, `ended, no exit status: <why>` (what
    /// `orch status` and `coord-launch` print); `running` while it runs.
    pub fn how_it_ended(&self) -> String {
        let reason = self.reason.as_deref().map(|r| r.trim_start_matches("stopped: ")).filter(|r| !r.is_empty());
        let why = reason.map(|r| format!(": {r}")).unwrap_or_default();
        let how = match (self.exit_code, self.signal) {
            (Some(c), _) => format!("exit {c}"),
            (None, Some(sig)) => format!("signal {sig}"),
            (None, None) => String::new(),
        };
        match (self.state, how.is_empty()) {
            (SessionState::Running, _) => "running".to_string(),
            (SessionState::Lost, _) => format!("lost{why}"),
            (SessionState::Stopped, false) => format!("stopped ({how}){why}"),
            (SessionState::Stopped, true) => format!("stopped, no exit status{why}"),
            (SessionState::Exited, false) => format!("{how}{why}"),
            (SessionState::Exited, true) => match reason {
                Some(r) => format!("ended, no exit status: {r}"),
                None => "ended, no exit status recorded by its launcher".to_string(),
            },
        }
    }
}
