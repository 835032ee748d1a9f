//! The Gemini API's `generateContent` as Gemini CLI speaks it (CLI 0.61, `@google/genai`),
//! and running `gemini` headless against it.
//!
//! Gemini CLI POSTs `/v1beta/models/MODEL:streamGenerateContent?alt=sse` and reads SSE whose
//! `data:` lines are `GenerateContentResponse`s: `candidates[0].content` (role `model`) with
//! `text` and `functionCall {name, args, id}` parts, a `finishReason` and `usageMetadata`
//! (the stream's token counts). The mock sends one such chunk per reply; a request to
//! `:generateContent` (no stream) gets the same object as JSON. A main-loop request is one
//! whose `functionDeclarations` include the shell tool, `run_shell_command`; its turn is how
//! many `model` contents it holds. MCP tools are offered as `mcp_SERVER_TOOL`; a tool's
//! result comes back as a `functionResponse` part whose `response` is `{output}` or
//! `{error}`.
//!
//! [`GeminiCli`] runs the CLI with a throwaway `HOME` whose `~/.gemini/settings.json` selects
//! API-key auth; `GOOGLE_GEMINI_BASE_URL` points the SDK at the mock, and
//! `GEMINI_CLI_TRUST_WORKSPACE=true` trusts the working directory for that process only.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::{Block, CliRun, Dialect, MockModel, Response, run_limited};

/// The Gemini API.
pub struct Gemini;

/// Gemini CLI's shell tool.
const SHELL: &str = "run_shell_command";

/// The model the CLI is told to use (`-m`): with a model named, it asks no router first.
pub const MODEL: &str = "gemini-2.5-flash";

static IDS: AtomicU64 = AtomicU64::new(0);

impl Dialect for Gemini {
    fn is_model_path(&self, path: &str) -> bool {
        path.ends_with(":streamGenerateContent") || path.ends_with(":generateContent")
    }

    fn turn_of(&self, body: &Value) -> Option<usize> {
        offered_tools(body).iter().any(|t| t == SHELL).then_some(())?;
        let contents = body["contents"].as_array().into_iter().flatten();
        Some(contents.filter(|c| c["role"] == "model").count())
    }

    fn respond(&self, body: &Value, turn: Option<usize>, blocks: &[Block]) -> Response {
        self.respond_to(":streamGenerateContent?alt=sse", body, turn, blocks)
    }

    /// The `user` contents' texts after the model's last content (a new prompt, hook
    /// context); function responses are not user input.
    fn user_input(&self, body: &Value) -> Vec<String> {
        let contents = body["contents"].as_array().map(Vec::as_slice).unwrap_or_default();
        let from = contents.iter().rposition(|c| c["role"] == "model").map_or(0, |i| i + 1);
        let user = contents[from..].iter().filter(|c| c["role"] == "user");
        let parts = user.flat_map(|c| c["parts"].as_array().cloned().unwrap_or_default());
        parts.filter_map(|p| p["text"].as_str().map(str::to_string)).collect()
    }

    fn respond_to(&self, path: &str, _body: &Value, turn: Option<usize>, blocks: &[Block]) -> Response {
        let turn = turn.map_or("x".to_string(), |t| t.to_string());
        let parts: Vec<Value> = blocks.iter().map(|b| part(b, &turn)).collect();
        let reply = json!({
            "candidates": [{ "content": { "role": "model", "parts": parts }, "finishReason": "STOP", "index": 0 }],
            "usageMetadata": { "promptTokenCount": 100, "candidatesTokenCount": 20, "totalTokenCount": 120 },
            "modelVersion": MODEL,
            "responseId": format!("resp_t{turn}_{}", IDS.fetch_add(1, Ordering::Relaxed)),
        });
        if path.contains(":streamGenerateContent") {
            let sse = format!("data: {reply}\r\n\r\n");
            return Response { status: 200, content_type: "text/event-stream", body: sse.into_bytes() };
        }
        Response { status: 200, content_type: "application/json", body: reply.to_string().into_bytes() }
    }
}

