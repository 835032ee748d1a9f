//! The OpenRPC document of the protocol, built from `proto` itself: the methods (their
//! table in [`methods`] is generated from `src/api/*.rs`), the JSON Schemas schemars
//! derives from the wire types and their doc comments, the error codes of [`crate::error`]
//! and the event types of [`EventType`]. The daemon answers `rpc.discover` with it;
//! `docs/openrpc.json` is the same document, kept current by `proto/tests/sourcegen.rs`.

mod errors;
mod methods;

pub use errors::method_errors;

use schemars::{JsonSchema, Schema, SchemaGenerator, generate::SchemaSettings};
use serde_json::{Map, Value, json};

use crate::ErrorCode;
use crate::error::PROTOCOL_CODES;
use crate::types::EventType;

/// Adds a type's schema to a generator's definitions and returns a reference to it.
pub type SchemaFn = fn(&mut SchemaGenerator) -> Schema;

/// One method of the protocol, as declared in `src/api/`.
#[derive(Debug, Clone, Copy)]
pub struct Method {
    /// The wire name, `namespace.name`.
    pub name: &'static str,
    /// Its doc comment; the first sentence is the summary.
    pub doc: &'static str,
    /// The params object, if the method takes one.
    pub params: Option<SchemaFn>,
    /// The result, or for a subscription the item each notification carries.
    pub result: SchemaFn,
    /// For a subscription: its notification and unsubscribe methods.
    pub subscription: Option<Subscription>,
}

/// The two other methods of a subscription.
#[derive(Debug, Clone, Copy)]
pub struct Subscription {
    /// The notification that carries each item.
    pub notification: &'static str,
    /// The method that ends the subscription.
    pub unsubscribe: &'static str,
}

fn schema<T: JsonSchema>(g: &mut SchemaGenerator) -> Schema {
    g.subschema_for::<T>()
}

/// Every method, sorted by name.
pub fn methods() -> Vec<Method> {
    let mut all = methods::METHODS.to_vec();
    all.sort_by_key(|m| m.name);
    all
}

/// Where the definitions live in the document.
const DEFINITIONS: &str = "/components/schemas";

fn generator() -> SchemaGenerator {
    SchemaSettings::draft2020_12()
        .with(|s| {
            s.definitions_path = format!("{DEFINITIONS}/").into();
            s.meta_schema = None;
        })
        .for_deserialize()
        .into_generator()
}

/// The first sentence of a doc comment, for `summary`.
pub fn summary(doc: &str) -> String {
    let flat = doc.split_whitespace().collect::<Vec<_>>().join(" ");
    match flat.find(". ") {
        Some(end) => flat[..=end].to_string(),
        None => flat,
    }
}

