//! The follower's two connections of its own, on a current-thread runtime of the follower
//! thread: the **listening** connection (`LISTEN` on the project's channel), and the
//! **duties** connection, which takes the project's duties lock (a session advisory lock)
//! and holds it for as long as it lives.
//!
//! The follower sleeps in the kernel until a notification arrives, a connection ends, or
//! the store stops: no timer wakes the daemon holding the duties lock. A daemon without it
//! tries for it once every [`RETRY`] (`pg_try_advisory_lock`), so when the holder dies
//! (its connection closes and the server releases the lock) another takes it within a
//! second. It does not wait for it in `pg_advisory_lock`: measured, a server process
//! waiting for a lock slowed every other daemon's writes and wakes by half or more
//! (`docs/performance.md`). While the server cannot be reached, both connections try again
//! every [`RETRY`].

use std::time::Duration;

use tokio::sync::{mpsc, watch};
use tokio_postgres::{AsyncMessage, Config, NoTls};

use crate::error::{Error, Result};

/// Pause between attempts to reach the server while it cannot be reached.
pub const RETRY: Duration = Duration::from_secs(1);

/// What ended a wait.
pub enum Woke {
    /// The store is stopping.
    Stop,
    /// Notifications arrived: their payloads.
    Notified(Vec<String>),
    /// The listening connection ended (why).
    Lost(String),
    /// Whether this daemon holds the duties lock changed.
    Duties,
    /// [`RETRY`] passed while something was down.
    Retry,
}

/// The follower's runtime and its connections.
pub struct Listening {
    rt: tokio::runtime::Runtime,
    cfg: Config,
    channel: String,
    stop: watch::Receiver<bool>,
    /// While listening: the client (dropping it closes the connection) and the payloads its
    /// connection receives (an `Err` when it ends).
    listener: Option<(tokio_postgres::Client, mpsc::UnboundedReceiver<std::result::Result<String, String>>)>,
    leader: watch::Receiver<bool>,
}

impl Listening {
    /// Start the runtime and the duties connection (which connects on its own).
    pub fn start(cfg: Config, channel: String, duty_key: i64, stop: watch::Receiver<bool>) -> Result<Listening> {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| Error::Internal(format!("cannot start the follower's runtime: {e}")))?;
        let (leader_tx, leader) = watch::channel(false);
        rt.spawn(duties(cfg.clone(), duty_key, leader_tx));
        Ok(Listening { rt, cfg, channel, stop, listener: None, leader })
    }

    /// Whether the listening connection is up.
    pub fn listening(&self) -> bool {
        self.listener.is_some()
    }

    /// Whether this daemon holds the duties lock (seen: the next wait returns only on a
    /// change after this).
    pub fn leader(&mut self) -> bool {
        *self.leader.borrow_and_update()
    }

    /// Connect the listening connection and `LISTEN`.
    pub fn listen(&mut self) -> Result<()> {
        let (cfg, channel) = (self.cfg.clone(), self.channel.clone());
        let up = self.rt.block_on(async move {
            let (client, mut conn) = cfg.connect(NoTls).await?;
            let (tx, rx) = mpsc::unbounded_channel();
            tokio::spawn(async move {
                loop {
                    let ended = match std::future::poll_fn(|cx| conn.poll_message(cx)).await {
                        Some(Ok(AsyncMessage::Notification(n))) => {
                            if tx.send(Ok(n.payload().to_string())).is_err() {
                                return;
                            }
                            continue;
                        }
                        Some(Ok(_)) => continue,
                        Some(Err(e)) => super::conn::describe(&e),
                        None => "the server closed the connection".into(),
                    };
                    let _ = tx.send(Err(ended));
                    return;
                }
            });
            client.batch_execute(&format!("LISTEN \"{channel}\"")).await?;
            Ok::<_, tokio_postgres::Error>((client, rx))
        });
        let up = up.map_err(|e| Error::Storage(format!("cannot listen for events: {}", super::conn::describe(&e))))?;
        self.listener = Some(up);
        Ok(())
    }

    /// Wait for the next thing to happen; with `retry`, at most [`RETRY`] (something is
    /// down and must be tried again).
    pub fn wait(&mut self, retry: bool) -> Woke {
        let Listening { rt, stop, listener, leader, .. } = self;
        let woke = rt.block_on(async {
            let notes = async {
                match listener.as_mut() {
                    Some((_, rx)) => rx.recv().await,
                    None => std::future::pending().await,
                }
            };
            let later = async { if retry { tokio::time::sleep(RETRY).await } else { std::future::pending().await } };
            tokio::select! {
                _ = stop.wait_for(|s| *s) => Woke::Stop,
                _ = leader.changed() => Woke::Duties,
                n = notes => match n {
                    Some(Ok(first)) => Woke::Notified(vec![first]),
                    Some(Err(e)) => Woke::Lost(e),
                    None => Woke::Lost("the connection ended".into()),
                },
                _ = later => Woke::Retry,
            }
        });
        match woke {
            Woke::Notified(mut all) => {
                // What else has arrived, without waiting again.
                if let Some((_, rx)) = self.listener.as_mut() {
                    while let Ok(n) = rx.try_recv() {
                        match n {
                            Ok(p) => all.push(p),
                            Err(e) => {
                                self.listener = None;
                                tracing::warn!(error = %e, "event listener lost its connection");
                                break;
                            }
                        }
                    }
                }
                Woke::Notified(all)
            }
            Woke::Lost(e) => {
                self.listener = None;
                Woke::Lost(e)
            }
            other => other,
        }
    }

    /// Stop: close both connections (which releases the duties lock).
    pub fn close(self) {
        drop(self.listener);
        self.rt.shutdown_background();
    }
}

/// The duties connection: try for the lock every [`RETRY`] until it is granted, then hold
/// it while the connection lives, and start again when it ends. (Not a blocking
/// `pg_advisory_lock`: a server process waiting for a lock slowed every other daemon's
/// writes and wakes, see `docs/performance.md`.)
async fn duties(cfg: Config, key: i64, leader: watch::Sender<bool>) {
    let mut down = false;
    let lock = format!("SELECT pg_try_advisory_lock({key})");
    loop {
        match cfg.connect(NoTls).await {
            Ok((client, conn)) => {
                down = false;
                let mut conn = std::pin::pin!(conn);
                let ended = loop {
                    let tried = tokio::select! {
                        r = client.simple_query(&lock) => r,
                        r = &mut conn => break r.err(),
                    };
                    let granted = match tried {
                        Ok(rows) => rows
                            .iter()
                            .any(|m| matches!(m, tokio_postgres::SimpleQueryMessage::Row(r) if r.get(0) == Some("t"))),
                        Err(e) => break Some(e),
                    };
                    if granted {
                        tracing::info!("this daemon runs the background duties (it holds the duties lock)");
                        leader.send_replace(true);
                        let ended = (&mut conn).await;
                        leader.send_replace(false);
                        break ended.err();
                    }
                    tokio::select! {
                        _ = tokio::time::sleep(RETRY) => {}
                        r = &mut conn => break r.err(),
                    }
                };
                tracing::warn!(error = ?ended.map(|e| super::conn::describe(&e)), "the duties lock's connection ended; trying for the lock again");
                drop(client);
            }
            Err(e) if !down => {
                down = true;
                tracing::warn!(error = %super::conn::describe(&e), "cannot reach PostgreSQL for the duties lock; trying again every {RETRY:?}");
            }
            Err(_) => {}
        }
        tokio::time::sleep(RETRY).await;
    }
}
