//! The steering tools of `orch mcp`: answer a question, list and answer the workers'
//! requests, retry, reassign, cancel, shut a worker down, start and read a council, merge,
//! finish the run.

use coord_cli::requests::{Answer, response};
use coord_proto::api::{ControlApiClient, OrchApiClient};
use coord_proto::types::*;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::CallToolResult;
use rmcp::{schemars, tool, tool_router};
use serde::Deserialize;
use serde_json::{Value, json};

use super::{OrchMcp, ToolError};

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AnswerArgs {
    /// The blocked task.
    task_id: String,
    /// The answer, in a line.
    summary: String,
    #[serde(default)]
    body: Option<String>,
}

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RespondArgs {
    /// From requests.
    request_id: String,
    /// Allow / approve / agree (false: deny, reject, refuse).
    approve: bool,
    /// Why; the worker sees it.
    #[serde(default)]
    reason: Option<String>,
}

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RetryArgs {
    task_id: String,
    /// Another worker (default: the same).
    #[serde(default)]
    to: Option<String>,
}

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReassignArgs {
    task_id: String,
    /// The new worker.
    to: String,
}

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CancelArgs {
    /// The task (default: the whole run).
    #[serde(default)]
    task_id: Option<String>,
    reason: String,
}

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ShutdownArgs {
    /// The task whose worker stops.
    task_id: String,
    #[serde(default)]
    reason: Option<String>,
}

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CouncilStartArgs {
    /// What the reviewers judge.
    topic: String,
    #[serde(default)]
    body: Option<String>,
    /// Reviewer agents (default: three).
    #[serde(default)]
    reviewers: Vec<String>,
}

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CouncilArgs {
    council_id: String,
}

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MergeArgs {
    /// One done task (default: every done one, in dependency order).
    #[serde(default)]
    task_id: Option<String>,
}

fn dispatched(r: DispatchResult) -> Value {
    let d: Vec<Value> = r
        .dispatches
        .iter()
        .map(|d| json!({"task_id": d.task_id, "attempt": d.attempt, "worker": d.assigned_to}))
        .collect();
    json!({"dispatched": d, "event_id": r.event_id})
}

#[tool_router(router = steer_router, vis = "pub(super)")]
impl OrchMcp {
    #[tool(description = "Answer a blocked task's question; its worker carries on.")]
    async fn answer(&self, Parameters(a): Parameters<AnswerArgs>) -> CallToolResult {
        let run_id = self.run_id();
        self.run(|c| async move {
            let run_id = run_id?;
            let from = self.lead(&c, &run_id).await?;
            let message = MessageInput { summary: a.summary, body: a.body, ..Default::default() };
            let r = c.answer(AnswerParams { run_id, task_id: a.task_id, from: Some(from), message }).await?;
            Ok(json!({"thread_id": r.thread.thread_id, "to": r.message.to_agent, "event_id": r.event_id}))
        })
        .await
    }

