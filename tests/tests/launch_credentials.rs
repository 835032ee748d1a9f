//! `coord-launch` and credentials (issue 32, item 8): with credentials required, the bridge
//! (run with the lead's secret) gives each session its own agent's secret, minted with the
//! lead's authority, and no other secret of its environment; the secret stays out of argv,
//! the tmux command line and the logs. Each test reads a running session's
//! `/proc/PID/environ` while the session waits on a fifo, then lets it finish.

#[path = "support/launch.rs"]
#[allow(dead_code, reason = "this suite uses part of what the launch suites share")]
mod support;

use coord_proto::types::*;
use coord_tests::{Project, finish, ok, processes_with, register};
use support::*;

const SECRET: &str = AGENT_SECRET_ENV;
/// Another secret of the bridge's environment, which no session may inherit.
const OTHER: (&str, &str) = ("COORD_DASHBOARD_TOKEN", "tok_of_the_lead_0123456789");

/// Run R1 with one thread task T1 for w-one; credentials required with lead-one as the
/// lead. Returns the lead's secret.
fn project_with_credentials(p: &Project) -> String {
    let lead = register(p, "lead-one");
    register(p, "w-one");
    orch(p, &["run", "create", "--goal", "g", "--id", "R1"]);
    orch(p, &["task", "add", "--run", "R1", "--id", "T1", "--title", "T1", "--kind", "thread", "--assign-to", "w-one"]);
    ok(p, &["init", "--require-credentials", "--lead", "lead-one"]);
    lead
}

/// The session's `thread.progress`: it claimed with the credentials it was given. Bounded,
/// so a session whose writes are refused fails the test instead of hanging it.
async fn up(c: &coord_client::Client, from: i64) {
    let wait = next_event(c, from, &[EventType::ThreadProgress]);
    let bound = std::time::Duration::from_secs(120);
    tokio::time::timeout(bound, wait).await.expect("the session never said it was up: its writes were refused");
}

/// The environment of a process, as `KEY=VALUE` strings.
fn environ(pid: i64) -> Vec<String> {
    let env = std::fs::read(format!("/proc/{pid}/environ")).expect("environ");
    env.split(|b| *b == 0).map(|kv| String::from_utf8_lossy(kv).into_owned()).filter(|s| !s.is_empty()).collect()
}

/// What a running session holds: its own secret (one that authenticates as w-one), not
/// the lead's, not the other secret; and none of them in its command line or the logs.
fn assert_only_its_own_secret(p: &Project, pid: i64, lead: &str, logs: &[std::path::PathBuf]) {
    let env = environ(pid);
    let own: Vec<&String> = env.iter().filter(|kv| kv.starts_with(&format!("{SECRET}="))).collect();
    assert_eq!(own.len(), 1, "one secret in the session's environment: {env:?}");
    let own = own[0].split_once('=').unwrap().1.to_string();
    assert_eq!(secret_agent(&own), Some("w-one"), "the worker's own secret");
    assert!(env.iter().all(|kv| !kv.contains(lead)), "the lead's secret reached the session");
    assert!(env.iter().all(|kv| !kv.starts_with(OTHER.0)), "{} reached the session", OTHER.0);
    let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap();
    assert!(!String::from_utf8_lossy(&cmdline).contains(&own), "the secret is in the session's argv");
    for log in logs {
        let text = std::fs::read_to_string(log).unwrap_or_default();
        assert!(!text.contains(&own) && !text.contains(lead), "a secret is in {}", log.display());
    }
    // It is a working secret: a write as w-one with it succeeds.
    let r = p.inbox().args(["agent", "heartbeat", "--agent", "w-one", "--json"]).env(SECRET, &own).run();
    r.ok();
}

