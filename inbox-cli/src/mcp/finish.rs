//! The arguments of the MCP `done` and `fail` tools: a thread's result with its artifacts,
//! as `inbox done --artifact` takes them, located in their repository like the CLI's
//! (`crate::artifacts`).

use coord_proto::types::{ArtifactInput, FinishParams, MessageInput};
use rmcp::schemars;
use serde::Deserialize;
use serde_json::Value;

use super::InboxMcp;

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FinishArgs {
    pub(super) thread_id: String,
    /// One line.
    pub(super) summary: String,
    #[serde(default)]
    pub(super) body: Option<String>,
    /// Files to attach, as `inbox done --artifact` does; a path in a git checkout is stored
    /// relative to the repository, with the branch and commit.
    #[serde(default)]
    pub(super) artifacts: Vec<ArtifactArg>,
}

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ArtifactArg {
    /// The file, relative to your working directory (or absolute).
    path: String,
    /// file (default), report, log, patch...
    #[serde(default)]
    kind: Option<String>,
    /// A JSON object of metadata.
    #[serde(default)]
    metadata: Option<Value>,
}

impl InboxMcp {
    /// The artifacts are located in their repository (git runs off the executor threads).
    pub(super) async fn finish_params(&self, a: FinishArgs) -> FinishParams {
        let given = a
            .artifacts
            .into_iter()
            .map(|x| ArtifactInput { path: x.path, kind: x.kind, metadata_json: x.metadata })
            .collect::<Vec<_>>();
        let fallback = given.clone();
        let artifacts =
            tokio::task::spawn_blocking(move || crate::artifacts::locate_all(given)).await.unwrap_or(fallback);
        let message = MessageInput { summary: a.summary, body: a.body, artifacts, ..Default::default() };
        FinishParams { agent: self.agent.clone(), thread_id: a.thread_id, lease_token: None, message }
    }
}
