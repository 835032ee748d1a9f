//! `orch demo`: a leader and two workers take a run from plan to merged code, in a scratch
//! git repository, through the real `orch`, `inbox` and `git` commands, each printed before
//! it runs. The scenario is built in: worker-a writes the greetings (and asks the leader a
//! question on the way), worker-b builds on them once they are merged into the run's
//! integration branch, and the run is merged into `main`. Each command is printed
//! shell-quoted, so a line can be pasted as it is, and a `--json` command's envelope is
//! shown. The daemon it starts is left running (the demo says how to stop it) unless
//! `--stop` is given; the demo ends pointing to the README's quick start and docs/orch.md.

use std::path::{Path, PathBuf};

use coord_cli::CliError;

use coord_cli::{Command, Ctx, Res};
use kit::{Demo, RUN, fail, sibling};

pub(super) mod kit;
mod launch;
mod team;

/// Watch a leader and two workers take a run from plan to merged code, in a scratch
/// git repository (the real `inbox` and `orch` commands, printed as they run).
#[derive(clap::Args)]
#[command(
    after_help = "Examples:\n  orch demo               # in a new temporary directory; says how to stop what it leaves running\n  orch demo --launch      # the same run, its workers started by coord-launch with a scripted worker\n  orch demo --team        # a scripted lead plans, answers and merges; coord-launch runs lead and workers"
)]
pub struct Args {
    /// Where to make the demo's git repository (default: a new temporary directory).
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
    /// Stop the demo's daemon at the end (default: leave it running, to look around).
    #[arg(long)]
    pub stop: bool,
    /// Let the launch bridge `coord-launch` start the workers' sessions, each running a small
    /// built-in script (the `command` client): no API key needed.
    #[arg(long)]
    pub launch: bool,
    /// An agent leads: `coord-launch --lead` runs a scripted lead (the `command` client) that
    /// plans two tasks, answers a worker's question and merges, with scripted workers; no
    /// API key needed.
    #[arg(long, conflicts_with = "launch")]
    pub team: bool,
}

impl Command for Args {
    async fn run(self, ctx: &Ctx) -> Res {
        run(ctx, self).await
    }
}

async fn run(_ctx: &Ctx, a: Args) -> Res {
    let dir = match a.dir {
        Some(d) => {
            std::fs::create_dir_all(&d).map_err(|e| fail("cannot create the directory", e))?;
            if std::fs::read_dir(&d).map_err(|e| fail("cannot read the directory", e))?.next().is_some() {
                return Err(CliError::Invalid(format!(
                    "demo: {} is not empty; give an empty or new directory",
                    d.display()
                )));
            }
            d
        }
        None => tempfile::Builder::new()
            .prefix("coordd-demo-")
            .tempdir()
            .map_err(|e| fail("no temporary directory", e))?
            .keep(),
    };
    let dir = std::fs::canonicalize(&dir).map_err(|e| fail("bad directory", e))?;
    let d = Demo { dir: dir.clone(), inbox: sibling("inbox"), orch: sibling("orch") };
    if a.team {
        println!("orch demo --team: a lead and two workers, all started by coord-launch, in {}", dir.display());
        d.project()?;
        team::run(&d)?;
    } else if a.launch {
        println!("orch demo --launch: a leader, and two workers that coord-launch starts, in {}", dir.display());
        d.plan()?;
        launch::run(&d)?;
    } else {
        println!("orch demo: a leader and two workers, in {}", dir.display());
        d.plan()?;
        by_hand(&d)?;
    }
    d.close(a.stop)
}

/// The workers' part played by hand, each command printed: take, ask, commit, finish.
fn by_hand(d: &Demo) -> Result<(), CliError> {
    let dir = d.dir.clone();
    let disp = d.json("leader", &d.orch, &["dispatch", "--run", RUN, "--all-ready", "--json"])?;
    let cursor = disp["event_id"].to_string();
    println!("            dispatched `data` to worker-a in its own worktree; waits start after event {cursor}");

    d.say("worker-a takes `data`, and asks a question");
    let (thread, wt) = d.take("worker-a")?;
    let asked = d.json(
        "worker-a",
        &d.inbox,
        &[
            "update",
            "--agent",
            "worker-a",
            "--thread",
            &thread,
            "--status",
            "blocked",
            "--summary",
            "Which languages?",
            "--json",
        ],
    )?;
    let asked_at = asked["event_id"].to_string();
    let waiter = d.spawn("worker-a", &d.inbox, &["wait-reply", "--thread", &thread, "--after-event", &asked_at])?;

    d.say("The leader's wait wakes on the question; the answer wakes worker-a's wait");
    d.orch(&["wait", "--run", RUN, "--after-event", &cursor])?;
    d.orch(&["answer", "--run", RUN, "--task", "data", "--summary", "English and French"])?;
    let woke = waiter.wait_with_output().map_err(|e| fail("wait-reply", e))?;
    for line in String::from_utf8_lossy(&woke.stdout).lines() {
        println!("            {line}");
    }

    d.say("worker-a commits (hooks and session files stay out of the commit) and finishes");
    d.commit("worker-a", &wt, "greetings.txt", "hello\nbonjour\n", "Add greetings")?;
    let finished = d.json(
        "worker-a",
        &d.inbox,
        &["done", "--agent", "worker-a", "--thread", &thread, "--summary", "Greetings written", "--json"],
    )?;
    let done_at = finished["event_id"].to_string();

    d.say("Merged into the integration branch at once (--auto-merge), so `api` is ready");
    let v = d.json("leader", &d.orch, &["wait", "--run", RUN, "--after-event", &done_at, "--json"])?;
    let after_done = v["next_event_id"].to_string();
    println!(
        "            {} {}",
        v["event"]["event_type"].as_str().unwrap_or("?"),
        v["event"]["summary"].as_str().unwrap_or("")
    );
    d.orch(&["wait", "--run", RUN, "--after-event", &after_done])?;
    d.orch(&["status", "--run", RUN])?;

    d.say("worker-b gets `api` in a worktree branched from the integration branch: data is there");
    d.orch(&["dispatch", "--run", RUN, "--all-ready"])?;
    let (thread_b, wt_b) = d.take("worker-b")?;
    d.run("worker-b", Path::new("cat"), &["greetings.txt"], &wt_b)?;
    d.commit(
        "worker-b",
        &wt_b,
        "greet.sh",
        "#!/bin/sh\nwhile read g; do echo \"$g, world\"; done < greetings.txt\n",
        "Print the greetings",
    )?;
    d.inbox("worker-b", &["done", "--agent", "worker-b", "--thread", &thread_b, "--summary", "greet.sh prints them"])?;

    d.say("The leader merges the run into main");
    d.orch(&["run", "finish", "--run", RUN])?;
    d.git("you", &dir, &["log", "--oneline", "--graph", "main"])?;
    d.git("you", &dir, &["status", "--short"])?;

    Ok(())
}
