//! The merge queue on a run's integration branch and the review of a task's diff: a done
//! code task becomes a merge candidate, verified on the merge result (the integration
//! tip + its branch) before the branch moves to exactly that commit; failures and review
//! comments go back to the task's worker (`orch.queueNext`, `orch.queueReport`,
//! `orch.diff`, `orch.review*`, `orch.runEdit`).

use serde::{Deserialize, Serialize};

use super::*;

string_enum!(
    /// Where a merge candidate (one done attempt of a code task) stands.
    QueueState {
        /// Waiting for a reviewer's approval (the run requires approval).
        Review = "review",
        /// Approved (or no approval needed); waits for `orch merge` (a run without
        /// automatic merge).
        Waiting = "waiting",
        /// In the queue: waits for its turn.
        Queued = "queued",
        /// Its verify command runs on `commit` (`tip` + the task's branch).
        Verifying = "verifying",
        /// The integration branch moved to `commit`. Terminal.
        Merged = "merged",
        /// The verify command failed on `commit`: nothing landed. Terminal.
        Failed = "failed",
        /// The merge conflicted: nothing landed. Terminal.
        Conflict = "conflict",
        /// A reviewer requested changes: the task went back to its worker. Terminal.
        ChangesRequested = "changes_requested",
        /// The run was cancelled, or the task went on without it. Terminal.
        Cancelled = "cancelled",
    }
);

impl QueueState {
    /// Still ahead of the integration branch (not merged, failed or dropped).
    pub const fn is_open(self) -> bool {
        matches!(self, QueueState::Review | QueueState::Waiting | QueueState::Queued | QueueState::Verifying)
    }
}

string_enum!(
    /// What `orch.diff` compares a task's branch with.
    DiffAgainst {
        /// Where the branch left the integration branch (their merge base): what the task
        /// itself changed.
        Base = "base",
        /// The integration branch's tip: what merging it would change there.
        Integration = "integration",
    }
);

/// One done attempt of a code task on its way into the integration branch.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct MergeCandidate {
    /// The run.
    pub run_id: String,
    /// The task.
    pub task_id: String,
    /// The attempt whose branch it is.
    pub attempt: u32,
    /// The attempt's branch.
    pub branch: String,
    /// Where it stands.
    pub state: QueueState,
    /// Its place in the run's queue order (0 until it is queued); the queue takes the
    /// lowest first, and a candidate verified again keeps its place.
    pub seq: i64,
    /// 1 for the candidate being verified or next, 2 after it…; only while queued or
    /// verifying (computed when read).
    #[serde(default)]
    pub position: Option<u32>,
    /// The verify command it is (or was) verified with; `null`: merged without one.
    #[serde(default)]
    pub verify: Option<String>,
    /// The integration tip it was last verified (or merged) on.
    #[serde(default)]
    pub tip: Option<String>,
    /// The merge result verified: `tip` + the branch (the branch's tip for a
    /// fast-forward). On `merged`, the integration branch's new tip.
    #[serde(default)]
    pub commit: Option<String>,
    /// How many times it was verified (again when the tip moved meanwhile).
    #[serde(default)]
    pub verifications: u32,
    /// The verify command's exit status (`null`: none yet, killed by a signal or a timeout).
    #[serde(default)]
    pub exit_code: Option<i32>,
    /// The verify command's last output lines, or the conflicting files.
    #[serde(default)]
    pub output: Option<String>,
    /// The verify run's log (`.agents/merge-queue/<run>/logs/...`).
    #[serde(default)]
    pub log_path: Option<String>,
    /// Who approved it, when the run requires approval.
    #[serde(default)]
    pub approved_by: Option<String>,
    /// Why it ended (failed, conflict, changes requested, cancelled).
    #[serde(default)]
    pub reason: Option<String>,
    /// When the attempt finished done.
    pub created_at: String,
    /// Last change.
    pub updated_at: String,
}

