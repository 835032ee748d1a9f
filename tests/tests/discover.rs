//! Every method `rpc.discover` names, called through a real daemon the way a client
//! generated from that document alone would (issue 31's acceptance): params made from the
//! method's schema only (a generic generator of minimal valid instances: required fields,
//! `oneOf`/`anyOf` branches, `not`, `const`, `enum`, formats and bounds), checked valid by
//! the `jsonschema` crate, must succeed or fail only with an error the method's own
//! `errors` list names; params the schema refuses must get `-32602` or a listed error.
//! A schema that cannot be called correctly, or an error a method does not list, fails.
//! Subscriptions are subscribed to and unsubscribed from; `system.shutdown` goes last.
#![cfg(unix)]

use coord_tests::{Project, RawConn};
use serde_json::{Map, Value, json};

/// The document, as the daemon serves it.
fn discover(c: &mut RawConn) -> Value {
    let r = c.call(json!({"jsonrpc": "2.0", "id": 1, "method": "rpc.discover"}));
    r["result"].clone()
}

/// A `$ref` into `components.schemas`, followed.
fn resolve<'a>(doc: &'a Value, schema: &'a Value) -> &'a Value {
    match schema.get("$ref").and_then(Value::as_str) {
        Some(r) => {
            let name = r.rsplit('/').next().unwrap();
            resolve(doc, &doc["components"]["schemas"][name])
        }
        None => schema,
    }
}

/// The types a schema allows, `null` last.
fn types(schema: &Value) -> Vec<String> {
    let mut t: Vec<String> = match &schema["type"] {
        Value::String(s) => vec![s.clone()],
        Value::Array(a) => a.iter().filter_map(Value::as_str).map(str::to_string).collect(),
        _ => Vec::new(),
    };
    t.sort_by_key(|t| t == "null");
    t
}

/// A minimal instance of `schema`: what a generic client fills in when it knows nothing
/// but the schema.
fn minimal(doc: &Value, schema: &Value) -> Value {
    let s = resolve(doc, schema);
    if let Some(c) = s.get("const") {
        return c.clone();
    }
    if let Some(e) = s.get("enum").and_then(Value::as_array) {
        return e[0].clone();
    }
    for key in ["oneOf", "anyOf"] {
        if let Some(branches) = s.get(key).and_then(Value::as_array) {
            // An object's alternatives constrain its properties: take the first branch's.
            if types(s).first().is_some_and(|t| t == "object") || s.get("properties").is_some() {
                return object(doc, s, Some(&branches[0]));
            }
            return minimal(doc, &branches[0]);
        }
    }
    if let Some(all) = s.get("allOf").and_then(Value::as_array) {
        return minimal(doc, &all[0]);
    }
    match types(s).first().map(String::as_str) {
        Some("object") => object(doc, s, None),
        Some("string") => string(s),
        Some("integer") | Some("number") => {
            let min = s["minimum"].as_f64().or(s["exclusiveMinimum"].as_f64().map(|m| m + 1.0)).unwrap_or(0.0);
            json!(min.max(0.0).min(s["maximum"].as_f64().unwrap_or(f64::MAX)) as i64)
        }
        Some("boolean") => json!(false),
        Some("array") => {
            let n = s["minItems"].as_u64().unwrap_or(0) as usize;
            Value::Array((0..n).map(|_| minimal(doc, &s["items"])).collect())
        }
        Some("null") => Value::Null,
        _ if s.get("properties").is_some() => object(doc, s, None),
        _ => json!({}),
    }
}

fn string(s: &Value) -> Value {
    let text = match s["format"].as_str() {
        Some("date-time") => "2026-01-01T00:00:00.000Z".to_string(),
        _ => "a".to_string(),
    };
    let min = s["minLength"].as_u64().unwrap_or(0) as usize;
    json!(if text.len() < min { "a".repeat(min) } else { text })
}

/// An object with its required properties (and those a chosen branch requires).
fn object(doc: &Value, s: &Value, branch: Option<&Value>) -> Value {
    let mut required: Vec<String> = Vec::new();
    let mut props: Map<String, Value> = s["properties"].as_object().cloned().unwrap_or_default();
    for from in [Some(s), branch].into_iter().flatten() {
        required.extend(from["required"].as_array().into_iter().flatten().filter_map(Value::as_str).map(String::from));
    }
    if let Some(b) = branch {
        // The branch's own constraints on a property come first.
        for (k, v) in b["properties"].as_object().into_iter().flatten() {
            props.insert(k.clone(), v.clone());
        }
    }
    let mut out = Map::new();
    for name in required {
        let schema = props.get(&name).cloned().unwrap_or(json!({"type": "string"}));
        out.insert(name, minimal(doc, &schema));
    }
    Value::Object(out)
}

