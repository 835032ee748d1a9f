//! The row mappings of the merge queue's tables, both backends' (beside `rows.rs`, in the
//! same style): `merge_queue` (one candidate per done attempt of a code task) and
//! `review_comments` (reviewers' comments on lines of an attempt's diff).

use coord_proto::types::*;

use crate::error::Result;
use crate::store::rows::{Cols, RowRead};

/// Columns of [`candidate`], from `merge_queue` (also its insert order).
pub const CANDIDATE_COLUMNS: &str = "run_id, task_id, attempt, branch, state, seq, verify, tip, commit_id, \
     verifications, exit_code, output, log_path, approved_by, reason, created_at, updated_at";

pub fn candidate(r: &dyn RowRead) -> Result<MergeCandidate> {
    Ok(MergeCandidate {
        run_id: r.s(0)?,
        task_id: r.s(1)?,
        attempt: r.u(2)?,
        branch: r.s(3)?,
        state: r.p(4)?,
        seq: r.i(5)?,
        position: None,
        verify: r.os(6)?,
        tip: r.os(7)?,
        commit: r.os(8)?,
        verifications: r.u(9)?,
        exit_code: r.oi32(10)?,
        output: r.os(11)?,
        log_path: r.os(12)?,
        approved_by: r.os(13)?,
        reason: r.os(14)?,
        created_at: r.s(15)?,
        updated_at: r.s(16)?,
    })
}

/// Columns of [`comment`], from `review_comments` (also its insert order).
pub const COMMENT_COLUMNS: &str =
    "comment_id, run_id, task_id, attempt, path, line, side, body, author, created_at, sent_in";

pub fn comment(r: &dyn RowRead) -> Result<ReviewComment> {
    Ok(ReviewComment {
        comment_id: r.s(0)?,
        run_id: r.s(1)?,
        task_id: r.s(2)?,
        attempt: r.u(3)?,
        path: r.s(4)?,
        line: r.u(5)?,
        side: r.s(6)?,
        body: r.s(7)?,
        author: r.s(8)?,
        created_at: r.s(9)?,
        sent_in: r.os(10)?,
    })
}
