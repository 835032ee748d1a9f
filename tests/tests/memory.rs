//! The daemon's memory stays bounded whatever its clients do, measured as the issue measured
//! it: through the raw socket, with the daemon's resident size read from `/proc`. A
//! subscriber that never reads is cut loose with its cursor; unfinished request lines have a
//! budget across connections and an idle timeout; a client that does not read its replies
//! makes the daemon stop reading its requests (backpressure), and loses nothing.
#![cfg(target_os = "linux")]

use std::io::{ErrorKind, Write};

use coord_proto::MAX_REPLY_BYTES;
use coord_proto::error::{
    BATCH_REPLY_TOO_LARGE, PARSE_ERROR, PARTIAL_LINE_TIMEOUT, REQUEST_BUDGET_EXCEEDED, SUBSCRIBER_TOO_SLOW,
};
use coord_tests::{Project, RawConn, proc_mib, reset_peak_rss};
use serde_json::{Value, json};

const BODY: usize = 5_000_000;

fn send_big(c: &mut RawConn, id: u64) -> i64 {
    let body = "x".repeat(BODY);
    let r = c.call(json!({"jsonrpc":"2.0","id":id,"method":"inbox.send",
        "params":{"from":"lead","to":"w","summary":"big","body":body}}));
    r["result"]["event_id"].as_i64().unwrap_or_else(|| panic!("send failed: {r:.300}"))
}

#[test]
fn a_subscriber_that_never_reads_is_cut_loose_with_its_cursor_and_memory_stays_flat() {
    let p = Project::new();
    let d = p.serve();
    let mut writer = RawConn::connect(&d.socket);
    // Warm up: SQLite's page cache and the allocator reach their working size.
    for i in 0..16 {
        send_big(&mut writer, i);
    }
    let before = proc_mib(d.pid(), "VmRSS");
    let mut stuck = RawConn::connect(&d.socket);
    let sub = stuck.call(json!({"jsonrpc":"2.0","id":1,"method":"events.subscribe","params":{}}));
    let sub_id = sub["result"].clone();
    assert!(!sub_id.is_null(), "{sub}");
    // 200 MB of events the subscriber never reads. Held for it, they would all stay in
    // the daemon (the issue measured +1 GB for 160 sends of 5 MB).
    let mut last = 0;
    for i in 100..140 {
        last = send_big(&mut writer, i);
    }
    let peak = proc_mib(d.pid(), "VmHWM");
    assert!(peak < before + 100, "the daemon grew from {before} MiB to a peak of {peak} MiB");

    // What the subscriber finds when it reads at last: the events queued within its
    // budget, then the end of the subscription with the cursor to resume from.
    let mut delivered = Vec::new();
    let cursor = loop {
        let m = stuck.recv();
        assert_eq!(m["method"], "events.event");
        assert_eq!(m["params"]["subscription"], sub_id);
        if let Some(err) = m["params"].get("error") {
            assert_eq!(err["code"], SUBSCRIBER_TOO_SLOW);
            assert_eq!(err["data"]["code"], "subscriber_too_slow");
            assert!(err["message"].as_str().unwrap().contains("after_event"), "{err}");
            break err["data"]["details"]["cursor"].as_i64().expect("a cursor");
        }
        delivered.push(m["params"]["result"]["event_id"].as_i64().unwrap());
    };
    assert!(!delivered.is_empty() && delivered.len() < 40, "{delivered:?}");
    assert_eq!(delivered.last(), Some(&cursor), "every event up to the cursor was delivered");
    assert!(cursor < last);
    // The connection itself is fine.
    let hello = stuck.call(json!({"jsonrpc":"2.0","id":2,"method":"system.hello"}));
    assert_eq!(hello["id"], 2);

    // Subscribing again after the cursor delivers the rest: nothing lost, nothing twice.
    let resumed = stuck.call(json!({"jsonrpc":"2.0","id":3,"method":"events.subscribe",
        "params":{"after_event": cursor}}));
    assert!(resumed["result"].is_number(), "{resumed}");
    let mut next = cursor;
    while next < last {
        let m = stuck.recv();
        let id = m["params"]["result"]["event_id"].as_i64().unwrap_or_else(|| panic!("{m:.300}"));
        assert_eq!(id, next + 1, "no gap, no duplicate");
        assert_eq!(m["params"]["result"]["message"]["body"].as_str().map(str::len), Some(BODY));
        next = id;
    }
}

