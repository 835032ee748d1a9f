//! The domain rules, one module per domain, written once against the repository traits of
//! [`crate::store::repos`], with no SQL and no I/O of their own. A rule takes the
//! transaction and `now`, checks the current state, writes what changes and records one
//! event per change. Domains do not call each other: where an operation spans domains
//! (a send delivers mail and drives orch), [`crate::ops`] composes them.
//!
//! - [`check`]: input validation shared by every domain.
//! - [`events`]: building and recording events; event filters.
//! - [`inbox`]: threads, messages, leases and read marks.
//! - [`mail`]: per-recipient mail, delivery into sessions, peers.
//! - [`agents`]: the agent registry and strict mode.
//! - [`reservations`]: file-scope reservations and their scope language.
//! - [`policy`]: the permission policy (gated tool calls and their approvers).
//! - [`orch`]: runs, the task graph, attempts, reconcile, councils, merges.
//! - [`search`]: full-text search queries.
//! - [`launch`]: the worker sessions launchers start for attempts.

pub mod agents;
pub mod check;
pub mod credentials;
pub mod events;
pub mod inbox;
pub mod launch;
pub mod mail;
pub mod orch;
pub mod policy;
pub mod reservations;
pub mod search;
pub mod usage;

#[cfg(test)]
mod layering {
    /// The rules know no socket, bus, handler or service: whatever they need from below
    /// (a size, a clock, a bound) lives below them too.
    #[test]
    fn the_rules_name_nothing_above_them() {
        let above = ["crate::bus", "crate::net", "crate::api", "crate::dashboard", "crate::services", "crate::core"];
        let mut dirs = vec![std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/domain")];
        let mut found = Vec::new();
        while let Some(dir) = dirs.pop() {
            for entry in std::fs::read_dir(&dir).unwrap() {
                let path = entry.unwrap().path();
                if path.is_dir() {
                    dirs.push(path);
                    continue;
                }
                let text = std::fs::read_to_string(&path).unwrap();
                for name in above.iter().filter(|n| text.contains(&format!("{n}::"))) {
                    found.push(format!("{} names {name}", path.display()));
                }
            }
        }
        assert!(found.is_empty(), "{found:#?}");
    }
}
