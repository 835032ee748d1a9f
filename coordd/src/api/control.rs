//! `control.*`, `policy.*` and `progress.*`. `control.send` is one write around
//! `ops::control::send`; `policy.set` also rewrites the hooks' snapshot file after the
//! commit; progress never touches the store (see `crate::progress`): its subscription
//! sends with `try_send`, so a subscriber that reads too slowly misses lines instead of
//! holding anyone up, and the next line it gets says how many it missed.

use coord_proto::api::ControlApiServer;
use coord_proto::types::*;
use jsonrpsee::TrySendError;
use jsonrpsee::core::{RpcResult, SubscriptionResult, async_trait};
use jsonrpsee::types::ErrorObjectOwned;
use jsonrpsee::{PendingSubscriptionSink, SubscriptionSink};
use tokio::sync::broadcast::error::RecvError;

use super::Api;
use crate::bound;
use crate::domain::inbox::control;
use crate::domain::policy;
use crate::error::Error;
use crate::net::caller;
use crate::ops;
use crate::progress;
use crate::services::policy as snapshot;

#[async_trait]
impl ControlApiServer for Api {
    async fn control_send(&self, p: ControlSendParams) -> RpcResult<ControlSendResult> {
        let from = p.from.clone();
        let overseer = caller::page().map(|page| page.overseer);
        Ok(self
            .core
            .write_as(&from, move |tx, now| ops::control::send(tx, now, p.clone(), overseer.as_deref()))
            .await?)
    }

    async fn control_requests(&self, p: RequestsParams) -> RpcResult<RequestsResult> {
        Ok(self.core.read(move |tx, now| control::requests(tx, now, p)).await?)
    }

    async fn policy_get(&self) -> RpcResult<PolicyResult> {
        let policy = self.core.read(|tx, _| policy::load(tx)).await?;
        Ok(PolicyResult { policy, file: snapshot::file(&self.core).display().to_string(), event_id: None })
    }

    async fn policy_set(&self, p: PolicySetParams) -> RpcResult<PolicyResult> {
        let (policy, event_id) = self
            .core
            .write_acting(move |tx, now, acting| {
                // The actor must be this connection's own agent, and hold the lead's role.
                acting.check(tx, &p.actor)?;
                acting.check_role(tx, "change the permission policy")?;
                policy::set(tx, now, p.clone())
            })
            .await?;
        let file = snapshot::write(&self.core, &self.snapshots).await?;
        Ok(PolicyResult { policy, file: file.display().to_string(), event_id: Some(event_id) })
    }

    async fn policy_check(&self, p: PolicyCheckParams) -> RpcResult<PolicyCheckResult> {
        let root = self.core.db_path.parent().and_then(|d| d.parent()).map(|d| d.to_path_buf()).unwrap_or_default();
        Ok(self.core.read(move |tx, _| policy::check_call(&policy::load(tx)?, &p, &root)).await?)
    }

    async fn progress_report(&self, p: ProgressParams) -> RpcResult<ProgressReportResult> {
        let seq = self.progress.report(p, self.core.clock.now().to_string())?;
        Ok(ProgressReportResult { seq })
    }

    async fn progress_recent(&self, f: ProgressFilter) -> RpcResult<ProgressRecentResult> {
        progress::check_filter(&f)?;
        let (lines, last_seq) = self.progress.recent(&f, f.after_seq.unwrap_or(0));
        let page = bound::page(lines, |l: &ProgressLine| l.seq);
        Ok(ProgressRecentResult { lines: page.items, last_seq, truncated: page.truncated, next_after: page.next_after })
    }

    async fn progress_subscribe(&self, pending: PendingSubscriptionSink, f: ProgressFilter) -> SubscriptionResult {
        // Subscribe first, then replay the history after the cursor: nothing in between is lost.
        let mut rx = self.progress.subscribe();
        let latest = self.progress.recent(&ProgressFilter::default(), u64::MAX).1;
        let checked = progress::check_filter(&f).and_then(|()| match f.after_seq {
            Some(after) if after > latest => {
                Err(Error::cursor_ahead("after_seq", "progress line", after as i64, latest as i64).to_app())
            }
            _ => Ok(()),
        });
        if let Err(e) = checked {
            pending.reject(ErrorObjectOwned::from(e)).await;
            return Ok(());
        }
        let mut feed = Feed { sink: pending.accept().await?, dropped: 0 };
        let (history, last) = match f.after_seq {
            Some(after) => self.progress.recent(&f, after),
            None => (Vec::new(), self.progress.recent(&ProgressFilter::default(), u64::MAX).1),
        };
        let mut cursor = last;
        for line in history {
            if !feed.send(line)? {
                return Ok(());
            }
        }
        loop {
            tokio::select! {
                _ = feed.sink.closed() => return Ok(()),
                msg = rx.recv() => match msg {
                    Ok(line) if line.seq <= cursor => {}
                    Ok(line) => {
                        cursor = line.seq;
                        if progress::matches(&f, &line) && !feed.send((*line).clone())? {
                            return Ok(());
                        }
                    }
                    Err(RecvError::Lagged(n)) => feed.dropped += n,
                    Err(RecvError::Closed) => return Ok(()),
                }
            }
        }
    }
}

/// One progress subscription's sink, and the lines it missed since its last delivery.
struct Feed {
    sink: SubscriptionSink,
    dropped: u64,
}

impl Feed {
    /// Hand a line over without waiting; false once the subscriber is gone.
    fn send(&mut self, mut line: ProgressLine) -> Result<bool, serde_json::Error> {
        line.dropped = self.dropped;
        match self.sink.try_send(serde_json::value::to_raw_value(&line)?) {
            Ok(()) => self.dropped = 0,
            Err(TrySendError::Full(_)) => self.dropped += 1,
            Err(TrySendError::Closed(_)) => return Ok(false),
        }
        Ok(true)
    }
}
