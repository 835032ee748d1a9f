//! A running session's last log lines, reported live (`launch.sessionTail`) by its output
//! filter (transcript.rs) as lines arrive, so that `orch status`, `orch top` and the
//! dashboard show them while it runs. Bounded: the last [`LINES`] lines, each cut to the
//! protocol's [`MAX_TAIL_LINE_CHARS`], and at most one report per [`INTERVAL`] while lines
//! keep coming. Lines that arrive within an interval of the last report wait: they go with
//! the report due at the interval's end (the filter waits for the next line only that long),
//! or at the end of the output. Nothing wakes an idle session: with nothing pending the
//! filter blocks on its input alone.

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use coord_proto::types::MAX_TAIL_LINE_CHARS;

/// The lines a report carries.
pub(crate) const LINES: usize = 5;

/// The least time between two reports of one session.
pub(crate) const INTERVAL: Duration = Duration::from_secs(1);

/// The tail kept for the next report, and when the last one went.
#[derive(Debug, Default)]
pub(crate) struct Tail {
    lines: VecDeque<String>,
    pending: bool,
    sent_at: Option<Instant>,
}

impl Tail {
    /// A line as the log has it (its time first); control characters become spaces and it
    /// is cut to [`MAX_TAIL_LINE_CHARS`].
    pub(crate) fn push(&mut self, line: &str) {
        let clean: String = line.chars().map(|c| if c.is_control() { ' ' } else { c }).collect();
        let kept = if clean.chars().count() > MAX_TAIL_LINE_CHARS {
            let mut cut: String = clean.chars().take(MAX_TAIL_LINE_CHARS - 1).collect();
            cut.push('…');
            cut
        } else {
            clean
        };
        if self.lines.len() == LINES {
            self.lines.pop_front();
        }
        self.lines.push_back(kept);
        self.pending = true;
    }

    /// How long the filter may wait for its next line before a report is due: `None` when
    /// nothing is pending (wait as long as it takes), zero when one is due now.
    pub(crate) fn due_in(&self, now: Instant) -> Option<Duration> {
        if !self.pending {
            return None;
        }
        Some(self.sent_at.map_or(Duration::ZERO, |at| (at + INTERVAL).saturating_duration_since(now)))
    }

    /// The lines to report now, if any are pending (marked sent at `now`).
    pub(crate) fn take(&mut self, now: Instant) -> Option<Vec<String>> {
        if !self.pending {
            return None;
        }
        self.pending = false;
        self.sent_at = Some(now);
        Some(self.lines.iter().cloned().collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_within_an_interval_wait_for_its_end_and_an_idle_tail_waits_for_nothing() {
        let t0 = Instant::now();
        let mut t = Tail::default();
        assert_eq!(t.due_in(t0), None, "nothing pending: no deadline");
        t.push("a");
        assert_eq!(t.due_in(t0), Some(Duration::ZERO), "the first line goes at once");
        assert_eq!(t.take(t0), Some(vec!["a".to_string()]));
        assert_eq!((t.due_in(t0), t.take(t0)), (None, None), "sent: idle again");
        t.push("b");
        t.push("c");
        let half = t0 + INTERVAL / 2;
        assert_eq!(t.due_in(half), Some(INTERVAL / 2), "coalesced until the interval ends");
        assert_eq!(t.due_in(t0 + INTERVAL * 2), Some(Duration::ZERO));
        assert_eq!(t.take(t0 + INTERVAL), Some(vec!["a".into(), "b".into(), "c".into()]));
    }

    #[test]
    fn the_tail_keeps_the_last_lines_each_cut_short_on_one_line() {
        let mut t = Tail::default();
        for i in 0..LINES + 2 {
            t.push(&format!("line {i}"));
        }
        t.push(&format!("x\ry\0{}", "z".repeat(MAX_TAIL_LINE_CHARS * 2)));
        let lines = t.take(Instant::now()).unwrap();
        assert_eq!(lines.len(), LINES);
        assert_eq!(lines[0], "line 3");
        let last = lines.last().unwrap();
        assert!(last.starts_with("x y z") && last.ends_with('…'), "{last}");
        assert_eq!(last.chars().count(), MAX_TAIL_LINE_CHARS);
    }
}
