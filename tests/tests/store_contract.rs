//! The storage contract, one suite: each case runs on SQLite (a file in a temporary
//! directory) and on PostgreSQL (a database of its own on the shared test server) through
//! their `Store`. Group commit, every record read back as written (the row layer
//! `coordd::store::rows` over both drivers), and both backends' migrations pinned.

#[path = "support/stores.rs"]
mod stores;

use coord_proto::types::*;
use coordd::error::{Error, Result};
use coordd::ops::messages;
use coordd::store::Store;
use coordd::store::backend::{read, write};
use coordd::store::repos::*;
use coordd::time::Ts;
use stores::{Opened, contract};

// The registry's cases (agents, reservations).
#[path = "store_contract/registry.rs"]
mod registry;
use registry::*;
// The merge queue's cases (candidates, review comments).
#[path = "store_contract/queue.rs"]
mod queue;
use queue::*;
// The usage cases (launched sessions' usage, runs' budgets).
#[path = "store_contract/usage.rs"]
mod usage;
use usage::*;

contract!(
    a_failing_job_rolls_back_alone_within_a_group_commit,
    a_job_that_swallows_a_failed_statement_is_rolled_back_and_the_batch_goes_on,
    inbox_records_read_back_as_written,
    orch_records_read_back_as_written,
    queue_records_read_back_as_written,
    registry_records_read_back_as_written,
    touching_agents_advances_the_known_ones_and_names_the_unknown,
    usage_records_read_back_as_written,
);

const NOW: i64 = 1_767_225_600_000;

fn send(n: usize) -> SendParams {
    SendParams {
        from: "lead".into(),
        to: "w".into(),
        message: MessageInput { summary: format!("m{n}"), ..Default::default() },
        ..Default::default()
    }
}

async fn thread_count(store: &dyn Store) -> usize {
    let p = ListParams { limit: Some(100), ..Default::default() };
    read(store, move |tx| tx.threads().threads_list(&p, 100)).await.unwrap().len()
}

async fn a_failing_job_rolls_back_alone_within_a_group_commit(s: &Opened) {
    let store = &*s.store;
    let now = Ts::from_millis(NOW);
    // Many writes at once share transactions; every other one fails after writing.
    let jobs = (0..40).map(|i| {
        write(store, move |tx| {
            let r = messages::send(tx, now, send(i))?;
            if i % 2 == 1 {
                return Err(Error::invalid("rejected after writing"));
            }
            Ok(r)
        })
    });
    let results = futures::future::join_all(jobs).await;
    assert_eq!(results.iter().filter(|r| r.is_ok()).count(), 20);
    let last = read(store, |tx| tx.events().last_event_id()).await.unwrap();
    assert_eq!((thread_count(store).await, last), (20, 20), "failed jobs left nothing behind, and no id gap");
    assert_eq!(s.bus.last_event_id(), 20);
    // A panicking job is contained too, and the writer keeps going.
    let e = write(store, |_| -> Result<()> { panic!("boom") }).await.unwrap_err();
    assert!(matches!(e, Error::Internal(_)), "{e:?}");
    write(store, move |tx| messages::send(tx, now, send(99))).await.unwrap();
}

/// PostgreSQL aborts a transaction at its first failed statement: a job that ignores the
/// error must not make the writer report its batch committed; the batch's other job commits.
async fn a_job_that_swallows_a_failed_statement_is_rolled_back_and_the_batch_goes_on(s: &Opened) {
    let store = &*s.store;
    let now = Ts::from_millis(NOW);
    let first = write(store, move |tx| messages::send(tx, now, send(1))).await.unwrap();
    let dup = first.message.clone();
    let ok = write(store, move |tx| messages::send(tx, now, send(2)));
    let swallowing = write(store, move |tx| {
        // A duplicate key: the statement fails; the job carries on as if it had not.
        let _ = tx.messages_mut().message_insert(&dup);
        Ok(())
    });
    let (ok, _swallowing) = futures::future::join(ok, swallowing).await;
    ok.expect("the other job of the batch commits");
    assert_eq!(thread_count(store).await, 2);
}

