//! The review tools of `orch mcp` (issue 36): read a task's diff, comment on its lines, and
//! approve it (it may merge) or request changes (the comments go to its worker as one
//! message with `file:line` anchors). The lead writes as itself (`--as`, else the run's
//! creator); the daemon refuses anyone else.

use coord_proto::api::OrchQueueApiClient;
use coord_proto::types::*;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::CallToolResult;
use rmcp::{schemars, tool, tool_router};
use serde::Deserialize;
use serde_json::json;

use super::OrchMcp;

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DiffArgs {
    task_id: String,
    /// base (default: what the task changed) or integration (what merging it changes).
    #[serde(default)]
    against: Option<DiffAgainst>,
    /// Only this file.
    #[serde(default)]
    path: Option<String>,
    /// A next_after from an earlier page.
    #[serde(default)]
    after: Option<String>,
}

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CommentArgs {
    task_id: String,
    /// As the diff names it.
    path: String,
    /// In the new file.
    line: u32,
    body: String,
}

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReviewArgs {
    task_id: String,
    /// true: it may merge; false: request changes.
    approve: bool,
    /// A word for the worker.
    #[serde(default)]
    summary: Option<String>,
}

#[tool_router(router = review_router, vis = "pub(super)")]
impl OrchMcp {
    #[tool(
        description = "A task's diff (files, hunks) with the review comments under their lines.",
        annotations(read_only_hint = true)
    )]
    async fn diff(&self, Parameters(a): Parameters<DiffArgs>) -> CallToolResult {
        let run_id = self.run_id();
        self.run(|c| async move {
            let p = DiffParams {
                run_id: run_id?,
                task_id: a.task_id,
                attempt: None,
                against: a.against,
                path: a.path,
                after: a.after,
            };
            let d = c.diff(p).await?;
            Ok(json!({"diff": crate::render_queue::diff_text(&d), "next_after": d.next_after}))
        })
        .await
    }

    #[tool(description = "Comment on a line of a task's diff; review sends the comments.")]
    async fn comment(&self, Parameters(a): Parameters<CommentArgs>) -> CallToolResult {
        let run_id = self.run_id();
        self.run(|c| async move {
            let run_id = run_id?;
            let author = Some(self.lead(&c, &run_id).await?);
            let p = ReviewCommentParams {
                run_id,
                task_id: a.task_id,
                attempt: None,
                path: a.path,
                line: a.line,
                side: None,
                body: a.body,
                author,
            };
            let r = c.review_comment(p).await?;
            Ok(json!({"comment_id": r.comment_id, "attempt": r.attempt}))
        })
        .await
    }

    #[tool(description = "Approve a done task (it may merge), or request changes: the comments go to its worker.")]
    async fn review(&self, Parameters(a): Parameters<ReviewArgs>) -> CallToolResult {
        let run_id = self.run_id();
        self.run(|c| async move {
            let run_id = run_id?;
            let author = Some(self.lead(&c, &run_id).await?);
            let p = ReviewParams { run_id, task_id: a.task_id, summary: a.summary, author };
            let r = if a.approve { c.review_approve(p).await? } else { c.review_request_changes(p).await? };
            let queue = r.candidate.map(|q| json!({"state": q.state, "position": q.position}));
            Ok(json!({"task_status": r.task.status, "sent_comments": r.comments.len(), "queue": queue,
                      "attempt": r.returned.map(|d| d.attempt), "event_id": r.event_id}))
        })
        .await
    }
}
