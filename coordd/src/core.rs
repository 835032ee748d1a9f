//! [`Core`]: what every request handler and background duty works with. The store behind
//! the seam, the clock every operation reads `now` from, the event bus, and where the
//! project's database lives (for the files written into worktrees).

use std::path::PathBuf;
use std::sync::Arc;

use crate::bus::Bus;
use crate::domain::agents;
use crate::error::Result;
use crate::store::{self, Store, Tx};
use crate::time::{Clock, Ts};

pub struct Core {
    pub store: Arc<dyn Store>,
    pub clock: Arc<dyn Clock>,
    pub bus: Bus,
    /// The database file the hooks and MCP registrations point `inbox` at.
    pub db_path: PathBuf,
}

impl Core {
    /// Run `f` in a write transaction at the clock's `now` (read when the job runs);
    /// returns after the commit.
    pub async fn write<T, F>(&self, f: F) -> Result<T>
    where
        T: Send + 'static,
        F: FnOnce(&mut dyn Tx, Ts) -> Result<T> + Send + 'static,
    {
        let clock = self.clock.clone();
        store::backend::write(&*self.store, move |tx| f(tx, clock.now())).await
    }

    /// Run `f` on a consistent read snapshot at the clock's `now`.
    pub async fn read<T, F>(&self, f: F) -> Result<T>
    where
        T: Send + 'static,
        F: FnOnce(&dyn Tx, Ts) -> Result<T> + Send + 'static,
    {
        let now = self.clock.now();
        store::backend::read(&*self.store, move |tx| f(tx, now)).await
    }

    /// A write made by `agent`: its `last_seen_at` advances. The touch is a job of its own,
    /// queued first, so it usually shares the group commit and survives a call that fails.
    pub async fn write_as<T, F>(&self, agent: &str, f: F) -> Result<T>
    where
        T: Send + 'static,
        F: FnOnce(&mut dyn Tx, Ts) -> Result<T> + Send + 'static,
    {
        let (touched, result) = tokio::join!(self.touch(agent), self.write(f));
        log_touch(touched);
        result
    }

    /// A read made by `agent`: its `last_seen_at` advances (a small write, run alongside).
    pub async fn read_as<T, F>(&self, agent: &str, f: F) -> Result<T>
    where
        T: Send + 'static,
        F: FnOnce(&dyn Tx, Ts) -> Result<T> + Send + 'static,
    {
        let (touched, read) = tokio::join!(self.touch(agent), self.read(f));
        log_touch(touched);
        read
    }

    async fn touch(&self, agent: &str) -> Result<()> {
        let agent = agent.to_string();
        self.write(move |tx, now| agents::touch(tx, &agent, now)).await
    }
}

/// `last_seen_at` is bookkeeping: failing to advance it never fails the call itself.
fn log_touch(r: Result<()>) {
    if let Err(e) = r {
        tracing::warn!(error = %e, "could not record last_seen_at");
    }
}