fn ts(offset_ms: i64) -> Ts {
    Ts::from_millis(NOW + offset_ms)
}

fn text(offset_ms: i64) -> String {
    ts(offset_ms).to_string()
}

fn some(s: &str) -> Option<String> {
    Some(s.to_string())
}

/// A protocol enum from its name.
fn parse<T: std::str::FromStr<Err = String>>(s: &str) -> T {
    s.parse().unwrap()
}

/// A thread with a lease, a message with an artifact, its event, a recipient's copy in
/// every state column, and a typed request: every column set, none left at a default.
async fn inbox_records_read_back_as_written(s: &Opened) {
    let store = &*s.store;
    let thread = Thread {
        thread_id: "T1".into(),
        run_id: "R1".into(),
        task_id: "K1".into(),
        subject: "the subject".into(),
        created_by: "lead".into(),
        assigned_to: "w".into(),
        status: parse("claimed"),
        priority: parse("high"),
        latest_message_id: some("M1"),
        created_at: text(0),
        updated_at: text(1),
        lease: None,
    };
    let lease = LeaseRow {
        agent_id: "w".into(),
        token: "secret".into(),
        generation: 3,
        claimed_at: ts(2),
        expires_at: ts(60_000),
        released_at: None,
    };
    let event = Event {
        event_id: 0,
        event_type: parse("thread.created"),
        source: "inbox".into(),
        run_id: "R1".into(),
        task_id: "K1".into(),
        thread_id: "T1".into(),
        actor: "lead".into(),
        assigned_to: "w".into(),
        created_by: "lead".into(),
        thread_status: Some(parse("claimed")),
        task_status: Some(parse("ready")),
        message_id: None,
        summary: "created".into(),
        payload_json: serde_json::json!({"a": [1, "two"]}),
        created_at: text(3),
        message: None,
        message_type: None,
        mail: None,
    };
    let mut message = Message {
        message_id: "M1".into(),
        thread_id: "T1".into(),
        from_agent: "lead".into(),
        to_agent: "w".into(),
        kind: parse("question"),
        summary: "why?".into(),
        body: "a body\nof two lines".into(),
        payload_json: serde_json::json!({"n": 1.5, "s": "é"}),
        created_at: text(4),
        event_id: 0,
        category: Some(parse("DECISION")),
        requires_ack: true,
        artifacts: vec![Artifact {
            artifact_id: "A1".into(),
            message_id: "M1".into(),
            path: "src/lib.rs".into(),
            kind: "file".into(),
            metadata_json: serde_json::json!({"lines": 3}),
            created_at: text(4),
        }],
        msg_type: some("permission_request"),
    };
    let request = RequestRow {
        request_id: "Q1".into(),
        msg_type: "permission_request".into(),
        thread_id: "T1".into(),
        message_id: "M1".into(),
        from_agent: "lead".into(),
        to_agent: "w".into(),
        run_id: "R1".into(),
        task_id: "K1".into(),
        created_at: text(5),
    };
    let (t, l, e, r, m) = (thread.clone(), lease.clone(), event.clone(), request.clone(), message.clone());
    let event_id = write(store, move |tx| {
        tx.threads_mut().thread_insert(&t)?;
        tx.leases_mut().lease_grant(&t.thread_id, &l)?;
        let id = tx.events_mut().event_insert(&e)?;
        tx.messages_mut().message_insert(&Message { event_id: id, ..m.clone() })?;
        tx.requests_mut().request_insert(&r)?;
        Ok(id)
    })
    .await
    .unwrap();
    message.event_id = event_id;
    let mail = MailRow {
        recipient: "w".into(),
        message_id: "M1".into(),
        event_id,
        thread_id: "T1".into(),
        run_id: "R1".into(),
        task_id: "K1".into(),
        subject: "the subject".into(),
        from_agent: "lead".into(),
        kind: message.kind,
        category: message.category,
        summary: message.summary.clone(),
        body: message.body.clone(),
        requires_ack: true,
        created_at: message.created_at.clone(),
        state: parse("read"),
        priority: parse("urgent"),
        delivered_at: Some(ts(6)),
        read_at: Some(ts(7)),
        acked_at: Some(ts(8)),
        expires_at: Some(ts(9)),
        withdrawn_at: Some(ts(10)),
        reminded_at: Some(ts(11)),
    };
    let x = mail.clone();
    write(store, move |tx| {
        tx.mail_mut().mail_insert(&x)?;
        tx.mail_mut().mail_save(&x)
    })
    .await
    .unwrap();

    let (stored, got, events, copy, req) = read(store, |tx| {
        let q = EventQuery { after: 0, filter: EventFilter::default() };
        Ok((
            tx.threads().thread("T1")?.unwrap(),
            tx.messages().message("M1")?.unwrap(),
            tx.events().events_after(&q, 10)?,
            tx.mail().mail_item("w", "M1")?.unwrap(),
            tx.requests().request("Q1")?.unwrap(),
        ))
    })
    .await
    .unwrap();
    assert_eq!(stored.thread, thread);
    assert_eq!(stored.lease, Some(lease));
    assert_eq!(got, message);
    assert_eq!(events, vec![Event { event_id, ..event }]);
    assert_eq!(copy, mail);
    assert_eq!(req, request);
}