    #[tool(
        description = "The workers' open requests: permissions (a tool call to allow or deny), plans, shutdowns.",
        annotations(read_only_hint = true)
    )]
    async fn requests(&self) -> CallToolResult {
        let run_id = self.run_id();
        self.run(|c| async move {
            let p = RequestsParams { run_id: Some(run_id?), ..Default::default() };
            let r = coord_client::pages::all(p, |p| c.control_requests(p)).await?;
            let list: Vec<Value> = r
                .requests
                .iter()
                .map(|q| {
                    json!({"request_id": q.request_id, "type": q.msg_type, "from": q.from, "task_id": q.task_id,
                           "summary": q.summary, "payload": q.payload})
                })
                .collect();
            Ok(json!({"requests": list}))
        })
        .await
    }

    #[tool(description = "Answer a request: approve true/false, with a reason the worker sees.")]
    async fn respond(&self, Parameters(a): Parameters<RespondArgs>) -> CallToolResult {
        let run_id = self.run_id();
        self.run(|c| async move {
            let run_id = run_id?;
            let q =
                RequestsParams { request_id: Some(a.request_id.clone()), include_closed: true, ..Default::default() };
            let request = c
                .control_requests(q)
                .await?
                .requests
                .into_iter()
                .next()
                .ok_or_else(|| ToolError::not_found(format!("request '{}' not found", a.request_id)))?;
            let answer = Answer { approve: a.approve, reason: a.reason, ..Default::default() };
            let (t, payload) = response(&request.msg_type, &a.request_id, answer).map_err(ToolError::invalid)?;
            let from = self.lead(&c, &run_id).await?;
            let p = ControlSendParams { from, msg_type: t.as_str().to_string(), payload, ..Default::default() };
            let r = c.control_send(p).await?;
            Ok(json!({"answered": request.request_id, "type": t, "event_id": r.event_id}))
        })
        .await
    }

    #[tool(description = "A new attempt for a failed or cancelled task.")]
    async fn retry(&self, Parameters(a): Parameters<RetryArgs>) -> CallToolResult {
        let run_id = self.run_id();
        self.run(|c| async move {
            Ok(dispatched(c.retry(RetryParams { run_id: run_id?, task_id: a.task_id, to: a.to }).await?))
        })
        .await
    }

    #[tool(description = "Move a task being worked on to another worker.")]
    async fn reassign(&self, Parameters(a): Parameters<ReassignArgs>) -> CallToolResult {
        let run_id = self.run_id();
        self.run(|c| async move {
            Ok(dispatched(c.reassign(ReassignParams { run_id: run_id?, task_id: a.task_id, to: Some(a.to) }).await?))
        })
        .await
    }

    #[tool(description = "Cancel a task, or the whole run; their sessions stop.")]
    async fn cancel(&self, Parameters(a): Parameters<CancelArgs>) -> CallToolResult {
        let run_id = self.run_id();
        self.run(|c| async move {
            let v = c.orch_cancel(CancelTaskParams { run_id: run_id?, task_id: a.task_id, reason: a.reason }).await?;
            Ok(json!({"run_status": v.run.status, "event_id": v.event_id}))
        })
        .await
    }

    #[tool(description = "Ask a task's worker to stop; the task is blocked once it agrees.")]
    async fn shutdown_worker(&self, Parameters(a): Parameters<ShutdownArgs>) -> CallToolResult {
        let run_id = self.run_id();
        self.run(|c| async move {
            let run_id = run_id?;
            let t = c
                .task_show(TaskShowParams { run_id: run_id.clone(), task_id: a.task_id.clone(), after_attempt: None })
                .await?;
            let worker = t
                .attempts
                .iter()
                .max_by_key(|at| at.attempt)
                .map(|at| at.worker.clone())
                .ok_or_else(|| ToolError::invalid(format!("task '{}' has no worker yet", a.task_id)))?;
            let payload = json!(ShutdownRequestPayload { reason: a.reason, ..Default::default() });
            let p = ControlSendParams {
                from: self.lead(&c, &run_id).await?,
                msg_type: MessageType::ShutdownRequest.as_str().to_string(),
                to: Some(worker.clone()),
                payload,
                run_id: Some(run_id),
                task_id: Some(a.task_id),
                ..Default::default()
            };
            let r = c.control_send(p).await?;
            let request_id = r.request_id.unwrap_or(r.message.message_id);
            Ok(json!({"request_id": request_id, "to": worker, "event_id": r.event_id}))
        })
        .await
    }

    #[tool(description = "Start a council: reviewers brainstorm on a topic, then vote. Read it with council.")]
    async fn start_council(&self, Parameters(a): Parameters<CouncilStartArgs>) -> CallToolResult {
        let run_id = self.run_id();
        self.run(|c| async move {
            let p = CouncilStartParams { run_id: run_id?, topic: a.topic, body: a.body, reviewers: a.reviewers };
            let k = c.council_start(p).await?;
            Ok(json!({"council_id": k.council_id, "phase": k.phase}))
        })
        .await
    }

    #[tool(description = "A council's phase, members and voted groups.", annotations(read_only_hint = true))]
    async fn council(&self, Parameters(a): Parameters<CouncilArgs>) -> CallToolResult {
        let run_id = self.run_id();
        self.run(|c| async move {
            Ok(json!(
                c.council_show(CouncilRef { run_id: run_id?, council_id: a.council_id, after_group: None }).await?
            ))
        })
        .await
    }

    #[tool(
        description = "Merge done code tasks into the run's integration branch (with a verify command: queued); conflicts are reported."
    )]
    async fn merge(&self, Parameters(a): Parameters<MergeArgs>) -> CallToolResult {
        let run_id = self.run_id();
        self.run(|c| async move {
            let r = c.merge(MergeParams { run_id: run_id?, task_id: a.task_id }).await?;
            let queued: Vec<_> =
                r.queued.iter().map(|q| json!({"task_id": q.task_id, "position": q.position})).collect();
            Ok(json!({"merged": r.merged, "queued": queued, "event_id": r.event_id}))
        })
        .await
    }

    #[tool(description = "Finish the run once every task is merged: its branch goes into the base branch.")]
    async fn finish_run(&self) -> CallToolResult {
        let run_id = self.run_id();
        self.run(|c| async move {
            let r = c.run_finish(RunFinishParams { run_id: run_id?, into: None }).await?;
            Ok(json!({"run_status": r.run.status, "into": r.into, "commit": r.commit}))
        })
        .await
    }
}
