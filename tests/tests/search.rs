//! `inbox search` (`messages.search`): ranked full-text search with filters and marked
//! snippets, and a message written just before the daemon is killed is found after the
//! restart (the index is fed off the send path, but never loses a message).

use coord_tests::{Project, RawConn, fails, ok, pg, thread_id};
use serde_json::{Value, json};

fn hits(v: &Value) -> Vec<String> {
    v["hits"].as_array().unwrap().iter().map(|h| h["summary"].as_str().unwrap().to_string()).collect()
}

#[test]
fn search_ranks_filters_and_marks_the_matches() {
    let p = Project::new();
    let _d = p.serve();
    let a = ok(
        &p,
        &[
            "send",
            "--from",
            "lead",
            "--to",
            "w1",
            "--subject",
            "Auth decision",
            "--summary",
            "Pick the login flow",
            "--run",
            "R1",
            "--task",
            "T1",
        ],
    );
    let thr = thread_id(&a);
    ok(
        &p,
        &[
            "reply",
            "--from",
            "w1",
            "--thread",
            &thr,
            "--kind",
            "question",
            "--summary",
            "Which auth?",
            "--body",
            "email or oauth",
        ],
    );
    ok(&p, &["send", "--from", "lead", "--to", "w2", "--summary", "Lunch", "--body", "the auth of lunch is pizza"]);

    // Best first: a match in the subject and summary beats one in a body.
    let all = ok(&p, &["search", "auth"]);
    assert_eq!(hits(&all).len(), 3, "{all}");
    assert_eq!(hits(&all).last().unwrap(), "Lunch", "{all}");
    let snippet = all["hits"][2]["snippet"].as_str().unwrap();
    assert!(snippet.contains("**auth**"), "{snippet}");
    // Every word must match; stems match (`decisions` finds `decision`).
    assert_eq!(hits(&ok(&p, &["search", "auth", "oauth"])), ["Which auth?"]);
    assert_eq!(hits(&ok(&p, &["search", "decisions"])).len(), 2, "the thread's subject counts for its messages");
    // Filters.
    assert_eq!(hits(&ok(&p, &["search", "auth", "--agent", "w2"])), ["Lunch"]);
    assert_eq!(hits(&ok(&p, &["search", "auth", "--thread", &thr])).len(), 2);
    assert_eq!(
        hits(&ok(&p, &["search", "auth", "--run", "R1", "--task", "T1", "--kind", "question"])),
        ["Which auth?"]
    );
    let none = p.inbox().args(["search", "auth", "--until", "2000-01-01T00:00:00Z", "--json"]).run().code(10).json();
    assert_eq!(hits(&none).len(), 0);
    assert_eq!(hits(&ok(&p, &["search", "auth", "--since", "2000-01-01T00:00:00Z", "--limit", "1"])).len(), 1);
    // FTS5 syntax when asked for; a broken query is the caller's error, not the daemon's.
    // On PostgreSQL, FTS5's language is refused as such.
    match pg::backend() {
        pg::Backend::Sqlite => {
            assert_eq!(hits(&ok(&p, &["search", "--fts", "lunch OR oauth"])).len(), 2);
            fails(&p, &["search", "--fts", "auth AND"], 30, "invalid_input");
        }
        pg::Backend::Postgres => {
            fails(&p, &["search", "--fts", "lunch OR oauth"], 30, "invalid_input");
        }
    }
    fails(&p, &["search", "auth", "--since", "yesterday"], 30, "invalid_input");
    // Nothing found: exit 10. Quotes and dashes in plain words are just characters.
    p.inbox().args(["search", "\"unheard-of\"", "--json"]).run().code(10);
    // Text output to a pipe marks the matches with ** (no colour codes).
    let text = p.inbox().args(["search", "pizza"]).run().ok().stdout;
    assert!(text.contains("**pizza**") && !text.contains('\u{1b}'), "{text}");
}

#[test]
fn a_message_written_just_before_kill_9_is_found_after_the_restart() {
    let p = Project::new();
    let d = p.serve();
    ok(&p, &["send", "--from", "lead", "--to", "w1", "--summary", "warm up"]);
    ok(&p, &["search", "warm"]);
    ok(&p, &["send", "--from", "lead", "--to", "w1", "--summary", "Zebra crossing", "--body", "last words"]);
    d.kill9();
    let _d2 = p.serve();
    let found = ok(&p, &["search", "zebra"]);
    assert_eq!(hits(&found), ["Zebra crossing"]);
}

#[test]
fn an_unparsable_fts5_query_or_a_nul_in_the_query_is_invalid_input_not_storage() {
    let p = Project::new();
    let d = p.serve();
    ok(&p, &["send", "--from", "lead", "--to", "w1", "--summary", "something to find"]);
    let mut c = RawConn::connect(&d.socket);
    for params in [
        json!({"query": "\"x", "syntax": "fts5"}),
        json!({"query": "x AND", "syntax": "fts5"}),
        json!({"query": "a\u{0}b"}),
        json!({"query": "a\u{0}b", "syntax": "fts5"}),
        json!({"query": "something", "thread_id": "t\u{0}"}),
    ] {
        let r = c.call(json!({"jsonrpc": "2.0", "id": 1, "method": "messages.search", "params": params}));
        assert_eq!(r["error"]["code"], 1001, "{params}: {r}");
        assert_eq!(r["error"]["data"]["code"], "invalid_input", "{params}: {r}");
    }
    let r = c.call(json!({"jsonrpc": "2.0", "id": 2, "method": "messages.search", "params": {"query": "something"}}));
    assert!(r["result"]["hits"].is_array(), "the daemon still serves: {r}");
}
