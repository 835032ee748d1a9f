//! Full-text search on PostgreSQL: each message's `search_tsv` (English stemming; the
//! thread's subject weighs A, the summary B, the body C) with a GIN index, filled in
//! batches off the send path like SQLite's FTS5 index. A NULL `search_tsv` means "not
//! indexed yet"; a partial index finds those in creation order, and the rows indexed are
//! written in the indexing transaction, so a crash loses nothing.
//!
//! Plain words become one `phraseto_tsquery` each, all of which must match. SQLite's FTS5
//! query language (`syntax: "fts5"`) has no equivalent here and is refused as invalid
//! input. Ranking is `ts_rank`, negated so that lower is better as with bm25; PostgreSQL's
//! English configuration drops stop words, so a query of only stop words finds nothing.

use coord_proto::types::SearchHit;

use super::tx::{Args, PgTx};
use crate::error::{Error, Result};
use crate::store::repos::{Search, SearchQuery, SearchText};
use crate::store::rows::{self, SEARCH_HIT_COLUMNS};

/// The text search configuration (stemming as SQLite's porter tokenizer).
const CONFIG: &str = "english";
/// `ts_rank` weights, in PostgreSQL's order {D, C, B, A}: subject A, summary B, body C.
const WEIGHTS: &str = "{0.1, 0.25, 0.5, 1.0}";
/// Where `ts_headline` marks a match; replaced by the caller's markers afterwards, so a
/// marker needs no quoting in the options string.
const OPEN: &str = "\u{E000}";
const CLOSE: &str = "\u{E001}";

impl Search for PgTx<'_> {
    fn search_index_pending(&mut self, limit: u32) -> Result<u32> {
        let sql = format!(
            "UPDATE messages m SET search_tsv = \
                 setweight(to_tsvector('{CONFIG}', t.subject), 'A') || \
                 setweight(to_tsvector('{CONFIG}', m.summary), 'B') || \
                 setweight(to_tsvector('{CONFIG}', m.body), 'C') \
             FROM threads t \
             WHERE t.thread_id = m.thread_id AND m.message_id IN \
                 (SELECT message_id FROM messages WHERE search_tsv IS NULL ORDER BY seq LIMIT $1)"
        );
        let n = self.exec(&sql, &[&i64::from(limit)])?;
        Ok(u32::try_from(n).unwrap_or(u32::MAX))
    }

    fn search_pending(&self) -> Result<bool> {
        Ok(self.row("SELECT 1 FROM messages WHERE search_tsv IS NULL LIMIT 1", &[])?.is_some())
    }

    fn messages_search(&self, q: &SearchQuery) -> Result<Vec<SearchHit>> {
        let mut args = Args::default();
        let query = match &q.text {
            SearchText::Words(words) => words
                .iter()
                .map(|w| format!("phraseto_tsquery('{CONFIG}', {})", args.push(w.clone())))
                .collect::<Vec<_>>()
                .join(" && "),
            SearchText::Fts5(_) => {
                return Err(Error::invalid(
                    "syntax 'fts5' is SQLite's query language and this project's store is PostgreSQL: \
                     search with plain words (the default syntax)",
                ));
            }
        };
        let mut clauses = vec!["m.search_tsv @@ q.q".to_string()];
        if let Some(a) = &q.agent {
            let n = args.push(a.clone());
            clauses.push(format!("(m.from_agent = {n} OR m.to_agent = {n})"));
        }
        for (col, v) in [("m.thread_id", &q.thread_id), ("t.run_id", &q.run_id), ("t.task_id", &q.task_id)] {
            if let Some(v) = v {
                clauses.push(format!("{col} = {}", args.push(v.clone())));
            }
        }
        if let Some(since) = &q.since {
            clauses.push(format!("m.created_at >= {}", args.push(since.clone())));
        }
        if let Some(until) = &q.until {
            clauses.push(format!("m.created_at < {}", args.push(until.clone())));
        }
        if !q.kinds.is_empty() {
            let kinds: Vec<String> = q.kinds.iter().map(|k| k.as_str().to_string()).collect();
            clauses.push(format!("m.kind = ANY({})", args.push(kinds)));
        }
        let options = format!("StartSel=\"{OPEN}\", StopSel=\"{CLOSE}\", MaxWords=16, MinWords=6, MaxFragments=1");
        let options = args.push(options);
        let limit = args.push(i64::from(q.limit));
        // The snippet comes from the summary and body, or from the subject when only the
        // subject matches.
        let sql = format!(
            "WITH q AS (SELECT {query} AS q) \
             SELECT {SEARCH_HIT_COLUMNS}, (-ts_rank('{WEIGHTS}', m.search_tsv, q.q))::float8, \
                    CASE WHEN to_tsvector('{CONFIG}', m.summary || ' ' || m.body) @@ q.q \
                         THEN ts_headline('{CONFIG}', m.summary || ' ' || m.body, q.q, {options}) \
                         ELSE ts_headline('{CONFIG}', t.subject, q.q, {options}) END \
             FROM q, messages m JOIN threads t ON t.thread_id = m.thread_id \
             WHERE {} \
             ORDER BY 12, m.seq LIMIT {limit}",
            clauses.join(" AND ")
        );
        self.map(&sql, &args.refs(), |r| {
            let mut hit = rows::search_hit(r)?;
            hit.snippet = hit.snippet.replace(OPEN, &q.mark_open).replace(CLOSE, &q.mark_close);
            Ok(hit)
        })
    }
}
