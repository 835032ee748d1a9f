//! `orch.*` of the merge queue and review (`OrchQueueApi`). The queue's calls and a run's
//! settings are the run's creator's (or the lead's or an admin's), as every run write;
//! review actions also the dashboard's page, as its overseer ([`Api::reviewer`]).

use coord_proto::api::OrchQueueApiServer;
use coord_proto::types::*;
use jsonrpsee::core::{RpcResult, async_trait};

use super::Api;
use crate::domain::check;
use crate::domain::orch::{edit, model, review};
use crate::net::caller;
use crate::services::{diff, merge_queue, review as reviews};

#[async_trait]
impl OrchQueueApiServer for Api {
    async fn run_edit(&self, p: RunEditParams) -> RpcResult<RunView> {
        self.own_run(&p.run_id).await?;
        Ok(self.core.write(move |tx, now| edit::edit_run(tx, now, p.clone())).await?)
    }

    async fn queue_next(&self, p: QueueNextParams) -> RpcResult<QueueNextResult> {
        self.own_run(&p.run_id).await?;
        Ok(merge_queue::next(&self.core, p).await?)
    }

    async fn queue_report(&self, p: QueueReportParams) -> RpcResult<QueueReportResult> {
        self.own_run(&p.run_id).await?;
        Ok(merge_queue::report(&self.core, p).await?)
    }

    async fn diff(&self, p: DiffParams) -> RpcResult<TaskDiff> {
        Ok(diff::diff(&self.core, p).await?)
    }

    async fn review_comment(&self, p: ReviewCommentParams) -> RpcResult<ReviewComment> {
        let author = self.reviewer(&p.run_id, p.author.clone()).await?;
        Ok(self.core.write(move |tx, now| review::comment(tx, now, p.clone(), &author)).await?)
    }

    async fn review_approve(&self, p: ReviewParams) -> RpcResult<ReviewResult> {
        let by = self.reviewer(&p.run_id, p.author.clone()).await?;
        Ok(self.core.write(move |tx, now| review::approve(tx, now, &p, &by)).await?)
    }

    async fn review_request_changes(&self, p: ReviewParams) -> RpcResult<ReviewResult> {
        let by = self.reviewer(&p.run_id, p.author.clone()).await?;
        Ok(reviews::request_changes(&self.core, p, by).await?)
    }
}

impl Api {
    /// Who reviews run `run_id`: `author`, else the dashboard page's overseer, else the
    /// run's creator. The connection must write as them; and, unless it is the page (the
    /// overseer, as itself, may review any run), own the run (its creator, the lead or an
    /// admin).
    async fn reviewer(&self, run_id: &str, author: Option<String>) -> crate::error::Result<String> {
        let (page, acting, run_id) = (caller::page(), caller::acting(), run_id.to_string());
        self.core
            .read(move |tx, _| {
                let run = model::load_run(tx, &run_id)?;
                let author = author.clone().or_else(|| page.as_ref().map(|p| p.overseer.clone()));
                let author = author.unwrap_or_else(|| run.created_by.clone());
                check::agent("author", &author)?;
                acting.check(tx, &author)?;
                // The overseer may review any run; anyone else, the page acting as an agent
                // whose secret it presented included, must own it.
                if page.as_ref().is_none_or(|p| p.overseer != author) {
                    acting.check_owner(tx, &run.created_by, &format!("run {run_id}"))?;
                }
                Ok(author)
            })
            .await
    }
}
