//! What only the PostgreSQL backend does, through its `Store`: the inserts it holds back
//! for a batch and sends multi-row. (What both backends do is `store_contract.rs`; the
//! end-to-end behaviour is in `instances.rs` and the suites of `on_postgres.rs`.)

use coord_proto::types::*;
use coord_tests::pg;
use coordd::ops::messages;
use coordd::store::Store;
use coordd::store::backend::{read, submit, write};
use coordd::store::postgres::PgStore;
use coordd::store::repos::QueuedQuery;
use coordd::time::Ts;

fn send(n: usize) -> SendParams {
    SendParams {
        from: "lead".into(),
        to: "w".into(),
        message: MessageInput { summary: format!("m{n}"), ..Default::default() },
        ..Default::default()
    }
}

async fn open() -> Option<(PgStore, coordd::bus::Bus)> {
    let url = pg::shared()?.database();
    Some(tokio::task::spawn_blocking(move || PgStore::open(&url).expect("open")).await.unwrap())
}

/// The writer holds a send's inserts back and sends them once per batch. One that fails
/// there (a key already taken) fails its own job alone: the batch runs again with a
/// savepoint per job, inserting at once.
#[tokio::test(flavor = "multi_thread")]
async fn a_held_insert_that_fails_at_the_end_of_the_batch_fails_only_its_own_job() {
    let Some((store, _bus)) = open().await else { return };
    let now = Ts::from_millis(1_767_225_600_000);
    let first = write(&store, move |tx| messages::send(tx, now, send(0))).await.unwrap();
    let dup = first.message.clone();
    let mut queued = Vec::new();
    for i in 1..=20 {
        queued.push(submit(&store, move |tx| messages::send(tx, now, send(i)).map(drop)).await.unwrap());
        if i == 10 {
            let dup = dup.clone();
            // The insert is held back: the job itself sees no error.
            queued.push(submit(&store, move |tx| tx.messages_mut().message_insert(&dup)).await.unwrap());
        }
    }
    let mut told = Vec::new();
    for rx in queued {
        told.push(rx.await.unwrap());
    }
    let failed: Vec<usize> = told.iter().enumerate().filter(|(_, r)| r.is_err()).map(|(i, _)| i).collect();
    assert_eq!(failed, vec![10], "only the duplicate failed: {told:?}");
    let p = ListParams { limit: Some(100), ..Default::default() };
    let n = read(&store, move |tx| tx.threads().threads_list(&p, 100)).await.unwrap().len();
    let last = read(&store, |tx| tx.events().last_event_id()).await.unwrap();
    assert_eq!((n, last), (21, 21), "every other send committed, event ids without a gap");
    store.close().await;
}

/// A read later in the same batch sees the rows held back before it (they are sent first).
#[tokio::test(flavor = "multi_thread")]
async fn a_read_in_the_batch_sees_the_rows_held_back_before_it() {
    let Some((store, _bus)) = open().await else { return };
    let now = Ts::from_millis(1_767_225_600_000);
    let sent = write(&store, move |tx| {
        let r = messages::send(tx, now, send(1))?;
        let q = QueuedQuery { recipients: vec!["w".into()], now, priorities: vec![], unreminded: false, limit: 10 };
        let queued = tx.mail().mail_queued(&q)?;
        let thread = tx.threads().thread(&r.thread.thread_id)?;
        Ok((r, queued.len(), thread.is_some()))
    })
    .await
    .unwrap();
    assert_eq!((sent.1, sent.2), (1, true), "the thread and its mail copy are seen in the same transaction");
    store.close().await;
}
