//! Process exit statuses of the coordd binaries, declared once: [`Exit`] for `coordd`,
//! `inbox` and `orch`, [`LaunchExit`] for the launch bridge `coord-launch` (whose status
//! says how the run it followed ended).
//!
//! They are part of the contract: scripts and agents branch on them. Every binary maps its
//! outcome to one of these in exactly one place; no exit status is written as a number
//! anywhere else. [`crate::ErrorCode::exit`] says which one each error code gets.

/// An exit status.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum Exit {
    /// Success.
    Ok = 0,
    /// `coordd`: an unexpected failure (the message says what).
    Failure = 1,
    /// `coordd serve`: another daemon already serves this database. `coordd status`: no
    /// daemon is running.
    DaemonState = 3,
    /// Nothing matched: `fetch` found no work, a wait timed out, a list was empty.
    NoMatch = 10,
    /// A conflict: a lease or reservation held by someone else, a stale token, a forbidden
    /// ack, release or withdrawal, a duplicate agent, a commit refused by the git guard.
    Conflict = 20,
    /// Invalid input, arguments, category or state transition, including usage errors.
    Invalid = 30,
    /// Not found (also an unknown sender or recipient in strict mode, a missing task id).
    NotFound = 40,
    /// Storage, I/O or internal error, or the daemon is unavailable.
    Internal = 50,
}

impl Exit {
    /// Every status, for documentation and exhaustive tests.
    pub const ALL: &'static [Exit] = &[
        Exit::Ok,
        Exit::Failure,
        Exit::DaemonState,
        Exit::NoMatch,
        Exit::Conflict,
        Exit::Invalid,
        Exit::NotFound,
        Exit::Internal,
    ];

    /// The numeric status.
    pub const fn code(self) -> u8 {
        self as u8
    }

    /// The status a process exited with, if it is one of ours.
    pub fn from_code(code: i32) -> Option<Exit> {
        Exit::ALL.iter().copied().find(|e| i32::from(e.code()) == code)
    }
}

impl From<Exit> for std::process::ExitCode {
    fn from(e: Exit) -> Self {
        std::process::ExitCode::from(e.code())
    }
}

/// The exit statuses of `coord-launch`: how the run it followed ended, or why it stopped
/// first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum LaunchExit {
    /// The run is done (with `--until-done`); also `--help` and `--version`.
    Done = 0,
    /// The run ended failed (with `--until-done`).
    RunFailed = 1,
    /// The run was cancelled (with `--until-done`).
    RunCancelled = 2,
    /// The bridge could not go on: the daemon unreachable, a bad `.agents/launch.toml`.
    CannotGoOn = 3,
    /// Stopped by SIGTERM or SIGINT (Ctrl-C) while the run was still active; its running
    /// sessions go on, and the next `coord-launch` re-attaches to them.
    Stopped = 4,
    /// Another `coord-launch` already follows this run on this host (the message names its
    /// pid and host); nothing was started. One bridge per run and host (docs/scaling.md).
    AlreadyRunning = 5,
    /// Bad arguments.
    Invalid = 30,
}

impl LaunchExit {
    /// Every status, for documentation and exhaustive tests.
    pub const ALL: &'static [LaunchExit] = &[
        LaunchExit::Done,
        LaunchExit::RunFailed,
        LaunchExit::RunCancelled,
        LaunchExit::CannotGoOn,
        LaunchExit::Stopped,
        LaunchExit::AlreadyRunning,
        LaunchExit::Invalid,
    ];

    /// The numeric status.
    pub const fn code(self) -> u8 {
        self as u8
    }

    /// What the status means, in a line (`coord-launch --help` lists them).
    pub const fn meaning(self) -> &'static str {
        match self {
            LaunchExit::Done => "the run is done (--until-done)",
            LaunchExit::RunFailed => "the run ended failed (--until-done)",
            LaunchExit::RunCancelled => "the run was cancelled (--until-done)",
            LaunchExit::CannotGoOn => "the bridge could not go on (daemon unreachable, bad .agents/launch.toml)",
            LaunchExit::Stopped => {
                "stopped by SIGTERM or Ctrl-C while the run was still active (its sessions go on; the next \
                 coord-launch re-attaches to them)"
            }
            LaunchExit::AlreadyRunning => {
                "another coord-launch already follows this run on this host (the message names its pid and host)"
            }
            LaunchExit::Invalid => "bad arguments",
        }
    }
}

impl From<LaunchExit> for std::process::ExitCode {
    fn from(e: LaunchExit) -> Self {
        std::process::ExitCode::from(e.code())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_round_trip() {
        for e in Exit::ALL {
            assert_eq!(Exit::from_code(i32::from(e.code())), Some(*e));
        }
        assert_eq!(Exit::from_code(2), None);
    }

    #[test]
    fn launch_statuses_are_distinct() {
        let mut codes: Vec<u8> = LaunchExit::ALL.iter().map(|e| e.code()).collect();
        codes.dedup();
        assert_eq!(codes.len(), LaunchExit::ALL.len());
        assert_eq!(LaunchExit::Invalid.code(), Exit::Invalid.code(), "bad arguments are 30 everywhere");
    }
}
