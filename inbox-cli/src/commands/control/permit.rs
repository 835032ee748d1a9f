//! `inbox permit`: answer a permission request.

use super::*;

/// Answer a permission request: --allow or --deny, with a reason or a changed input.
#[derive(clap::Args)]
#[command(
    after_help = "Examples:\n  inbox --agent lead permit --request msg_06c... --deny --reason \"no force pushes\"\n  inbox --agent lead permit --request msg_06c... --allow --updated-input '{\"command\":\"git push --dry-run\"}'"
)]
pub struct Args {
    /// The permission request to answer.
    #[arg(long, value_name = "REQUEST_ID")]
    pub request: String,
    /// Let the tool call run.
    #[arg(long, required_unless_present = "deny", conflicts_with = "deny")]
    pub allow: bool,
    /// Refuse it.
    #[arg(long)]
    pub deny: bool,
    /// Why (the session sees it).
    #[arg(long)]
    pub reason: Option<String>,
    /// Run this input instead (a JSON object that replaces the whole tool input).
    #[arg(long, value_name = "JSON", requires = "allow")]
    pub updated_input: Option<String>,
}

impl Command for Args {
    async fn run(self, ctx: &Ctx) -> Res {
        let a = self;
        let updated_input = a.updated_input.as_deref().map(|t| json_object("updated-input", t)).transpose()?;
        let payload =
            PermissionResponsePayload { request_id: a.request, approved: a.allow, updated_input, reason: a.reason };
        send(ctx, params(ctx, MessageType::PermissionResponse, json!(payload))?).await?;
        Ok(Outcome::Done)
    }
}