/// The session's script: claim and say it is up, wait on the gate, then finish, all with
/// the credentials the bridge gave it (every write needs them).
fn script(gate: &std::path::Path) -> String {
    format!("{UP} && read go < '{}' && {}", gate.display(), worker("true"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_launched_worker_holds_its_own_secret_and_no_other() {
    let p = Project::new();
    let lead = project_with_credentials(&p);
    let c = p.client().await;
    let from = c.server_info().last_event_id;
    let gate = gate(&p);
    let args = ["--run", "R1", "--command", &script(&gate), "--dispatch", "--until-done", "--grace-seconds", "5"];
    let b = p.launch().args(args).env(SECRET, &lead).env(OTHER.0, OTHER.1).spawn();
    up(&c, from).await;
    let s = sessions(&c).await.remove(0);
    let logs = [std::path::PathBuf::from(&s.log_path), p.path().join(".agents/launch/R1/bridge.log")];
    assert_only_its_own_secret(&p, s.pid, &lead, &logs);
    std::fs::write(&gate, "go\n").unwrap();
    let out = finish(b);
    assert_eq!(out.code, 0, "the worker finished with its own secret: {}\n{}", out.stdout, out.stderr);
    assert!(!out.stdout.contains(&lead) && !out.stderr.contains(&lead));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tmux_session_gets_its_secret_off_the_command_line() {
    let p = Project::new();
    let lead = project_with_credentials(&p);
    let c = p.client().await;
    let from = c.server_info().last_event_id;
    let gate = gate(&p);
    let tmux = Tmux::new();
    // The bridge (and so the tmux server it starts) holds the lead's secret and another.
    let args = ["--run", "R1", "--command", &script(&gate), "--tmux", "--dispatch", "--until-done"];
    let b = p.launch().args(args).env("TMUX_TMPDIR", &tmux.dir()).env(SECRET, &lead).env(OTHER.0, OTHER.1).spawn();
    up(&c, from).await;
    let s = sessions(&c).await.remove(0);
    // The pane's shell: what `ps` and tmux show of the session.
    let (_, start) = tmux.run(&["list-panes", "-a", "-F", "#{pane_start_command}"]);
    assert!(!start.contains("cs_"), "a secret on the tmux command line: {start}");
    let (_, global) = tmux.run(&["show-environment", "-g"]);
    assert!(!global.contains(&lead) && !global.contains(OTHER.1), "the tmux server holds a secret: {global}");
    // The client the pane runs holds the worker's own secret: the pane's descendant that
    // carries the session's id (its output filter, the pane's other child, does not).
    let children = std::fs::read_to_string(format!("/proc/{}/task/{}/children", s.pid, s.pid)).unwrap();
    let ours = processes_of(&s.session_id);
    let leaf = descendant_among(&children, &ours).expect("the pane's client");
    assert_only_its_own_secret(&p, leaf, &lead, &[std::path::PathBuf::from(&s.log_path)]);
    let logs = std::path::Path::new(&s.log_path).parent().unwrap();
    let left: Vec<String> = std::fs::read_dir(logs)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with("secret"))
        .collect();
    assert!(left.is_empty(), "hand-over files are left: {left:?}");
    // The pane's output filter, which reports the session's last lines and usage (the
    // launcher's calls), holds the bridge's own secret, handed over the same way, and no
    // other.
    let filter = processes_with("COORD_FILTER_SESSION", &s.session_id);
    assert_eq!(filter.len(), 1, "the pane's output filter: {filter:?}");
    let env = environ(filter[0]);
    let held: Vec<&String> = env.iter().filter(|kv| kv.starts_with(&format!("{SECRET}="))).collect();
    assert_eq!(held, [&format!("{SECRET}={lead}")], "the filter holds the bridge's secret alone");
    assert!(env.iter().all(|kv| !kv.starts_with(OTHER.0)), "{} reached the filter", OTHER.0);
    // A process group of its own: stopping the session (its pane's group) leaves the filter
    // to report the last lines once the output ends.
    let stat = std::fs::read_to_string(format!("/proc/{}/stat", filter[0])).unwrap();
    let group: i64 = stat.rsplit_once(") ").unwrap().1.split_whitespace().nth(2).unwrap().parse().unwrap();
    assert_ne!(group, s.pid, "the filter is in the pane's process group");
    std::fs::write(&gate, "go\n").unwrap();
    assert_eq!(finish(b).code, 0);
}

/// The first of `ours` found below the pids in `children` (a process's
/// `/proc/PID/task/PID/children`), searching each child's own children in turn.
fn descendant_among(children: &str, ours: &[i64]) -> Option<i64> {
    children.split_whitespace().filter_map(|c| c.parse::<i64>().ok()).find_map(|c| {
        if ours.contains(&c) {
            return Some(c);
        }
        let below = std::fs::read_to_string(format!("/proc/{c}/task/{c}/children")).unwrap_or_default();
        descendant_among(&below, ours)
    })
}

/// Every live process that carries `session`'s `COORD_SESSION` (the session's own and the
/// live feed's holder), by pid.
fn processes_of(session: &str) -> Vec<i64> {
    processes_with("COORD_SESSION", session)
}

/// A live session (issue 33's `--live`) gets its own secret too, and the holder that keeps
/// its feed open, which carries the session's id (a bridge that re-attaches reads the
/// session's secret from those processes), holds no secret of the bridge's.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_live_session_and_its_feed_holder_hold_no_secret_of_the_bridges() {
    let p = Project::new();
    let lead = project_with_credentials(&p);
    let c = p.client().await;
    let from = c.server_info().last_event_id;
    let gate = gate(&p);
    let script = format!("IFS= read -r first; {}", script(&gate));
    let args = ["--run", "R1", "--command", &script, "--live", "--dispatch", "--until-done", "--grace-seconds", "5"];
    let b = p.launch().args(args).env(SECRET, &lead).env(OTHER.0, OTHER.1).spawn();
    up(&c, from).await;
    let s = sessions(&c).await.remove(0);
    assert_only_its_own_secret(&p, s.pid, &lead, &[std::path::PathBuf::from(&s.log_path)]);
    let all = processes_of(&s.session_id);
    assert!(all.len() >= 2, "the session and its feed's holder: {all:?}");
    for pid in all {
        let env = environ(pid);
        let held = env.iter().filter(|kv| kv.starts_with(&format!("{SECRET}="))).map(|kv| &kv[SECRET.len() + 1..]);
        for secret in held {
            assert_eq!(secret_agent(secret), Some("w-one"), "process {pid} of the session holds another's secret");
        }
        assert!(env.iter().all(|kv| !kv.starts_with(OTHER.0)), "process {pid} holds {}", OTHER.0);
    }
    std::fs::write(&gate, "go\n").unwrap();
    let out = finish(b);
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
}
