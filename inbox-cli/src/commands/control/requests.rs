//! `inbox requests`: requests (permission, shutdown, plan approval).

use super::*;

/// Requests (permission, shutdown, plan approval): open ones addressed to you by default.
#[derive(clap::Args)]
#[command(after_help = "Examples:\n  inbox --agent lead requests\n  inbox --agent lead requests --run R1 --all --json")]
pub struct Args {
    /// Requests addressed to this agent (default: to you, --agent, unless --from or --run).
    #[arg(long)]
    pub to: Option<String>,
    /// Requests made by this agent.
    #[arg(long)]
    pub from: Option<String>,
    /// Requests of this run.
    #[arg(long, value_name = "RUN_ID")]
    pub run: Option<String>,
    /// Only these request types, comma-separated.
    #[arg(long = "type", value_name = "TYPE", value_delimiter = ',')]
    pub types: Vec<String>,
    /// One request by id.
    #[arg(long, value_name = "REQUEST_ID")]
    pub request: Option<String>,
    /// Also answered and cancelled requests, newest first.
    #[arg(long)]
    pub all: bool,
    /// At most this many (default 50).
    #[arg(long)]
    pub limit: Option<u32>,
}

impl Command for Args {
    fn read_only(&self) -> bool {
        true
    }

    async fn run(self, ctx: &Ctx) -> Res {
        let a = self;
        let mine = a.to.is_none() && a.from.is_none() && a.run.is_none() && a.request.is_none();
        let p = RequestsParams {
            request_id: a.request,
            to: if mine {
                Some(ctx.agent.clone().ok_or_else(|| {
                    CliError::Invalid(
                        "--agent is required to list the requests to you (or filter with --to, --from, --run or --request)"
                            .into(),
                    )
                })?)
            } else {
                a.to
            },
            from: a.from,
            run_id: a.run,
            types: a.types,
            include_closed: a.all,
            limit: a.limit,
            after: None,
        };
        let c = ctx.client().await?;
        let r = coord_client::pages::all(p, |p| c.control_requests(p)).await?;
        ctx.print(&r, || print_requests(&r.requests));
        Ok(if r.requests.is_empty() { Outcome::NoMatch } else { Outcome::Done })
    }
}
