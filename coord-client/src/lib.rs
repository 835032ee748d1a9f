//! coord-client: the typed async Rust client of coordd, used by the `inbox` and `orch` CLIs
//! and by any Rust program that wants to coordinate through a project's daemon.
//!
//! ```no_run
//! # async fn demo() -> Result<(), coord_client::ClientError> {
//! use coord_client::{Client, ConnectOptions};
//! use coord_proto::api::InboxApiClient;
//! use coord_proto::types::FetchParams;
//!
//! let client = Client::connect(ConnectOptions::for_cwd(None)).await?;
//! let work = client.fetch(FetchParams { agent: "backend-worker".into(), ..Default::default() }).await?;
//! println!("{} pending threads", work.threads.len());
//! # Ok(()) }
//! ```
//!
//! Every method is called through the `…ApiClient` traits that jsonrpsee generates from
//! `coord_proto::api` (a [`Client`] dereferences to the jsonrpsee client that implements
//! them; their errors convert into [`ClientError`] with `?`). This crate adds the socket
//! transport, daemon auto-start, the protocol-version handshake and [`ClientError`].

pub mod autostart;
mod error;
pub mod transport;

use std::path::{Path, PathBuf};
use std::time::Duration;

use coord_ipc::socket;
use coord_proto::ErrorCode;
use coord_proto::PROTOCOL_VERSION;
use coord_proto::api::{AgentsApiClient, EventsApiClient, SystemApiClient};
use coord_proto::types::*;
use jsonrpsee::core::client::{ClientBuilder, Subscription};

pub use coord_ipc::{ProjectPaths, paths};
pub use error::ClientError;

/// How to reach the daemon.
#[derive(Debug, Clone)]
pub struct ConnectOptions {
    pub paths: ProjectPaths,
    /// Start the daemon when none is listening (default true; off with `COORD_NO_AUTOSTART=1`).
    pub autostart: bool,
    /// An agent's secret (default: `$COORD_AGENT_SECRET`): the connection authenticates as
    /// that agent right after the handshake (`agents.authenticate`).
    pub secret: Option<String>,
}

impl ConnectOptions {
    /// The project around the current directory, or an explicit database.
    pub fn for_cwd(db: Option<&Path>) -> Self {
        let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
        Self::for_dir(db, &cwd)
    }

    pub fn for_dir(db: Option<&Path>, cwd: &Path) -> Self {
        ConnectOptions {
            paths: paths::resolve(db, cwd),
            autostart: !autostart_disabled_by_env(),
            secret: secret_from_env(),
        }
    }
}

/// The agent secret in `$COORD_AGENT_SECRET`, if set and not empty.
pub fn secret_from_env() -> Option<String> {
    std::env::var(AGENT_SECRET_ENV).ok().map(|s| s.trim().to_string()).filter(|s| !s.is_empty())
}

/// True when `COORD_NO_AUTOSTART` is set to anything but empty, `0` or `false`.
pub fn autostart_disabled_by_env() -> bool {
    std::env::var("COORD_NO_AUTOSTART").is_ok_and(|v| !matches!(v.trim(), "" | "0" | "false"))
}

/// A connection to one daemon. It dereferences to the jsonrpsee client, on which the
/// generated `coord_proto::api::…ApiClient` traits provide every method.
pub struct Client {
    rpc: jsonrpsee::core::client::Client,
    hello: HelloResult,
}

impl std::ops::Deref for Client {
    type Target = jsonrpsee::core::client::Client;

    fn deref(&self) -> &Self::Target {
        &self.rpc
    }
}

fn is_down(e: &std::io::Error) -> bool {
    use std::io::ErrorKind::*;
    matches!(e.kind(), NotFound | ConnectionRefused)
}

