//! [`Message`]: the seed's one message shape (`id`, `type`, `from`, `to`, `timestamp`,
//! `payload`), plus where coordd keeps it (thread and event) once it went through a daemon.

use coord_proto::types::{self, MessageType, TypedPayload};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One typed message between agents.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Message {
    /// `msg_` and 26 base32hex characters: the same id coordd stores it under, so a
    /// retried send is recognized.
    pub id: String,
    #[serde(rename = "type")]
    pub msg_type: MessageType,
    pub from: String,
    pub to: String,
    /// RFC 3339 UTC with milliseconds: when it was made (coordd's time once stored).
    pub timestamp: String,
    /// The type's payload, a JSON object.
    pub payload: Value,
    /// The coordd thread holding it (messages from a [`crate::DaemonInbox`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thread_id: Option<String>,
    /// The event that recorded it: a cursor to resume after.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub event_id: Option<i64>,
}

impl Message {
    /// A message with a typed payload (its type comes with it).
    pub fn new<P: TypedPayload>(from: impl Into<String>, to: impl Into<String>, payload: &P) -> Message {
        // The payload types serialize to objects and cannot fail.
        let payload = serde_json::to_value(payload).unwrap_or(Value::Object(Default::default()));
        Message::with_payload(from, to, P::TYPE, payload)
    }

    /// A message of any type, known or not, with a JSON payload used as is.
    pub fn with_payload(
        from: impl Into<String>,
        to: impl Into<String>,
        msg_type: impl Into<MessageType>,
        payload: Value,
    ) -> Message {
        Message {
            id: new_message_id(),
            msg_type: msg_type.into(),
            from: from.into(),
            to: to.into(),
            timestamp: coord_client::ids::now_rfc3339(),
            payload,
            thread_id: None,
            event_id: None,
        }
    }

    /// A message whose payload is raw JSON text: parsed once and kept as the JSON it is
    /// (never wrapped into a JSON string).
    pub fn raw(
        from: impl Into<String>,
        to: impl Into<String>,
        msg_type: impl Into<MessageType>,
        json: &str,
    ) -> Result<Message, serde_json::Error> {
        Ok(Message::with_payload(from, to, msg_type, serde_json::from_str(json)?))
    }

    /// The payload as a typed struct.
    pub fn payload_as<T: serde::de::DeserializeOwned>(&self) -> Result<T, serde_json::Error> {
        T::deserialize(&self.payload)
    }

    /// The message a coordd event recorded, if it recorded a typed one.
    pub fn from_event(e: &types::Event) -> Option<Message> {
        let m = e.message.as_ref()?;
        let t = m.msg_type.as_deref()?;
        Some(Message {
            id: m.message_id.clone(),
            msg_type: MessageType::from_name(t),
            from: m.from_agent.clone(),
            to: m.to_agent.clone(),
            timestamp: m.created_at.clone(),
            payload: m.payload_json.clone(),
            thread_id: Some(m.thread_id.clone()),
            event_id: Some(e.event_id),
        })
    }
}

/// A new message id in coordd's form: `msg_` and a UUIDv7 in lowercase base32hex.
pub fn new_message_id() -> String {
    coord_client::ids::new_id("msg")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn ids_have_coordds_form_and_sort_in_creation_order() {
        let a = new_message_id();
        let b = new_message_id();
        assert_eq!(a.len(), 30);
        assert!(a[4..].bytes().all(|c| c.is_ascii_digit() || (b'a'..=b'v').contains(&c)), "{a}");
        assert!(a < b);
    }

    #[test]
    fn raw_json_is_parsed_once_not_encoded_twice() {
        let m = Message::raw("a", "b", "custom_type", r#"{"x": [1, 2], "y": "z"}"#).unwrap();
        assert_eq!(m.payload, json!({"x": [1, 2], "y": "z"}));
        assert_eq!(serde_json::to_value(&m).unwrap()["payload"]["x"], json!([1, 2]));
        assert_eq!(m.msg_type, MessageType::Other("custom_type".into()));
    }

    #[test]
    fn timestamps_are_fixed_width_utc() {
        let t = coord_client::ids::now_rfc3339();
        assert_eq!(t.len(), 24, "{t}");
        assert!(t.ends_with('Z') && t.starts_with("20"));
    }
}
