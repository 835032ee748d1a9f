//! What `docs/protocol.md` promises, checked on the wire against the real daemon: each
//! point an outside client (written from that document alone) found to disagree, and a
//! guard that every event type, error code and method is documented.
#![cfg(unix)]

use coord_proto::ErrorCode;
use coord_proto::types::EventType;
use coord_tests::{Project, RawConn};
use serde_json::{Value, json};

fn doc() -> String {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/protocol.md");
    std::fs::read_to_string(path).expect("docs/protocol.md")
}

fn call(c: &mut RawConn, method: &str, params: Value) -> Value {
    c.call(json!({"jsonrpc":"2.0","id":1,"method":method,"params":params}))
}

#[test]
fn every_event_type_error_code_and_method_is_documented() {
    let doc = doc();
    for t in EventType::ALL {
        assert!(doc.contains(&format!("| `{t}` |")), "event type {t} is missing from the event table");
    }
    for c in ErrorCode::ALL {
        assert!(doc.contains(&format!("`{}`", c.as_str())), "error code {c} is not documented");
        assert!(doc.contains(&c.rpc_code().to_string()), "error number {} is not documented", c.rpc_code());
    }
    let p = Project::new();
    let d = p.serve();
    let mut c = RawConn::connect(&d.socket);
    let hello = call(&mut c, "system.hello", json!({}));
    for m in hello["result"]["methods"].as_array().unwrap() {
        let m = m.as_str().unwrap();
        assert!(doc.contains(&format!("`{m}`")), "method {m} is not documented");
    }
}

