//! Identifiers and secrets. Ids are a prefix, `_`, and a UUIDv7 in its 32-hex-digit simple
//! form: time-ordered (the uuid crate keeps them ordered within a millisecond too), so
//! primary-key inserts append at the right edge of their B-tree. Lease tokens are
//! random UUIDv4s.

/// A new time-ordered id, e.g. `thr_019ab2a5c5f27c2e8b5a3f1e0d9c7b6a`.
pub fn new_id(prefix: &str) -> String {
    format!("{prefix}_{}", uuid::Uuid::now_v7().simple())
}

/// A new secret lease token: `lt_` and 32 hex digits (122 random bits).
pub fn new_token() -> String {
    format!("lt_{}", uuid::Uuid::new_v4().simple())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_prefixed_unique_and_strictly_ordered() {
        let ids: Vec<String> = (0..1000).map(|_| new_id("msg")).collect();
        assert!(ids[0].starts_with("msg_"));
        assert_eq!(ids[0].len(), 36);
        assert!(ids.windows(2).all(|w| w[0] < w[1]), "ids made one after another sort in that order");
        assert_eq!(new_token().len(), 35);
        assert_ne!(new_token(), new_token());
    }
}
