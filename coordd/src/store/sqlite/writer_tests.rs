//! The writer's failure paths, driven one batch at a time through [`run_batch`]: a job that
//! fails after writing (the batch runs again with a savepoint per job), a full disk
//! (SQLite's `max_page_count`), a transaction SQLite rolled back by itself, and a COMMIT
//! that fails. Each time: the callers that failed are told why, the others' writes and
//! events are committed and published, and nothing of a failed job remains. And the
//! batch's cache of settings and agent rows: what a job writes, the later jobs read; what
//! is rolled back, they do not.

use std::sync::{Arc, Mutex};

use coord_proto::ErrorCode;
use coord_proto::types::*;
use rusqlite::Connection;

use super::migrations;
use super::testing::conn_of;
use super::writer::run_batch;
use crate::bus::Bus;
use crate::domain::agents;
use crate::error::{Error, Result};
use crate::ops::messages;
use crate::store::Tx;
use crate::store::backend::{Job, WriteJob};
use crate::time::Ts;

type Step = Box<dyn FnMut(&mut dyn Tx) -> Result<i64> + Send>;

/// A job that records how often it ran and what its caller was finally told.
struct Probe {
    step: Step,
    last: Option<Result<i64>>,
    runs: Arc<Mutex<usize>>,
    told: Arc<Mutex<Option<Result<i64>>>>,
}

impl Job for Probe {
    fn run(&mut self, tx: Option<&mut dyn Tx>) -> bool {
        *self.runs.lock().unwrap() += 1;
        let res = match tx {
            Some(tx) => (self.step)(tx),
            None => Err(Error::Storage("no transaction".into())),
        };
        let ok = res.is_ok();
        self.last = Some(res);
        ok
    }

    fn complete(self: Box<Self>, commit_err: Option<&Error>) {
        let out = match (self.last, commit_err) {
            (Some(Ok(_)), Some(e)) | (None, Some(e)) => Err(e.shared()),
            (Some(res), _) => res,
            (None, None) => Err(Error::Internal("never ran".into())),
        };
        *self.told.lock().unwrap() = Some(out);
    }
}

struct Handle {
    runs: Arc<Mutex<usize>>,
    told: Arc<Mutex<Option<Result<i64>>>>,
}

impl Handle {
    fn runs(&self) -> usize {
        *self.runs.lock().unwrap()
    }

    fn told(&self) -> Result<i64, Option<ErrorCode>> {
        match self.told.lock().unwrap().take().expect("the caller was answered") {
            Ok(v) => Ok(v),
            Err(e) => Err(Some(e.to_app().code)),
        }
    }
}

fn probe(step: impl FnMut(&mut dyn Tx) -> Result<i64> + Send + 'static) -> (WriteJob, Handle) {
    let (runs, told) = (Arc::default(), Arc::default());
    let job = Probe { step: Box::new(step), last: None, runs: Arc::clone(&runs), told: Arc::clone(&told) };
    (Box::new(job), Handle { runs, told })
}

const NOW: Ts = Ts::from_millis(1_767_225_600_000);

fn send_body(body: usize) -> impl FnMut(&mut dyn Tx) -> Result<i64> + Send + 'static {
    move |tx| {
        let p = SendParams {
            from: "lead".into(),
            to: "w".into(),
            message: MessageInput { summary: "s".into(), body: Some("x".repeat(body)), ..Default::default() },
            ..Default::default()
        };
        Ok(messages::send(tx, NOW, p)?.event_id)
    }
}

fn open() -> (tempfile::TempDir, Connection, Bus) {
    let dir = tempfile::tempdir().unwrap();
    let mut conn = Connection::open(dir.path().join("coord.db")).unwrap();
    conn.query_row("PRAGMA journal_mode=WAL", [], |_| Ok(())).unwrap();
    conn.pragma_update(None, "foreign_keys", "ON").unwrap();
    migrations::migrate(&mut conn).unwrap();
    (dir, conn, Bus::new(0))
}

fn count(conn: &Connection, table: &str) -> i64 {
    conn.query_row(&format!("SELECT COUNT(*) FROM {table}"), [], |r| r.get(0)).unwrap()
}

