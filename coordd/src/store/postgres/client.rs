//! [`Client`]: one PostgreSQL connection used synchronously from a backend thread, as the
//! `postgres` crate's client is (tokio-postgres, driven on a single-threaded runtime of
//! its own while a call waits), and what that crate cannot do: send a statement and the
//! next ones without waiting for the first one's answer ([`Client::execute_then`]), one
//! round trip for both. The writer sends its held writes and its `COMMIT` so: a turn under
//! the write lock is a round trip shorter.

use futures::StreamExt;
use postgres::types::ToSql;
use postgres::{Row, SimpleQueryMessage, Statement};
use tokio::runtime::{Builder, Runtime};
use tokio_postgres::types::BorrowToSql;
use tokio_postgres::{NoTls, RowStream, ToStatement};

use crate::error::{Error, Result};

type PgResult<T> = std::result::Result<T, postgres::Error>;

/// One connection: the asynchronous client, and the runtime its connection task runs on
/// (polled only while a call waits, like the `postgres` crate's).
pub struct Client {
    rt: Runtime,
    c: tokio_postgres::Client,
}

impl Client {
    pub fn connect(cfg: &tokio_postgres::Config) -> Result<Client> {
        let rt = Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| Error::Storage(format!("cannot start a PostgreSQL connection's runtime: {e}")))?;
        let (c, connection) = rt
            .block_on(cfg.connect(NoTls))
            .map_err(|e| Error::Storage(format!("cannot connect to PostgreSQL: {}", describe(&e))))?;
        // Notices are logged by tokio-postgres; nobody listens on these connections (the
        // follower's own listening connection is apart, see `listen`).
        rt.spawn(async move {
            if let Err(e) = connection.await {
                tracing::debug!(error = %e, "PostgreSQL connection ended");
            }
        });
        Ok(Client { rt, c })
    }

    pub fn is_closed(&self) -> bool {
        self.c.is_closed()
    }

    pub fn batch_execute(&mut self, sql: &str) -> PgResult<()> {
        self.rt.block_on(self.c.batch_execute(sql))
    }

    pub fn simple_query(&mut self, sql: &str) -> PgResult<Vec<SimpleQueryMessage>> {
        self.rt.block_on(self.c.simple_query(sql))
    }

    pub fn prepare(&mut self, sql: &str) -> PgResult<Statement> {
        self.rt.block_on(self.c.prepare(sql))
    }

    pub fn query<T: ?Sized + ToStatement>(&mut self, q: &T, params: &[&(dyn ToSql + Sync)]) -> PgResult<Vec<Row>> {
        self.rt.block_on(self.c.query(q, params))
    }

    pub fn execute<T: ?Sized + ToStatement>(&mut self, q: &T, params: &[&(dyn ToSql + Sync)]) -> PgResult<u64> {
        self.rt.block_on(self.c.execute(q, params))
    }

    /// Run `s` and then `then` (statements without parameters), sent together: one round
    /// trip. `then` runs whatever `s` gave: after a failed `s`, in a transaction, it fails
    /// too (the transaction is aborted) and commits nothing. The first error is returned.
    pub fn execute_then(&mut self, s: &Statement, params: &[&(dyn ToSql + Sync)], then: &str) -> PgResult<()> {
        let (first, second) =
            self.rt.block_on(async { tokio::join!(self.c.execute(s, params), self.c.batch_execute(then)) });
        first?;
        second
    }

    /// A statement's rows, read one at a time ([`RowIter::next`]).
    pub fn query_raw<T, P, I>(&mut self, q: &T, params: I) -> PgResult<RowIter<'_>>
    where
        T: ?Sized + ToStatement,
        P: BorrowToSql,
        I: IntoIterator<Item = P>,
        I::IntoIter: ExactSizeIterator,
    {
        let stream = self.rt.block_on(self.c.query_raw(q, params))?;
        Ok(RowIter { rt: &self.rt, stream: Box::pin(stream) })
    }
}

/// The rows of [`Client::query_raw`], as they arrive.
pub struct RowIter<'a> {
    rt: &'a Runtime,
    stream: std::pin::Pin<Box<RowStream>>,
}

impl RowIter<'_> {
    pub fn next(&mut self) -> PgResult<Option<Row>> {
        self.rt.block_on(self.stream.next()).transpose()
    }
}

/// The server's own message when there is one (`postgres::Error`'s display alone says
/// only "db error").
pub fn describe(e: &postgres::Error) -> String {
    match e.as_db_error() {
        Some(db) => format!("{}: {}", db.severity(), db.message()),
        None => e.to_string(),
    }
}
