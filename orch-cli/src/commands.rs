//! One arm per command: build and check the params, then make the call (connecting on the
//! first one) and print the result. A list that comes back empty ends as nothing matched.

use std::path::{Path, PathBuf};
use std::time::Duration;

use coord_cli::{CliError, WaitReport, body};
use coord_proto::api::{ControlApiClient, OrchApiClient, ViewApiClient};
use coord_proto::types::*;
use serde_json::json;

use crate::cli::*;
use crate::ctx::{Ctx, Outcome, Res};
use crate::render;

pub async fn run(ctx: &Ctx, cmd: Cmd) -> Res {
    match cmd {
        Cmd::Run(RunCmd::Create(a)) => {
            let p = RunCreateParams {
                run_id: a.id,
                goal: a.goal,
                created_by: a.created_by,
                auto_retry: a.auto_retry,
                auto_merge: a.auto_merge,
            };
            let v = ctx.client().await?.run_create(p).await?;
            ctx.print(&v, || println!("created run {} [{}]: {}", v.run.run_id, v.run.status, v.run.goal));
            done()
        }
        Cmd::Run(RunCmd::List) => {
            let c = ctx.client().await?;
            let v = coord_client::pages::all(RunListParams::default(), |p| c.run_list(p)).await?;
            ctx.print(&v, || render::runs(&v.runs));
            found(&v.runs)
        }
        Cmd::Status(a) if a.watch => crate::top::run(ctx, TopArgs { run: Some(a.run) }).await,
        Cmd::Status(a) => {
            // The run's graph, and the requests of its workers still waiting for an answer.
            let c = ctx.client().await?;
            let v = coord_client::pages::all(RunViewParams { run_id: a.run.clone(), after: None }, |p| c.view_run(p))
                .await?;
            let open = RequestsParams { run_id: Some(a.run), ..Default::default() };
            let requests = coord_client::pages::all(open, |p| c.control_requests(p)).await?.requests;
            let mut out = serde_json::to_value(&v).unwrap_or_default();
            out["open_requests"] = json!(requests);
            ctx.print(&out, || {
                let nodes: Vec<crate::tree::Node<'_>> = v.tasks.iter().map(Into::into).collect();
                crate::tree::print(&v.run, &nodes);
                crate::sessions::print(&v.sessions);
                render::requests(&requests);
            });
            done()
        }
        Cmd::Dashboard(a) => {
            coord_cli::dashboard::command(ctx.client().await?, &a, ctx.json, ctx.command).await?;
            done()
        }
        Cmd::Top(a) => crate::top::run(ctx, a).await,
        Cmd::Run(RunCmd::Show(a)) => {
            let c = ctx.client().await?;
            let v = c.run_show(RunRef { run_id: a.run }).await?;
            let v = coord_client::pages::complete_run_view(v, |p| c.task_list(p)).await?;
            ctx.print(&v, || render::graph(&v));
            done()
        }
        Cmd::Run(RunCmd::Finish(a)) => {
            let v = ctx.client().await?.run_finish(RunFinishParams { run_id: a.run, into: a.into }).await?;
            ctx.print(&v, || render::finished(&v));
            done()
        }
        Cmd::Run(RunCmd::Cancel(a)) => {
            let p = CancelTaskParams { run_id: a.run, task_id: None, reason: a.reason };
            let v = ctx.client().await?.orch_cancel(p).await?;
            ctx.print(&v, || render::graph(&v));
            done()
        }
        Cmd::Task(TaskCmd::Add(a)) => {
            let p = TaskAddParams {
                run_id: a.run,
                task_id: a.id,
                title: a.title,
                body: body(a.body, a.body_file.as_deref())?,
                acceptance: a.acceptance,
                depends_on: a.depends_on,
                assign_to: a.assign_to,
                role: a.role,
                priority: a.priority,
                kind: a.kind,
                max_attempts: a.max_attempts,
            };
            let v = ctx.client().await?.task_add(p).await?;
            ctx.print(&v, || render::task(&v));
            done()
        }
        Cmd::Task(TaskCmd::List(a)) => {
            let p = TaskListParams { run_id: a.run, statuses: a.status, limit: None, after: None };
            let c = ctx.client().await?;
            let v = coord_client::pages::all(p, |p| c.task_list(p)).await?;
            ctx.print(&v, || render::tasks(&v.tasks));
            found(&v.tasks)
        }
        Cmd::Task(TaskCmd::Show(a)) => {
            let v = ctx.client().await?.task_show(TaskRef { run_id: a.run, task_id: a.task }).await?;
            ctx.print(&v, || render::task(&v));
            done()
        }
        Cmd::Task(TaskCmd::Edit(a)) => {
            let p = TaskEditParams {
                run_id: a.run,
                task_id: a.task,
                title: a.title,
                body: body(a.body, a.body_file.as_deref())?,
                acceptance: a.acceptance,
                priority: a.priority,
                assign_to: a.assign_to,
                role: a.role,
                kind: a.kind,
                max_attempts: a.max_attempts,
            };
            let v = ctx.client().await?.task_edit(p).await?;
            ctx.print(&v, || render::task(&v));
            done()
        }
        Cmd::Task(TaskCmd::Assign(a)) => {
            let p = TaskEditParams { run_id: a.run, task_id: a.task, assign_to: Some(a.to), ..Default::default() };
            let v = ctx.client().await?.task_edit(p).await?;
            ctx.print(&v, || render::task(&v));
            done()
        }
        Cmd::Task(TaskCmd::Remove(a)) => {
            let v = ctx.client().await?.task_remove(TaskRef { run_id: a.run, task_id: a.task }).await?;
            ctx.print(&v, || {
                let freed = if v.dependents.is_empty() {
                    String::new()
                } else {
                    format!("; {} no longer depend on it", v.dependents.join(", "))
                };
                println!("removed {} from run {}{freed}", v.task_id, v.run_id)
            });
            done()
        }
        Cmd::Merge(a) => {
            let v = ctx.client().await?.merge(MergeParams { run_id: a.run, task_id: a.task }).await?;
            ctx.print(&v, || render::merges(&v.merged));
            Ok(if v.merged.iter().any(|m| m.state == MergeState::Conflict) {
                Outcome::Conflict
            } else if v.merged.is_empty() {
                Outcome::NoMatch
            } else {
                Outcome::Done
            })
        }
        Cmd::Council(CouncilCmd::List(a)) => {
            let c = ctx.client().await?;
            let p = RunPageParams { run_id: a.run, after: None };
            let v = coord_client::pages::all(p, |p| c.council_list(p)).await?;
            ctx.print(&v, || render::councils(&v.councils));
            found(&v.councils)
        }
        Cmd::Demo(a) => crate::demo::run(ctx, a).await,
        Cmd::Completions(a) => {
            coord_cli::usage::completions(<Cli as clap::CommandFactory>::command(), a.shell);
            done()
        }
        Cmd::Man => coord_cli::usage::man(<Cli as clap::CommandFactory>::command())
            .map(|()| Outcome::Done)
            .map_err(|e| CliError::Internal(format!("cannot write the man page: {e}"))),
        Cmd::Dep(d) => {
            let (a, add) = match d {
                DepCmd::Add(a) => (a, true),
                DepCmd::Remove(a) => (a, false),
            };
            let p = DepParams { run_id: a.run, task_id: a.task, on: a.on };
            let c = ctx.client().await?;
            let v = if add { c.dep_add(p).await } else { c.dep_remove(p).await }?;
            ctx.print(&v, || render::task(&v));
            done()
        }
        Cmd::Ready(a) => {
            let p = TaskListParams { run_id: a.run, statuses: vec![], limit: a.limit, after: None };
            let c = ctx.client().await?;
            let v = coord_client::pages::all(p, |p| c.ready(p)).await?;
            ctx.print(&v, || render::tasks(&v.tasks));
            found(&v.tasks)
        }
        Cmd::Dispatch(a) => {
            let repo = match a.repo {
                Some(r) => Some(absolute(r)?),
                None => std::env::current_dir().ok().and_then(|d| git_root(&d)).map(|r| r.display().to_string()),
            };
            let run = a.run.clone();
            let p = DispatchParams {
                run_id: a.run,
                task_id: a.task,
                all_ready: a.all_ready,
                to: a.to,
                repo,
                base: a.base,
                strict: a.strict,
                no_worktree: a.no_worktree,
            };
            let v = ctx.client().await?.dispatch(p).await?;
            ctx.print(&v, || {
                render::dispatches(&v.dispatches);
                if !v.dispatches.is_empty() {
                    println!("wait for what needs you: orch wait --run {run} --after-event {}", v.event_id);
                }
            });
            found(&v.dispatches)
        }
        Cmd::Reconcile(a) => {
            let v = ctx.client().await?.reconcile(RunRef { run_id: a.run }).await?;
            ctx.print(&v, || {
                if v.tasks.is_empty() {
                    println!("nothing to repair: every task agrees with its thread");
                } else {
                    render::tasks(&v.tasks)
                }
            });
            done()
        }
        Cmd::Wait(a) => wait(ctx, a).await,
        Cmd::Blocked(a) => {
            let c = ctx.client().await?;
            let p = RunPageParams { run_id: a.run, after: None };
            let v = coord_client::pages::all(p, |p| c.blocked(p)).await?;
            ctx.print(&v, || render::blocked(&v.blocked));
            found(&v.blocked)
        }
        Cmd::Answer(a) => {
            let message = MessageInput {
                summary: a.summary,
                body: body(a.body, a.body_file.as_deref())?,
                payload_json: None,
                artifacts: vec![],
            };
            let p = AnswerParams { run_id: a.run, task_id: a.task, from: a.from, message };
            let v = ctx.client().await?.answer(p).await?;
            ctx.print(&v, || {
                println!(
                    "answered {} in {} -> {} (event {})",
                    v.message.message_id, v.thread.thread_id, v.message.to_agent, v.event_id
                )
            });
            done()
        }
        Cmd::Retry(a) => {
            let v = ctx.client().await?.retry(RetryParams { run_id: a.run, task_id: a.task, to: a.to }).await?;
            ctx.print(&v, || render::dispatches(&v.dispatches));
            done()
        }
        Cmd::Reassign(a) => {
            let p = RetryParams { run_id: a.run, task_id: a.task, to: Some(a.to) };
            let v = ctx.client().await?.reassign(p).await?;
            ctx.print(&v, || render::dispatches(&v.dispatches));
            done()
        }
        Cmd::Cancel(a) => {
            let p = CancelTaskParams { run_id: a.run, task_id: a.task, reason: a.reason };
            let v = ctx.client().await?.orch_cancel(p).await?;
            ctx.print(&v, || render::graph(&v));
            done()
        }
        Cmd::Worktree(WorktreeCmd::List(a)) => {
            let v = ctx.client().await?.worktree_list(WorktreeParams { run_id: a.run, force: false }).await?;
            ctx.print(&v, || render::worktrees(&v));
            found(&v.worktrees)
        }
        Cmd::Worktree(WorktreeCmd::Prune(a)) => {
            let v = ctx.client().await?.worktree_prune(WorktreeParams { run_id: a.run, force: a.force }).await?;
            ctx.print(&v, || render::worktrees(&v));
            done()
        }
        Cmd::Council(CouncilCmd::Start(a)) => {
            let p = CouncilStartParams {
                run_id: a.run,
                topic: a.topic,
                body: body(None, a.body_file.as_deref())?,
                reviewers: a.reviewers,
            };
            let v = ctx.client().await?.council_start(p).await?;
            ctx.print(&v, || render::council(&v, false));
            done()
        }
        Cmd::Council(CouncilCmd::Status(a)) => council(ctx, a, false).await,
        Cmd::Council(CouncilCmd::Report(a)) => council(ctx, a, true).await,
    }
}

