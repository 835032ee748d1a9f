//! Newline-delimited JSON-RPC 2.0 over one local-socket connection, dispatched through the
//! jsonrpsee [`Methods`] built in `rpc`.
//!
//! One reader loop reads lines ([`lines::LineReader`], within the daemon's [`Limits`]),
//! parses them and drives the in-flight calls of the connection; one writer task
//! ([`outbox::write_loop`]) owns the socket's write half and flushes whenever its queue
//! runs dry. Responses may go out in any order (clients match them by id). Replies and
//! subscription notifications go through the connection's [`Outbox`], budgeted by bytes: a
//! reply waits for room, and meanwhile the loop reads nothing (backpressure). The loop also
//! stops reading while [`MAX_IN_FLIGHT`] calls, or too many bytes of requests, are pending.
//! A call whose reply may be large first reserves room for it, on its connection and in
//! the daemon ([`heavy`]), and runs as a task of its own that queues its reply itself. A
//! batch runs such members one after another and stops running them once its reply holds
//! a reply's worth ([`crate::bound::items_budget`]). On read EOF the in-flight calls finish and their replies are flushed before the
//! connection closes; subscriptions end with the connection. A line over
//! [`MAX_REQUEST_BYTES`], over the budget of unfinished lines or idle for too long is
//! dropped with an error reply and the connection keeps going.

#[doc(hidden)]
pub mod fuzzing;
pub mod heavy;
pub mod limits;
mod lines;
#[cfg(test)]
mod props;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use coord_proto::MAX_REQUEST_BYTES;
use coord_proto::error::{
    BATCH_REPLY_TOO_LARGE, PARTIAL_LINE_TIMEOUT, REQUEST_BUDGET_EXCEEDED, REQUEST_TOO_LARGE, TOO_MANY_SUBSCRIPTIONS,
};
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
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::{mpsc, oneshot};

pub use limits::Limits;
use lines::{Input, LineReader, Refusal};

use crate::net::caller::{self, Caller};
use crate::net::outbox::{self, Outbox};

/// Most subscriptions one connection may hold open.
pub const MAX_SUBSCRIPTIONS_PER_CONNECTION: u32 = 4096;
/// Calls one connection may have in flight before the daemon stops reading from it.
pub const MAX_IN_FLIGHT: usize = 256;
/// Subscription answers (ids and refusals) jsonrpsee may queue per connection.
const RPC_QUEUE: usize = 256;

static NEXT_CONNECTION: AtomicUsize = AtomicUsize::new(1);
static ID_PROVIDER: RandomIntegerIdProvider = RandomIntegerIdProvider;

/// A response to write, or nothing (notifications and subscription calls answer themselves).
type Reply = BoxFuture<'static, Option<Box<RawValue>>>;

/// Serve one connection until the peer closes it or `shutdown` fires.
pub async fn serve<R, W>(
    read: R,
    write: W,
    methods: Methods,
    limits: Limits,
    mut shutdown: tokio::sync::watch::Receiver<bool>,
) where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let conn_id = ConnectionId(NEXT_CONNECTION.fetch_add(1, Ordering::Relaxed));
    let _open = crate::net::activity::connection();
    let (rpc_tx, rpc_rx) = mpsc::channel::<Box<RawValue>>(RPC_QUEUE);
    let (out, out_rx) = Outbox::new(limits.output.clone());
    let shed = out.handle();
    let (stop_tx, stop_rx) = oneshot::channel();
    let writer = tokio::spawn(outbox::write_loop(write, rpc_rx, out_rx, stop_rx, shed.clone()));
    let subs = BoundedSubscriptions::new(MAX_SUBSCRIPTIONS_PER_CONNECTION);
    let mut reader = LineReader::new(read, limits.clone());
    let mut in_flight: FuturesUnordered<Reply> = FuturesUnordered::new();
    let pending = Arc::new(AtomicUsize::new(0));
    let conn = Conn {
        methods,
        conn_id,
        sink: rpc_tx,
        subs,
        outbox: out.clone(),
        pending: pending.clone(),
        limits,
        caller: Arc::default(),
        slot: heavy::Slot::default(),
    };
    let mut was_reading = true;

    loop {
        // Stop reading while too many calls or bytes of requests are in flight:
        // back-pressure, and memory per connection stays bounded.
        let reading = in_flight.len() < MAX_IN_FLIGHT
            && limits::may_read(pending.load(Ordering::Acquire), &conn.limits.in_flight);
        if reading && !was_reading {
            reader.touch();
        }
        was_reading = reading;
        tokio::select! {
            read = reader.next(), if reading => match read {
                Ok(Some(Input::Line(line))) => {
                    crate::net::activity::touch();
                    if let Some(reply) = conn.handle(line) {
                        in_flight.push(reply);
                    }
                }
                Ok(Some(Input::Refused(why))) => {
                    if out.push(refusal(why), None).await.is_err() {
                        break;
                    }
                }
                Ok(None) => break,
                Err(e) => {
                    tracing::debug!(conn = conn_id.0, error = %e, "read failed");
                    break;
                }
            },
            Some(reply) = in_flight.next(), if !in_flight.is_empty() => {
                if let Some(json) = reply {
                    let _ = out.push(json, None).await;
                    reader.touch();
                }
            }
            _ = conn.limits.in_flight.freed(), if !reading => {}
            _ = shutdown.changed() => break,
            // The daemon's output budget is used up and this connection reads slowest.
            _ = shed.closed() => break,
        }
    }
    // Finish what the peer already asked for, then flush and close.
    while let Some(reply) = in_flight.next().await {
        if let Some(json) = reply {
            let _ = out.push(json, None).await;
        }
    }
    drop(reader);
    drop(conn);
    drop(out);
    let _ = stop_tx.send(());
    let _ = writer.await;
}