fn batch(conn: &Connection, bus: &Bus, jobs: Vec<WriteJob>) {
    let mut jobs = jobs;
    run_batch(conn, &mut jobs, bus);
}

#[tokio::test]
async fn a_job_that_fails_after_writing_is_rolled_back_alone_on_a_second_run() {
    let (_dir, conn, bus) = open();
    let mut rx = bus.subscribe();
    let (a, ha) = probe(send_body(10));
    let (b, hb) = probe(|tx| {
        send_body(10)(tx)?;
        Err(Error::invalid("refused after writing"))
    });
    let (c, hc) = probe(send_body(10));
    batch(&conn, &bus, vec![a, b, c]);
    // The first attempt stopped at b and was rolled back; the second ran each job in a
    // savepoint of its own.
    assert_eq!((ha.runs(), hb.runs(), hc.runs()), (2, 2, 1));
    let (ea, eb, ec) = (ha.told(), hb.told(), hc.told());
    assert_eq!(eb, Err(Some(ErrorCode::InvalidInput)));
    assert_eq!((count(&conn, "threads"), count(&conn, "events")), (2, 2));
    let published: Vec<i64> =
        vec![rx.recv().await.ok().unwrap().event.event_id, rx.recv().await.ok().unwrap().event.event_id];
    assert_eq!(published, vec![ea.unwrap(), ec.unwrap()], "published in commit order, ids without a gap");
}

#[test]
fn a_full_disk_fails_the_batch_as_unwritable_and_the_writer_recovers_when_space_returns() {
    let (_dir, conn, bus) = open();
    let (first, h) = probe(send_body(10));
    batch(&conn, &bus, vec![first]);
    assert_eq!(h.told(), Ok(1));
    let pages: i64 = conn.query_row("PRAGMA page_count", [], |r| r.get(0)).unwrap();
    conn.pragma_update(None, "max_page_count", pages + 8).unwrap();
    let (small, hs) = probe(send_body(10));
    let (big, hb) = probe(send_body(512 * 1024));
    batch(&conn, &bus, vec![small, big]);
    // SQLite rolls the whole transaction back when the disk is full: every caller of the
    // batch is told, with io_write_failed, and nothing of it remains.
    assert_eq!(hb.told(), Err(Some(ErrorCode::IoWriteFailed)));
    assert_eq!(hs.told(), Err(Some(ErrorCode::IoWriteFailed)));
    assert_eq!((count(&conn, "threads"), count(&conn, "messages"), count(&conn, "events")), (1, 1, 1));
    assert!(conn.is_autocommit());
    // Space comes back: the same writes succeed, event ids continuing without a gap.
    conn.pragma_update(None, "max_page_count", 1_073_741_823).unwrap();
    let (small, hs) = probe(send_body(10));
    let (big, hb) = probe(send_body(512 * 1024));
    batch(&conn, &bus, vec![small, big]);
    assert_eq!((hs.told(), hb.told()), (Ok(2), Ok(3)));
    let ok: String = conn.query_row("PRAGMA integrity_check", [], |r| r.get(0)).unwrap();
    assert_eq!(ok, "ok");
}

#[test]
fn a_transaction_sqlite_rolled_back_fails_the_whole_batch_as_unwritable() {
    let (_dir, conn, bus) = open();
    let (a, ha) = probe(send_body(10));
    // What SQLite does by itself after some disk-full or I/O errors.
    let (b, hb) = probe(|tx| {
        conn_of(tx).execute_batch("ROLLBACK").map_err(Error::from)?;
        Err(Error::WriteFailed("disk I/O error".into()))
    });
    let (c, hc) = probe(send_body(10));
    batch(&conn, &bus, vec![a, b, c]);
    assert_eq!(hc.runs(), 0, "no job runs outside the transaction");
    for h in [&ha, &hb, &hc] {
        assert_eq!(h.told(), Err(Some(ErrorCode::IoWriteFailed)));
    }
    assert_eq!((count(&conn, "threads"), count(&conn, "events")), (0, 0));
    assert!(conn.is_autocommit());
    // The writer goes on with the next batch.
    let (d, hd) = probe(send_body(10));
    batch(&conn, &bus, vec![d]);
    assert_eq!(hd.told(), Ok(1));
}

