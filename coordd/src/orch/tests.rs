//! Store-level tests of orch against a real SQLite file: the graph, cycles, readiness,
//! reconcile through inbox writes, and council grouping.

use coord_proto::ErrorCode;
use coord_proto::types::*;

use crate::db::Db;
use crate::error::Error;
use crate::inbox::write as inbox;
use crate::orch::{council, dispatch, plan, reconcile};

fn open() -> (Db, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    (Db::open(&dir.path().join("coord.db")).unwrap(), dir)
}

fn add(run: &str, id: &str, deps: &[&str]) -> TaskAddParams {
    TaskAddParams {
        run_id: run.into(),
        task_id: id.into(),
        title: format!("task {id}"),
        depends_on: deps.iter().map(|d| d.to_string()).collect(),
        assign_to: Some("w".into()),
        kind: Some(TaskKind::Thread),
        ..Default::default()
    }
}

async fn setup(db: &Db) {
    let p = RunCreateParams { run_id: Some("R1".into()), goal: "g".into(), ..Default::default() };
    db.write(move |c| plan::create_run(c, p)).await.unwrap();
    for (id, deps) in [("T1", vec![]), ("T2", vec!["T1"]), ("T3", vec!["T1", "T2"])] {
        let p = add("R1", id, &deps);
        db.write(move |c| plan::add_task(c, p)).await.unwrap();
    }
}

#[tokio::test]
async fn readiness_follows_dependencies_and_cycles_are_refused() {
    let (db, _d) = open();
    setup(&db).await;
    let ready =
        db.read(|c| plan::ready(c, &TaskListParams { run_id: "R1".into(), ..Default::default() })).await.unwrap();
    assert_eq!(ready.iter().map(|t| t.task_id.as_str()).collect::<Vec<_>>(), ["T1"]);
    let p = DepParams { run_id: "R1".into(), task_id: "T1".into(), on: "T3".into() };
    let e = db.write(move |c| plan::change_dep(c, p, true)).await.unwrap_err();
    assert_eq!(e.to_app().code, ErrorCode::InvalidInput);
    assert!(e.to_string().contains("cycle"), "{e}");
}

#[tokio::test]
async fn a_finished_thread_finishes_its_task_and_releases_dependents() {
    let (db, _d) = open();
    setup(&db).await;
    let plans = vec![dispatch::Plan {
        task_id: "T1".into(),
        attempt: 1,
        worker: "w".into(),
        repo: None,
        worktree: None,
        previous: None,
    }];
    let d = db.write(move |c| dispatch::record(c, "R1", plans, dispatch::Mode::Dispatch)).await.unwrap();
    let thread = d[0].thread_id.clone();
    let t = thread.clone();
    db.write(move |c| inbox::claim(c, ClaimParams { agent: "w".into(), thread_id: t, lease_seconds: None }))
        .await
        .unwrap();
    let t = thread.clone();
    db.write(move |c| {
        inbox::finish(
            c,
            FinishParams {
                agent: "w".into(),
                thread_id: t,
                message: MessageInput { summary: "ok".into(), ..Default::default() },
                lease_token: None,
            },
            ThreadStatus::Done,
        )
    })
    .await
    .unwrap();
    let tasks = db.read(|c| crate::orch::run_tasks(c, "R1")).await.unwrap();
    let status: Vec<_> = tasks.iter().map(|t| (t.task_id.as_str(), t.status)).collect();
    assert_eq!(status, [("T1", TaskStatus::Done), ("T2", TaskStatus::Ready), ("T3", TaskStatus::Pending)]);
    // Reconcile finds nothing left to repair.
    let changed = db.write(|c| reconcile::run(c, "R1")).await.unwrap();
    assert!(changed.is_empty(), "{changed:?}");
}

#[tokio::test]
async fn retry_stops_at_max_attempts() {
    let (db, _d) = open();
    setup(&db).await;
    let task = db.read(|c| crate::orch::load_task(c, "R1", "T1")).await.unwrap();
    let exhausted = Task { status: TaskStatus::Failed, attempt: 3, ..task };
    let e: Error = dispatch::check_mode(&exhausted, dispatch::Mode::Retry).unwrap_err();
    assert!(e.to_string().contains("all 3"), "{e}");
}

async fn fail_thread(db: &Db, thread: &str) {
    let t = thread.to_string();
    db.write(move |c| inbox::claim(c, ClaimParams { agent: "w".into(), thread_id: t, lease_seconds: None }))
        .await
        .unwrap();
    let t = thread.to_string();
    db.write(move |c| {
        inbox::finish(
            c,
            FinishParams {
                agent: "w".into(),
                thread_id: t,
                message: MessageInput { summary: "no".into(), ..Default::default() },
                lease_token: None,
            },
            ThreadStatus::Failed,
        )
    })
    .await
    .unwrap();
}

async fn run_status(db: &Db) -> RunStatus {
    db.read(|c| crate::orch::load_run(c, "R1")).await.unwrap().status
}