/// Params of `orch.runEdit`: the run's settings to change (omitted ones stay; at least one).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[schemars(extend("anyOf" = [
    {"required": ["verify"]}, {"required": ["require_approval"]}, {"required": ["auto_merge"]},
    {"required": ["merge_retries"]}
]))]
pub struct RunEditParams {
    /// The run.
    pub run_id: String,
    /// The verify command every candidate must pass (run with `sh -c` in a scratch
    /// worktree of the merge result); `""` removes it. ≤ 4000 characters.
    #[serde(default)]
    pub verify: Option<String>,
    /// A done code task merges only once a reviewer approved it (`orch.reviewApprove`).
    #[serde(default)]
    pub require_approval: Option<bool>,
    /// Merge each done code task (through the queue) without waiting for `orch.merge`.
    #[serde(default)]
    pub auto_merge: Option<bool>,
    /// How many times the queue sends a task back to its worker (a failed verify, a
    /// conflict) before it fails the task instead.
    #[serde(default)]
    pub merge_retries: Option<u32>,
}

/// Params of `orch.queueNext`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct QueueNextParams {
    /// The run whose queue to serve.
    pub run_id: String,
}

/// What a verifier runs next: the candidate's merge result, checked out in the run's
/// scratch worktree.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct VerifyJob {
    /// The task.
    pub task_id: String,
    /// The attempt.
    pub attempt: u32,
    /// The task's branch.
    pub branch: String,
    /// The command to run (`sh -c`), in `worktree`.
    pub verify: String,
    /// The scratch worktree, checked out at `commit` (detached, cleaned of other files).
    pub worktree: String,
    /// The integration tip the candidate is built on.
    pub tip: String,
    /// The merge result to verify; report it back.
    pub commit: String,
    /// Where to write the command's output.
    pub log_path: String,
    /// Which verification of this candidate this is (1, then 2 after the tip moved…).
    pub verification: u32,
}

/// Result of `orch.queueNext`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct QueueNextResult {
    /// The candidate to verify now; `null` when none is queued (wait for
    /// `task.merge_queued`).
    pub job: Option<VerifyJob>,
    /// What the daemon settled by itself on the way: candidates that conflicted (sent back
    /// to their worker) or needed no verify (merged).
    #[serde(default)]
    pub settled: Vec<MergeCandidate>,
    /// Candidates still queued behind `job`.
    pub queued: u32,
    /// The newest event the call recorded (0 when none).
    pub event_id: i64,
}

/// Params of `orch.queueReport`: how the verify of a `VerifyJob` went.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct QueueReportParams {
    /// The run.
    pub run_id: String,
    /// The task.
    pub task_id: String,
    /// The attempt.
    pub attempt: u32,
    /// The `commit` of the job that ran (a report for another is refused).
    pub commit: String,
    /// The command exited 0.
    pub passed: bool,
    /// Its exit status (`null`: killed by a signal or the timeout).
    #[serde(default)]
    pub exit_code: Option<i32>,
    /// It ran past the verifier's timeout and was killed.
    #[serde(default)]
    pub timed_out: bool,
    /// The output's last lines (≤ 8000 characters are kept, from the end).
    #[serde(default)]
    pub output: String,
}

/// Result of `orch.queueReport`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct QueueReportResult {
    /// The candidate as it stands now: `merged`, `queued` again (the tip moved meanwhile:
    /// it is verified again on the new tip), or `failed`.
    pub candidate: MergeCandidate,
    /// When the failure sent the task back to its worker: the new attempt.
    #[serde(default)]
    pub returned: Option<Dispatch>,
    /// The newest event the call recorded.
    pub event_id: i64,
}

/// Params of `orch.diff`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct DiffParams {
    /// The run.
    pub run_id: String,
    /// The task.
    pub task_id: String,
    /// The attempt (default: the task's current one).
    #[serde(default)]
    pub attempt: Option<u32>,
    /// What to compare the branch with (default `base`).
    #[serde(default)]
    pub against: Option<DiffAgainst>,
    /// Only this file.
    #[serde(default)]
    pub path: Option<String>,
    /// Only files after this path (a `next_after` of an earlier page).
    #[serde(default)]
    pub after: Option<String>,
}

/// One line of a hunk.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct DiffLine {
    /// `" "` context, `"+"` added, `"-"` removed.
    pub origin: String,
    /// Its number in the old file (context and removed lines).
    #[serde(default)]
    pub old_line: Option<u32>,
    /// Its number in the new file (context and added lines).
    #[serde(default)]
    pub new_line: Option<u32>,
    /// The text, without its line ending.
    pub text: String,
}

/// A hunk of a file's diff.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct DiffHunk {
    /// `@@ -a,b +c,d @@ …`.
    pub header: String,
    /// First line in the old file.
    pub old_start: u32,
    /// Lines in the old file.
    pub old_lines: u32,
    /// First line in the new file.
    pub new_start: u32,
    /// Lines in the new file.
    pub new_lines: u32,
    /// The lines.
    pub lines: Vec<DiffLine>,
}

