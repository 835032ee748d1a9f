//! Readable output of `orch` (the JSON envelope is `coord_cli`'s).

use coord_cli::table;
use coord_proto::types::*;

use crate::tree;

pub fn runs(runs: &[Run]) {
    if runs.is_empty() {
        println!("no runs");
        return;
    }
    let rows: Vec<[String; 4]> =
        runs.iter().map(|r| [r.run_id.clone(), r.status.to_string(), r.created_by.clone(), r.goal.clone()]).collect();
    print!("{}", table::render(["RUN", "STATUS", "CREATED BY", "GOAL"], &rows, [20, 10, 16, usize::MAX]));
}

/// A task's status, with its merge state when it has one (`done, merge pending`).
fn status_text(t: &Task) -> String {
    match t.merge_state {
        Some(MergeState::Merged) | None => t.status.to_string(),
        Some(m) => format!("{}, merge {m}", t.status),
    }
}

pub fn tasks(tasks: &[Task]) {
    if tasks.is_empty() {
        println!("no matching tasks");
        return;
    }
    let rows: Vec<[String; 7]> = tasks
        .iter()
        .map(|t| {
            [
                t.task_id.clone(),
                status_text(t),
                t.priority.to_string(),
                t.attempt.to_string(),
                t.assign_to.clone().unwrap_or_else(|| "-".into()),
                if t.depends_on.is_empty() { "-".to_string() } else { t.depends_on.join(",") },
                t.title.clone(),
            ]
        })
        .collect();
    let head = ["TASK", "STATUS", "PRIO", "ATTEMPT", "ASSIGN TO", "DEPENDS ON", "TITLE"];
    print!("{}", table::render(head, &rows, [20, 22, 7, 7, 16, 20, usize::MAX]));
}

/// The run's task graph as a tree (see `tree`); `run show` and `run cancel` know no
/// attempt's agent, so they show the planned assignee.
pub fn graph(v: &RunView) {
    let nodes: Vec<tree::Node<'_>> = v.tasks.iter().map(tree::Node::planned).collect();
    tree::print(&v.run, &nodes);
}

pub fn task(v: &TaskView) {
    let t = &v.task;
    println!("{}/{}  {}  [{}]", t.run_id, t.task_id, t.title, t.status);
    println!("  kind {}  priority {}  attempts {}/{}", t.kind, t.priority, t.attempt, t.max_attempts);
    if let Some(a) = &t.assign_to {
        println!("  assign to {a}");
    }
    if !t.depends_on.is_empty() {
        println!("  depends on {}", t.depends_on.join(", "));
    }
    if !v.dependents.is_empty() {
        println!("  needed by {}", v.dependents.join(", "));
    }
    if !t.acceptance.is_empty() {
        println!("  acceptance: {}", t.acceptance);
    }
    for a in &v.attempts {
        println!("  attempt {} [{}] {} thread {}", a.attempt, a.status, a.worker, a.thread_id);
        if let Some(p) = &a.worktree_path {
            println!("    worktree {} on {}", p, a.branch.as_deref().unwrap_or("-"));
        }
    }
}

pub fn dispatches(ds: &[Dispatch]) {
    if ds.is_empty() {
        println!("nothing to dispatch: no ready task");
        return;
    }
    for d in ds {
        println!("{} attempt {} -> {} in thread {}", d.task_id, d.attempt, d.assigned_to, d.thread_id);
        if let Some(p) = &d.worktree_path {
            println!("  worktree {} on {}", p, d.branch.as_deref().unwrap_or("-"));
        }
        println!("  the worker takes it with: inbox claim --agent {} --thread {}", d.assigned_to, d.thread_id);
    }
}

pub fn blocked(b: &[BlockedTask]) {
    if b.is_empty() {
        println!("nothing is blocked");
        return;
    }
    for x in b {
        println!("{} ({}) blocked, worker {} in {}", x.task.task_id, x.task.title, x.worker, x.thread_id);
        if let Some(q) = &x.question {
            println!("  question: {}", q.summary);
            if q.payload_json.as_object().is_some_and(|o| !o.is_empty()) {
                println!("  payload: {}", q.payload_json);
            }
        }
    }
}

pub fn event(e: &Event) {
    let status = e.task_status.map(|s| s.as_str()).or(e.thread_status.map(|s| s.as_str())).unwrap_or("-");
    let task = if e.task_id.is_empty() { String::new() } else { format!(" {}", e.task_id) };
    let what = e.what();
    println!("{} #{} {what}{} [{status}]: {}", e.created_at, e.event_id, task, e.summary);
    if e.event_type == EventType::TaskDone && e.payload_json["merge"] == "pending" {
        if e.payload_json["auto_merge"] == true {
            println!("  the daemon merges it into the integration branch (--auto-merge): nothing to do");
        } else {
            println!("  merge it into the integration branch: orch merge --run {} --task {}", e.run_id, e.task_id);
        }
    }
    if e.event_type == EventType::RunDone {
        println!("  every task is done: merge the run into its base branch with orch run finish --run {}", e.run_id);
    }
    if e.event_type == EventType::TaskMergeConflict {
        let files: Vec<&str> =
            e.payload_json["conflicts"].as_array().into_iter().flatten().filter_map(|f| f.as_str()).collect();
        println!("  conflicting files: {}", files.join(", "));
        if let Some(r) = e.payload_json["resolution_task"].as_str() {
            println!("  resolve it with task {r}: orch dispatch --run {} --task {r}", e.run_id);
        }
    }
}

