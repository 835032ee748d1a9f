//! The run's task graph as a text tree for `orch status`: each task under the first of its
//! dependencies (in the run's task order), with the rest named after an arrow, so an edge
//! in the tree is always a real dependency. A task with several dependencies is drawn once.
//! The agent shown is the one of the current attempt; before any dispatch, the planned
//! assignee is shown as `(assign-to X)`.

use std::collections::{HashMap, HashSet};

use coord_proto::types::{GraphTask, MergeCandidate, MergeState, QueueState, Run, Task, TaskStatus};

/// A task as the tree needs it.
pub struct Node<'a> {
    pub id: &'a str,
    pub title: &'a str,
    pub status: TaskStatus,
    pub depends_on: &'a [String],
    pub attempt: u32,
    /// The current attempt's agent.
    pub worker: Option<&'a str>,
    /// The planned (default) assignee.
    pub assign_to: Option<&'a str>,
    /// Where the task's branch is in the run's integration branch, if it goes there.
    pub merge: Option<MergeState>,
    /// Its current attempt's merge candidate, if it has one.
    pub candidate: Option<&'a MergeCandidate>,
}

impl<'a> From<&'a GraphTask> for Node<'a> {
    fn from(t: &'a GraphTask) -> Node<'a> {
        let candidate = t.candidate.as_ref().filter(|c| c.attempt == t.task.attempt);
        Node { worker: t.worker.as_deref(), candidate, ..Node::planned(&t.task) }
    }
}

impl<'a> Node<'a> {
    /// A task whose attempt's agent is not known here.
    pub fn planned(t: &'a Task) -> Node<'a> {
        Node {
            id: &t.task_id,
            title: &t.title,
            status: t.status,
            depends_on: &t.depends_on,
            attempt: t.attempt,
            worker: None,
            assign_to: t.assign_to.as_deref(),
            merge: t.merge_state,
            candidate: None,
        }
    }
}

/// Where an open candidate stands, in a few words (`queued #2`).
fn queue_words(c: &MergeCandidate) -> Option<String> {
    let at = c.position.map(|p| format!(" #{p}")).unwrap_or_default();
    match c.state {
        QueueState::Review => Some("in review".into()),
        QueueState::Waiting => Some("merge waiting".into()),
        QueueState::Queued => Some(format!("queued{at}")),
        QueueState::Verifying => Some(format!("verifying{at}")),
        _ => None,
    }
}

/// The lines of the tree (without the run's header).
pub fn lines<'a>(nodes: &[Node<'a>]) -> Vec<String> {
    let known: HashSet<&str> = nodes.iter().map(|n| n.id).collect();
    let parent = |n: &Node<'a>| -> Option<&'a str> {
        n.depends_on.iter().map(String::as_str).find(|d| known.contains(d) && *d != n.id)
    };
    let mut children: HashMap<&'a str, Vec<usize>> = HashMap::new();
    let mut roots = Vec::new();
    for (i, n) in nodes.iter().enumerate() {
        match parent(n) {
            Some(p) => children.entry(p).or_default().push(i),
            None => roots.push(i),
        }
    }
    let mut out = Vec::new();
    let mut drawn = HashSet::new();
    for (k, &i) in roots.iter().enumerate() {
        walk(nodes, &children, i, "", k + 1 == roots.len(), true, &mut drawn, &mut out);
    }
    // Tasks caught in a dependency cycle have no root above them: draw them at the top.
    for i in 0..nodes.len() {
        if !drawn.contains(&i) {
            walk(nodes, &children, i, "", true, true, &mut drawn, &mut out);
        }
    }
    out
}

#[allow(clippy::too_many_arguments)]
fn walk(
    nodes: &[Node<'_>],
    children: &HashMap<&str, Vec<usize>>,
    i: usize,
    prefix: &str,
    last: bool,
    root: bool,
    drawn: &mut HashSet<usize>,
    out: &mut Vec<String>,
) {
    if !drawn.insert(i) {
        return;
    }
    let n = &nodes[i];
    let branch = if root {
        ""
    } else if last {
        "└─ "
    } else {
        "├─ "
    };
    out.push(format!("{prefix}{branch}{}", label(n)));
    let inner = if root { prefix.to_string() } else { format!("{prefix}{}", if last { "   " } else { "│  " }) };
    let kids = children.get(n.id).map(Vec::as_slice).unwrap_or_default();
    for (k, &c) in kids.iter().enumerate() {
        walk(nodes, children, c, &inner, k + 1 == kids.len(), false, drawn, out);
    }
}

fn label(n: &Node<'_>) -> String {
    let who = match (n.worker, n.assign_to) {
        (Some(w), _) => format!(" @{w}"),
        (None, Some(a)) => format!(" (assign-to {a})"),
        (None, None) => String::new(),
    };
    let attempt = if n.attempt > 0 { format!(" attempt {}", n.attempt) } else { String::new() };
    let also: Vec<&str> = n.depends_on.iter().skip(1).map(String::as_str).collect();
    let also = if also.is_empty() { String::new() } else { format!("  <- also {}", also.join(", ")) };
    let status = match (n.merge, n.candidate.and_then(queue_words)) {
        (_, Some(q)) => format!("{}, {q}", n.status),
        (Some(MergeState::Merged) | None, None) => n.status.to_string(),
        (Some(m), None) => format!("{}, merge {m}", n.status),
    };
    format!("{} {status:<11} {}  {}{who}{attempt}{also}", mark(n.status), n.id, n.title)
}

fn mark(s: TaskStatus) -> &'static str {
    match s {
        TaskStatus::Done => "[x]",
        TaskStatus::Dispatched | TaskStatus::InProgress => "[>]",
        TaskStatus::Blocked => "[?]",
        TaskStatus::Ready => "[ ]",
        TaskStatus::Pending => "[.]",
        TaskStatus::Failed => "[!]",
        TaskStatus::Cancelled => "[-]",
    }
}

