//! A scripted stand-in for a model provider's HTTP API, so the real agent CLIs (Codex,
//! Claude Code) run headless against the real daemon with no network.
//!
//! [`MockModel`] is a tiny HTTP/1.1 server on 127.0.0.1 (keep-alive, `Content-Length` or
//! chunked request bodies). Each request is logged whole ([`MockModel::requests`]), so a
//! test can assert what reached the model: hook context, tool results, the tool list.
//! What it answers comes from a [`Scenario`], turn by turn: a turn has shell commands to
//! run once just before its reply (queue mail, answer a request…) and the reply's
//! [`Block`]s, text and tool calls.
//!
//! The API's shape is a [`Dialect`] (`openai.rs`: the Responses API Codex speaks;
//! `anthropic.rs`: the Messages API Claude Code speaks; `chat.rs`: the Chat Completions API
//! opencode speaks to an OpenAI-compatible provider; `gemini.rs`: the Gemini API's
//! `generateContent` Gemini CLI speaks). A dialect says which requests are the agent's main loop asking for its next turn, and at which
//! turn it is, counted from what the request's input already holds, so a retried request
//! gets the same answer; and it writes the reply (SSE). Other requests (titles, probes)
//! get a short text, and turns past the scenario's end a plain "nothing more".
//!
//! Every reply reports token [`Usage`]: its turn's own ([`Turn::usage`]) or [`Usage::STANDARD`].
//! [`MockModel::reported_usage`] sums what was reported, so a test can check the figures an
//! agent CLI (or the bridge) derived from it.
//!
//! Live sessions (one CLI process taking several user turns): the turn count runs on across
//! user turns, so a scenario's turns are consumed in order whatever user message started
//! them, however long after the previous one. Each request records the user's texts it adds
//! ([`Request::user_input`]: a new user turn, or a message injected into a running turn),
//! and [`MockModel::wait_for`] waits for a request without polling.

pub mod anthropic;
pub mod chat;
pub mod gemini;
pub mod live;
pub mod openai;
pub mod routes;

use std::io::{BufRead, BufReader, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

/// One piece of a scripted reply.
#[derive(Debug, Clone, PartialEq)]
pub enum Block {
    /// Assistant text.
    Text(String),
    /// A tool call: the tool's name as the agent shows it to hooks (`mcp__coordd__check_inbox`,
    /// or `shell` for whichever shell tool the agent offers) and its input.
    Tool { name: String, input: Value },
}

/// A text block.
pub fn text(s: &str) -> Block {
    Block::Text(s.to_string())
}

/// A tool-call block.
pub fn tool(name: &str, input: Value) -> Block {
    Block::Tool { name: name.to_string(), input }
}

/// A shell command for the agent's shell tool.
pub fn shell(command: &str) -> Block {
    tool("shell", json!({ "command": command }))
}

/// The tokens a reply reports, in the four categories both APIs bill: input neither read
/// from nor written to the prompt cache, cache reads, cache writes, and output.
///
/// Anthropic reports them as `input_tokens`, `cache_read_input_tokens`,
/// `cache_creation_input_tokens` (in `message_start`) and `output_tokens` (in
/// `message_delta`). The Responses API's `input_tokens` counts every input token, cached or
/// not: the mock reports [`Usage::all_input`] there, with `input_tokens_details.cached_tokens`
/// and `.cache_write_tokens` (the fields Codex reads).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Usage {
    pub input: u64,
    pub output: u64,
    pub cache_read: u64,
    pub cache_write: u64,
}

impl Usage {
    /// What a reply reports unless its turn scripts its own: 100 input, 20 output tokens.
    pub const STANDARD: Usage = Usage { input: 100, output: 20, cache_read: 0, cache_write: 0 };

    pub fn new(input: u64, output: u64, cache_read: u64, cache_write: u64) -> Usage {
        Usage { input, output, cache_read, cache_write }
    }

    /// Every input token: uncached, read from and written to the cache.
    pub fn all_input(&self) -> u64 {
        self.input + self.cache_read + self.cache_write
    }
}