/// The open requests of a run's workers, with the command that answers each.
pub fn requests(requests: &[RequestView]) {
    if requests.is_empty() {
        return;
    }
    println!("open requests:");
    for q in requests {
        let task = if q.task_id.is_empty() { String::new() } else { format!(" ({})", q.task_id) };
        println!("  {} {} from {}{task} to {}: {}", q.request_id, q.msg_type, q.from, q.to, q.summary);
        let how = match q.msg_type.as_str() {
            "permission_request" => format!("inbox --agent {} permit --request {} --allow|--deny", q.to, q.request_id),
            "plan_approval_request" => {
                format!("inbox --agent {} approve-plan --request {} [--reject]", q.to, q.request_id)
            }
            _ => continue,
        };
        println!("    answer: {how}");
    }
}

/// What `orch merge` did, task by task.
pub fn merges(ms: &[MergeOutcome]) {
    if ms.is_empty() {
        println!("nothing to merge: no done task is waiting");
        return;
    }
    for m in ms {
        match m.state {
            MergeState::Conflict => {
                println!(
                    "{}: {} conflicts with {} in: {}",
                    m.task_id,
                    m.branch,
                    m.integration_branch,
                    m.conflicts.join(", ")
                );
                if let Some(r) = &m.resolution_task {
                    println!("  task {r} resolves it (dispatch it like any task)");
                }
            }
            _ if m.commits == 0 => println!("{}: nothing to merge from {} (no new commits)", m.task_id, m.branch),
            _ => println!(
                "{}: merged {} commit(s) from {} into {} at {}{}",
                m.task_id,
                m.commits,
                m.branch,
                m.integration_branch,
                short_rev(&m.commit),
                if m.fast_forward { " (fast-forward)" } else { "" }
            ),
        }
        if !m.uncommitted.is_empty() {
            println!("  not merged: uncommitted changes in its worktree ({})", m.uncommitted.join(", "));
        }
    }
}

fn short_rev(r: &str) -> &str {
    &r[..r.len().min(10)]
}

/// What `orch run finish` did.
pub fn finished(v: &RunFinishResult) {
    if !v.merged.is_empty() {
        merges(&v.merged);
    }
    let from = v.run.integration_branch.as_deref().unwrap_or("the integration branch");
    if v.up_to_date {
        println!("{} already holds run {}'s work ({from}) at {}", v.into, v.run.run_id, short_rev(&v.commit));
    } else {
        let how = if v.fast_forward { "fast-forward" } else { "merge commit" };
        println!("merged {from} into {} at {} ({how})", v.into, short_rev(&v.commit));
    }
}

pub fn councils(cs: &[Council]) {
    if cs.is_empty() {
        println!("no councils");
        return;
    }
    let rows: Vec<[String; 4]> = cs
        .iter()
        .map(|c| [c.council_id.clone(), c.phase.to_string(), c.members.len().to_string(), c.topic.clone()])
        .collect();
    print!("{}", table::render(["COUNCIL", "PHASE", "REVIEWERS", "TOPIC"], &rows, [20, 10, 9, usize::MAX]));
}

pub fn worktrees(v: &WorktreesResult) {
    let line = |w: &WorktreeInfo| {
        let note = w.note.as_deref().map(|n| format!("  ({n})")).unwrap_or_default();
        let gone = if w.exists { "" } else { " [gone]" };
        println!("  {}/{} a{} [{}] {}{gone}{note}", w.run_id, w.task_id, w.attempt, w.attempt_status, w.path);
    };
    if !v.worktrees.is_empty() {
        println!("worktrees:");
        v.worktrees.iter().for_each(line);
    }
    if !v.removed.is_empty() {
        println!("removed:");
        v.removed.iter().for_each(line);
    }
    if !v.kept.is_empty() {
        println!("kept:");
        v.kept.iter().for_each(line);
    }
    for b in &v.removed_branches {
        println!("removed the merged integration branch {b}");
    }
    if v.worktrees.is_empty() && v.removed.is_empty() && v.kept.is_empty() && v.removed_branches.is_empty() {
        println!("no worktrees");
    }
    if v.truncated && (v.removed_count > 0 || v.kept_count > 0) {
        println!(
            "(removed {} and kept {} in all; the list above stops at the reply's size bound: \
             `orch worktree list` shows every worktree left)",
            v.removed_count, v.kept_count
        );
    }
    if v.other_hosts > 0 {
        println!("({} worktree(s) on other hosts: list or prune them there)", v.other_hosts);
    }
}

pub fn council(c: &Council, report: bool) {
    println!("council {}/{} [{}]: {}", c.run_id, c.council_id, c.phase, c.topic);
    for m in &c.members {
        let vote = match (&m.vote_thread_id, m.vote_done) {
            (None, _) => "-".to_string(),
            (Some(t), done) => format!("{t}{}", if done { " (voted)" } else { "" }),
        };
        println!(
            "  {:<14} brainstorm {}{}  vote {}",
            m.reviewer,
            m.brainstorm_thread_id,
            if m.brainstorm_done { " (answered)" } else { "" },
            vote
        );
    }
    if !report {
        return;
    }
    if c.groups.is_empty() {
        println!("no recommendations to report yet");
    }
    for g in &c.groups {
        println!(
            "{} {}: {} (approve {}, reject {}, abstain {})",
            g.group_id, g.title, g.verdict, g.approve, g.reject, g.abstain
        );
        println!("    proposed by {}", g.proposed_by.join(", "));
        for d in &g.details {
            if !d.detail.is_empty() {
                println!("    - {}: {}", d.reviewer, d.detail);
            }
        }
    }
}
