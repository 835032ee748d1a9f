//! Newline-delimited JSON-RPC 2.0 over one local-socket connection, dispatched through the
//! jsonrpsee [`Methods`] built in `rpc`.
//!
//! One reader loop parses lines and drives the in-flight calls of the connection; one
//! writer task owns the socket's write half and flushes whenever its queue runs dry.
//! Responses may go out in any order (clients match them by id). Subscriptions write their
//! notifications into the same queue through a `MethodSink`. On read EOF the in-flight
//! calls finish and their replies are flushed before the connection closes; subscriptions
//! end with the connection. Lines are framed by [`coord_ipc::LineCodec`] (cancel-safe,
//! never buffering more than [`MAX_REQUEST_BYTES`] of one line): a longer line is discarded
//! with an error reply and the connection keeps going.

use std::sync::atomic::{AtomicUsize, Ordering};

use coord_proto::MAX_REQUEST_BYTES;
use coord_proto::error::{REQUEST_TOO_LARGE, TOO_MANY_SUBSCRIPTIONS};
use futures::future::BoxFuture;
use futures::stream::{FuturesUnordered, StreamExt};
use jsonrpsee::core::id_providers::RandomIntegerIdProvider;
use jsonrpsee::core::server::{
    BoundedSubscriptions, ConnectionId, Extensions, MethodCallback, MethodResponse, MethodSink, Methods,
    SubscriptionState,
};
use jsonrpsee::types::error::ErrorCode;
use jsonrpsee::types::{ErrorObject, Id, Params, Request};
use serde_json::value::RawValue;
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt, BufWriter};
use tokio::sync::{mpsc, oneshot};
use tokio_util::codec::FramedRead;

use coord_ipc::{Frame, LineCodec};

/// Most subscriptions one connection may hold open.
pub const MAX_SUBSCRIPTIONS_PER_CONNECTION: u32 = 4096;
/// Calls one connection may have in flight before the daemon stops reading from it.
pub const MAX_IN_FLIGHT: usize = 256;
/// Outgoing messages queued per connection before senders wait.
const OUT_QUEUE: usize = 1024;

static NEXT_CONNECTION: AtomicUsize = AtomicUsize::new(1);
static ID_PROVIDER: RandomIntegerIdProvider = RandomIntegerIdProvider;

/// A response to write, or nothing (notifications and subscription calls answer themselves).
type Reply = BoxFuture<'static, Option<Box<RawValue>>>;

/// Serve one connection until the peer closes it or `shutdown` fires.
pub async fn serve<R, W>(read: R, write: W, methods: Methods, mut shutdown: tokio::sync::watch::Receiver<bool>)
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let conn_id = ConnectionId(NEXT_CONNECTION.fetch_add(1, Ordering::Relaxed));
    let _open = crate::activity::connection();
    let (tx, rx) = mpsc::channel::<Box<RawValue>>(OUT_QUEUE);
    let (stop_tx, stop_rx) = oneshot::channel();
    let writer = tokio::spawn(write_loop(write, rx, stop_rx));
    let subs = BoundedSubscriptions::new(MAX_SUBSCRIPTIONS_PER_CONNECTION);
    let mut reader = FramedRead::with_capacity(read, LineCodec::new(MAX_REQUEST_BYTES), 64 * 1024);
    let mut in_flight: FuturesUnordered<Reply> = FuturesUnordered::new();
    let conn = Conn { methods, conn_id, sink: tx.clone(), subs };

    loop {
        tokio::select! {
            // Stop reading while too many calls are in flight: back-pressure, and memory
            // per connection stays bounded.
            read = reader.next(), if in_flight.len() < MAX_IN_FLIGHT => match read {
                Some(Ok(Frame::Line(line))) => {
                    crate::activity::touch();
                    if let Some(reply) = conn.handle(&line) {
                        in_flight.push(reply);
                    }
                }
                Some(Ok(Frame::TooLong)) => {
                    let err = ErrorObject::owned(
                        REQUEST_TOO_LARGE,
                        format!("request line exceeds the {MAX_REQUEST_BYTES}-byte limit and was discarded"),
                        Some(serde_json::json!({"code": "request_too_large", "details": {"limit": MAX_REQUEST_BYTES}})),
                    );
                    let _ = tx.send(MethodResponse::error(Id::Null, err).into_json()).await;
                }
                None => break,
                Some(Err(e)) => {
                    tracing::debug!(conn = conn_id.0, error = %e, "read failed");
                    break;
                }
            },
            Some(reply) = in_flight.next(), if !in_flight.is_empty() => {
                if let Some(json) = reply {
                    let _ = tx.send(json).await;
                }
            }
            _ = shutdown.changed() => break,
        }
    }
    // Finish what the peer already asked for, then flush and close.
    while let Some(reply) = in_flight.next().await {
        if let Some(json) = reply {
            let _ = tx.send(json).await;
        }
    }
    drop(tx);
    drop(conn);
    let _ = stop_tx.send(());
    let _ = writer.await;
}

