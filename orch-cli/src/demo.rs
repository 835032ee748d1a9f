//! `orch demo`: a leader and two workers take a run from plan to merged code, in a scratch
//! git repository, through the real `orch`, `inbox` and `git` commands, each printed before
//! it runs. The scenario is built in: worker-a writes the greetings (and asks the leader a
//! question on the way), worker-b builds on them once they are merged into the run's
//! integration branch, and the run is merged into `main`. Each command is printed
//! shell-quoted, so a line can be pasted as it is, and a `--json` command's envelope is
//! shown. The daemon it starts is left running (the demo says how to stop it) unless
//! `--stop` is given; the demo ends pointing to the README's quick start and docs/orch.md.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use coord_cli::CliError;
use serde_json::Value;

use crate::cli::DemoArgs;
use crate::ctx::{Ctx, Outcome, Res};

/// The run the demo drives.
pub(crate) const RUN: &str = "demo";

pub(crate) struct Demo {
    pub(crate) dir: PathBuf,
    pub(crate) inbox: PathBuf,
    pub(crate) orch: PathBuf,
}

/// `args` as one line a POSIX shell reads back as the same words.
pub(crate) fn quoted(args: &[&str]) -> String {
    args.iter()
        .map(|a| shlex::try_quote(a).map_or_else(|_| (*a).to_string(), |q| q.into_owned()))
        .collect::<Vec<_>>()
        .join(" ")
}

pub(crate) fn fail(what: &str, e: impl std::fmt::Display) -> CliError {
    CliError::Internal(format!("demo: {what}: {e}"))
}

/// A binary beside this one (where `cargo install` and `cargo build` put them), else PATH.
pub(crate) fn sibling(name: &str) -> PathBuf {
    let exe = format!("{name}{}", std::env::consts::EXE_SUFFIX);
    std::env::current_exe()
        .ok()
        .and_then(|me| me.parent().map(|d| d.join(&exe)))
        .filter(|p| p.is_file())
        .unwrap_or_else(|| PathBuf::from(exe))
}

impl Demo {
    pub(crate) fn say(&self, text: &str) {
        println!("\n== {text}");
    }

    pub(crate) fn command(&self, who: &str, program: &Path, args: &[&str], dir: &Path) -> Command {
        let name = program.file_name().map_or("?".into(), |n| n.to_string_lossy().into_owned());
        println!("{who:>9} $ {name} {}", quoted(args));
        let mut c = Command::new(program);
        c.args(args).current_dir(dir).env_remove("COORD_DB").env_remove("COORD_AGENT").env_remove("COORD_TASK");
        c
    }

    /// Run a command, print its output (indented), and return its stdout.
    pub(crate) fn run(&self, who: &str, program: &Path, args: &[&str], dir: &Path) -> Result<String, CliError> {
        let out = self
            .command(who, program, args, dir)
            .output()
            .map_err(|e| fail(&format!("cannot run {}", program.display()), e))?;
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        for line in String::from_utf8_lossy(&out.stderr).lines().chain(stdout.lines()) {
            println!("            {line}");
        }
        if !out.status.success() {
            return Err(fail(&format!("`{}` failed", args.join(" ")), out.status));
        }
        Ok(stdout)
    }

    /// Run a `--json` command, print its envelope (indented), and return it.
    pub(crate) fn json(&self, who: &str, program: &Path, args: &[&str]) -> Result<Value, CliError> {
        let out = self.command(who, program, args, &self.dir).output().map_err(|e| fail("cannot run", e))?;
        let v: Value = serde_json::from_slice(&out.stdout)
            .map_err(|e| fail(&format!("`{}` printed no JSON", args.join(" ")), e))?;
        println!("            {v}");
        if !out.status.success() {
            return Err(fail(
                &format!("`{}` failed", args.join(" ")),
                v["error"]["message"].as_str().unwrap_or_default(),
            ));
        }
        Ok(v)
    }

    pub(crate) fn orch(&self, args: &[&str]) -> Result<String, CliError> {
        self.run("leader", &self.orch, args, &self.dir)
    }

    pub(crate) fn inbox(&self, who: &str, args: &[&str]) -> Result<String, CliError> {
        self.run(who, &self.inbox, args, &self.dir)
    }

    pub(crate) fn git(&self, who: &str, dir: &Path, args: &[&str]) -> Result<String, CliError> {
        self.run(who, Path::new("git"), args, dir)
    }

