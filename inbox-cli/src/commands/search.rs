//! `inbox search`: one `messages.search` call. On a terminal the matches in the snippets
//! are bold; elsewhere (a pipe, a file, `NO_COLOR`, `--json`) they are marked `**word**`.

use coord_proto::api::SearchApiClient;
use coord_proto::types::SearchParams;

use crate::cli::SearchArgs;
use crate::ctx::{Ctx, Outcome, Res};
use crate::output;

pub async fn search(ctx: &Ctx, a: SearchArgs) -> Res {
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
    };
    let r = ctx.client().await?.search(p).await?;
    ctx.print(&r, || output::search_hits(&r.hits));
    Ok(if r.hits.is_empty() { Outcome::NoMatch } else { Outcome::Done })
}
