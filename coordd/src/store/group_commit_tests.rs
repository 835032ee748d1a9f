//! The engine's own paths, over a scripted [`Conn`] that records what it was asked: a
//! clean batch, a job failing before and after writing, held writes that fail at the end
//! of the batch, and a transaction lost midway.

use super::group_commit::{self, Conn, JobRun, Outcome};
use crate::error::{Error, Result};
use crate::store::Tx;
use crate::store::backend::{Job, WriteJob};

/// A job that succeeds or fails, as told.
struct Scripted {
    ok: bool,
}

impl Job for Scripted {
    fn run(&mut self, _tx: Option<&mut dyn Tx>) -> bool {
        self.ok
    }
    fn complete(self: Box<Self>, _commit_err: Option<&Error>) {}
}

#[derive(Default)]
struct Fake {
    log: Vec<String>,
    /// Held writes fail at the first flush.
    flush_fails: bool,
    /// A job that fails has written before failing.
    failed_jobs_wrote: bool,
    /// The transaction is gone once this many jobs ran.
    lost_after: Option<usize>,
    ran: usize,
}

impl Conn for Fake {
    fn begin(&mut self, per_job: bool) -> Result<()> {
        self.log.push(format!("begin per_job={per_job}"));
        Ok(())
    }
    fn flush(&mut self) -> Result<()> {
        self.log.push("flush".into());
        if std::mem::take(&mut self.flush_fails) {
            return Err(Error::Storage("duplicate key".into()));
        }
        Ok(())
    }
    fn savepoint(&mut self) -> Result<()> {
        self.log.push("savepoint".into());
        Ok(())
    }
    fn release(&mut self) -> Result<()> {
        self.log.push("release".into());
        Ok(())
    }
    fn rollback_to(&mut self) -> Result<()> {
        self.log.push("rollback_to".into());
        Ok(())
    }
    fn commit(&mut self) -> Result<()> {
        self.log.push("commit".into());
        Ok(())
    }
    fn rollback(&mut self) {
        self.log.push("rollback".into());
    }
    fn run(&mut self, job: &mut WriteJob) -> JobRun {
        self.ran += 1;
        let ok = job.run(None);
        self.log.push(format!("job ok={ok}"));
        JobRun { ok, dirty: !ok && self.failed_jobs_wrote, events: Vec::new() }
    }
    fn lost(&mut self) -> Option<Error> {
        self.lost_after.filter(|n| self.ran >= *n).map(|_| Error::WriteFailed("disk full".into()))
    }
}

fn jobs(oks: &[bool]) -> Vec<WriteJob> {
    oks.iter().map(|&ok| Box::new(Scripted { ok }) as WriteJob).collect()
}

#[test]
fn a_clean_batch_begins_flushes_and_commits_once_without_savepoints() {
    let mut c = Fake::default();
    let out = group_commit::run(&mut c, &mut jobs(&[true, true]));
    assert!(matches!(out, Outcome::Committed(_)), "{out:?}");
    assert_eq!(c.log, ["begin per_job=false", "job ok=true", "job ok=true", "flush", "commit"]);
}

#[test]
fn held_writes_that_fail_at_the_end_run_the_batch_again_one_savepoint_per_job() {
    let mut c = Fake { flush_fails: true, ..Default::default() };
    let out = group_commit::run(&mut c, &mut jobs(&[true]));
    assert!(matches!(out, Outcome::Committed(_)), "{out:?}");
    assert_eq!(
        c.log,
        [
            "begin per_job=false",
            "job ok=true",
            "flush",
            "rollback",
            "begin per_job=true",
            "savepoint",
            "job ok=true",
            "release",
            "flush",
            "commit"
        ]
    );
}

#[test]
fn a_lost_transaction_fails_the_batch_with_why_it_was_lost() {
    let mut c = Fake { lost_after: Some(1), ..Default::default() };
    let out = group_commit::run(&mut c, &mut jobs(&[true, true]));
    let Outcome::Failed(e) = out else { panic!("{out:?}") };
    assert!(matches!(e, Error::WriteFailed(_)), "{e:?}");
    assert_eq!(c.log, ["begin per_job=false", "job ok=true", "rollback"]);
}

#[test]
fn a_job_failing_before_writing_needs_no_second_run() {
    let mut c = Fake::default();
    let out = group_commit::run(&mut c, &mut jobs(&[true, false, true]));
    assert!(matches!(out, Outcome::Committed(_)), "{out:?}");
    assert_eq!(c.log, ["begin per_job=false", "job ok=true", "job ok=false", "job ok=true", "flush", "commit"]);
}

#[test]
fn a_job_failing_after_writing_is_rolled_back_alone_in_a_second_run() {
    let mut c = Fake { failed_jobs_wrote: true, ..Default::default() };
    let out = group_commit::run(&mut c, &mut jobs(&[true, false]));
    assert!(matches!(out, Outcome::Committed(_)), "{out:?}");
    assert_eq!(
        c.log,
        [
            "begin per_job=false",
            "job ok=true",
            "job ok=false",
            "rollback",
            "begin per_job=true",
            "savepoint",
            "job ok=true",
            "release",
            "savepoint",
            "job ok=false",
            "rollback_to",
            "flush",
            "commit"
        ]
    );
}
