//! The bridge's calls to the daemon, through `coord-client` and the public protocol only.
//! A call that finds the connection gone (the daemon is restarting) connects again,
//! starting the daemon if needed, and is made again, a bounded number of times.

use coord_client::pages::Paged as _;
use coord_client::{Client, ClientError, ConnectOptions};
use coord_proto::api::*;
use coord_proto::types::*;

/// A connection that is made again when it breaks.
pub struct Rpc {
    opts: ConnectOptions,
    client: Option<Client>,
}

/// How many times a call is made when the connection keeps breaking (the daemon is
/// stopping or starting), with a pause doubling from [`RETRY_FIRST_DELAY`] between tries.
const CALL_TRIES: u32 = 8;
const RETRY_FIRST_DELAY: std::time::Duration = std::time::Duration::from_millis(50);

/// Whether a failed call may succeed on a new connection.
fn broken(e: &ClientError) -> bool {
    matches!(e, ClientError::Transport(_) | ClientError::Connect { .. } | ClientError::DaemonUnavailable { .. })
}

/// Call `$method` with `$params`, reconnecting when the connection broke (bounded: see
/// [`CALL_TRIES`]).
macro_rules! call {
    ($self:ident, $method:ident, $params:expr) => {{
        let p = $params;
        let mut backoff = coord_client::Backoff::new(RETRY_FIRST_DELAY, std::time::Duration::MAX);
        loop {
            let r = match $self.client().await {
                Ok(c) => c.$method(p.clone()).await.map_err(ClientError::from),
                Err(e) => Err(e),
            };
            match r {
                Err(e) if broken(&e) && backoff.pauses() + 1 < CALL_TRIES => {
                    $self.client = None;
                    backoff.pause().await;
                }
                other => break other,
            }
        }
    }};
}

/// Call a bounded `$method` page after page (each through `call!`) until its list is whole.
macro_rules! all_pages {
    ($self:ident, $method:ident, $params:expr) => {{
        let p = $params;
        let mut whole = call!($self, $method, p.clone())?;
        let mut next = whole.next(p);
        while let Some(p) = next {
            let page = call!($self, $method, p.clone())?;
            next = page.next(p);
            whole.extend(page);
        }
        Ok(whole)
    }};
}

impl Rpc {
    pub async fn connect(opts: ConnectOptions) -> Result<Rpc, ClientError> {
        let client = Client::connect(opts.clone()).await?;
        Ok(Rpc { opts, client: Some(client) })
    }

    /// The connection, made again if it is gone.
    pub async fn client(&mut self) -> Result<&Client, ClientError> {
        if self.client.as_ref().is_some_and(|c| !c.is_connected()) {
            self.client = None;
        }
        if self.client.is_none() {
            self.client = Some(Client::connect(self.opts.clone()).await?);
        }
        Ok(self.client.as_ref().expect("just connected"))
    }

    /// The run with every task: a view truncated by the reply bound is completed with
    /// `orch.taskList` pages.
    pub async fn run_show(&mut self, run_id: &str) -> Result<RunView, ClientError> {
        let mut view: RunView = call!(self, run_show, RunRef { run_id: run_id.to_string() })?;
        let mut next = view.next_after.take().filter(|_| view.truncated);
        view.truncated = false;
        while let Some(after) = next {
            let p = TaskListParams { run_id: run_id.to_string(), after: Some(after), ..Default::default() };
            let page: TasksResult = call!(self, task_list, p)?;
            next = page.next_after.filter(|_| page.truncated);
            view.tasks.extend(page.tasks);
        }
        Ok(view)
    }

    /// A task with every attempt, following the reply bound's pages.
    pub async fn task_show(&mut self, run_id: &str, task_id: &str) -> Result<TaskView, ClientError> {
        let p = TaskShowParams { run_id: run_id.to_string(), task_id: task_id.to_string(), after_attempt: None };
        all_pages!(self, task_show, p)
    }

    pub async fn dispatch(&mut self, p: DispatchParams) -> Result<DispatchResult, ClientError> {
        call!(self, dispatch, p)
    }

    pub async fn session_start(&mut self, p: SessionStartParams) -> Result<LaunchSession, ClientError> {
        call!(self, session_start, p)
    }

    pub async fn session_exit(&mut self, p: SessionExitParams) -> Result<SessionExitResult, ClientError> {
        call!(self, session_exit, p)
    }

    /// The project's settings (`inbox.init` with no change): whether credentials are
    /// required, the lead and the admins.
    pub async fn settings(&mut self) -> Result<InitResult, ClientError> {
        call!(self, init, InitParams::default())
    }

    pub async fn agent_show(&mut self, agent: &str) -> Result<Agent, ClientError> {
        call!(self, agent_show, AgentRef { agent_id: agent.to_string() })
    }

    pub async fn agent_register(&mut self, p: RegisterParams) -> Result<AgentResult, ClientError> {
        call!(self, agent_register, p)
    }

    pub async fn budget_set(&mut self, p: BudgetSetParams) -> Result<BudgetSetResult, ClientError> {
        call!(self, budget_set, p)
    }

    pub async fn usage_show(&mut self, run_id: &str) -> Result<UsageReport, ClientError> {
        call!(self, usage_show, UsageShowParams { run_id: run_id.to_string() })
    }

    /// Every matching session, following the reply bound's pages.
    pub async fn session_list(&mut self, p: SessionListParams) -> Result<SessionsResult, ClientError> {
        all_pages!(self, session_list, p)
    }
}