#[test]
fn a_failed_commit_fails_every_job_of_its_batch_and_keeps_nothing() {
    let (_dir, conn, bus) = open();
    let (a, ha) = probe(send_body(10));
    // A deferred foreign key violation only shows at COMMIT.
    let (b, hb) = probe(|tx| {
        let c = conn_of(tx);
        c.execute_batch(
            "PRAGMA defer_foreign_keys = ON; \
             INSERT INTO artifacts (artifact_id, message_id, path, kind, created_at) VALUES ('art_x', 'msg_missing', 'p', 'file', 'now')",
        )
        .map_err(Error::from)?;
        Ok(0)
    });
    batch(&conn, &bus, vec![a, b]);
    for h in [&ha, &hb] {
        assert_eq!(h.told(), Err(Some(ErrorCode::Storage)));
    }
    assert_eq!((count(&conn, "threads"), count(&conn, "artifacts"), count(&conn, "events")), (0, 0, 0));
    let (c, hc) = probe(send_body(10));
    batch(&conn, &bus, vec![c]);
    assert_eq!(hc.told(), Ok(1), "event ids continue without a gap");
}

/// A send from an agent that is not registered: refused once strict agents is on.
fn send_from(from: &str) -> impl FnMut(&mut dyn Tx) -> Result<i64> + Send + 'static {
    let from = from.to_string();
    move |tx| {
        let p = SendParams { from: from.clone(), to: "w".into(), message: msg(), ..Default::default() };
        Ok(messages::send(tx, NOW, p)?.event_id)
    }
}

fn msg() -> MessageInput {
    MessageInput { summary: "s".into(), ..Default::default() }
}

fn strict_on(tx: &mut dyn Tx) -> Result<i64> {
    agents::init(tx, NOW, InitParams { strict_agents: Some(true), ..Default::default() })?;
    Ok(0)
}

#[test]
fn a_setting_changed_by_a_job_is_read_back_by_the_later_jobs_of_its_batch() {
    let (_dir, conn, bus) = open();
    // The first send reads strict agents (off) into the batch's cache.
    let (a, ha) = probe(send_from("lead"));
    let (b, hb) = probe(strict_on);
    let (c, hc) = probe(send_from("stranger"));
    batch(&conn, &bus, vec![a, b, c]);
    assert!(ha.told().is_ok() && hb.told().is_ok());
    assert_eq!(hc.told(), Err(Some(ErrorCode::UnknownSender)));
}

#[test]
fn a_setting_a_rolled_back_job_wrote_and_read_is_not_seen_by_the_next_job() {
    let (_dir, conn, bus) = open();
    let (a, ha) = probe(send_from("lead"));
    // Turns strict agents on, reads it back (so the cache holds it), then fails.
    let (b, hb) = probe(|tx| {
        strict_on(tx)?;
        assert!(agents::strict(tx)?);
        Err(Error::invalid("refused after writing"))
    });
    let (c, hc) = probe(send_from("stranger"));
    batch(&conn, &bus, vec![a, b, c]);
    assert!(ha.told().is_ok());
    assert_eq!(hb.told(), Err(Some(ErrorCode::InvalidInput)));
    assert!(hc.told().is_ok(), "strict agents was rolled back with the job that turned it on");
}

#[test]
fn an_agent_recorded_by_a_job_is_seen_by_the_later_jobs_of_its_batch() {
    let (_dir, conn, bus) = open();
    let (a, ha) = probe(|tx| Ok(i64::from(tx.agents().agent("w7")?.is_some())));
    let (b, hb) = probe(|tx| {
        agents::touch(tx, &["w7"], NOW)?;
        Ok(0)
    });
    let (c, hc) = probe(|tx| Ok(i64::from(agents::show(tx, "w7")?.last_seen_at.is_some())));
    batch(&conn, &bus, vec![a, b, c]);
    assert_eq!((ha.told(), hb.told(), hc.told()), (Ok(0), Ok(0), Ok(1)));
}
