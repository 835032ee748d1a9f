//! The OpenRPC document says what a client needs and nothing untrue (issue 31 item 14):
//! each check is one defect a client written from `rpc.discover` alone found. Whether the
//! schemas can be called is `tests/tests/discover.rs`, against the daemon.

use coord_proto::openrpc::document;
use serde_json::Value;

fn method(doc: &Value, name: &str) -> Value {
    doc["methods"].as_array().unwrap().iter().find(|m| m["name"] == name).unwrap_or_else(|| panic!("{name}")).clone()
}

/// The params object's schema of a method.
fn params(doc: &Value, name: &str) -> Value {
    let r = method(doc, name)["x-params-schema"]["$ref"].as_str().unwrap().rsplit('/').next().unwrap().to_string();
    doc["components"]["schemas"][r].clone()
}

fn param(doc: &Value, name: &str, field: &str) -> Value {
    let m = method(doc, name);
    m["params"].as_array().unwrap().iter().find(|p| p["name"] == field).unwrap_or_else(|| panic!("{field}")).clone()
}

#[test]
fn fields_the_daemon_requires_are_required() {
    let doc = document();
    assert_eq!(param(&doc, "reservations.reserve", "task_id")["required"], true);
    assert_eq!(param(&doc, "session.installHooks", "agent")["required"], true);
}

#[test]
fn rules_stated_in_prose_are_in_the_schemas() {
    let doc = document();
    let branches = |name: &str, key: &str| params(&doc, name)[key].as_array().map_or(0, Vec::len);
    assert_eq!(branches("inbox.send", "oneOf"), 3, "exactly one of to, to_task, to_peer");
    assert_eq!(branches("mail.check", "anyOf"), 2, "agent or task_id");
    assert_eq!(branches("mail.pending", "anyOf"), 2, "agent or task_id");
    assert_eq!(branches("control.send", "anyOf"), 3, "a recipient, or a response");
    assert_eq!(branches("orch.taskEdit", "anyOf"), 8, "at least one field to change");
    assert_eq!(branches("orch.runEdit", "anyOf"), 4, "at least one setting to change");
    assert_eq!(branches("orch.dispatch", "oneOf"), 2, "task_id or all_ready");
    assert_eq!(params(&doc, "progress.report")["properties"]["data"]["maxLength"], 4096);
    assert_eq!(params(&doc, "agents.register")["properties"]["agent_id"]["minLength"], 3);
}

#[test]
fn no_rustdoc_link_or_server_internal_sentence_leaks_and_no_description_is_cut_off() {
    let text = document().to_string();
    for leak in ["[`", "crate::", "The server receives", "extensions"] {
        assert!(!text.contains(leak), "the document contains {leak:?}");
    }
    let doc = document();
    for m in doc["methods"].as_array().unwrap() {
        let d = m["description"].as_str().unwrap_or_default();
        assert!(!d.contains(":\n") && !d.contains(": Who may call"), "{} is cut off: {d}", m["name"]);
    }
}

#[test]
fn the_texts_say_what_the_daemon_does() {
    let doc = document();
    let described = |name: &str, field: &str| param(&doc, name, field)["description"].as_str().unwrap().to_string();
    assert!(described("view.agents", "registered_only").contains("Default: `false`"));
    assert!(!described("launch.sessionStart", "pid").contains("Daemon"));
    assert!(described("orch.runCreate", "created_by").contains("authenticated"));
    let init = method(&doc, "inbox.init")["description"].as_str().unwrap().to_string();
    assert!(init.contains("credentials") && init.contains("lead"), "{init}");
    for name in ["orch.runCreate", "orch.taskAdd", "orch.dispatch", "orch.reassign", "agents.register", "inbox.init"] {
        let text = method(&doc, name)["description"].as_str().unwrap().to_string();
        assert!(text.contains("with credentials required"), "{name}'s who-may-call ignores credentials: {text}");
    }
    let settings =
        doc["x-events"].as_array().unwrap().iter().find(|e| e["name"] == "settings.changed").unwrap().clone();
    let payload = settings["payload"].as_str().unwrap();
    for key in ["strict_agents", "require_credentials", "lead", "admins"] {
        assert!(payload.contains(key), "settings.changed's payload omits {key}: {payload}");
    }
}

#[test]
fn every_method_lists_its_errors_and_subscriptions_describe_their_last_notification() {
    let doc = document();
    for m in doc["methods"].as_array().unwrap() {
        let errors = m["errors"].as_array().unwrap_or_else(|| panic!("{} lists no errors", m["name"]));
        for e in errors {
            let name = e["$ref"].as_str().unwrap().rsplit('/').next().unwrap();
            assert!(doc["components"]["errors"][name].is_object(), "{} lists {name}, which is not an error", m["name"]);
        }
    }
    let sub = method(&doc, "events.subscribe");
    let last = &sub["x-notification"]["error"];
    assert!(last["description"].as_str().unwrap().contains("-32005"), "{last}");
    assert_eq!(last["errors"][0]["$ref"], "#/components/errors/subscriber_too_slow");
}