impl std::ops::Add for Usage {
    type Output = Usage;
    fn add(self, o: Usage) -> Usage {
        Usage {
            input: self.input + o.input,
            output: self.output + o.output,
            cache_read: self.cache_read + o.cache_read,
            cache_write: self.cache_write + o.cache_write,
        }
    }
}

impl std::iter::Sum for Usage {
    fn sum<I: Iterator<Item = Usage>>(iter: I) -> Usage {
        iter.fold(Usage::default(), |a, b| a + b)
    }
}

/// One turn of the scenario.
#[derive(Debug, Clone, Default)]
pub struct Turn {
    /// Shell command lines run once (`sh -c`), in order, just before this turn's reply.
    pub before: Vec<String>,
    /// The reply.
    pub reply: Vec<Block>,
    /// The tokens the reply reports (`None`: [`Usage::STANDARD`]).
    pub usage: Option<Usage>,
    /// Run `before` at every request for this turn, not only the first: for a scenario
    /// that a fresh session of the agent CLI replays from its first turn (the turn count
    /// comes from the conversation, so a new process asks for turn 0 again).
    pub each_time: bool,
}

impl Turn {
    pub fn reply(blocks: Vec<Block>) -> Turn {
        Turn { before: Vec::new(), reply: blocks, usage: None, each_time: false }
    }

    /// Report `usage` with this turn's reply.
    pub fn usage(mut self, usage: Usage) -> Turn {
        self.usage = Some(usage);
        self
    }

    /// Run `command` just before this turn's reply.
    pub fn before(mut self, command: &str) -> Turn {
        self.before.push(command.to_string());
        self
    }

    /// Run the `before` commands again each time this turn is asked for (the field
    /// `each_time` says when that is needed).
    pub fn each_time(mut self) -> Turn {
        self.each_time = true;
        self
    }
}

/// The model's script: its turns, and where and with what environment the turns' `before`
/// commands run.
#[derive(Debug, Clone, Default)]
pub struct Scenario {
    pub turns: Vec<Turn>,
    pub cwd: Option<PathBuf>,
    pub env: Vec<(String, String)>,
    /// What the session does once its turns are spent ([`routes::Reaction`]).
    pub reactions: Vec<routes::Reaction>,
}

impl Scenario {
    pub fn new(turns: Vec<Turn>) -> Scenario {
        Scenario { turns, ..Scenario::default() }
    }

    /// Run the `before` commands in `dir`.
    pub fn cwd(mut self, dir: impl Into<PathBuf>) -> Scenario {
        self.cwd = Some(dir.into());
        self
    }

    /// Set an environment variable for the `before` commands.
    pub fn env(mut self, k: &str, v: &str) -> Scenario {
        self.env.push((k.to_string(), v.to_string()));
        self
    }

    /// Once the turns are spent, answer with `reaction` when it applies.
    pub fn on(mut self, reaction: routes::Reaction) -> Scenario {
        self.reactions.push(reaction);
        self
    }
}

/// A request the mock received.
#[derive(Debug, Clone)]
pub struct Request {
    pub method: String,
    pub path: String,
    /// The body as JSON (`null` when empty or not JSON).
    pub body: Value,
    /// The main-loop turn it asked for, or `None` for any other request.
    pub turn: Option<usize>,
    /// The tokens the reply reported (`None`: not a request to the model endpoint).
    pub usage: Option<Usage>,
    /// The user's texts this request adds after the model's last reply (see
    /// [`Dialect::user_input`]): the prompt, a new user turn, or messages the agent CLI
    /// injected into a running turn. Empty when it only carries tool results.
    pub user_input: Vec<String>,
    /// The index of the [`routes::Route`] it went to (0 with one scenario).
    pub route: usize,
}

/// What a `before` command did.
#[derive(Debug, Clone)]
pub struct Action {
    pub turn: usize,
    pub command: String,
    pub status: Option<i32>,
    pub stdout: String,
    pub stderr: String,
}

/// An HTTP reply.
pub struct Response {
    pub status: u16,
    pub content_type: &'static str,
    pub body: Vec<u8>,
}

