//! Which backend a daemon opens: SQLite (the zero-configuration default, `.agents/coord.db`)
//! or PostgreSQL (several daemons, one per host, on one database).
//!
//! The choice, strongest first: `coordd serve --store URL`, the `COORD_STORE_URL`
//! environment variable, the `store` recorded in the project's `.agents/coordd.json`,
//! else SQLite. `--store` and a successful `coordd migrate --to` record their choice in
//! that file (mode 0600: a URL may carry a password), so a daemon auto-started later by
//! `inbox` or `orch` opens the same store.

use std::path::Path;
use std::sync::Arc;

use super::Store;
use super::postgres::{PgStore, redact};
use super::sqlite::SqliteStore;
use crate::bus::Bus;
use crate::error::{Error, Result};

pub use coord_ipc::paths::{STORE_CONFIG_FILE as CONFIG_FILE, STORE_URL_ENV as ENV};

/// A backend and where its data is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Choice {
    /// The SQLite file of the project.
    Sqlite,
    /// A PostgreSQL connection URL (`postgres://…` or `postgresql://…`).
    Postgres(String),
}

impl Choice {
    /// `sqlite` (or an empty string) or a PostgreSQL URL.
    pub fn parse(s: &str) -> Result<Choice> {
        let s = s.trim();
        if s.is_empty() || s.eq_ignore_ascii_case("sqlite") {
            Ok(Choice::Sqlite)
        } else if s.starts_with("postgres://") || s.starts_with("postgresql://") {
            Ok(Choice::Postgres(s.to_string()))
        } else {
            Err(Error::invalid(format!(
                "unknown store '{}': use `sqlite` or a PostgreSQL URL (postgres://user@host/db or \
                 postgres:///db?host=/run/postgresql)",
                redact(s)
            )))
        }
    }

    /// For logs and messages (no password).
    pub fn describe(&self, db: &Path) -> String {
        match self {
            Choice::Sqlite => db.display().to_string(),
            Choice::Postgres(url) => redact(url),
        }
    }

    fn as_config(&self) -> &str {
        match self {
            Choice::Sqlite => "sqlite",
            Choice::Postgres(url) => url,
        }
    }
}

/// Where a choice came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    Flag,
    Env,
    Config,
    Default,
}

pub use coord_ipc::paths::store_config as config_path;

/// The store recorded in the project's configuration, if any.
pub fn recorded(db: &Path) -> Result<Option<Choice>> {
    let path = config_path(db);
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(Error::invalid(format!("cannot read {}: {e}", path.display()))),
    };
    let v: serde_json::Value = serde_json::from_str(&text)
        .map_err(|e| Error::invalid(format!("{} is not valid JSON: {e}", path.display())))?;
    match v.get("store") {
        None | Some(serde_json::Value::Null) => Ok(None),
        Some(serde_json::Value::String(s)) => Choice::parse(s).map(Some),
        Some(_) => Err(Error::invalid(format!("{}: `store` must be a string", path.display()))),
    }
}

/// Record `choice` in the project's configuration (other keys are kept).
pub fn record(db: &Path, choice: &Choice) -> std::io::Result<()> {
    let path = config_path(db);
    let mut v: serde_json::Value = std::fs::read_to_string(&path)
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .filter(serde_json::Value::is_object)
        .unwrap_or_else(|| serde_json::json!({}));
    v["store"] = choice.as_config().into();
    let tmp = path.with_extension("json.tmp");
    let mut opts = std::fs::OpenOptions::new();
    opts.write(true).create(true).truncate(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut opts, 0o600);
    {
        use std::io::Write;
        let mut f = opts.open(&tmp)?;
        f.write_all(format!("{}\n", serde_json::to_string_pretty(&v).unwrap_or_default()).as_bytes())?;
        f.sync_all()?;
    }
    std::fs::rename(&tmp, &path)
}

/// The store a daemon of the project whose database is `db` opens.
pub fn resolve(flag: Option<&str>, db: &Path) -> Result<(Choice, Source)> {
    if let Some(f) = flag {
        return Ok((Choice::parse(f)?, Source::Flag));
    }
    if let Ok(v) = std::env::var(ENV)
        && !v.trim().is_empty()
    {
        return Ok((Choice::parse(&v)?, Source::Env));
    }
    match recorded(db)? {
        Some(c) => Ok((c, Source::Config)),
        None => Ok((Choice::Sqlite, Source::Default)),
    }
}

/// Open the chosen store (blocking: call it off the executor).
pub fn open(choice: &Choice, db: &Path) -> Result<(Arc<dyn Store>, Bus)> {
    match choice {
        Choice::Sqlite => SqliteStore::open(db).map(|(s, b)| (Arc::new(s) as Arc<dyn Store>, b)),
        Choice::Postgres(url) => PgStore::open(url).map(|(s, b)| (Arc::new(s) as Arc<dyn Store>, b)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_two_backends_and_refuses_others() {
        assert_eq!(Choice::parse("sqlite").unwrap(), Choice::Sqlite);
        assert_eq!(Choice::parse("postgres:///db").unwrap(), Choice::Postgres("postgres:///db".into()));
        let e = Choice::parse("mysql://u:secret@h/db").unwrap_err().to_string();
        assert!(e.contains("unknown store") && !e.contains("secret"), "{e}");
    }

    #[test]
    fn a_recorded_choice_is_read_back_and_other_keys_survive() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("coord.db");
        std::fs::write(config_path(&db), r#"{"other": 1}"#).unwrap();
        record(&db, &Choice::Postgres("postgres:///x".into())).unwrap();
        assert_eq!(recorded(&db).unwrap(), Some(Choice::Postgres("postgres:///x".into())));
        let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(config_path(&db)).unwrap()).unwrap();
        assert_eq!(v["other"], 1);
    }
}
