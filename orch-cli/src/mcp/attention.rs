//! `wait_for_attention`, the lead's one wait: the next events of the run that need the
//! lead after a cursor (`crate::attention`). It is a server-side subscription, as
//! `orch wait` is: the lead never polls.

use std::time::Duration;

use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::CallToolResult;
use rmcp::{schemars, tool, tool_router};
use serde::Deserialize;
use serde_json::json;

use super::OrchMcp;

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WaitArgs {
    /// Return events after this one (default: after the last one returned, at first the session's start).
    #[serde(default)]
    after_event: Option<i64>,
    /// Give up after this many seconds (default and most: the server's bound).
    #[serde(default)]
    timeout_seconds: Option<u64>,
}

#[tool_router(router = attention_router, vis = "pub(super)")]
impl OrchMcp {
    #[tool(
        description = "Block until something needs you (a question, a request, a task done or failed, the run's \
                       end); returns those events and the cursor. Call again after acting.",
        annotations(read_only_hint = true)
    )]
    async fn wait_for_attention(&self, Parameters(a): Parameters<WaitArgs>) -> CallToolResult {
        let run_id = self.run_id();
        let timeout = a.timeout_seconds.map_or(self.max_wait, |s| Duration::from_secs(s).min(self.max_wait));
        self.run(|c| async move {
            let after = a.after_event.or(self.cursor());
            let run_id = run_id?;
            let got = crate::attention::next(&c, &run_id, after, timeout).await?;
            self.set_cursor(got.cursor);
            Ok(json!({
                "woke": !got.items.is_empty(),
                "events": got.items,
                "cursor": got.cursor,
            }))
        })
        .await
    }
}
