//! `orch demo --team`: an agent leads. `coord-launch --lead command` creates the run, starts
//! a scripted lead (the `command` client: a shell script in place of a model) in the main
//! checkout, and starts scripted workers for the lead's dispatches. The lead plans `data`
//! and `api` (after `data`), dispatches, answers worker-a's question when it is pushed into
//! its session, merges each done task, dispatches `api` once it is ready, and merges the run
//! into `main`; the bridge exits 0 when the run is done. No API key is needed.

use std::process::Stdio;

use coord_cli::CliError;

use super::kit::{Demo, RUN, bins_first, fail, quoted, sibling};

/// The scripted lead: what a lead agent does through `orch`, reading what needs it from its
/// session's input (one JSON line per turn, docs/launch.md), never polling.
const LEAD: &str = r#"#!/bin/sh
# The demo's scripted lead: plan, dispatch, then act on each turn pushed into the session.
IFS= read -r first    # the lead prompt (the goal, the run, how to lead)
orch task add --run "$COORD_RUN" --id data --title 'Write the greetings' --assign-to worker-a
orch task add --run "$COORD_RUN" --id api --title 'Print them' --assign-to worker-b --depends-on data
orch dispatch --run "$COORD_RUN" --all-ready
while IFS= read -r turn; do
  case "$turn" in
    *'task.blocked data'*) orch answer --run "$COORD_RUN" --task data --summary 'English and French' ;;
    *'task.done '*) orch merge --run "$COORD_RUN" ;;
    *'task.ready api'*) orch dispatch --run "$COORD_RUN" --task api ;;
    *'run.done'*) orch run finish --run "$COORD_RUN"; break ;;
  esac
done
"#;

/// worker-a's question, live: asked, then the answer read from the session's input.
const ASK: &str = r#"  inbox update --agent "$COORD_AGENT" --thread "$COORD_THREAD" --status blocked --summary 'Which languages?'
  while IFS= read -r turn; do case "$turn" in *'"kind":"answer"'*) break ;; esac; done
"#;

/// The scripted worker, live: its task comes as the first line of its input, the lead's
/// answer as a later one; it reads on until the bridge closes the session.
fn worker() -> String {
    let mut w = super::launch::worker("IFS= read -r task\n", ASK);
    w.push_str("while IFS= read -r turn; do :; done    # until the bridge closes the session\n");
    w
}

/// Write a script under `.agents/` and show it.
fn script(d: &Demo, name: &str, text: &str) -> Result<String, CliError> {
    let path = d.dir.join(".agents").join(name);
    std::fs::write(&path, text).map_err(|e| fail("cannot write", e))?;
    for line in text.lines() {
        println!("            {line}");
    }
    Ok(format!("sh {}", quoted(&[&path.display().to_string()])))
}

/// Run the team: one command, then what it left behind.
pub(crate) fn run(d: &Demo) -> Result<(), CliError> {
    d.say("The lead's script, which the lead session runs (in place of an agent such as Claude Code)");
    let lead = script(d, "demo-lead.sh", LEAD)?;
    d.say("The workers' script, which each worker session runs");
    let worker = script(d, "demo-team-worker.sh", &worker())?;

    d.say("One command: coord-launch creates the run, starts the lead, and starts a worker per dispatch");
    let launch = sibling("coord-launch");
    let args = [
        "--lead",
        "command",
        "--goal",
        "Greet people in two languages",
        "--run",
        RUN,
        "--lead-command",
        &lead,
        "--command",
        &worker,
        "--live",
        "--grace-seconds",
        "30",
    ];
    let mut c = d.command("you", &launch, &args, &d.dir);
    bins_first(&mut c, &launch)?;
    let out = c
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .output()
        .map_err(|e| fail(&format!("cannot start {}", launch.display()), e))?;
    for line in String::from_utf8_lossy(&out.stderr).lines().chain(String::from_utf8_lossy(&out.stdout).lines()) {
        println!("            {line}");
    }
    if !out.status.success() {
        return Err(fail("coord-launch failed", out.status));
    }

    d.say("What the lead did, from its log");
    let log = d.dir.join(".agents/launch").join(RUN).join("lead.log");
    let text = std::fs::read_to_string(&log).map_err(|e| fail("cannot read the lead's log", e))?;
    for line in text.lines() {
        println!("            {line}");
    }

    d.say("Each session, and the run merged into main by the lead");
    d.orch(&["status", "--run", RUN])?;
    d.git("you", &d.dir, &["log", "--oneline", "--graph", "main"])?;
    Ok(())
}
