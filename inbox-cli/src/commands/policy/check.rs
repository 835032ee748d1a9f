//! `inbox policy check`: would this tool call be gated? Exit 0 gated, 10 not gated.

use super::*;

/// Would this tool call be gated? Exit 0 gated, 10 not gated.
#[derive(clap::Args)]
#[command(after_help = "Example:\n  inbox --agent w1 policy check --tool Bash --input '{\"command\":\"git push\"}'")]
pub struct Args {
    /// The tool name, e.g. Bash.
    #[arg(long)]
    pub tool: String,
    /// The tool input, a JSON object, e.g. '{"command":"git push"}'.
    #[arg(long, value_name = "JSON", default_value = "{}")]
    pub input: String,
    /// The session's directory, for path rules (default: the current directory).
    #[arg(long, value_name = "PATH")]
    pub cwd: Option<PathBuf>,
}

impl Command for Args {
    fn read_only(&self) -> bool {
        true
    }

    async fn run(self, ctx: &Ctx) -> Res {
        let a = self;
        let cwd = match a.cwd {
            Some(d) => d,
            None => std::env::current_dir().map_err(|e| CliError::Internal(e.to_string()))?,
        };
        let p = PolicyCheckParams {
            agent: ctx.agent()?,
            tool_name: a.tool,
            tool_input: json_object("input", &a.input)?,
            cwd: Some(cwd.display().to_string()),
        };
        let r = ctx.client().await?.policy_check(p).await?;
        ctx.print(&r, || match (&r.rule, &r.approver) {
            (Some(rule), Some(approver)) => {
                println!("gated by {}: {approver} approves", rule.tool);
                if let Some(why) = &r.reason {
                    println!("{why}");
                }
            }
            _ => println!("not gated"),
        });
        Ok(if r.gated { Outcome::Done } else { Outcome::NoMatch })
    }
}
