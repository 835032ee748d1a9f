//! The daemon's life: durability across kill -9, stale sockets, one daemon per database,
//! clean shutdown, socket permissions, long-path fallback, status and stop.

use coord_proto::api::{EventsApiClient, InboxApiClient};
use coord_proto::types::*;
use coord_tests::{Project, thread_id};

#[tokio::test(flavor = "multi_thread")]
async fn acknowledged_writes_survive_kill_9() {
    let p = Project::new();
    let d = p.serve();
    let c = p.client().await;
    let sends = (0..200).map(|i| {
        c.send(SendParams {
            from: "lead".into(),
            to: format!("w{}", i % 7),
            message: MessageInput { summary: format!("task {i}"), ..Default::default() },
            ..Default::default()
        })
    });
    let acked: Vec<MessageResult> =
        futures::future::join_all(sends).await.into_iter().map(|r| r.expect("acknowledged")).collect();
    assert_eq!(acked.len(), 200);
    let claim = c
        .claim(ClaimParams { agent: "w0".into(), thread_id: acked[0].thread.thread_id.clone(), lease_seconds: None })
        .await
        .unwrap();
    drop(c);
    d.kill9();

    let d = p.serve();
    let c = p.client().await;
    let all = c.list(ListParams { limit: Some(1000), ..Default::default() }).await.unwrap();
    assert_eq!(all.threads.len(), 200, "every acknowledged send survived");
    let events = c.events_list(EventsListParams { limit: Some(1000), ..Default::default() }).await.unwrap();
    let ids: Vec<i64> = events.events.iter().map(|e| e.event_id).collect();
    assert_eq!(ids, (1..=201).collect::<Vec<_>>(), "the event stream is complete and gap-free");
    let t = c.show(ShowParams { thread_id: claim.thread.thread_id.clone(), ..Default::default() }).await.unwrap();
    assert_eq!(t.thread.status, ThreadStatus::Claimed);
    assert_eq!(t.thread.lease.unwrap().generation, 1);
    drop(c);
    d.signal("TERM");
}

#[cfg(unix)]
#[test]
fn a_stale_socket_is_replaced() {
    let p = Project::new();
    let sock = p.paths().socket;
    std::fs::create_dir_all(sock.parent().unwrap()).unwrap();
    // A socket file nobody listens on, as a crashed daemon leaves behind.
    drop(std::os::unix::net::UnixListener::bind(&sock).unwrap());
    assert!(sock.exists());
    let d = p.serve();
    p.inbox().args(["send", "--from", "a", "--to", "b", "--summary", "works"]).run().ok();
    let log = d.signal("TERM");
    assert!(log.success());
    assert!(!sock.exists(), "a clean shutdown removes the socket");
}

#[test]
fn a_second_daemon_for_the_same_database_refuses() {
    let p = Project::new();
    let first = p.serve();
    let err = p.try_serve().err().expect("the second daemon must refuse");
    assert!(err.contains("already running"), "{err}");
    assert!(err.contains(&first.pid().to_string()), "names the running pid: {err}");
    assert!(err.contains("exit status: 3"), "{err}");
    // The first one is untouched and still serves.
    p.inbox().args(["list"]).run().ok();
    let via_cli = p.coordd().args(["serve"]).run().code(3);
    assert!(via_cli.stderr.contains("already running"));
}

#[cfg(unix)]
#[test]
fn sigterm_and_sigint_shut_down_cleanly() {
    use std::os::unix::fs::PermissionsExt;
    for sig in ["TERM", "INT"] {
        let p = Project::new();
        let d = p.serve();
        let sock = d.socket.clone();
        let mode = std::fs::metadata(&sock).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600, "socket mode");
        let status = d.signal(sig);
        assert!(status.success(), "{sig}: {status}");
        assert!(!sock.exists(), "{sig}: socket removed");
        let info = p.paths().lock.with_extension("info");
        assert!(!info.exists(), "{sig}: the daemon's details removed");
        // And it starts again on the same database.
        let again = p.serve();
        again.signal("TERM");
    }
}