fn plan_for(task: &str, attempt: u32) -> Vec<dispatch::Plan> {
    vec![dispatch::Plan {
        task_id: task.into(),
        attempt,
        worker: "w".into(),
        repo: None,
        worktree: None,
        previous: None,
    }]
}

#[tokio::test]
async fn the_run_stays_failed_while_any_task_is_failed() {
    let (db, _d) = open();
    let p = RunCreateParams { run_id: Some("R1".into()), goal: "g".into(), ..Default::default() };
    db.write(move |c| plan::create_run(c, p)).await.unwrap();
    let mut threads = Vec::new();
    for id in ["A", "B"] {
        let p = add("R1", id, &[]);
        db.write(move |c| plan::add_task(c, p)).await.unwrap();
        let d = db.write(move |c| dispatch::record(c, "R1", plan_for(id, 1), dispatch::Mode::Dispatch)).await.unwrap();
        threads.push(d[0].thread_id.clone());
    }
    for t in &threads {
        fail_thread(&db, t).await;
    }
    assert_eq!(run_status(&db).await, RunStatus::Failed);
    // Retrying one of two failed tasks leaves the run failed; retrying both resumes it.
    db.write(|c| dispatch::record(c, "R1", plan_for("A", 2), dispatch::Mode::Retry)).await.unwrap();
    assert_eq!(run_status(&db).await, RunStatus::Failed);
    db.write(|c| dispatch::record(c, "R1", plan_for("B", 2), dispatch::Mode::Retry)).await.unwrap();
    assert_eq!(run_status(&db).await, RunStatus::Active);
    // Cancelling the run never passes through done, even with every other task finished.
    let p = CancelTaskParams { run_id: "R1".into(), task_id: None, reason: "stop".into() };
    db.write(move |c| plan::cancel(c, p)).await.unwrap();
    let types: Vec<String> = db
        .read(|c| {
            let mut s =
                c.prepare("SELECT event_type FROM events WHERE run_id = 'R1' AND source = 'orch' ORDER BY event_id")?;
            Ok(s.query_map([], |r| r.get(0))?.collect::<Result<_, _>>()?)
        })
        .await
        .unwrap();
    assert!(!types.iter().any(|t| t == "run.done"), "{types:?}");
    assert_eq!(types.last().map(String::as_str), Some("run.cancelled"));
}

#[tokio::test]
async fn long_texts_get_a_clear_error_and_long_titles_still_dispatch() {
    let (db, _d) = open();
    setup(&db).await;
    let p = TaskAddParams { title: "x".repeat(5000), ..add("R1", "TX", &[]) };
    let e = db.write(move |c| plan::add_task(c, p)).await.unwrap_err();
    assert!(e.to_string().contains("title is longer than 4000"), "{e}");
    let p = TaskAddParams { title: "y".repeat(3000), ..add("R1", "TY", &[]) };
    db.write(move |c| plan::add_task(c, p)).await.unwrap();
    let d = db.write(|c| dispatch::record(c, "R1", plan_for("TY", 1), dispatch::Mode::Dispatch)).await.unwrap();
    assert_eq!(d.len(), 1, "the subject is cut to fit");
}

/// The per-change run probes and the ready queue must stay index lookups: a scan of a
/// run's tasks on every change made adding 100k tasks quadratic once.
#[tokio::test]
async fn run_probes_and_the_ready_queue_use_the_task_index() {
    let (db, _d) = open();
    setup(&db).await;
    let plans: Vec<Vec<String>> = db
        .read(|c| {
            let mut out = Vec::new();
            for sql in [
                "SELECT 1 FROM tasks WHERE run_id = 'R1' AND status IN ('pending', 'ready', 'dispatched', 'in_progress', 'blocked', 'failed')",
                "SELECT 1 FROM tasks WHERE run_id = 'R1' AND status = 'failed' AND retry_pending = 0",
                "SELECT task_id FROM tasks t WHERE t.run_id = 'R1' AND t.status = 'ready' ORDER BY t.prio_rank DESC, t.rowid LIMIT 50",
            ] {
                let mut stmt = c.prepare(&format!("EXPLAIN QUERY PLAN {sql}"))?;
                let rows: Vec<String> = stmt.query_map([], |r| r.get::<_, String>(3))?.collect::<Result<_, _>>()?;
                out.push(rows);
            }
            Ok(out)
        })
        .await
        .unwrap();
    for plan in &plans {
        // A seek on (run_id, status), not a walk over every task of the run.
        assert!(plan.iter().any(|l| l.contains("idx_tasks_queue") && l.contains("status=?")), "{plan:?}");
        assert!(!plan.iter().any(|l| l.contains("TEMP B-TREE")), "no sort: {plan:?}");
    }
}

#[test]
fn titles_normalise_for_grouping() {
    assert_eq!(council::normalize("Add  Rate-limiting!"), "add rate limiting");
    assert_eq!(council::normalize("add rate limiting"), "add rate limiting");
}
