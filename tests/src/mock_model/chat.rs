//! The OpenAI Chat Completions API as opencode speaks it to an OpenAI-compatible provider
//! (CLI 1.18, `@ai-sdk/openai-compatible`), and running `opencode` headless against it.
//!
//! opencode POSTs `/v1/chat/completions` with `stream: true` and
//! `stream_options.include_usage`, and reads SSE `chat.completion.chunk`s: the role, then a
//! `content` delta per text and a `tool_calls` delta per call (whole arguments at once), a
//! last chunk with the `finish_reason` (`tool_calls` or `stop`), a usage-only chunk
//! (`choices: []`), then `data: [DONE]`. A main-loop request is one whose tools include
//! opencode's shell tool, `bash`; its turn is how many assistant messages its `messages`
//! hold. Other requests (the session title, asked with no tools) get a short text. MCP tools
//! are offered as `SERVER_TOOL` (`coordd_check_inbox`).
//!
//! [`Opencode`] runs the CLI with a throwaway `HOME` and XDG directories whose global
//! `opencode.json` points a custom provider (`mock`, model `mock-model`, with a price so the
//! stream reports a cost) at the mock; the project's own `opencode.json` is the test's.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::{Block, CliRun, Dialect, MockModel, Response, http_request, run_limited};

/// The Chat Completions API.
pub struct Chat;

/// opencode's shell tool.
const SHELL: &str = "bash";

static IDS: AtomicU64 = AtomicU64::new(0);

fn id(prefix: &str, turn: &str) -> String {
    format!("{prefix}_t{turn}_{:012x}", IDS.fetch_add(1, Ordering::Relaxed) + 0x1000)
}

impl Dialect for Chat {
    fn is_model_path(&self, path: &str) -> bool {
        path.ends_with("/chat/completions")
    }

    fn turn_of(&self, body: &Value) -> Option<usize> {
        offered_tools(body).iter().any(|t| t == SHELL).then_some(())?;
        let messages = body["messages"].as_array().into_iter().flatten();
        Some(messages.filter(|m| m["role"] == "assistant").count())
    }

