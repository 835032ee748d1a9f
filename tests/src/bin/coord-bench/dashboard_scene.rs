//! A small, realistic team for the dashboard's screenshots: a run with finished, running,
//! blocked, failed and pending tasks, mail in every delivery state, reservations, a
//! council review and control requests (open and answered).

use coord_client::Client;
use coord_proto::api::{AgentsApiClient, ControlApiClient, InboxApiClient, MailApiClient, OrchApiClient};
use coord_proto::types::*;
use coord_tests::Project;

fn say(s: &str) -> MessageInput {
    MessageInput { summary: s.into(), ..Default::default() }
}

async fn dispatch(c: &Client, task: &str, to: &str) -> String {
    let p =
        DispatchParams { run_id: "R1".into(), task_id: Some(task.into()), to: Some(to.into()), ..Default::default() };
    c.dispatch(p).await.unwrap().dispatches[0].thread_id.clone()
}

async fn claim(c: &Client, agent: &str, thread: &str) {
    c.claim(ClaimParams { agent: agent.into(), thread_id: thread.into(), lease_seconds: None }).await.unwrap();
}

pub async fn build(c: &Client, _p: &Project) {
    c.run_create(RunCreateParams { run_id: Some("R1".into()), goal: "Blog MVP".into(), ..Default::default() })
        .await
        .unwrap();
    let tasks: [(&str, &str, &[&str], &str); 7] = [
        ("T1", "Database schema", &[], "backend"),
        ("T2", "Post CRUD API", &["T1"], "backend"),
        ("T3", "Login with OAuth", &["T1"], "auth-dev"),
        ("T4", "Frontend shell", &[], "frontend"),
        ("T5", "Wire frontend to API", &["T2", "T3", "T4"], "frontend"),
        ("T6", "Comments", &["T2"], "backend"),
        ("T7", "Release notes", &["T5", "T6"], "writer"),
    ];
    for (id, title, deps, who) in tasks {
        let p = TaskAddParams {
            run_id: "R1".into(),
            task_id: id.into(),
            title: title.into(),
            depends_on: deps.iter().map(|d| d.to_string()).collect(),
            assign_to: Some(who.into()),
            kind: Some(TaskKind::Thread),
            ..Default::default()
        };
        c.task_add(p).await.unwrap();
    }
    for (agent, role) in [("backend", "rust"), ("auth-dev", "security"), ("frontend", "web"), ("writer", "docs")] {
        let p = RegisterParams { agent_id: agent.into(), role: role.into(), ..Default::default() };
        c.agent_register(p).await.unwrap();
    }
    let t1 = dispatch(c, "T1", "backend").await;
    claim(c, "backend", &t1).await;
    let done =
        FinishParams { agent: "backend".into(), thread_id: t1, lease_token: None, message: say("schema merged") };
    c.done(done).await.unwrap();

    let t2 = dispatch(c, "T2", "backend").await;
    claim(c, "backend", &t2).await;
    let ask = UpdateParams {
        agent: "backend".into(),
        thread_id: t2,
        status: Some(ThreadStatus::Blocked),
        lease_token: None,
        message: MessageInput {
            summary: "Should posts be soft-deleted or removed?".into(),
            body: Some("Soft delete keeps comments readable; removal is simpler.".into()),
            payload_json: Some(serde_json::json!({"options": ["soft delete", "remove"], "recommended": "soft delete"})),
            artifacts: vec![ArtifactInput {
                path: "docs/posts-schema.md".into(),
                kind: Some("report".into()),
                metadata_json: Some(serde_json::json!({"lines": 84})),
            }],
        },
    };
    c.update(ask).await.unwrap();

    let t3 = dispatch(c, "T3", "auth-dev").await;
    claim(c, "auth-dev", &t3).await;
    let fail = FinishParams {
        agent: "auth-dev".into(),
        thread_id: t3,
        lease_token: None,
        message: say("OAuth provider sandbox rejects the redirect URI"),
    };
    c.fail(fail).await.unwrap();

    let t4 = dispatch(c, "T4", "frontend").await;
    claim(c, "frontend", &t4).await;
    let progress = UpdateParams {
        agent: "frontend".into(),
        thread_id: t4,
        message: say("layout done, routing next"),
        ..Default::default()
    };
    c.update(progress).await.unwrap();

    let mail = [
        ("lead", "frontend", "Use the design tokens from docs/tokens.md", Priority::Normal),
        ("backend", "frontend", "API shape is in docs/api.md", Priority::Urgent),
        ("overseer", "auth-dev", "Try the staging OAuth app instead", Priority::Normal),
        ("lead", "writer", "Draft the release notes outline", Priority::Normal),
    ];
    for (from, to, text, priority) in mail {
        let p = SendParams {
            from: from.into(),
            to: to.into(),
            priority: Some(priority),
            message: say(text),
            ..Default::default()
        };
        c.send(p).await.unwrap();
    }
    c.mail_check(CheckParams { agent: Some("writer".into()), ..Default::default() }).await.unwrap();

    for (agent, scope, task) in
        [("frontend", "web/**", "T4"), ("backend", "src/db/*.rs", "T2"), ("auth-dev", "src/auth/**", "T3")]
    {
        let p = ReserveParams {
            agent: agent.into(),
            scope: scope.into(),
            task_id: Some(task.into()),
            ..Default::default()
        };
        c.reserve(p).await.unwrap();
    }
    c.release(ReleaseParams { agent: "auth-dev".into(), scope: "src/auth/**".into() }).await.unwrap();

    let council = CouncilStartParams {
        run_id: "R1".into(),
        topic: "Review the API design".into(),
        reviewers: vec!["reviewer-1".into(), "reviewer-2".into(), "reviewer-3".into()],
        ..Default::default()
    };
    c.council_start(council).await.unwrap();

    let ask = |from: &str, msg_type: &str, payload: serde_json::Value| ControlSendParams {
        from: from.into(),
        msg_type: msg_type.into(),
        to: Some("leader".into()),
        payload,
        ..Default::default()
    };
    let push = serde_json::json!({"request_id": "perm-1", "tool_name": "Bash", "input": {"command": "git push origin feat/posts"}});
    c.control_send(ask("backend", "permission_request", push)).await.unwrap();
    let rm = serde_json::json!({"request_id": "perm-2", "tool_name": "Bash", "input": {"command": "rm -rf web/dist"}});
    c.control_send(ask("frontend", "permission_request", rm)).await.unwrap();
    let deny = serde_json::json!({"request_id": "perm-2", "approved": false, "reason": "the build needs it"});
    c.control_send(ControlSendParams {
        from: "leader".into(),
        msg_type: "permission_response".into(),
        payload: deny,
        ..Default::default()
    })
    .await
    .unwrap();
    let plan =
        serde_json::json!({"request_id": "plan-1", "plan": "1. add a sessions table 2. JWT middleware 3. tests"});
    c.control_send(ask("auth-dev", "plan_approval_request", plan)).await.unwrap();
}
