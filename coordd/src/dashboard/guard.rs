//! The HTTP gate in front of the dashboard: every request, page, asset or WebSocket
//! upgrade, passes the same checks in this order, and a refused one gets no data.
//!
//! 1. `Host` must name this loopback listener (`127.0.0.1:PORT`, `localhost:PORT` or
//!    `[::1]:PORT`): a DNS-rebound name gets 421.
//! 2. The path must start with `/TOKEN/`, compared in constant time: 401 otherwise. The
//!    one exception is `/favicon.ico` (the embedded icon, no data), which browsers ask for
//!    at the root.
//! 3. An `Origin`, when sent (browsers always send one on a WebSocket or a POST), must be
//!    this listener's own: 403 otherwise, so no other site can drive the daemon.
//!
//! `/TOKEN/ws` (a WebSocket upgrade, or a JSON-RPC POST) goes on to jsonrpsee; anything
//! else is an embedded asset or 404. Every response carries the security headers.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use http::header::{self, HeaderValue};
use http::{Method, Response, StatusCode};
use jsonrpsee::core::BoxError;
use jsonrpsee::server::{HttpBody, HttpRequest, HttpResponse};
use subtle::ConstantTimeEq;
use tower::{Layer, Service};

use super::assets;

/// Only our own scripts, styles and WebSocket; no frames, forms, plugins or base changes.
pub const CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; \
     connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/// The path of the JSON-RPC endpoint under the token.
const RPC_PATH: &str = "ws";

#[derive(Clone)]
pub struct GuardLayer {
    rules: Arc<Rules>,
}

struct Rules {
    token: String,
    /// Accepted `Host` values.
    hosts: [String; 3],
    /// Accepted `Origin` values.
    origins: [String; 3],
}

impl GuardLayer {
    pub fn new(port: u16, token: &str) -> GuardLayer {
        let hosts = [format!("127.0.0.1:{port}"), format!("localhost:{port}"), format!("[::1]:{port}")];
        let origins = hosts.clone().map(|h| format!("http://{h}"));
        GuardLayer { rules: Arc::new(Rules { token: token.to_string(), hosts, origins }) }
    }
}

impl<S> Layer<S> for GuardLayer {
    type Service = Guard<S>;
    fn layer(&self, inner: S) -> Guard<S> {
        Guard { inner, rules: self.rules.clone() }
    }
}

#[derive(Clone)]
pub struct Guard<S> {
    inner: S,
    rules: Arc<Rules>,
}

/// What the checks decided.
enum Verdict {
    Refuse(StatusCode, &'static str),
    Asset(&'static assets::Asset),
    Redirect(String),
    Rpc,
}

impl Rules {
    fn judge(&self, req: &HttpRequest) -> Verdict {
        let host = req.headers().get(header::HOST).and_then(|h| h.to_str().ok()).unwrap_or("");
        if !self.hosts.iter().any(|h| h.eq_ignore_ascii_case(host)) {
            return Verdict::Refuse(StatusCode::MISDIRECTED_REQUEST, "unknown Host\n");
        }
        let path = req.uri().path();
        // Browsers ask for the icon at the root, without the token: it holds no data.
        if path == "/favicon.ico" && (req.method() == Method::GET || req.method() == Method::HEAD) {
            return Verdict::Asset(assets::favicon());
        }
        let rest = path.strip_prefix('/').unwrap_or(path);
        let (given, rest) = match rest.split_once('/') {
            Some((t, r)) => (t, Some(r)),
            None => (rest, None),
        };
        if !bool::from(given.as_bytes().ct_eq(self.token.as_bytes())) {
            return Verdict::Refuse(StatusCode::UNAUTHORIZED, "a valid token is required\n");
        }
        if let Some(origin) = req.headers().get(header::ORIGIN) {
            let ok = origin.to_str().is_ok_and(|o| self.origins.iter().any(|a| a.eq_ignore_ascii_case(o)));
            if !ok {
                return Verdict::Refuse(StatusCode::FORBIDDEN, "cross-origin requests are refused\n");
            }
        }
        let Some(rest) = rest else { return Verdict::Redirect(format!("/{}/", self.token)) };
        if rest == RPC_PATH {
            return Verdict::Rpc;
        }
        if req.method() != Method::GET && req.method() != Method::HEAD {
            return Verdict::Refuse(StatusCode::METHOD_NOT_ALLOWED, "method not allowed\n");
        }
        match assets::find(if rest.is_empty() { "index.html" } else { rest }) {
            Some(a) => Verdict::Asset(a),
            None => Verdict::Refuse(StatusCode::NOT_FOUND, "not found\n"),
        }
    }
}

type BoxFuture = Pin<Box<dyn Future<Output = Result<HttpResponse, BoxError>> + Send + 'static>>;

impl<S> Service<HttpRequest> for Guard<S>
where
    S: Service<HttpRequest, Response = HttpResponse, Error = BoxError> + Send + 'static,
    S::Future: Send + 'static,
{
    type Response = HttpResponse;
    type Error = BoxError;
    type Future = BoxFuture;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, req: HttpRequest) -> Self::Future {
        let response = match self.rules.judge(&req) {
            Verdict::Rpc => {
                let fut = self.inner.call(req);
                return Box::pin(async move {
                    let mut r = fut.await?;
                    secure(r.headers_mut());
                    Ok(r)
                });
            }
            Verdict::Refuse(status, text) => plain(status, text),
            Verdict::Redirect(to) => {
                let mut r = plain(StatusCode::FOUND, "");
                if let Ok(v) = HeaderValue::from_str(&to) {
                    r.headers_mut().insert(header::LOCATION, v);
                }
                r
            }
            Verdict::Asset(a) => {
                let body =
                    if req.method() == Method::HEAD { HttpBody::empty() } else { HttpBody::from(a.bytes.to_vec()) };
                let mut r = Response::new(body);
                r.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static(a.content_type));
                r
            }
        };
        let mut response = response;
        secure(response.headers_mut());
        Box::pin(async move { Ok(response) })
    }
}

fn plain(status: StatusCode, text: &'static str) -> HttpResponse {
    let mut r = Response::new(HttpBody::from(text));
    *r.status_mut() = status;
    r.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("text/plain; charset=utf-8"));
    r
}

/// The headers every response carries.
fn secure(h: &mut http::HeaderMap) {
    h.insert(header::CONTENT_SECURITY_POLICY, HeaderValue::from_static(CSP));
    h.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    h.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    h.insert(header::REFERRER_POLICY, HeaderValue::from_static("no-referrer"));
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    h.insert("cross-origin-opener-policy", HeaderValue::from_static("same-origin"));
    h.insert("cross-origin-resource-policy", HeaderValue::from_static("same-origin"));
}
