//! The checkpointer: a thread with a connection of its own that copies the WAL into the
//! database file while the writer goes on committing (see the writer's module doc for why
//! the writer still copies the last few frames itself).
//!
//! On request it runs `PRAGMA wal_checkpoint(PASSIVE)` in rounds: each round copies what
//! was committed up to its start and syncs, so each is smaller than the one before while
//! the writer is slower than the disk. Once a round leaves at most [`CAUGHT_UP`] frames,
//! it reports that it caught up and waits for the next request.

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};

use rusqlite::Connection;

/// Frames left after a round that count as caught up (about 256 KiB of pages).
const CAUGHT_UP: i64 = 64;
/// Most rounds per request: a writer that outruns the disk gets its checkpoint anyway.
const MAX_ROUNDS: usize = 8;

#[derive(Default)]
struct State {
    requested: bool,
    stopping: bool,
}

struct Shared {
    state: Mutex<State>,
    wake: Condvar,
    /// A request is being served (set by `request`, cleared once caught up).
    busy: AtomicBool,
    /// The last request was served; the writer should copy the remaining frames.
    caught_up: AtomicBool,
}

/// The writer's handle to the checkpointer thread.
pub struct Checkpointer {
    shared: Arc<Shared>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Checkpointer {
    /// Start the checkpointer on the database at `path`.
    pub fn spawn(path: &Path) -> rusqlite::Result<Checkpointer> {
        let conn = Connection::open(path)?;
        conn.busy_timeout(std::time::Duration::from_secs(5))?;
        let shared = Arc::new(Shared {
            state: Mutex::default(),
            wake: Condvar::new(),
            busy: AtomicBool::new(false),
            caught_up: AtomicBool::new(false),
        });
        let s = shared.clone();
        let thread = std::thread::Builder::new()
            .name("coordd-checkpoint".into())
            .spawn(move || run(conn, s))
            .map_err(|e| rusqlite::Error::ToSqlConversionFailure(Box::new(e)))?;
        Ok(Checkpointer { shared, thread: Some(thread) })
    }

    /// Ask for a checkpoint; false when one is still being served.
    pub fn request(&self) -> bool {
        if self.shared.busy.swap(true, Ordering::AcqRel) {
            return false;
        }
        if let Ok(mut st) = self.shared.state.lock() {
            st.requested = true;
        }
        self.shared.wake.notify_one();
        true
    }

    /// Did the last request catch up (once: the flag is cleared by reading it)?
    pub fn caught_up(&self) -> bool {
        self.shared.caught_up.swap(false, Ordering::AcqRel)
    }

    /// Stop the thread and wait for it.
    pub fn stop(mut self) {
        if let Ok(mut st) = self.shared.state.lock() {
            st.stopping = true;
        }
        self.shared.wake.notify_one();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn run(conn: Connection, shared: Arc<Shared>) {
    loop {
        {
            let Ok(mut st) = shared.state.lock() else { return };
            while !st.requested && !st.stopping {
                st = match shared.wake.wait(st) {
                    Ok(st) => st,
                    Err(_) => return,
                };
            }
            if st.stopping {
                return;
            }
            st.requested = false;
        }
        for _ in 0..MAX_ROUNDS {
            match conn
                .query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |r| Ok((r.get::<_, i64>(1)?, r.get::<_, i64>(2)?)))
            {
                Ok((log, done)) if log - done > CAUGHT_UP => continue,
                Ok(_) => break,
                Err(e) => {
                    tracing::warn!(error = %e, "background WAL checkpoint failed");
                    break;
                }
            }
        }
        shared.caught_up.store(true, Ordering::Release);
        shared.busy.store(false, Ordering::Release);
    }
}
