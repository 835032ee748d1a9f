//! coord-client: the typed async Rust client of coordd, used by the `inbox` and `orch` CLIs
//! and by any Rust program that wants to coordinate through a project's daemon.
//!
//! ```no_run
//! # async fn demo() -> Result<(), coord_client::ClientError> {
//! use coord_client::{Client, ConnectOptions};
//! use coord_proto::types::FetchParams;
//!
//! let client = Client::connect(ConnectOptions::for_cwd(None)).await?;
//! let work = client.fetch(FetchParams { agent: "backend-worker".into(), ..Default::default() }).await?;
//! println!("{} pending threads", work.threads.len());
//! # Ok(()) }
//! ```
//!
//! Calls go through the `CoordApiClient` trait that jsonrpsee generates from
//! `coord_proto::api`; this crate adds the socket transport, daemon auto-start, the
//! protocol-version handshake and [`ClientError`].

pub mod autostart;
pub mod cli;
mod error;
pub mod paths;
pub mod socket;
pub mod transport;

use std::path::{Path, PathBuf};
use std::time::Duration;

use coord_proto::PROTOCOL_VERSION;
use coord_proto::api::CoordApiClient;
use coord_proto::types::*;
use jsonrpsee::core::client::{ClientBuilder, Subscription};

pub use error::ClientError;
pub use paths::ProjectPaths;

/// How to reach the daemon.
#[derive(Debug, Clone)]
pub struct ConnectOptions {
    pub paths: ProjectPaths,
    /// Start the daemon when none is listening (default true; off with `COORD_NO_AUTOSTART=1`).
    pub autostart: bool,
}

impl ConnectOptions {
    /// The project around the current directory, or an explicit database.
    pub fn for_cwd(db: Option<&Path>) -> Self {
        let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
        Self::for_dir(db, &cwd)
    }

    pub fn for_dir(db: Option<&Path>, cwd: &Path) -> Self {
        ConnectOptions { paths: paths::resolve(db, cwd), autostart: !autostart_disabled_by_env() }
    }
}

/// True when `COORD_NO_AUTOSTART` is set to anything but empty, `0` or `false`.
pub fn autostart_disabled_by_env() -> bool {
    std::env::var("COORD_NO_AUTOSTART").is_ok_and(|v| !matches!(v.trim(), "" | "0" | "false"))
}

/// A connection to one daemon.
pub struct Client {
    rpc: jsonrpsee::core::client::Client,
    hello: HelloResult,
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
            Ok(stream) => return Self::handshake(stream).await,
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
            autostart::start(&p, move || sync_connect(&sock).is_err())
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
        Self::handshake(stream).await
    }

    /// Connect to a socket path directly, without auto-start.
    pub async fn connect_socket(path: &Path) -> Result<Client, ClientError> {
        let stream =
            socket::connect(path).await.map_err(|e| ClientError::Connect { socket: path.to_path_buf(), source: e })?;
        Self::handshake(stream).await
    }

    async fn handshake(stream: interprocess::local_socket::tokio::Stream) -> Result<Client, ClientError> {
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
        Ok(Client { rpc, hello })
    }

    /// What the daemon said at connect time (version, pid, socket, db, ...).
    pub fn hello(&self) -> &HelloResult {
        &self.hello
    }

    /// The generated jsonrpsee client, for calls not wrapped here.
    pub fn rpc(&self) -> &jsonrpsee::core::client::Client {
        &self.rpc
    }

    /// Ask the daemon again for its status.
    pub async fn status(&self) -> Result<HelloResult, ClientError> {
        Ok(self.rpc.hello().await?)
    }

    pub async fn shutdown(&self, reason: Option<String>) -> Result<ShutdownResult, ClientError> {
        Ok(self.rpc.shutdown(ShutdownParams { reason }).await?)
    }

    pub async fn init(&self, p: InitParams) -> Result<InitResult, ClientError> {
        Ok(self.rpc.init(p).await?)
    }

    pub async fn run_list(&self) -> Result<RunsResult, ClientError> {
        Ok(self.rpc.run_list().await?)
    }

    /// Subscribe to matching events: first those stored after the filter's cursor, then
    /// new ones as they commit.
    pub async fn subscribe(&self, filter: EventFilter) -> Result<EventStream, ClientError> {
        Ok(EventStream { inner: self.rpc.subscribe_events(filter).await? })
    }
}

