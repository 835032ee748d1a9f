//! `inbox send`: create a thread with its first message, or append a message to --thread.

use super::*;

/// Create a thread with its first message, or append a message to --thread.
#[derive(clap::Args)]
#[command(
    after_help = "Example:\n  inbox send --from lead --to backend --subject \"Post CRUD\" --summary \"Implement post CRUD\" --json"
)]
pub struct Args {
    /// Sender (default: --agent).
    #[arg(long)]
    pub from: Option<String>,
    /// Recipient agent, or `broadcast` (every registered agent).
    #[arg(long, required_unless_present_any = ["to_task", "to_peer"], conflicts_with_all = ["to_task", "to_peer"])]
    pub to: Option<String>,
    /// Send to a task: whoever runs it gets the message (kept until the task starts).
    #[arg(long, value_name = "TASK_ID", conflicts_with = "to_peer")]
    pub to_task: Option<String>,
    /// Send to the peer(s) linked to your task (--task, or $COORD_TASK).
    #[arg(long)]
    pub to_peer: bool,
    /// A queued message not delivered within this many seconds expires.
    #[arg(long, value_name = "SECONDS")]
    pub expires_in: Option<u64>,
    /// Subject of a new thread (default: the summary).
    #[arg(long)]
    pub subject: Option<String>,
    /// Append to this thread instead of creating one.
    #[arg(long, value_name = "THREAD_ID")]
    pub thread: Option<String>,
    /// Run id the thread belongs to.
    #[arg(long, value_name = "RUN_ID")]
    pub run: Option<String>,
    /// Task id the thread carries.
    #[arg(long, value_name = "TASK_ID")]
    pub task: Option<String>,
    /// Message kind (default: task for a new thread, progress otherwise).
    #[arg(long, value_parser = one_of(MessageKind::ALL))]
    pub kind: Option<MessageKind>,
    /// Priority (default: the thread's; a new thread's is normal). Urgent mail reaches a
    /// session first and holds its Stop.
    #[arg(long, value_parser = one_of(Priority::ALL))]
    pub priority: Option<Priority>,
    /// Mail category: HANDOFF, BLOCKED, DECISION or INFO (needs --task). HANDOFF and
    /// BLOCKED ask every recipient to ack. `--to broadcast` reaches every registered agent.
    #[arg(long, value_name = "CATEGORY")]
    pub category: Option<String>,
    /// Ask every recipient to ack the message (`inbox ack`).
    #[arg(long, conflicts_with = "no_ack")]
    pub requires_ack: bool,
    /// Do not ask for an ack, even for HANDOFF or BLOCKED.
    #[arg(long)]
    pub no_ack: bool,
    #[command(flatten)]
    pub content: Content,
}

impl Command for Args {
    async fn run(self, ctx: &Ctx) -> Res {
        let a = self;
        let p = SendParams {
            from: ctx.agent_or(a.from, "from")?,
            to: a.to.unwrap_or_default(),
            to_task: a.to_task,
            // --to-peer: the peers of your own task (--task, else $COORD_TASK).
            to_peer: if a.to_peer {
                Some(a.task.clone().or_else(|| std::env::var("COORD_TASK").ok()).ok_or_else(|| {
                    CliError::Invalid("--to-peer needs your task: pass --task TASK_ID (or set COORD_TASK)".into())
                })?)
            } else {
                None
            },
            expires_in_seconds: a.expires_in,
            thread_id: a.thread,
            subject: a.subject,
            run_id: a.run,
            task_id: if a.to_peer { None } else { a.task },
            kind: a.kind,
            priority: a.priority,
            category: a.category,
            requires_ack: flag_pair(a.requires_ack, a.no_ack),
            message: content(a.content)?,
        };
        let r = ctx.client().await?.send(p).await?;
        posted(ctx, "sent", r)
    }
}