/// A doc comment on one line.
fn flat(doc: &str) -> String {
    doc.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The OpenRPC 1.3 document.
pub fn document() -> Value {
    let mut g = generator();
    let methods: Vec<Value> = methods().iter().flat_map(|m| method(&mut g, m)).collect();
    let event_types = g.subschema_for::<EventType>();
    let events = events(&g, &event_types);
    let schemas = g.take_definitions(true);
    let mut doc = json!({
        "openrpc": "1.3.2",
        "info": {
            "title": "coordd",
            "version": crate::PROTOCOL_VERSION.to_string(),
            "description": "The coordd wire protocol: JSON-RPC 2.0, one JSON message per line, over a local \
                socket (a Unix domain socket, or a named pipe on Windows). Every method takes one params \
                object, by name. Generated from the `proto` crate; docs/protocol.md explains transport, \
                framing, subscriptions, errors and concurrency.",
        },
        "methods": methods,
        "components": {
            "schemas": schemas,
            "errors": errors(),
        },
        "x-events": events,
    });
    readable(&mut doc);
    doc
}

/// The document's text without rustdoc's links: ``[`crate::MAX_REPLY_BYTES`]`` becomes the
/// constant's value, ``[`Type::field`]`` the name in backticks.
fn readable(v: &mut Value) {
    match v {
        Value::String(s) if s.contains("[`") => *s = unlink(s),
        Value::Array(items) => items.iter_mut().for_each(readable),
        Value::Object(map) => map.values_mut().for_each(readable),
        _ => {}
    }
}

fn unlink(text: &str) -> String {
    let mib = |bytes: usize| format!("{} MiB", bytes / (1024 * 1024));
    let mut out = String::new();
    let mut rest = text;
    while let Some(start) = rest.find("[`") {
        let Some(len) = rest[start..].find("`]") else { break };
        let path = &rest[start + 2..start + len];
        out.push_str(&rest[..start]);
        out.push_str(&match path {
            "crate::MAX_REPLY_BYTES" => mib(crate::MAX_REPLY_BYTES),
            "crate::MAX_REQUEST_BYTES" => mib(crate::MAX_REQUEST_BYTES),
            "crate::DEFAULT_LEASE_SECONDS" => format!("{} seconds", crate::DEFAULT_LEASE_SECONDS),
            other => format!("`{}`", other.rsplit("::").next().unwrap_or(other)),
        });
        rest = &rest[start + len + 2..];
    }
    out.push_str(rest);
    out
}

/// A method's entry, and for a subscription its unsubscribe method too.
fn method(g: &mut SchemaGenerator, m: &Method) -> Vec<Value> {
    let params = m.params.map(|p| p(g));
    let result = (m.result)(g);
    let mut out = json!({
        "name": m.name,
        "summary": summary(m.doc),
        "description": flat(m.doc),
        "paramStructure": "by-name",
        "params": params.as_ref().map(|p| by_name(g, p)).unwrap_or_default(),
    });
    if let Some(p) = &params {
        out["x-params-schema"] = p.clone().into();
    }
    let listed = method_errors(m.name, params.is_some(), m.subscription.is_some())
        .unwrap_or_else(|| panic!("{} has no row in openrpc/errors.rs", m.name));
    out["errors"] = error_refs(&listed);
    crate::authority::describe(&mut out);
    let Some(sub) = m.subscription else {
        out["result"] = json!({ "name": "result", "schema": result });
        return vec![out];
    };
    out["result"] = json!({
        "name": "subscription",
        "description": "The subscription id; then one notification per item.",
        "schema": { "type": "integer", "minimum": 0 },
    });
    out["x-notification"] = json!({
        "method": sub.notification,
        "params": {
            "subscription": { "type": "integer", "minimum": 0 },
            "result": result,
        },
    });
    if m.name.starts_with("events.") {
        out["x-notification"]["error"] = json!({
            "description": "When the daemon itself ends the subscription, its last notification carries \
                `params.error` (a JSON-RPC error object) instead of `params.result`, and nothing follows \
                for that id: -32005 subscriber_too_slow when the client did not read its events (details: \
                cursor, queued_bytes, budget, budget_of), -32603 internal_error when the daemon could not go \
                on (details: cursor). Every matching event up to details.cursor was sent before it: \
                subscribe again with after_event set to the last event processed.",
            "errors": error_refs(&["subscriber_too_slow", "internal_error"]),
        });
    }
    let unsubscribe = json!({
        "name": sub.unsubscribe,
        "summary": format!("End a `{}` subscription.", m.name),
        "paramStructure": "by-position",
        "params": [{ "name": "subscription", "required": true, "schema": { "type": "integer", "minimum": 0 } }],
        "errors": error_refs(&["invalid_params"]),
        "result": {
            "name": "unsubscribed",
            "description": "`true` if the subscription was open on this connection.",
            "schema": { "type": "boolean" },
        },
    });
    vec![out, unsubscribe]
}

/// The OpenRPC by-name params: one content descriptor per property of the params object.
fn by_name(g: &SchemaGenerator, params: &Schema) -> Vec<Value> {
    let object = resolve(g, params.as_value());
    let required: Vec<&str> = object
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let Some(props) = object.get("properties").and_then(Value::as_object) else { return Vec::new() };
    props
        .iter()
        .map(|(name, schema)| {
            let mut schema = schema.clone();
            let description = schema.as_object_mut().and_then(|o| o.remove("description"));
            let mut d = Map::new();
            d.insert("name".into(), name.clone().into());
            if let Some(description) = description {
                d.insert("description".into(), description);
            }
            d.insert("required".into(), required.contains(&name.as_str()).into());
            d.insert("schema".into(), schema);
            Value::Object(d)
        })
        .collect()
}

/// A schema with its `$ref` (into the generator's definitions) followed.
fn resolve(g: &SchemaGenerator, schema: &Value) -> Value {
    match schema.get("$ref").and_then(Value::as_str).and_then(|r| r.strip_prefix(&format!("#{DEFINITIONS}/"))) {
        Some(name) => g.definitions().get(name).cloned().unwrap_or(Value::Null),
        None => schema.clone(),
    }
}

/// References to entries of `components.errors`, by name.
fn error_refs(names: &[&str]) -> Value {
    names.iter().map(|n| json!({ "$ref": format!("#/components/errors/{n}") })).collect()
}

/// `components.errors`: the JSON-RPC and transport codes, then every application code.
fn errors() -> Value {
    let mut out = Map::new();
    for &(code, name, meaning) in PROTOCOL_CODES {
        out.insert(name.into(), json!({ "code": code, "message": name, "data": flat(meaning) }));
    }
    for &c in ErrorCode::ALL {
        out.insert(
            c.as_str().into(),
            json!({
                "code": c.rpc_code(),
                "message": c.as_str(),
                "data": { "code": c.as_str(), "meaning": c.meaning(), "exit": c.exit().code() },
            }),
        );
    }
    Value::Object(out)
}

/// `x-events`: every event type with its meaning, whether a leader must act on it, and
/// what its `payload_json` holds.
fn events(g: &SchemaGenerator, event_types: &Schema) -> Value {
    let schema = resolve(g, event_types.as_value());
    let described: Map<String, Value> = schema
        .get("oneOf")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|v| Some((v.get("const")?.as_str()?.to_string(), v.get("description")?.clone())))
        .collect();
    EventType::ALL
        .iter()
        .map(|t| {
            json!({
                "name": t.as_str(),
                "description": described.get(t.as_str()).cloned().unwrap_or(Value::Null),
                "actionable": EventType::ACTIONABLE.contains(t),
                "payload": t.payload(),
            })
        })
        .collect()
}