/// One part of the reply: a text, or a function call as Gemini CLI names it (the generic
/// `shell` is `run_shell_command`, `mcp__SERVER__TOOL` is `mcp_SERVER_TOOL`).
fn part(block: &Block, turn: &str) -> Value {
    let (name, args) = match block {
        Block::Text(s) => return json!({ "text": s }),
        Block::Tool { name, input } => (name.as_str(), input.clone()),
    };
    let name = if name == "shell" {
        SHELL.to_string()
    } else if let Some(rest) = name.strip_prefix("mcp__") {
        format!("mcp_{}", rest.replacen("__", "_", 1))
    } else {
        name.to_string()
    };
    let id = format!("fc_t{turn}_{}", IDS.fetch_add(1, Ordering::Relaxed));
    json!({ "functionCall": { "name": name, "args": args, "id": id } })
}

/// The texts of a request's contents with `role` (`user` carries the prompt, hook context
/// and an AfterAgent hook's new prompt).
pub fn texts(req: &Value, role: &str) -> Vec<String> {
    let contents = req["contents"].as_array().into_iter().flatten().filter(|c| c["role"] == role);
    let parts = contents.flat_map(|c| c["parts"].as_array().cloned().unwrap_or_default());
    parts.filter_map(|p| p["text"].as_str().map(str::to_string)).collect()
}

/// The results of function calls a request holds, as the model saw them: each
/// `functionResponse`'s `response.output` or `response.error`.
pub fn tool_results(req: &Value) -> Vec<String> {
    let contents = req["contents"].as_array().into_iter().flatten();
    let parts = contents.flat_map(|c| c["parts"].as_array().cloned().unwrap_or_default());
    parts
        .filter_map(|p| {
            let r = p.get("functionResponse")?.get("response")?;
            let v = r.get("output").or(r.get("error")).unwrap_or(r);
            Some(v.as_str().map_or_else(|| v.to_string(), str::to_string))
        })
        .collect()
}

/// The function names a request offers.
pub fn offered_tools(req: &Value) -> Vec<String> {
    let tools = req["tools"].as_array().into_iter().flatten();
    let decls = tools.flat_map(|t| t["functionDeclarations"].as_array().cloned().unwrap_or_default());
    decls.filter_map(|d| d["name"].as_str().map(str::to_string)).collect()
}

/// How long a `gemini` run may take before the harness kills it: a guard against a hang,
/// not a speed target.
pub const GEMINI_LIMIT: Duration = Duration::from_secs(300);

/// `gemini` against a [`MockModel`], with a throwaway `HOME` (the user's own `~/.gemini` is
/// never read or written).
pub struct GeminiCli {
    bin: PathBuf,
    cwd: PathBuf,
    home: tempfile::TempDir,
    base_url: String,
    env: Vec<(String, String)>,
    trusted: bool,
}

impl GeminiCli {
    /// Gemini CLI at `bin`, run in `cwd`, talking to `mock`; the working directory trusted
    /// for the process (`GEMINI_CLI_TRUST_WORKSPACE=true`).
    pub fn new(bin: &Path, cwd: &Path, mock: &MockModel) -> GeminiCli {
        let home = tempfile::Builder::new().prefix("gmh").tempdir().expect("a HOME for gemini");
        std::fs::create_dir_all(home.path().join(".gemini")).expect("~/.gemini");
        // API-key auth, chosen in the user's settings: with only GOOGLE_GEMINI_BASE_URL in
        // the environment the CLI picks its "gateway" auth, which headless mode refuses.
        let settings = json!({
            "security": { "auth": { "selectedType": "gemini-api-key" } },
            "privacy": { "usageStatisticsEnabled": false },
            "general": { "disableAutoUpdate": true },
        });
        std::fs::write(home.path().join(".gemini/settings.json"), settings.to_string())
            .expect("~/.gemini/settings.json");
        GeminiCli {
            bin: bin.to_path_buf(),
            cwd: cwd.to_path_buf(),
            home,
            base_url: mock.base_url(),
            env: Vec::new(),
            trusted: true,
        }
    }

    /// The throwaway `HOME`.
    pub fn home(&self) -> &Path {
        self.home.path()
    }

