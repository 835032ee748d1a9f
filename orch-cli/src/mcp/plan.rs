//! The planning and reading tools of `orch mcp`: create_run, add_task, edit_task,
//! dispatch, status and task. Descriptions are written for the model reading the tool
//! list: when to use the tool and what comes back, in as few words as that takes (the
//! whole set is measured in tokens by coord-bench).

use coord_proto::api::{ControlApiClient, OrchApiClient, ViewApiClient};
use coord_proto::types::*;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::CallToolResult;
use rmcp::{schemars, tool, tool_router};
use serde::Deserialize;
use serde_json::{Value, json};

use super::{OrchMcp, ToolError};

/// Parse an enum given as text, naming the argument on error.
pub(super) fn parse<T: std::str::FromStr<Err = String>>(arg: &str, v: Option<&str>) -> Result<Option<T>, ToolError> {
    v.map(|s| s.parse::<T>().map_err(|e| ToolError::invalid(format!("{arg}: {e}")))).transpose()
}

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateRunArgs {
    /// What the run must achieve.
    goal: String,
    /// Its id (default: generated).
    #[serde(default)]
    run_id: Option<String>,
    /// Merge each done code task at once (default false: you call merge).
    #[serde(default)]
    auto_merge: bool,
    /// A command every merge must pass first, e.g. cargo test (run by orch merge-queue).
    #[serde(default)]
    verify: Option<String>,
}

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AddTaskArgs {
    task_id: String,
    title: String,
    /// What to do, for the worker.
    #[serde(default)]
    body: Option<String>,
    /// How the result is judged done.
    #[serde(default)]
    acceptance: Option<String>,
    /// code (default: a git worktree) or thread (no worktree).
    #[serde(default)]
    kind: Option<String>,
    #[serde(default)]
    role: Option<String>,
    /// Worker agent.
    #[serde(default)]
    assign_to: Option<String>,
    /// Task ids that must be done first.
    #[serde(default)]
    depends_on: Vec<String>,
    /// low, normal, high or urgent.
    #[serde(default)]
    priority: Option<String>,
}

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EditTaskArgs {
    task_id: String,
    #[serde(default)]
    title: Option<String>,
    #[serde(default)]
    body: Option<String>,
    #[serde(default)]
    acceptance: Option<String>,
    #[serde(default)]
    assign_to: Option<String>,
    #[serde(default)]
    role: Option<String>,
    #[serde(default)]
    priority: Option<String>,
    /// Dependencies to add.
    #[serde(default)]
    add_depends_on: Vec<String>,
    /// Dependencies to remove.
    #[serde(default)]
    remove_depends_on: Vec<String>,
}

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TaskArgs {
    task_id: String,
}

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DispatchArgs {
    /// One ready task (default: every ready task).
    #[serde(default)]
    task_id: Option<String>,
}

fn text(m: &Option<Message>) -> Value {
    m.as_ref().map_or(Value::Null, |m| json!({"summary": m.summary, "body": m.body, "from": m.from_agent}))
}

fn task_line(g: &GraphTask) -> Value {
    let t = &g.task;
    let mut v = json!({
        "task_id": t.task_id, "title": t.title, "status": t.status, "kind": t.kind, "attempt": t.attempt,
    });
    let fields = [
        ("worker", g.worker.clone().map(Value::from)),
        ("depends_on", (!t.depends_on.is_empty()).then(|| json!(t.depends_on))),
        ("merge_state", t.merge_state.map(|m| json!(m))),
        ("question", g.question.is_some().then(|| text(&g.question))),
        ("failure", g.failure.is_some().then(|| text(&g.failure))),
    ];
    for (k, x) in fields {
        if let Some(x) = x {
            v[k] = x;
        }
    }
    v
}

pub(super) fn session_line(s: &LaunchSession) -> Value {
    json!({
        "task_id": s.task_id, "attempt": s.attempt, "agent": s.agent, "client": s.client, "state": s.state,
        "exit_code": s.exit_code, "reason": s.reason, "log_tail": s.log_tail,
    })
}

#[tool_router(router = plan_router, vis = "pub(super)")]
impl OrchMcp {
    #[tool(description = "Create the run you lead and bind this session to it. Returns the run.")]
    async fn create_run(&self, Parameters(a): Parameters<CreateRunArgs>) -> CallToolResult {
        let p = RunCreateParams {
            run_id: a.run_id,
            goal: a.goal,
            created_by: self.lead.clone(),
            auto_retry: None,
            auto_merge: a.auto_merge,
            verify: a.verify,
            require_approval: false,
            merge_retries: None,
        };
        self.run(|c| async move {
            let v = c.run_create(p).await?;
            self.bind_run(&v.run.run_id);
            Ok(json!({"run": v.run}))
        })
        .await
    }

