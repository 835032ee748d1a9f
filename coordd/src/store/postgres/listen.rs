//! The follower's two connections of its own, driven without a timer by a current-thread
//! runtime of the follower thread: the **listening** connection (`LISTEN` on the project's
//! channel), and the **duties** connection, which waits in `pg_advisory_lock` for the
//! project's duties lock and holds it for as long as it lives.
//!
//! An idle daemon's follower sleeps in the kernel until a notification arrives, the lock is
//! granted, a connection ends, or the store stops: no timer wakes it. When the daemon
//! holding the duties lock dies, its connection closes, the server releases the lock and
//! grants it at once to the next waiting daemon. Only while the server cannot be reached
//! does either connection try again, every [`RETRY`].

use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::{mpsc, watch};
use tokio_postgres::{AsyncMessage, CancelToken, Config, NoTls};

use crate::error::{Error, Result};

/// Pause between attempts to reach the server while it cannot be reached.
pub const RETRY: Duration = Duration::from_secs(1);
/// How long the duties connection's wait may take to be cancelled at stop.
const CANCEL: Duration = Duration::from_secs(2);

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
    /// The duties connection's, while it waits for the lock.
    cancel: Arc<Mutex<Option<CancelToken>>>,
}

impl Listening {
    /// Start the runtime and the duties connection (which connects on its own).
    pub fn start(cfg: Config, channel: String, duty_key: i64, stop: watch::Receiver<bool>) -> Result<Listening> {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| Error::Internal(format!("cannot start the follower's runtime: {e}")))?;
        let (leader_tx, leader) = watch::channel(false);
        let cancel = Arc::new(Mutex::new(None));
        rt.spawn(duties(cfg.clone(), duty_key, leader_tx, cancel.clone()));
        Ok(Listening { rt, cfg, channel, stop, listener: None, leader, cancel })
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

    /// Stop: cancel the duties connection's wait (so that its server process does not
    /// take the lock after this daemon is gone), then close both connections.
    pub fn close(self) {
        let token = self.cancel.lock().ok().and_then(|mut c| c.take());
        if let Some(token) = token {
            let _ = self.rt.block_on(tokio::time::timeout(CANCEL, token.cancel_query(NoTls)));
        }
        drop(self.listener);
        self.rt.shutdown_background();
    }
}

/// The duties connection: wait for the lock, hold it while the connection lives, and
/// start again when it ends.
async fn duties(cfg: Config, key: i64, leader: watch::Sender<bool>, cancel: Arc<Mutex<Option<CancelToken>>>) {
    let mut down = false;
    loop {
        match cfg.connect(NoTls).await {
            Ok((client, conn)) => {
                down = false;
                let mut conn = std::pin::pin!(conn);
                if let Ok(mut c) = cancel.lock() {
                    *c = Some(client.cancel_token());
                }
                let lock = format!("SELECT pg_advisory_lock({key})");
                let granted = tokio::select! {
                    r = client.simple_query(&lock) => r.map_err(|e| super::conn::describe(&e)),
                    r = &mut conn => Err(r.err().map_or("the server closed the connection".into(), |e| super::conn::describe(&e))),
                };
                if let Ok(mut c) = cancel.lock() {
                    *c = None;
                }
                match granted {
                    Ok(_) => {
                        tracing::info!("this daemon runs the background duties (it holds the duties lock)");
                        leader.send_replace(true);
                        let ended = (&mut conn).await;
                        leader.send_replace(false);
                        tracing::warn!(error = ?ended.err().map(|e| super::conn::describe(&e)), "the duties lock's connection ended; waiting for the lock again");
                    }
                    Err(e) => {
                        tracing::warn!(error = %e, "the duties lock's connection ended while waiting; waiting again")
                    }
                }
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