/// Typed wrappers, one per method of `coord_proto::api` that takes a params object.
macro_rules! calls {
    ($($name:ident => $method:ident($p:ty) -> $r:ty;)*) => {
        impl Client {
            $(
                #[doc = concat!("Calls `", stringify!($method), "` (see docs/protocol.md).")]
                pub async fn $name(&self, p: $p) -> Result<$r, ClientError> {
                    Ok(CoordApiClient::$method(&self.rpc, p).await?)
                }
            )*
        }
    };
}

calls! {
    send => send(SendParams) -> MessageResult;
    fetch => fetch(FetchParams) -> ThreadsResult;
    claim => claim(ClaimParams) -> LeaseResult;
    renew => renew(RenewParams) -> LeaseResult;
    update => update(UpdateParams) -> MessageResult;
    reply => reply(ReplyParams) -> MessageResult;
    done => done(FinishParams) -> MessageResult;
    fail => fail(FinishParams) -> MessageResult;
    cancel => cancel(CancelParams) -> MessageResult;
    list => list(ListParams) -> ThreadsResult;
    show => show(ShowParams) -> ShowResult;
    mark_read => mark_read(MarkReadParams) -> MarkReadResult;
    events => events_list(EventsListParams) -> EventsResult;
    run_create => run_create(RunCreateParams) -> RunView;
    run_show => run_show(RunRef) -> RunView;
    task_add => task_add(TaskAddParams) -> TaskView;
    task_list => task_list(TaskListParams) -> TasksResult;
    task_show => task_show(TaskRef) -> TaskView;
    dep_add => dep_add(DepParams) -> TaskView;
    dep_remove => dep_remove(DepParams) -> TaskView;
    ready => ready(TaskListParams) -> TasksResult;
    dispatch => dispatch(DispatchParams) -> DispatchResult;
    reconcile => reconcile(RunRef) -> TasksResult;
    blocked => blocked(RunRef) -> BlockedResult;
    answer => answer(AnswerParams) -> MessageResult;
    retry => retry(RetryParams) -> DispatchResult;
    reassign => reassign(RetryParams) -> DispatchResult;
    orch_cancel => orch_cancel(CancelTaskParams) -> RunView;
    worktree_list => worktree_list(WorktreeParams) -> WorktreesResult;
    worktree_prune => worktree_prune(WorktreeParams) -> WorktreesResult;
    council_start => council_start(CouncilStartParams) -> Council;
    council_show => council_show(CouncilRef) -> Council;
    status_summary => status(StatusParams) -> StatusResult;
    agent_register => agent_register(RegisterParams) -> AgentResult;
    agent_list => agent_list(AgentListParams) -> AgentsResult;
    agent_show => agent_show(AgentRef) -> Agent;
    agent_heartbeat => agent_heartbeat(HeartbeatParams) -> AgentResult;
    mail => mail_list(MailParams) -> MailResult;
    mail_read => mail_read(MailRef) -> MailItemResult;
    mail_ack => mail_ack(MailRef) -> MailItemResult;
    reserve => reserve(ReserveParams) -> ReserveResult;
    release => release(ReleaseParams) -> ReleaseResult;
    reservations => reservation_list(ReservationListParams) -> ReservationsResult;
    check_paths => reservation_check(CheckPathsParams) -> CheckPathsResult;
    mail_check => mail_check(CheckParams) -> CheckResult;
    mail_pending => mail_pending(PendingParams) -> PendingResult;
    mail_withdraw => mail_withdraw(MailRef) -> WithdrawResult;
    peers_link => peers_link(PeerLinkParams) -> PeersResult;
    peers_list => peers_list(PeerListParams) -> PeersResult;
    install_hooks => install_hooks(InstallHooksParams) -> InstallHooksResult;
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

fn sync_connect(path: &Path) -> std::io::Result<()> {
    use interprocess::local_socket::traits::Stream as _;
    interprocess::local_socket::Stream::connect(socket::name(path)?).map(drop)
}
