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
//! transport, daemon auto-start, the protocol-version handshake, [`ClientError`] and
//! [`EventStream`], the event subscription behind every wait, which survives a lost
//! connection or a daemon restart (see [`stream`]), and [`pages::all`], which follows a
//! bounded list's `next_after` until it is whole.

pub mod autostart;
mod backoff;
pub mod codex;
#[cfg(windows)]
mod detached;
mod error;
pub mod ids;
pub mod pages;
pub mod stream;
pub mod transport;

use std::path::{Path, PathBuf};
use std::time::Duration;

use coord_ipc::socket;
use coord_proto::ErrorCode;
use coord_proto::PROTOCOL_VERSION;
use coord_proto::api::{AgentsApiClient, SystemApiClient};
use coord_proto::types::*;
use jsonrpsee::core::client::ClientBuilder;

pub use backoff::Backoff;
pub use coord_ipc::{ProjectPaths, paths};
pub use error::ClientError;
pub use stream::{EventStream, Notice};

/// How to reach the daemon.
#[derive(Debug, Clone)]
pub struct ConnectOptions {
    pub paths: ProjectPaths,
    /// Start the daemon when none is listening (default true; off with `COORD_NO_AUTOSTART=1`).
    pub autostart: bool,
    /// An agent's secret (default: `$COORD_AGENT_SECRET`): the connection authenticates as
    /// that agent right after the handshake (`agents.authenticate`).
    pub secret: Option<String>,
    /// Called with the pid and project directory when this client starts a daemon (the
    /// CLIs say so on stderr unless their output is JSON). `None`: nothing is said.
    pub on_start: Option<fn(u32, &Path)>,
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
            on_start: None,
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
    /// How this client reached its daemon, so a stream can reach it again.
    reach: Reach,
}

/// How to reach a daemon again: through the connection options (auto-start included), or
/// a socket given directly.
#[derive(Debug, Clone)]
pub(crate) enum Reach {
    Options(ConnectOptions),
    /// A socket, and the agent secret the connection authenticates with.
    Socket(PathBuf, Option<String>),
}

impl Reach {
    pub(crate) async fn connect(&self) -> Result<Client, ClientError> {
        match self {
            Reach::Options(o) => Client::connect(o.clone()).await,
            Reach::Socket(p, secret) => Client::connect_socket_as(p, secret.as_deref()).await,
        }
    }

    /// Reach the daemon again for a wait that lost it: never auto-start one, so a daemon
    /// stopped on purpose (`coordd stop`) stays stopped; the wait retries until it is back.
    pub(crate) async fn reconnect(&self) -> Result<Client, ClientError> {
        match self {
            Reach::Options(o) => Client::connect(ConnectOptions { autostart: false, ..o.clone() }).await,
            Reach::Socket(..) => self.connect().await,
        }
    }

    /// The agent secret a connection made this way authenticates with.
    fn secret(&self) -> Option<&str> {
        match self {
            Reach::Options(o) => o.secret.as_deref(),
            Reach::Socket(_, secret) => secret.as_deref(),
        }
    }
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
        let reach = Reach::Options(opts.clone());
        match socket::connect(&paths.socket).await {
            Ok(stream) => return Self::handshake(stream, reach).await,
            Err(e) if !is_down(&e) => return Err(ClientError::Connect { socket: paths.socket.clone(), source: e }),
            Err(_) if !opts.autostart => {
                return Err(ClientError::DaemonUnavailable {
                    db: paths.db.clone(),
                    reason: format!(
                        "nothing listens on {} and auto-start is off (COORD_NO_AUTOSTART, or the caller's \
                         choice); start it with `coordd serve`",
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
            autostart::Started::Ready(pid) => {
                if let (Some(pid), Some(said)) = (pid, opts.on_start) {
                    said(pid, paths.db.parent().and_then(Path::parent).unwrap_or(&paths.db));
                }
            }
            autostart::Started::AlreadyRunning => {
                // Another daemon won the lock a moment ago and binds right after taking it.
                let mut backoff = Backoff::new(Duration::from_millis(2), Duration::from_secs(5));
                while backoff.pauses() < 12 {
                    if socket::connect(&paths.socket).await.is_ok() {
                        break;
                    }
                    backoff.pause().await;
                }
            }
        }
        let stream = socket::connect(&paths.socket)
            .await
            .map_err(|e| ClientError::Connect { socket: paths.socket.clone(), source: e })?;
        Self::handshake(stream, reach).await
    }

    /// Connect to a socket path directly, without auto-start.
    pub async fn connect_socket(path: &Path) -> Result<Client, ClientError> {
        Self::connect_socket_as(path, None).await
    }

    /// Connect to a socket path directly, without auto-start, authenticated with `secret`.
    pub async fn connect_socket_as(path: &Path, secret: Option<&str>) -> Result<Client, ClientError> {
        let stream =
            socket::connect(path).await.map_err(|e| ClientError::Connect { socket: path.to_path_buf(), source: e })?;
        Self::handshake(stream, Reach::Socket(path.to_path_buf(), secret.map(str::to_string))).await
    }

    async fn handshake(stream: socket::Stream, reach: Reach) -> Result<Client, ClientError> {
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
        if let Some(secret) = reach.secret() {
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
        Ok(Client { rpc, hello, reach })
    }

    /// What the daemon said at connect time (version, pid, socket, db, last event, ...).
    /// `SystemApiClient::hello` asks again.
    pub fn server_info(&self) -> &HelloResult {
        &self.hello
    }

    /// The daemon's newest event id, asked now.
    pub async fn newest_event(&self) -> Result<i64, ClientError> {
        Ok(self.rpc.hello().await?.last_event_id)
    }

    /// Subscribe to matching events: first those stored after the filter's cursor, then
    /// new ones as they commit. Without a cursor the stream starts after the newest event
    /// at the time of this call. The stream resumes by itself after a lost connection or a
    /// daemon restart ([`EventStream`]).
    pub async fn subscribe(&self, filter: EventFilter) -> Result<EventStream, ClientError> {
        EventStream::open(self, filter).await
    }
}
