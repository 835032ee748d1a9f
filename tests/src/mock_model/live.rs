//! Driving an agent CLI's live session: the child runs with its stdin held open, each line
//! it prints on stdout is read as JSON as it comes, and a test waits for the line it needs
//! (a `result`, a `turn/completed`) on a condition variable, never by polling or sleeping.
//!
//! [`LiveChild`] is the process; `anthropic::claude_live` starts Claude Code in
//! stream-json mode and `openai::CodexExec::app_server` starts `codex app-server`.

use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use serde_json::Value;

/// How long a wait on a live session may take before the test fails: a guard against a
/// hang, not a speed target.
pub const LIVE_LIMIT: Duration = Duration::from_secs(300);

#[derive(Default)]
struct Out {
    /// Every stdout line so far (a line that is not JSON is kept as a JSON string).
    lines: Vec<Value>,
    /// stdout reached its end.
    ended: bool,
    stderr: String,
}

/// A CLI process whose stdin stays open for more input.
pub struct LiveChild {
    child: Child,
    stdin: Option<ChildStdin>,
    out: Arc<(Mutex<Out>, Condvar)>,
}

impl LiveChild {
    /// Start `cmd` with stdin, stdout and stderr piped; its stdout is read line by line.
    pub fn spawn(mut cmd: Command) -> LiveChild {
        cmd.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped());
        let mut child = cmd.spawn().unwrap_or_else(|e| panic!("start {:?}: {e}", cmd.get_program()));
        let out = Arc::new((Mutex::new(Out::default()), Condvar::new()));
        let stdout = child.stdout.take().unwrap();
        let o = out.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                let v = serde_json::from_str(&line).unwrap_or(Value::String(line));
                o.0.lock().unwrap().lines.push(v);
                o.1.notify_all();
            }
            o.0.lock().unwrap().ended = true;
            o.1.notify_all();
        });
        let mut stderr = child.stderr.take().unwrap();
        let o = out.clone();
        std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            while let Ok(n @ 1..) = stderr.read(&mut buf) {
                o.0.lock().unwrap().stderr += &String::from_utf8_lossy(&buf[..n]);
            }
        });
        let stdin = child.stdin.take();
        LiveChild { child, stdin, out }
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Write one JSON line to the child's stdin.
    pub fn send(&mut self, v: &Value) {
        let stdin = self.stdin.as_mut().expect("stdin is still open");
        stdin.write_all(format!("{v}\n").as_bytes()).and_then(|_| stdin.flush()).expect("write to the session");
    }

    /// Close the child's stdin (the end of its input).
    pub fn close_stdin(&mut self) {
        self.stdin = None;
    }

    /// Every line the child printed so far.
    pub fn lines(&self) -> Vec<Value> {
        self.out.0.lock().unwrap().lines.clone()
    }

    /// How many lines so far `pred` holds for.
    pub fn count(&self, pred: impl Fn(&Value) -> bool) -> usize {
        self.out.0.lock().unwrap().lines.iter().filter(|l| pred(l)).count()
    }

    /// Wait until the `n`-th line (from 1) for which `pred` holds, and return it. Fails the
    /// test, with the session's output, if stdout ends first or after [`LIVE_LIMIT`].
    #[track_caller]
    pub fn wait_nth(&self, n: usize, what: &str, pred: impl Fn(&Value) -> bool) -> Value {
        let deadline = Instant::now() + LIVE_LIMIT;
        let (lock, cv) = &*self.out;
        let mut out = lock.lock().unwrap();
        loop {
            if let Some(v) = out.lines.iter().filter(|l| pred(l)).nth(n - 1) {
                return v.clone();
            }
            let left = deadline.checked_duration_since(Instant::now());
            if out.ended || left.is_none() {
                let why = if out.ended { "the output ended" } else { "timed out" };
                drop(out);
                panic!("waiting for {what}: {why}\n{}", self.describe());
            }
            out = cv.wait_timeout(out, left.unwrap()).unwrap().0;
        }
    }

    /// Wait for the first line for which `pred` holds (see [`LiveChild::wait_nth`]).
    #[track_caller]
    pub fn wait_for(&self, what: &str, pred: impl Fn(&Value) -> bool) -> Value {
        self.wait_nth(1, what, pred)
    }

    /// Wait for the process to end (after [`LIVE_LIMIT`] it is killed), then for its stdout
    /// to be read to the end, so [`LiveChild::lines`] holds everything it printed. (A
    /// process it left behind may hold stdout open: the read then gets a few seconds, for
    /// what is already in the pipe.)
    #[track_caller]
    pub fn wait_exit(&mut self) -> ExitStatus {
        let pid = self.child.id();
        let (tx, rx) = std::sync::mpsc::channel::<()>();
        let guard = std::thread::spawn(move || {
            if rx.recv_timeout(LIVE_LIMIT).is_err() {
                signal(pid, 9);
            }
        });
        let status = self.child.wait().expect("wait for the session");
        let _ = tx.send(());
        let _ = guard.join();
        let deadline = Instant::now() + Duration::from_secs(5);
        let (lock, cv) = &*self.out;
        let mut out = lock.lock().unwrap();
        while !out.ended {
            let Some(left) = deadline.checked_duration_since(Instant::now()) else { break };
            out = cv.wait_timeout(out, left).unwrap().0;
        }
        status
    }

    /// Send a signal to the process.
    pub fn signal(&self, sig: i32) {
        signal(self.child.id(), sig);
    }

    /// stdout and stderr so far, for a failing assertion's message.
    pub fn describe(&self) -> String {
        let out = self.out.0.lock().unwrap();
        let lines: Vec<String> = out.lines.iter().map(|l| cut(&l.to_string(), 600)).collect();
        format!("stdout:\n{}\nstderr:\n{}", lines.join("\n"), cut(&out.stderr, 4000))
    }
}