fn done() -> Res {
    Ok(Outcome::Done)
}

/// Done when the list has something, else nothing matched.
fn found<T>(list: &[T]) -> Res {
    Ok(if list.is_empty() { Outcome::NoMatch } else { Outcome::Done })
}

/// The git root around `dir`: the nearest ancestor holding `.git`.
fn git_root(dir: &Path) -> Option<PathBuf> {
    dir.ancestors().find(|d| d.join(".git").exists()).map(Path::to_path_buf)
}

fn absolute(p: PathBuf) -> Result<String, CliError> {
    let cwd = std::env::current_dir().map_err(|e| CliError::Internal(e.to_string()))?;
    let p = if p.is_absolute() { p } else { cwd.join(p) };
    let p = std::fs::canonicalize(&p).map_err(|e| CliError::Invalid(format!("--repo {}: {e}", p.display())))?;
    Ok(p.display().to_string())
}

/// `council status`, or with `report` the groups, tallies and verdicts too.
async fn council(ctx: &Ctx, a: CouncilArgs, report: bool) -> Res {
    let v = ctx.client().await?.council_show(CouncilRef { run_id: a.run, council_id: a.council }).await?;
    ctx.print(&v, || render::council(&v, report));
    done()
}

async fn wait(ctx: &Ctx, a: WaitArgs) -> Res {
    let c = ctx.client().await?;
    // What the lead acts on: actionable events, and the workers' permission requests,
    // idle notifications and plan approval requests (either one wakes the wait).
    let filter = EventFilter {
        after_event: a.after_event,
        run_id: Some(a.run.clone()),
        event_types: EventType::ACTIONABLE.to_vec(),
        message_types: MessageType::lead_actionable(),
        ..Default::default()
    };
    // Make sure the run exists: a wait on a typo would otherwise block forever.
    c.ready(TaskListParams { run_id: a.run.clone(), statuses: vec![], limit: Some(1), after: None }).await?;
    let report = WaitReport::new("orch", ctx.json);
    let mut sub = c.subscribe(filter).await?.on_notice(report.notices());
    report.waiting(&format!("the next actionable event of run {}", a.run), sub.cursor(), a.timeout_seconds);
    match sub.next_within(a.timeout_seconds.map(Duration::from_secs)).await? {
        Some(ev) => {
            ctx.print(&json!({"woke": true, "next_event_id": ev.event_id, "event": ev}), || render::event(&ev));
            done()
        }
        None => {
            let after = sub.cursor().unwrap_or_default();
            ctx.print(&json!({"woke": false, "next_event_id": after, "event": null}), || {
                println!("nothing actionable within the timeout (resume with --after-event {after})")
            });
            Ok(Outcome::NoMatch)
        }
    }
}
