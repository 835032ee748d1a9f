//! JSON-RPC spoken directly on the socket, without the client crate: what a Python script
//! or `nc -U` does. Also malformed and oversized input, which must never hurt the daemon
//! or other clients.
#![cfg(unix)]

use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;

use coord_tests::Project;
use serde_json::{Value, json};

struct Raw {
    w: UnixStream,
    r: BufReader<UnixStream>,
}

impl Raw {
    fn connect(p: &Project) -> Raw {
        let s = UnixStream::connect(p.paths().socket).unwrap();
        Raw { w: s.try_clone().unwrap(), r: BufReader::new(s) }
    }

    fn send_line(&mut self, line: &[u8]) {
        self.w.write_all(line).unwrap();
        self.w.write_all(b"\n").unwrap();
    }

    fn recv(&mut self) -> Value {
        let mut line = String::new();
        assert!(self.r.read_line(&mut line).unwrap() > 0, "connection closed");
        serde_json::from_str(&line).unwrap()
    }

    fn call(&mut self, v: Value) -> Value {
        self.send_line(v.to_string().as_bytes());
        self.recv()
    }
}

#[test]
fn a_full_exchange_in_plain_json_lines() {
    let p = Project::new();
    let _d = p.serve();
    let mut c = Raw::connect(&p);
    let hello = c.call(json!({"jsonrpc":"2.0","id":1,"method":"system.hello"}));
    assert_eq!(hello["id"], 1);
    assert_eq!(hello["result"]["protocol_version"], coord_proto::PROTOCOL_VERSION);
    let methods = hello["result"]["methods"].as_array().unwrap();
    for m in ["inbox.send", "inbox.claim", "events.subscribe", "system.hello"] {
        assert!(methods.iter().any(|x| x == m), "discovery lists {m}");
    }

    // Params by name (an object), or wrapped in a one-element array.
    let sent = c.call(json!({"jsonrpc":"2.0","id":"a","method":"inbox.send",
        "params":{"from":"leader","to":"w1","subject":"S","summary":"do it","run_id":"R1","task_id":"T1"}}));
    assert_eq!(sent["id"], "a");
    let thr = sent["result"]["thread"]["thread_id"].as_str().unwrap().to_string();
    let fetched = c.call(json!({"jsonrpc":"2.0","id":2,"method":"inbox.fetch","params":[{"agent":"w1"}]}));
    assert_eq!(fetched["result"]["threads"][0]["thread_id"], thr.as_str());

    // Subscribe, then a claim on another connection is pushed to us.
    let sub = c.call(json!({"jsonrpc":"2.0","id":3,"method":"events.subscribe","params":{"thread_id":thr}}));
    let sub_id = sub["result"].clone();
    assert!(!sub_id.is_null(), "{sub}");
    let mut other = Raw::connect(&p);
    let claim =
        other.call(json!({"jsonrpc":"2.0","id":1,"method":"inbox.claim","params":{"agent":"w1","thread_id":thr}}));
    assert_eq!(claim["result"]["lease"]["generation"], 1);
    let note = c.recv();
    assert_eq!(note["method"], "events.event");
    assert_eq!(note["params"]["subscription"], sub_id);
    assert_eq!(note["params"]["result"]["event_type"], "thread.claimed");
    assert_eq!(note["params"]["result"]["event_id"], claim["result"]["event_id"]);
    let unsub = c.call(json!({"jsonrpc":"2.0","id":4,"method":"events.unsubscribe","params":[sub_id]}));
    assert_eq!(unsub["result"], true);

    // A domain error carries its stable code.
    let conflict =
        other.call(json!({"jsonrpc":"2.0","id":2,"method":"inbox.claim","params":{"agent":"w2","thread_id":thr}}));
    assert_eq!(conflict["error"]["code"], 1004);
    assert_eq!(conflict["error"]["data"]["code"], "lease_conflict");

    // A batch answers each call in one array; notifications (no id) get no answer.
    c.send_line(br#"{"jsonrpc":"2.0","method":"system.hello"}"#);
    let batch = c.call(json!([
        {"jsonrpc":"2.0","id":10,"method":"system.hello"},
        {"jsonrpc":"2.0","method":"system.hello"},
        {"jsonrpc":"2.0","id":11,"method":"inbox.show","params":{"thread_id":thr}}
    ]));
    let mut ids: Vec<i64> = batch.as_array().unwrap().iter().map(|r| r["id"].as_i64().unwrap()).collect();
    ids.sort();
    assert_eq!(ids, [10, 11]);
}

#[test]
fn malformed_input_gets_json_rpc_errors_and_the_connection_survives() {
    let p = Project::new();
    let _d = p.serve();
    let mut c = Raw::connect(&p);
    let cases: Vec<(&[u8], i64)> = vec![
        (b"{not json", -32700),
        (b"\xff\xfe\x00garbage", -32700),
        (br#"{"jsonrpc":"2.0","id":1}"#, -32600),
        (br#"{"jsonrpc":"2.0","id":-1,"method":"system.hello"}"#, -32600),
        (br#"{"jsonrpc":"2.0","id":true,"method":"system.hello"}"#, -32600),
        (br#"{"jsonrpc":"2.0","id":{"a":1},"method":"system.hello"}"#, -32600),
        (br#"{"jsonrpc":"1.0","id":1,"method":"system.hello"}"#, -32600),
        (b"[]", -32600),
        (b"42", -32600),
        (br#"{"jsonrpc":"2.0","id":1,"method":"no.such"}"#, -32601),
        (br#"{"jsonrpc":"2.0","id":1,"method":"inbox.claim","params":{"thread_id":5}}"#, -32602),
        (br#"{"jsonrpc":"2.0","id":1,"method":"inbox.send","params":"oops"}"#, -32602),
        (br#"{"jsonrpc":"2.0","id":1,"method":"inbox.fetch","params":{"agent":"w","statuses":["nope"]}}"#, -32602),
    ];
    for (line, code) in cases {
        c.send_line(line);
        let resp = c.recv();
        assert_eq!(resp["error"]["code"], code, "{}: {resp}", String::from_utf8_lossy(line));
    }
    let hello = c.call(json!({"jsonrpc":"2.0","id":99,"method":"system.hello"}));
    assert_eq!(hello["id"], 99, "the same connection still works");
}

#[test]
fn notifications_run_without_an_answer_and_params_may_take_every_form() {
    let p = Project::new();
    let _d = p.serve();
    let mut c = Raw::connect(&p);
    // A notification (no id) is executed and nothing is sent back for it: the only line
    // that arrives after it is the event its write produced. (Calls on one connection run
    // concurrently, so the event, not a later call, is what proves it ran.)
    let sub = c.call(json!({"jsonrpc":"2.0","id":1,"method":"events.subscribe","params":{"after_event":0}}));
    assert!(!sub["result"].is_null(), "{sub}");
    c.send_line(
        br#"{"jsonrpc":"2.0","method":"inbox.send","params":{"from":"a","to":"b","summary":"fire and forget"}}"#,
    );
    let event = c.recv();
    assert_eq!(event["method"], "events.event", "no answer to the notification itself: {event}");
    assert_eq!(event["params"]["result"]["event_type"], "thread.created");
    assert_eq!(event["params"]["result"]["summary"], "fire and forget");
    let unsub = c.call(json!({"jsonrpc":"2.0","id":9,"method":"events.unsubscribe","params":[sub["result"]]}));
    assert_eq!(unsub["result"], true);
    // Methods whose fields are all optional take no params at all, or null.
    let hello = c.call(json!({"jsonrpc":"2.0","id":2,"method":"system.hello","params":{}}));
    assert_eq!(hello["id"], 2);
    let listed = c.call(json!({"jsonrpc":"2.0","id":3,"method":"inbox.list","params":null}));
    assert!(listed["result"]["threads"].is_array(), "{listed}");
    let missing = c.call(json!({"jsonrpc":"2.0","id":4,"method":"inbox.claim"}));
    assert_eq!(missing["error"]["code"], -32602);
    assert!(missing["error"]["data"].as_str().unwrap().contains("agent"), "names the missing field: {missing}");
    // Unsubscribe: by name, bare, or positional.
    for (i, form) in ["named", "bare", "array"].iter().enumerate() {
        let sub = c.call(json!({"jsonrpc":"2.0","id":10 + i,"method":"events.subscribe"}));
        let id = sub["result"].clone();
        assert!(!id.is_null(), "{sub}");
        let params = match *form {
            "named" => json!({"subscription": id}),
            "bare" => id.clone(),
            _ => json!([id]),
        };
        let unsub = c.call(json!({"jsonrpc":"2.0","id":20 + i,"method":"events.unsubscribe","params":params}));
        assert_eq!(unsub["result"], true, "{form}: {unsub}");
    }
}

#[test]
fn unsubscribe_with_params_that_name_no_subscription_id_is_invalid_params() {
    let p = Project::new();
    let _d = p.serve();
    let mut c = Raw::connect(&p);
    for method in ["events.unsubscribe", "events.unsubscribeBatched", "progress.unsubscribe"] {
        for params in [json!("x"), Value::Null, json!(1.5), json!({"sub": 1}), json!(-1), json!([1, 2]), json!([])] {
            let r = c.call(json!({"jsonrpc":"2.0","id":1,"method":method,"params":params}));
            assert_eq!(r["error"]["code"], -32602, "{method} {params}: {r}");
        }
        let r = c.call(json!({"jsonrpc":"2.0","id":2,"method":method}));
        assert_eq!(r["error"]["code"], -32602, "{method} without params: {r}");
        // A well-formed id that is not open is simply not unsubscribed.
        let r = c.call(json!({"jsonrpc":"2.0","id":3,"method":method,"params":{"subscription": 12345}}));
        assert_eq!(r["result"], false, "{method}: {r}");
    }
}

#[test]
fn an_oversized_request_is_refused_and_everyone_keeps_being_served() {
    let p = Project::new();
    let _d = p.serve();
    let mut big = Raw::connect(&p);
    let mut bystander = Raw::connect(&p);
    // 17 MiB in one line, over the 16 MiB limit.
    let huge = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"inbox.send","params":{{"from":"a","to":"b","summary":"s","body":"{}"}}}}"#,
        "x".repeat(17 * 1024 * 1024)
    );
    let writer = {
        let mut w = big.w.try_clone().unwrap();
        std::thread::spawn(move || {
            w.write_all(huge.as_bytes()).unwrap();
            w.write_all(b"\n").unwrap();
        })
    };
    let resp = big.recv();
    writer.join().unwrap();
    assert_eq!(resp["error"]["code"], coord_proto::error::REQUEST_TOO_LARGE);
    assert_eq!(resp["error"]["data"]["code"], "request_too_large");
    assert_eq!(resp["error"]["data"]["details"]["limit"], coord_proto::MAX_REQUEST_BYTES);
    assert_eq!(resp["id"], Value::Null);
    let hello = bystander.call(json!({"jsonrpc":"2.0","id":7,"method":"system.hello"}));
    assert_eq!(hello["id"], 7);
    let again = big.call(json!({"jsonrpc":"2.0","id":8,"method":"system.hello"}));
    assert_eq!(again["id"], 8, "the offending connection continues with the next line");
    // Nothing was written.
    let list = bystander.call(json!({"jsonrpc":"2.0","id":9,"method":"inbox.list","params":{}}));
    assert_eq!(list["result"]["threads"].as_array().unwrap().len(), 0);
}

#[test]
fn replies_are_flushed_when_the_client_closes_its_write_side() {
    let p = Project::new();
    let _d = p.serve();
    let s = UnixStream::connect(p.paths().socket).unwrap();
    let mut w = s.try_clone().unwrap();
    w.write_all(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"inbox.send\",\"params\":{\"from\":\"a\",\"to\":\"b\",\"summary\":\"s\"}}\n").unwrap();
    w.shutdown(std::net::Shutdown::Write).unwrap();
    let mut out = String::new();
    std::io::Read::read_to_string(&mut BufReader::new(s), &mut out).unwrap();
    let v: Value = serde_json::from_str(out.trim()).unwrap();
    assert_eq!(v["id"], 1);
    assert!(v["result"]["thread"]["thread_id"].is_string());
}
