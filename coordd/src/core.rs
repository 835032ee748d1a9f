//! [`Core`]: what every request handler and background duty works with. The store behind
//! the seam, the clock every operation reads `now` from, the event bus, and where the
//! project's database lives (for the files written into worktrees).

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use crate::bus::Bus;
use crate::domain::agents;
use crate::domain::credentials::{self, Acting};
use crate::error::Result;
use crate::net::caller;
use crate::store::{self, Store, Tx};
use crate::time::{Clock, Ts};

pub struct Core {
    pub store: Arc<dyn Store>,
    pub clock: Arc<dyn Clock>,
    pub bus: Bus,
    /// The database file the hooks and MCP registrations point `inbox` at.
    pub db_path: PathBuf,
    touches: Touches,
}

impl Core {
    pub fn new(store: Arc<dyn Store>, clock: Arc<dyn Clock>, bus: Bus, db_path: PathBuf) -> Core {
        Core { store, clock, bus, db_path, touches: Touches::default() }
    }

    /// Run `f` in a write transaction at the clock's `now` (read when the job runs);
    /// returns after the commit. `f` may run more than once: a writer re-runs a batch
    /// whose shared transaction it had to roll back (see `store::backend::Job`). What the
    /// call still needs of its connection (`caller::need`, set at its entry from the
    /// authority table) is checked first, in the same transaction, so a settings change
    /// cannot slip between the check and the write.
    pub async fn write<T, F>(&self, mut f: F) -> Result<T>
    where
        T: Send + 'static,
        F: FnMut(&mut dyn Tx, Ts) -> Result<T> + Send + 'static,
    {
        let clock = self.clock.clone();
        let check = Self::call_need();
        store::backend::write(&*self.store, move |tx| {
            Self::admit(tx, &check)?;
            f(tx, clock.now())
        })
        .await
    }

    /// A write whose acting agent is known only inside the transaction (the run's creator,
    /// say): `f` gets an [`Acting`] and calls [`Acting::check`] with that agent before it
    /// writes as it (and the object rules ask it whose authority the call holds).
    pub async fn write_acting<T, F>(&self, mut f: F) -> Result<T>
    where
        T: Send + 'static,
        F: FnMut(&mut dyn Tx, Ts, &Acting) -> Result<T> + Send + 'static,
    {
        let acting = caller::acting();
        let clock = self.clock.clone();
        let check = Self::call_need();
        store::backend::write(&*self.store, move |tx| {
            Self::admit(tx, &check)?;
            f(tx, clock.now(), &acting)
        })
        .await
    }

    /// The current call's connection and what the call still needs of it, if anything.
    fn call_need() -> Option<(Vec<String>, credentials::Need)> {
        caller::current().zip(caller::need())
    }

    fn admit(tx: &mut dyn Tx, check: &Option<(Vec<String>, credentials::Need)>) -> Result<()> {
        match check {
            Some((authenticated, need)) => credentials::admit(&*tx, need, authenticated),
            None => Ok(()),
        }
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

    /// A write made by `agent`: its `last_seen_at` advances. The touch is queued before
    /// the write (so it commits no later), survives a write that fails, and is shared: one
    /// queued touch job advances every agent that made a call meanwhile.
    pub async fn write_as<T, F>(&self, agent: &str, f: F) -> Result<T>
    where
        T: Send + 'static,
        F: FnMut(&mut dyn Tx, Ts) -> Result<T> + Send + 'static,
    {
        // The touch is queued first, so it commits no later than the write itself.
        self.touch(agent).await;
        self.write(f).await
    }

    /// A read made by `agent`: its `last_seen_at` advances (a small write, queued alongside,
    /// and committed by the time the read answers, so a later call sees it, on this daemon
    /// or another one sharing the store).
    pub async fn read_as<T, F>(&self, agent: &str, f: F) -> Result<T>
    where
        T: Send + 'static,
        F: FnOnce(&dyn Tx, Ts) -> Result<T> + Send + 'static,
    {
        let touched = self.touch(agent).await;
        let (out, _) = tokio::join!(self.read(f), self.touches.committed(touched));
        out
    }

    /// Queue `agent`'s touch: join the touch job already queued, or queue one. Returns the
    /// number of the job that will touch it.
    async fn touch(&self, agent: &str) -> Option<u64> {
        let (job, number) = {
            let Ok(mut t) = self.touches.0.lock() else { return None };
            // A call on a connection not authenticated as `agent` proves nothing: while
            // credentials are required, it does not make the agent seen.
            let proven = caller::current().is_none_or(|a| a.iter().any(|x| x == agent));
            *t.agents.entry(agent.to_string()).or_default() |= proven;
            if t.queued {
                return Some(t.number);
            }
            t.queued = true;
            t.number += 1;
            let number = t.number;
            let (touches, clock) = (self.touches.0.clone(), self.clock.clone());
            let mut taken: Option<HashMap<String, bool>> = None;
            let job = move |tx: &mut dyn Tx| {
                // Taken on the first run and kept, should the job run again.
                let agents = taken.get_or_insert_with(|| match touches.lock() {
                    Ok(mut t) => {
                        t.queued = false;
                        std::mem::take(&mut t.agents)
                    }
                    Err(_) => HashMap::new(),
                });
                let now = clock.now();
                let required = credentials::required(tx).unwrap_or(true);
                let seen: Vec<&str> =
                    agents.iter().filter(|(_, proven)| **proven || !required).map(|(a, _)| a.as_str()).collect();
                if let Err(e) = agents::touch(tx, &seen, now) {
                    tracing::warn!(agents = seen.len(), error = %e, "could not record last_seen_at");
                }
                Ok(())
            };
            (job, number)
        };
        // Bookkeeping: a failed touch never fails the call itself. The job is only queued
        // here; the caller's own write is queued after it, so it commits no earlier.
        let store = self.store.clone();
        let done = store::backend::submit(&*store, job);
        let finished = self.touches.1.clone();
        match done.await {
            Ok(reply) => {
                tokio::spawn(async move {
                    if let Ok(Err(e)) = reply.await {
                        tracing::warn!(error = %e, "could not record last_seen_at");
                    }
                    finished.send_modify(|n| *n = (*n).max(number));
                });
            }
            Err(e) => {
                // Nothing will take the set: let the next call queue a job of its own.
                if let Ok(mut t) = self.touches.0.lock() {
                    t.queued = false;
                }
                tracing::warn!(error = %e, "could not queue the last_seen_at update");
                finished.send_modify(|n| *n = (*n).max(number));
            }
        }
        Some(number)
    }
}

/// The agents waiting for `last_seen_at`, whether a job that will touch them is queued,
/// and the number of the last touch job finished (committed or failed).
struct Touches(Arc<Mutex<TouchSet>>, tokio::sync::watch::Sender<u64>);

impl Default for Touches {
    fn default() -> Self {
        Touches(Arc::default(), tokio::sync::watch::Sender::new(0))
    }
}

impl Touches {
    /// Wait until touch job `number` has finished (at once for `None`).
    async fn committed(&self, number: Option<u64>) {
        let Some(number) = number else { return };
        let mut rx = self.1.subscribe();
        let _ = rx.wait_for(|n| *n >= number).await;
    }
}

#[derive(Default)]
struct TouchSet {
    /// Each agent, and whether a call made as it came from a connection authenticated as
    /// it (or from the daemon itself).
    agents: HashMap<String, bool>,
    queued: bool,
    /// The number of the last touch job queued.
    number: u64,
}
