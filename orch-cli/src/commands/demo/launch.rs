//! `orch demo --launch`: the demo's run, its workers started by the launch bridge
//! `coord-launch` instead of played by hand. Each session runs a small built-in script (the
//! `command` client), so no API key is needed: the script claims its thread, worker-a asks
//! the leader a question and waits for the answer, each commits its work in its worktree and
//! finishes. The leader answers, the bridge exits when the run is done, `orch status` shows
//! each session (client, pid, exit code, log), and the run is merged into `main`.

use std::process::Stdio;

use coord_cli::CliError;

use super::kit::{Demo, RUN, bins_first, fail, quoted, sibling};

/// The scripted worker: what an agent does in its session, without a model. The bridge runs
/// it with `sh -c` in the session's directory (the attempt's worktree), with `COORD_AGENT`,
/// `COORD_TASK`, `COORD_THREAD` and the rest in its environment.
const ASK: &str = r#"  asked=$(inbox update --agent "$COORD_AGENT" --thread "$COORD_THREAD" --status blocked \
    --summary 'Which languages?' --json)
  at=$(printf '%s\n' "$asked" | sed 's/.*"event_id":\([0-9]*\)}$/\1/')
  inbox wait-reply --thread "$COORD_THREAD" --after-event "$at"
"#;

/// The demo's scripted worker: `start` (after `set -e`), claim, worker-a asks with `ask`
/// and writes the greetings, worker-b builds on them; each commits and finishes.
pub(crate) fn worker(start: &str, ask: &str) -> String {
    format!(
        r#"#!/bin/sh
# The demo's scripted worker: what an agent does in its session, without a model.
set -e
{start}inbox claim --agent "$COORD_AGENT" --thread "$COORD_THREAD"
if [ "$COORD_TASK" = data ]; then
{ask}  printf 'hello\nbonjour\n' > greetings.txt
  msg='Add greetings'
else
  cat greetings.txt
  printf '#!/bin/sh\nwhile read g; do echo "$g, world"; done < greetings.txt\n' > greet.sh
  msg='Print the greetings'
fi
git add -A
git commit -q -m "$msg"
inbox done --agent "$COORD_AGENT" --thread "$COORD_THREAD" --summary "$msg"
"#
    )
}

/// Start the bridge on the planned run, answer worker-a's question, and wait for the bridge
/// to see the run done.
pub(crate) fn run(d: &Demo) -> Result<(), CliError> {
    d.say("The worker's script, which each session runs (in place of an agent such as Claude Code)");
    let script = d.dir.join(".agents/demo-worker.sh");
    let text = worker("", ASK);
    std::fs::write(&script, &text).map_err(|e| fail("cannot write", e))?;
    for line in text.lines() {
        println!("            {line}");
    }

    d.say("The leader starts the bridge: it dispatches ready tasks and starts one session for each");
    let command = format!("sh {}", quoted(&[&script.display().to_string()]));
    let launch = sibling("coord-launch");
    let mut c = d.command(
        "leader",
        &launch,
        &["--run", RUN, "--command", &command, "--dispatch", "--until-done", "--grace-seconds", "5"],
        &d.dir,
    );
    bins_first(&mut c, &launch)?;
    let mut bridge = c
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| fail(&format!("cannot start {}", launch.display()), e))?;

    d.say("worker-a's session asks a question; the leader's wait wakes on it and answers");
    let mut cursor = "0".to_string();
    loop {
        let v = d.json(
            "leader",
            &d.orch,
            &["wait", "--run", RUN, "--after-event", &cursor, "--timeout-seconds", "120", "--json"],
        );
        let v = match v {
            Ok(v) => v,
            Err(e) => {
                // Say why: the bridge's own words.
                let _ = bridge.kill();
                if let Ok(out) = bridge.wait_with_output() {
                    eprint!("{}", String::from_utf8_lossy(&out.stderr));
                }
                return Err(e);
            }
        };
        if v["event"]["event_type"] == "task.blocked" {
            break;
        }
        cursor = v["next_event_id"].to_string();
    }
    d.orch(&["answer", "--run", RUN, "--task", "data", "--summary", "English and French"])?;

    d.say("The sessions finish; `api`'s starts from `data`'s merged work; the bridge exits when the run is done");
    let out = bridge.wait_with_output().map_err(|e| fail("coord-launch", e))?;
    for line in String::from_utf8_lossy(&out.stderr).lines().chain(String::from_utf8_lossy(&out.stdout).lines()) {
        println!("            {line}");
    }
    let status = out.status;
    if !status.success() {
        return Err(fail("coord-launch failed", status));
    }

    d.say("Each session: its client, pid, exit code and the last lines of its log");
    d.orch(&["status", "--run", RUN])?;

    d.say("The leader merges the run into main");
    d.orch(&["run", "finish", "--run", RUN])?;
    d.git("you", &d.dir, &["log", "--oneline", "--graph", "main"])?;
    d.git("you", &d.dir, &["status", "--short"])?;
    Ok(())
}