/// One changed file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct DiffFile {
    /// Its path (the new one for a rename).
    pub path: String,
    /// The old path of a rename or copy.
    #[serde(default)]
    pub old_path: Option<String>,
    /// `added`, `deleted`, `modified`, `renamed`, `copied` or `typechange`.
    pub status: String,
    /// Lines added.
    pub additions: u32,
    /// Lines removed.
    pub deletions: u32,
    /// A binary file: no hunks.
    #[serde(default)]
    pub binary: bool,
    /// The hunks.
    pub hunks: Vec<DiffHunk>,
    /// The file's hunks were cut to keep the reply bounded (see `additions`/`deletions`).
    #[serde(default)]
    pub truncated: bool,
}

/// Result of `orch.diff`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct TaskDiff {
    /// The run.
    pub run_id: String,
    /// The task.
    pub task_id: String,
    /// The attempt.
    pub attempt: u32,
    /// The attempt's branch.
    pub branch: String,
    /// What it is compared with.
    pub against: DiffAgainst,
    /// The commit compared from (the merge base, or the integration tip).
    pub from: String,
    /// The branch's tip.
    pub to: String,
    /// The changed files, by path.
    pub files: Vec<DiffFile>,
    /// The review comments on this attempt, oldest first.
    pub comments: Vec<ReviewComment>,
    /// `files` stopped early to keep the reply under [`crate::MAX_REPLY_BYTES`]
    /// (protocol §1.7): continue with `after` = `next_after`.
    #[serde(default)]
    pub truncated: bool,
    /// Where to continue when `truncated`: the path of the last file returned.
    #[serde(default)]
    pub next_after: Option<String>,
}

/// A reviewer's comment on one line of an attempt's diff.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ReviewComment {
    /// `rc_…`.
    pub comment_id: String,
    /// The run.
    pub run_id: String,
    /// The task.
    pub task_id: String,
    /// The attempt whose diff it is on.
    pub attempt: u32,
    /// The file.
    pub path: String,
    /// The line (in the new file; in the old one for `side` `old`).
    pub line: u32,
    /// `new` (default) or `old` (a removed line).
    pub side: String,
    /// The comment.
    pub body: String,
    /// Who wrote it.
    pub author: String,
    /// When.
    pub created_at: String,
    /// The message that carried it to the worker (`orch.reviewRequestChanges`); `null`
    /// while not sent.
    #[serde(default)]
    pub sent_in: Option<String>,
}

/// Params of `orch.reviewComment`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ReviewCommentParams {
    /// The run.
    pub run_id: String,
    /// The task.
    pub task_id: String,
    /// The attempt (default: the task's current one).
    #[serde(default)]
    pub attempt: Option<u32>,
    /// The file, as the diff names it.
    pub path: String,
    /// The line, from 1.
    pub line: u32,
    /// `new` (default) or `old`.
    #[serde(default)]
    pub side: Option<String>,
    /// The comment. Not blank, ≤ 4000 characters.
    pub body: String,
    /// Who writes it (default: the dashboard's overseer, else the run's creator).
    #[serde(default)]
    pub author: Option<String>,
}

/// Params of `orch.reviewApprove` and `orch.reviewRequestChanges`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ReviewParams {
    /// The run.
    pub run_id: String,
    /// The task.
    pub task_id: String,
    /// A word for the worker (request changes: the message's first line).
    #[serde(default)]
    pub summary: Option<String>,
    /// Who reviews (default: the dashboard's overseer, else the run's creator).
    #[serde(default)]
    pub author: Option<String>,
}

/// Result of `orch.reviewApprove` and `orch.reviewRequestChanges`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ReviewResult {
    /// The task as it stands now.
    pub task: Task,
    /// Its merge candidate, when it has one.
    #[serde(default)]
    pub candidate: Option<MergeCandidate>,
    /// Request changes: the comments the message carried.
    #[serde(default)]
    pub comments: Vec<ReviewComment>,
    /// Request changes on a done task: the attempt it went back to its worker as.
    #[serde(default)]
    pub returned: Option<Dispatch>,
    /// Request changes: the message that carries the comments.
    #[serde(default)]
    pub message_id: Option<String>,
    /// The newest event the call recorded.
    pub event_id: i64,
}