/// Instances the schema refuses: a required field left out, a field of the wrong type,
/// a scalar instead of the object.
fn invalid(doc: &Value, schema: &Value, valid: &Value) -> Vec<Value> {
    let s = resolve(doc, schema);
    let mut out = vec![json!("x"), json!(1.5)];
    if let Some(Value::Object(obj)) = Some(valid) {
        for (k, _) in obj.iter() {
            let mut missing = obj.clone();
            missing.remove(k);
            out.push(Value::Object(missing));
        }
        for (k, v) in s["properties"].as_object().into_iter().flatten() {
            let wrong = if types(resolve(doc, v)).iter().any(|t| t == "object") { json!(5) } else { json!({"x": 1}) };
            let mut w = obj.clone();
            w.insert(k.clone(), wrong);
            out.push(Value::Object(w));
        }
    }
    out
}

/// The names of the errors a method lists, and the number of each.
fn listed(doc: &Value, m: &Value) -> Vec<(String, i64)> {
    m["errors"]
        .as_array()
        .unwrap_or_else(|| panic!("{} lists no errors", m["name"]))
        .iter()
        .map(|e| {
            let name = e["$ref"].as_str().unwrap().rsplit('/').next().unwrap().to_string();
            let code = doc["components"]["errors"][&name]["code"].as_i64().unwrap_or_else(|| panic!("no error {name}"));
            (name, code)
        })
        .collect()
}

/// Is the error one the method lists? (Application errors by `data.code`, the others by
/// number.)
fn is_listed(listed: &[(String, i64)], error: &Value) -> bool {
    let code = error["code"].as_i64().unwrap_or(0);
    match error["data"]["code"].as_str() {
        Some(name) if code > 0 => listed.iter().any(|(n, c)| n == name && *c == code),
        _ => listed.iter().any(|(_, c)| *c == code),
    }
}

/// One call on a connection of its own; the reply to it (skipping any notification).
fn call(d: &coord_tests::Daemon, method: &str, params: &Value) -> (RawConn, Value) {
    let mut c = RawConn::connect(&d.socket);
    c.send_line(json!({"jsonrpc": "2.0", "id": 7, "method": method, "params": params}).to_string().as_bytes());
    loop {
        let r = c.recv();
        if r["id"] == 7 {
            return (c, r);
        }
    }
}

fn validator(doc: &Value, schema: &Value) -> jsonschema::Validator {
    let root = json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$ref": schema["$ref"],
        "components": doc["components"],
    });
    jsonschema::validator_for(&root).expect("the schema compiles")
}

#[test]
fn every_method_answers_its_schemas_params_with_success_or_an_error_it_lists() {
    let p = Project::new();
    let d = p.serve();
    let doc = discover(&mut RawConn::connect(&d.socket));
    let mut methods: Vec<&Value> = doc["methods"].as_array().unwrap().iter().collect();
    // Stopping the daemon goes last; unsubscribing is driven with its subscription.
    methods.sort_by_key(|m| m["name"] == "system.shutdown");
    let mut failures = Vec::new();
    let (mut called, mut refused, mut succeeded) = (0, 0, 0);
    for m in methods {
        let name = m["name"].as_str().unwrap();
        if m["paramStructure"] == "by-position" {
            continue; // an unsubscribe method: below, with its subscription
        }
        let errors = listed(&doc, m);
        let schema = m.get("x-params-schema");
        let params = schema.map_or(json!({}), |s| minimal(&doc, s));
        if let Some(s) = schema {
            let v = validator(&doc, s);
            if !v.is_valid(&params) {
                failures.push(format!("{name}: no valid params could be made from its schema: {params}"));
                continue;
            }
            if name != "system.shutdown" {
                for bad in invalid(&doc, s, &params).into_iter().filter(|b| !v.is_valid(b)) {
                    let (_, r) = call(&d, name, &bad);
                    refused += 1;
                    let ok =
                        r["error"]["code"] == -32602 || (r.get("error").is_some() && is_listed(&errors, &r["error"]));
                    if !ok {
                        failures.push(format!("{name}: schema-invalid {bad} answered {r}"));
                    }
                }
            }
        }
        let (mut c, r) = call(&d, name, &params);
        called += 1;
        if let Some(e) = r.get("error") {
            // Params valid by the schema are refused as malformed only for a rule no schema
            // can state: two fields that must differ, a directory that must exist.
            let malformed = ["invalid_input", "invalid_args"].contains(&e["data"]["code"].as_str().unwrap_or_default());
            if malformed && !["peers.link", "session.installHooks"].contains(&name) {
                failures.push(format!("{name} {params}: valid by its schema, refused as malformed: {e}"));
            }
            if !is_listed(&errors, e) {
                failures.push(format!("{name} {params}: an error it does not list: {e}"));
            }
            continue;
        }
        succeeded += 1;
        if let Some(n) = m.get("x-notification") {
            let unsubscribe = doc["methods"]
                .as_array()
                .unwrap()
                .iter()
                .find(|u| u["summary"].as_str().is_some_and(|s| s.contains(&format!("`{name}`"))))
                .unwrap_or_else(|| panic!("{name} has no unsubscribe method"));
            let id = r["result"].clone();
            c.send_line(
                json!({"jsonrpc": "2.0", "id": 8, "method": unsubscribe["name"], "params": [id]})
                    .to_string()
                    .as_bytes(),
            );
            let done = loop {
                let line = c.recv();
                if line["id"] == 8 {
                    break line;
                }
                assert_eq!(line["method"], n["method"], "{name}: a notification of another kind: {line}");
            };
            if done["result"] != true {
                failures.push(format!("{name}: unsubscribing answered {done}"));
            }
        }
    }
    eprintln!("{called} methods called ({succeeded} succeeded), {refused} schema-invalid params sent");
    assert!(called > 80, "only {called} methods were called");
    assert!(failures.is_empty(), "{} failures:\n{}", failures.len(), failures.join("\n"));
}

