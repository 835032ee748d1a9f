//! Readable output of the merge queue and review commands (`orch run edit`, `orch merge`'s
//! queued tasks, `orch diff`, `orch review`, `orch merge-queue`).

use coord_proto::types::*;

/// A run's merge settings.
pub fn run_settings(r: &Run) {
    println!("run {} [{}] {}", r.run_id, r.status, r.goal);
    match &r.verify {
        Some(v) => println!("  verify: {v}"),
        None => println!("  verify: none (merges are not verified)"),
    }
    println!(
        "  approval {}, automatic merge {}, merge retries {}",
        if r.require_approval { "required" } else { "not required" },
        if r.auto_merge { "on" } else { "off" },
        r.merge_retries
    );
}

/// One candidate, in a line.
pub fn candidate(c: &MergeCandidate) -> String {
    let at = c.position.map(|p| format!(" (position {p})")).unwrap_or_default();
    let why = c.reason.as_deref().map(|r| format!(": {r}")).unwrap_or_default();
    format!("{} attempt {} {}{at}{why}", c.task_id, c.attempt, c.state)
}

/// Tasks `orch merge` put in (or found in) the merge queue.
pub fn queued(cs: &[MergeCandidate]) {
    for c in cs {
        println!("{}: in the merge queue, verified before it lands", candidate(c));
    }
    if let Some(c) = cs.first() {
        println!("  the verifier merges them: orch merge-queue --run {}", c.run_id);
    }
}

/// A task's diff, as a unified diff with the review comments under their lines.
pub fn diff(d: &TaskDiff) {
    print!("{}", diff_text(d));
}

/// [`diff`]'s text.
pub fn diff_text(d: &TaskDiff) -> String {
    use std::fmt::Write;
    let mut o = String::new();
    let _ = writeln!(
        o,
        "{}/{} attempt {}: {} against {} ({}..{})",
        d.run_id,
        d.task_id,
        d.attempt,
        d.branch,
        d.against,
        short(&d.from),
        short(&d.to)
    );
    if d.files.is_empty() {
        o.push_str("no changes\n");
    }
    for f in &d.files {
        let from = f.old_path.as_deref().map(|o| format!(" (from {o})")).unwrap_or_default();
        let _ = writeln!(o, "\n{} {}{from}  +{} -{}", f.status, f.path, f.additions, f.deletions);
        if f.binary {
            o.push_str("  (binary)\n");
        }
        for h in &f.hunks {
            let _ = writeln!(o, "{}", h.header);
            for l in &h.lines {
                let _ = writeln!(o, "{}{}", l.origin, l.text);
                for c in d.comments.iter().filter(|c| on_line(c, &f.path, l)) {
                    let sent = if c.sent_in.is_some() { "sent" } else { "not sent yet" };
                    let _ = writeln!(o, "    >> {} ({sent}): {}", c.author, c.body.replace('\n', "\n       "));
                }
            }
        }
        if f.truncated {
            o.push_str("  … (cut: the file's diff is too long for one reply)\n");
        }
    }
    if d.truncated {
        let _ = writeln!(o, "\n… more files: --after {}", d.next_after.as_deref().unwrap_or(""));
    }
    o
}

fn on_line(c: &ReviewComment, path: &str, l: &DiffLine) -> bool {
    let line = if c.side == "old" { l.old_line.filter(|_| l.origin == "-") } else { l.new_line };
    c.path == path && line == Some(c.line)
}

/// What a review did.
pub fn review(v: &ReviewResult) {
    println!("{}/{} [{}]", v.task.run_id, v.task.task_id, v.task.status);
    if let Some(c) = &v.candidate {
        println!("  merge: {}", candidate(c));
    }
    if !v.comments.is_empty() {
        println!(
            "  sent {} comment(s){}",
            v.comments.len(),
            v.message_id.as_deref().map(|m| format!(" in {m}")).unwrap_or_default()
        );
    }
    if let Some(d) = &v.returned {
        println!("  back to {} as attempt {} (thread {})", d.assigned_to, d.attempt, d.thread_id);
    }
}

fn short(r: &str) -> &str {
    &r[..r.len().min(10)]
}
