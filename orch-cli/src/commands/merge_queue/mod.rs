//! `orch merge-queue`: the verifier of a run's merge queue, a thin client above the
//! daemon (which runs no user command). It asks for the next job (`orch.queueNext`: the
//! head candidate, built on the integration tip and checked out in the run's scratch
//! worktree), runs the run's verify command there with a timeout and a log under
//! `.agents/merge-queue/<run>/logs/`, and reports (`orch.queueReport`): the daemon then
//! moves the integration branch to exactly that commit, or sends the task back to its
//! worker with the output. With nothing queued it waits on the run's events (a candidate
//! queued, a review approved, the run edited or ended), never polling. The run's
//! cancellation stops a running verify (its whole process group).
//!
//! A launcher (the bridge) can start one per run: `orch merge-queue --run R --until-done`.

mod verify;

use super::prelude::*;
use std::time::Duration;

use serde_json::json;
use tokio::sync::{mpsc, watch};

/// Verify and merge a run's merge queue: run its verify command on each candidate's merge
/// result, and report (keeps running; `--until-done` ends with the run).
#[derive(clap::Args)]
#[command(
    after_help = "Examples:\n  orch run create --goal \"Blog MVP\" --id R1 --auto-merge --verify 'cargo test'\n  orch merge-queue --run R1                      # verify each merge, until Ctrl-C or the run is cancelled\n  orch merge-queue --run R1 --until-done --timeout-seconds 900\n\nOne verifier per run. A verify runs in .agents/merge-queue/R1/worktree (checked out at the\nmerge result; ignored files such as build caches are kept between runs), with COORD_RUN,\nCOORD_TASK, COORD_ATTEMPT, COORD_VERIFY_TIP, COORD_VERIFY_COMMIT and COORD_VERIFY_BRANCH set,\nits output in .agents/merge-queue/R1/logs/<task>-a<attempt>-v<n>.log."
)]
pub struct Args {
    /// The run.
    #[arg(long, value_name = "RUN_ID")]
    pub run: String,
    /// Stop a verify (its whole process group) after this long; it counts as failed.
    #[arg(long, default_value_t = 1800, value_parser = clap::value_parser!(u64).range(1..=604_800))]
    pub timeout_seconds: u64,
    /// SIGTERM to SIGKILL when a verify is stopped.
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u64).range(0..=3600))]
    pub grace_seconds: u64,
    /// Exit once the run is done (every task done and merged) or cancelled.
    #[arg(long)]
    pub until_done: bool,
}

/// What the loop follows: new work, a setting that changes what is due, the run's end.
const FOLLOWED: &[EventType] = &[
    EventType::TaskMergeQueued,
    EventType::TaskApproved,
    EventType::RunEdited,
    EventType::RunDone,
    EventType::RunFailed,
    EventType::RunResumed,
    EventType::RunCancelled,
];

impl Command for Args {
    async fn run(self, ctx: &Ctx) -> Res {
        let c = ctx.client().await?;
        let run_id = self.run.clone();
        c.run_show(RunRef { run_id: run_id.clone() }).await?;
        // Follow the run from now (before the first look at the queue: nothing is missed).
        let filter = EventFilter { run_id: Some(run_id.clone()), event_types: FOLLOWED.to_vec(), ..Default::default() };
        let mut sub = c.subscribe(filter).await?;
        let (events, mut rx) = mpsc::channel(64);
        tokio::spawn(async move {
            while let Some(ev) = sub.next().await {
                let end = ev.is_err();
                if events.send(ev).await.is_err() || end {
                    return;
                }
            }
        });
        // Ctrl-C (SIGINT), heard from the start to the end, whatever the loop is doing: once
        // listened for, it no longer ends the process by itself.
        let (interrupt, mut interrupted) = watch::channel(false);
        tokio::spawn(async move {
            if tokio::signal::ctrl_c().await.is_ok() {
                let _ = interrupt.send(true);
            }
            interrupt.closed().await;
        });
        let limits = (Duration::from_secs(self.timeout_seconds), Duration::from_secs(self.grace_seconds));
        let mut verified = 0u32;
        let why = loop {
            let next = match c.queue_next(QueueNextParams { run_id: run_id.clone() }).await {
                Ok(n) => n,
                Err(e) => match c.run_show(RunRef { run_id: run_id.clone() }).await {
                    Ok(v) if v.run.status == RunStatus::Cancelled => break "the run was cancelled",
                    _ => return Err(e.into()),
                },
            };
            for s in &next.settled {
                say(ctx, json!({"settled": s}), || println!("{}", crate::render_queue::candidate(s)));
            }
            if let Some(job) = next.job {
                match verify_one(ctx, c, &run_id, &job, limits, (&mut rx, &mut interrupted)).await? {
                    Some(stop) => break stop,
                    None => verified += 1,
                }
                continue;
            }
            if self.until_done {
                let v = c.run_show(RunRef { run_id: run_id.clone() }).await?;
                match v.run.status {
                    RunStatus::Done if v.queue.is_empty() => break "the run is done",
                    RunStatus::Cancelled => break "the run was cancelled",
                    _ => {}
                }
            }
            // Nothing queued: wait for what could change that, or Ctrl-C.
            let ev = tokio::select! {
                ev = rx.recv() => ev,
                _ = interrupted.wait_for(|i| *i) => break "interrupted",
            };
            match ev {
                Some(Ok(ev)) if ev.event_type == EventType::RunCancelled => break "the run was cancelled",
                Some(Ok(_)) => {}
                Some(Err(e)) => return Err(e.into()),
                None => break "the event stream ended",
            }
        };
        let out = json!({"run_id": run_id, "verified": verified, "stopped": why});
        ctx.print(&out, || println!("merge queue of {run_id}: stopped ({why}) after {verified} verification(s)"));
        Ok(Outcome::Done)
    }
}

