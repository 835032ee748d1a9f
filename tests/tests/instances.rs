//! Several `coordd` instances on one PostgreSQL database, as a team on several hosts runs
//! them: each test starts two daemons (two project directories, two host names) on one
//! database of a real server, and drives them through the client.

use std::sync::Arc;
use std::time::Duration;

use coord_client::{Client, ClientError};
use coord_proto::api::{EventsApiClient, InboxApiClient};
use coord_proto::types::*;
use coord_tests::Project;
use coord_tests::pg::{self, Server};

/// Two projects (hosts `a` and `b`) on one fresh database of `server`.
fn pair_on(server: &Server) -> (Project, Project) {
    let url = server.database();
    (Project::new().with_store(&url).on_host("host-a"), Project::new().with_store(&url).on_host("host-b"))
}

/// Two projects on a database of the shared server; `None` (said why) without PostgreSQL.
fn pair() -> Option<(Project, Project)> {
    pg::shared().map(pair_on)
}

fn send(to: &str, summary: &str) -> SendParams {
    SendParams {
        from: "lead".into(),
        to: to.into(),
        message: MessageInput { summary: summary.into(), ..Default::default() },
        ..Default::default()
    }
}

async fn next_event(sub: &mut coord_client::EventStream) -> Event {
    tokio::time::timeout(Duration::from_secs(60), sub.next()).await.expect("an event within 60 s").unwrap().unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_send_through_one_instance_wakes_a_waiter_on_the_other() {
    let Some((a, b)) = pair() else { return };
    let (_da, _db) = (a.serve(), b.serve());
    let (ca, cb) = (a.client().await, b.client().await);
    let filter = EventFilter { agent: Some("w1".into()), ..Default::default() };
    let mut waiter = cb.subscribe(filter).await.unwrap();
    let sent = ca.send(send("w1", "from host a")).await.unwrap();
    let ev = next_event(&mut waiter).await;
    assert_eq!(ev.event_id, sent.event_id);
    assert_eq!(ev.message.expect("with its message").summary, "from host a");
}

/// An instance publishes another's events as read back from the store: they carry their
/// copies (`mail`) as the sender's own live events do. (Regression: they came without, and
/// so did an instance's own event when the notification outran its writer.)
#[tokio::test(flavor = "multi_thread")]
async fn an_event_from_the_other_instance_names_its_copies() {
    let Some((a, b)) = pair() else { return };
    let (_da, _db) = (a.serve(), b.serve());
    let (ca, cb) = (a.client().await, b.client().await);
    let filter = EventFilter { event_types: vec![EventType::ThreadCreated], ..Default::default() };
    let mut on_a = ca.subscribe(filter.clone()).await.unwrap();
    let mut on_b = cb.subscribe(filter).await.unwrap();
    let p = SendParams { priority: Some(Priority::Urgent), ..send("w1", "copies") };
    let sent = ca.send(p).await.unwrap();
    let (here, there) = (next_event(&mut on_a).await, next_event(&mut on_b).await);
    assert_eq!((here.event_id, there.event_id), (sent.event_id, sent.event_id));
    let mail = there.mail.expect("the other instance's event names its copies");
    assert_eq!((mail.recipients, mail.priority), (vec!["w1".to_string()], Priority::Urgent));
    assert_eq!(here.mail.map(|m| m.recipients), Some(vec!["w1".to_string()]));
}

#[tokio::test(flavor = "multi_thread")]
async fn racing_claims_across_instances_have_exactly_one_winner() {
    let Some((a, b)) = pair() else { return };
    let (_da, _db) = (a.serve(), b.serve());
    let lead = a.client().await;
    let mut threads = Vec::new();
    for i in 0..10 {
        threads.push(lead.send(send("pool", &format!("job {i}"))).await.unwrap().thread.thread_id);
    }
    // 24 claimers, half on each instance, each on a connection of its own.
    let mut clients: Vec<Arc<Client>> = Vec::new();
    for i in 0..24 {
        clients.push(Arc::new(if i % 2 == 0 { a.client().await } else { b.client().await }));
    }
    let mut tasks = Vec::new();
    for (i, c) in clients.into_iter().enumerate() {
        let threads = threads.clone();
        tasks.push(tokio::spawn(async move {
            let agent = format!("w{i}");
            let mut won = Vec::new();
            for t in threads {
                let p = ClaimParams { agent: agent.clone(), thread_id: t.clone(), lease_seconds: None };
                match c.claim(p).await.map_err(ClientError::from) {
                    Ok(r) => won.push((t, agent.clone(), r.thread.lease.expect("a lease").generation)),
                    Err(ClientError::Rpc { app: Some(coord_proto::ErrorCode::LeaseConflict), .. }) => {}
                    Err(e) => panic!("unexpected error: {e}"),
                }
            }
            won
        }));
    }
    let mut wins = Vec::new();
    for t in tasks {
        wins.extend(t.await.unwrap());
    }
    for t in &threads {
        let winners: Vec<_> = wins.iter().filter(|(w, _, _)| w == t).collect();
        assert_eq!(winners.len(), 1, "exactly one grant for {t}: {winners:?}");
        assert_eq!(winners[0].2, 1, "the first grant's generation");
        let shown = lead.show(ShowParams { thread_id: t.clone(), ..Default::default() }).await.unwrap().thread;
        assert_eq!(shown.assigned_to, winners[0].1, "the stored holder is the one told it won");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn kill_9_of_one_instance_loses_no_acknowledged_write_and_the_other_keeps_serving() {
    let Some((a, b)) = pair() else { return };
    let (da, _db) = (a.serve(), b.serve());
    let (ca, cb) = (a.client().await, b.client().await);
    let through_a = (0..100).map(|i| ca.send(send("w", &format!("a{i}"))));
    let through_b = (0..100).map(|i| cb.send(send("w", &format!("b{i}"))));
    let (ra, rb) =
        futures::future::join(futures::future::join_all(through_a), futures::future::join_all(through_b)).await;
    let acked: Vec<MessageResult> = ra.into_iter().chain(rb).map(|r| r.expect("acknowledged")).collect();
    drop(ca);
    da.kill9();

    let after = cb.send(send("w", "after the kill")).await.expect("the other instance keeps serving");
    let all = cb.list(ListParams { limit: Some(1000), ..Default::default() }).await.unwrap();
    assert_eq!(all.threads.len(), 201, "every acknowledged send is stored");
    for m in &acked {
        assert!(all.threads.iter().any(|t| t.thread_id == m.thread.thread_id), "{} is stored", m.thread.thread_id);
    }
    let events = cb.events_list(EventsListParams { limit: Some(1000), ..Default::default() }).await.unwrap();
    let ids: Vec<i64> = events.events.iter().map(|e| e.event_id).collect();
    assert_eq!(ids, (1..=after.event_id).collect::<Vec<_>>(), "the event stream has no gap");
}

#[tokio::test(flavor = "multi_thread")]
async fn kill_9_of_one_instance_with_writes_in_flight_loses_no_acknowledged_one() {
    let Some((a, b)) = pair() else { return };
    let (da, _db) = (a.serve(), b.serve());
    let cb = b.client().await;
    // Four writers keep sending through A; A dies under them, after the first 40 acks.
    let (acked_tx, mut acked_rx) = tokio::sync::mpsc::unbounded_channel::<MessageResult>();
    let mut writers = Vec::new();
    for w in 0..4 {
        let ca = Arc::new(a.client().await);
        let acked_tx = acked_tx.clone();
        writers.push(tokio::spawn(async move {
            for i in 0..10_000 {
                match ca.send(send("w", &format!("a{w}-{i}"))).await {
                    Ok(m) => {
                        let _ = acked_tx.send(m);
                    }
                    Err(_) => return, // the daemon is gone: this write may or may not be stored
                }
            }
        }));
    }
    drop(acked_tx);
    let mut acked = Vec::new();
    while acked.len() < 40 {
        acked.push(acked_rx.recv().await.expect("acks before the kill"));
    }
    da.kill9();
    for w in writers {
        w.await.unwrap();
    }
    while let Some(m) = acked_rx.recv().await {
        acked.push(m);
    }
    let after = cb.send(send("w", "after the kill")).await.expect("the other instance keeps serving");
    let all = cb.list(ListParams { limit: Some(1000), ..Default::default() }).await.unwrap();
    for m in &acked {
        assert!(all.threads.iter().any(|t| t.thread_id == m.thread.thread_id), "{} is stored", m.thread.thread_id);
    }
    let events = cb.events_list(EventsListParams { limit: Some(1000), ..Default::default() }).await.unwrap();
    let ids: Vec<i64> = events.events.iter().map(|e| e.event_id).collect();
    assert_eq!(ids, (1..=after.event_id).collect::<Vec<_>>(), "the event stream has no gap");
}

#[tokio::test(flavor = "multi_thread")]
async fn after_a_postgres_restart_both_reconnect_and_waits_resume_from_their_cursors() {
    let server = match Server::start() {
        Ok(s) => s,
        Err(e) => return pg::missing(&e),
    };
    let (a, b) = pair_on(&server);
    let (_da, _db) = (a.serve(), b.serve());
    let (ca, cb) = (a.client().await, b.client().await);
    // Waits on both instances, open across the restart.
    let mut on_b = cb.subscribe(EventFilter::default()).await.unwrap();
    let mut on_a = ca.subscribe(EventFilter::default()).await.unwrap();
    let mut sent = Vec::new();
    for i in 0..3 {
        sent.push(ca.send(send("w", &format!("before {i}"))).await.unwrap().event_id);
    }
    server.stop();
    server.start_again().unwrap();
    for i in 0..3 {
        sent.push(ca.send(send("w", &format!("after {i} via a"))).await.expect("a reconnects").event_id);
        sent.push(cb.send(send("w", &format!("after {i} via b"))).await.expect("b reconnects").event_id);
    }
    sent.sort();
    for sub in [&mut on_b, &mut on_a] {
        let mut seen = Vec::new();
        while seen.len() < sent.len() {
            seen.push(next_event(sub).await.event_id);
        }
        assert_eq!(seen, sent, "every event once, in order");
    }
    // Nothing more (no repeats): the next event is a new one.
    let last = ca.send(send("w", "last")).await.unwrap().event_id;
    assert_eq!(next_event(&mut on_b).await.event_id, last);
}

/// The hazard a cursor over a sequence has, shown on this server: a transaction takes id
/// N+1, a later one takes N+2 and commits first; a reader at cursor N sees only N+2, moves
/// its cursor past N+1, and never sees it.
fn a_plain_sequence_skips(url: &str) -> bool {
    let url = url.to_string();
    pg::off_runtime(move || {
        let mut setup = Server::connect(&url);
        setup.batch_execute("CREATE TABLE seq_demo (id BIGSERIAL PRIMARY KEY)").unwrap();
        let (mut t1, mut t2, mut reader) = (Server::connect(&url), Server::connect(&url), Server::connect(&url));
        t1.batch_execute("BEGIN; INSERT INTO seq_demo DEFAULT VALUES").unwrap();
        t2.batch_execute("BEGIN; INSERT INTO seq_demo DEFAULT VALUES; COMMIT").unwrap();
        let seen: Vec<i64> = reader
            .query("SELECT id FROM seq_demo WHERE id > 0 ORDER BY id", &[])
            .unwrap()
            .iter()
            .map(|r| r.get(0))
            .collect();
        t1.batch_execute("COMMIT").unwrap();
        seen == [2]
    })
}

#[tokio::test(flavor = "multi_thread")]
async fn events_committed_out_of_id_order_are_never_skipped_by_a_cursor() {
    let Some((a, b)) = pair() else { return };
    let url = a.store_url().unwrap().to_string();
    assert!(a_plain_sequence_skips(&url), "the hazard is real on this server");
    let (_da, _db) = (a.serve(), b.serve());
    let (ca, cb) = (a.client().await, b.client().await);
    let first = ca.send(send("w", "first")).await.unwrap().event_id;
    let mut on_b = cb.subscribe(EventFilter { after_event: Some(first), ..Default::default() }).await.unwrap();

    // An outside transaction takes the next id the way every writer does (the counter row,
    // locked) and stays open.
    let (hold, held) = (std::sync::mpsc::channel::<()>(), std::sync::mpsc::channel::<i64>());
    let u = url.clone();
    let holder = std::thread::spawn(move || {
        let mut c = Server::connect(&u);
        let mut tx = c.transaction().unwrap();
        let id: i64 =
            tx.query_one("UPDATE coordd_event_counter SET last = last + 1 RETURNING last", &[]).unwrap().get(0);
        tx.execute(
            "INSERT INTO events (event_id, run_id, task_id, thread_id, source, event_type, summary, created_at) \
             VALUES ($1, '', '', '', 'test', 'agent.registered', 'held open', '2026-01-01T00:00:00.000Z')",
            &[&id],
        )
        .unwrap();
        held.0.send(id).unwrap();
        hold.1.recv().unwrap();
        tx.commit().unwrap();
    });
    let held_id = held.1.recv().unwrap();
    assert_eq!(held_id, first + 1);

    // A later send through instance A, which would commit first with a sequence: its
    // writer now waits for the counter row.
    let later = tokio::spawn(async move { ca.send(send("w", "later")).await.unwrap().event_id });
    let u = url.clone();
    pg::off_runtime(move || {
        let mut c = Server::connect(&u);
        let waiting =
            "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'coordd' AND wait_event_type = 'Lock'";
        while c.query_one(waiting, &[]).unwrap().get::<_, i64>(0) == 0 {
            std::thread::sleep(Duration::from_millis(5));
        }
    });
    assert!(!later.is_finished(), "the later commit waits for the earlier id");
    hold.0.send(()).unwrap();
    holder.join().unwrap();
    let later = later.await.unwrap();
    assert_eq!(later, held_id + 1, "ids commit in their own order");
    assert_eq!(next_event(&mut on_b).await.event_id, held_id, "the subscriber sees the earlier id");
    assert_eq!(next_event(&mut on_b).await.event_id, later, "then the later one");
}

fn orch_in(p: &Project, args: &[&str]) -> serde_json::Value {
    p.orch().json_flag().args(args).run().ok().json()
}

fn run_with_one_task(p: &Project, kind: &str) {
    orch_in(p, &["run", "create", "--goal", "g", "--id", "R1"]);
    orch_in(p, &["task", "add", "--run", "R1", "--id", "T1", "--title", "t", "--assign-to", "backend", "--kind", kind]);
}

#[test]
fn a_task_is_dispatched_once_when_two_instances_race() {
    let Some((a, b)) = pair() else { return };
    let (_da, _db) = (a.serve(), b.serve());
    run_with_one_task(&a, "thread");
    let racers: Vec<_> = [&a, &b, &a, &b]
        .iter()
        .map(|p| p.orch().json_flag().args(["dispatch", "--run", "R1", "--task", "T1"]).spawn())
        .collect();
    let outs: Vec<_> = racers.into_iter().map(coord_tests::finish).collect();
    assert_eq!(outs.iter().filter(|o| o.code == 0).count(), 1, "one dispatch wins: {outs:#?}");
    let threads = b.inbox().json_flag().args(["list", "--run", "R1"]).run().ok().json();
    assert_eq!(threads["threads"].as_array().unwrap().len(), 1, "one attempt's thread: {threads}");
}

#[test]
fn worktrees_live_on_the_host_that_made_them() {
    let Some((a, b)) = pair() else { return };
    for (k, v) in [
        ("init", vec!["-q", "-b", "main"]),
        ("config", vec!["user.email", "t@example.com"]),
        ("config", vec!["user.name", "T"]),
    ] {
        let mut args = vec![k];
        args.extend(v);
        coord_tests::git_in(a.path(), &args);
    }
    a.write("README.md", "hello\n");
    coord_tests::git_in(a.path(), &["add", "README.md"]);
    coord_tests::git_in(a.path(), &["commit", "-q", "-m", "init"]);
    let (_da, _db) = (a.serve(), b.serve());
    run_with_one_task(&a, "code");
    let d = orch_in(&a, &["dispatch", "--run", "R1", "--task", "T1"]);
    assert!(d["dispatches"][0]["worktree_path"].is_string(), "{d}");
    let here = orch_in(&a, &["worktree", "list"]);
    assert_eq!(here["worktrees"].as_array().unwrap().len(), 1, "{here}");
    assert_eq!(here["other_hosts"], 0);
    // Nothing listed here: exit 10, as for any empty list.
    let there = b.orch().json_flag().args(["worktree", "list"]).run().code(10).json();
    assert!(there["worktrees"].as_array().unwrap().is_empty(), "{there}");
    assert_eq!(there["other_hosts"], 1);
    let pruned = orch_in(&b, &["worktree", "prune", "--force"]);
    assert!(
        pruned["removed"].as_array().unwrap().is_empty() && pruned["kept"].as_array().unwrap().is_empty(),
        "{pruned}"
    );
    let attempt = &orch_in(&b, &["task", "show", "--run", "R1", "--task", "T1"]);
    assert_eq!(attempt["attempts"][0]["host"], "host-a", "the attempt records its host: {attempt}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_lease_expiry_is_recorded_once_not_once_per_instance() {
    let Some((a, b)) = pair() else { return };
    let (_da, _db) = (a.serve(), b.serve());
    let (ca, cb) = (a.client().await, b.client().await);
    let thr = ca.send(send("w1", "t")).await.unwrap().thread.thread_id;
    let filter =
        EventFilter { thread_id: Some(thr.clone()), event_types: vec![EventType::LeaseExpired], ..Default::default() };
    let mut expired = cb.subscribe(filter).await.unwrap();
    ca.claim(ClaimParams { agent: "w1".into(), thread_id: thr.clone(), lease_seconds: Some(1) }).await.unwrap();
    next_event(&mut expired).await;
    // Every write after the expiry report is ordered after any second report would be.
    let marker = ca.send(send("w1", "marker")).await.unwrap().event_id;
    let all = cb.events_list(EventsListParams { limit: Some(1000), ..Default::default() }).await.unwrap();
    assert!(all.events.iter().any(|e| e.event_id == marker));
    let reports = all.events.iter().filter(|e| e.event_type == EventType::LeaseExpired).count();
    assert_eq!(reports, 1, "one lease.expired for one expiry");
    // A new grant through the other instance takes the next generation.
    let again = cb.claim(ClaimParams { agent: "w2".into(), thread_id: thr, lease_seconds: None }).await.unwrap();
    assert_eq!(again.thread.lease.unwrap().generation, 2);
}

/// Wait (bounded) until `path` holds `needle`: a file another process writes when it
/// learns of a change.
fn wait_for_file(path: &std::path::Path, needle: &str) {
    let t0 = std::time::Instant::now();
    while !std::fs::read_to_string(path).is_ok_and(|s| s.contains(needle)) {
        assert!(t0.elapsed() < Duration::from_secs(60), "{} never held {needle}", path.display());
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[test]
fn a_policy_set_through_one_instance_gates_the_hooks_on_the_other() {
    let Some((a, b)) = pair() else { return };
    let (_da, _db) = (a.serve(), b.serve());
    coord_tests::ok_as(&a, "lead", &["policy", "lead", "lead"]);
    coord_tests::ok_as(&a, "lead", &["policy", "gate", "Bash(git push*)"]);
    // B learns of the change from its bus and rewrites the snapshot its hooks read.
    wait_for_file(&b.path().join(".agents/coordd.policy.json"), "git push");
    let input = serde_json::json!({
        "session_id": "s", "transcript_path": "/tmp/t.jsonl", "cwd": b.path(), "permission_mode": "default",
        "hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_use_id": "toolu_b",
        "tool_input": {"command": "git push origin main"}
    });
    b.inbox()
        .args(["--agent", "w1", "hook", "claude", "pre-tool-use", "--timeout-seconds", "1"])
        .stdin(input.to_string().as_bytes())
        .run()
        .ok();
    let asked = coord_tests::ok_as(&a, "lead", &["requests", "--all"]);
    assert_eq!(asked["requests"][0]["type"], "permission_request", "B's hook asked the lead: {asked}");
    assert_eq!(asked["requests"][0]["from"], "w1");
}

#[test]
fn a_read_only_command_starts_the_daemon_of_a_recorded_store() {
    let Some(server) = pg::shared() else { return };
    let url = server.database();
    let p = Project::new().without_store();
    // `--store` records the store in .agents/coordd.json; no SQLite file is made.
    p.try_serve_args(&["--store", &url]).expect("serves on PostgreSQL").signal("TERM");
    assert!(!p.path().join(".agents/coord.db").exists());
    let listed = p.inbox().args(["list", "--json"]).run().ok().json();
    assert_eq!(listed["threads"], serde_json::json!([]), "{listed}");
    let init = p.inbox().args(["init", "--json"]).run().ok().json();
    assert_eq!(init["journal_mode"], "postgresql", "the recorded store: {init}");
}

#[tokio::test(flavor = "multi_thread")]
async fn racing_reservations_across_instances_grant_each_scope_once() {
    use coord_proto::api::AgentsApiClient;
    let Some((a, b)) = pair() else { return };
    let (_da, _db) = (a.serve(), b.serve());
    let (ca, cb) = (Arc::new(a.client().await), Arc::new(b.client().await));
    // Twenty scopes, each wanted at the same moment by one agent on A and one on B; the
    // scopes overlap as globs (`src/m7/**` and `src/m7/lib.rs`), so only one may hold each.
    let mut races = Vec::new();
    for i in 0..20 {
        let (ca, cb) = (ca.clone(), cb.clone());
        races.push(tokio::spawn(async move {
            let reserve = |c: Arc<Client>, agent: &str, scope: String| {
                let p =
                    ReserveParams { agent: agent.into(), scope, task_id: Some(format!("T{i}")), ..Default::default() };
                async move { c.reserve(p).await }
            };
            let (x, y) = tokio::join!(
                reserve(ca, "on-a", format!("src/m{i}/**")),
                reserve(cb, "on-b", format!("src/m{i}/lib.rs"))
            );
            (x.is_ok(), y.map_err(|e| e.to_string()))
        }));
    }
    for r in races {
        let (a_won, b) = r.await.unwrap();
        match (a_won, b) {
            (true, Err(e)) => assert!(e.contains("reservation_conflict") || e.contains("held"), "{e}"),
            (false, Ok(_)) => {}
            (a_won, b) => panic!("both or neither got the scope: a {a_won}, b {b:?}"),
        }
    }
}

/// An instance's own commits are published by its writer before they are announced, so
/// the notifications of its own sends never make its follower read the store again.
/// (Regression: the follower compared each notification with the cursor as it stood
/// before it began to wait, so nearly every own commit cost an empty catch-up read, taken
/// under the lock the writer publishes through.)
#[tokio::test(flavor = "multi_thread")]
async fn an_instance_reads_back_none_of_its_own_commits() {
    let Some((a, b)) = pair() else { return };
    let mut da = a.serve_with(&[], &[("COORDD_LOG", "info,coordd::store::postgres::follow=debug")]);
    let _db = b.serve();
    let (ca, cb) = (a.client().await, b.client().await);
    for i in 0..20 {
        ca.send(send("w1", &format!("own {i}"))).await.unwrap();
    }
    // One commit of the other instance: once a's follower has caught up to it, it has seen
    // every notification of a's own sends (one connection delivers them in order).
    let theirs = cb.send(send("w2", "from host b")).await.unwrap().event_id;
    let mut empty = 0;
    loop {
        let line = da.wait_for_log("follower caught up");
        let field = |name: &str| -> i64 {
            let at = line.find(&format!("{name}=")).expect("the field") + name.len() + 1;
            line[at..].split(|c: char| !c.is_ascii_digit()).next().unwrap().parse().unwrap()
        };
        if field("read") == 0 {
            empty += 1;
        }
        if field("to") >= theirs {
            break;
        }
    }
    // The catch-up at start-up may find nothing; no other may.
    assert!(empty <= 1, "{empty} catch-ups found nothing to read");
}

/// A reply follows the publication of its events on the instance that answers it, also
/// when another instance committed just before: a subscription made after the reply sees
/// only what commits after it. (Regression: with the other instance's events not yet
/// published, the writer left its batch to the follower and answered at once, so the
/// batch reached subscriptions made after its reply.)
#[tokio::test(flavor = "multi_thread")]
async fn a_reply_follows_its_events_after_another_instance_commits() {
    let Some((a, b)) = pair() else { return };
    let (_da, _db) = (a.serve(), b.serve());
    let (ca, cb) = (a.client().await, b.client().await);
    for i in 0..10 {
        cb.send(send("w2", &format!("theirs {i}"))).await.unwrap();
        ca.send(send("w1", &format!("ours {i}"))).await.unwrap();
        let mut sub = ca.subscribe(EventFilter::default()).await.unwrap();
        let marker = cb.send(send("w3", &format!("marker {i}"))).await.unwrap();
        let first = next_event(&mut sub).await;
        assert_eq!(first.event_id, marker.event_id, "round {i}: the first event after subscribing");
    }
}

/// The duties pass to the other instance when their holder dies: the server releases the
/// duties lock with the holder's connection, the other instance takes it (it tries every
/// second), and then runs the duties (here: reports a lease's expiry).
#[tokio::test(flavor = "multi_thread")]
async fn the_duties_pass_to_the_other_instance_when_their_holder_dies() {
    let Some((a, b)) = pair() else { return };
    let mut da = a.serve();
    da.wait_for_log("holds the duties lock");
    let mut db = b.serve();
    let cb = b.client().await;
    let thr = cb.send(send("w1", "t")).await.unwrap().thread.thread_id;
    da.kill9();
    db.wait_for_log("holds the duties lock");
    let filter =
        EventFilter { thread_id: Some(thr.clone()), event_types: vec![EventType::LeaseExpired], ..Default::default() };
    let mut expired = cb.subscribe(filter).await.unwrap();
    cb.claim(ClaimParams { agent: "w1".into(), thread_id: thr, lease_seconds: Some(1) }).await.unwrap();
    next_event(&mut expired).await;
}

/// An idle instance is woken only by what it must answer: holding the duties lock (it is
/// alone), it has no timer at all. Counted, not timed: once the start-up work is done, a
/// whole second passes in which none of its threads is switched out (with the follower's
/// 200 ms wait for notifications, no second ever did).
#[cfg(target_os = "linux")]
#[test]
fn an_idle_instance_is_never_woken() {
    let Some((a, _)) = pair() else { return };
    let da = a.serve();
    let mut seen = Vec::new();
    for _ in 0..20 {
        let (woke, who) = coord_tests::wake_ups_during(da.pid(), Duration::from_secs(1));
        if woke == 0 {
            return;
        }
        seen.push(who);
    }
    panic!("the idle instance woke in every second: {seen:?}");
}