#[test]
fn unusable_ids_and_deep_batch_items_are_invalid_requests_not_parse_errors() {
    let p = Project::new();
    let d = p.serve();
    let mut c = RawConn::connect(&d.socket);
    let huge = "9".repeat(400);
    c.send_line(format!(r#"{{"jsonrpc":"2.0","id":{huge},"method":"system.hello"}}"#).as_bytes());
    let r = c.recv();
    assert_eq!((r["error"]["code"].clone(), r["id"].clone()), (json!(-32600), Value::Null), "{r}");
    // A batch item nested deeper than JSON parsers go (serde_json stops at 128).
    let deep = format!("{}{}", "[".repeat(300), "]".repeat(300));
    c.send_line(format!(r#"[{deep},{{"jsonrpc":"2.0","id":7,"method":"system.hello"}}]"#).as_bytes());
    let r = c.recv();
    let items = r.as_array().unwrap_or_else(|| panic!("one answer per item: {r}"));
    assert_eq!(items[0]["error"]["code"], -32600, "{r}");
    assert_eq!(items[1]["id"], 7);
}

/// `{"a":{"a":…{"a":1}}}` with `depth` objects.
fn nested(depth: usize) -> Value {
    (0..depth).fold(json!(1), |v, _| json!({ "a": v }))
}

#[test]
fn a_payload_of_64_levels_is_accepted_and_read_back_and_65_are_refused() {
    let p = Project::new();
    let d = p.serve();
    let mut c = RawConn::connect(&d.socket);
    let sent = call(&mut c, "inbox.send", json!({"from":"a","to":"b","summary":"s","payload_json":nested(64)}));
    let thread = sent["result"]["thread"]["thread_id"].clone();
    assert!(thread.is_string(), "{sent}");
    let shown = call(&mut c, "inbox.show", json!({ "thread_id": thread }));
    assert_eq!(shown["result"]["messages"][0]["payload_json"], nested(64));
    let refused = call(&mut c, "inbox.send", json!({"from":"a","to":"b","summary":"s","payload_json":nested(65)}));
    assert_eq!(refused["error"]["data"]["code"], "invalid_input", "{refused}");
}

#[test]
fn task_events_carry_the_runs_creator() {
    let p = Project::new();
    let d = p.serve();
    let mut c = RawConn::connect(&d.socket);
    let run = call(&mut c, "orch.runCreate", json!({"goal":"g","created_by":"lead-7"}));
    let run_id = run["result"]["run"]["run_id"].clone();
    assert!(run_id.is_string(), "{run}");
    call(&mut c, "orch.taskAdd", json!({"run_id": run_id, "task_id":"T1", "title":"t", "kind":"thread"}));
    let events = call(&mut c, "events.list", json!({ "run_id": run_id }));
    let tasks: Vec<&Value> = events["result"]["events"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["event_type"].as_str().unwrap().starts_with("task."))
        .collect();
    assert!(!tasks.is_empty(), "{events}");
    assert!(tasks.iter().all(|e| e["created_by"] == "lead-7"), "{tasks:?}");
}

#[test]
fn cancel_reasons_are_refused_without_a_prefix_in_the_message() {
    let p = Project::new();
    let d = p.serve();
    let mut c = RawConn::connect(&d.socket);
    let sent = call(&mut c, "inbox.send", json!({"from":"a","to":"b","summary":"s"}));
    let thread = sent["result"]["thread"]["thread_id"].clone();
    for reason in [" ".to_string(), "r".repeat(4001)] {
        let r = call(&mut c, "inbox.cancel", json!({"thread_id": thread, "agent":"a", "reason": reason}));
        let msg = r["error"]["message"].as_str().unwrap();
        assert!(msg.starts_with("reason "), "{msg}");
    }
}

#[test]
fn fetch_puts_urgent_first_and_reading_mail_delivers_it() {
    let p = Project::new();
    let d = p.serve();
    let mut c = RawConn::connect(&d.socket);
    for prio in ["normal", "urgent", "low", "high"] {
        call(&mut c, "inbox.send", json!({"from":"a","to":"w","summary":prio,"priority":prio}));
    }
    let fetched = call(&mut c, "inbox.fetch", json!({"agent":"w","limit":10}));
    let order: Vec<&str> =
        fetched["result"]["threads"].as_array().unwrap().iter().map(|t| t["priority"].as_str().unwrap()).collect();
    assert_eq!(order, ["urgent", "high", "normal", "low"]);
    let mail = call(&mut c, "mail.list", json!({"agent":"w"}));
    let first = &mail["result"]["mail"][0];
    assert_eq!(first["delivered_at"], Value::Null, "{first}");
    let read = call(&mut c, "mail.read", json!({"agent":"w","message_id": first["message_id"]}));
    assert!(read["result"]["mail"]["delivered_at"].is_string(), "{read}");
}

#[test]
fn the_schema_version_is_the_same_everywhere() {
    let p = Project::new();
    let d = p.serve();
    let mut c = RawConn::connect(&d.socket);
    let hello = call(&mut c, "system.hello", json!({}));
    let init = call(&mut c, "inbox.init", json!({}));
    let v = hello["result"]["schema_version"].as_i64().unwrap();
    assert!(v >= 5, "{hello}");
    assert_eq!(init["result"]["schema_version"], v);
}

#[test]
fn invalid_utf8_is_a_parse_error_and_the_connection_goes_on() {
    let p = Project::new();
    let d = p.serve();
    let mut c = RawConn::connect(&d.socket);
    for line in [
        &b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"inbox.send\",\"params\":{\"summary\":\"\xff\"}}"[..],
        b"{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"sys\xc3\x28tem.hello\"}",
        b"[{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"system.hello\",\"x\":\"\xfe\"}]",
    ] {
        c.send_line(line);
        let r = c.recv();
        assert_eq!((r["error"]["code"].clone(), r["id"].clone()), (json!(-32700), Value::Null), "{r}");
    }
    assert!(call(&mut c, "system.hello", json!({}))["result"].is_object());
}

/// The methods §2.1 lists as callable without params, read off the document.
fn documented_without_params(doc: &str) -> Vec<String> {
    let start = doc.find("can be called without params:").expect("§2.1's list");
    let end = start + doc[start..].find("A method with required").expect("the end of the list");
    doc[start..end].split('`').skip(1).step_by(2).map(str::to_string).collect()
}

#[test]
fn the_methods_callable_without_params_are_those_section_2_1_lists() {
    let p = Project::new();
    let d = p.serve();
    let mut c = RawConn::connect(&d.socket);
    let hello = call(&mut c, "system.hello", json!({}));
    let mut callable = Vec::new();
    for m in hello["result"]["methods"].as_array().unwrap().iter().map(|m| m.as_str().unwrap()) {
        // Stopping the daemon is listed by hand and unsubscribing (which takes an id, not
        // an object) is §2.1's exception; every other method is tried, each on a
        // connection of its own (a subscription's events follow its reply).
        if m.contains(".unsubscribe") {
            continue;
        }
        let missing = m != "system.shutdown" && {
            let mut own = RawConn::connect(&d.socket);
            let r = own.call(json!({"jsonrpc": "2.0", "id": 1, "method": m}));
            r["error"]["code"] == -32602
        };
        if !missing {
            callable.push(m.to_string());
        }
    }
    let mut documented = documented_without_params(&doc());
    documented.sort();
    callable.sort();
    assert_eq!(documented, callable, "§2.1 lists exactly the methods callable without params");
}

#[test]
fn events_list_stops_before_its_reply_passes_the_bound_and_says_where_to_go_on() {
    let p = Project::new();
    let d = p.serve();
    let mut c = RawConn::connect(&d.socket);
    let body = "x".repeat(5 * 1024 * 1024);
    for i in 0..5 {
        let sent =
            call(&mut c, "inbox.send", json!({"from": "lead", "to": "w", "summary": format!("m{i}"), "body": body}));
        assert!(sent["result"].is_object(), "{sent}");
    }
    let (mut after, mut seen, mut pages) = (0, Vec::new(), 0);
    let last = loop {
        pages += 1;
        let r = call(&mut c, "events.list", json!({"after_event": after, "limit": 1000}));
        let size = serde_json::to_string(&r).unwrap().len();
        assert!(size <= coord_proto::MAX_REPLY_BYTES, "a reply of {size} bytes");
        let events = r["result"]["events"].as_array().unwrap();
        assert!(!events.is_empty() || r["result"]["truncated"] == false, "a truncated list makes progress");
        seen.extend(events.iter().map(|e| e["event_id"].as_i64().unwrap()));
        if r["result"]["truncated"] != true {
            assert_eq!(r["result"]["next_after"], Value::Null);
            break r["result"]["last_event_id"].as_i64().unwrap();
        }
        let big = events.iter().filter(|e| e["message"]["body"].as_str().is_some_and(|b| b.len() == body.len()));
        assert_eq!(big.count(), 3, "three 5 MiB events fit in 16 MiB, not four");
        after = r["result"]["next_after"].as_i64().unwrap();
        assert_eq!(Some(after), seen.last().copied());
    };
    assert_eq!(seen, (1..=last).collect::<Vec<i64>>(), "every event once, in order");
    assert_eq!(pages, 2, "1000 events asked for, two bounded pages given");
}

fn openrpc_file() -> Value {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/openrpc.json");
    serde_json::from_str(&std::fs::read_to_string(path).expect("docs/openrpc.json")).expect("openrpc.json is JSON")
}

#[test]
fn rpc_discover_answers_the_committed_openrpc_document_naming_every_method() {
    let p = Project::new();
    let d = p.serve();
    let mut c = RawConn::connect(&d.socket);
    let discovered = call(&mut c, "rpc.discover", json!({}));
    assert!(discovered["error"].is_null(), "{}", discovered["error"]);
    if discovered["result"] != openrpc_file() {
        // Not printed: the document is 350 KB.
        let out = std::env::temp_dir().join("coordd-rpc-discover.json");
        std::fs::write(&out, serde_json::to_string_pretty(&discovered["result"]).unwrap()).unwrap();
        panic!("rpc.discover differs from docs/openrpc.json; the daemon's answer is in {}", out.display());
    }
    let mut documented: Vec<&str> =
        discovered["result"]["methods"].as_array().unwrap().iter().map(|m| m["name"].as_str().unwrap()).collect();
    documented.sort();
    let hello = call(&mut c, "system.hello", json!({}));
    let served: Vec<&str> =
        hello["result"]["methods"].as_array().unwrap().iter().map(|m| m.as_str().unwrap()).collect();
    assert_eq!(documented, served, "the OpenRPC methods are not the methods the daemon serves");
}

/// Every request in a code block of protocol.md (`--> {…}` lines, batches item by item,
/// and bare request lines), as `(line number, method, params)`. Lines that are not JSON
/// (placeholders such as `...`) are left out.
fn request_examples(doc: &str) -> Vec<(usize, String, Value)> {
    let mut out = Vec::new();
    let mut fenced = false;
    for (n, line) in doc.lines().enumerate() {
        if line.starts_with("```") {
            fenced = !fenced;
            continue;
        }
        let text = line.trim().strip_prefix("--> ").unwrap_or(line.trim());
        let Ok(v) = serde_json::from_str::<Value>(text) else { continue };
        if !fenced {
            continue;
        }
        let items = match v {
            Value::Array(items) => items,
            v => vec![v],
        };
        for item in items {
            if let (Some(method), None) = (item["method"].as_str(), item.get("result")) {
                let params = match &item["params"] {
                    Value::Null => json!({}),
                    Value::Array(a) if a.len() == 1 => a[0].clone(),
                    p => p.clone(),
                };
                out.push((n + 1, method.to_string(), params));
            }
        }
    }
    out
}

#[test]
fn request_examples_match_their_schemas_and_the_daemon_agrees() {
    let doc = doc();
    let openrpc = openrpc_file();
    let p = Project::new();
    let d = p.serve();
    let mut checked = 0;
    for (line, method, params) in request_examples(&doc) {
        // Stopping the daemon or opening a listener would change what the others see.
        if ["system.shutdown", "dashboard.start"].contains(&method.as_str()) {
            continue;
        }
        let Some(m) = openrpc["methods"].as_array().unwrap().iter().find(|m| m["name"] == method) else {
            continue; // an unknown method, shown as such
        };
        let Some(schema) = m.get("x-params-schema") else { continue };
        let root = json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "$ref": schema["$ref"],
            "components": openrpc["components"],
        });
        let valid = jsonschema::validator_for(&root).expect("the schema compiles").is_valid(&params);
        // The daemon reads the same params first: -32602 is its answer to a wrong shape. A
        // connection of its own each, so that no subscription's notification comes between.
        // A rule the schema states beyond the shape (exactly one recipient, say) the daemon
        // may refuse with its own code instead, one the method lists.
        let answer = call(&mut RawConn::connect(&d.socket), &method, params.clone());
        let refused = answer["error"]["code"] == INVALID_PARAMS;
        let listed = m["errors"].as_array().into_iter().flatten().any(|e| {
            let name = e["$ref"].as_str().unwrap_or_default().rsplit('/').next().unwrap_or_default();
            answer["error"]["data"]["code"] == name
        });
        assert!(
            if valid { !refused } else { refused || listed },
            "protocol.md line {line}: {method} {params}: the schema says {}, the daemon answered {answer}",
            if valid { "valid" } else { "invalid" }
        );
        checked += 1;
    }
    assert!(checked >= 15, "only {checked} request examples were found in protocol.md");
}

const INVALID_PARAMS: i32 = coord_proto::error::INVALID_PARAMS;
