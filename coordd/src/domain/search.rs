//! `messages.search`: the params checked, and the user's words split out (every word must
//! match; each backend quotes them in its own query language, so they cannot fail to
//! parse). `syntax: "fts5"` hands the query to SQLite's FTS5 as written.

use coord_proto::types::{SearchHit, SearchParams, SearchResult};

use crate::bound;
use crate::domain::check;
use crate::error::{Error, Result};
use crate::store::Tx;
use crate::store::repos::{SearchQuery, SearchText};
use crate::time::Ts;

/// Hits returned when no limit is given.
pub const DEFAULT_HITS: u32 = coord_proto::types::SEARCH_LIMIT_DEFAULT;
/// Longest snippet marker accepted.
const MAX_MARK: usize = 32;

/// The words of a plain query: each run of characters without whitespace that holds a
/// letter or digit.
pub fn words(text: &str) -> Option<Vec<String>> {
    let words: Vec<String> =
        text.split_whitespace().filter(|w| w.chars().any(char::is_alphanumeric)).map(str::to_string).collect();
    (!words.is_empty()).then_some(words)
}

fn instant(field: &str, v: Option<String>) -> Result<Option<String>> {
    v.map(|s| {
        Ts::parse(&s)
            .map(|t| t.to_string())
            .map_err(|e| Error::invalid(format!("{field} '{s}' is not an RFC 3339 instant: {e}")))
    })
    .transpose()
}

fn mark(field: &str, v: Option<String>) -> Result<String> {
    let m = v.unwrap_or_else(|| "**".to_string());
    if m.chars().count() > MAX_MARK {
        return Err(Error::invalid(format!("{field} is longer than {MAX_MARK} characters")));
    }
    Ok(m)
}

/// A text param without NUL: neither backend can search for one (PostgreSQL refuses it
/// in any text, SQLite's FTS5 ends a token there), so it is the caller's mistake.
fn no_nul(field: &str, v: Option<&str>) -> Result<()> {
    match v {
        Some(v) if v.contains('\0') => Err(Error::invalid(format!("{field} contains a NUL character"))),
        _ => Ok(()),
    }
}

/// Check the params and build the query storage runs.
pub fn query(p: SearchParams) -> Result<SearchQuery> {
    no_nul("query", Some(&p.query))?;
    for (field, v) in [
        ("thread_id", &p.thread_id),
        ("run_id", &p.run_id),
        ("task_id", &p.task_id),
        ("mark_open", &p.mark_open),
        ("mark_close", &p.mark_close),
    ] {
        no_nul(field, v.as_deref())?;
    }
    let text = match p.syntax.as_deref() {
        None | Some("words") => SearchText::Words(words(&p.query).ok_or_else(|| {
            Error::invalid(format!("nothing to search for in '{}': give at least one word", p.query.trim()))
        })?),
        Some("fts5") if !p.query.trim().is_empty() => SearchText::Fts5(p.query.clone()),
        Some("fts5") => return Err(Error::invalid("the query is empty")),
        Some(other) => return Err(Error::invalid(format!("syntax '{other}' is not one of: words, fts5"))),
    };
    if let Some(a) = &p.agent {
        check::agent("agent", a)?;
    }
    Ok(SearchQuery {
        text,
        agent: p.agent,
        thread_id: p.thread_id,
        run_id: p.run_id,
        task_id: p.task_id,
        kinds: p.kinds,
        since: instant("since", p.since)?,
        until: instant("until", p.until)?,
        limit: check::limit(p.limit, DEFAULT_HITS)?,
        mark_open: mark("mark_open", p.mark_open)?,
        mark_close: mark("mark_close", p.mark_close)?,
    })
}

/// The hits after the first `offset`, bounded by bytes (`bound::page`); when truncated,
/// `next_after` is the `offset` of the next page.
pub fn page(hits: Vec<SearchHit>, offset: u32) -> SearchResult {
    let hits: Vec<SearchHit> = hits.into_iter().skip(offset as usize).collect();
    let page = bound::page(hits, |_| ());
    let next_after = page.truncated.then(|| offset + page.items.len() as u32);
    SearchResult { hits: page.items, truncated: page.truncated, next_after }
}

/// Are messages waiting to be indexed?
pub fn pending(tx: &dyn Tx) -> Result<bool> {
    tx.search().search_pending()
}

/// Index up to `limit` waiting messages, oldest first; how many were indexed.
pub fn index(tx: &mut dyn Tx, limit: u32) -> Result<u32> {
    tx.search_mut().search_index_pending(limit)
}

/// Indexed messages matching `q`, best first.
pub fn find(tx: &dyn Tx, q: &SearchQuery) -> Result<Vec<coord_proto::types::SearchHit>> {
    tx.search().messages_search(q)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_are_split_on_whitespace_and_punctuation_alone_is_dropped() {
        assert_eq!(words("auth  decision"), Some(vec!["auth".to_string(), "decision".to_string()]));
        assert_eq!(words(r#"say "hi" - a:b"#), Some(vec!["say".into(), r#""hi""#.into(), "a:b".into()]));
        assert_eq!(words(" - ; "), None);
    }

    #[test]
    fn a_bad_syntax_or_instant_is_invalid_input() {
        let p = |syntax: Option<&str>, since: Option<&str>| SearchParams {
            query: "x".into(),
            syntax: syntax.map(str::to_string),
            since: since.map(str::to_string),
            ..Default::default()
        };
        assert!(query(p(Some("regex"), None)).is_err());
        assert!(query(p(None, Some("yesterday"))).is_err());
        assert_eq!(
            query(p(None, Some("2026-11-23T10:00:00Z"))).unwrap().since.as_deref(),
            Some("2026-11-23T10:00:00.000Z")
        );
    }
}
