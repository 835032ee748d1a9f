//! Identifiers and secrets. An id is a prefix, `_`, and a UUIDv7 written in lowercase
//! base32hex (`0-9a-v`, 26 characters, e.g. `thr_06bmahnc5h87pk6m2h3k6b8v6c`). UUIDv7s are
//! time-ordered, and the uuid crate keeps them ordered within a millisecond too; base32hex
//! keeps the bytes' order, so ids sort as text in creation order and primary-key inserts
//! append at the right edge of their B-tree. Lease tokens are random UUIDv4s in hex.

use std::sync::OnceLock;

use data_encoding::{Encoding, Specification};

fn base32hex_lower() -> &'static Encoding {
    static ENCODING: OnceLock<Encoding> = OnceLock::new();
    ENCODING.get_or_init(|| {
        let mut spec = Specification::new();
        spec.symbols.push_str("0123456789abcdefghijklmnopqrstuv");
        spec.encoding().expect("a valid base32 alphabet")
    })
}

/// A new time-ordered id with this prefix.
pub fn new_id(prefix: &str) -> String {
    let mut id = String::with_capacity(prefix.len() + 27);
    id.push_str(prefix);
    id.push('_');
    base32hex_lower().encode_append(uuid::Uuid::now_v7().as_bytes(), &mut id);
    id
}

/// A new secret lease token: `lt_` and 32 hex digits (122 random bits).
pub fn new_token() -> String {
    format!("lt_{}", uuid::Uuid::new_v4().simple())
}

/// A new agent secret: `cs_<agent id>_` and 256 random bits from the operating system, as
/// 64 hex digits (see `coord_proto::types::secret_agent`).
pub fn new_secret(agent_id: &str) -> crate::error::Result<String> {
    let mut key = [0u8; 32];
    getrandom::fill(&mut key).map_err(|e| crate::error::Error::Internal(format!("no randomness for a secret: {e}")))?;
    Ok(format!("cs_{agent_id}_{}", key.iter().map(|b| format!("{b:02x}")).collect::<String>()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_prefixed_unique_and_strictly_ordered() {
        let ids: Vec<String> = (0..1000).map(|_| new_id("msg")).collect();
        assert!(ids[0].starts_with("msg_"));
        assert_eq!(ids[0].len(), 30);
        assert!(ids[0][4..].chars().all(|c| c.is_ascii_digit() || ('a'..='v').contains(&c)));
        assert!(ids.windows(2).all(|w| w[0] < w[1]), "ids made one after another sort in that order");
        assert_eq!(new_token().len(), 35);
        assert_ne!(new_token(), new_token());
    }
}