    pub fn env(mut self, k: &str, v: &str) -> GeminiCli {
        self.env.push((k.to_string(), v.to_string()));
        self
    }

    /// Leave `GEMINI_CLI_TRUST_WORKSPACE` unset (the folder is then as trusted as the
    /// flags make it).
    pub fn untrusted(mut self) -> GeminiCli {
        self.trusted = false;
        self
    }

    /// The throwaway home and the mock's address: what a launcher's sessions inherit (the
    /// launcher trusts the folder itself).
    pub fn session_env(&self) -> Vec<(String, String)> {
        let mut env = vec![
            ("HOME".to_string(), self.home.path().display().to_string()),
            ("GOOGLE_GEMINI_BASE_URL".to_string(), self.base_url.clone()),
            ("GEMINI_API_KEY".to_string(), "dummy".to_string()),
        ];
        env.extend(self.env.iter().cloned());
        env
    }

    /// `gemini ARGS` in the working directory, with [`GeminiCli::session_env`].
    pub fn command<S: AsRef<std::ffi::OsStr>>(&self, args: &[S]) -> Command {
        let mut cmd = Command::new(&self.bin);
        cmd.args(args).current_dir(&self.cwd).envs(self.session_env());
        if self.trusted {
            cmd.env("GEMINI_CLI_TRUST_WORKSPACE", "true");
        }
        cmd
    }

    /// `gemini -p PROMPT -o stream-json --approval-mode yolo -m MODEL [ARGS]` to its end.
    pub fn run(&self, args: &[&str], prompt: &str) -> CliRun {
        let mut all = vec!["-p", prompt, "-o", "stream-json", "--approval-mode", "yolo", "-m", MODEL];
        all.extend_from_slice(args);
        run_limited(self.command(&all), GEMINI_LIMIT, "gemini -p")
    }

    /// `gemini --acp --approval-mode yolo -m MODEL`: the Agent Client Protocol (JSON-RPC
    /// lines) on its stdin and stdout.
    pub fn acp(&self) -> Acp {
        let mut cmd = self.command(&["--acp", "--approval-mode", "yolo", "-m", MODEL]);
        cmd.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::null());
        let mut child = cmd.spawn().expect("start gemini --acp");
        let stdin = child.stdin.take().unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if let Ok(v) = serde_json::from_str::<Value>(&line)
                    && tx.send(v).is_err()
                {
                    break;
                }
            }
        });
        Acp { child, stdin: Some(stdin), rx, next_id: 0, seen: Vec::new() }
    }
}

/// A `gemini --acp` process; dropping it kills it.
pub struct Acp {
    child: Child,
    stdin: Option<ChildStdin>,
    rx: Receiver<Value>,
    next_id: u64,
    /// Every message the agent sent (notifications and replies), in order.
    pub seen: Vec<Value>,
}

