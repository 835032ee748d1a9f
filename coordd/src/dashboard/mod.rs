//! The web dashboard's listener: the same JSON-RPC method table as the socket, served over
//! a WebSocket on a loopback TCP port by jsonrpsee, next to the page's embedded assets.
//!
//! - [`Dashboard`] starts, stops and reports the listener (`dashboard.*`). Its port and
//!   token are kept in `.agents/dashboard.json` (mode 0600) so a restarted daemon serves
//!   the same URL again and an open page reconnects and resumes from its cursor; `stop`
//!   removes the file.
//! - [`guard`]: every HTTP and WebSocket request passes the Host check (DNS rebinding), the
//!   token (constant-time), and the Origin check (cross-site use); every response carries a
//!   strict Content-Security-Policy. Assets come from [`assets`], embedded in the binary.
//! - [`params`]: the params conventions of the socket transport (one params object, bare or
//!   in a one-element array) applied to WebSocket calls too, and each connection's caller:
//!   a [`Page`], the overseer (configurable, default `overseer`), never an agent.

mod assets;
mod guard;
mod params;

use std::net::{Ipv4Addr, SocketAddr, TcpListener};
use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

use coord_proto::ErrorCode;
use coord_proto::MAX_REQUEST_BYTES;
use coord_proto::types::{DashboardInfo, DashboardStartParams};
use jsonrpsee::Methods;
use jsonrpsee::core::middleware::RpcServiceBuilder;
use jsonrpsee::server::{Server, ServerConfig, ServerHandle};
use serde::{Deserialize, Serialize};
use tokio::sync::Mutex;

use crate::error::{Error, Result};
use crate::net::caller::Page;
use crate::net::transport::MAX_SUBSCRIPTIONS_PER_CONNECTION;
use crate::time::Clock;

/// Name of the file beside the database that keeps the listener's port and token.
pub const STATE_FILE: &str = "dashboard.json";
/// Most simultaneous dashboard connections (pages and other WebSocket clients).
pub const MAX_CONNECTIONS: u32 = 64;
/// Messages queued per WebSocket connection before its subscriptions wait.
const MESSAGE_BUFFER: u32 = 1024;

/// The page's identity when none was asked for.
pub const DEFAULT_OVERSEER: &str = "overseer";

/// What survives a restart.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Saved {
    port: u16,
    token: String,
    /// The person the page acts as.
    #[serde(default = "default_overseer")]
    overseer: String,
}

fn default_overseer() -> String {
    DEFAULT_OVERSEER.to_string()
}

struct Serving {
    saved: Saved,
    handle: ServerHandle,
    started_at: String,
}

/// The dashboard listener of one daemon.
pub struct Dashboard {
    /// The project's `.agents/` folder.
    dir: PathBuf,
    clock: Arc<dyn Clock>,
    /// The method table, set once built (it contains the `dashboard.*` handlers themselves).
    methods: OnceLock<Methods>,
    serving: Mutex<Option<Serving>>,
    /// `--dashboard-acts-as-anyone`: the page may write as any agent and set the policy.
    anyone: bool,
}

impl Dashboard {
    pub fn new(dir: PathBuf, clock: Arc<dyn Clock>, anyone: bool) -> Dashboard {
        Dashboard { dir, clock, methods: OnceLock::new(), serving: Mutex::new(None), anyone }
    }

    /// Hand over the method table the WebSocket serves.
    pub fn set_methods(&self, methods: Methods) {
        let _ = self.methods.set(methods);
    }

    fn state_path(&self) -> PathBuf {
        self.dir.join(STATE_FILE)
    }

    /// `dashboard.start`: keep serving (on another port, or as another overseer, if asked
    /// for) or start. A new port gets a new token: an old page that still knows the old
    /// port never sends the new token to whatever listens there next.
    pub async fn start(&self, p: DashboardStartParams) -> Result<DashboardInfo> {
        if p.port == Some(0) {
            return Err(Error::invalid("port must be 1 to 65535 (leave it out for a free port)"));
        }
        if let Some(o) = &p.overseer {
            crate::domain::check::agent("overseer", o)?;
        }
        let mut serving = self.serving.lock().await;
        if let Some(s) = serving.as_ref()
            && p.port.is_none_or(|port| port == s.saved.port)
            && p.overseer.as_ref().is_none_or(|o| *o == s.saved.overseer)
        {
            return Ok(info(Some(s)));
        }
        let (port, token, overseer) = match serving.take() {
            Some(old) => {
                let _ = old.handle.stop();
                let same_port = p.port.is_none_or(|port| port == old.saved.port);
                let token = if same_port { old.saved.token } else { new_token() };
                (if same_port { old.saved.port } else { p.port.unwrap_or(0) }, token, old.saved.overseer)
            }
            None => (p.port.unwrap_or(0), new_token(), default_overseer()),
        };
        let overseer = p.overseer.unwrap_or(overseer);
        let s = self.listen(Saved { port, token, overseer })?;
        self.save(&s.saved)?;
        tracing::info!(port = s.saved.port, "dashboard serving");
        *serving = Some(s);
        Ok(info(serving.as_ref()))
    }

