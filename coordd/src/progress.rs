//! The progress hub: lines from tool subprocesses (`progress.report`), lossy by design.
//! They never touch the store: each gets an in-memory sequence number, the newest
//! [`PROGRESS_HISTORY`] are kept for late subscribers, and every subscriber gets them
//! through a bounded broadcast, so a slow subscriber misses lines (and is told how many)
//! instead of slowing anyone down. Everything is lost when the daemon stops.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use coord_proto::AppError;
use coord_proto::types::*;
use tokio::sync::broadcast;

use crate::domain::check;

/// Lines queued per subscriber before it starts missing them.
const FEED_CAPACITY: usize = 1024;

pub struct ProgressHub {
    feed: broadcast::Sender<Arc<ProgressLine>>,
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    seq: u64,
    history: VecDeque<Arc<ProgressLine>>,
}

impl Default for ProgressHub {
    fn default() -> Self {
        ProgressHub { feed: broadcast::channel(FEED_CAPACITY).0, state: Mutex::default() }
    }
}

/// Does a line pass a filter (its cursor aside)?
pub fn matches(f: &ProgressFilter, l: &ProgressLine) -> bool {
    let eq = |want: &Option<String>, have: &str| want.as_deref().is_none_or(|w| w == have);
    eq(&f.agent, &l.agent) && eq(&f.task_id, &l.task_id) && eq(&f.tool_use_id, &l.tool_use_id)
}

/// Check a filter's names.
pub fn check_filter(f: &ProgressFilter) -> Result<(), AppError> {
    if let Some(a) = &f.agent {
        check::agent("agent", a).map_err(|e| e.to_app())?;
    }
    Ok(())
}

impl ProgressHub {
    /// Accept one line: checked, numbered, kept in the history and pushed to subscribers.
    pub fn report(&self, p: ProgressParams, at: String) -> Result<u64, AppError> {
        check::agent("agent", &p.agent).map_err(|e| e.to_app())?;
        if p.data.len() > MAX_PROGRESS_DATA {
            return Err(AppError::invalid(format!("data is longer than {MAX_PROGRESS_DATA} bytes")));
        }
        if let Some(meta) = &p.meta {
            check::object("meta", meta).map_err(|e| e.to_app())?;
            if meta.to_string().len() > MAX_PROGRESS_DATA {
                return Err(AppError::invalid(format!("meta is longer than {MAX_PROGRESS_DATA} bytes")));
            }
        }
        let Ok(mut state) = self.state.lock() else {
            return Err(AppError::new(coord_proto::ErrorCode::Internal, "progress hub poisoned"));
        };
        state.seq += 1;
        let line = Arc::new(ProgressLine {
            seq: state.seq,
            agent: p.agent,
            task_id: p.task_id.unwrap_or_default(),
            line_type: p.line_type,
            tool_use_id: p.tool_use_id.unwrap_or_default(),
            data: p.data,
            meta: p.meta,
            at,
            dropped: 0,
        });
        if state.history.len() == PROGRESS_HISTORY {
            state.history.pop_front();
        }
        state.history.push_back(line.clone());
        // Sent under the lock, so subscribers see lines in `seq` order. Nobody listening is fine.
        let _ = self.feed.send(line);
        Ok(state.seq)
    }

    /// The kept lines after `after` that pass the filter, and the newest `seq`.
    pub fn recent(&self, f: &ProgressFilter, after: u64) -> (Vec<ProgressLine>, u64) {
        let Ok(state) = self.state.lock() else { return (Vec::new(), 0) };
        let lines = state.history.iter().filter(|l| l.seq > after && matches(f, l)).map(|l| (**l).clone()).collect();
        (lines, state.seq)
    }

    /// Lines reported from now on.
    pub fn subscribe(&self) -> broadcast::Receiver<Arc<ProgressLine>> {
        self.feed.subscribe()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(agent: &str, data: &str) -> ProgressParams {
        ProgressParams {
            agent: agent.into(),
            task_id: None,
            line_type: ProgressType::Progress,
            tool_use_id: None,
            data: data.into(),
            meta: None,
        }
    }

    #[test]
    fn history_is_bounded_and_keeps_the_newest_lines() {
        let hub = ProgressHub::default();
        for i in 0..PROGRESS_HISTORY + 10 {
            hub.report(line("w1", &i.to_string()), String::new()).unwrap();
        }
        let (lines, last) = hub.recent(&ProgressFilter::default(), 0);
        assert_eq!(lines.len(), PROGRESS_HISTORY);
        assert_eq!(lines[0].seq, 11);
        assert_eq!(last, (PROGRESS_HISTORY + 10) as u64);
    }

    #[test]
    fn a_subscriber_that_does_not_read_never_blocks_a_report() {
        let hub = ProgressHub::default();
        let _slow = hub.subscribe();
        for i in 0..FEED_CAPACITY * 3 {
            hub.report(line("w1", &i.to_string()), String::new()).unwrap();
        }
        let only_w2 = ProgressFilter { agent: Some("w2".into()), ..Default::default() };
        assert!(hub.recent(&only_w2, 0).0.is_empty());
    }

    #[test]
    fn oversized_lines_are_refused() {
        let hub = ProgressHub::default();
        assert!(hub.report(line("w1", &"x".repeat(MAX_PROGRESS_DATA + 1)), String::new()).is_err());
        assert!(hub.report(line("bad name", "x"), String::new()).is_err());
    }
}
