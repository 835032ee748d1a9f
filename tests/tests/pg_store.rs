//! The PostgreSQL backend itself, through its `Store`: group commit with a failing job,
//! a job that swallows a failed statement, panics contained.
//! (The end-to-end behaviour is in `instances.rs` and the suites of `on_postgres.rs`.)

use coord_proto::types::*;
use coord_tests::pg;
use coordd::error::Error;
use coordd::ops::messages;
use coordd::store::Store;
use coordd::store::backend::{read, write};
use coordd::store::postgres::PgStore;
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

#[tokio::test(flavor = "multi_thread")]
async fn a_failing_job_rolls_back_alone_within_a_group_commit() {
    let Some((store, bus)) = open().await else { return };
    let now = Ts::from_millis(1_767_225_600_000);
    let jobs = (0..40).map(|i| {
        write(&store, move |tx| {
            let r = messages::send(tx, now, send(i))?;
            if i % 2 == 1 {
                return Err(Error::invalid("rejected after writing"));
            }
            Ok(r)
        })
    });
    let results = futures::future::join_all(jobs).await;
    assert_eq!(results.iter().filter(|r| r.is_ok()).count(), 20);
    let p = ListParams { limit: Some(100), ..Default::default() };
    let threads = read(&store, move |tx| tx.threads_list(&p, 100)).await.unwrap();
    let last = read(&store, |tx| tx.last_event_id()).await.unwrap();
    assert_eq!((threads.len(), last), (20, 20), "failed jobs left nothing behind, and no id gap");
    assert_eq!(bus.last_event_id(), 20);
    let e = write(&store, |_| -> coordd::error::Result<()> { panic!("boom") }).await.unwrap_err();
    assert!(matches!(e, Error::Internal(_)), "{e:?}");
    write(&store, move |tx| messages::send(tx, now, send(99))).await.unwrap();
    store.close().await;
}

/// PostgreSQL aborts a transaction at its first failed statement. A job that ignores the
/// error must not make the writer report its batch committed.
#[tokio::test(flavor = "multi_thread")]
async fn a_job_that_swallows_a_failed_statement_is_rolled_back_and_the_batch_goes_on() {
    let Some((store, _bus)) = open().await else { return };
    let now = Ts::from_millis(1_767_225_600_000);
    let first = write(&store, move |tx| messages::send(tx, now, send(1))).await.unwrap();
    let dup = first.message.clone();
    let ok = write(&store, move |tx| messages::send(tx, now, send(2)));
    let swallowing = write(&store, move |tx| {
        // A duplicate key: the statement fails; the job carries on as if it had not.
        let _ = tx.message_insert(&dup);
        Ok(())
    });
    let (ok, swallowing) = futures::future::join(ok, swallowing).await;
    ok.expect("the other job of the batch commits");
    let _ = swallowing;
    let p = ListParams { limit: Some(100), ..Default::default() };
    let n = read(&store, move |tx| tx.threads_list(&p, 100)).await.unwrap().len();
    assert_eq!(n, 2);
    store.close().await;
}