/// A run, a task, an attempt, a council and its member, and a launched session.
async fn orch_records_read_back_as_written(s: &Opened) {
    let store = &*s.store;
    let run = Run {
        run_id: "R1".into(),
        goal: "ship it".into(),
        status: parse("active"),
        created_by: "lead".into(),
        auto_retry: 2,
        created_at: text(0),
        updated_at: text(1),
        auto_merge: true,
        repo: some("/repo"),
        base_branch: some("main"),
        base_rev: some("abc123"),
        integration_branch: some("coord/R1"),
        verify: some("cargo test"),
        require_approval: true,
        merge_retries: 5,
    };
    let task = Task {
        run_id: "R1".into(),
        task_id: "K1".into(),
        title: "a title".into(),
        body: "a body".into(),
        acceptance: "tests pass".into(),
        priority: parse("low"),
        assign_to: some("w"),
        role: some("reviewer"),
        kind: parse("code"),
        max_attempts: 4,
        status: parse("ready"),
        attempt: 1,
        depends_on: Vec::new(),
        created_at: text(2),
        updated_at: text(3),
        merge_state: Some(parse("conflict")),
        merge_commit: some("def456"),
        resolves: some("K0"),
        verify: Some(String::new()),
    };
    let attempt = Attempt {
        run_id: "R1".into(),
        task_id: "K1".into(),
        attempt: 1,
        thread_id: "T1".into(),
        worker: "w".into(),
        status: parse("live"),
        repo: some("/repo"),
        worktree_path: some("/repo/.wt/K1"),
        branch: some("coord/K1"),
        base_rev: some("abc123"),
        base_branch: some("main"),
        previous_thread_id: some("T0"),
        started_at: text(4),
        ended_at: some(&text(5)),
        host: some("h1"),
    };
    let council = CouncilRow {
        run_id: "R1".into(),
        council_id: "C1".into(),
        topic: "which way".into(),
        body: "b".into(),
        phase: parse("voting"),
        groups_json: "[[\"a\"]]".into(),
        created_at: text(6),
        updated_at: text(7),
    };
    let member = MemberRow {
        run_id: "R1".into(),
        council_id: "C1".into(),
        reviewer: "r1".into(),
        ord: 2,
        brainstorm_thread_id: "T2".into(),
        brainstorm_json: some("{}"),
        vote_thread_id: some("T3"),
        vote_json: some("{\"v\":1}"),
    };
    let session = LaunchSession {
        session_id: "S1".into(),
        run_id: "R1".into(),
        task_id: "K1".into(),
        attempt: 1,
        thread_id: "T1".into(),
        agent: "w".into(),
        client: "claude".into(),
        pid: 4_000_000_000,
        host: "h1".into(),
        launcher: "L1".into(),
        cwd: "/repo/.wt/K1".into(),
        log_path: "/logs/S1".into(),
        tmux_window: some("coord:1"),
        state: parse("running"),
        started_at: text(8),
        ended_at: some(&text(9)),
        exit_code: Some(-1),
        signal: Some(15),
        reason: some("stopped"),
        log_tail: some("last line"),
        mode: parse("live"),
    };
    let (r, t, a, c, m) = (run.clone(), task.clone(), attempt.clone(), council.clone(), member.clone());
    let l = session.clone();
    write(store, move |tx| {
        tx.runs_mut().run_insert(&r)?;
        tx.tasks_mut().task_insert(&t)?;
        tx.attempts_mut().attempt_insert(&a)?;
        tx.councils_mut().council_insert(&c)?;
        tx.councils_mut().member_insert(&m)?;
        tx.launches_mut().launch_insert(&l)
    })
    .await
    .unwrap();
    let got = read(store, |tx| {
        Ok((
            tx.runs().run("R1")?.unwrap(),
            tx.tasks().task("R1", "K1")?.unwrap(),
            tx.attempts().attempt("R1", "K1", 1)?.unwrap(),
            tx.councils().council("R1", "C1")?.unwrap(),
            tx.councils().members("R1", "C1")?,
            tx.launches().launch_session("S1")?.unwrap(),
        ))
    })
    .await
    .unwrap();
    assert_eq!(got.0, run);
    assert_eq!(got.1, task);
    assert_eq!(got.2, attempt);
    assert_eq!(format!("{:?}", got.3), format!("{council:?}"));
    assert_eq!(format!("{:?}", got.4), format!("{:?}", vec![member]));
    assert_eq!(got.5, session);
}

