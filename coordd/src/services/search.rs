//! Search and its index. Messages are indexed off the send path: [`index_loop`] waits for
//! messages, then for a quiet moment (no new message for [`QUIET`], or at most [`MAX_LAG`]
//! after the first one), and indexes them in batches of [`INDEX_BATCH`], each one write
//! job that also saves the indexer's position. [`search`] first indexes whatever is still
//! waiting, so a search sees every message written before it, including those written
//! just before a crash (the position only moves with the rows it indexed).

use std::sync::Arc;
use std::time::Duration;

use coord_proto::types::{SearchParams, SearchResult};
use tokio::sync::watch;

use crate::bus::Missed;
use crate::core::Core;
use crate::domain::search;
use crate::error::Result;

/// Messages indexed per write job.
pub const INDEX_BATCH: u32 = 2000;
/// Index once no message came for this long.
pub const QUIET: Duration = Duration::from_millis(200);
/// ... or at the latest this long after the first message waiting.
pub const MAX_LAG: Duration = Duration::from_secs(10);

/// Index everything not indexed yet.
async fn catch_up(core: &Core) -> Result<()> {
    if !core.read(|tx, _| search::pending(tx)).await? {
        return Ok(());
    }
    while core.write(|tx, _| search::index(tx, INDEX_BATCH)).await? == INDEX_BATCH {}
    Ok(())
}

/// `messages.search`.
pub async fn search(core: &Core, p: SearchParams) -> Result<SearchResult> {
    let q = search::query(p)?;
    catch_up(core).await?;
    let hits = core.read(move |tx, _| search::find(tx, &q)).await?;
    Ok(SearchResult { hits })
}

/// The next published event that recorded a message; `None` when the bus is gone.
async fn next_message(bus: &mut crate::bus::BusReceiver) -> Option<()> {
    loop {
        match bus.recv().await {
            Ok(p) if p.event.message_id.is_some() => return Some(()),
            Ok(_) => {}
            Err(Missed::Lagged(_)) => return Some(()),
            Err(Missed::Closed) => return None,
        }
    }
}

/// The indexer: catch up at start-up (messages written before a crash), then after every
/// burst of messages. With `COORDD_SEARCH_INDEX=on-demand` it does not run: each search
/// indexes what it needs (how `coord-bench` measures what the indexer costs the sends).
pub async fn index_loop(core: Arc<Core>, mut shutdown: watch::Receiver<bool>) {
    if std::env::var("COORDD_SEARCH_INDEX").is_ok_and(|v| v == "on-demand") {
        tracing::info!("search index: built on demand by each search (COORDD_SEARCH_INDEX=on-demand)");
        return;
    }
    let mut bus = core.bus.subscribe();
    loop {
        if let Err(e) = catch_up(&core).await {
            tracing::warn!(error = %e, "cannot index messages for search (searches index them instead)");
        }
        tokio::select! {
            _ = shutdown.changed() => return,
            m = next_message(&mut bus) => if m.is_none() { return },
        }
        let deadline = tokio::time::Instant::now() + MAX_LAG;
        loop {
            tokio::select! {
                _ = shutdown.changed() => return,
                _ = tokio::time::sleep_until(deadline) => break,
                r = tokio::time::timeout(QUIET, next_message(&mut bus)) => match r {
                    Err(_) => break,
                    Ok(Some(())) => {}
                    Ok(None) => return,
                },
            }
        }
    }
}