impl Drop for LiveChild {
    fn drop(&mut self) {
        if matches!(self.child.try_wait(), Ok(None)) {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// `kill -SIG PID` (the tests crate has no libc).
fn signal(pid: u32, sig: i32) {
    let _ = Command::new("kill").args([format!("-{sig}"), pid.to_string()]).status();
}

/// At most `n` bytes of `s`'s end, on a character boundary.
fn cut(s: &str, n: usize) -> String {
    let from = s.len().saturating_sub(n);
    let from = (from..=s.len()).find(|&i| s.is_char_boundary(i)).unwrap_or(s.len());
    s[from..].to_string()
}

/// The scripted model of a two-task run for `agent` (session reuse, issue 33): for each
/// task, one reply takes the agent's pending thread (whatever it is: a reused session's
/// environment names its first task) with `inbox` and notes its id in `note`, and the next
/// reply, text only, ends the turn once `inbox done` has finished that thread (run by the
/// mock just before it replies, in the project at `project`). So each task costs two model
/// requests, whichever session it runs in, and its end falls outside any tool call. A
/// session reused for the second task goes on to turns 2 and 3; a fresh session per task
/// asks for turns 0 and 1 again (the turn count comes from its conversation), so the
/// finishing command runs each time its turn is asked for.
pub fn two_tasks_one_by_one(inbox: &std::path::Path, agent: &str, project: &std::path::Path) -> super::Scenario {
    use super::{Turn, shell, text};
    let (inbox, note) = (inbox.display(), project.join("taken").display().to_string());
    let take = format!(
        "t=$({inbox} fetch --agent {agent} --json | python3 -c 'import json,sys; print(json.load(sys.stdin)[\"threads\"][0][\"thread_id\"])') \
         && {inbox} claim --agent {agent} --thread \"$t\" >/dev/null && echo \"$t\" > {note} && echo took \"$t\""
    );
    let finish = format!("{inbox} done --agent {agent} --thread \"$(cat {note})\" --summary finished");
    let turns = (0..2).flat_map(|_| {
        [Turn::reply(vec![shell(&take)]), Turn::reply(vec![text("Done; ending my turn.")]).before(&finish).each_time()]
    });
    super::Scenario::new(turns.collect()).cwd(project)
}

/// The scripted model of a live worker that asks the lead (issue 33): it claims its thread
/// and asks (`inbox update --status blocked`), ends its turn (text only), then, given the
/// answer, runs `finish` and ends with `Done.`. `inbox` by its path (an agent CLI's shells
/// may not have the session's `PATH`).
pub fn asks_then(inbox: &std::path::Path, finish: &str) -> Vec<super::Turn> {
    use super::{Turn, shell, text};
    let on_thread = |verb: &str, rest: &str| {
        format!("{} {verb} --agent \"$COORD_AGENT\" --thread \"$COORD_THREAD\" {rest}", inbox.display())
    };
    let ask = format!(
        "{} && {}",
        on_thread("claim", ">/dev/null"),
        on_thread("update", "--status blocked --summary 'Which db?' >/dev/null")
    );
    vec![
        Turn::reply(vec![shell(&ask)]),
        Turn::reply(vec![text("I asked the lead; ending my turn.")]),
        Turn::reply(vec![shell(finish)]),
        Turn::reply(vec![text("Done.")]),
    ]
}
