//! The stage of `orch demo` and `orch demo --launch`: the scratch project, the leader's
//! plan, each command printed shell-quoted before it runs (a `--json` one's envelope shown),
//! and the closing lines that stop the daemon or say how, then point to the README's quick
//! start and docs/orch.md.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use coord_cli::CliError;
use serde_json::Value;

use coord_cli::{Outcome, Res};

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

/// Put the directory of `launch` (where this `orch` is: cargo puts them side by side) first
/// on the `PATH` of `c`, so the sessions it starts find `inbox` and `orch` there.
pub(crate) fn bins_first(c: &mut Command, launch: &Path) -> Result<(), CliError> {
    if let Some(bin) = launch.parent().filter(|p| !p.as_os_str().is_empty()) {
        let path = std::env::var_os("PATH").unwrap_or_default();
        let joined = std::env::join_paths(std::iter::once(bin.to_path_buf()).chain(std::env::split_paths(&path)))
            .map_err(|e| fail("PATH", e))?;
        c.env("PATH", joined);
    }
    Ok(())
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
    pub(crate) fn take(&self, who: &str) -> Result<(String, PathBuf), CliError> {
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

    pub(crate) fn commit(&self, who: &str, wt: &Path, file: &str, text: &str, message: &str) -> Result<(), CliError> {
        println!("{who:>9} $ (edits {file})");
        std::fs::write(wt.join(file), text).map_err(|e| fail("cannot write", e))?;
        self.git(who, wt, &["add", "-A"])?;
        self.git(who, wt, &["commit", "-q", "-m", message])?;
        self.git(who, wt, &["show", "--stat", "--format=%s", "HEAD"])?;
        Ok(())
    }
}

impl Demo {
    /// The project and the leader's plan: a git repository with one commit on main, and the
    /// run `demo` (auto-merged) with `data` for worker-a and `api`, which depends on it, for
    /// worker-b.
    pub(crate) fn plan(&self) -> Result<(), CliError> {
        self.project()?;
        self.plan_run()
    }

    /// The project: a git repository with one commit on main, and coordd's files.
    pub(crate) fn project(&self) -> Result<(), CliError> {
        let (d, dir) = (self, &self.dir);
        d.say("A project: a git repository with one commit on main");
        d.git("you", dir, &["init", "-q", "-b", "main"])?;
        d.git("you", dir, &["config", "user.name", "Demo"])?;
        d.git("you", dir, &["config", "user.email", "demo@example.com"])?;
        std::fs::write(dir.join("README.md"), "# Greetings\n").map_err(|e| fail("cannot write", e))?;
        d.git("you", dir, &["add", "README.md"])?;
        d.git("you", dir, &["commit", "-q", "-m", "Start"])?;
        // The project is this directory, even inside another project's.
        std::fs::create_dir_all(dir.join(".agents")).map_err(|e| fail("cannot create .agents", e))?;
        d.inbox("you", &["init"])?;
        Ok(())
    }

    /// The leader's plan (see [`Demo::plan`]).
    fn plan_run(&self) -> Result<(), CliError> {
        let d = self;
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
    pub(crate) fn close(&self, stop: bool) -> Res {
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
