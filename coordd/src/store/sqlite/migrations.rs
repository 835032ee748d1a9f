//! Versioned, append-only schema migrations. The schema version is SQLite's `user_version`.
//! Never edit a shipped migration: add a new one at the end of [`MIGRATIONS`].

use rusqlite::Connection;

/// Each entry moves the schema from version `i` to `i + 1`.
pub const MIGRATIONS: &[&str] = &[
    // 1: the inbox core (threads, messages, leases, artifacts, events) from the inbox CLI
    // contract, plus lease generations, event context columns and per-agent read marks.
    r#"
    CREATE TABLE threads (
        thread_id TEXT PRIMARY KEY,
        run_id TEXT NOT NULL,
        task_id TEXT NOT NULL,
        subject TEXT NOT NULL,
        created_by TEXT NOT NULL,
        assigned_to TEXT NOT NULL,
        status TEXT NOT NULL,
        priority TEXT NOT NULL DEFAULT 'normal',
        latest_message_id TEXT,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL
    );
    CREATE TABLE messages (
        message_id TEXT PRIMARY KEY,
        thread_id TEXT NOT NULL,
        from_agent TEXT NOT NULL,
        to_agent TEXT NOT NULL,
        kind TEXT NOT NULL,
        summary TEXT NOT NULL,
        body TEXT NOT NULL DEFAULT '',
        payload_json TEXT NOT NULL DEFAULT '{}',
        created_at TEXT NOT NULL,
        event_id INTEGER NOT NULL DEFAULT 0,
        FOREIGN KEY(thread_id) REFERENCES threads(thread_id)
    );
    CREATE TABLE leases (
        thread_id TEXT PRIMARY KEY,
        agent_id TEXT NOT NULL,
        lease_token TEXT NOT NULL,
        claimed_at TEXT NOT NULL,
        expires_at TEXT NOT NULL,
        released_at TEXT,
        generation INTEGER NOT NULL DEFAULT 1
    );
    CREATE TABLE artifacts (
        artifact_id TEXT PRIMARY KEY,
        message_id TEXT NOT NULL,
        path TEXT NOT NULL,
        kind TEXT NOT NULL,
        metadata_json TEXT NOT NULL DEFAULT '{}',
        created_at TEXT NOT NULL,
        FOREIGN KEY(message_id) REFERENCES messages(message_id)
    );
    CREATE TABLE events (
        event_id INTEGER PRIMARY KEY AUTOINCREMENT,
        run_id TEXT NOT NULL,
        task_id TEXT NOT NULL,
        thread_id TEXT NOT NULL,
        source TEXT NOT NULL,
        event_type TEXT NOT NULL,
        message_id TEXT,
        summary TEXT NOT NULL DEFAULT '',
        payload_json TEXT NOT NULL DEFAULT '{}',
        created_at TEXT NOT NULL,
        actor TEXT NOT NULL DEFAULT '',
        assigned_to TEXT NOT NULL DEFAULT '',
        created_by TEXT NOT NULL DEFAULT '',
        thread_status TEXT NOT NULL DEFAULT '',
        message_kind TEXT
    );
    CREATE TABLE reads (
        agent_id TEXT NOT NULL,
        thread_id TEXT NOT NULL,
        read_event_id INTEGER NOT NULL,
        PRIMARY KEY (agent_id, thread_id)
    ) WITHOUT ROWID;
    CREATE INDEX idx_threads_status_assigned ON threads(status, assigned_to, updated_at);
    CREATE INDEX idx_threads_created_by ON threads(created_by, status);
    CREATE INDEX idx_threads_run_task ON threads(run_id, task_id);
    CREATE INDEX idx_messages_thread_created ON messages(thread_id, created_at);
    CREATE INDEX idx_messages_thread_event ON messages(thread_id, event_id);
    CREATE INDEX idx_artifacts_message ON artifacts(message_id);
    CREATE INDEX idx_events_thread_event ON events(thread_id, event_id);
    CREATE INDEX idx_events_run_event ON events(run_id, event_id);
    "#,
    // 2: orch (runs, tasks, dependencies, attempts, councils), task status on events, and
    // lease-expiry bookkeeping.
    r#"
    ALTER TABLE leases ADD COLUMN expiry_reported INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE events ADD COLUMN task_status TEXT;
    CREATE INDEX idx_leases_open ON leases(expires_at) WHERE released_at IS NULL AND expiry_reported = 0;
    CREATE TABLE runs (
        run_id TEXT PRIMARY KEY,
        goal TEXT NOT NULL,
        status TEXT NOT NULL,
        created_by TEXT NOT NULL,
        auto_retry INTEGER NOT NULL DEFAULT 0,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL
    );
    CREATE TABLE tasks (
        run_id TEXT NOT NULL REFERENCES runs(run_id),
        task_id TEXT NOT NULL,
        title TEXT NOT NULL,
        body TEXT NOT NULL DEFAULT '',
        acceptance TEXT NOT NULL DEFAULT '',
        priority TEXT NOT NULL,
        prio_rank INTEGER NOT NULL,
        assign_to TEXT,
        role TEXT,
        kind TEXT NOT NULL,
        max_attempts INTEGER NOT NULL,
        status TEXT NOT NULL,
        attempt INTEGER NOT NULL DEFAULT 0,
        auto_retries INTEGER NOT NULL DEFAULT 0,
        retry_pending INTEGER NOT NULL DEFAULT 0,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        UNIQUE (run_id, task_id)
    );
    CREATE INDEX idx_tasks_queue ON tasks(run_id, status, prio_rank DESC);
    CREATE TABLE task_deps (
        run_id TEXT NOT NULL,
        task_id TEXT NOT NULL,
        depends_on TEXT NOT NULL,
        PRIMARY KEY (run_id, task_id, depends_on)
    ) WITHOUT ROWID;
    CREATE INDEX idx_task_deps_reverse ON task_deps(run_id, depends_on);
    CREATE TABLE attempts (
        run_id TEXT NOT NULL,
        task_id TEXT NOT NULL,
        attempt INTEGER NOT NULL,
        thread_id TEXT NOT NULL,
        worker TEXT NOT NULL,
        status TEXT NOT NULL,
        repo TEXT,
        worktree_path TEXT,
        branch TEXT,
        base_rev TEXT,
        base_branch TEXT,
        previous_thread_id TEXT,
        started_at TEXT NOT NULL,
        ended_at TEXT,
        PRIMARY KEY (run_id, task_id, attempt)
    );
    CREATE UNIQUE INDEX idx_attempts_thread ON attempts(thread_id);
    CREATE TABLE councils (
        run_id TEXT NOT NULL,
        council_id TEXT NOT NULL,
        topic TEXT NOT NULL,
        body TEXT NOT NULL DEFAULT '',
        phase TEXT NOT NULL,
        groups_json TEXT NOT NULL DEFAULT '[]',
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        PRIMARY KEY (run_id, council_id)
    );
    CREATE TABLE council_members (
        run_id TEXT NOT NULL,
        council_id TEXT NOT NULL,
        reviewer TEXT NOT NULL,
        ord INTEGER NOT NULL,
        brainstorm_thread_id TEXT NOT NULL,
        brainstorm_json TEXT,
        vote_thread_id TEXT,
        vote_json TEXT,
        PRIMARY KEY (run_id, council_id, reviewer)
    );
    CREATE INDEX idx_council_brainstorm ON council_members(brainstorm_thread_id);
    CREATE INDEX idx_council_vote ON council_members(vote_thread_id);
    "#,
    // 3: the `bb agent` layer: agent registry, project settings, mail categories with
    // per-recipient read/ack state, and file-scope reservations (history kept forever).
    r#"
    ALTER TABLE messages ADD COLUMN category TEXT;
    ALTER TABLE messages ADD COLUMN requires_ack INTEGER NOT NULL DEFAULT 0;
    CREATE TABLE settings (
        key TEXT PRIMARY KEY,
        value TEXT NOT NULL
    ) WITHOUT ROWID;
    CREATE TABLE agents (
        agent_id TEXT PRIMARY KEY,
        display_name TEXT NOT NULL DEFAULT '',
        role TEXT NOT NULL DEFAULT '',
        status TEXT NOT NULL DEFAULT 'idle',
        registered INTEGER NOT NULL DEFAULT 0,
        created_at TEXT NOT NULL,
        last_seen_at TEXT,
        version INTEGER NOT NULL DEFAULT 1
    ) WITHOUT ROWID;
    CREATE TABLE mail (
        recipient TEXT NOT NULL,
        message_id TEXT NOT NULL REFERENCES messages(message_id),
        event_id INTEGER NOT NULL,
        state TEXT NOT NULL DEFAULT 'unread',
        read_at TEXT,
        acked_at TEXT,
        PRIMARY KEY (recipient, message_id)
    ) WITHOUT ROWID;
    CREATE INDEX idx_mail_recipient_event ON mail(recipient, event_id);
    CREATE TABLE reservations (
        reservation_id TEXT PRIMARY KEY,
        scope TEXT NOT NULL,
        agent_id TEXT NOT NULL,
        task_id TEXT NOT NULL,
        shared INTEGER NOT NULL DEFAULT 0,
        state TEXT NOT NULL,
        generation INTEGER NOT NULL,
        created_at TEXT NOT NULL,
        expires_at TEXT NOT NULL,
        released_at TEXT
    );
    CREATE INDEX idx_reservations_active ON reservations(scope) WHERE state = 'active';
    CREATE INDEX idx_reservations_scope ON reservations(scope, generation);
    "#,
    // 4: the session mailbox: per-recipient delivery (queued -> delivered), priority,
    // expiry, withdrawal and reminder marks; linked peer tasks. Mail already read before
    // this migration counts as delivered.
    r#"
    ALTER TABLE mail ADD COLUMN priority TEXT NOT NULL DEFAULT 'normal';
    ALTER TABLE mail ADD COLUMN delivered_at TEXT;
    ALTER TABLE mail ADD COLUMN expires_at TEXT;
    ALTER TABLE mail ADD COLUMN withdrawn_at TEXT;
    ALTER TABLE mail ADD COLUMN reminded_at TEXT;
    UPDATE mail SET delivered_at = COALESCE(read_at, acked_at) WHERE state <> 'unread';
    CREATE INDEX idx_mail_queued ON mail(recipient, event_id) WHERE delivered_at IS NULL AND withdrawn_at IS NULL;
    CREATE TABLE peers (
        task_id TEXT NOT NULL,
        peer_task_id TEXT NOT NULL,
        created_at TEXT NOT NULL,
        PRIMARY KEY (task_id, peer_task_id)
    ) WITHOUT ROWID;
    "#,
    // 5: indexes for the hot paths, and fewer of them on the send path. Threads store their
    // priority's rank, and `idx_threads_fetch` serves `inbox.fetch` in its order (priority,
    // then age) without a sort; it replaces (status, assigned_to, updated_at). Mail is keyed
    // by (recipient, event of the message), so a recipient's mail is one key range in message
    // order and the separate (recipient, event_id) index goes; the queued copies keep their
    // partial index. The (thread_id, created_at) message index, which no query used, goes,
    // and so does (created_by, status): listing by creator scans instead of every send
    // paying for a per-sender index.
    r#"
    ALTER TABLE threads ADD COLUMN prio_rank INTEGER NOT NULL DEFAULT 1;
    UPDATE threads SET prio_rank = CASE priority WHEN 'urgent' THEN 3 WHEN 'high' THEN 2 WHEN 'normal' THEN 1 ELSE 0 END;
    DROP INDEX idx_threads_status_assigned;
    CREATE INDEX idx_threads_fetch ON threads(assigned_to, status, prio_rank DESC, created_at, thread_id);
    DROP INDEX idx_messages_thread_created;
    DROP INDEX idx_threads_created_by;
    CREATE TABLE mail_by_event (
        recipient TEXT NOT NULL,
        event_id INTEGER NOT NULL,
        message_id TEXT NOT NULL REFERENCES messages(message_id),
        state TEXT NOT NULL DEFAULT 'unread',
        priority TEXT NOT NULL DEFAULT 'normal',
        read_at TEXT,
        acked_at TEXT,
        delivered_at TEXT,
        expires_at TEXT,
        withdrawn_at TEXT,
        reminded_at TEXT,
        PRIMARY KEY (recipient, event_id)
    ) WITHOUT ROWID;
    INSERT INTO mail_by_event (recipient, event_id, message_id, state, priority, read_at, acked_at, delivered_at,
        expires_at, withdrawn_at, reminded_at)
        SELECT recipient, event_id, message_id, state, priority, read_at, acked_at, delivered_at, expires_at,
            withdrawn_at, reminded_at FROM mail;
    DROP TABLE mail;
    ALTER TABLE mail_by_event RENAME TO mail;
    CREATE INDEX idx_mail_queued ON mail(recipient, event_id) WHERE delivered_at IS NULL AND withdrawn_at IS NULL;
    "#,
    // 6 (issue 15): the host whose daemon made an attempt; its worktree lives there.
    r#"
    ALTER TABLE attempts ADD COLUMN host TEXT;
    "#,
    // 7 (issue 14): agent credentials. Only a hash of each secret is
    // kept (SHA-256 of a 256-bit random secret, so no salt or slow hash is needed).
    r#"
    CREATE TABLE agent_credentials (
        agent_id TEXT PRIMARY KEY,
        secret_hash TEXT NOT NULL,
        created_at TEXT NOT NULL
    ) WITHOUT ROWID;
    "#,
    // 8 (issue 11): typed control messages. Messages keep
    // their type; events keep the type and recipient of the message they recorded, so
    // filters select by them (`message_types`, `to`), with an index for resuming a typed
    // mailbox from a cursor; `requests` maps a request id to the thread it opened.
    r#"
    ALTER TABLE messages ADD COLUMN msg_type TEXT;
    ALTER TABLE events ADD COLUMN message_type TEXT;
    ALTER TABLE events ADD COLUMN message_to TEXT;
    UPDATE events SET message_to = (SELECT m.to_agent FROM messages m WHERE m.message_id = events.message_id)
        WHERE message_id IS NOT NULL;
    CREATE INDEX idx_events_typed ON events(message_to, event_id) WHERE message_type IS NOT NULL;
    CREATE TABLE requests (
        request_id TEXT PRIMARY KEY,
        msg_type TEXT NOT NULL,
        thread_id TEXT NOT NULL,
        message_id TEXT NOT NULL,
        from_agent TEXT NOT NULL,
        to_agent TEXT NOT NULL,
        run_id TEXT NOT NULL,
        task_id TEXT NOT NULL,
        created_at TEXT NOT NULL
    ) WITHOUT ROWID;
    CREATE INDEX idx_requests_to ON requests(to_agent, created_at);
    CREATE INDEX idx_requests_run ON requests(run_id, created_at);
    CREATE INDEX idx_requests_thread ON requests(thread_id);
    "#,
    // 9 (issue 13): full-text search over messages, and stacked tasks. Search: an FTS5 index (bm25)
    // over each message's thread subject, summary and body, with external content (a view,
    // so nothing is stored twice), fed off the send path: `search_state.indexed_rowid` is
    // the last message indexed, advanced in the transaction that indexes, so a crash loses
    // no result (what is not indexed yet is indexed after the restart). Stacked tasks: a
    // run's repository, base branch and revision, and its integration branch, where done
    // code tasks are merged (`auto_merge` merges them as they finish); a task's merge state
    // (pending, merged, conflict) and the task whose merge conflict a task resolves.
    r#"
    CREATE TABLE search_state (
        key TEXT PRIMARY KEY,
        value INTEGER NOT NULL
    ) WITHOUT ROWID;
    INSERT INTO search_state (key, value) VALUES ('indexed_rowid', 0);
    CREATE VIEW search_docs AS
        SELECT m.rowid AS doc_id, t.subject AS subject, m.summary AS summary, m.body AS body
        FROM messages m JOIN threads t ON t.thread_id = m.thread_id;
    CREATE VIRTUAL TABLE messages_fts USING fts5(
        subject, summary, body,
        content = 'search_docs', content_rowid = 'doc_id',
        tokenize = 'porter unicode61 remove_diacritics 2'
    );
    ALTER TABLE runs ADD COLUMN auto_merge INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE runs ADD COLUMN repo TEXT;
    ALTER TABLE runs ADD COLUMN base_branch TEXT;
    ALTER TABLE runs ADD COLUMN base_rev TEXT;
    ALTER TABLE runs ADD COLUMN integration_branch TEXT;
    ALTER TABLE tasks ADD COLUMN merge_state TEXT;
    ALTER TABLE tasks ADD COLUMN merge_commit TEXT;
    ALTER TABLE tasks ADD COLUMN resolves TEXT;
    CREATE INDEX idx_tasks_merge ON tasks(run_id, merge_state) WHERE merge_state IS NOT NULL;
    "#,
    // 10 (issue 19): launched sessions, the worker processes a launch bridge starts for
    // attempts (`launch.*`): pid, client, host, log, and how each ended.
    r#"
    CREATE TABLE launch_sessions (
        session_id TEXT PRIMARY KEY,
        run_id TEXT NOT NULL,
        task_id TEXT NOT NULL,
        attempt INTEGER NOT NULL,
        thread_id TEXT NOT NULL,
        agent TEXT NOT NULL,
        client TEXT NOT NULL,
        pid INTEGER NOT NULL,
        host TEXT NOT NULL,
        launcher TEXT NOT NULL,
        cwd TEXT NOT NULL,
        log_path TEXT NOT NULL,
        tmux_window TEXT,
        state TEXT NOT NULL,
        started_at TEXT NOT NULL,
        ended_at TEXT,
        exit_code INTEGER,
        signal INTEGER,
        reason TEXT,
        log_tail TEXT
    ) WITHOUT ROWID;
    CREATE INDEX idx_launch_sessions_run ON launch_sessions(run_id, started_at);
    CREATE INDEX idx_launch_sessions_running ON launch_sessions(state, started_at) WHERE state = 'running';
    "#,
    // 11 (issue 36): the merge queue on a run's integration branch (its verify command,
    // approval and merge retries; a candidate per done attempt) and review comments on
    // task diffs.
    r#"
    ALTER TABLE runs ADD COLUMN verify TEXT;
    ALTER TABLE runs ADD COLUMN require_approval INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE runs ADD COLUMN merge_retries INTEGER NOT NULL DEFAULT 2;
    ALTER TABLE tasks ADD COLUMN verify TEXT;
    CREATE TABLE merge_queue (
        run_id TEXT NOT NULL,
        task_id TEXT NOT NULL,
        attempt INTEGER NOT NULL,
        branch TEXT NOT NULL,
        state TEXT NOT NULL,
        seq INTEGER NOT NULL DEFAULT 0,
        verify TEXT,
        tip TEXT,
        commit_id TEXT,
        verifications INTEGER NOT NULL DEFAULT 0,
        exit_code INTEGER,
        output TEXT,
        log_path TEXT,
        approved_by TEXT,
        reason TEXT,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        PRIMARY KEY (run_id, task_id, attempt)
    ) WITHOUT ROWID;
    CREATE INDEX idx_merge_queue_order ON merge_queue(run_id, seq, created_at);
    CREATE INDEX idx_merge_queue_state ON merge_queue(state) WHERE state IN ('queued', 'verifying');
    CREATE TABLE review_comments (
        comment_id TEXT PRIMARY KEY,
        run_id TEXT NOT NULL,
        task_id TEXT NOT NULL,
        attempt INTEGER NOT NULL,
        path TEXT NOT NULL,
        line INTEGER NOT NULL,
        side TEXT NOT NULL,
        body TEXT NOT NULL,
        author TEXT NOT NULL,
        created_at TEXT NOT NULL,
        sent_in TEXT
    ) WITHOUT ROWID;
    CREATE INDEX idx_review_comments_task ON review_comments(run_id, task_id, attempt, created_at);
    "#,
    // 12 (issue 33; after issue 36's 11): usage and budgets of launched sessions
    // (`launch.usage`, `launch.budgetSet`): each session's cumulative tokens and cost (in
    // millionths of a dollar) and its budget, and each run's budget and when it was reached.
    r#"
    CREATE TABLE launch_usage (
        session_id TEXT PRIMARY KEY,
        run_id TEXT NOT NULL,
        task_id TEXT NOT NULL,
        agent TEXT NOT NULL,
        input_tokens INTEGER NOT NULL DEFAULT 0,
        output_tokens INTEGER NOT NULL DEFAULT 0,
        cache_read_tokens INTEGER NOT NULL DEFAULT 0,
        cache_write_tokens INTEGER NOT NULL DEFAULT 0,
        cost_micro_usd INTEGER NOT NULL DEFAULT 0,
        max_cost_micro_usd INTEGER,
        max_tokens INTEGER,
        updated_at TEXT NOT NULL
    ) WITHOUT ROWID;
    CREATE INDEX idx_launch_usage_run ON launch_usage(run_id, updated_at);
    CREATE TABLE run_budgets (
        run_id TEXT PRIMARY KEY,
        max_cost_micro_usd INTEGER,
        max_tokens INTEGER,
        reached_at TEXT
    ) WITHOUT ROWID;
    "#,
    // 13 (issue 33): how each launched session takes its work (`live` or `one_shot`);
    // sessions recorded before are one-shot.
    r#"
    ALTER TABLE launch_sessions ADD COLUMN mode TEXT NOT NULL DEFAULT 'one_shot';
    "#,
];