/// Header, counts, the tree and the legend.
pub fn print(run: &Run, nodes: &[Node<'_>]) {
    let counts = TaskStatus::ALL
        .iter()
        .filter_map(|s| {
            let n = nodes.iter().filter(|t| t.status == *s).count();
            (n > 0).then(|| format!("{n} {s}"))
        })
        .collect::<Vec<_>>()
        .join(", ");
    println!("run {} [{}] {}", run.run_id, run.status, run.goal);
    println!("  {} task(s){}{}", nodes.len(), if counts.is_empty() { "" } else { ": " }, counts);
    for line in lines(nodes) {
        println!("  {line}");
    }
    if let Some(b) = &run.integration_branch {
        // Those `orch merge` would merge (or queue): not those in the queue or in review.
        let in_queue = |t: &Node<'_>| t.candidate.is_some_and(|c| c.state != QueueState::Waiting);
        let pending: Vec<&str> =
            nodes.iter().filter(|t| t.merge == Some(MergeState::Pending) && !in_queue(t)).map(|t| t.id).collect();
        let base = run.base_branch.as_deref().unwrap_or("its base");
        println!(
            "  integration branch {b} (from {base}){}",
            if run.auto_merge { ", merged automatically" } else { "" }
        );
        if !pending.is_empty() {
            println!("  waiting to be merged: {} (orch merge --run {})", pending.join(", "), run.run_id);
        }
    }
    print_queue(run, nodes);
    println!(
        "  legend: [x] done  [>] dispatched/in progress  [?] blocked  [ ] ready  [.] pending  [!] failed  [-] cancelled"
    );
    println!("  @agent: the agent of the current attempt; (assign-to X): the planned worker, not dispatched yet");
}

/// The run's verify command and its merge queue in order.
fn print_queue(run: &Run, nodes: &[Node<'_>]) {
    if let Some(v) = &run.verify {
        println!("  verify: {v}  (orch merge-queue --run {} runs it on each merge)", run.run_id);
    }
    if run.require_approval {
        println!("  merges need a reviewer's approval (orch review approve)");
    }
    let mut queue: Vec<&MergeCandidate> =
        nodes.iter().filter_map(|n| n.candidate).filter(|c| c.position.is_some()).collect();
    queue.sort_by_key(|c| c.position);
    if !queue.is_empty() {
        let list: Vec<String> =
            queue.iter().map(|c| format!("{}. {} {}", c.position.unwrap_or(0), c.task_id, c.state)).collect();
        println!("  merge queue: {}", list.join(", "));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node<'a>(id: &'a str, deps: &'a [String]) -> Node<'a> {
        Node {
            id,
            title: "t",
            status: TaskStatus::Pending,
            depends_on: deps,
            attempt: 0,
            worker: None,
            assign_to: None,
            merge: None,
            candidate: None,
        }
    }

    #[test]
    fn a_task_sits_under_its_dependency_not_under_the_task_above_it() {
        let none: Vec<String> = vec![];
        let on_a = vec!["A".to_string()];
        let on_c = vec!["C".to_string()];
        // A and C are independent roots; B depends on A, D on C. Listed A, C, B, D.
        let nodes = [node("A", &none), node("C", &none), node("B", &on_a), node("D", &on_c)];
        let out = lines(&nodes);
        let ids: Vec<&str> = out.iter().map(|l| l.split_whitespace().find(|w| w.len() == 1).unwrap()).collect();
        assert_eq!(ids, ["A", "B", "C", "D"], "{out:#?}");
        assert!(out[1].starts_with("└─ "), "{out:#?}");
        assert!(!out[2].starts_with(' ') && !out[2].starts_with('└'), "C is a root: {out:#?}");
    }

    #[test]
    fn worker_of_the_attempt_wins_over_the_planned_assignee() {
        let none: Vec<String> = vec![];
        let mut n = node("A", &none);
        n.assign_to = Some("planned");
        assert!(label(&n).contains("(assign-to planned)"));
        n.worker = Some("actual");
        n.attempt = 2;
        let l = label(&n);
        assert!(l.contains("@actual attempt 2") && !l.contains("planned"), "{l}");
    }
}