/// The error a client gets for a line dropped unread (`id` null: it was never parsed).
fn refusal(why: Refusal) -> Box<RawValue> {
    let err = match why {
        Refusal::TooLong => ErrorObject::owned(
            REQUEST_TOO_LARGE,
            format!("request line exceeds the {MAX_REQUEST_BYTES}-byte limit and was discarded"),
            Some(serde_json::json!({"code": "request_too_large", "details": {"limit": MAX_REQUEST_BYTES}})),
        ),
        Refusal::OverBudget => ErrorObject::owned(
            REQUEST_BUDGET_EXCEEDED,
            format!(
                "the daemon is already holding {} bytes of unfinished request lines from its clients; \
                 this line was discarded: send it again later",
                limits::PARTIAL_LINES_BUDGET
            ),
            Some(
                serde_json::json!({"code": "request_budget_exceeded", "details": {"limit": limits::PARTIAL_LINES_BUDGET}}),
            ),
        ),
        Refusal::TimedOut(t) => ErrorObject::owned(
            PARTIAL_LINE_TIMEOUT,
            format!(
                "no byte of an unfinished request line arrived for {} ms; the line was discarded \
                 (the rest of it, up to its newline, is skipped)",
                t.as_millis()
            ),
            Some(serde_json::json!({"code": "partial_line_timeout", "details": {"timeout_ms": t.as_millis() as u64}})),
        ),
    };
    MethodResponse::error(Id::Null, err).into_json()
}

struct Conn {
    methods: Methods,
    conn_id: ConnectionId,
    /// Where jsonrpsee answers subscription calls.
    sink: mpsc::Sender<Box<RawValue>>,
    subs: BoundedSubscriptions,
    /// Where replies and notifications go; handed to every subscription.
    outbox: Outbox,
    /// Bytes of this connection's requests being handled.
    pending: Arc<AtomicUsize>,
    limits: Limits,
    /// The agents this connection authenticated as; every call runs in its scope.
    caller: Arc<Caller>,
    /// This connection's turn for heavy calls.
    slot: heavy::Slot,
}

fn error_json(id: Id<'_>, code: ErrorCode) -> Box<RawValue> {
    MethodResponse::error(id, ErrorObject::from(code)).into_json()
}

impl Conn {
    /// Start one line. Its bytes count as in flight until the call is answered.
    fn handle(&self, line: bytes::BytesMut) -> Option<Reply> {
        let guard = limits::InFlight::new(line.len(), &self.pending, &self.limits.in_flight);
        let reply = self.handle_line(&line)?;
        Some(Box::pin(async move {
            let out = reply.await;
            drop(guard);
            out
        }))
    }

    /// Parse and start one line: a request, a notification (run, never answered) or a batch.
    fn handle_line(&self, line: &[u8]) -> Option<Reply> {
        let first = line.iter().find(|b| !b.is_ascii_whitespace())?;
        if *first == b'[' {
            return self.handle_batch(line);
        }
        match self.start(line, false) {
            Started::Reply(r) => Some(r),
            Started::Heavy(r) => Some(self.reserved(r)),
            Started::Now(json) => Some(Box::pin(async move { Some(json) })),
            Started::Nothing => None,
        }
    }

