//! Speaking to the daemon and looking at it from the outside: a connection that writes
//! the wire protocol by hand, a process's memory and open files from `/proc`, and
//! whether a test that needs an outside program may run (CI must not skip it).

#[cfg(unix)]
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};

#[cfg(unix)]
use serde_json::Value;

/// A connection that speaks the wire protocol by hand, line by line (what a script with
/// `socat` or Python's `socket` does): no client library.
#[cfg(unix)]
pub struct RawConn {
    pub w: std::os::unix::net::UnixStream,
    pub r: BufReader<std::os::unix::net::UnixStream>,
}

#[cfg(unix)]
impl RawConn {
    pub fn connect(socket: &Path) -> RawConn {
        let s = std::os::unix::net::UnixStream::connect(socket).expect("connect to the socket");
        RawConn { w: s.try_clone().unwrap(), r: BufReader::new(s) }
    }

    /// Write one line (a newline is added).
    pub fn send_line(&mut self, line: &[u8]) {
        self.w.write_all(line).unwrap();
        self.w.write_all(b"\n").unwrap();
    }

    /// Read one line as JSON.
    #[track_caller]
    pub fn recv(&mut self) -> Value {
        let mut line = String::new();
        assert!(self.r.read_line(&mut line).unwrap() > 0, "connection closed");
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON ({e}): {line:.200}"))
    }

    /// Send a request and read the next line (its reply, when nothing else is pending).
    pub fn call(&mut self, v: Value) -> Value {
        self.send_line(v.to_string().as_bytes());
        self.recv()
    }

    /// Call `method` with `params` (id 1); the whole reply.
    pub fn rpc(&mut self, method: &str, params: Value) -> Value {
        self.call(serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}))
    }

    /// A connection authenticated as `agent` with its `secret` (`agents.authenticate`).
    #[track_caller]
    pub fn connect_as(socket: &Path, agent: &str, secret: &str) -> RawConn {
        let mut c = RawConn::connect(socket);
        let auth = c.rpc("agents.authenticate", serde_json::json!({"agent_id": agent, "secret": secret}));
        assert!(auth["result"]["authenticated"].as_array().is_some_and(|a| a.contains(&agent.into())), "{auth}");
        c
    }
}

/// A client of the dashboard's WebSocket (`<url>ws`), speaking the same JSON-RPC as the
/// socket: what the page does, without a browser.
pub struct WsConn {
    ws: tungstenite::WebSocket<tungstenite::stream::MaybeTlsStream<std::net::TcpStream>>,
    /// Notifications read while waiting for a reply.
    pub notes: Vec<serde_json::Value>,
}

impl WsConn {
    /// Connect to the WebSocket of the dashboard at `url` (`http://127.0.0.1:PORT/TOKEN/`),
    /// as a page of `origin` if given; the handshake's error as text.
    pub fn open(url: &str, origin: Option<&str>) -> Result<WsConn, String> {
        use tungstenite::client::IntoClientRequest;
        let ws_url = format!("{}ws", url.replacen("http://", "ws://", 1));
        let mut req = ws_url.into_client_request().map_err(|e| e.to_string())?;
        if let Some(o) = origin {
            req.headers_mut().insert("Origin", o.parse().map_err(|_| "a bad origin".to_string())?);
        }
        let (ws, _) = tungstenite::connect(req).map_err(|e| e.to_string())?;
        Ok(WsConn { ws, notes: Vec::new() })
    }

    /// Send a request; its response (notifications read meanwhile are kept in `notes`).
    pub fn call(&mut self, req: serde_json::Value) -> serde_json::Value {
        self.ws.send(tungstenite::Message::text(req.to_string())).expect("send on the WebSocket");
        loop {
            let v = self.next_message();
            if v.get("id") == req.get("id") {
                return v;
            }
            self.notes.push(v);
        }
    }

    /// The next message the daemon sends, as JSON.
    pub fn next_message(&mut self) -> serde_json::Value {
        loop {
            if let tungstenite::Message::Text(t) = self.ws.read().expect("read the WebSocket") {
                return serde_json::from_str(t.as_str()).expect("JSON");
            }
        }
    }

    /// Call `method` with `params` (id 1); the whole reply.
    pub fn rpc(&mut self, method: &str, params: serde_json::Value) -> serde_json::Value {
        self.call(serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}))
    }
}

/// A `/proc/<pid>/status` field in MiB (`VmRSS`, `VmHWM`: the peak resident size).
#[cfg(target_os = "linux")]
pub fn proc_mib(pid: u32, field: &str) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("read /proc status");
    let line = status.lines().find(|l| l.starts_with(&format!("{field}:"))).expect("field in /proc status");
    line.split_whitespace().nth(1).and_then(|kb| kb.parse::<u64>().ok()).expect("a number of kB") / 1024
}

