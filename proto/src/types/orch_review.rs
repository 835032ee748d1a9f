//! Params and results of orch's worktrees, councils, task edits, merges and run finish (the rest of orch is in `orch.rs`).

use super::*;
use serde::{Deserialize, Serialize};

/// Params of `orch.worktreeList` and `orch.worktreePrune`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct WorktreeParams {
    /// Only this run (`1003` if unknown). Default: all runs.
    #[serde(default)]
    pub run_id: Option<String>,
    /// Prune: also remove worktrees with unmerged commits or uncommitted changes.
    #[serde(default)]
    pub force: bool,
    /// `orch.worktreeList`: only worktrees after this one in the list's order (a
    /// `next_after` of an earlier page: `RUN/TASK/ATTEMPT`). Prune ignores it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub after: Option<String>,
}

/// A worktree of an attempt, as listed or pruned.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct WorktreeInfo {
    /// The run (`run_…`).
    pub run_id: String,
    /// The task id, unique within its run.
    pub task_id: String,
    /// Attempt number, from 1.
    pub attempt: u32,
    /// The worktree directory.
    pub path: String,
    /// Git branch of the attempt.
    pub branch: Option<String>,
    /// Status of the attempt owning the worktree.
    pub attempt_status: AttemptStatus,
    /// Whether the directory still exists.
    pub exists: bool,
    /// Prune: why it was kept, or what was removed.
    #[serde(default)]
    pub note: Option<String>,
}

/// Result of `orch.worktreeList` (`worktrees`) and `orch.worktreePrune` (`removed`, `kept`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct WorktreesResult {
    /// The worktrees.
    #[serde(default)]
    pub worktrees: Vec<WorktreeInfo>,
    /// The removed.
    #[serde(default)]
    pub removed: Vec<WorktreeInfo>,
    /// The kept.
    #[serde(default)]
    pub kept: Vec<WorktreeInfo>,
    /// Worktrees of attempts made on other hosts (several daemons on one PostgreSQL
    /// store): they live there, so they are neither listed nor pruned here.
    #[serde(default)]
    pub other_hosts: u32,
    /// Integration branches `orch.worktreePrune` deleted: those of finished runs, merged
    /// into the run's base branch, with no worktree of the run left.
    #[serde(default)]
    pub removed_branches: Vec<String>,
    /// `orch.worktreeList`: the list stopped early to keep the reply under
    /// [`crate::MAX_REPLY_BYTES`] (protocol §1.7): continue with `after` = `next_after`.
    /// `orch.worktreePrune`: it pruned everything, but `kept` and `removed` list only what
    /// fits (kept first); `kept_count` and `removed_count` say how many there were.
    #[serde(default)]
    pub truncated: bool,
    /// `orch.worktreeList`, when `truncated`: the last worktree returned, as
    /// `RUN/TASK/ATTEMPT`.
    #[serde(default)]
    pub next_after: Option<String>,
    /// `orch.worktreePrune`: how many worktrees were removed (`removed` may list fewer).
    #[serde(default)]
    pub removed_count: u32,
    /// `orch.worktreePrune`: how many worktrees were kept (`kept` may list fewer).
    #[serde(default)]
    pub kept_count: u32,
}

/// Params of `orch.councilStart`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct CouncilStartParams {
    /// The run the council belongs to.
    pub run_id: String,
    /// Not blank, ≤ 4000 characters.
    pub topic: String,
    /// What to review. Default: `""`.
    #[serde(default)]
    pub body: Option<String>,
    /// Defaults to `reviewer-1`, `reviewer-2`, `reviewer-3`.
    #[serde(default)]
    pub reviewers: Vec<String>,
}

/// Params naming a council.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct CouncilRef {
    /// The run (`run_…`).
    pub run_id: String,
    /// The council id.
    pub council_id: String,
    /// Only groups after this one (a `next_after` of an earlier `orch.councilShow`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub after_group: Option<String>,
}

/// One reviewer of a council, with its threads.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct CouncilMember {
    /// Agent name.
    pub reviewer: String,
    /// The member's brainstorm thread.
    pub brainstorm_thread_id: String,
    /// The brainstorm thread has ended (done, failed or cancelled).
    pub brainstorm_done: bool,
    /// Set when voting starts.
    pub vote_thread_id: Option<String>,
    /// The vote thread has ended.
    pub vote_done: bool,
}

/// A group of recommendations with its votes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct CouncilGroup {
    /// `G1`, `G2`, ...
    pub group_id: String,
    /// The title of the group's first recommendation.
    pub title: String,
    /// Every detail given for the group, by reviewer.
    pub details: Vec<ProposalDetail>,
    /// Reviewers who proposed it, each once, in reviewer order.
    pub proposed_by: Vec<String>,
    /// Reviewers whose vote payload says `"approve"` for this group.
    pub approve: u32,
    /// Reviewers whose vote payload says `"reject"`.
    pub reject: u32,
    /// Reviewers whose vote thread has ended with anything else for this group: `"abstain"`,
    /// another value, no entry, or a thread that failed or was cancelled. Reviewers still voting
    /// are not counted.
    pub abstain: u32,
    /// `approved`, `rejected` or `no_majority` (strict majority of reviewers).
    pub verdict: String,
}

/// What one reviewer proposed for a group.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ProposalDetail {
    /// Agent name.
    pub reviewer: String,
    /// The title of the group's first recommendation.
    pub title: String,
    /// Full proposal text.
    pub detail: String,
}

