//! Input validation shared by every domain: names, ids, text, JSON objects, limits. Each
//! check names the field it refused, in the protocol's terms (never a CLI flag).

use coord_proto::types::ArtifactInput;
use coord_proto::{ErrorCode, MAX_LIMIT};
use serde_json::Value;

use crate::error::{Error, Result};

/// Longest agent name or id accepted, in characters.
pub const MAX_NAME: usize = 200;
/// Longest subject accepted, in characters.
pub const MAX_SUBJECT: usize = 1000;
/// Longest summary (or other one-line text) accepted.
pub const MAX_SUMMARY: usize = 4000;
/// Deepest nesting accepted inside a payload or metadata object. Responses and events wrap
/// the object a few levels deeper, and JSON parsers commonly stop at 128 levels (serde_json
/// does), so a deeper payload could be stored but not read back by clients.
pub const MAX_JSON_DEPTH: usize = 64;

/// An `invalid_args` error (the agents layer's name for invalid input).
pub fn invalid_args(msg: impl Into<String>) -> Error {
    Error::app(ErrorCode::InvalidArgs, msg)
}

/// An agent name: non-empty, at most 200 characters, no whitespace or control characters.
pub fn agent(field: &str, value: &str) -> Result<()> {
    if value.is_empty() {
        return Err(Error::invalid(format!("{field} is required")));
    }
    if value.chars().count() > MAX_NAME {
        return Err(Error::invalid(format!("{field} is longer than {MAX_NAME} characters")));
    }
    if value.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err(Error::invalid(format!("{field} '{value}' contains whitespace or control characters")));
    }
    Ok(())
}

/// An agent name as the agents layer checks it: [`agent`]'s rule, as `invalid_args`.
pub fn agent_name(field: &str, value: &str) -> Result<()> {
    agent(field, value).map_err(|e| invalid_args(e.to_app().message))
}

/// A required identifier such as a thread id.
pub fn id(field: &str, value: &str) -> Result<()> {
    if value.trim().is_empty() {
        return Err(Error::invalid(format!("{field} is required")));
    }
    if value.chars().count() > MAX_NAME {
        return Err(Error::invalid(format!("{field} is longer than {MAX_NAME} characters")));
    }
    Ok(())
}

/// An id chosen by a client in coordd's own form: `prefix`, `_` and 26 lowercase
/// base32hex characters (a message id `msg_…`, a session id `ses_…`).
pub fn chosen_id(field: &str, prefix: &str, id: &str) -> Result<()> {
    let ok = id
        .strip_prefix(prefix)
        .and_then(|r| r.strip_prefix('_'))
        .is_some_and(|rest| rest.len() == 26 && rest.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'v').contains(&b)));
    if !ok {
        return Err(Error::invalid(format!(
            "{field} '{id}' must be {prefix}_ followed by 26 lowercase base32hex characters (0-9, a-v)"
        )));
    }
    Ok(())
}

/// A thread subject: not blank, at most 1000 characters.
pub fn subject(subject: &str) -> Result<()> {
    if subject.trim().is_empty() {
        return Err(Error::invalid("subject must not be blank"));
    }
    if subject.chars().count() > MAX_SUBJECT {
        return Err(Error::invalid(format!("subject is longer than {MAX_SUBJECT} characters")));
    }
    Ok(())
}

/// A one-line text field (summary, reason, goal, title, topic): not blank, at most 4000
/// characters.
pub fn text(field: &str, value: &str) -> Result<()> {
    if value.trim().is_empty() {
        return Err(Error::invalid(format!("{field} is required and must not be blank")));
    }
    if value.chars().count() > MAX_SUMMARY {
        return Err(Error::invalid(format!("{field} is longer than {MAX_SUMMARY} characters")));
    }
    Ok(())
}

/// A thread subject made from a prefix and free text, cut to the subject limit.
pub fn subject_from(prefix: &str, text: &str) -> String {
    let first = text.lines().next().unwrap_or_default();
    format!("{prefix}{first}").chars().take(MAX_SUBJECT).collect()
}

/// A JSON object nested at most [`MAX_JSON_DEPTH`] levels deep: the object itself is level
/// 1, and each object or array inside adds one (scalars add none, so `{"a":{"b":1}}` has 2).
pub fn object(field: &str, v: &Value) -> Result<()> {
    if !v.is_object() {
        return Err(Error::invalid(format!("{field} must be a JSON object, got {v}")));
    }
    // Iterative, so no recursion limit of our own applies.
    let mut stack = vec![(v, 1usize)];
    while let Some((node, depth)) = stack.pop() {
        let children: Box<dyn Iterator<Item = &Value>> = match node {
            Value::Array(items) => Box::new(items.iter()),
            Value::Object(map) => Box::new(map.values()),
            _ => continue,
        };
        if depth > MAX_JSON_DEPTH {
            return Err(Error::invalid(format!("{field} is nested more than {MAX_JSON_DEPTH} levels deep")));
        }
        stack.extend(children.map(|c| (c, depth + 1)));
    }
    Ok(())
}

