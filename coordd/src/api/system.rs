//! `system.*` and `rpc.discover`.

use coord_proto::PROTOCOL_VERSION;
use coord_proto::api::SystemApiServer;
use coord_proto::types::*;
use jsonrpsee::core::{RpcResult, async_trait};

use super::Api;

#[async_trait]
impl SystemApiServer for Api {
    async fn hello(&self) -> RpcResult<HelloResult> {
        Ok(HelloResult {
            server: "coordd".into(),
            version: env!("CARGO_PKG_VERSION").into(),
            protocol_version: PROTOCOL_VERSION,
            pid: std::process::id(),
            socket: self.info.socket.clone(),
            db: self.info.db.clone(),
            started_at: self.info.started_at.clone(),
            uptime_ms: self.info.started.elapsed().as_millis() as u64,
            last_event_id: self.core.bus.last_event_id(),
            schema_version: self.core.store.info().schema_version,
            methods: self.methods.get().cloned().unwrap_or_default(),
            connections: crate::net::activity::connections() as u64,
            subscriptions: crate::net::activity::subscriptions() as u64,
            read_only: self.core.store.read_only(),
        })
    }

    async fn shutdown(&self, params: ShutdownParams) -> RpcResult<ShutdownResult> {
        tracing::info!(reason = params.reason.as_deref().unwrap_or("requested"), "shutdown requested");
        let _ = self.shutdown.send(true);
        Ok(ShutdownResult { pid: std::process::id() })
    }

    async fn discover(&self) -> RpcResult<serde_json::Value> {
        static DOCUMENT: std::sync::OnceLock<serde_json::Value> = std::sync::OnceLock::new();
        Ok(DOCUMENT.get_or_init(coord_proto::openrpc::document).clone())
    }
}
