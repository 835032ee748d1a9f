//! The team-control tools of `inbox mcp`, kept to two: `requests` (the open requests
//! addressed to this agent: permissions, plans, shutdowns) and `respond` (answer one: allow
//! or deny a permission, approve or reject a plan, acknowledge or refuse a shutdown).

use coord_cli::requests::{Answer, response};
use coord_proto::api::ControlApiClient;
use coord_proto::types::*;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::CallToolResult;
use rmcp::{schemars, tool, tool_router};
use serde::Deserialize;
use serde_json::{Value, json};

use super::{InboxMcp, ToolError};

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RespondArgs {
    /// The request's id (from `requests`).
    request_id: String,
    /// Allow the permission / approve the plan / agree to shut down (false: deny, reject, refuse).
    approve: bool,
    /// Why; for a permission or a refused shutdown, the requester sees it.
    #[serde(default)]
    reason: Option<String>,
    /// For a plan: what to change.
    #[serde(default)]
    feedback: Option<String>,
    /// For a permission you allow: the tool input to run instead (replaces it whole).
    #[serde(default)]
    updated_input: Option<Value>,
}

fn request_view(q: &RequestView) -> Value {
    json!({
        "request_id": q.request_id, "type": q.msg_type, "from": q.from, "summary": q.summary,
        "payload": q.payload, "thread_id": q.thread_id, "sent_at": q.created_at,
    })
}

#[tool_router(router = control_router, vis = "pub(super)")]
impl InboxMcp {
    #[tool(
        description = "Open requests waiting for your answer: permission requests (a tool call to allow or \
                          deny), plan approvals, shutdown requests. Answer each with respond.",
        annotations(read_only_hint = true)
    )]
    async fn requests(&self) -> CallToolResult {
        let p = RequestsParams { to: Some(self.agent.clone()), ..Default::default() };
        self.run(|c| async move {
            let r = coord_client::pages::all(p, |p| c.control_requests(p)).await?;
            Ok(json!({"requests": r.requests.iter().map(request_view).collect::<Vec<_>>()}))
        })
        .await
    }

    #[tool(description = "Answer a request addressed to you: approve true/false. A permission: allow or deny \
                          (reason; updated_input to change what runs). A plan: approve or reject (feedback). \
                          A shutdown: agree (then stop working) or refuse (reason).")]
    async fn respond(&self, Parameters(a): Parameters<RespondArgs>) -> CallToolResult {
        let from = self.agent.clone();
        self.run(|c| async move {
            let q = RequestsParams { request_id: Some(a.request_id.clone()), include_closed: true, ..Default::default() };
            let request = c.control_requests(q).await?.requests.into_iter().next().ok_or_else(|| ToolError::not_found(format!("request '{}' not found", a.request_id)))?;
            let answer = Answer {
                approve: a.approve,
                reason: a.reason,
                feedback: a.feedback,
                updated_input: a.updated_input,
            };
            let (t, payload) = response(&request.msg_type, &a.request_id, answer).map_err(ToolError::invalid)?;
            let p = ControlSendParams { from, msg_type: t.as_str().to_string(), payload, ..Default::default() };
            let r = c.control_send(p).await?;
            Ok(json!({"answered": request.request_id, "type": t, "thread_id": r.thread.thread_id, "event_id": r.event_id}))
        })
        .await
    }
}