/// Shipped migrations are never edited: a database migrated by an older build must match
/// what a new one would build. Add a migration instead, and its hash to its backend's list.
#[test]
fn shipped_migrations_never_change() {
    let fnv =
        |s: &str| s.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3));
    let hashes = |m: &[&str]| m.iter().map(|m| format!("{:016x}", fnv(m))).collect::<Vec<_>>();
    assert_eq!(
        hashes(coordd::store::sqlite::migrations::MIGRATIONS),
        SQLITE_SHIPPED,
        "a shipped SQLite migration changed"
    );
    assert_eq!(
        hashes(coordd::store::postgres::migrations::MIGRATIONS),
        POSTGRES_SHIPPED,
        "a shipped PostgreSQL migration changed"
    );
}

const SQLITE_SHIPPED: &[&str] = &[
    "90ab6258d332f28b",
    "2b21ee7639da8300",
    "87e1d9c76252a45d",
    "e2335aca1525bca7",
    "3ade1e3adf30cba3",
    // 6 (issue 15): attempts.host.
    "b38d1590d18e15a2",
    // 7 (issue 14): agent credentials.
    "a3e0df438774fe78",
    // 8 (issue 11): typed control messages.
    "d19b9d99869bc246",
    // 9 (issue 13): full-text search, stacked tasks.
    "a9b6928e749bf5c8",
    // 10 (issue 19): launched sessions.
    "6df16cf133fe36be",
    // 11 (issue 36): the merge queue, review comments.
    "d04ade14db02c336",
    // 12 (issue 33; after issue 36's 11): launched sessions' usage, runs' budgets.
    "97300653c98a01e1",
    // 13 (issue 33): launched sessions' mode (live or one-shot).
    "25c819686ce9d7f2",
];

const POSTGRES_SHIPPED: &[&str] = &[
    // 1: SQLite's 1–6, the event counter and the instance table.
    "a62ba3663ae2cfa8",
    // 2: SQLite's 7, agent credentials.
    "cc6d1c9932624d9e",
    // 3: SQLite's 8, typed control messages.
    "6f713a406e5e610e",
    // 4 (issue 13): stacked tasks, full-text search.
    "0008982597c37407",
    // 5 (issue 19): launched sessions.
    "f3d532295c8b2e5b",
    // 6 (issue 36): SQLite's 11, the merge queue and review comments.
    "c36df8b9abab9bc4",
    // SQLite's 12 (issue 33; after issue 36's): launched sessions' usage, runs' budgets.
    "019433705bf400b5",
    // SQLite's 13 (issue 33): launched sessions' mode (live or one-shot).
    "ab98177701728b9f",
    // 9 (issue 34): the copies by their event.
    "c295ed74eeb96089",
];