/// One call on a shared connection; its result, or a panic with the error.
#[track_caller]
fn set_up(c: &mut RawConn, method: &str, params: Value) -> Value {
    let r = c.call(json!({"jsonrpc": "2.0", "id": 2, "method": method, "params": params}));
    assert!(r.get("error").is_none(), "{method} {params}: {r}");
    r["result"].clone()
}

/// The methods whose rules were prose only (issue 31 item 14): a client that fills in only
/// what each schema requires (the required fields and those of the first `oneOf`/`anyOf`
/// branch), with the ids of things that exist, succeeds on every one of them.
#[test]
fn a_client_filling_only_what_the_schema_requires_succeeds_on_the_methods_whose_rules_were_prose() {
    let p = Project::new();
    let d = p.serve();
    let mut c = RawConn::connect(&d.socket);
    let doc = discover(&mut c);
    set_up(&mut c, "orch.runCreate", json!({"run_id": "R", "goal": "g"}));
    for t in ["T-dispatch", "T-live", "T-failed"] {
        set_up(
            &mut c,
            "orch.taskAdd",
            json!({"run_id": "R", "task_id": t, "title": t, "assign_to": "w1", "kind": "thread"}),
        );
    }
    set_up(&mut c, "orch.dispatch", json!({"run_id": "R", "task_id": "T-live"}));
    let failed = set_up(&mut c, "orch.dispatch", json!({"run_id": "R", "task_id": "T-failed"}));
    let thread = failed["dispatches"][0]["thread_id"].clone();
    set_up(&mut c, "inbox.claim", json!({"agent": "w1", "thread_id": thread}));
    set_up(&mut c, "inbox.fail", json!({"agent": "w1", "thread_id": thread, "summary": "broke"}));
    // What the client knows: the ids of what exists. Which fields to send, it learns from
    // the schema alone.
    let known = |task: &str| {
        json!({"run_id": "R", "task_id": task, "from": "lead", "agent": "w1", "to": "w2",
               "dir": p.path().display().to_string()})
    };
    let methods = [
        ("inbox.send", known("T-live")),
        ("mail.check", known("T-live")),
        ("mail.pending", known("T-live")),
        ("control.send", known("T-live")),
        ("orch.taskEdit", known("T-dispatch")),
        ("orch.runEdit", known("T-dispatch")),
        ("orch.dispatch", known("T-dispatch")),
        ("orch.retry", known("T-failed")),
        ("orch.reassign", known("T-live")),
        ("reservations.reserve", known("T-live")),
        ("session.installHooks", known("T-live")),
        ("progress.report", known("T-live")),
    ];
    let mut failures = Vec::new();
    for (name, known) in methods {
        let m = doc["methods"].as_array().unwrap().iter().find(|m| m["name"] == name).expect(name);
        let schema = &m["x-params-schema"];
        let mut params = minimal(&doc, schema);
        for (field, value) in params.as_object_mut().unwrap().iter_mut() {
            if let Some(v) = known.get(field) {
                *value = v.clone();
            }
        }
        assert!(validator(&doc, schema).is_valid(&params), "{name}: {params} is not valid by its own schema");
        let (_, r) = call(&d, name, &params);
        if r.get("error").is_some() {
            failures.push(format!("{name} {params}: {r}"));
        }
    }
    assert!(failures.is_empty(), "{} failures:\n{}", failures.len(), failures.join("\n"));
}
