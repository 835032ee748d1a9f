//! `inbox search`: one `messages.search` call. On a terminal the matches in the snippets
//! are bold; elsewhere (a pipe, a file, `NO_COLOR`, `--json`) they are marked `**word**`.

use coord_cli::usage::one_of;
use coord_cli::{Command, Ctx, Outcome, Res};
use coord_proto::api::SearchApiClient;
use coord_proto::types::{MessageKind, SearchParams};

use crate::output;

/// Ranked full-text search over message subjects, summaries and bodies.
#[derive(clap::Args)]
#[command(
    after_help = "Examples:\n  inbox search \"auth decision\"\n  inbox search migration --run R1 --kind question,answer --since 2026-11-01T00:00:00Z --json"
)]
pub struct Args {
    /// The words to find (every one must appear; `index` also finds `indexing`).
    #[arg(required = true, value_name = "WORDS")]
    pub query: Vec<String>,
    /// Take the words as an SQLite FTS5 query: AND, OR, NOT, "phrases", prefix*,
    /// subject:word.
    #[arg(long)]
    pub fts: bool,
    /// Only this thread.
    #[arg(long, value_name = "THREAD_ID")]
    pub thread: Option<String>,
    /// Only this run.
    #[arg(long, value_name = "RUN_ID")]
    pub run: Option<String>,
    /// Only this task.
    #[arg(long, value_name = "TASK_ID")]
    pub task: Option<String>,
    /// Only these message kinds, comma-separated.
    #[arg(long, value_delimiter = ',', value_parser = one_of(MessageKind::ALL))]
    pub kind: Vec<MessageKind>,
    /// Only messages written at or after this instant (RFC 3339, e.g. 2026-11-23T09:00:00Z).
    #[arg(long, value_name = "TIME")]
    pub since: Option<String>,
    /// Only messages written before this instant (RFC 3339).
    #[arg(long, value_name = "TIME")]
    pub until: Option<String>,
    /// At most this many hits (default 20, at most 500).
    #[arg(long)]
    pub limit: Option<u32>,
}

impl Command for Args {
    fn read_only(&self) -> bool {
        true
    }

    async fn run(self, ctx: &Ctx) -> Res {
        let a = self;
        let bold = !ctx.json && coord_cli::table::colour();
        let (open, close) = if bold { ("\u{1b}[1m", "\u{1b}[0m") } else { ("**", "**") };
        let p = SearchParams {
            query: a.query.join(" "),
            syntax: a.fts.then(|| "fts5".to_string()),
            agent: ctx.explicit_agent(),
            thread_id: a.thread,
            run_id: a.run,
            task_id: a.task,
            kinds: a.kind,
            since: a.since,
            until: a.until,
            limit: a.limit,
            mark_open: Some(open.into()),
            mark_close: Some(close.into()),
            offset: None,
        };
        let c = ctx.client().await?;
        let r = coord_client::pages::all(p, |p| c.search(p)).await?;
        ctx.print(&r, || output::search_hits(&r.hits));
        Ok(Outcome::found(&r.hits))
    }
}
