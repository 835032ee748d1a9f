//! Changing a task after it was added: `orch.taskEdit` (which `orch task assign` uses)
//! and `orch.taskRemove`; and a run's settings, `orch.runEdit`. What the worker was handed (title, body, acceptance, kind) can
//! change only before the first dispatch; who gets it next, its priority, role and attempt
//! limit until it is finished. A task that was ever dispatched is never removed (that would
//! lose its attempts' history): cancel it instead.

use coord_proto::ErrorCode;
use coord_proto::types::*;
use serde_json::{Value, json};

use super::model::*;
use super::plan::{refresh_readiness, task_view, view};
use crate::domain::check;
use crate::error::{Error, Result};
use crate::store::Tx;
use crate::time::Ts;

/// `orch.taskEdit`.
pub fn edit_task(tx: &mut dyn Tx, now: Ts, p: TaskEditParams) -> Result<TaskView> {
    let run = open_run(tx, &p.run_id)?;
    let mut task = load_task(tx, &p.run_id, &p.task_id)?;
    let only_verify = p.verify.is_some()
        && [p.title.is_some(), p.body.is_some(), p.acceptance.is_some(), p.kind.is_some(), p.priority.is_some()]
            .iter()
            .chain(&[p.assign_to.is_some(), p.role.is_some(), p.max_attempts.is_some()])
            .all(|given| !given);
    // A done task's verify command still matters while its merge waits.
    let merge_waits = task.status == TaskStatus::Done && task.merge_state == Some(MergeState::Pending);
    if task.status.is_terminal() && !(only_verify && merge_waits) {
        return Err(Error::app(
            ErrorCode::InvalidTransition,
            format!("task '{}' is {}: there is nothing left to edit", task.task_id, task.status),
        ));
    }
    let content = p.title.is_some() || p.body.is_some() || p.acceptance.is_some() || p.kind.is_some();
    if content && task.attempt > 0 {
        return Err(Error::app(
            ErrorCode::InvalidTransition,
            format!(
                "task '{}' was dispatched already (attempt {}): its worker has the text; change only the worker, \
                 priority, role or attempt limit, or cancel it and add a new task",
                task.task_id, task.attempt
            ),
        ));
    }
    let mut changed: Vec<&str> = Vec::new();
    let mut payload = serde_json::Map::new();
    let mut note = |field: &'static str, v: Value| {
        changed.push(field);
        payload.insert(field.to_string(), v);
    };
    if let Some(t) = p.title {
        check::text("title", &t)?;
        note("title", json!(t));
        task.title = t;
    }
    if let Some(b) = p.body {
        note("body", json!(b.len()));
        task.body = b;
    }
    if let Some(a) = p.acceptance {
        note("acceptance", json!(a));
        task.acceptance = a;
    }
    if let Some(k) = p.kind {
        note("kind", json!(k));
        task.kind = k;
    }
    if let Some(pr) = p.priority {
        note("priority", json!(pr));
        task.priority = pr;
    }
    if let Some(w) = p.assign_to {
        check::agent("assign_to", &w)?;
        note("assign_to", json!(w));
        task.assign_to = Some(w);
    }
    if let Some(r) = p.role {
        note("role", json!(r));
        task.role = Some(r);
    }
    if let Some(m) = p.max_attempts {
        if m == 0 || m < task.attempt {
            return Err(Error::invalid(format!(
                "max_attempts must be at least 1 and at least the attempts used ({})",
                task.attempt
            )));
        }
        note("max_attempts", json!(m));
        task.max_attempts = m;
    }
    if let Some(v) = p.verify {
        task.verify = super::queue::task_command(Some(v))?;
        note("verify", json!(task.verify));
    }
    if changed.is_empty() {
        return Err(Error::invalid("nothing to change: give at least one field"));
    }
    task.updated_at = now.to_string();
    tx.tasks_mut().task_update(&task)?;
    tx.queue_mut().task_set_verify(&task)?;
    let summary = format!("{} edited: {}", task.task_id, changed.join(", "));
    task_event(tx, EventType::TaskEdited, &task, None, (&run.created_by, &summary, &Value::Object(payload)), now)?;
    task_view(tx, &p.run_id, &p.task_id)
}