async fn write_loop<W: AsyncWrite + Unpin>(
    write: W,
    mut rx: mpsc::Receiver<Box<RawValue>>,
    mut stop: oneshot::Receiver<()>,
) {
    let mut out = BufWriter::with_capacity(64 * 1024, write);
    loop {
        let msg = tokio::select! {
            m = rx.recv() => m,
            _ = &mut stop => {
                // Send what is already queued, then close.
                while let Ok(m) = rx.try_recv() {
                    if write_one(&mut out, &m).await.is_err() {
                        return;
                    }
                }
                let _ = out.flush().await;
                let _ = out.shutdown().await;
                return;
            }
        };
        let Some(msg) = msg else { break };
        if write_one(&mut out, &msg).await.is_err() {
            return;
        }
        while let Ok(m) = rx.try_recv() {
            if write_one(&mut out, &m).await.is_err() {
                return;
            }
        }
        if out.flush().await.is_err() {
            return;
        }
    }
    let _ = out.flush().await;
}

async fn write_one<W: AsyncWrite + Unpin>(out: &mut BufWriter<W>, msg: &RawValue) -> std::io::Result<()> {
    out.write_all(msg.get().as_bytes()).await?;
    out.write_all(b"\n").await
}

struct Conn {
    methods: Methods,
    conn_id: ConnectionId,
    sink: mpsc::Sender<Box<RawValue>>,
    subs: BoundedSubscriptions,
}

fn error_json(id: Id<'_>, code: ErrorCode) -> Box<RawValue> {
    MethodResponse::error(id, ErrorObject::from(code)).into_json()
}

impl Conn {
    /// Parse and start one line: a request, a notification (run, never answered) or a batch.
    fn handle(&self, line: &[u8]) -> Option<Reply> {
        let first = line.iter().find(|b| !b.is_ascii_whitespace())?;
        if *first == b'[' {
            return self.handle_batch(line);
        }
        match self.start(line, false) {
            Started::Reply(r) => Some(r),
            Started::Now(json) => Some(Box::pin(async move { Some(json) })),
            Started::Nothing => None,
        }
    }

    fn handle_batch(&self, line: &[u8]) -> Option<Reply> {
        let items: Vec<&RawValue> = match serde_json::from_slice(line) {
            Ok(v) => v,
            Err(_) => {
                let code = if serde_json::from_slice::<serde::de::IgnoredAny>(line).is_ok() {
                    ErrorCode::InvalidRequest
                } else {
                    ErrorCode::ParseError
                };
                return Some(ready(error_json(Id::Null, code)));
            }
        };
        if items.is_empty() {
            return Some(ready(error_json(Id::Null, ErrorCode::InvalidRequest)));
        }
        let mut parts: Vec<Reply> = Vec::with_capacity(items.len());
        for item in items {
            match self.start(item.get().as_bytes(), true) {
                Started::Reply(r) => parts.push(r),
                Started::Now(json) => parts.push(ready(json)),
                Started::Nothing => {}
            }
        }
        if parts.is_empty() {
            return None;
        }
        Some(Box::pin(async move {
            let done: Vec<Box<RawValue>> = futures::future::join_all(parts).await.into_iter().flatten().collect();
            if done.is_empty() {
                return None;
            }
            let joined = format!("[{}]", done.iter().map(|r| r.get()).collect::<Vec<_>>().join(","));
            RawValue::from_string(joined).ok()
        }))
    }