    fn respond(&self, body: &Value, turn: Option<usize>, blocks: &[Block]) -> Response {
        let turn = turn.map_or("x".to_string(), |t| t.to_string());
        let model = body["model"].as_str().unwrap_or("mock-model");
        let cid = id("chatcmpl", &turn);
        let usage = json!({ "prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120 });
        let calls: Vec<Value> = blocks
            .iter()
            .filter_map(|b| match b {
                Block::Tool { name, input } => Some(tool_call(name, input, &turn)),
                Block::Text(_) => None,
            })
            .collect();
        let finish = if calls.is_empty() { "stop" } else { "tool_calls" };
        if body["stream"] != true {
            let text: String =
                blocks.iter().filter_map(|b| if let Block::Text(s) = b { Some(s.as_str()) } else { None }).collect();
            let mut message = json!({ "role": "assistant", "content": text });
            if !calls.is_empty() {
                message["tool_calls"] = json!(calls);
            }
            let reply = json!({
                "id": cid, "object": "chat.completion", "created": 1, "model": model,
                "choices": [{ "index": 0, "message": message, "finish_reason": finish }], "usage": usage,
            });
            return Response { status: 200, content_type: "application/json", body: reply.to_string().into_bytes() };
        }
        let mut sse = String::new();
        let mut chunk = |choices: Value, usage: Option<&Value>| {
            let mut c = json!({ "id": cid, "object": "chat.completion.chunk", "created": 1, "model": model, "choices": choices });
            if let Some(u) = usage {
                c["usage"] = u.clone();
            }
            sse += &format!("data: {c}\n\n");
        };
        let delta = |d: Value| json!([{ "index": 0, "delta": d, "finish_reason": null }]);
        chunk(delta(json!({ "role": "assistant", "content": "" })), None);
        let mut index = 0;
        for b in blocks {
            match b {
                Block::Text(s) => chunk(delta(json!({ "content": s })), None),
                Block::Tool { .. } => {
                    let mut call = calls[index].clone();
                    call["index"] = json!(index);
                    chunk(delta(json!({ "tool_calls": [call] })), None);
                    index += 1;
                }
            }
        }
        chunk(json!([{ "index": 0, "delta": {}, "finish_reason": finish }]), None);
        chunk(json!([]), Some(&usage));
        sse += "data: [DONE]\n\n";
        Response { status: 200, content_type: "text/event-stream", body: sse.into_bytes() }
    }

    /// The user messages after the model's last reply: a new prompt, or one a live session
    /// (`opencode serve`) added to the running loop after a tool's result.
    fn user_input(&self, body: &Value) -> Vec<String> {
        let messages = body["messages"].as_array().map(Vec::as_slice).unwrap_or_default();
        let after = messages.iter().rposition(|m| m["role"] == "assistant").map_or(0, |i| i + 1);
        messages[after..].iter().filter(|m| m["role"] == "user").map(|m| content_text(&m["content"])).collect()
    }
}

/// A block's tool call as opencode names it: the generic `shell` is its `bash` tool (whose
/// `description` argument is required), `mcp__SERVER__TOOL` is `SERVER_TOOL`.
fn tool_call(name: &str, input: &Value, turn: &str) -> Value {
    let mut args = input.clone();
    let name = if name == "shell" {
        if args.get("description").is_none() {
            args["description"] = json!("run a command");
        }
        SHELL.to_string()
    } else if let Some(rest) = name.strip_prefix("mcp__") {
        rest.replacen("__", "_", 1)
    } else {
        name.to_string()
    };
    json!({ "id": id("call", turn), "type": "function", "function": { "name": name, "arguments": args.to_string() } })
}

/// The text of a message's `content` (a string, or an array of text parts).
fn content_text(content: &Value) -> String {
    match content {
        Value::String(s) => s.clone(),
        c => c.as_array().into_iter().flatten().filter_map(|p| p["text"].as_str()).collect::<Vec<_>>().join("\n"),
    }
}

/// The texts of a request's messages with `role` (`user` carries the prompt and what a
/// plugin added to it, `tool` the tools' outputs).
pub fn texts(req: &Value, role: &str) -> Vec<String> {
    let messages = req["messages"].as_array().into_iter().flatten();
    messages.filter(|m| m["role"] == role).map(|m| content_text(&m["content"])).collect()
}

/// The outputs of tool calls a request's messages hold, as the model saw them.
pub fn tool_results(req: &Value) -> Vec<String> {
    texts(req, "tool")
}

/// The tool names a request offers.
pub fn offered_tools(req: &Value) -> Vec<String> {
    let tools = req["tools"].as_array().into_iter().flatten();
    tools.filter_map(|t| t["function"]["name"].as_str().map(str::to_string)).collect()
}

/// The model's id in the provider [`Opencode`] configures (`-m`).
pub const MODEL: &str = "mock/mock-model";

/// How long an `opencode` run may take before the harness kills it: a guard against a hang,
/// not a speed target.
pub const OPENCODE_LIMIT: Duration = Duration::from_secs(300);

/// The global `opencode.json` that points the `mock` provider at `mock`: any key (the
/// provider's `apiKey`), a price of $1 and $2 per million input and output tokens (so the
/// stream's `cost` is not 0), no automatic updates or sharing.
pub fn opencode_config(mock: &MockModel) -> Value {
    json!({
        "$schema": "https://opencode.ai/config.json",
        "provider": { "mock": {
            "npm": "@ai-sdk/openai-compatible",
            "name": "scripted mock",
            "options": { "baseURL": format!("{}/v1", mock.base_url()), "apiKey": "dummy" },
            "models": { "mock-model": { "name": "Mock", "cost": { "input": 1, "output": 2 } } },
        }},
        "model": MODEL,
        "autoupdate": false,
        "share": "disabled",
    })
}

/// `opencode` against a [`MockModel`], with a throwaway `HOME` and XDG directories (the
/// user's own configuration, data and caches are never read or written).
pub struct Opencode {
    bin: PathBuf,
    cwd: PathBuf,
    home: tempfile::TempDir,
    env: Vec<(String, String)>,
}

impl Opencode {
    /// opencode at `bin`, run in `cwd`, talking to `mock`.
    pub fn new(bin: &Path, cwd: &Path, mock: &MockModel) -> Opencode {
        let home = tempfile::Builder::new().prefix("och").tempdir().expect("a HOME for opencode");
        let config = home.path().join(".config/opencode");
        std::fs::create_dir_all(config.join("node_modules")).expect("the opencode config directory");
        let write = |name: &str, v: Value| std::fs::write(config.join(name), v.to_string()).expect(name);
        write("opencode.json", opencode_config(mock));
        // At start opencode installs its plugin API package (`@opencode-ai/plugin`, from the
        // npm registry) into every config directory whose `node_modules` or lock file lacks
        // it, in the background. Saying it is there keeps the tests off the network; the
        // plugins they load import nothing.
        let dep = json!({ "@opencode-ai/plugin": "*" });
        write("package.json", json!({ "dependencies": dep }));
        write("package-lock.json", json!({ "packages": { "": { "dependencies": dep } } }));
        Opencode { bin: bin.to_path_buf(), cwd: cwd.to_path_buf(), home, env: Vec::new() }
    }

    /// The throwaway `HOME`.
    pub fn home(&self) -> &Path {
        self.home.path()
    }

    pub fn env(mut self, k: &str, v: &str) -> Opencode {
        self.env.push((k.to_string(), v.to_string()));
        self
    }

    /// The environment that points opencode at the throwaway home (its config names the
    /// mock) with no network of its own (no models.dev catalogue, no updates): what a
    /// launcher's sessions inherit.
    pub fn session_env(&self) -> Vec<(String, String)> {
        let h = self.home.path();
        let mut env = vec![("HOME".to_string(), h.display().to_string())];
        for (k, sub) in [
            ("XDG_CONFIG_HOME", ".config"),
            ("XDG_DATA_HOME", ".local/share"),
            ("XDG_CACHE_HOME", ".cache"),
            ("XDG_STATE_HOME", ".local/state"),
        ] {
            env.push((k.to_string(), h.join(sub).display().to_string()));
        }
        env.push(("OPENCODE_DISABLE_MODELS_FETCH".to_string(), "1".to_string()));
        env.push(("OPENCODE_DISABLE_AUTOUPDATE".to_string(), "1".to_string()));
        env.extend(self.env.iter().cloned());
        env
    }

    /// `opencode ARGS` in the working directory, with [`Opencode::session_env`].
    pub fn command<S: AsRef<std::ffi::OsStr>>(&self, args: &[S]) -> Command {
        let mut cmd = Command::new(&self.bin);
        // opencode takes its directory from `PWD` when it is set (the caller's, not the
        // working directory a spawner gives it).
        cmd.args(args).current_dir(&self.cwd).env("PWD", &self.cwd);
        cmd.envs(self.session_env());
        cmd
    }

    /// `opencode run --format json [ARGS] PROMPT` to its end.
    pub fn run(&self, args: &[&str], prompt: &str) -> CliRun {
        let mut all = vec!["run", "--format", "json"];
        all.extend_from_slice(args);
        all.push(prompt);
        run_limited(self.command(&all), OPENCODE_LIMIT, "opencode run")
    }

    /// `opencode serve` on a free loopback port with basic auth, once it listens.
    pub fn serve(&self) -> Served {
        let password = "mock-password";
        let mut cmd = self.command(&["serve", "--hostname", "127.0.0.1", "--port", "0"]);
        cmd.env("OPENCODE_SERVER_PASSWORD", password).stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::null());
        let mut child = cmd.spawn().expect("start opencode serve");
        // "opencode server listening on http://127.0.0.1:PORT"
        let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
        let port = loop {
            match lines.next() {
                Some(Ok(line)) => {
                    if let Some(port) = line.rsplit(':').next().and_then(|p| p.trim().parse::<u16>().ok())
                        && line.contains("listening on")
                    {
                        break port;
                    }
                }
                _ => {
                    let _ = child.kill();
                    panic!("opencode serve ended before it listened");
                }
            }
        };
        let auth = data_encoding::BASE64.encode(format!("opencode:{password}").as_bytes());
        Served { child, port, auth: format!("Basic {auth}") }
    }
}

/// A running `opencode serve`; dropping it kills it.
pub struct Served {
    child: Child,
    pub port: u16,
    auth: String,
}

impl Served {
    /// One request to the server's HTTP API: the status and the body as JSON (`null` when
    /// empty or not JSON).
    pub fn call(&self, method: &str, path: &str, body: Option<Value>) -> (u16, Value) {
        let body = body.map(|b| b.to_string());
        let headers = [("Authorization", self.auth.as_str()), ("Content-Type", "application/json")];
        let (status, raw) = http_request(self.port, method, path, &headers, body.as_deref().unwrap_or(""));
        (status, serde_json::from_slice(&raw).unwrap_or(Value::Null))
    }