/// `orch.taskRemove`.
pub fn remove_task(tx: &mut dyn Tx, now: Ts, p: TaskRef) -> Result<TaskRemoveResult> {
    let run = open_run(tx, &p.run_id)?;
    let task = load_task(tx, &p.run_id, &p.task_id)?;
    if task.attempt > 0 || !tx.attempts().attempts_of(&p.run_id, &p.task_id)?.is_empty() {
        return Err(Error::app(
            ErrorCode::InvalidTransition,
            format!(
                "task '{}' was dispatched (attempt {}): cancel it instead; removing it would lose its history",
                task.task_id, task.attempt
            ),
        ));
    }
    let dependents = tx.tasks().task_dependents(&p.run_id, &p.task_id)?;
    tx.tasks_mut().task_delete(&p.run_id, &p.task_id)?;
    let actor = run.created_by.as_str();
    let summary = format!("{} removed from run {}", task.task_id, run.run_id);
    let payload = json!({"title": task.title, "dependents": dependents});
    let event_id = task_event(tx, EventType::TaskRemoved, &task, None, (actor, &summary, &payload), now)?;
    // Its dependents lost a dependency: some may be ready now.
    for d in &dependents {
        let mut dep = load_task(tx, &p.run_id, d)?;
        if matches!(dep.status, TaskStatus::Pending | TaskStatus::Ready) {
            refresh_readiness(tx, &mut dep, actor, now)?;
        }
    }
    refresh_run(tx, &p.run_id, actor, now)?;
    Ok(TaskRemoveResult { run_id: p.run_id, task_id: p.task_id, dependents, event_id })
}

