//! Both backends' stores opened in-process, for suites that test the storage contract
//! below the daemon (`store_contract.rs`, `store_reads.rs`): SQLite on a file in a
//! temporary directory, PostgreSQL on a database of its own on the shared test server.
//! `contract!` runs each case on both. A suite includes it with
//! `#[path = "support/stores.rs"] mod stores;` (`coordd` is a dev-dependency only).

use coordd::store::Store;
use coordd::store::postgres::PgStore;
use coordd::store::sqlite::SqliteStore;

use coord_tests::pg;

/// A store under test (and its directory).
pub struct Opened {
    pub store: Box<dyn Store>,
    #[allow(dead_code, reason = "store_contract.rs reads it, store_reads.rs does not")]
    pub bus: coordd::bus::Bus,
    _dir: Option<tempfile::TempDir>,
}

/// A SQLite store in a temporary directory.
pub async fn sqlite() -> Option<Opened> {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("coord.db");
    let (store, bus) = tokio::task::spawn_blocking(move || SqliteStore::open(&path).expect("open")).await.unwrap();
    Some(Opened { store: Box::new(store), bus, _dir: Some(dir) })
}

/// A PostgreSQL store on a fresh database of the shared server (`None` where there is no
/// server and that is allowed: see `pg::shared`).
pub async fn postgres() -> Option<Opened> {
    let url = pg::shared()?.database();
    let (store, bus) = tokio::task::spawn_blocking(move || PgStore::open(&url).expect("open")).await.unwrap();
    Some(Opened { store: Box::new(store), bus, _dir: None })
}

/// Each case (an `async fn case(s: &Opened)` of the calling file) as `on_sqlite::case` and
/// `on_postgres::case`.
macro_rules! contract {
    ($($case:ident),* $(,)?) => {
        contract!(@on on_sqlite sqlite $($case),*);
        contract!(@on on_postgres postgres $($case),*);
    };
    (@on $module:ident $open:ident $($case:ident),*) => {
        mod $module {
            $(#[tokio::test(flavor = "multi_thread")]
            async fn $case() {
                let Some(s) = crate::stores::$open().await else { return };
                super::$case(&s).await;
                s.store.close().await;
            })*
        }
    };
}

pub(crate) use contract;
