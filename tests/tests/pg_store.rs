//! What only the PostgreSQL backend does, through its `Store`: the writes it holds back
//! for a batch and sends in one statement, and what its writer keeps of the agents and
//! settings it read for the rest of a transaction. (What both backends do is `store_contract.rs`; the
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
    Some(open_on(pg::shared()?.database()).await)
}

/// An instance on the database at `url` (a second one on the same database is another daemon).
async fn open_on(url: String) -> (PgStore, coordd::bus::Bus) {
    tokio::task::spawn_blocking(move || PgStore::open(&url).expect("open")).await.unwrap()
}

/// The next event published on `rx` that recorded a message.
async fn next_message_event(rx: &mut coordd::bus::BusReceiver) -> std::sync::Arc<coordd::bus::Published> {
    loop {
        match rx.recv().await {
            Ok(p) if p.event.message_id.is_some() => return p,
            Ok(_) => {}
            Err(_) => panic!("the bus lagged or closed"),
        }
    }
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

fn agent(id: &str) -> Agent {
    Agent {
        agent_id: id.into(),
        display_name: String::new(),
        role: String::new(),
        status: AgentStatus::Idle,
        registered: false,
        created_at: "2026-01-01T00:00:00.000000Z".into(),
        last_seen_at: None,
        version: 1,
    }
}

/// The writer keeps what its transaction read of agents and settings: what the same
/// transaction writes afterwards is read back as written, and the `last_seen_at` updates
/// it holds back commit with the batch.
#[tokio::test(flavor = "multi_thread")]
async fn agents_and_settings_written_are_read_back_later_in_the_same_transaction() {
    let Some((store, _bus)) = open().await else { return };
    let seen = Ts::from_millis(1_767_225_600_000);
    let got = write(&store, move |tx| {
        let before = (tx.agents().agent("x")?, tx.agents().setting("k")?);
        tx.agents_mut().agent_insert(&agent("x"))?;
        let inserted = tx.agents().agent("x")?;
        // A save writes every field but created_at.
        let saved = Agent { registered: true, version: 2, created_at: "other".into(), ..agent("x") };
        tx.agents_mut().agent_save(&saved)?;
        let touched = (tx.agents_mut().agent_touch("x", seen)?, tx.agents_mut().agent_touch("ghost", seen)?);
        tx.agents_mut().setting_put("k", "v")?;
        Ok((before, inserted, touched, tx.agents().agent("x")?, tx.agents().setting("k")?))
    })
    .await
    .unwrap();
    let (before, inserted, touched, after, setting) = got;
    assert_eq!(before, (None, None));
    assert_eq!(inserted, Some(agent("x")));
    assert_eq!(touched, (true, false), "x exists, ghost does not");
    let expected = Agent { registered: true, version: 2, last_seen_at: Some(seen.to_string()), ..agent("x") };
    assert_eq!(after, Some(expected.clone()));
    assert_eq!(setting.as_deref(), Some("v"));
    let committed = read(&store, |tx| Ok((tx.agents().agent("x")?, tx.agents().setting("k")?))).await.unwrap();
    assert_eq!(committed, (Some(expected), Some("v".into())), "the held update committed");
    store.close().await;
}

/// A job that fails after writing is rolled back to its savepoint: the next job of the
/// same batch reads none of what it wrote (nothing of it is kept for the transaction).
#[tokio::test(flavor = "multi_thread")]
async fn the_next_job_of_the_batch_reads_nothing_a_rolled_back_job_wrote() {
    let Some((store, _bus)) = open().await else { return };
    // Hold the writer in a job of its own while the two jobs queue, so they share a batch.
    let (started_tx, started) = std::sync::mpsc::channel();
    let (release, wait) = std::sync::mpsc::channel::<()>();
    let blocker = submit(&store, move |_| {
        let _ = started_tx.send(());
        let _ = wait.recv();
        Ok(())
    })
    .await
    .unwrap();
    tokio::task::spawn_blocking(move || started.recv().unwrap()).await.unwrap();
    let failing = submit(&store, |tx| -> coordd::error::Result<()> {
        tx.agents_mut().agent_insert(&agent("x"))?;
        tx.agents_mut().setting_put("k", "v")?;
        Err(coordd::error::Error::invalid("rejected after writing"))
    })
    .await
    .unwrap();
    let next = submit(&store, |tx| Ok((tx.agents().agent("x")?, tx.agents().setting("k")?))).await.unwrap();
    release.send(()).unwrap();
    blocker.await.unwrap().unwrap();
    assert!(failing.await.unwrap().is_err());
    assert_eq!(next.await.unwrap().unwrap(), (None, None), "nothing of the rolled-back job is read");
    store.close().await;
}

/// More agents than the writer reads whole (256) are read one by one, each found or not.
#[tokio::test(flavor = "multi_thread")]
async fn agents_beyond_those_read_whole_are_found_one_by_one() {
    let Some((store, _bus)) = open().await else { return };
    write(&store, |tx| (0..300).try_for_each(|i| tx.agents_mut().agent_insert(&agent(&format!("a{i:03}")))))
        .await
        .unwrap();
    let got = write(&store, |tx| {
        let mut found = 0;
        for i in 0..300 {
            found += usize::from(tx.agents().agent(&format!("a{i:03}"))?.is_some());
        }
        Ok((found, tx.agents().agent("a300")?, tx.agents_mut().agent_touch("a299", Ts::from_millis(1))?))
    })
    .await
    .unwrap();
    assert_eq!(got, (300, None, true));
    store.close().await;
}

/// The events another instance commits are read back as rows alone while no subscription
/// wants them complete (the daemon's own services look at nothing else), and in full, with
/// the message and its copies, once one does.
#[tokio::test(flavor = "multi_thread")]
async fn another_instances_events_are_read_in_full_only_while_a_subscription_wants_them() {
    let Some(server) = pg::shared() else { return };
    let url = server.database();
    let (a, _bus_a) = open_on(url.clone()).await;
    let (b, bus_b) = open_on(url).await;
    let now = Ts::from_millis(1_767_225_600_000);
    let mut rows = bus_b.subscribe();
    write(&a, move |tx| messages::send(tx, now, send(1))).await.unwrap();
    let p = next_message_event(&mut rows).await;
    assert!(p.partial && p.event.message.is_none() && p.event.mail.is_none(), "rows alone: {:?}", p.event);
    let mut complete = bus_b.subscribe_complete().await;
    write(&a, move |tx| messages::send(tx, now, send(2))).await.unwrap();
    for rx in [&mut complete, &mut rows] {
        let p = next_message_event(rx).await;
        let summary = p.event.message.as_ref().map(|m| m.summary.as_str());
        let recipients = p.event.mail.as_ref().map(|m| m.recipients.clone());
        assert_eq!((p.partial, summary, recipients), (false, Some("m2"), Some(vec!["w".to_string()])));
    }
    drop(complete);
    write(&a, move |tx| messages::send(tx, now, send(3))).await.unwrap();
    assert!(next_message_event(&mut rows).await.partial, "rows alone again once it ends");
    a.close().await;
    b.close().await;
}

/// The publishers' reads (another daemon's events after a cursor) are planned as a range of
/// the events' primary key even as generic plans, which their connections keep: with the
/// page's size bound as a parameter, a server that had planned a few large reads sorted a
/// scan of the whole events table for every read (10 ms at 60,000 events, growing with
/// the table).
#[tokio::test(flavor = "multi_thread")]
async fn the_publishers_reads_stay_a_primary_key_range_as_generic_plans() {
    use coordd::store::postgres::catchup::{complete_sql, rows_sql};
    let Some(server) = pg::shared() else { return };
    let url = server.database();
    let (store, _bus) = open_on(url.clone()).await;
    store.close().await;
    pg::off_runtime(move || {
        let mut c = postgres::Client::connect(&url, postgres::NoTls).unwrap();
        c.batch_execute(
            "INSERT INTO events (event_id, run_id, task_id, thread_id, source, event_type, summary, created_at) \
             SELECT i, '', '', 'thr_' || (i % 1000), 'inbox', 'message.sent', repeat('s', 200), \
             '2026-01-01T00:00:00.000Z' FROM generate_series(1, 60000) i; ANALYZE events; \
             SET plan_cache_mode = force_generic_plan",
        )
        .unwrap();
        for (name, sql) in [("complete", complete_sql(500)), ("rows", rows_sql(500))] {
            c.batch_execute(&format!("PREPARE {name}(bigint) AS {sql}")).unwrap();
            let plan: Vec<String> =
                c.query(&format!("EXPLAIN EXECUTE {name}(59990)"), &[]).unwrap().iter().map(|r| r.get(0)).collect();
            let plan = plan.join("\n");
            assert!(
                plan.contains("Index Scan using events_pkey on events") && !plan.contains("Seq Scan on events"),
                "{name}:\n{plan}"
            );
        }
    });
}

/// coordd's connections run without JIT: a plan whose estimate passed `jit_above_cost` was
/// compiled by LLVM on every run (8 ms per read of one event on a restarted daemon's reading
/// connection, cross-daemon wakes of 13 ms in `coord-bench --only pg`). Options given in the
/// URL still apply.
#[test]
fn coordds_connections_run_without_jit_and_keep_the_urls_options() {
    let Some(server) = pg::shared() else { return };
    let url = server.database();
    let with = format!("{url}&options=-c%20statement_timeout%3D4321");
    pg::off_runtime(move || {
        for (url, timeout) in [(url, "0"), (with, "4321ms")] {
            let cfg = coordd::store::postgres::conn::config(&url).expect("config");
            let mut c = postgres::Config::from(cfg).connect(postgres::NoTls).expect("connect");
            let show = |c: &mut postgres::Client, what: &str| -> String {
                c.query_one(&format!("SHOW {what}"), &[]).unwrap().get(0)
            };
            assert_eq!(
                (show(&mut c, "jit"), show(&mut c, "statement_timeout")),
                ("off".to_string(), timeout.to_string())
            );
        }
    });
}
