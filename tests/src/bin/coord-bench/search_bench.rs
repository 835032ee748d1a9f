//! `--only search`: what full-text search costs and gives. Sends `n` messages of varied
//! text from 16 clients, then times the first search (which indexes whatever the background
//! indexer has not indexed yet) and then searches against the current index.

use std::sync::Arc;
use std::time::Instant;

use coord_proto::api::{InboxApiClient, SearchApiClient};
use coord_proto::types::*;
use coord_tests::Project;

use crate::{ms, percentile, report};

/// The vocabulary of the messages sent (one string, so it stays one line).
const VOCABULARY: &str =
    "schema migration index auth token parser lease deploy review cache queue retry branch merge report budget";

fn word(i: usize) -> &'static str {
    let words: Vec<&'static str> = VOCABULARY.split(' ').collect();
    words[i % words.len()]
}

fn text(i: usize) -> (String, String) {
    let w = |k: usize| word(i * 7 + k * 3);
    (format!("{} {} update {i}", w(0), w(1)), format!("Details about the {} and the {} for step {i}.", w(2), w(3)))
}

pub async fn search(p: &Project, n: usize) {
    let clients = 16;
    let mut cs = Vec::new();
    for _ in 0..clients {
        cs.push(Arc::new(p.client().await));
    }
    let per = n / clients;
    let tasks: Vec<_> = cs
        .iter()
        .cloned()
        .enumerate()
        .map(|(c, client)| {
            tokio::spawn(async move {
                for j in 0..per {
                    let (summary, body) = text(c * per + j);
                    let message = MessageInput { summary, body: Some(body), ..Default::default() };
                    let p = SendParams { from: format!("lead{c}"), to: "w".into(), message, ..Default::default() };
                    client.send(p).await.unwrap();
                }
            })
        })
        .collect();
    for t in tasks {
        t.await.unwrap();
    }
    let c = &cs[0];
    let q = |query: &str| SearchParams { query: query.into(), limit: Some(20), ..Default::default() };
    let t0 = Instant::now();
    let first = c.search(q("schema")).await.unwrap();
    let catch_up = t0.elapsed();
    assert!(!first.hits.is_empty());
    let mut lat = Vec::new();
    for i in 0..200 {
        let query = format!("{} {}", word(i), word(i * 5 + 1));
        let t0 = Instant::now();
        c.search(q(&query)).await.unwrap();
        lat.push(t0.elapsed());
    }
    lat.sort();
    report(&format!("first search right after {n} sends (indexes what is left)"), ms(catch_up));
    report(
        &format!("search, 2 words, top 20, over {n} messages (200 queries)"),
        format!("p50 {}  p99 {}", ms(percentile(&lat, 0.5)), ms(percentile(&lat, 0.99))),
    );
}