/// Run one job and report it; `Some(reason)` when the verifier must stop instead.
async fn verify_one(
    ctx: &Ctx,
    c: &coord_client::Client,
    run_id: &str,
    job: &VerifyJob,
    limits: (Duration, Duration),
    (rx, interrupted): (&mut mpsc::Receiver<Result<Event, coord_client::ClientError>>, &mut watch::Receiver<bool>),
) -> Result<Option<&'static str>, CliError> {
    let tip = &job.tip[..job.tip.len().min(10)];
    if !ctx.json {
        println!("{} attempt {}: verifying on {tip} ({}), log {}", job.task_id, job.attempt, job.verify, job.log_path);
    }
    let (stop, stopped) = watch::channel(false);
    let ran = verify::run(job, run_id, limits, stopped);
    tokio::pin!(ran);
    let mut why = None;
    let ran = loop {
        tokio::select! {
            r = &mut ran => break r,
            ev = rx.recv(), if why.is_none() => match ev {
                Some(Ok(ev)) if ev.event_type == EventType::RunCancelled => {
                    why = Some("the run was cancelled");
                    let _ = stop.send(true);
                }
                Some(Ok(_)) => {}
                Some(Err(_)) | None => {}
            },
            _ = interrupted.wait_for(|i| *i), if why.is_none() => {
                why = Some("interrupted");
                let _ = stop.send(true);
            }
        }
    };
    let ran = ran.map_err(|e| CliError::Invalid(format!("cannot run the verify command: {e}")))?;
    if ran.stopped {
        say(ctx, json!({"task_id": job.task_id, "attempt": job.attempt, "stopped": why}), || {
            println!("{}: verify stopped ({})", job.task_id, why.unwrap_or("stopped"))
        });
        return Ok(Some(why.unwrap_or("stopped")));
    }
    let p = QueueReportParams {
        run_id: run_id.to_string(),
        task_id: job.task_id.clone(),
        attempt: job.attempt,
        commit: job.commit.clone(),
        passed: ran.passed,
        exit_code: ran.exit_code,
        timed_out: ran.timed_out,
        output: ran.output.clone(),
    };
    match c.queue_report(p).await {
        Ok(r) => {
            let line = json!({"task_id": job.task_id, "attempt": job.attempt, "commit": job.commit,
                              "passed": ran.passed, "exit_code": ran.exit_code, "timed_out": ran.timed_out,
                              "seconds": ran.took.as_secs_f64(), "candidate": r.candidate, "returned": r.returned});
            say(ctx, line, || report_line(job, &ran, &r));
        }
        // A stale report (the run was edited, the task went on): the next job tells.
        Err(e) => eprintln!("orch merge-queue: {}: {e}", job.task_id),
    }
    Ok(None)
}

fn report_line(job: &VerifyJob, ran: &verify::Ran, r: &QueueReportResult) {
    let how = match (ran.passed, ran.timed_out, ran.exit_code) {
        (true, _, _) => "passed".to_string(),
        (_, true, _) => "timed out".to_string(),
        (_, _, Some(c)) => format!("failed (exit {c})"),
        _ => "killed by a signal".to_string(),
    };
    let then = match (&r.returned, r.candidate.state) {
        (Some(d), _) => format!("back to {} as attempt {}", d.assigned_to, d.attempt),
        (None, QueueState::Merged) => format!("merged at {}", r.candidate.commit.as_deref().unwrap_or("")),
        (None, QueueState::Queued) => "the integration branch moved meanwhile: queued again".to_string(),
        (None, s) => format!("{s}{}", r.candidate.reason.as_deref().map(|w| format!(": {w}")).unwrap_or_default()),
    };
    println!("{}: {how} in {:.1} s; {then}", job.task_id, ran.took.as_secs_f64());
}

/// A line of progress: JSON lines with `--json`, text otherwise.
fn say(ctx: &Ctx, v: serde_json::Value, text: impl FnOnce()) {
    if ctx.json {
        println!("{v}");
    } else {
        text();
    }
}