impl Client {
    /// Connect to the project's daemon, starting it first if needed and allowed.
    pub async fn connect(opts: ConnectOptions) -> Result<Client, ClientError> {
        let paths = &opts.paths;
        match socket::connect(&paths.socket).await {
            Ok(stream) => return Self::handshake(stream, opts.secret.as_deref()).await,
            Err(e) if !is_down(&e) => return Err(ClientError::Connect { socket: paths.socket.clone(), source: e }),
            Err(_) if !opts.autostart => {
                return Err(ClientError::DaemonUnavailable {
                    db: paths.db.clone(),
                    reason: format!(
                        "nothing listens on {} and auto-start is off (--no-autostart or COORD_NO_AUTOSTART); \
                         start it with `coordd serve`",
                        paths.socket.display()
                    ),
                });
            }
            Err(_) => {}
        }
        let p = paths.clone();
        let started = tokio::task::spawn_blocking(move || {
            let sock = p.socket.clone();
            autostart::start(&p, move || socket::probe_blocking(&sock).is_err())
        })
        .await
        .map_err(|e| ClientError::Transport(format!("auto-start task failed: {e}")))??;
        match started {
            autostart::Started::Ready => {}
            autostart::Started::AlreadyRunning => {
                // Another daemon won the lock a moment ago and binds right after taking it.
                let mut delay = Duration::from_millis(2);
                for _ in 0..12 {
                    if socket::connect(&paths.socket).await.is_ok() {
                        break;
                    }
                    tokio::time::sleep(delay).await;
                    delay *= 2;
                }
            }
        }
        let stream = socket::connect(&paths.socket)
            .await
            .map_err(|e| ClientError::Connect { socket: paths.socket.clone(), source: e })?;
        Self::handshake(stream, opts.secret.as_deref()).await
    }

    /// Connect to a socket path directly, without auto-start.
    pub async fn connect_socket(path: &Path) -> Result<Client, ClientError> {
        Self::connect_socket_as(path, None).await
    }

    /// Connect to a socket path directly, without auto-start, authenticated with `secret`.
    pub async fn connect_socket_as(path: &Path, secret: Option<&str>) -> Result<Client, ClientError> {
        let stream =
            socket::connect(path).await.map_err(|e| ClientError::Connect { socket: path.to_path_buf(), source: e })?;
        Self::handshake(stream, secret).await
    }

    async fn handshake(stream: socket::Stream, secret: Option<&str>) -> Result<Client, ClientError> {
        let (r, w) = tokio::io::split(stream);
        let (tx, rx) = transport::new(r, w);
        let rpc = ClientBuilder::default()
            .request_timeout(Duration::from_secs(600))
            .max_buffer_capacity_per_subscription(4096)
            .build_with_tokio(tx, rx);
        let hello = rpc.hello().await?;
        if hello.protocol_version != PROTOCOL_VERSION {
            return Err(ClientError::ProtocolMismatch {
                server: hello.protocol_version,
                server_version: hello.version,
                client: PROTOCOL_VERSION,
            });
        }
        if let Some(secret) = secret {
            let agent_id = secret_agent(secret)
                .ok_or_else(|| ClientError::Rpc {
                    code: ErrorCode::Unauthenticated.rpc_code(),
                    app: Some(ErrorCode::Unauthenticated),
                    message: format!("{AGENT_SECRET_ENV} does not hold an agent secret (cs_<agent>_<64 hex digits>)"),
                    details: None,
                })?
                .to_string();
            rpc.agent_authenticate(AuthenticateParams { agent_id, secret: secret.to_string() }).await?;
        }
        Ok(Client { rpc, hello })
    }

    /// What the daemon said at connect time (version, pid, socket, db, last event, ...).
    /// `SystemApiClient::hello` asks again.
    pub fn server_info(&self) -> &HelloResult {
        &self.hello
    }

    /// Subscribe to matching events: first those stored after the filter's cursor, then
    /// new ones as they commit.
    pub async fn subscribe(&self, filter: EventFilter) -> Result<EventStream, ClientError> {
        Ok(EventStream { inner: self.rpc.subscribe_events(filter).await? })
    }
}

/// A live event subscription.
pub struct EventStream {
    inner: Subscription<Event>,
}

impl EventStream {
    /// The next event within `timeout` (`None`: wait forever). `Ok(None)` means the time ran
    /// out; a subscription the daemon ended (it is shutting down) is an error.
    pub async fn next_within(&mut self, timeout: Option<Duration>) -> Result<Option<Event>, ClientError> {
        let next = async {
            match self.next().await {
                Some(r) => r,
                None => Err(ClientError::Transport("the daemon ended the subscription (is it shutting down?)".into())),
            }
        };
        match timeout {
            Some(t) => match tokio::time::timeout(t, next).await {
                Ok(r) => r.map(Some),
                Err(_) => Ok(None),
            },
            None => next.await.map(Some),
        }
    }

    /// The next event; `None` when the daemon ended the subscription or the connection.
    pub async fn next(&mut self) -> Option<Result<Event, ClientError>> {
        self.inner.next().await.map(|r| r.map_err(|e| ClientError::Transport(format!("bad event notification: {e}"))))
    }
}