    pub(crate) fn spawn(&self, who: &str, program: &Path, args: &[&str]) -> Result<Child, CliError> {
        self.command(who, program, args, &self.dir)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| fail("cannot start", e))
    }

    /// A worker takes its thread: fetch, claim; returns the thread and its worktree.
    fn take(&self, who: &str) -> Result<(String, PathBuf), CliError> {
        let work = self.json(who, &self.inbox, &["fetch", "--agent", who, "--json"])?;
        let t = &work["threads"][0];
        let thread = t["thread_id"].as_str().ok_or_else(|| fail("no work", who))?.to_string();
        self.inbox(who, &["claim", "--agent", who, "--thread", &thread])?;
        let shown = self.json(who, &self.inbox, &["show", "--thread", &thread, "--json"])?;
        let wt =
            shown["messages"][0]["payload_json"]["worktree_path"].as_str().ok_or_else(|| fail("no worktree", who))?;
        println!("            (works in {wt})");
        Ok((thread, PathBuf::from(wt)))
    }

    fn commit(&self, who: &str, wt: &Path, file: &str, text: &str, message: &str) -> Result<(), CliError> {
        println!("{who:>9} $ (edits {file})");
        std::fs::write(wt.join(file), text).map_err(|e| fail("cannot write", e))?;
        self.git(who, wt, &["add", "-A"])?;
        self.git(who, wt, &["commit", "-q", "-m", message])?;
        self.git(who, wt, &["show", "--stat", "--format=%s", "HEAD"])?;
        Ok(())
    }
}

pub async fn run(_ctx: &Ctx, a: DemoArgs) -> Res {
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
    if a.launch {
        println!("orch demo --launch: a leader, and two workers that coord-launch starts, in {}", dir.display());
        d.plan()?;
        crate::demo_launch::run(&d)?;
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

impl Demo {
    /// The project and the leader's plan: a git repository with one commit on main, and the
    /// run `demo` (auto-merged) with `data` for worker-a and `api`, which depends on it, for
    /// worker-b.
    fn plan(&self) -> Result<(), CliError> {
        let (d, dir) = (self, &self.dir);
        d.say("A project: a git repository with one commit on main");
        d.git("you", dir, &["init", "-q", "-b", "main"])?;
        d.git("you", dir, &["config", "user.name", "Demo"])?;
        d.git("you", dir, &["config", "user.email", "demo@example.com"])?;
        std::fs::write(dir.join("README.md"), "# Greetings\n").map_err(|e| fail("cannot write", e))?;
        d.git("you", dir, &["add", "README.md"])?;
        d.git("you", dir, &["commit", "-q", "-m", "Start"])?;
        d.inbox("you", &["init"])?;

        d.say("The leader plans a run: `api` depends on `data`; done work is merged as it lands");
        d.orch(&["run", "create", "--id", RUN, "--goal", "Greet people in two languages", "--auto-merge"])?;
        let task = |id: &str, title: &str, worker: &str, after: &[&str]| {
            let mut args = vec!["task", "add", "--run", RUN, "--id", id, "--title", title, "--assign-to", worker];
            for dep in after {
                args.extend(["--depends-on", dep]);
            }
            d.orch(&args)
        };
        task("data", "Write the greetings", "worker-a", &[])?;
        task("api", "Print them", "worker-b", &["data"])?;
        Ok(())
    }

    /// The closing lines: stop the daemon (with `--stop`) or say how, and where to go next.
    fn close(&self, stop: bool) -> Res {
        let (d, dir) = (self, &self.dir);
        println!();
        let at = |path: &Path| quoted(&[&path.display().to_string()]);
        if stop {
            d.run("you", &sibling("coordd"), &["stop"], dir)?;
            println!("Done. The demo's daemon is stopped; remove the directory when you like: rm -rf {}", at(dir));
        } else {
            println!("Done. The demo's daemon still runs, so you can look around:");
            println!("  cd {} && orch status --run {RUN} && inbox list && inbox search greetings", at(dir));
            println!("Stop it with:  coordd --db {} stop", at(&dir.join(".agents/coord.db")));
            println!("Then remove:   rm -rf {}", at(dir));
        }
        println!("Next: the quick start in the README runs the same story in your own repository, one");
        println!("command at a time; docs/orch.md explains every orch command, and `orch --help` lists them.");
        Ok(Outcome::Done)
    }
}
