//! `messages.search`: the index is brought up to date, then queried (see
//! `services::search`).

use coord_proto::api::SearchApiServer;
use coord_proto::types::*;
use jsonrpsee::core::{RpcResult, async_trait};

use super::Api;
use crate::services::search;

#[async_trait]
impl SearchApiServer for Api {
    async fn search(&self, p: SearchParams) -> RpcResult<SearchResult> {
        Ok(search::search(&self.core, p).await?)
    }
}
