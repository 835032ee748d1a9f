//! Typed requests on SQLite: the `requests` table, joined with the thread each opened (whose
//! status says whether the request is open, answered or cancelled).

use coord_proto::types::ThreadStatus;
use rusqlite::{params, params_from_iter, types::Value as SqlValue};

use super::tx::SqliteTx;
use crate::error::Result;
use crate::store::repos::{RequestQuery, RequestRow, Requests};
use crate::store::rows::{self, Cols, REQUEST_COLUMNS};

impl SqliteTx<'_> {
    fn one_request(&self, column: &str, value: &str) -> Result<Option<RequestRow>> {
        let sql = format!("SELECT {REQUEST_COLUMNS} FROM requests r WHERE r.{column} = ?1");
        self.map_one(&sql, [value], rows::request)
    }
}

impl Requests for SqliteTx<'_> {
    fn request_insert(&mut self, r: &RequestRow) -> Result<()> {
        self.conn
            .prepare_cached(
                "INSERT INTO requests (request_id, msg_type, thread_id, message_id, from_agent, to_agent, run_id, \
                 task_id, created_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
            )?
            .execute(params![
                r.request_id,
                r.msg_type,
                r.thread_id,
                r.message_id,
                r.from_agent,
                r.to_agent,
                r.run_id,
                r.task_id,
                r.created_at
            ])?;
        Ok(())
    }

    fn request(&self, request_id: &str) -> Result<Option<RequestRow>> {
        self.one_request("request_id", request_id)
    }

    fn request_of_thread(&self, thread_id: &str) -> Result<Option<RequestRow>> {
        self.one_request("thread_id", thread_id)
    }

    fn requests_list(&self, q: &RequestQuery) -> Result<Vec<(RequestRow, ThreadStatus)>> {
        let mut args: Vec<SqlValue> = Vec::new();
        let mut clauses: Vec<String> = Vec::new();
        for (col, v) in
            [("request_id", &q.request_id), ("to_agent", &q.to), ("from_agent", &q.from), ("run_id", &q.run_id)]
        {
            if let Some(v) = v {
                args.push(SqlValue::Text(v.clone()));
                clauses.push(format!("r.{col} = ?{}", args.len()));
            }
        }
        if !q.types.is_empty() {
            let first = args.len() + 1;
            args.extend(q.types.iter().map(|t| SqlValue::Text(t.clone())));
            clauses.push(format!("r.msg_type IN ({})", super::tx::marks(first, q.types.len())));
        }
        if !q.include_closed {
            clauses.push("t.status NOT IN ('done', 'failed', 'cancelled')".into());
        }
        let filter = if clauses.is_empty() { String::new() } else { format!("WHERE {}", clauses.join(" AND ")) };
        let order = if q.include_closed { "DESC" } else { "ASC" };
        let sql = format!(
            "SELECT {REQUEST_COLUMNS}, t.status FROM requests r JOIN threads t ON t.thread_id = r.thread_id {filter} \
             ORDER BY r.created_at {order}, r.request_id {order} LIMIT {}",
            q.limit
        );
        self.map(&sql, params_from_iter(args), |row| Ok((rows::request(row)?, row.p(9)?)))
    }
}
