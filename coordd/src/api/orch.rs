//! `orch.*`. With credentials required, a run's writes are its creator's (or the lead's or
//! an admin's): [`Api::own_run`] checks the connection before the call.

use coord_proto::api::OrchApiServer;
use coord_proto::types::*;
use jsonrpsee::core::{RpcResult, async_trait};

use super::Api;
use crate::domain::orch::attempts::{self, Mode};
use crate::domain::orch::plan::DepChange;
use crate::domain::orch::{council, edit, model, plan, reconcile};
use crate::net::caller;
use crate::ops;
use crate::services::{dispatch, merge, worktrees};

#[async_trait]
impl OrchApiServer for Api {
    async fn run_create(&self, p: RunCreateParams) -> RpcResult<RunView> {
        let mut p = p;
        // An authenticated connection creates its runs as its own agent by default.
        if p.created_by.is_none()
            && let Some([me]) = caller::current().as_deref()
        {
            p.created_by = Some(me.clone());
        }
        Ok(self.core.write(move |tx, now| plan::create_run(tx, now, p.clone())).await?)
    }

    async fn run_list(&self, p: RunListParams) -> RpcResult<RunsResult> {
        Ok(self.core.read(move |tx, _| plan::list_runs(tx, &p)).await?)
    }

    async fn run_show(&self, p: RunRef) -> RpcResult<RunView> {
        Ok(self.core.read(move |tx, _| plan::view(tx, &p.run_id, 0)).await?)
    }

    async fn task_add(&self, p: TaskAddParams) -> RpcResult<TaskView> {
        self.own_run(&p.run_id).await?;
        Ok(self.core.write(move |tx, now| plan::add_task(tx, now, p.clone())).await?)
    }

    async fn task_list(&self, p: TaskListParams) -> RpcResult<TasksResult> {
        Ok(self.core.read(move |tx, _| plan::list_tasks(tx, &p)).await?)
    }

    async fn task_show(&self, p: TaskShowParams) -> RpcResult<TaskView> {
        Ok(self.core.read(move |tx, _| plan::show_task(tx, &p)).await?)
    }

    async fn dep_add(&self, p: DepParams) -> RpcResult<TaskView> {
        self.own_run(&p.run_id).await?;
        Ok(self.core.write(move |tx, now| plan::change_dep(tx, now, p.clone(), DepChange::Add)).await?)
    }

    async fn dep_remove(&self, p: DepParams) -> RpcResult<TaskView> {
        self.own_run(&p.run_id).await?;
        Ok(self.core.write(move |tx, now| plan::change_dep(tx, now, p.clone(), DepChange::Remove)).await?)
    }

    async fn ready(&self, p: TaskListParams) -> RpcResult<TasksResult> {
        Ok(self.core.read(move |tx, _| plan::ready(tx, &p)).await?)
    }

    async fn dispatch(&self, p: DispatchParams) -> RpcResult<DispatchResult> {
        self.own_run(&p.run_id).await?;
        Ok(dispatch::dispatch(&self.core, p).await?)
    }

    async fn reconcile(&self, p: RunRef) -> RpcResult<TasksResult> {
        let tasks = self.core.write(move |tx, now| reconcile::run(tx, now, &p.run_id)).await?;
        Ok(plan::tasks_page(tasks))
    }

    async fn blocked(&self, p: RunPageParams) -> RpcResult<BlockedResult> {
        Ok(self.core.read(move |tx, _| attempts::blocked(tx, &p)).await?)
    }

    async fn answer(&self, p: AnswerParams) -> RpcResult<MessageResult> {
        Ok(self.core.write_acting(move |tx, now, acting| ops::orch::answer(tx, now, p.clone(), acting)).await?)
    }

    async fn retry(&self, p: RetryParams) -> RpcResult<DispatchResult> {
        self.own_run(&p.run_id).await?;
        Ok(dispatch::retry(&self.core, p, Mode::Retry).await?)
    }

    async fn reassign(&self, p: ReassignParams) -> RpcResult<DispatchResult> {
        self.own_run(&p.run_id).await?;
        Ok(dispatch::retry(&self.core, p.into(), Mode::Reassign).await?)
    }

    async fn orch_cancel(&self, p: CancelTaskParams) -> RpcResult<RunView> {
        Ok(self.core.write_acting(move |tx, now, acting| ops::orch::cancel(tx, now, p.clone(), acting)).await?)
    }

    async fn worktree_list(&self, p: WorktreeParams) -> RpcResult<WorktreesResult> {
        Ok(worktrees::list(&self.core, p).await?)
    }

    async fn worktree_prune(&self, p: WorktreeParams) -> RpcResult<WorktreesResult> {
        match &p.run_id {
            Some(run) => self.own_run(run).await?,
            None => {
                let acting = caller::acting();
                self.core.read(move |tx, _| acting.check_role(tx, "prune every run's worktrees")).await?
            }
        }
        Ok(worktrees::prune(&self.core, p).await?)
    }

    async fn council_start(&self, p: CouncilStartParams) -> RpcResult<Council> {
        self.own_run(&p.run_id).await?;
        Ok(self.core.write(move |tx, now| ops::orch::council_start(tx, now, p.clone())).await?)
    }

    async fn council_show(&self, p: CouncilRef) -> RpcResult<Council> {
        Ok(self.core.read(move |tx, _| council::show_page(tx, &p)).await?)
    }

    async fn council_list(&self, p: RunPageParams) -> RpcResult<CouncilsResult> {
        Ok(self.core.read(move |tx, _| council::list(tx, &p)).await?)
    }

    async fn task_edit(&self, p: TaskEditParams) -> RpcResult<TaskView> {
        self.own_run(&p.run_id).await?;
        Ok(self.core.write(move |tx, now| edit::edit_task(tx, now, p.clone())).await?)
    }

    async fn task_remove(&self, p: TaskRef) -> RpcResult<TaskRemoveResult> {
        self.own_run(&p.run_id).await?;
        Ok(self.core.write(move |tx, now| edit::remove_task(tx, now, p.clone())).await?)
    }

    async fn merge(&self, p: MergeParams) -> RpcResult<MergeResult> {
        self.own_run(&p.run_id).await?;
        Ok(merge::merge(&self.core, p).await?)
    }

    async fn run_finish(&self, p: RunFinishParams) -> RpcResult<RunFinishResult> {
        self.own_run(&p.run_id).await?;
        Ok(merge::finish(&self.core, p).await?)
    }
}

impl Api {
    /// With credentials required, may this call's connection write to run `run_id`: as its
    /// creator, the lead or an admin? An unknown run passes, for the call to report.
    pub(super) async fn own_run(&self, run_id: &str) -> crate::error::Result<()> {
        let acting = caller::acting();
        let run_id = run_id.to_string();
        self.core
            .read(move |tx, _| match model::find_run(tx, &run_id)? {
                Some(run) => acting.check_owner(tx, &run.created_by, &format!("run {run_id}")),
                None => Ok(()),
            })
            .await
    }
}
