//! Process exit statuses of the coordd binaries (`coordd`, `inbox`, `orch`), declared once.
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
}