/// The shape of one provider's API.
pub trait Dialect: Send + Sync + 'static {
    /// Whether `path` (without the query) is the API's model endpoint.
    fn is_model_path(&self, path: &str) -> bool;

    /// For a request to the model endpoint: `Some(turn)` when it is the agent's main loop
    /// asking for its next turn (how many of the mock's replies its input already holds),
    /// `None` for any other request.
    fn turn_of(&self, body: &Value) -> Option<usize>;

    /// The reply carrying `blocks`, for turn `turn` (`None`: not a main-loop request).
    fn respond(&self, body: &Value, turn: Option<usize>, blocks: &[Block]) -> Response;

    /// As [`Dialect::respond`], for a request to `path` (with its query): for an API whose
    /// path says whether the reply streams (Gemini's `:streamGenerateContent?alt=sse` or
    /// `:generateContent`).
    fn respond_to(&self, path: &str, body: &Value, turn: Option<usize>, blocks: &[Block]) -> Response {
        let _ = path;
        self.respond(body, turn, blocks)
    }

    /// The reply to a request to `path` carrying `blocks` that reports `usage`. A dialect that cannot report usage
    /// keeps the default, [`Dialect::respond`].
    fn reply(&self, path: &str, body: &Value, turn: Option<usize>, blocks: &[Block], usage: &Usage) -> Response {
        let _ = usage;
        self.respond_to(path, body, turn, blocks)
    }

    /// The user's texts a request adds after the model's last reply, in order (tool
    /// results excluded). The default knows none.
    fn user_input(&self, body: &Value) -> Vec<String> {
        let _ = body;
        Vec::new()
    }

    /// Every user text of the conversation a request holds, in order (what
    /// [`routes::Reaction`]s read). The default: [`Dialect::user_input`].
    fn conversation_input(&self, body: &Value) -> Vec<String> {
        self.user_input(body)
    }
}

/// What a run of an agent CLI did.
#[derive(Debug)]
pub struct CliRun {
    pub status: Option<i32>,
    /// The CLI's own event stream on stdout (JSON lines), one object per line.
    pub stream: Vec<Value>,
    pub stderr: String,
}

impl CliRun {
    /// The stream and stderr, for a failing assertion's message.
    pub fn describe(&self) -> String {
        let stream: Vec<String> = self.stream.iter().map(Value::to_string).collect();
        format!("status {:?}\nstream:\n{}\nstderr:\n{}", self.status, stream.join("\n"), self.stderr)
    }
}

/// Run `cmd` to its end (stdin empty, output captured): its status, the JSON lines of its
/// stdout and its stderr. Past `limit` the process is killed and the test fails: a guard
/// against a hang (a hook that blocks for ever), not a speed target.
pub fn run_limited(mut cmd: Command, limit: Duration, what: &str) -> CliRun {
    cmd.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped());
    let child = cmd.spawn().unwrap_or_else(|e| panic!("start {what}: {e}"));
    let pid = child.id();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    let out = match rx.recv_timeout(limit) {
        Ok(out) => out.unwrap_or_else(|e| panic!("wait for {what}: {e}")),
        Err(_) => {
            let _ = Command::new("kill").args(["-9", &pid.to_string()]).status();
            panic!("{what} still running after {limit:?}: killed");
        }
    };
    let stream = String::from_utf8_lossy(&out.stdout).lines().filter_map(|l| serde_json::from_str(l).ok()).collect();
    CliRun { status: out.status.code(), stream, stderr: String::from_utf8_lossy(&out.stderr).into_owned() }
}

struct Shared {
    dialect: Box<dyn Dialect>,
    routes: Vec<routes::Route>,
    requests: Mutex<Vec<Request>>,
    /// Notified at each new request.
    arrived: Condvar,
    actions: Mutex<Vec<Action>>,
    stop: AtomicBool,
}

/// The running mock. Dropping it stops the server.
pub struct MockModel {
    port: u16,
    shared: Arc<Shared>,
}

impl MockModel {
    /// Serve `scenario` in `dialect` on a free loopback port.
    pub fn start(dialect: impl Dialect, scenario: Scenario) -> MockModel {
        MockModel::routed(dialect, vec![routes::Route::new("", scenario)])
    }