#[test]
fn unfinished_lines_share_one_budget_across_connections() {
    let p = Project::new();
    let d = p.serve();
    let before = proc_mib(d.pid(), "VmRSS");
    // 30 connections each send 10 MiB of a line and stop there: 300 MiB that the daemon
    // would hold without a budget (the issue measured +676 MB for 40 lines of 16 MB).
    let part = vec![b'x'; 10 * 1024 * 1024];
    let mut conns: Vec<RawConn> = (0..30).map(|_| RawConn::connect(&d.socket)).collect();
    for c in &mut conns {
        c.w.write_all(&part).unwrap();
    }
    let peak = proc_mib(d.pid(), "VmHWM");
    assert!(peak < before + 150, "the daemon grew from {before} MiB to a peak of {peak} MiB");
    // Each line ends now. A line the daemon kept is answered as the garbage it is; a line
    // over the budget was refused the moment it went over, and its end is skipped.
    let (mut kept, mut refused) = (0, 0);
    for c in &mut conns {
        c.w.write_all(b"\n").unwrap();
        c.send_line(br#"{"jsonrpc":"2.0","id":"ping","method":"system.hello"}"#);
        // Two answers, in either order: the ping's, and the error for the long line.
        let answers = [c.recv(), c.recv()];
        let error = answers.iter().find(|a| a["id"] != "ping").expect("an error for the line");
        assert!(answers.iter().any(|a| a["id"] == "ping"), "{answers:?}");
        match error["error"]["code"].as_i64().map(|c| c as i32) {
            Some(PARSE_ERROR) => kept += 1,
            Some(REQUEST_BUDGET_EXCEEDED) => {
                assert_eq!(error["error"]["data"]["code"], "request_budget_exceeded");
                refused += 1
            }
            _ => panic!("unexpected answer: {error}"),
        }
    }
    assert!((5..=7).contains(&kept), "about 64 MiB of lines kept, not {kept}");
    assert_eq!(kept + refused, 30);
}

#[test]
fn an_unfinished_line_that_goes_quiet_is_dropped_and_the_connection_goes_on() {
    let p = Project::new();
    let d = p.try_serve_args(&["--partial-line-timeout", "200ms"]).unwrap();
    let mut c = RawConn::connect(&d.socket);
    c.w.write_all(br#"{"jsonrpc":"2.0","id":1,"method":"system.hello""#).unwrap();
    let timed_out = c.recv();
    assert_eq!(timed_out["error"]["code"], PARTIAL_LINE_TIMEOUT, "{timed_out}");
    assert_eq!(timed_out["error"]["data"]["code"], "partial_line_timeout");
    assert_eq!(timed_out["id"], Value::Null);
    // The rest of that line is skipped; the next line is served.
    c.send_line(b"}");
    let hello = c.call(json!({"jsonrpc":"2.0","id":2,"method":"system.hello"}));
    assert_eq!(hello["id"], 2, "{hello}");
}

#[test]
fn a_client_that_does_not_read_its_replies_is_read_no_further_and_loses_nothing() {
    let p = Project::new();
    let d = p.serve();
    let mut c = RawConn::connect(&d.socket);
    c.w.set_nonblocking(true).unwrap();
    // Write requests without reading a reply until the daemon stops reading them.
    let mut sent = 0u64;
    let mut pending: Vec<u8> = Vec::new();
    loop {
        if pending.is_empty() {
            pending = format!("{{\"jsonrpc\":\"2.0\",\"id\":{sent},\"method\":\"system.hello\"}}\n").into_bytes();
            sent += 1;
        }
        match c.w.write(&pending) {
            Ok(n) => drop(pending.drain(..n)),
            Err(e) if e.kind() == ErrorKind::WouldBlock => break,
            Err(e) => panic!("{e}"),
        }
    }
    c.w.set_nonblocking(false).unwrap();
    let rest = std::thread::spawn({
        let mut w = c.w.try_clone().unwrap();
        move || w.write_all(&pending).unwrap()
    });
    let mut ids: Vec<u64> = (0..sent).map(|_| c.recv()["id"].as_u64().unwrap()).collect();
    rest.join().unwrap();
    ids.sort_unstable();
    assert_eq!(ids, (0..sent).collect::<Vec<_>>(), "every request got its reply");
}

#[test]
fn many_connections_that_do_not_read_are_closed_when_the_daemon_budget_runs_out() {
    let p = Project::new();
    let mut d = p.try_serve_args(&["--output-budget-mib", "20"]).expect("the daemon starts");
    let mut writer = RawConn::connect(&d.socket);
    // Eight subscribers that never read: each may hold its subscription's 4 MiB and one
    // event more (about 5 MiB), 40 MiB together, past the daemon's 20.
    let mut stuck: Vec<RawConn> = (0..8)
        .map(|i| {
            let mut c = RawConn::connect(&d.socket);
            let sub = c.call(json!({"jsonrpc":"2.0","id":i,"method":"events.subscribe","params":{}}));
            assert!(sub["result"].is_number(), "{sub}");
            c
        })
        .collect();
    let body = "x".repeat(1_000_000);
    for i in 0..40 {
        let r = writer.call(json!({"jsonrpc":"2.0","id":1000 + i,"method":"inbox.send",
            "params":{"from":"lead","to":"w","summary":"big","body":body}}));
        assert!(r["result"]["event_id"].is_i64(), "the writer keeps being served: {r:.300}");
    }
    d.wait_for_log("closing a connection that is not reading");
    // The closed connections are gone from the daemon (the writer and at most a few
    // subscribers remain; the status call is one more).
    let connections = || p.coordd().args(["status", "--json"]).run().ok().json()["connections"].as_u64().unwrap();
    let t0 = std::time::Instant::now();
    while connections() > 1 + 8 {
        assert!(t0.elapsed() < std::time::Duration::from_secs(60), "no stuck connection was closed");
    }
    // A closed subscriber reads what reached its socket before, then the end.
    drop(stuck.drain(..));
    // Everyone else is served as before.
    let hello = RawConn::connect(&d.socket).call(json!({"jsonrpc":"2.0","id":1,"method":"system.hello"}));
    assert_eq!(hello["result"]["server"], "coordd");
}

/// The daemon-wide output budget (`coordd serve --output-budget-mib`, default), in MiB:
/// what the daemon may hold for its clients, whatever they pipeline.
const OUTPUT_BUDGET_MIB: u64 = 256;

/// A daemon holding 40 messages of 1 MiB: `events.list {"limit":1000}` answers with a page
/// of about 15 MiB (protocol §1.7). Its peak resident size is reset once they are sent;
/// the resident size then comes with it (MiB).
fn pages_of_1_mib_messages(p: &Project) -> (coord_tests::Daemon, u64) {
    let d = p.serve();
    let mut w = RawConn::connect(&d.socket);
    let body = "x".repeat(1024 * 1024);
    for i in 0..40 {
        let r = w.call(json!({"jsonrpc":"2.0","id":i,"method":"inbox.send",
            "params":{"from":"lead","to":"w","summary":"big","body":body}}));
        assert!(r["result"]["event_id"].is_i64(), "{r:.300}");
    }
    let before = proc_mib(d.pid(), "VmRSS");
    reset_peak_rss(d.pid());
    (d, before)
}

/// The daemon's peak resident size (`VmHWM`) stayed within its output budget of `before`.
#[track_caller]
fn peak_within_output_budget(pid: u32, before: u64) {
    let peak = proc_mib(pid, "VmHWM");
    eprintln!("daemon RSS {before} MiB, peak {peak} MiB");
    assert!(
        peak < before + OUTPUT_BUDGET_MIB,
        "the daemon grew from {before} MiB to a peak of {peak} MiB, past its {OUTPUT_BUDGET_MIB} MiB output budget"
    );
}

/// One reply line, unparsed (a page is 15 MiB), and the id it answers.
fn raw_reply(c: &mut RawConn) -> (Vec<u8>, u64) {
    use std::io::BufRead;
    let mut line = Vec::new();
    assert!(c.r.read_until(b'\n', &mut line).unwrap() > 0, "connection closed");
    let head = String::from_utf8_lossy(&line[..line.len().min(64)]).to_string();
    let id = head.split("\"id\":").nth(1).and_then(|r| r.split(|c: char| !c.is_ascii_digit()).next());
    (line, id.and_then(|n| n.parse().ok()).unwrap_or_else(|| panic!("no id in {head}")))
}

#[test]
fn three_connections_pipelining_64_pages_each_without_reading_stay_within_the_output_budget() {
    let p = Project::new();
    let (d, before) = pages_of_1_mib_messages(&p);
    // Three connections each write 64 requests for a 15 MiB page and read nothing: 2.8 GiB
    // of replies, which the daemon built whole before (the issue measured 126 -> 2,983 MiB).
    let mut stuck: Vec<RawConn> = (0..3).map(|_| RawConn::connect(&d.socket)).collect();
    for c in &mut stuck {
        for i in 0..64 {
            c.send_line(
                format!(r#"{{"jsonrpc":"2.0","id":{i},"method":"events.list","params":{{"limit":1000}}}}"#).as_bytes(),
            );
        }
    }
    // Another client is served meanwhile, large replies included.
    let mut other = RawConn::connect(&d.socket);
    let served = other.call(json!({"jsonrpc":"2.0","id":1,"method":"events.list","params":{"limit":1}}));
    // Each stuck client reads at last.
    let replies: Vec<Vec<(u64, usize)>> = stuck
        .iter_mut()
        .map(|c| {
            (0..64)
                .map(|_| {
                    let (line, id) = raw_reply(c);
                    (id, line.len())
                })
                .collect()
        })
        .collect();
    peak_within_output_budget(d.pid(), before);
    // Nothing was refused or lost: every page came, whole, and the other client was served.
    for mut got in replies {
        got.sort_unstable();
        assert_eq!(got.iter().map(|(id, _)| *id).collect::<Vec<_>>(), (0..64).collect::<Vec<_>>());
        assert!(got.iter().all(|(_, len)| *len > 10 << 20), "whole pages: {got:?}");
    }
    assert_eq!(served["result"]["events"].as_array().map(Vec::len), Some(1), "{served:.300}");
}

#[test]
fn a_batch_of_16_pages_stops_running_its_calls_once_its_reply_holds_a_replys_worth() {
    let p = Project::new();
    let (d, before) = pages_of_1_mib_messages(&p);
    // 16 pages of 15 MiB in one batch: one 251,844,632-byte reply line before.
    let calls: Vec<Value> =
        (0..16).map(|i| json!({"jsonrpc":"2.0","id":i,"method":"events.list","params":{"limit":1000}})).collect();
    let mut c = RawConn::connect(&d.socket);
    c.send_line(Value::Array(calls).to_string().as_bytes());
    let mut line = String::new();
    std::io::BufRead::read_line(&mut c.r, &mut line).unwrap();
    assert!(line.len() < 2 * MAX_REPLY_BYTES, "the batch reply is bounded, not {} bytes", line.len());
    let replies: Vec<Value> = serde_json::from_str(&line).unwrap();
    assert_eq!(replies.len(), 16, "every call is answered");
    // The calls ran in order until the reply held a reply's worth; the rest were not run.
    let ran = replies.iter().take_while(|r| r["result"]["events"].is_array()).count();
    assert!(ran >= 1, "the first call ran");
    for (i, r) in replies.iter().enumerate().skip(ran) {
        assert_eq!(r["id"], i, "{r}");
        assert_eq!(r["error"]["code"], BATCH_REPLY_TOO_LARGE, "{r}");
        assert_eq!(r["error"]["data"]["code"], "batch_reply_too_large");
    }
    assert!(ran < 16);
    peak_within_output_budget(d.pid(), before);
}