pub fn artifacts(artifacts: &[ArtifactInput]) -> Result<()> {
    for a in artifacts {
        if a.path.trim().is_empty() {
            return Err(Error::invalid("artifact path must not be empty"));
        }
        if let Some(k) = &a.kind
            && k.trim().is_empty()
        {
            return Err(Error::invalid("artifact kind must not be empty"));
        }
        if let Some(m) = &a.metadata_json {
            object("artifact metadata_json", m)?;
        }
    }
    Ok(())
}

/// A `limit`: 1..=MAX_LIMIT, defaulting to `default`.
pub fn limit(limit: Option<u32>, default: u32) -> Result<u32> {
    match limit {
        None => Ok(default),
        Some(0) => Err(Error::invalid("limit must be at least 1")),
        Some(n) if n > MAX_LIMIT => Err(Error::invalid(format!("limit must be at most {MAX_LIMIT}"))),
        Some(n) => Ok(n),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `depth` levels of objects (or of arrays inside an object), with a scalar at the bottom.
    fn nest(depth: usize, arrays: bool) -> Value {
        let mut v = serde_json::json!(1);
        for level in (1..=depth).rev() {
            v = if arrays && level > 1 { serde_json::json!([v]) } else { serde_json::json!({ "a": v }) };
        }
        v
    }

    #[test]
    fn payloads_nested_too_deep_to_read_back_are_refused() {
        for arrays in [false, true] {
            assert!(object("p", &nest(MAX_JSON_DEPTH, arrays)).is_ok(), "64 levels and a scalar are fine");
            let deep = object("p", &nest(MAX_JSON_DEPTH + 1, arrays)).unwrap_err();
            assert_eq!(deep.code(), Some(ErrorCode::InvalidInput));
        }
        assert!(object("p", &serde_json::json!([1])).is_err(), "not an object");
    }

    #[test]
    fn names_refuse_blanks_whitespace_and_length() {
        assert!(agent("from", "w1@host").is_ok());
        assert!(agent("from", "").is_err());
        assert!(agent("from", "a b").is_err());
        assert!(agent("from", &"é".repeat(200)).is_ok(), "characters, not bytes");
        assert!(agent("from", &"é".repeat(201)).is_err());
        assert_eq!(agent_name("agent", "").unwrap_err().code(), Some(ErrorCode::InvalidArgs));
    }

    #[test]
    fn limits_default_and_are_bounded() {
        assert_eq!(limit(None, 50).unwrap(), 50);
        assert!(limit(Some(0), 50).is_err());
        assert!(limit(Some(MAX_LIMIT + 1), 50).is_err());
    }

    /// Levels of objects and arrays, the way the protocol counts them (scalars add none).
    fn depth(v: &Value) -> usize {
        match v {
            Value::Array(items) => 1 + items.iter().map(depth).max().unwrap_or(0),
            Value::Object(map) => 1 + map.values().map(depth).max().unwrap_or(0),
            _ => 0,
        }
    }

    /// A value `levels` containers deep along one spine, each level an object or an array
    /// (as `kinds` says), with scalar siblings and a scalar or nothing at the bottom.
    fn spine(levels: usize, kinds: &[bool], leaf: bool) -> Value {
        let mut v = if leaf { serde_json::json!("x") } else { Value::Null };
        for level in (0..levels).rev() {
            let inner = if v.is_null() { vec![] } else { vec![v] };
            v = if kinds[level % kinds.len()] {
                let mut m = serde_json::Map::new();
                m.insert("n".into(), serde_json::json!(level));
                for (i, c) in inner.into_iter().enumerate() {
                    m.insert(format!("c{i}"), c);
                }
                Value::Object(m)
            } else {
                let mut items = vec![serde_json::json!(true)];
                items.extend(inner);
                Value::Array(items)
            };
        }
        v
    }

    proptest::proptest! {
        /// A payload is accepted exactly when it is an object at most 64 levels deep.
        #[test]
        fn payloads_are_accepted_exactly_up_to_the_depth_limit(
            levels in 0usize..90,
            kinds in proptest::collection::vec(proptest::bool::ANY, 1..6),
            leaf in proptest::bool::ANY,
        ) {
            let v = spine(levels, &kinds, leaf);
            let want = v.is_object() && depth(&v) <= MAX_JSON_DEPTH;
            proptest::prop_assert_eq!(object("payload_json", &v).is_ok(), want, "{} levels", depth(&v));
        }
    }
}
