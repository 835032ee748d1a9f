//! Request decoding outside a real connection, for the property tests and the `cargo fuzz`
//! targets (`fuzz/`): a connection with a method table of two methods. Not part of the
//! daemon's interface.

use std::sync::Arc;
use std::sync::atomic::AtomicUsize;

use jsonrpsee::RpcModule;
use jsonrpsee::core::server::{BoundedSubscriptions, ConnectionId};
use jsonrpsee::types::ErrorObjectOwned;
use serde_json::Value;
use tokio::sync::mpsc;

use super::{Conn, Limits};
use crate::net::outbox::Outbox;

/// A connection whose methods are `system.hello` (answers `"hi"`) and `inbox.send`
/// (answers its params object).
pub(super) fn conn() -> Conn {
    let mut m = RpcModule::new(());
    m.register_method("system.hello", |_, _, _| "hi").expect("a new name");
    m.register_async_method("inbox.send", |params, _, _| async move {
        let p: Value = params.one()?;
        Ok::<_, ErrorObjectOwned>(p)
    })
    .expect("a new name");
    let (sink, _) = mpsc::channel(16);
    let (outbox, _) = Outbox::new(Arc::default());
    Conn {
        methods: m.into(),
        conn_id: ConnectionId(0),
        sink,
        subs: BoundedSubscriptions::new(4),
        outbox,
        pending: Arc::new(AtomicUsize::new(0)),
        limits: Limits::default(),
        caller: Default::default(),
        slot: Default::default(),
    }
}

/// Handle one request line as a connection would; the reply, if the line gets one.
pub fn handle_line(line: &[u8]) -> Option<String> {
    let rt = tokio::runtime::Builder::new_current_thread().build().ok()?;
    rt.block_on(async { conn().handle_line(line)?.await.map(|r| r.get().to_string()) })
}