    /// Create a session; its id.
    pub fn new_session(&self) -> String {
        let (status, s) = self.call("POST", "/session", Some(json!({})));
        assert_eq!(status, 200, "POST /session: {s}");
        s["id"].as_str().expect("a session id").to_string()
    }

    /// Queue a user message in `session` (`prompt_async`: it returns at once; the session
    /// takes it when it can).
    pub fn prompt(&self, session: &str, text: &str) {
        let body = json!({ "parts": [{ "type": "text", "text": text }] });
        let (status, r) = self.call("POST", &format!("/session/{session}/prompt_async"), Some(body));
        assert!(status == 204 || status == 200, "prompt_async: {status} {r}");
    }

    /// The session's messages (`[{info, parts}]`).
    pub fn messages(&self, session: &str) -> Vec<Value> {
        let (status, m) = self.call("GET", &format!("/session/{session}/message"), None);
        assert_eq!(status, 200, "GET messages: {m}");
        m.as_array().cloned().unwrap_or_default()
    }

    /// Wait until `done` holds of the session's messages (checked as they change, up to
    /// [`OPENCODE_LIMIT`]: a guard against a hang); the messages then.
    pub fn wait_for(&self, session: &str, what: &str, done: impl Fn(&[Value]) -> bool) -> Vec<Value> {
        let start = Instant::now();
        loop {
            let m = self.messages(session);
            if done(&m) {
                return m;
            }
            assert!(start.elapsed() < OPENCODE_LIMIT, "opencode serve: no {what} after {OPENCODE_LIMIT:?}: {m:?}");
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The texts of a served session's messages with `role` (`user` or `assistant`).
pub fn served_texts(messages: &[Value], role: &str) -> Vec<String> {
    let of_role = messages.iter().filter(|m| m["info"]["role"] == role);
    of_role
        .map(|m| {
            let parts = m["parts"].as_array().into_iter().flatten().filter(|p| p["type"] == "text");
            parts.filter_map(|p| p["text"].as_str()).collect::<Vec<_>>().join("\n")
        })
        .collect()
}

/// The status of the served session's tool parts (`pending`, `running`, `completed`,
/// `error`), by tool name.
pub fn served_tools(messages: &[Value]) -> Vec<(String, String)> {
    let parts = messages.iter().flat_map(|m| m["parts"].as_array().cloned().unwrap_or_default());
    parts
        .filter(|p| p["type"] == "tool")
        .map(|p| {
            (p["tool"].as_str().unwrap_or("").to_string(), p["state"]["status"].as_str().unwrap_or("").to_string())
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mock_model::{Scenario, Turn, shell, text, tool};

    fn request(messages: Value) -> Value {
        json!({ "model": "mock-model", "stream": true, "messages": messages,
                "tools": [{ "type": "function", "function": { "name": "bash" } }] })
    }

    /// The `data:` payloads of an SSE body, as JSON (`[DONE]` left out).
    fn chunks(r: &Response) -> Vec<Value> {
        let body = String::from_utf8(r.body.clone()).unwrap();
        body.lines().filter_map(|l| l.strip_prefix("data: ")).filter_map(|d| serde_json::from_str(d).ok()).collect()
    }

    #[test]
    fn a_turn_is_the_number_of_assistant_messages_and_titles_are_not_turns() {
        let r = request(json!([{ "role": "system", "content": "s" }, { "role": "user", "content": "do it" }]));
        assert_eq!(Chat.turn_of(&r), Some(0));
        let r = request(json!([
            { "role": "user", "content": "do it" },
            { "role": "assistant", "content": "", "tool_calls": [] },
            { "role": "tool", "tool_call_id": "c", "content": "out" },
        ]));
        assert_eq!(Chat.turn_of(&r), Some(1));
        let title = json!({ "model": "m", "messages": [{ "role": "user", "content": "title this" }] });
        assert_eq!(Chat.turn_of(&title), None);
    }

    #[test]
    fn tool_calls_stream_as_chunks_with_their_finish_reason_and_usage() {
        let blocks = [text("hi"), shell("echo x"), tool("mcp__coordd__check_inbox", json!({}))];
        let r = Chat.respond(&request(json!([])), Some(0), &blocks);
        assert_eq!(r.content_type, "text/event-stream");
        assert!(String::from_utf8_lossy(&r.body).ends_with("data: [DONE]\n\n"));
        let c = chunks(&r);
        assert_eq!(c[1]["choices"][0]["delta"]["content"], "hi");
        let call = &c[2]["choices"][0]["delta"]["tool_calls"][0];
        assert_eq!((call["index"].clone(), call["function"]["name"].clone()), (json!(0), json!("bash")));
        let args: Value = serde_json::from_str(call["function"]["arguments"].as_str().unwrap()).unwrap();
        assert_eq!(args, json!({ "command": "echo x", "description": "run a command" }));
        let mcp = &c[3]["choices"][0]["delta"]["tool_calls"][0];
        assert_eq!((mcp["index"].clone(), mcp["function"]["name"].clone()), (json!(1), json!("coordd_check_inbox")));
        assert_eq!(c[4]["choices"][0]["finish_reason"], "tool_calls");
        assert_eq!((c[5]["choices"].clone(), c[5]["usage"]["total_tokens"].clone()), (json!([]), json!(120)));
    }

    #[test]
    fn a_text_reply_stops_and_a_request_without_stream_gets_one_object() {
        let r = Chat.respond(&request(json!([])), Some(0), &[text("Done.")]);
        assert_eq!(chunks(&r).iter().rev().nth(1).unwrap()["choices"][0]["finish_reason"], "stop");
        let mut plain = request(json!([]));
        plain["stream"] = json!(false);
        let r = Chat.respond(&plain, None, &[text("ok")]);
        let v: Value = serde_json::from_slice(&r.body).unwrap();
        assert_eq!(
            (v["choices"][0]["message"]["content"].clone(), v["object"].clone()),
            (json!("ok"), json!("chat.completion"))
        );
    }

    #[test]
    fn the_mock_serves_the_scenario_over_http_turn_by_turn() {
        let mock = MockModel::start(Chat, Scenario::new(vec![Turn::reply(vec![shell("echo 1")])]));
        let ask = |r: &Value| http_request(mock.port(), "POST", "/v1/chat/completions", &[], &r.to_string());
        let (status, body) = ask(&request(json!([{ "role": "user", "content": "go" }])));
        assert_eq!(status, 200);
        assert!(String::from_utf8_lossy(&body).contains("echo 1"));
        let done = json!([{ "role": "user", "content": "go" }, { "role": "assistant", "content": "" }]);
        let (_, body) = ask(&request(done));
        assert!(String::from_utf8_lossy(&body).contains("Nothing more (turn 1)."));
        assert_eq!(mock.turn_requests().len(), 2);
    }
}