    /// Serve several sessions, each on the first of `routes` whose needle its requests
    /// hold; a main-loop request no route holds gets a plain text.
    pub fn routed(dialect: impl Dialect, routes: Vec<routes::Route>) -> MockModel {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind the mock model's port");
        let port = listener.local_addr().unwrap().port();
        let shared = Arc::new(Shared {
            dialect: Box::new(dialect),
            routes,
            requests: Mutex::default(),
            arrived: Condvar::new(),
            actions: Mutex::default(),
            stop: AtomicBool::new(false),
        });
        let s = shared.clone();
        std::thread::spawn(move || {
            for conn in listener.incoming() {
                if s.stop.load(Ordering::SeqCst) {
                    break;
                }
                if let Ok(conn) = conn {
                    let s = s.clone();
                    std::thread::spawn(move || serve_conn(&s, conn));
                }
            }
        });
        MockModel { port, shared }
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    /// `http://127.0.0.1:PORT`.
    pub fn base_url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// Every request so far, in arrival order.
    pub fn requests(&self) -> Vec<Request> {
        self.shared.requests.lock().unwrap().clone()
    }

    /// The main-loop requests so far (those that asked for a turn).
    pub fn turn_requests(&self) -> Vec<Request> {
        self.requests().into_iter().filter(|r| r.turn.is_some()).collect()
    }

    /// The tokens the mock's replies reported so far, summed (every reply from the model
    /// endpoint, main-loop or not).
    pub fn reported_usage(&self) -> Usage {
        self.requests().iter().filter_map(|r| r.usage).sum()
    }

    /// Wait until a request for which `pred` holds has arrived (one that came before counts)
    /// and return it; `None` after `timeout`. Woken at each request: no polling.
    pub fn wait_for(&self, timeout: Duration, pred: impl Fn(&Request) -> bool) -> Option<Request> {
        let deadline = Instant::now() + timeout;
        let mut reqs = self.shared.requests.lock().unwrap();
        loop {
            if let Some(r) = reqs.iter().find(|r| pred(r)) {
                return Some(r.clone());
            }
            let left = deadline.checked_duration_since(Instant::now())?;
            reqs = self.shared.arrived.wait_timeout(reqs, left).unwrap().0;
        }
    }

    /// Assert that the request for the model's `turn`-th reply carries `text` as the user's
    /// input: it came as a user turn of the same conversation (a new one, or one added to a
    /// running turn).
    #[track_caller]
    pub fn assert_user_input(&self, turn: usize, text: &str) {
        let r = self.turn_requests().into_iter().find(|r| r.turn == Some(turn)).expect("the request after the turn");
        assert!(
            r.user_input.iter().any(|u| u.contains(text)),
            "'{text}' did not come as a user turn: {:?}\n{}",
            r.user_input,
            self.transcript()
        );
    }

    /// What the `before` commands did so far.
    pub fn actions(&self) -> Vec<Action> {
        self.shared.actions.lock().unwrap().clone()
    }

    /// What `read` finds in the last main-loop request (it holds the whole conversation).
    pub fn last_turn<T>(&self, read: impl Fn(&Value) -> Vec<T>) -> Vec<T> {
        self.turn_requests().last().map(|r| read(&r.body)).unwrap_or_default()
    }

    /// Run an agent CLI against this mock to its end and check that it succeeded: `run`
    /// starts it (`None`: the CLI is missing, and so is the result).
    pub fn drive(&self, run: impl FnOnce(&MockModel) -> Option<CliRun>) -> Option<CliRun> {
        let r = run(self)?;
        assert_eq!(r.status, Some(0), "{}\n{}", r.describe(), self.transcript());
        Some(r)
    }

    /// A readable account of the requests and actions, for a failing assertion's message.
    pub fn transcript(&self) -> String {
        let mut out = String::new();
        for a in self.actions() {
            out += &format!("before turn {}: {} -> {:?}\n{}{}\n", a.turn, a.command, a.status, a.stdout, a.stderr);
        }
        for r in self.requests() {
            // The end of a body holds what this turn added (the start is the client's own
            // long system prompt).
            let body = r.body.to_string();
            let cut = body.char_indices().rev().nth(4000).map_or(0, |(i, _)| i);
            out += &format!("{} {} turn {:?}: …{}\n", r.method, r.path, r.turn, &body[cut..]);
        }
        out
    }
}

impl Drop for MockModel {
    fn drop(&mut self) {
        self.shared.stop.store(true, Ordering::SeqCst);
        // Wake the accept loop so it sees the flag.
        let _ = TcpStream::connect(("127.0.0.1", self.port));
    }
}

/// Answer requests on one connection until the client closes it.
fn serve_conn(s: &Shared, conn: TcpStream) {
    let Ok(read_half) = conn.try_clone() else { return };
    let mut r = BufReader::new(read_half);
    let mut w = conn;
    while let Some((method, path, body)) = read_request(&mut r) {
        if s.stop.load(Ordering::SeqCst) {
            break;
        }
        let resp = answer(s, &method, &path, &body);
        let head = format!(
            "HTTP/1.1 {} {}\r\nContent-Type: {}\r\nContent-Length: {}\r\nCache-Control: no-cache\r\n\r\n",
            resp.status,
            if resp.status == 200 { "OK" } else { "Not Found" },
            resp.content_type,
            resp.body.len()
        );
        if w.write_all(head.as_bytes()).and_then(|_| w.write_all(&resp.body)).and_then(|_| w.flush()).is_err() {
            break;
        }
    }
    let _ = w.shutdown(Shutdown::Both);
}

fn answer(s: &Shared, method: &str, path: &str, raw: &[u8]) -> Response {
    let body: Value = serde_json::from_slice(raw).unwrap_or(Value::Null);
    let bare = path.split('?').next().unwrap_or(path);
    let on_model = method == "POST" && s.dialect.is_model_path(bare);
    let route_ix = s.routes.iter().position(|r| r.holds(raw));
    let turn = if on_model { s.dialect.turn_of(&body).filter(|_| route_ix.is_some()) } else { None };
    let route = &s.routes[route_ix.unwrap_or(0)];
    let step = turn.and_then(|t| route.scenario.turns.get(t));
    let usage = on_model.then(|| step.and_then(|t| t.usage).unwrap_or(Usage::STANDARD));
    let user_input = if on_model { s.dialect.user_input(&body) } else { Vec::new() };
    let request = Request {
        method: method.to_string(),
        path: path.to_string(),
        body: body.clone(),
        turn,
        usage,
        user_input,
        route: route_ix.unwrap_or(0),
    };
    s.requests.lock().unwrap().push(request);
    s.arrived.notify_all();
    let Some(usage) = usage else {
        let status = if method == "GET" || method == "HEAD" { 200 } else { 404 };
        return Response { status, content_type: "application/json", body: b"{}".to_vec() };
    };
    let Some(turn) = turn else {
        return s.dialect.reply(path, &body, None, &[text("ok")], &usage);
    };
    let Some(step) = step else {
        if let Some(blocks) = route.react(turn, &s.dialect.conversation_input(&body)) {
            return s.dialect.reply(path, &body, Some(turn), &blocks, &usage);
        }
        return s.dialect.reply(path, &body, Some(turn), &[text(&format!("Nothing more (turn {turn})."))], &usage);
    };
    if route.started.lock().unwrap().insert(turn) || step.each_time {
        for command in &step.before {
            run_before(s, &route.scenario, turn, command);
        }
    }
    s.dialect.reply(path, &body, Some(turn), &step.reply, &usage)
}

fn run_before(s: &Shared, scenario: &Scenario, turn: usize, command: &str) {
    let mut cmd = Command::new("sh");
    cmd.arg("-c").arg(command).stdin(std::process::Stdio::null());
    if let Some(dir) = &scenario.cwd {
        cmd.current_dir(dir);
    }
    for (k, v) in &scenario.env {
        cmd.env(k, v);
    }
    let out = cmd.output();
    let action = match out {
        Ok(o) => Action {
            turn,
            command: command.to_string(),
            status: o.status.code(),
            stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
        },
        Err(e) => {
            Action { turn, command: command.to_string(), status: None, stdout: String::new(), stderr: e.to_string() }
        }
    };
    s.actions.lock().unwrap().push(action);
}

/// One HTTP/1.1 request to `127.0.0.1:port` (a connection of its own): the status and the
/// body, read by its `Content-Length`, its chunks, or to the connection's end. Enough for the
/// mock and the agent CLIs' local servers; panics when the server cannot be reached or
/// answers something unreadable.
pub fn http_request(port: u16, method: &str, path: &str, headers: &[(&str, &str)], body: &str) -> (u16, Vec<u8>) {
    use std::io::Read;
    let mut conn = TcpStream::connect(("127.0.0.1", port)).unwrap_or_else(|e| panic!("connect to port {port}: {e}"));
    let mut head = format!("{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n");
    for (k, v) in headers {
        head += &format!("{k}: {v}\r\n");
    }
    head += &format!("Content-Length: {}\r\n\r\n", body.len());
    conn.write_all(head.as_bytes()).and_then(|_| conn.write_all(body.as_bytes())).expect("send the request");
    let mut r = BufReader::new(conn);
    let mut line = String::new();
    r.read_line(&mut line).expect("read the status line");
    let status =
        line.split_whitespace().nth(1).and_then(|s| s.parse().ok()).unwrap_or_else(|| panic!("no status: {line:?}"));
    let (mut length, mut chunked) = (None, false);
    loop {
        let mut h = String::new();
        r.read_line(&mut h).expect("read a header");
        let h = h.trim_end().to_ascii_lowercase();
        if h.is_empty() {
            break;
        }
        if let Some(v) = h.strip_prefix("content-length:") {
            length = v.trim().parse::<usize>().ok();
        } else if h.starts_with("transfer-encoding:") && h.contains("chunked") {
            chunked = true;
        }
    }
    let mut out = Vec::new();
    if chunked {
        loop {
            let mut size = String::new();
            r.read_line(&mut size).expect("read a chunk size");
            let size = usize::from_str_radix(size.trim().split(';').next().unwrap_or(""), 16).expect("a chunk size");
            let mut chunk = vec![0; size + 2];
            r.read_exact(&mut chunk).expect("read a chunk");
            if size == 0 {
                break;
            }
            out.extend_from_slice(&chunk[..size]);
        }
    } else if let Some(n) = length {
        out.resize(n, 0);
        r.read_exact(&mut out).expect("read the body");
    } else {
        r.read_to_end(&mut out).expect("read the body");
    }
    (status, out)
}

/// Read one HTTP/1.1 request: method, path and body. `None` at the end of the connection
/// or on a request it cannot read.
fn read_request(r: &mut impl BufRead) -> Option<(String, String, Vec<u8>)> {
    let mut line = String::new();
    if r.read_line(&mut line).ok()? == 0 {
        return None;
    }
    let mut parts = line.split_whitespace();
    let method = parts.next()?.to_string();
    let path = parts.next()?.to_string();
    let (mut length, mut chunked) = (0usize, false);
    loop {
        let mut h = String::new();
        if r.read_line(&mut h).ok()? == 0 {
            return None;
        }
        let h = h.trim_end();
        if h.is_empty() {
            break;
        }
        let (name, value) = h.split_once(':')?;
        let (name, value) = (name.trim().to_ascii_lowercase(), value.trim());
        if name == "content-length" {
            length = value.parse().ok()?;
        } else if name == "transfer-encoding" && value.to_ascii_lowercase().contains("chunked") {
            chunked = true;
        }
    }
    let mut body = Vec::new();
    if chunked {
        loop {
            let mut size = String::new();
            r.read_line(&mut size).ok()?;
            let size = usize::from_str_radix(size.trim().split(';').next()?, 16).ok()?;
            let mut chunk = vec![0; size + 2];
            r.read_exact(&mut chunk).ok()?;
            if size == 0 {
                break;
            }
            body.extend_from_slice(&chunk[..size]);
        }
    } else {
        body.resize(length, 0);
        r.read_exact(&mut body).ok()?;
    }
    Some((method, path, body))
}

#[cfg(test)]
mod tests;
