//! The socket transport's params conventions, applied to calls arriving over the dashboard's
//! WebSocket: one params object, bare (by name) or in a one-element array, or left out
//! when every field is optional; unsubscribe takes the bare id, `[id]` or
//! `{"subscription": id}`. jsonrpsee's own server would only accept the array form.
//!
//! Each connection's calls also run as that connection's caller (`crate::net::caller`): a
//! [`Page`], the overseer, authenticated by the URL's token. It writes only as the
//! overseer (with credentials required too), unless the daemon allows it more.

use std::borrow::Cow;
use std::future::Future;
use std::sync::Arc;

use jsonrpsee::Methods;
use jsonrpsee::core::middleware::{Batch, BatchEntry, Notification, RpcServiceT};
use jsonrpsee::core::server::{MethodCallback, MethodResponse};
use jsonrpsee::types::Request;
use serde_json::value::RawValue;
use tower::Layer;

use crate::net::caller::{self, Caller, Page};
use crate::net::transport::{normalize_params, subscription_id};

#[derive(Clone)]
pub struct NormalizeLayer {
    methods: Methods,
    page: Page,
}

impl NormalizeLayer {
    pub fn new(methods: Methods, page: Page) -> NormalizeLayer {
        NormalizeLayer { methods, page }
    }
}

impl<S> Layer<S> for NormalizeLayer {
    type Service = Normalize<S>;
    /// Made once per connection: the connection's caller is the page's overseer.
    fn layer(&self, inner: S) -> Normalize<S> {
        Normalize { inner, methods: self.methods.clone(), caller: Arc::new(Caller::page(self.page.clone())) }
    }
}

#[derive(Clone)]
pub struct Normalize<S> {
    inner: S,
    methods: Methods,
    caller: Arc<Caller>,
}

impl<S> Normalize<S> {
    fn fix<'a>(&self, method: &str, params: &mut Option<Cow<'a, RawValue>>) {
        let Some(callback) = self.methods.method(method) else { return };
        let raw = params.as_deref().map(RawValue::get);
        let Some(fixed) = normalize_params(callback, raw) else { return };
        if Some(fixed.as_ref()) != raw
            && let Ok(v) = RawValue::from_string(fixed.into_owned())
        {
            *params = Some(Cow::Owned(v));
        }
    }
}

impl<S> RpcServiceT for Normalize<S>
where
    S: RpcServiceT<MethodResponse = MethodResponse> + Send + Sync,
{
    type MethodResponse = S::MethodResponse;
    type NotificationResponse = S::NotificationResponse;
    type BatchResponse = S::BatchResponse;

    fn call<'a>(&self, mut req: Request<'a>) -> impl Future<Output = Self::MethodResponse> + Send + 'a {
        let method = req.method.clone();
        // An unsubscribe whose params name no subscription id is refused here: jsonrpsee
        // would answer `false`.
        let refused = match self.methods.method(&method) {
            Some(MethodCallback::Unsubscription(_)) => subscription_id(req.params.as_deref().map(RawValue::get))
                .err()
                .map(|e| (req.id.clone().into_owned(), e)),
            _ => None,
        };
        self.fix(&method, &mut req.params);
        let call = caller::scope(self.caller.clone(), self.inner.call(req));
        async move {
            match refused {
                Some((id, e)) => MethodResponse::error(id, e),
                None => call.await,
            }
        }
    }

    fn batch<'a>(&self, mut batch: Batch<'a>) -> impl Future<Output = Self::BatchResponse> + Send + 'a {
        for entry in batch.iter_mut() {
            match entry {
                Ok(BatchEntry::Call(req)) => {
                    let method = req.method.clone();
                    self.fix(&method, &mut req.params);
                }
                Ok(BatchEntry::Notification(n)) => {
                    let method = n.method.clone();
                    self.fix(&method, &mut n.params);
                }
                Err(_) => {}
            }
        }
        caller::scope(self.caller.clone(), self.inner.batch(batch))
    }

    fn notification<'a>(
        &self,
        mut n: Notification<'a>,
    ) -> impl Future<Output = Self::NotificationResponse> + Send + 'a {
        let method = n.method.clone();
        self.fix(&method, &mut n.params);
        caller::scope(self.caller.clone(), self.inner.notification(n))
    }
}
