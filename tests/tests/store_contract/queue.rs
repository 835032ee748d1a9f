//! The storage contract's merge queue cases: a run's queue settings, candidates (with the
//! queries the queue runs on them) and review comments, read back as written on both
//! backends.

use super::*;

fn candidate(task: &str, attempt: u32, state: &str, seq: i64) -> MergeCandidate {
    MergeCandidate {
        run_id: "R1".into(),
        task_id: task.into(),
        attempt,
        branch: format!("orch/R1/{task}/a{attempt}"),
        state: parse(state),
        seq,
        position: None,
        verify: some("./verify.sh"),
        tip: some("abc"),
        commit: some("def"),
        verifications: 2,
        exit_code: Some(-3),
        output: some("last\nlines"),
        log_path: some("/logs/K1-a1-v2.log"),
        approved_by: some("overseer"),
        reason: some("why"),
        created_at: text(10),
        updated_at: text(11),
    }
}

/// A run's settings, candidates (replaced in place, listed in queue order, counted) and a
/// comment marked sent.
pub(super) async fn queue_records_read_back_as_written(s: &Opened) {
    let store = &*s.store;
    let run = Run {
        run_id: "R1".into(),
        goal: "g".into(),
        status: parse("active"),
        created_by: "lead".into(),
        auto_retry: 0,
        created_at: text(0),
        updated_at: text(1),
        auto_merge: false,
        repo: None,
        base_branch: None,
        base_rev: None,
        integration_branch: None,
        verify: None,
        require_approval: false,
        merge_retries: 2,
    };
    let edited =
        Run { verify: some("make check"), require_approval: true, auto_merge: true, merge_retries: 0, ..run.clone() };
    let (queued, verifying, failed) =
        (candidate("K2", 1, "queued", 2), candidate("K1", 1, "verifying", 1), candidate("K1", 2, "failed", 0));
    let comment = ReviewComment {
        comment_id: "rc_1".into(),
        run_id: "R1".into(),
        task_id: "K1".into(),
        attempt: 1,
        path: "src/lib.rs".into(),
        line: 12,
        side: "old".into(),
        body: "why\nthis".into(),
        author: "overseer".into(),
        created_at: text(20),
        sent_in: None,
    };
    let (r, e, cs, c) =
        (run.clone(), edited.clone(), [failed.clone(), queued.clone(), verifying.clone()], comment.clone());
    write(store, move |tx| {
        tx.runs_mut().run_insert(&r)?;
        tx.queue_mut().run_set_settings(&e)?;
        for c in &cs {
            tx.queue_mut().candidate_put(&MergeCandidate { state: parse("review"), ..c.clone() })?;
            tx.queue_mut().candidate_put(c)?;
        }
        tx.queue_mut().comment_insert(&c)?;
        tx.queue_mut().comments_mark_sent("R1", "K1", 1, "msg_1")
    })
    .await
    .unwrap();
    let got = read(store, |tx| {
        let served = [parse("queued"), parse("verifying")];
        Ok((
            tx.runs().run("R1")?.unwrap(),
            tx.queue().candidate("R1", "K1", 1)?.unwrap(),
            tx.queue().candidate_latest("R1", "K1")?.unwrap(),
            tx.queue().candidates_in(Some("R1"), &served)?,
            tx.queue().candidates_in(None, &[parse("failed")])?,
            tx.queue().candidates_count("R1", "K1", &[parse("failed"), parse("conflict")])?,
            tx.queue().queue_last_seq("R1")?,
            tx.queue().comments_of("R1", "K1", 1)?,
        ))
    })
    .await
    .unwrap();
    assert_eq!(got.0, Run { updated_at: edited.updated_at.clone(), ..edited });
    assert_eq!(got.1, verifying);
    assert_eq!(got.2, failed, "the newest attempt's");
    assert_eq!(got.3, vec![verifying, queued], "in queue order");
    assert_eq!(got.4, vec![failed]);
    assert_eq!((got.5, got.6), (1, 2));
    assert_eq!(got.7, vec![ReviewComment { sent_in: some("msg_1"), ..comment }]);
}
