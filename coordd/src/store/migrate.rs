//! `coordd migrate --to postgres://…`: copy a project's SQLite history into PostgreSQL,
//! verified, in one PostgreSQL transaction (so an interrupted copy leaves nothing behind
//! and running the command again starts over; a finished one is only verified again).
//!
//! Every table is copied column by column by name (the PostgreSQL schema mirrors
//! SQLite's), events with their ids, then the event counter is set past the last id.
//! Attempts recorded before hosts were get this host (their worktrees are here). Each
//! table is then verified: its row count and a hash over every row in primary-key order,
//! computed the same way from both databases (`store::copy`), must agree before the
//! transaction commits.

use std::path::Path;

use super::copy::Report;
use super::postgres::import;
use super::sqlite::export;
use crate::error::Result;

/// Copy the SQLite database `db` into the PostgreSQL database at `url` and verify it.
/// The caller holds the project's daemon lock (no daemon writes the source meanwhile).
pub fn run(db: &Path, url: &str) -> Result<Report> {
    let source = export::Source::open(db)?;
    import::copy(&source, url, crate::host::name())
}