    fn start(&self, data: &[u8], in_batch: bool) -> Started {
        match serde_json::from_slice::<Request<'_>>(data) {
            Ok(req) => {
                self.dispatch(req.id.into_owned(), &req.method, req.params.as_deref().map(RawValue::get), in_batch)
            }
            Err(_) => self.not_a_request(data, in_batch),
        }
    }

    /// A line that is not a well-formed request: a notification (run it, answer nothing),
    /// or an error answered with the request's id when it has a usable one.
    fn not_a_request(&self, data: &[u8], in_batch: bool) -> Started {
        let Ok(value) = serde_json::from_slice::<serde_json::Value>(data) else {
            return Started::Now(error_json(Id::Null, ErrorCode::ParseError));
        };
        let Some(obj) = value.as_object() else {
            return Started::Now(error_json(Id::Null, ErrorCode::InvalidRequest));
        };
        if let Some(id) = obj.get("id") {
            let id = match id {
                serde_json::Value::Number(n) => n.as_u64().map_or(Id::Null, Id::Number),
                serde_json::Value::String(s) => Id::Str(s.clone().into()),
                _ => Id::Null,
            };
            return Started::Now(error_json(id, ErrorCode::InvalidRequest));
        }
        let method = obj.get("method").and_then(serde_json::Value::as_str);
        match (obj.get("jsonrpc").and_then(serde_json::Value::as_str), method) {
            // A subscription nobody can be told about is not started at all.
            (Some("2.0"), Some(method)) if self.is_subscription(method) => Started::Nothing,
            (Some("2.0"), Some(method)) => {
                let params = obj.get("params").map(|p| p.to_string());
                match self.dispatch(Id::Null, method, params.as_deref(), in_batch) {
                    Started::Reply(f) => Started::Reply(Box::pin(async move {
                        let _ = f.await;
                        None
                    })),
                    _ => Started::Nothing,
                }
            }
            _ => Started::Now(error_json(Id::Null, ErrorCode::InvalidRequest)),
        }
    }

    fn is_subscription(&self, method: &str) -> bool {
        matches!(self.methods.method(method), Some(MethodCallback::Subscription(_)))
    }

    fn dispatch(&self, id: Id<'static>, method: &str, raw_params: Option<&str>, in_batch: bool) -> Started {
        let Some(callback) = self.methods.method(method) else {
            return Started::Now(error_json(id, ErrorCode::MethodNotFound));
        };
        let normalized = normalize_params(callback, raw_params);
        let params = Params::new(normalized.as_deref()).into_owned();
        let mut ext = Extensions::new();
        ext.insert(self.conn_id);
        let max = usize::MAX;
        match callback {
            MethodCallback::Sync(cb) => Started::Now((cb)(id, params, max, ext).into_json()),
            MethodCallback::Async(cb) => {
                let fut = (cb)(id, params, self.conn_id, max, ext);
                Started::Reply(Box::pin(async move { Some(fut.await.into_json()) }))
            }
            MethodCallback::Unsubscription(cb) => Started::Now((cb)(id, params, self.conn_id, max, ext).into_json()),
            MethodCallback::Subscription(cb) => {
                if in_batch {
                    let err = ErrorObject::owned(
                        ErrorCode::InvalidRequest.code(),
                        "subscriptions are not allowed inside a batch",
                        None::<()>,
                    );
                    return Started::Now(MethodResponse::error(id, err).into_json());
                }
                let Some(permit) = self.subs.acquire() else {
                    let err = ErrorObject::owned(
                        TOO_MANY_SUBSCRIPTIONS,
                        format!("at most {MAX_SUBSCRIPTIONS_PER_CONNECTION} subscriptions per connection"),
                        None::<()>,
                    );
                    return Started::Now(MethodResponse::error(id, err).into_json());
                };
                let state =
                    SubscriptionState { conn_id: self.conn_id, id_provider: &ID_PROVIDER, subscription_permit: permit };
                let sink = MethodSink::new(self.sink.clone());
                let fut = (cb)(id, params, sink, state, ext);
                // The subscription answers its own call through the sink; the returned
                // response is a copy kept for bookkeeping, so it is not sent again.
                Started::Reply(Box::pin(async move {
                    let _ = fut.await;
                    None
                }))
            }
        }
    }
}

/// Shape `params` the way the generated handlers read them (positionally). Every method
/// takes one params object: it may come bare (by name), wrapped in a one-element array, or
/// be left out when all its fields are optional. Unsubscribe takes the subscription id:
/// bare, as `[id]`, or as `{"subscription": id}`.
fn normalize_params<'a>(callback: &MethodCallback, raw: Option<&'a str>) -> Option<std::borrow::Cow<'a, str>> {
    use std::borrow::Cow;
    let trimmed = raw.map(str::trim).filter(|p| *p != "null");
    if let MethodCallback::Unsubscription(_) = callback {
        return match trimmed {
            Some(p) if p.starts_with('{') => {
                let id = serde_json::from_str::<serde_json::Value>(p).ok().and_then(|v| v.get("subscription").cloned());
                id.map(|id| Cow::Owned(format!("[{id}]")))
            }
            Some(p) if !p.starts_with('[') => Some(Cow::Owned(format!("[{p}]"))),
            other => other.map(Cow::Borrowed),
        };
    }
    match trimmed {
        None => Some(Cow::Borrowed("[{}]")),
        Some(p) if p.starts_with('{') => Some(Cow::Owned(format!("[{p}]"))),
        Some(p) => Some(Cow::Borrowed(p)),
    }
}

enum Started {
    Reply(Reply),
    Now(Box<RawValue>),
    Nothing,
}

fn ready(json: Box<RawValue>) -> Reply {
    Box::pin(async move { Some(json) })
}