/// A council review.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Council {
    /// The run (`run_…`).
    pub run_id: String,
    /// `C1`, `C2`, ...
    pub council_id: String,
    /// What the council is about.
    pub topic: String,
    /// Full text, `""` if none.
    pub body: String,
    /// Phase of the council.
    pub phase: CouncilPhase,
    /// In the order reviewers were given.
    pub members: Vec<CouncilMember>,
    /// Filled once voting starts.
    pub groups: Vec<CouncilGroup>,
    /// When it was created.
    pub created_at: String,
    /// The `council.started` event for `orch.councilStart`, 0 for `orch.councilShow`.
    pub event_id: i64,
    /// `groups` stopped early to keep the reply under [`crate::MAX_REPLY_BYTES`] (protocol
    /// §1.7): continue with `after_group` = `next_after`.
    #[serde(default)]
    pub truncated: bool,
    /// Where to continue when `truncated`: the `group_id` of the last group returned.
    #[serde(default)]
    pub next_after: Option<String>,
}

/// Params of `orch.taskEdit`: the fields to change (omitted ones stay). Title, body and
/// acceptance only before the task is dispatched; the worker, priority, role and limits
/// any time before it is done (a live attempt keeps its worker: reassign moves it).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[schemars(extend("anyOf" = [
    {"required": ["title"]}, {"required": ["body"]}, {"required": ["acceptance"]}, {"required": ["priority"]},
    {"required": ["assign_to"]}, {"required": ["role"]}, {"required": ["kind"]}, {"required": ["max_attempts"]}
]))]
pub struct TaskEditParams {
    /// The run.
    pub run_id: String,
    /// The task.
    pub task_id: String,
    /// Title.
    #[serde(default)]
    pub title: Option<String>,
    /// Full text, `""` if none.
    #[serde(default)]
    pub body: Option<String>,
    /// The acceptance.
    #[serde(default)]
    pub acceptance: Option<String>,
    /// Priority.
    #[serde(default)]
    pub priority: Option<Priority>,
    /// The worker dispatch gives it (`orch task assign`).
    #[serde(default)]
    pub assign_to: Option<String>,
    /// The role.
    #[serde(default)]
    pub role: Option<String>,
    /// Kind.
    #[serde(default)]
    pub kind: Option<TaskKind>,
    /// How many attempts the task may use.
    #[serde(default)]
    pub max_attempts: Option<u32>,
    /// Its own verify command, over the run's; `""`: none for this task (also while its
    /// merge waits).
    #[serde(default)]
    pub verify: Option<String>,
}

/// Result of `orch.taskRemove`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct TaskRemoveResult {
    /// The run (`run_…`).
    pub run_id: String,
    /// The task id, unique within its run.
    pub task_id: String,
    /// Tasks that depended on it and lost that dependency.
    pub dependents: Vec<String>,
    /// The event that recorded the change; usable as an `after_event` cursor.
    pub event_id: i64,
}

/// Params of `orch.merge`: merge done code tasks into the run's integration branch.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct MergeParams {
    /// The run.
    pub run_id: String,
    /// This task; without it, every done task whose merge is pending.
    #[serde(default)]
    pub task_id: Option<String>,
}

/// What merging one task did.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct MergeOutcome {
    /// The task id, unique within its run.
    pub task_id: String,
    /// `merged` or `conflict`.
    pub state: MergeState,
    /// The task's branch.
    pub branch: String,
    /// The run's integration branch.
    pub integration_branch: String,
    /// The integration branch's new tip (merged), or its unchanged tip (conflict).
    pub commit: String,
    /// Commits the task brought (0: nothing to merge).
    pub commits: usize,
    /// Merged by moving the integration branch forward (no merge commit).
    pub fast_forward: bool,
    /// Conflicting files.
    #[serde(default)]
    pub conflicts: Vec<String>,
    /// The task opened to resolve the conflict.
    #[serde(default)]
    pub resolution_task: Option<String>,
    /// Files with uncommitted changes in the task's worktree: not merged (the worktree is
    /// kept).
    #[serde(default)]
    pub uncommitted: Vec<String>,
}

/// Result of `orch.merge`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct MergeResult {
    /// The merged.
    pub merged: Vec<MergeOutcome>,
    /// The event that recorded the change; usable as an `after_event` cursor.
    pub event_id: i64,
    /// Tasks with a verify command: not merged here, but in the run's merge queue (with
    /// their position), where a verifier (`orch merge-queue`) verifies and merges them.
    #[serde(default)]
    pub queued: Vec<MergeCandidate>,
}

/// Params of `orch.runFinish`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RunFinishParams {
    /// The run.
    pub run_id: String,
    /// The branch to merge into (default: the run's base branch).
    #[serde(default)]
    pub into: Option<String>,
}

/// Result of `orch.runFinish`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RunFinishResult {
    /// The run.
    pub run: Run,
    /// Tasks merged into the integration branch first.
    pub merged: Vec<MergeOutcome>,
    /// The branch the integration branch was merged into.
    pub into: String,
    /// The branch's new tip.
    pub commit: String,
    /// Whether the merge was a fast-forward.
    pub fast_forward: bool,
    /// The branch already held everything.
    pub up_to_date: bool,
    /// The event that recorded the change; usable as an `after_event` cursor.
    pub event_id: i64,
}

/// Result of `orch.councilList`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct CouncilsResult {
    /// The councils.
    pub councils: Vec<Council>,
    /// The list stopped early to keep the reply under [`crate::MAX_REPLY_BYTES`]
    /// (protocol §1.7): continue with `after` = `next_after`.
    #[serde(default)]
    pub truncated: bool,
    /// Where to continue when `truncated`: the `council_id` of the last council returned.
    #[serde(default)]
    pub next_after: Option<String>,
}
