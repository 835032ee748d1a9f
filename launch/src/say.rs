//! What the bridge says: one line per session start, end (with its reason) and merge, and
//! the run's end, on stdout (unless `--quiet`); warnings on stderr. Every line also goes,
//! with its time, to the run's bridge log `.agents/launch/<run>/bridge.log`, which the
//! `bridge` window of `--tmux` follows.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

/// Where the bridge's lines go.
pub struct Say {
    quiet: bool,
    log: Option<File>,
}

/// The run's bridge log.
pub fn log_path(launch_dir: &Path) -> PathBuf {
    launch_dir.join("bridge.log")
}

impl Say {
    /// Lines to stdout unless `quiet`, and to `log` (created if need be; a log that cannot
    /// be opened is said once and done without).
    pub fn new(quiet: bool, log: &Path) -> Say {
        let file = log
            .parent()
            .map_or(Ok(()), std::fs::create_dir_all)
            .and_then(|_| OpenOptions::new().create(true).append(true).open(log));
        let log = match file {
            Ok(f) => Some(f),
            Err(e) => {
                eprintln!("coord-launch: cannot write {}: {e}", log.display());
                None
            }
        };
        Say { quiet, log }
    }

    /// A line about the run's sessions.
    pub fn line(&mut self, text: &str) {
        if !self.quiet {
            println!("coord-launch: {text}");
        }
        self.log_line(text);
    }

    /// A warning: on stderr even with `--quiet`.
    pub fn warn(&mut self, text: &str) {
        eprintln!("coord-launch: {text}");
        self.log_line(text);
    }

    fn log_line(&mut self, text: &str) {
        if let Some(f) = &mut self.log {
            let _ = writeln!(f, "{} {text}", coord_client::ids::now_rfc3339());
        }
    }
}