    #[tool(description = "Add a task to the run: a small unit with a clear body, acceptance and its dependencies.")]
    async fn add_task(&self, Parameters(a): Parameters<AddTaskArgs>) -> CallToolResult {
        let p = (|| -> Result<TaskAddParams, ToolError> {
            Ok(TaskAddParams {
                run_id: self.run_id()?,
                task_id: a.task_id,
                title: a.title,
                body: a.body,
                acceptance: a.acceptance,
                depends_on: a.depends_on,
                assign_to: a.assign_to,
                role: a.role,
                priority: parse("priority", a.priority.as_deref())?,
                kind: parse("kind", a.kind.as_deref())?,
                max_attempts: None,
                verify: None,
            })
        })();
        self.run(|c| async move { Ok(json!({"task": c.task_add(p?).await?.task})) }).await
    }

    #[tool(description = "Change a task not yet dispatched: its text, worker, role, priority or dependencies.")]
    async fn edit_task(&self, Parameters(a): Parameters<EditTaskArgs>) -> CallToolResult {
        let run_id = self.run_id();
        self.run(|c| async move {
            let run_id = run_id?;
            let dep = |on: String| DepParams { run_id: run_id.clone(), task_id: a.task_id.clone(), on };
            for on in a.add_depends_on {
                c.dep_add(dep(on)).await?;
            }
            for on in a.remove_depends_on {
                c.dep_remove(dep(on)).await?;
            }
            let fields = [&a.title, &a.body, &a.acceptance, &a.assign_to, &a.role, &a.priority];
            if fields.iter().any(|f| f.is_some()) {
                let p = TaskEditParams {
                    run_id: run_id.clone(),
                    task_id: a.task_id.clone(),
                    title: a.title,
                    body: a.body,
                    acceptance: a.acceptance,
                    priority: parse("priority", a.priority.as_deref())?,
                    assign_to: a.assign_to,
                    role: a.role,
                    kind: None,
                    max_attempts: None,
                    verify: None,
                };
                c.task_edit(p).await?;
            }
            let t = c.task_show(TaskShowParams { run_id, task_id: a.task_id, after_attempt: None }).await?;
            Ok(json!({"task": t.task}))
        })
        .await
    }

    #[tool(description = "Hand ready tasks to workers (one task, or all ready). Launched sessions start on them.")]
    async fn dispatch(&self, Parameters(a): Parameters<DispatchArgs>) -> CallToolResult {
        let run_id = self.run_id();
        self.run(|c| async move {
            let p = DispatchParams {
                run_id: run_id?,
                all_ready: a.task_id.is_none(),
                task_id: a.task_id,
                // Code tasks get their worktrees from the repository the lead runs in.
                repo: crate::commands::repo_here(),
                ..Default::default()
            };
            let r = c.dispatch(p).await?;
            let d: Vec<Value> = r
                .dispatches
                .iter()
                .map(|d| json!({"task_id": d.task_id, "attempt": d.attempt, "worker": d.assigned_to}))
                .collect();
            Ok(json!({"dispatched": d, "event_id": r.event_id}))
        })
        .await
    }

    #[tool(
        description = "The run at a glance: each task's status, worker, question or failure; sessions; open \
                       requests.",
        annotations(read_only_hint = true)
    )]
    async fn status(&self) -> CallToolResult {
        let run_id = self.run_id();
        self.run(|c| async move {
            let run_id = run_id?;
            let g = coord_client::pages::all(RunViewParams { run_id: run_id.clone(), after: None }, |p| c.view_run(p))
                .await?;
            let q = RequestsParams { run_id: Some(run_id), ..Default::default() };
            let open = coord_client::pages::all(q, |p| c.control_requests(p)).await?;
            Ok(json!({
                "run": {"run_id": g.run.run_id, "goal": g.run.goal, "status": g.run.status},
                "tasks": g.tasks.iter().map(task_line).collect::<Vec<_>>(),
                "sessions": g.sessions.iter().filter(|s| s.ended_at.is_none()).map(session_line).collect::<Vec<_>>(),
                "open_requests": open.requests.len(),
                "event_id": g.last_event_id,
            }))
        })
        .await
    }

    #[tool(
        description = "One task in full: body, attempts, its sessions with their last log lines.",
        annotations(read_only_hint = true)
    )]
    async fn task(&self, Parameters(a): Parameters<TaskArgs>) -> CallToolResult {
        let run_id = self.run_id();
        self.run(|c| async move {
            let run_id = run_id?;
            let t = c.task_show(TaskShowParams { run_id: run_id.clone(), task_id: a.task_id, after_attempt: None }).await?;
            let g = coord_client::pages::all(RunViewParams { run_id, after: None }, |p| c.view_run(p)).await?;
            let sessions: Vec<Value> =
                g.sessions.iter().filter(|s| s.task_id == t.task.task_id).map(session_line).collect();
            let attempts: Vec<Value> = t
                .attempts
                .iter()
                .map(|a| json!({"attempt": a.attempt, "worker": a.worker, "status": a.status, "branch": a.branch, "thread_id": a.thread_id}))
                .collect();
            Ok(json!({"task": t.task, "attempts": attempts, "sessions": sessions}))
        })
        .await
    }
}