/// The schema version this binary writes.
pub fn latest_version() -> i64 {
    MIGRATIONS.len() as i64
}

/// Apply every migration newer than the database's version, each in its own transaction.
/// Refuses a database written by a newer coordd.
pub fn migrate(conn: &mut Connection) -> rusqlite::Result<i64> {
    let current: i64 = conn.query_row("PRAGMA user_version", [], |r| r.get(0))?;
    if current > latest_version() {
        return Err(rusqlite::Error::SqliteFailure(
            rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_MISMATCH),
            Some(format!(
                "database schema version {current} is newer than this coordd supports ({})",
                latest_version()
            )),
        ));
    }
    for (i, sql) in MIGRATIONS.iter().enumerate().skip(current as usize) {
        let tx = conn.transaction()?;
        tx.execute_batch(sql)?;
        tx.pragma_update(None, "user_version", (i + 1) as i64)?;
        tx.commit()?;
    }
    Ok(latest_version())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn migrates_fresh_db_and_is_idempotent() {
        let mut conn = Connection::open_in_memory().unwrap();
        assert_eq!(migrate(&mut conn).unwrap(), latest_version());
        assert_eq!(migrate(&mut conn).unwrap(), latest_version());
        let v: i64 = conn.query_row("PRAGMA user_version", [], |r| r.get(0)).unwrap();
        assert_eq!(v, latest_version());
    }

    #[test]
    fn refuses_newer_schema() {
        let mut conn = Connection::open_in_memory().unwrap();
        conn.pragma_update(None, "user_version", 999).unwrap();
        assert!(migrate(&mut conn).is_err());
    }
}
