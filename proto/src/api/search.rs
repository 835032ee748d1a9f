//! `messages.*`: full-text search over the messages of every thread.

use jsonrpsee::core::RpcResult;
use jsonrpsee::proc_macros::rpc;

use crate::types::*;

#[rpc(server, client)]
pub trait SearchApi {
    /// Ranked full-text search (SQLite FTS5, bm25) over subjects, summaries and bodies,
    /// with filters and highlighted snippets; best hits first.
    #[method(name = "messages.search")]
    async fn search(&self, params: SearchParams) -> RpcResult<SearchResult>;
}