#[cfg(unix)]
#[test]
fn shutdown_with_open_waits_still_folds_the_wal() {
    use std::io::{BufRead, BufReader, Write};
    let p = Project::new();
    let d = p.serve();
    p.inbox().args(["send", "--from", "a", "--to", "b", "--summary", "x"]).run().ok();
    // An open subscription on a raw connection, as a blocked worker would hold.
    let s = std::os::unix::net::UnixStream::connect(&d.socket).unwrap();
    let mut w = s.try_clone().unwrap();
    w.write_all(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"events.subscribe\",\"params\":{}}\n").unwrap();
    let mut line = String::new();
    BufReader::new(s.try_clone().unwrap()).read_line(&mut line).unwrap();
    assert!(line.contains("\"result\""), "{line}");
    assert!(d.signal("TERM").success());
    let wal = p.path().join(".agents/coord.db-wal");
    let size = std::fs::metadata(&wal).map(|m| m.len()).unwrap_or(0);
    assert_eq!(size, 0, "the writer checkpointed and truncated the WAL at shutdown");
    // The waiting client sees its connection end rather than hang.
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut BufReader::new(s), &mut rest).unwrap();
}

#[test]
fn status_and_stop() {
    let p = Project::new();
    let d = p.serve();
    let s = p.coordd().args(["status", "--json"]).run().ok().json();
    assert_eq!(s["running"], true);
    assert_eq!(s["pid"], d.pid());
    assert_eq!(s["protocol_version"], coord_proto::PROTOCOL_VERSION);
    assert_eq!(s["socket"], p.paths().socket.display().to_string());
    assert_eq!(s["db"], p.paths().db.display().to_string());
    assert!(s["uptime_ms"].is_u64());
    assert!(s["version"].is_string());
    let text = p.coordd().args(["status"]).run().ok().stdout;
    for field in ["pid", "socket", "db", "uptime", "protocol"] {
        assert!(text.contains(field), "{text}");
    }
    let stopped = p.coordd().args(["stop", "--json"]).run().ok().json();
    assert_eq!(stopped["stopped"], true);
    assert!(d.wait().success());
    p.coordd().args(["status"]).run().code(3);
}

#[test]
fn a_long_project_path_falls_back_to_a_short_socket() {
    let p = Project::deep();
    let natural = p.path().join(".agents/coordd.sock");
    assert!(natural.as_os_str().len() > 108, "the test path must be too long for sun_path");
    let send = p.inbox().args(["send", "--from", "a", "--to", "b", "--summary", "deep", "--json"]).run().ok().json();
    assert!(thread_id(&send).starts_with("thr_"));
    let s = p.coordd().args(["status", "--json"]).run().ok().json();
    let sock = s["socket"].as_str().unwrap();
    assert!(sock.len() <= 100, "{sock}");
    assert!(sock.contains("/rt/coordd-"), "in the runtime dir: {sock}");
    assert_eq!(s["socket_fallback"], true);
    let info = std::fs::read_to_string(p.path().join(".agents/coordd.info")).unwrap();
    assert!(info.contains(sock), "the details file beside the lock records where: {info}");
}

/// An idle daemon is woken by nothing: no timer of its own (the socket file is watched
/// with inotify, not checked every 500 ms). Counted, not timed: once its start-up work is
/// done, a whole second passes in which none of its threads is switched out, so none woke
/// (with the 500 ms check, no second ever did).
#[cfg(target_os = "linux")]
#[test]
fn an_idle_daemon_is_never_woken() {
    let p = Project::new();
    let d = p.serve();
    let mut seen = Vec::new();
    for _ in 0..20 {
        let (woke, who) = coord_tests::wake_ups_during(d.pid(), std::time::Duration::from_secs(1));
        if woke == 0 {
            return;
        }
        seen.push(who);
    }
    panic!("the idle daemon woke in every second: {seen:?}");
}