    /// Run a heavy call (or a batch holding one) as a task of its own, once it has
    /// reserved room for its reply ([`heavy::reserve`]); the task queues the reply itself,
    /// so what the connection's loop waits for never holds the daemon's building budget.
    fn reserved(&self, reply: Reply) -> Reply {
        let (slot, outbox, builders) = (self.slot.clone(), self.outbox.clone(), self.limits.builders.clone());
        let task = tokio::spawn(async move {
            let Ok(_room) = heavy::reserve(&slot, &outbox, &builders).await else { return };
            if let Some(json) = reply.await {
                let _ = outbox.push_reserved(json);
            }
        });
        Box::pin(async move {
            let _ = task.await;
            None
        })
    }

    fn handle_batch(&self, line: &[u8]) -> Option<Reply> {
        let items: Vec<&RawValue> = match serde_json::from_slice(line) {
            Ok(v) => v,
            Err(_) => {
                let code = if is_json(line) { ErrorCode::InvalidRequest } else { ErrorCode::ParseError };
                return Some(ready(error_json(Id::Null, code)));
            }
        };
        if items.is_empty() {
            return Some(ready(error_json(Id::Null, ErrorCode::InvalidRequest)));
        }
        let mut parts: Vec<Member> = Vec::with_capacity(items.len());
        let mut heavy = false;
        for item in items {
            let data = item.get().as_bytes();
            let id = serde_json::from_slice::<Request<'_>>(data).ok().map(|r| r.id.into_owned());
            let reply = match self.start(data, true) {
                Started::Reply(r) => r,
                Started::Heavy(r) => {
                    heavy = true;
                    r
                }
                Started::Now(json) => ready(json),
                Started::Nothing => continue,
            };
            parts.push(Member { id, reply });
        }
        if parts.is_empty() {
            return None;
        }
        if heavy {
            return Some(self.reserved(Box::pin(run_in_turn(parts))));
        }
        Some(Box::pin(async move {
            let done: Vec<Box<RawValue>> =
                futures::future::join_all(parts.into_iter().map(|m| m.reply)).await.into_iter().flatten().collect();
            join(done)
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
    /// or an error answered with the request's id when it has a usable one. Members are
    /// read as raw JSON, so valid JSON is never a parse error here, however deep it is
    /// nested or however large its numbers.
    fn not_a_request(&self, data: &[u8], in_batch: bool) -> Started {
        let obj = match serde_json::from_slice::<std::collections::HashMap<String, &RawValue>>(data) {
            Ok(obj) => obj,
            Err(_) if is_json(data) => {
                return Started::Now(error_json(Id::Null, ErrorCode::InvalidRequest));
            }
            Err(_) => return Started::Now(error_json(Id::Null, ErrorCode::ParseError)),
        };
        let text = |key: &str| obj.get(key).and_then(|v| serde_json::from_str::<String>(v.get()).ok());
        if let Some(id) = obj.get("id") {
            let id = match (serde_json::from_str::<u64>(id.get()), serde_json::from_str::<String>(id.get())) {
                (Ok(n), _) => Id::Number(n),
                (_, Ok(s)) => Id::Str(s.into()),
                _ => Id::Null,
            };
            return Started::Now(error_json(id, ErrorCode::InvalidRequest));
        }
        match (text("jsonrpc").as_deref(), text("method")) {
            // A subscription nobody can be told about is not started at all.
            (Some("2.0"), Some(method)) if self.is_subscription(&method) => Started::Nothing,
            (Some("2.0"), Some(method)) => {
                let params = obj.get("params").map(|p| p.get());
                let unanswered = |f: Reply| -> Reply {
                    Box::pin(async move {
                        let _ = f.await;
                        None
                    })
                };
                match self.dispatch(Id::Null, &method, params, in_batch) {
                    Started::Reply(f) => Started::Reply(unanswered(f)),
                    Started::Heavy(f) => Started::Heavy(unanswered(f)),
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
            MethodCallback::Sync(cb) => {
                Started::Now(caller::sync_scope(self.caller.clone(), || (cb)(id, params, max, ext)).into_json())
            }
            MethodCallback::Async(cb) => {
                let fut = caller::scope(self.caller.clone(), (cb)(id, params, self.conn_id, max, ext));
                let reply: Reply = Box::pin(async move { Some(fut.await.into_json()) });
                if heavy::is_heavy(method) { Started::Heavy(reply) } else { Started::Reply(reply) }
            }
            MethodCallback::Unsubscription(cb) => match subscription_id(raw_params) {
                Ok(_) => Started::Now((cb)(id, params, self.conn_id, max, ext).into_json()),
                Err(e) => Started::Now(MethodResponse::error(id, e).into_json()),
            },
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
                ext.insert(self.outbox.clone());
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
pub(crate) fn normalize_params<'a>(
    callback: &MethodCallback,
    raw: Option<&'a str>,
) -> Option<std::borrow::Cow<'a, str>> {
    use std::borrow::Cow;
    let trimmed = raw.map(str::trim).filter(|p| *p != "null");
    if let MethodCallback::Unsubscription(_) = callback {
        return subscription_id(raw).ok().map(|id| Cow::Owned(format!("[{id}]")));
    }
    match trimmed {
        None => Some(Cow::Borrowed("[{}]")),
        Some(p) if p.starts_with('{') => Some(Cow::Owned(format!("[{p}]"))),
        Some(p) => Some(Cow::Borrowed(p)),
    }
}

enum Started {
    /// A call whose reply is about the size of its request.
    Reply(Reply),
    /// A call whose reply may be large: it reserves room before it runs ([`heavy`]).
    Heavy(Reply),
    Now(Box<RawValue>),
    Nothing,
}

/// One member of a batch: its reply, and its id when it is a request.
struct Member {
    id: Option<Id<'static>>,
    reply: Reply,
}

/// Run a batch's members one after another. Once their replies hold a reply's worth
/// ([`crate::bound::items_budget`]), the requests left are not run: each is answered
/// with `batch_reply_too_large` (notifications, which add nothing to the reply, still run).
async fn run_in_turn(members: Vec<Member>) -> Option<Box<RawValue>> {
    let bound = crate::bound::items_budget();
    let (mut done, mut bytes) = (Vec::with_capacity(members.len()), 0);
    for m in members {
        match m.id {
            Some(id) if bytes >= bound => done.push(not_run(id, bound)),
            _ => {
                if let Some(json) = m.reply.await {
                    bytes += json.get().len() + 1;
                    done.push(json);
                }
            }
        }
    }
    join(done)
}

/// The answer of a batch member left unrun because the batch's reply was full.
fn not_run(id: Id<'static>, bound: usize) -> Box<RawValue> {
    let err = ErrorObject::owned(
        BATCH_REPLY_TOO_LARGE,
        format!(
            "this call was not run: the replies of the calls before it in the batch already hold \
             {bound} bytes; send it again, alone or in a later batch"
        ),
        Some(serde_json::json!({"code": "batch_reply_too_large", "details": {"limit": bound}})),
    );
    MethodResponse::error(id, err).into_json()
}

/// A batch's reply: its members' replies as one array (none: nothing to answer).
fn join(done: Vec<Box<RawValue>>) -> Option<Box<RawValue>> {
    if done.is_empty() {
        return None;
    }
    let joined = format!("[{}]", done.iter().map(|r| r.get()).collect::<Vec<_>>().join(","));
    RawValue::from_string(joined).ok()
}

fn ready(json: Box<RawValue>) -> Reply {
    Box::pin(async move { Some(json) })
}

/// Is `data` JSON text: UTF-8 (serde_json skips unread strings without checking it) that
/// parses? Anything else is a parse error (`-32700`), never an invalid request.
fn is_json(data: &[u8]) -> bool {
    std::str::from_utf8(data).is_ok() && serde_json::from_slice::<serde::de::IgnoredAny>(data).is_ok()
}

/// The subscription id an unsubscribe call names, in any of the forms §2.1 accepts:
/// `{"subscription": ID}`, a bare `ID` or `[ID]`, where the id is a non-negative integer
/// (what the daemon hands out). Anything else is `-32602`: jsonrpsee itself would answer
/// `false`, as if a well-formed id had simply not been open.
pub(crate) fn subscription_id(raw: Option<&str>) -> Result<u64, ErrorObject<'static>> {
    let refuse = |why: &str| {
        ErrorObject::owned(
            ErrorCode::InvalidParams.code(),
            ErrorCode::InvalidParams.message(),
            Some(format!("{why}: give the subscription id as {{\"subscription\": ID}}, ID or [ID]")),
        )
    };
    let value: serde_json::Value = match raw.map(str::trim) {
        None | Some("null") => return Err(refuse("no subscription id")),
        Some(p) => serde_json::from_str(p).map_err(|_| refuse("the params are not JSON"))?,
    };
    let id = match &value {
        serde_json::Value::Object(o) => o.get("subscription"),
        serde_json::Value::Array(a) if a.len() == 1 => a.first(),
        serde_json::Value::Array(_) => return Err(refuse("expected one subscription id")),
        v => Some(v),
    };
    id.and_then(serde_json::Value::as_u64).ok_or_else(|| refuse("the subscription id is not a non-negative integer"))
}