    /// Serve again what the last daemon served (the same port and token, so open pages
    /// reconnect); another free port if that one is taken now. Nothing when none was saved.
    pub async fn restore(&self) {
        let Ok(text) = std::fs::read_to_string(self.state_path()) else { return };
        let Ok(saved) = serde_json::from_str::<Saved>(&text) else {
            tracing::warn!(file = %self.state_path().display(), "unreadable dashboard state; not serving it");
            return;
        };
        let mut serving = self.serving.lock().await;
        let listened = self.listen(saved.clone()).or_else(|e| {
            // A new port, a new token: pages still open on the old port stop after a few
            // failures and never send the new token to whatever listens there now.
            tracing::warn!(port = saved.port, error = %e, "dashboard port unavailable; using a free one and a new token");
            self.listen(Saved { port: 0, token: new_token(), overseer: saved.overseer.clone() })
        });
        match listened {
            Ok(s) => {
                if s.saved.port != saved.port
                    && let Err(e) = self.save(&s.saved)
                {
                    tracing::warn!(error = %e, "could not record the dashboard's new port");
                }
                tracing::info!(port = s.saved.port, "dashboard serving again");
                *serving = Some(s);
            }
            Err(e) => tracing::warn!(error = %e, "could not serve the dashboard again"),
        }
    }

    /// `dashboard.status`.
    pub async fn status(&self) -> DashboardInfo {
        info(self.serving.lock().await.as_ref())
    }

    /// `dashboard.stop`: stop serving and forget the URL. True if it was served.
    pub async fn stop(&self) -> Result<bool> {
        let was = self.serving.lock().await.take();
        match std::fs::remove_file(self.state_path()) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(Error::app(ErrorCode::IoWriteFailed, format!("cannot remove {STATE_FILE}: {e}"))),
        }
        Ok(match was {
            Some(s) => {
                let _ = s.handle.stop();
                tracing::info!("dashboard stopped");
                true
            }
            None => false,
        })
    }

    /// The daemon is stopping: close the listener but keep the URL for the next daemon.
    pub async fn shutdown(&self) {
        if let Some(s) = self.serving.lock().await.take() {
            let _ = s.handle.stop();
            let _ = s.handle.stopped().await;
        }
    }

    fn listen(&self, saved: Saved) -> Result<Serving> {
        let methods = self.methods.get().cloned().ok_or_else(|| Error::Internal("method table not set".into()))?;
        let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, saved.port));
        let unavailable = |e: std::io::Error| {
            Error::app(ErrorCode::PortUnavailable, format!("cannot listen on 127.0.0.1:{}: {e}", saved.port))
        };
        let listener = TcpListener::bind(addr).map_err(unavailable)?;
        listener.set_nonblocking(true).map_err(unavailable)?;
        let port = listener.local_addr().map_err(unavailable)?.port();
        let config = ServerConfig::builder()
            .max_request_body_size(MAX_REQUEST_BYTES as u32)
            .max_response_body_size(u32::MAX)
            .max_connections(MAX_CONNECTIONS)
            .max_subscriptions_per_connection(MAX_SUBSCRIPTIONS_PER_CONNECTION)
            .set_message_buffer_capacity(MESSAGE_BUFFER)
            .build();
        let server = Server::builder()
            .set_config(config)
            .set_http_middleware(tower::ServiceBuilder::new().layer(guard::GuardLayer::new(port, &saved.token)))
            .set_rpc_middleware(RpcServiceBuilder::new().layer(params::NormalizeLayer::new(
                methods.clone(),
                Page { overseer: saved.overseer.clone(), anyone: self.anyone },
            )))
            .build_from_tcp(listener)
            .map_err(unavailable)?;
        let handle = server.start(methods);
        Ok(Serving { saved: Saved { port, ..saved }, handle, started_at: self.clock.now().to_string() })
    }

    fn save(&self, saved: &Saved) -> Result<()> {
        let fail = |e: std::io::Error| Error::app(ErrorCode::IoWriteFailed, format!("cannot write {STATE_FILE}: {e}"));
        let text = serde_json::to_string(saved).map_err(|e| Error::Internal(e.to_string()))?;
        let tmp = self.dir.join(format!("{STATE_FILE}.tmp"));
        write_private(&tmp, text.as_bytes()).map_err(fail)?;
        std::fs::rename(&tmp, self.state_path()).map_err(fail)
    }
}

fn info(s: Option<&Serving>) -> DashboardInfo {
    DashboardInfo {
        running: s.is_some(),
        url: s.map(|s| format!("http://127.0.0.1:{}/{}/", s.saved.port, s.saved.token)),
        port: s.map(|s| s.saved.port),
        started_at: s.map(|s| s.started_at.clone()),
        overseer: s.map(|s| s.saved.overseer.clone()),
    }
}

/// 244 random bits (two UUIDv4s) as 64 hex digits.
fn new_token() -> String {
    format!("{}{}", uuid::Uuid::new_v4().simple(), uuid::Uuid::new_v4().simple())
}

/// Write a file only its owner may read: the token is a credential.
fn write_private(path: &std::path::Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    let mut opts = std::fs::OpenOptions::new();
    opts.write(true).create(true).truncate(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        opts.mode(0o600);
    }
    let mut f = opts.open(path)?;
    f.write_all(bytes)?;
    f.sync_all()
}
