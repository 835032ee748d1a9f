//! Full-text search on SQLite: the FTS5 table `messages_fts` (bm25 ranking, external
//! content read through the `search_docs` view, so no text is stored twice), fed in
//! batches off the send path (see `services::background::search_index`). The position of
//! the indexer, `search_state.indexed_rowid` (a message's rowid: messages are only ever
//! appended, by the one writer), moves in the same transaction as the rows it indexed.

use coord_proto::types::SearchHit;
use rusqlite::{params, params_from_iter, types::Value as SqlValue};

use super::tx::SqliteTx;
use crate::error::Result;
use crate::store::repos::{Search, SearchQuery, SearchText};
use crate::store::rows::{self, SEARCH_HIT_COLUMNS};

/// Column weights for bm25: a match in the subject counts most, then the summary.
const WEIGHTS: &str = "4.0, 2.0, 1.0";
/// Tokens around a match in a snippet.
const SNIPPET_TOKENS: u32 = 16;

/// The FTS5 query: plain words each quoted as a phrase (so none can fail to parse), all of
/// which must match; an FTS5 query as written.
fn fts5_query(text: &SearchText) -> String {
    match text {
        SearchText::Words(words) => {
            words.iter().map(|w| format!("\"{}\"", w.replace('"', "\"\""))).collect::<Vec<_>>().join(" ")
        }
        SearchText::Fts5(q) => q.clone(),
    }
}

impl Search for SqliteTx<'_> {
    fn search_index_pending(&mut self, limit: u32) -> Result<u32> {
        let from: i64 = self
            .conn
            .prepare_cached("SELECT value FROM search_state WHERE key = 'indexed_rowid'")?
            .query_row([], |r| r.get(0))?;
        let mut read = self.conn.prepare_cached(
            "SELECT doc_id, subject, summary, body FROM search_docs WHERE doc_id > ?1 ORDER BY doc_id LIMIT ?2",
        )?;
        let rows = read.query_map(params![from, limit], |r| {
            Ok((r.get::<_, i64>(0)?, r.get::<_, String>(1)?, r.get::<_, String>(2)?, r.get::<_, String>(3)?))
        })?;
        let mut insert = self
            .conn
            .prepare_cached("INSERT INTO messages_fts (rowid, subject, summary, body) VALUES (?1, ?2, ?3, ?4)")?;
        let (mut n, mut last) = (0u32, from);
        for row in rows {
            let (id, subject, summary, body) = row?;
            insert.execute(params![id, subject, summary, body])?;
            (n, last) = (n + 1, id);
        }
        if n > 0 {
            self.conn
                .prepare_cached("UPDATE search_state SET value = ?1 WHERE key = 'indexed_rowid'")?
                .execute([last])?;
        }
        Ok(n)
    }

    fn search_pending(&self) -> Result<bool> {
        Ok(self
            .conn
            .prepare_cached(
                "SELECT 1 FROM messages WHERE rowid > (SELECT value FROM search_state WHERE key = 'indexed_rowid')",
            )?
            .exists([])?)
    }

    fn messages_search(&self, q: &SearchQuery) -> Result<Vec<SearchHit>> {
        let mut args: Vec<SqlValue> = vec![
            fts5_query(&q.text).into(),
            q.mark_open.clone().into(),
            q.mark_close.clone().into(),
            q.agent.clone().map_or(SqlValue::Null, SqlValue::Text),
            q.thread_id.clone().map_or(SqlValue::Null, SqlValue::Text),
            q.run_id.clone().map_or(SqlValue::Null, SqlValue::Text),
            q.task_id.clone().map_or(SqlValue::Null, SqlValue::Text),
            q.since.clone().map_or(SqlValue::Null, SqlValue::Text),
            q.until.clone().map_or(SqlValue::Null, SqlValue::Text),
            i64::from(q.limit).into(),
        ];
        let kinds = if q.kinds.is_empty() {
            String::new()
        } else {
            let start = args.len() + 1;
            args.extend(q.kinds.iter().map(|k| SqlValue::Text(k.as_str().into())));
            format!(" AND m.kind IN ({})", super::tx::marks(start, q.kinds.len()))
        };
        let sql = format!(
            "SELECT {SEARCH_HIT_COLUMNS}, bm25(messages_fts, {WEIGHTS}) AS score, \
                    snippet(messages_fts, -1, ?2, ?3, '…', {SNIPPET_TOKENS}) \
             FROM messages_fts \
             JOIN messages m ON m.rowid = messages_fts.rowid \
             JOIN threads t ON t.thread_id = m.thread_id \
             WHERE messages_fts MATCH ?1 \
               AND (?4 IS NULL OR m.from_agent = ?4 OR m.to_agent = ?4) \
               AND (?5 IS NULL OR m.thread_id = ?5) \
               AND (?6 IS NULL OR t.run_id = ?6) \
               AND (?7 IS NULL OR t.task_id = ?7) \
               AND (?8 IS NULL OR m.created_at >= ?8) \
               AND (?9 IS NULL OR m.created_at < ?9){kinds} \
             ORDER BY score LIMIT ?10"
        );
        let mut stmt = self.conn.prepare_cached(&sql)?;
        // The statement is prepared: a plain SQLITE_ERROR while it runs is FTS5 refusing
        // the query (`fts5: syntax error…`, `unterminated string`, `no such column`), the
        // caller's mistake; anything else (I/O, corruption, a busy database) is storage's.
        let bad_query = |e: rusqlite::Error| match &e {
            rusqlite::Error::SqliteFailure(f, m) if f.code == rusqlite::ErrorCode::Unknown => {
                let m = m.as_deref().unwrap_or("syntax error");
                crate::error::Error::invalid(format!("the search query is not valid FTS5 syntax: {m}"))
            }
            _ => e.into(),
        };
        let mut found = stmt.query(params_from_iter(args)).map_err(bad_query)?;
        let mut hits = Vec::new();
        while let Some(r) = found.next().map_err(bad_query)? {
            hits.push(rows::search_hit(r)?);
        }
        Ok(hits)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_become_quoted_phrases() {
        let words = |ws: &[&str]| SearchText::Words(ws.iter().map(|w| w.to_string()).collect());
        assert_eq!(fts5_query(&words(&["auth", "decision"])), r#""auth" "decision""#);
        assert_eq!(fts5_query(&words(&["say", r#""hi""#, "a:b"])), r##""say" """hi""" "a:b""##);
    }
}
