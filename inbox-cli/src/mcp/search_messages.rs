//! The `search_messages` tool: ranked full-text search over the messages of every thread
//! (`messages.search`), with matches marked `**like this**` in the snippets. A router of
//! its own, added to the main one in `InboxMcp::serve`.

use coord_proto::api::SearchApiClient;
use coord_proto::types::*;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::CallToolResult;
use rmcp::{schemars, tool, tool_router};
use serde::Deserialize;
use serde_json::json;

use super::{InboxMcp, ToolError};

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SearchArgs {
    /// Words to find (every one must appear; `index` also finds `indexing`).
    query: String,
    /// Only messages from or to this agent.
    #[serde(default)]
    agent: Option<String>,
    #[serde(default)]
    thread_id: Option<String>,
    #[serde(default)]
    run_id: Option<String>,
    #[serde(default)]
    task_id: Option<String>,
    /// Only these kinds: task, progress, question, answer, result, control, event.
    #[serde(default)]
    kinds: Vec<String>,
    /// Only messages written at or after this RFC 3339 instant.
    #[serde(default)]
    since: Option<String>,
    /// At most this many hits (default 20).
    #[serde(default)]
    limit: Option<u32>,
}

#[tool_router(router = search_router, vis = "pub(super)")]
impl InboxMcp {
    #[tool(
        description = "Search every thread's messages (subject, summary, body), best matches first, with the \
                       matching passage marked **like this**. Use it to find earlier decisions and answers.",
        annotations(read_only_hint = true)
    )]
    async fn search_messages(&self, Parameters(a): Parameters<SearchArgs>) -> CallToolResult {
        let kinds: Result<Vec<MessageKind>, ToolError> =
            a.kinds.iter().map(|k| k.parse().map_err(|e| ToolError::invalid(format!("kinds: {e}")))).collect();
        self.run(|c| async move {
            let p = SearchParams {
                query: a.query,
                agent: a.agent,
                thread_id: a.thread_id,
                run_id: a.run_id,
                task_id: a.task_id,
                kinds: kinds?,
                since: a.since,
                limit: a.limit,
                ..Default::default()
            };
            let hits: Vec<_> = coord_client::pages::all(p, |p| c.search(p))
                .await?
                .hits
                .into_iter()
                .map(|h| {
                    json!({"message_id": h.message_id, "thread_id": h.thread_id, "task_id": h.task_id,
                           "subject": h.subject, "from": h.from_agent, "to": h.to_agent, "kind": h.kind,
                           "summary": h.summary, "snippet": h.snippet, "sent_at": h.created_at})
                })
                .collect();
            Ok(json!({"count": hits.len(), "hits": hits}))
        })
        .await
    }
}
