//! Opt-in agent credentials, end to end: `agent register` returns a secret (stored only
//! hashed); with `inbox init --require-credentials` a write as an agent needs that agent's
//! secret, which the CLIs and the MCP server take from `COORD_AGENT_SECRET` and the
//! protocol from `agents.authenticate`.

use std::process::Stdio;
use std::time::Duration;

use coord_tests::{Project, RawConn, fails, ok, pg, register};
use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use rmcp::transport::TokioChildProcess;
use serde_json::{Value, json};

const ENV: &str = coord_proto::types::AGENT_SECRET_ENV;

fn send_as(p: &Project, from: &str, secret: Option<&str>) -> coord_tests::Out {
    let mut run = p.inbox().args(["send", "--from", from, "--to", "w-two", "--summary", "hi", "--json"]);
    if let Some(s) = secret {
        run = run.env(ENV, s);
    }
    run.run()
}

#[test]
fn with_credentials_required_a_write_as_an_agent_needs_its_secret() {
    let p = Project::new();
    let _d = p.serve();
    let lead = register(&p, "lead-one");
    let worker = register(&p, "w-two");
    // Off by default: anyone may write as anyone.
    send_as(&p, "lead-one", None).ok();
    ok(&p, &["init", "--require-credentials", "--lead", "lead-one"]);

    let refused = send_as(&p, "lead-one", None).code(20).json();
    assert_eq!(refused["error"]["code"], "unauthenticated");
    let msg = refused["error"]["message"].as_str().unwrap();
    assert!(msg.contains("agents.authenticate") && !msg.contains("--"), "no CLI flag in an RPC error: {msg}");
    let as_other = send_as(&p, "lead-one", Some(&worker)).code(20).json();
    assert_eq!(as_other["error"]["code"], "unauthenticated", "another agent's secret does not do");
    let sent = send_as(&p, "lead-one", Some(&lead)).ok().json();
    let thread = sent["thread"]["thread_id"].as_str().unwrap().to_string();

    // The worker claims with its own secret.
    let claim = |secret: Option<&str>| {
        let mut run = p.inbox().args(["claim", "--agent", "w-two", "--thread", &thread, "--json"]);
        if let Some(s) = secret {
            run = run.env(ENV, s);
        }
        run.run()
    };
    assert_eq!(claim(None).code(20).json()["error"]["code"], "unauthenticated");
    assert_eq!(claim(Some(&worker)).ok().json()["lease"]["generation"], 1);

    // A wrong secret fails the connection itself, clearly.
    let last = if worker.ends_with('0') { '1' } else { '0' };
    let forged = format!("{}{last}", &worker[..worker.len() - 1]);
    let bad = send_as(&p, "w-two", Some(&forged)).code(20).json();
    assert_eq!(bad["error"]["code"], "unauthenticated", "{bad}");

    // Reads stay open; turning the requirement off needs the lead's secret.
    ok(&p, &["list"]);
    fails(&p, &["init", "--no-require-credentials"], 20, "unauthenticated");
    p.inbox().args(["init", "--no-require-credentials", "--json"]).env(ENV, &lead).run().ok();
    send_as(&p, "lead-one", None).ok();
}

#[test]
fn secrets_are_stored_hashed_and_rotation_retires_the_old_one() {
    let p = Project::new();
    let d = p.serve();
    let first = register(&p, "w-one");
    let again = ok(&p, &["agent", "register", "--name", "w-one", "--role", "ui", "--force-update"]);
    assert_eq!(again["secret"], Value::Null, "a force update keeps the secret");
    let rotated =
        ok(&p, &["agent", "register", "--name", "w-one", "--role", "ui", "--force-update", "--rotate-secret"]);
    let second = rotated["secret"].as_str().unwrap().to_string();
    assert_ne!(first, second);

    // On the wire: authenticate a raw connection.
    let mut c = RawConn::connect(&d.socket);
    let auth = |c: &mut RawConn, secret: &str| {
        c.call(json!({"jsonrpc":"2.0","id":1,"method":"agents.authenticate","params":{"agent_id":"w-one","secret":secret}}))
    };
    assert_eq!(auth(&mut c, &first)["error"]["data"]["code"], "unauthenticated", "the old secret stopped working");
    let good = auth(&mut c, &second);
    assert_eq!(good["result"]["authenticated"], json!(["w-one"]), "{good}");

    // Only a hash is in the database.
    p.coordd().args(["stop"]).run().ok();
    d.wait();
    let stored = match p.store_url() {
        Some(url) => {
            let rows = pg::Server::connect(url).query("SELECT agent_id, secret_hash FROM agent_credentials", &[]);
            rows.unwrap().iter().map(|r| format!("{} {}\n", r.get::<_, String>(0), r.get::<_, String>(1))).collect()
        }
        None => String::from_utf8_lossy(&std::fs::read(p.paths().db).unwrap()).into_owned(),
    };
    assert!(stored.contains("w-one"), "the agent's credential row is there");
    for secret in [&first, &second] {
        let key = secret.rsplit('_').next().unwrap();
        assert!(!stored.contains(key), "the secret itself is not stored");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_mcp_server_takes_the_secret_from_the_environment() {
    let p = Project::new();
    let _d = p.serve();
    let secret = register(&p, "w-mcp");
    ok(&p, &["init", "--require-credentials", "--lead", "w-mcp"]);
    let call = |env: Option<String>| {
        let p = &p;
        async move {
            let mut run = p.inbox().args(["--agent", "w-mcp", "mcp"]);
            if let Some(s) = env {
                run = run.env(ENV, &s);
            }
            let cmd = tokio::process::Command::from(run.into_command());
            let (t, _) = TokioChildProcess::builder(cmd).stderr(Stdio::null()).spawn().expect("spawn inbox mcp");
            let s = tokio::time::timeout(Duration::from_secs(120), ().serve(t)).await.unwrap().unwrap();
            let args = json!({"to": "lead", "summary": "from mcp"}).as_object().unwrap().clone();
            let r = s.call_tool(CallToolRequestParams::new("send_message").with_arguments(args)).await.unwrap();
            let _ = s.cancel().await;
            r
        }
    };
    let refused = call(None).await;
    assert_eq!(refused.is_error, Some(true));
    assert_eq!(refused.structured_content.unwrap()["code"], "unauthenticated");
    let sent = call(Some(secret)).await;
    assert_ne!(sent.is_error, Some(true), "{sent:?}");
}

#[test]
fn orch_answer_and_cancel_act_as_the_runs_creator_so_a_worker_cannot_answer_itself() {
    let p = Project::new();
    let _d = p.serve();
    let leader = register(&p, "leader");
    let worker = register(&p, "wkr");
    let (_thread, _) = coord_tests::blocked_task(&p, "wkr", "which database?");
    ok(&p, &["init", "--require-credentials", "--lead", "leader"]);
    let orch = |args: &[&str], secret: &str| p.orch().args(args).json_flag().env(ENV, secret).run();
    let answer = ["answer", "--run", "R1", "--task", "T1", "--summary", "whatever I like"];
    let refused = orch(&answer, &worker).code(20).json();
    assert_eq!(refused["error"]["code"], "unauthenticated", "{refused}");
    let cancel = ["cancel", "--run", "R1", "--task", "T1", "--reason", "done with it"];
    assert_eq!(orch(&cancel, &worker).code(20).json()["error"]["code"], "unauthenticated");
    let answered = orch(&answer, &leader).ok().json();
    assert_eq!(answered["message"]["from_agent"], "leader", "{answered}");
}
