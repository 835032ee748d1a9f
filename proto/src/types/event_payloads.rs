//! What each event type carries in its `payload_json`, for the OpenRPC document's
//! `x-events` (and so `rpc.discover`). The match is exhaustive: a new event type does not
//! compile until its payload is described here. `docs/protocol.md` §4.16 and §4.20 give the
//! summaries and who the actor is.

use super::EventType;

impl EventType {
    /// The shape of this event's `payload_json`, in words (field names in JSON).
    pub const fn payload(self) -> &'static str {
        use EventType::*;
        match self {
            ThreadCreated | MessageSent | ThreadProgress | ThreadBlocked | ThreadReplied | ThreadDone
            | ThreadFailed | ThreadCancelled => "the recorded message's payload (the full message is in `message`)",
            ThreadClaimed | LeaseRenewed => r#"{"generation","expires_at"}"#,
            LeaseExpired => r#"{"agent","expires_at","generation"}"#,
            RunCreated => r#"{"goal","auto_retry"}"#,
            RunDone | RunFailed | RunResumed => r#"{"total","done","failed"} (task counts)"#,
            RunCancelled => "{}",
            TaskAdded => r#"{"depends_on","kind","priority"}"#,
            TaskDepsChanged => r#"{"depends_on","added","on"}"#,
            TaskReady => r#"{}, or {"after": task} when a finished task released it"#,
            TaskDispatched => {
                r#"the Dispatch plus "mode": "dispatched", "retried", "reassigned" or "returned" (by the merge queue or a review, with "feedback"); from a reconcile repair {"attempt","thread_id","worker"}"#
            }
            TaskInProgress | TaskBlocked | TaskDone => r#"{"attempt","thread_id","worker"}"#,
            TaskFailed => {
                r#"{"attempt","thread_id","worker","auto_retry": bool}; from the merge queue also "merge": {"cause","reason"}"#
            }
            TaskCancelled => r#"{"attempt","thread_id","worker"} (reconcile), or {"reason"} (orch.cancel)"#,
            CouncilStarted => r#"{"council_id","reviewers"}"#,
            CouncilVoting => r#"{"council_id","groups": n}"#,
            CouncilDone => r#"{"council_id"}"#,
            AgentRegistered => "the Agent",
            AgentStatus => r#"{"agent_id","status","previous"}"#,
            MailRead | MailAcked => r#"{"message_id","recipient","from_agent","state","category"}"#,
            ReservationCreated | ReservationReleased => "the Reservation",
            ReservationExpired => "the expired Reservation",
            SettingsChanged => {
                r#"the one setting or role that changed: {"strict_agents": bool}, {"require_credentials": bool}, {"lead": string} ("" when removed) or {"admins": [string]}"#
            }
            MailDelivered => r#"{"message_ids": [...], "recipients": [...]}"#,
            MailWithdrawn => "the withdrawn message",
            PeersLinked => r#"{"task_id","peer_task_id"}"#,
            PolicyChanged => r#"{"version","rules","lead"}"#,
            TaskMerged => "the MergeOutcome",
            TaskMergeConflict => {
                r#"the MergeOutcome, with "resolution_task" (no verify command) or "returned": Dispatch|null (the merge queue)"#
            }
            TaskEdited => "the changed fields",
            TaskRemoved => r#"{"title","dependents"}"#,
            RunMerged => r#"{"into","commit","fast_forward","integration_branch"}"#,
            LaunchStarted | LaunchExited | LaunchTail => r#"{"session": LaunchSession}"#,
            TaskMergeQueued => r#"{"attempt","position","verify","requeued": bool} ("reason" when requeued)"#,
            TaskVerifying => r#"{"attempt","tip","commit","verify","verification","log_path"}"#,
            TaskVerifyFailed => {
                r#"{"attempt","tip","commit","verify","exit_code","timed_out","output","log_path","returned": Dispatch|null}"#
            }
            TaskApproved => r#"{"attempt","by"}"#,
            TaskChangesRequested => r#"{"attempt","by","comments": n,"message_id","returned": Dispatch|null}"#,
            TaskCommented => "the ReviewComment",
            RunEdited => "the changed fields",
            LaunchUsage => r#"{"session": SessionUsage, "run": Usage}"#,
            LaunchBudgetSet => r#"{"session_id" (null for the run's), "budget": Budget, "usage": Usage}"#,
            RunBudgetReached => r#"{"budget": Budget, "usage": Usage}"#,
        }
    }
}