impl Acp {
    /// Send a request and wait for its reply (the notifications before it are kept in
    /// [`Acp::seen`]); the reply's `result`. Panics on an error reply or past [`GEMINI_LIMIT`].
    pub fn call(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        let line = json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }).to_string() + "\n";
        let stdin = self.stdin.as_mut().expect("stdin open");
        stdin.write_all(line.as_bytes()).and_then(|_| stdin.flush()).expect("write to gemini --acp");
        let start = Instant::now();
        loop {
            let left = GEMINI_LIMIT.saturating_sub(start.elapsed());
            let msg = match self.rx.recv_timeout(left) {
                Ok(m) => m,
                Err(RecvTimeoutError::Timeout) => panic!("gemini --acp: no reply to {method} after {GEMINI_LIMIT:?}"),
                Err(RecvTimeoutError::Disconnected) => panic!("gemini --acp ended before replying to {method}"),
            };
            self.seen.push(msg.clone());
            if msg["id"] == id && msg.get("method").is_none() {
                assert!(msg.get("error").is_none(), "{method}: {msg}");
                return msg["result"].clone();
            }
        }
    }

    /// Close stdin and wait for the process to end; its exit status.
    pub fn close(mut self) -> Option<i32> {
        drop(self.stdin.take());
        let start = Instant::now();
        loop {
            if let Ok(Some(s)) = self.child.try_wait() {
                return s.code();
            }
            assert!(start.elapsed() < GEMINI_LIMIT, "gemini --acp still running after its stdin closed");
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for Acp {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mock_model::{Scenario, Turn, http_request, shell, text, tool};

    fn request(contents: Value) -> Value {
        json!({ "contents": contents, "tools": [{ "functionDeclarations": [{ "name": "run_shell_command" }] }] })
    }

    #[test]
    fn a_turn_is_the_number_of_model_contents_and_other_calls_are_not_turns() {
        let user = json!({ "role": "user", "parts": [{ "text": "do it" }] });
        let model = json!({ "role": "model", "parts": [{ "functionCall": { "name": "x", "args": {} } }] });
        assert_eq!(Gemini.turn_of(&request(json!([user]))), Some(0));
        assert_eq!(Gemini.turn_of(&request(json!([user, model, user]))), Some(1));
        assert_eq!(Gemini.turn_of(&json!({ "contents": [user] })), None, "no tools: not the main loop");
    }

    #[test]
    fn a_reply_streams_one_chunk_with_its_calls_and_usage() {
        let blocks = [text("hi"), shell("echo x"), tool("mcp__coordd__check_inbox", json!({}))];
        let r =
            Gemini.respond_to("/v1beta/models/m:streamGenerateContent?alt=sse", &request(json!([])), Some(2), &blocks);
        assert_eq!(r.content_type, "text/event-stream");
        let body = String::from_utf8(r.body).unwrap();
        let chunk: Value = serde_json::from_str(body.strip_prefix("data: ").unwrap().trim_end()).unwrap();
        let parts = &chunk["candidates"][0]["content"]["parts"];
        assert_eq!(parts[0]["text"], "hi");
        assert_eq!(parts[1]["functionCall"]["name"], "run_shell_command");
        assert_eq!(parts[1]["functionCall"]["args"], json!({ "command": "echo x" }));
        assert!(parts[1]["functionCall"]["id"].as_str().unwrap().starts_with("fc_t2_"));
        assert_eq!(parts[2]["functionCall"]["name"], "mcp_coordd_check_inbox");
        assert_eq!(chunk["candidates"][0]["finishReason"], "STOP");
        assert_eq!(chunk["usageMetadata"]["totalTokenCount"], 120);
    }

    #[test]
    fn a_request_that_does_not_stream_gets_the_object_as_json() {
        let r = Gemini.respond_to("/v1beta/models/m:generateContent", &json!({}), None, &[text("ok")]);
        assert_eq!(r.content_type, "application/json");
        let v: Value = serde_json::from_slice(&r.body).unwrap();
        assert_eq!(v["candidates"][0]["content"]["parts"][0]["text"], "ok");
    }

    #[test]
    fn function_responses_read_back_as_outputs_and_errors() {
        let req = json!({ "contents": [{ "role": "user", "parts": [
            { "functionResponse": { "name": "a", "response": { "output": "out" } } },
            { "functionResponse": { "name": "b", "response": { "error": "Tool execution blocked: no" } } },
        ]}]});
        assert_eq!(tool_results(&req), vec!["out".to_string(), "Tool execution blocked: no".to_string()]);
    }

    #[test]
    fn the_mock_serves_the_scenario_over_http_turn_by_turn() {
        let mock = MockModel::start(Gemini, Scenario::new(vec![Turn::reply(vec![shell("echo 1")])]));
        let path = "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse";
        let user = json!({ "role": "user", "parts": [{ "text": "go" }] });
        let (status, body) = http_request(mock.port(), "POST", path, &[], &request(json!([user])).to_string());
        assert_eq!(status, 200);
        assert!(String::from_utf8_lossy(&body).contains("echo 1"));
        let model = json!({ "role": "model", "parts": [{ "text": "x" }] });
        let (_, body) = http_request(mock.port(), "POST", path, &[], &request(json!([user, model])).to_string());
        assert!(String::from_utf8_lossy(&body).contains("Nothing more (turn 1)."));
        assert_eq!(mock.turn_requests().len(), 2);
    }
}
