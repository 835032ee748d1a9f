//! One function per command: build the params, make the call, print the result.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use coord_client::cli::{CliError, EXIT_NONE, body, envelope, to_value};
use coord_client::{Client, ConnectOptions};
use coord_proto::types::*;
use serde_json::json;

use crate::cli::*;
use crate::render;

type Res = Result<ExitCode, CliError>;

fn ok() -> Res {
    Ok(ExitCode::SUCCESS)
}

fn none_or_ok(empty: bool) -> Res {
    Ok(if empty { ExitCode::from(EXIT_NONE) } else { ExitCode::SUCCESS })
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

pub async fn run(cli: Cli) -> Res {
    let mut opts = ConnectOptions::for_cwd(cli.db.as_deref());
    if cli.no_autostart {
        opts.autostart = false;
    }
    let json = cli.json;
    let cmd = cli.command;
    let name = cmd.name();
    let c = Client::connect(opts).await?;
    match cmd {
        Cmd::Run(RunCmd::Create(a)) => {
            let v = c
                .run_create(RunCreateParams {
                    run_id: a.id,
                    goal: a.goal,
                    created_by: a.created_by,
                    auto_retry: a.auto_retry,
                })
                .await?;
            out(json, name, &v, || println!("created run {} [{}]: {}", v.run.run_id, v.run.status, v.run.goal))
        }
        Cmd::Run(RunCmd::List) => {
            let v = c.run_list().await?;
            out(json, name, &v, || render::runs(&v.runs))?;
            none_or_ok(v.runs.is_empty())
        }
        Cmd::Run(RunCmd::Show(a)) | Cmd::Status(a) => {
            let v = c.run_show(RunRef { run_id: a.run }).await?;
            out(json, name, &v, || render::graph(&v))
        }
        Cmd::Run(RunCmd::Cancel(a)) => {
            let v = c.orch_cancel(CancelTaskParams { run_id: a.run, task_id: None, reason: a.reason }).await?;
            out(json, name, &v, || render::graph(&v))
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
            let v = c.task_add(p).await?;
            out(json, name, &v, || render::task(&v))
        }
        Cmd::Task(TaskCmd::List(a)) => {
            let v = c.task_list(TaskListParams { run_id: a.run, statuses: a.status, limit: None }).await?;
            out(json, name, &v, || render::tasks(&v.tasks))?;
            none_or_ok(v.tasks.is_empty())
        }
        Cmd::Task(TaskCmd::Show(a)) => {
            let v = c.task_show(TaskRef { run_id: a.run, task_id: a.task }).await?;
            out(json, name, &v, || render::task(&v))
        }
        Cmd::Dep(d) => {
            let (a, add) = match d {
                DepCmd::Add(a) => (a, true),
                DepCmd::Remove(a) => (a, false),
            };
            let p = DepParams { run_id: a.run, task_id: a.task, on: a.on };
            let v = if add { c.dep_add(p).await } else { c.dep_remove(p).await }?;
            out(json, name, &v, || render::task(&v))
        }
        Cmd::Ready(a) => {
            let v = c.ready(TaskListParams { run_id: a.run, statuses: vec![], limit: a.limit }).await?;
            out(json, name, &v, || render::tasks(&v.tasks))?;
            none_or_ok(v.tasks.is_empty())
        }
        Cmd::Dispatch(a) => {
            let repo = match a.repo {
                Some(r) => Some(absolute(r)?),
                None => std::env::current_dir().ok().and_then(|d| git_root(&d)).map(|r| r.display().to_string()),
            };
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
            let v = c.dispatch(p).await?;
            out(json, name, &v, || render::dispatches(&v.dispatches))?;
            none_or_ok(v.dispatches.is_empty())
        }
        Cmd::Reconcile(a) => {
            let v = c.reconcile(RunRef { run_id: a.run }).await?;
            out(json, name, &v, || {
                if v.tasks.is_empty() {
                    println!("nothing to repair: every task agrees with its thread");
                } else {
                    render::tasks(&v.tasks)
                }
            })
        }
        Cmd::Wait(a) => wait(&c, json, a).await,
        Cmd::Blocked(a) => {
            let v = c.blocked(RunRef { run_id: a.run }).await?;
            out(json, name, &v, || render::blocked(&v.blocked))?;
            none_or_ok(v.blocked.is_empty())
        }
        Cmd::Answer(a) => {
            let message = MessageInput {
                summary: a.summary,
                body: body(a.body, a.body_file.as_deref())?,
                payload_json: None,
                artifacts: vec![],
            };
            let v = c.answer(AnswerParams { run_id: a.run, task_id: a.task, from: a.from, message }).await?;
            out(json, name, &v, || {
                println!(
                    "answered {} in {} -> {} (event {})",
                    v.message.message_id, v.thread.thread_id, v.message.to_agent, v.event_id
                )
            })
        }
        Cmd::Retry(a) => {
            let v = c.retry(RetryParams { run_id: a.run, task_id: a.task, to: a.to }).await?;
            out(json, name, &v, || render::dispatches(&v.dispatches))
        }
        Cmd::Reassign(a) => {
            let v = c.reassign(RetryParams { run_id: a.run, task_id: a.task, to: Some(a.to) }).await?;
            out(json, name, &v, || render::dispatches(&v.dispatches))
        }
        Cmd::Cancel(a) => {
            let v = c.orch_cancel(CancelTaskParams { run_id: a.run, task_id: a.task, reason: a.reason }).await?;
            out(json, name, &v, || render::graph(&v))
        }
        Cmd::Worktree(WorktreeCmd::List(a)) => {
            let v = c.worktree_list(WorktreeParams { run_id: a.run, force: false }).await?;
            out(json, name, &v, || render::worktrees(&v))?;
            none_or_ok(v.worktrees.is_empty())
        }
        Cmd::Worktree(WorktreeCmd::Prune(a)) => {
            let v = c.worktree_prune(WorktreeParams { run_id: a.run, force: a.force }).await?;
            out(json, name, &v, || render::worktrees(&v))
        }
        Cmd::Council(CouncilCmd::Start(a)) => {
            let p = CouncilStartParams {
                run_id: a.run,
                topic: a.topic,
                body: body(None, a.body_file.as_deref())?,
                reviewers: a.reviewers,
            };
            let v = c.council_start(p).await?;
            out(json, name, &v, || render::council(&v, false))
        }
        Cmd::Council(CouncilCmd::Status(a)) | Cmd::Council(CouncilCmd::Report(a)) => {
            let report = name == "council report";
            let v = c.council_show(CouncilRef { run_id: a.run, council_id: a.council }).await?;
            out(json, name, &v, || render::council(&v, report))
        }
    }
}

/// Print `v` as an envelope with --json, else run the text renderer.
fn out<T: serde::Serialize>(json: bool, name: &str, v: &T, text: impl FnOnce()) -> Res {
    if json {
        envelope(name, to_value(v));
    } else {
        text();
    }
    ok()
}

async fn wait(c: &Client, json: bool, a: WaitArgs) -> Res {
    let after = a.after_event.unwrap_or(c.hello().last_event_id);
    let filter = EventFilter {
        after_event: Some(after),
        run_id: Some(a.run.clone()),
        event_types: EventType::ACTIONABLE.to_vec(),
        ..Default::default()
    };
    // Make sure the run exists: a wait on a typo would otherwise block forever.
    c.ready(TaskListParams { run_id: a.run.clone(), statuses: vec![], limit: Some(1) }).await?;
    let mut sub = c.subscribe(filter).await?;
    let ev = sub.next_within(a.timeout_seconds.map(Duration::from_secs)).await?;
    match ev {
        Some(ev) => {
            if json {
                envelope("wait", json!({"woke": true, "next_event_id": ev.event_id, "event": ev}));
            } else {
                render::event(&ev);
            }
            ok()
        }
        None => {
            if json {
                envelope("wait", json!({"woke": false, "next_event_id": after, "event": null}));
            } else {
                println!("nothing actionable within the timeout (resume with --after-event {after})");
            }
            Ok(ExitCode::from(EXIT_NONE))
        }
    }
}