/// `orch.runEdit`: change the run's settings; candidates follow (those in review are
/// admitted when approval is no longer required, waiting ones are queued under automatic
/// merge).
pub fn edit_run(tx: &mut dyn Tx, now: Ts, p: RunEditParams) -> Result<RunView> {
    let mut run = open_run(tx, &p.run_id)?;
    let mut changed = serde_json::Map::new();
    if let Some(v) = p.verify {
        run.verify = super::queue::command(Some(v))?;
        changed.insert("verify".into(), json!(run.verify));
    }
    if let Some(a) = p.require_approval {
        run.require_approval = a;
        changed.insert("require_approval".into(), json!(a));
    }
    if let Some(a) = p.auto_merge {
        run.auto_merge = a;
        changed.insert("auto_merge".into(), json!(a));
    }
    if let Some(n) = p.merge_retries {
        run.merge_retries = n;
        changed.insert("merge_retries".into(), json!(n));
    }
    if changed.is_empty() {
        return Err(Error::invalid("nothing to change: give verify, require_approval, auto_merge or merge_retries"));
    }
    run.updated_at = now.to_string();
    tx.queue_mut().run_set_settings(&run)?;
    let summary = format!("run {} edited: {}", run.run_id, changed.keys().cloned().collect::<Vec<_>>().join(", "));
    run_event(tx, EventType::RunEdited, &run, (&run.created_by, &summary, &serde_json::Value::Object(changed)), now)?;
    for mut c in tx.queue().candidates_in(Some(&run.run_id), &[QueueState::Review, QueueState::Waiting])? {
        match c.state {
            QueueState::Review if !run.require_approval => super::queue::admit(tx, now, &run, &mut c)?,
            QueueState::Waiting if run.auto_merge => {
                super::queue::enqueue(tx, now, &run, &mut c, None)?;
            }
            _ => {}
        }
    }
    let last = tx.events().last_event_id()?;
    view(tx, &run.run_id, last)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::orch::attempts::Mode;
    use crate::domain::orch::plan;
    use crate::domain::orch::tests::{dispatch as open_attempt, finish};
    use crate::ops;
    use crate::store::sqlite::testing::Memory;

    fn setup(m: &Memory) {
        let p = RunCreateParams { run_id: Some("R1".into()), goal: "g".into(), ..Default::default() };
        m.write(|tx, now| plan::create_run(tx, now, p)).unwrap();
        for (id, deps) in [("T1", vec![]), ("T2", vec!["T1"]), ("T3", vec!["T1", "T2"])] {
            let p = TaskAddParams {
                run_id: "R1".into(),
                task_id: id.into(),
                title: format!("task {id}"),
                depends_on: deps.iter().map(|d| d.to_string()).collect(),
                assign_to: Some("w".into()),
                kind: Some(TaskKind::Thread),
                ..Default::default()
            };
            m.write(|tx, now| plan::add_task(tx, now, p)).unwrap();
        }
    }

    fn dispatch(m: &Memory, task: &str) -> String {
        open_attempt(m, task, 1, Mode::Dispatch)
    }

    fn edit(task: &str) -> TaskEditParams {
        TaskEditParams { run_id: "R1".into(), task_id: task.into(), ..Default::default() }
    }

    fn task(m: &Memory, id: &str) -> Task {
        m.read(|tx, _| load_task(tx, "R1", id)).unwrap()
    }

    fn remove(m: &Memory, id: &str) -> Result<TaskRemoveResult> {
        m.write(|tx, now| remove_task(tx, now, TaskRef { run_id: "R1".into(), task_id: id.into() }))
    }

    #[test]
    fn what_the_worker_is_handed_changes_before_the_first_dispatch() {
        let m = Memory::new();
        setup(&m);
        let p = TaskEditParams {
            title: Some("new title".into()),
            body: Some("four".into()),
            acceptance: Some("tests pass".into()),
            kind: Some(TaskKind::Code),
            ..edit("T1")
        };
        let v = m.write(|tx, now| edit_task(tx, now, p)).unwrap();
        assert_eq!(
            (v.task.title.as_str(), v.task.body.as_str(), v.task.acceptance.as_str(), v.task.kind),
            ("new title", "four", "tests pass", TaskKind::Code)
        );
        assert_eq!(task(&m, "T1"), v.task, "stored as returned");
        assert_eq!(v.dependents, ["T2", "T3"]);
        let e = m.events().pop().unwrap();
        assert_eq!(e.event_type, EventType::TaskEdited);
        assert_eq!(e.summary, "T1 edited: title, body, acceptance, kind");
        assert_eq!(e.payload_json["body"], 4, "the body's length, not its text");
    }

    #[test]
    fn a_dispatched_task_refuses_content_changes_but_takes_worker_priority_role_and_limit() {
        let m = Memory::new();
        setup(&m);
        dispatch(&m, "T1");
        for p in [
            TaskEditParams { title: Some("t".into()), ..edit("T1") },
            TaskEditParams { body: Some("b".into()), ..edit("T1") },
            TaskEditParams { acceptance: Some("a".into()), ..edit("T1") },
            TaskEditParams { kind: Some(TaskKind::Code), priority: Some(Priority::High), ..edit("T1") },
        ] {
            let e = m.write(|tx, now| edit_task(tx, now, p)).unwrap_err();
            assert_eq!(e.code(), Some(ErrorCode::InvalidTransition), "{e}");
        }
        assert_eq!(task(&m, "T1").priority, Priority::Normal, "a refused edit changes nothing");
        let p = TaskEditParams {
            priority: Some(Priority::Urgent),
            assign_to: Some("w2".into()),
            role: Some("reviewer".into()),
            max_attempts: Some(1),
            ..edit("T1")
        };
        let t = m.write(|tx, now| edit_task(tx, now, p)).unwrap().task;
        assert_eq!(t.priority, Priority::Urgent);
        assert_eq!(t.assign_to.as_deref(), Some("w2"));
        assert_eq!(t.role.as_deref(), Some("reviewer"));
        assert_eq!((t.max_attempts, t.attempt, t.status), (1, 1, TaskStatus::Dispatched));
    }

    #[test]
    fn a_finished_task_has_nothing_left_to_edit() {
        let m = Memory::new();
        setup(&m);
        let thread = dispatch(&m, "T1");
        finish(&m, &thread, ThreadStatus::Done);
        let p = TaskEditParams { priority: Some(Priority::High), ..edit("T1") };
        let e = m.write(|tx, now| edit_task(tx, now, p)).unwrap_err();
        assert_eq!(e.code(), Some(ErrorCode::InvalidTransition));
        assert!(e.to_string().contains("nothing left to edit"), "{e}");
    }

    #[test]
    fn an_empty_edit_a_blank_title_and_a_zero_attempt_limit_are_refused() {
        let m = Memory::new();
        setup(&m);
        let e = m.write(|tx, now| edit_task(tx, now, edit("T1"))).unwrap_err();
        assert_eq!(e.code(), Some(ErrorCode::InvalidInput));
        assert!(e.to_string().contains("nothing to change"), "{e}");
        let zero = TaskEditParams { max_attempts: Some(0), ..edit("T1") };
        assert_eq!(m.write(|tx, now| edit_task(tx, now, zero)).unwrap_err().code(), Some(ErrorCode::InvalidInput));
        let blank = TaskEditParams { title: Some("  ".into()), ..edit("T1") };
        assert_eq!(m.write(|tx, now| edit_task(tx, now, blank)).unwrap_err().code(), Some(ErrorCode::InvalidInput));
        assert!(m.events().iter().all(|e| e.event_type != EventType::TaskEdited), "refused edits record nothing");
    }

    #[test]
    fn the_attempt_limit_cannot_drop_below_the_attempts_used() {
        let m = Memory::new();
        setup(&m);
        let first = dispatch(&m, "T1");
        finish(&m, &first, ThreadStatus::Failed);
        open_attempt(&m, "T1", 2, Mode::Retry);
        let below = TaskEditParams { max_attempts: Some(1), ..edit("T1") };
        let e = m.write(|tx, now| edit_task(tx, now, below)).unwrap_err();
        assert_eq!(e.code(), Some(ErrorCode::InvalidInput));
        assert!(e.to_string().contains("attempts used (2)"), "{e}");
        let at = TaskEditParams { max_attempts: Some(2), ..edit("T1") };
        assert_eq!(m.write(|tx, now| edit_task(tx, now, at)).unwrap().task.max_attempts, 2);
    }

    #[test]
    fn removing_an_undispatched_task_releases_the_dependents_it_alone_held_back() {
        let m = Memory::new();
        setup(&m);
        let r = remove(&m, "T1").unwrap();
        assert_eq!(r.dependents, ["T2", "T3"]);
        assert_eq!(m.events().iter().find(|e| e.event_id == r.event_id).unwrap().event_type, EventType::TaskRemoved);
        assert!(m.read(|tx, _| tx.tasks().task("R1", "T1")).unwrap().is_none());
        let t2 = task(&m, "T2");
        assert_eq!((t2.status, t2.depends_on.len()), (TaskStatus::Ready, 0));
        let t3 = task(&m, "T3");
        assert_eq!(t3.status, TaskStatus::Pending, "T3 still waits for T2");
        assert_eq!(t3.depends_on, ["T2"]);
    }

    #[test]
    fn a_task_that_was_ever_dispatched_is_never_removed() {
        let m = Memory::new();
        setup(&m);
        dispatch(&m, "T1");
        let e = remove(&m, "T1").unwrap_err();
        assert_eq!(e.code(), Some(ErrorCode::InvalidTransition));
        assert!(e.to_string().contains("cancel it instead"), "{e}");
        assert_eq!(task(&m, "T1").status, TaskStatus::Dispatched);
        assert_eq!(task(&m, "T2").depends_on, ["T1"]);
    }

    #[test]
    fn a_cancelled_run_refuses_edits_and_removals() {
        let m = Memory::new();
        setup(&m);
        let p = CancelTaskParams { run_id: "R1".into(), task_id: None, reason: "stop".into() };
        m.write(|tx, now| ops::orch::cancel(tx, now, p, &crate::domain::credentials::Acting::daemon())).unwrap();
        let p = TaskEditParams { priority: Some(Priority::High), ..edit("T1") };
        assert_eq!(m.write(|tx, now| edit_task(tx, now, p)).unwrap_err().code(), Some(ErrorCode::InvalidTransition));
        assert_eq!(remove(&m, "T1").unwrap_err().code(), Some(ErrorCode::InvalidTransition));
    }
}
