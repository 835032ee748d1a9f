//! The Rust client against the real daemon: contention, and the protocol handshake.

use coord_client::{Client, ClientError};
use coord_proto::api::InboxApiClient;
use coord_proto::types::*;
use coord_tests::Project;

#[tokio::test(flavor = "multi_thread")]
async fn claims_under_contention_have_exactly_one_winner_per_thread() {
    let p = Project::new();
    let _d = p.serve();
    let leader = p.client().await;
    let mut threads = Vec::new();
    for i in 0..20 {
        let r = leader
            .send(SendParams {
                from: "lead".into(),
                to: "pool".into(),
                message: MessageInput { summary: format!("job {i}"), ..Default::default() },
                ..Default::default()
            })
            .await
            .unwrap();
        threads.push(r.thread.thread_id);
    }
    let mut clients = Vec::new();
    for _ in 0..8 {
        clients.push(std::sync::Arc::new(p.client().await));
    }
    let mut tasks = Vec::new();
    for (i, c) in clients.iter().enumerate() {
        for w in 0..8 {
            let c = c.clone();
            let threads = threads.clone();
            let agent = format!("w{i}-{w}");
            tasks.push(tokio::spawn(async move {
                let mut won = Vec::new();
                for t in threads {
                    let p = ClaimParams { agent: agent.clone(), thread_id: t.clone(), lease_seconds: None };
                    match c.claim(p).await.map_err(ClientError::from) {
                        Ok(_) => won.push(t),
                        Err(ClientError::Rpc { app: Some(coord_proto::ErrorCode::LeaseConflict), .. }) => {}
                        Err(e) => panic!("unexpected error: {e}"),
                    }
                }
                won
            }));
        }
    }
    let mut winners: Vec<String> = Vec::new();
    for t in tasks {
        winners.extend(t.await.unwrap());
    }
    winners.sort();
    let mut expected = threads.clone();
    expected.sort();
    assert_eq!(winners, expected, "every thread claimed exactly once across 64 claimers");
}

#[tokio::test(flavor = "multi_thread")]
async fn rpc_errors_carry_their_application_code() {
    let p = Project::new();
    let _d = p.serve();
    let c = p.client().await;
    let err =
        ClientError::from(c.show(ShowParams { thread_id: "thr_none".into(), ..Default::default() }).await.unwrap_err());
    match &err {
        ClientError::Rpc { app, code, .. } => {
            assert_eq!(*app, Some(coord_proto::ErrorCode::NotFound));
            assert_eq!(*code, 1003);
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(err.exit().code(), 40);
    assert_eq!(err.code(), "not_found");
}

#[cfg(unix)]
#[tokio::test(flavor = "multi_thread")]
async fn a_daemon_speaking_another_protocol_is_refused() {
    use std::io::{BufRead, BufReader, Write};
    let dir = tempfile::tempdir_in("/tmp").unwrap();
    let sock = dir.path().join("fake.sock");
    let listener = std::os::unix::net::UnixListener::bind(&sock).unwrap();
    // A fake daemon that answers hello with protocol 999.
    std::thread::spawn(move || {
        let (s, _) = listener.accept().unwrap();
        let mut r = BufReader::new(s.try_clone().unwrap());
        let mut w = s;
        let mut line = String::new();
        r.read_line(&mut line).unwrap();
        let req: serde_json::Value = serde_json::from_str(&line).unwrap();
        let hello = serde_json::json!({
            "server": "coordd", "version": "9.9.9", "protocol_version": 999, "pid": 1, "socket": "", "db": "",
            "started_at": "", "uptime_ms": 0, "last_event_id": 0, "schema_version": 1, "methods": []
        });
        let resp = serde_json::json!({"jsonrpc": "2.0", "id": req["id"], "result": hello});
        writeln!(w, "{resp}").unwrap();
        let _ = r.read_line(&mut line);
    });
    let err = Client::connect_socket(&sock).await.err().expect("must refuse");
    match err {
        ClientError::ProtocolMismatch { server: 999, client, .. } => assert_eq!(client, coord_proto::PROTOCOL_VERSION),
        other => panic!("{other:?}"),
    }
}
