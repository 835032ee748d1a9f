//! Property tests of request decoding: whatever a line holds, the connection answers with
//! well-formed JSON-RPC (or nothing, for a notification), echoes every usable id, and never
//! panics.

use proptest::prelude::*;
use serde_json::{Value, json};

use super::fuzzing::conn;

/// A JSON value of any shape, a few levels deep.
fn any_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        any::<f64>().prop_filter("finite", |f| f.is_finite()).prop_map(Value::from),
        "[a-z.]{0,12}".prop_map(Value::from),
    ];
    leaf.prop_recursive(4, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::from),
            prop::collection::btree_map("[a-z]{1,7}", inner, 0..4).prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

/// A request as clients get it right or wrong: each member present or not, of the right
/// type or not. Ids are raw text, so they can be numbers no JSON library holds.
fn request() -> impl Strategy<Value = String> {
    let jsonrpc = prop_oneof![
        Just(None),
        Just(Some("\"2.0\"".to_string())),
        Just(Some("\"1.0\"".to_string())),
        Just(Some("2".to_string()))
    ];
    let id = prop_oneof![
        Just(None),
        any::<u64>().prop_map(|n| Some(n.to_string())),
        "[a-z0-9]{0,8}".prop_map(|s| Some(format!("\"{s}\""))),
        Just(Some("-1".to_string())),
        Just(Some("1.5".to_string())),
        Just(Some("1e3".to_string())),
        Just(Some("9".repeat(400))),
        Just(Some("null".to_string())),
        Just(Some("[1]".to_string())),
        Just(Some(format!("{}{}", "[".repeat(200), "]".repeat(200)))),
    ];
    let method = prop_oneof![
        Just(None),
        Just(Some("\"system.hello\"".to_string())),
        Just(Some("\"inbox.send\"".to_string())),
        Just(Some("\"no.such\"".to_string())),
        Just(Some("5".to_string())),
    ];
    let params = prop_oneof![Just(None), any_json().prop_map(|v| Some(v.to_string()))];
    (
        jsonrpsee_member("jsonrpc", jsonrpc),
        jsonrpsee_member("id", id),
        jsonrpsee_member("method", method),
        jsonrpsee_member("params", params),
    )
        .prop_map(|(a, b, c, d)| format!("{{{}}}", [a, b, c, d].into_iter().flatten().collect::<Vec<_>>().join(",")))
}

fn jsonrpsee_member(
    name: &'static str,
    value: impl Strategy<Value = Option<String>>,
) -> impl Strategy<Value = Option<String>> {
    value.prop_map(move |v| v.map(|v| format!("\"{name}\":{v}")))
}

fn line() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        4 => request().prop_map(String::into_bytes),
        2 => prop::collection::vec(request(), 0..4).prop_map(|r| format!("[{}]", r.join(",")).into_bytes()),
        1 => any_json().prop_map(|v| v.to_string().into_bytes()),
        1 => prop::collection::vec(any::<u8>(), 0..64),
    ]
}

/// Is `v` one well-formed response?
fn is_response(v: &Value) -> bool {
    let Some(o) = v.as_object() else { return false };
    o.get("jsonrpc") == Some(&json!("2.0"))
        && o.get("id").is_some_and(|id| id.is_null() || id.is_u64() || id.is_string())
        && (o.contains_key("result") != o.contains_key("error"))
}

/// The id a well-formed request carries, if it has one the daemon can echo.
fn usable_id(line: &[u8]) -> Option<Value> {
    let v: Value = serde_json::from_slice(line).ok()?;
    let id = v.as_object()?.get("id")?;
    (id.is_u64() || id.is_string()).then(|| id.clone())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn every_line_gets_well_formed_json_rpc(line in line()) {
        let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
        let reply = rt.block_on(async {
            match conn().handle_line(&line) {
                Some(r) => r.await,
                None => None,
            }
        });
        let Some(reply) = reply else {
            // Only notifications (no id) and blank lines go unanswered.
            let v: Option<Value> = serde_json::from_slice(&line).ok();
            let silent = match &v {
                None => line.iter().all(u8::is_ascii_whitespace),
                Some(Value::Array(items)) => !items.is_empty() && items.iter().all(|i| i.get("id").is_none() && i.get("method").is_some()),
                Some(v) => v.get("id").is_none(),
            };
            prop_assert!(silent, "no answer to {}", String::from_utf8_lossy(&line));
            return Ok(());
        };
        let v: Value = serde_json::from_str(reply.get()).unwrap();
        match &v {
            Value::Array(items) => prop_assert!(!items.is_empty() && items.iter().all(is_response), "{v}"),
            one => {
                prop_assert!(is_response(one), "{v}");
                if let Some(id) = usable_id(&line) {
                    prop_assert_eq!(&one["id"], &id);
                }
            }
        }
    }
}