/// Reset a process's peak resident size (`VmHWM`) to its current one (`/proc/PID/clear_refs`,
/// Linux 4.0 and later), so the next [`proc_mib`] of `VmHWM` is the peak since now.
#[cfg(target_os = "linux")]
pub fn reset_peak_rss(pid: u32) {
    std::fs::write(format!("/proc/{pid}/clear_refs"), "5").expect("reset the peak resident size");
}

/// How many file descriptors a process has open.
#[cfg(target_os = "linux")]
pub fn open_fds(pid: u32) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/fd")).map(|d| d.count()).unwrap_or(0)
}

/// Whether this run is CI (`.ci/run` sets `COORD_CI=1`): a test that needs something from
/// outside must then fail, not skip.
pub fn in_ci() -> bool {
    std::env::var("COORD_CI").is_ok_and(|v| !v.is_empty() && v != "0")
}

/// Skip a test for want of `what` (a clear line on stderr), or fail it under CI.
#[track_caller]
pub fn skip_or_fail(what: &str) {
    if in_ci() {
        panic!("COORD_CI is set and this test needs {what}");
    }
    eprintln!("SKIPPED: this test needs {what}");
}

/// Is an outside program available? When it is missing, a test that needs it fails under
/// `COORD_CI` (CI installs it) and is skipped, saying so, elsewhere.
pub fn have(program: &str, needed_for: &str) -> bool {
    let found =
        Command::new("sh").arg("-c").arg(format!("command -v {program}")).output().is_ok_and(|o| o.status.success());
    if !found {
        skip_or_fail(&format!("{program} (for {needed_for}; .ci/run installs it)"));
    }
    found
}

/// Run a shell command line on a pseudo-terminal `cols` columns wide (util-linux
/// `script`), in `dir`, with extra environment; what the terminal showed.
pub fn on_terminal(dir: &Path, cols: u16, line: &str, env: &[(&str, &str)]) -> String {
    let mut cmd = Command::new("script");
    cmd.args(["-qec", &format!("stty cols {cols} rows 50; {line}"), "/dev/null"]).current_dir(dir).stdin(Stdio::null());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().expect("script");
    String::from_utf8_lossy(&out.stdout).replace("\r\n", "\n")
}

/// Where `.ci/run` installs the agent CLIs from npm, once per machine and outside any
/// clone: `$COORD_TOOLS`, else `~/.cache/coordd-tools`. Each CLI is in
/// `<cache>/<name>/node_modules/.bin/<name>`.
pub fn tools_cache() -> std::path::PathBuf {
    match std::env::var_os("COORD_TOOLS") {
        Some(dir) if !dir.is_empty() => dir.into(),
        _ => std::path::PathBuf::from(std::env::var_os("HOME").unwrap_or_else(|| "/root".into()))
            .join(".cache/coordd-tools"),
    }
}

/// The real agent CLI `name` (`claude`, `codex`, `opencode` or `gemini`): `$COORD_CLAUDE` / `$COORD_CODEX` when
/// set, else the copy in [`tools_cache`], else the one on `PATH`. `None` (after
/// [`skip_or_fail`]: a failure under CI) when there is none.
#[track_caller]
pub fn agent_cli(name: &str) -> Option<std::path::PathBuf> {
    let var = format!("COORD_{}", name.to_uppercase());
    let from_env = std::env::var_os(&var).filter(|v| !v.is_empty()).map(std::path::PathBuf::from);
    let cached = tools_cache().join(name).join("node_modules/.bin").join(name);
    let on_path = || {
        let out = Command::new("sh").arg("-c").arg(format!("command -v {name}")).output().ok()?;
        out.status.success().then(|| std::path::PathBuf::from(String::from_utf8_lossy(&out.stdout).trim()))
    };
    let found = from_env.or_else(|| cached.is_file().then_some(cached)).or_else(on_path);
    if found.is_none() {
        skip_or_fail(&format!(
            "the {name} CLI (${var}, or npm's copy under {}; .ci/run installs it)",
            tools_cache().display()
        ));
    }
    found
}

/// The agent CLIs CI pins, as (command, version), from `.ci/agent-clis`: the one place the
/// pins live (`.ci/run` installs exactly these).
pub fn pinned_clis() -> Vec<(String, String)> {
    include_str!("../../.ci/agent-clis")
        .lines()
        .filter(|l| !l.trim_start().starts_with('#'))
        .filter_map(|l| match l.split_whitespace().collect::<Vec<_>>()[..] {
            [name, _package, version] => Some((name.to_string(), version.to_string())),
            _ => None,
        })
        .collect()
}

/// What `<cli> --version` prints.
pub fn cli_version(cli: &Path) -> String {
    let out = Command::new(cli).arg("--version").output().expect("run the CLI's --version");
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}
