//! `orch.reviewRequestChanges`: decided on a read (`domain::orch::review::changes`); a
//! live attempt gets the comments in its thread in one write, a done task not merged yet
//! goes back to its worker with them (`services::returns`, git off the writer).

use coord_proto::types::*;

use super::returns::send_back;
use crate::core::Core;
use crate::domain::orch::review::{self, Changes};
use crate::domain::orch::{model, queue};
use crate::error::Result;
use crate::ops;

/// `orch.reviewRequestChanges`, as `by`.
pub async fn request_changes(core: &Core, p: ReviewParams, by: String) -> Result<ReviewResult> {
    let (q, b) = (p.clone(), by.clone());
    let changes = core.read(move |tx, _| review::changes(tx, &q, &b)).await?;
    let (comments, returned, message_id, event_id) = match changes {
        Changes::Live { task, attempt, comments } => {
            let (c, summary) = (comments.clone(), p.summary.clone());
            let (m, id) = core
                .write(move |tx, now| {
                    ops::returns::changes_live(tx, now, (&task, &attempt), &by, summary.as_deref(), &c)
                })
                .await?;
            (comments, None, Some(m), id)
        }
        Changes::Return { plan, cause } => {
            let comments = match &cause {
                crate::domain::orch::returns::Cause::Changes { comments, .. } => comments.clone(),
                _ => Vec::new(),
            };
            let sent = send_back(core, &p.run_id, &p.task_id, plan.prev.attempt, cause).await?;
            (comments, sent.returned, sent.message_id, sent.event_id)
        }
    };
    let (r, t) = (p.run_id.clone(), p.task_id.clone());
    let (task, candidate) = core
        .read(move |tx, _| {
            let task = model::load_task(tx, &r, &t)?;
            let candidate = queue::latest(tx, &task)?;
            Ok((task, candidate))
        })
        .await?;
    Ok(ReviewResult { task, candidate, comments, returned, message_id, event_id })
}
