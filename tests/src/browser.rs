//! Headless Chromium for the dashboard tests, driven over the DevTools protocol: launch it
//! (Debian's `chromium`), open a page, evaluate JavaScript, wait for a condition inside the
//! page (a `MutationObserver`, not a poll), type, and take screenshots.
//!
//! When Chromium is missing, [`Browser::launch`] returns `None` after printing why, so a
//! test can skip; with `COORD_CI` set it panics instead: CI must not skip browser tests.

use std::io::{BufRead, BufReader};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tungstenite::stream::MaybeTlsStream;
use tungstenite::{Message, WebSocket};

/// How long one DevTools command may take before the test fails.
const COMMAND_TIMEOUT: Duration = Duration::from_secs(60);

/// A headless Chromium with one page open.
pub struct Browser {
    child: Child,
    ws: WebSocket<MaybeTlsStream<TcpStream>>,
    session: String,
    next_id: u64,
    /// Console messages and exceptions of the page, for failure reports.
    pub console: Vec<String>,
    _profile: tempfile::TempDir,
}

/// The Chromium executable: `$COORD_CHROMIUM`, else the first of the usual names on PATH.
pub fn chromium() -> Option<PathBuf> {
    if let Ok(p) = std::env::var("COORD_CHROMIUM") {
        return Some(PathBuf::from(p));
    }
    let path = std::env::var_os("PATH")?;
    for dir in std::env::split_paths(&path) {
        for name in ["chromium", "chromium-browser", "google-chrome", "chrome"] {
            let p = dir.join(name);
            if p.is_file() {
                return Some(p);
            }
        }
    }
    None
}

impl Browser {
    /// Start Chromium with a fresh profile and open a blank page. `None` (with a message)
    /// when it is not installed, outside CI.
    pub fn launch() -> Option<Browser> {
        let Some(exe) = chromium() else {
            if std::env::var_os("COORD_CI").is_some() {
                panic!("Chromium is not installed; CI needs it for the dashboard tests (.ci/run installs `chromium`)");
            }
            eprintln!(
                "SKIPPED: Chromium is not installed (apt-get install chromium); set COORD_CI=1 to make this fail"
            );
            return None;
        };
        Some(Browser::start(&exe, 1400, 800))
    }

    fn start(exe: &Path, width: u32, height: u32) -> Browser {
        let profile = tempfile::Builder::new().prefix("coord-chromium-").tempdir().expect("profile dir");
        let mut child = Command::new(exe)
            .args([
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-quic",
                "--no-first-run",
                "--no-default-browser-check",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--disable-extensions",
                "--remote-debugging-port=0",
                "--remote-allow-origins=*",
                &format!("--window-size={width},{height}"),
            ])
            .arg(format!("--user-data-dir={}", profile.path().display()))
            .arg("about:blank")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {}: {e}", exe.display()));
        let stderr = child.stderr.take().unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut tx = Some(tx);
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                if let Some(url) = line.strip_prefix("DevTools listening on ")
                    && let Some(tx) = tx.take()
                {
                    let _ = tx.send(url.trim().to_string());
                }
            }
        });
        let url = rx.recv_timeout(COMMAND_TIMEOUT).expect("Chromium did not announce its DevTools endpoint");
        let (ws, _) = tungstenite::connect(url.as_str()).expect("connect to DevTools");
        if let MaybeTlsStream::Plain(s) = ws.get_ref() {
            s.set_read_timeout(Some(COMMAND_TIMEOUT)).unwrap();
        }
        let mut b = Browser { child, ws, session: String::new(), next_id: 1, console: Vec::new(), _profile: profile };
        let target = b.call_browser("Target.createTarget", json!({"url": "about:blank"}));
        let target_id = target["targetId"].as_str().unwrap().to_string();
        let attached = b.call_browser("Target.attachToTarget", json!({"targetId": target_id, "flatten": true}));
        b.session = attached["sessionId"].as_str().unwrap().to_string();
        b.call("Page.enable", json!({}));
        b.call("Runtime.enable", json!({}));
        b.call(
            "Emulation.setDeviceMetricsOverride",
            json!({"width": width, "height": height, "deviceScaleFactor": 1, "mobile": false}),
        );
        b
    }

    fn send(&mut self, method: &str, params: Value, session: bool) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        let mut msg = json!({"id": id, "method": method, "params": params});
        if session {
            msg["sessionId"] = json!(self.session);
        }
        self.ws.send(Message::text(msg.to_string())).expect("send to DevTools");
        let deadline = Instant::now() + COMMAND_TIMEOUT;
        loop {
            assert!(Instant::now() < deadline, "DevTools did not answer {method}");
            let m = self.ws.read().unwrap_or_else(|e| panic!("DevTools connection failed during {method}: {e}"));
            let Message::Text(text) = m else { continue };
            let v: Value = serde_json::from_str(text.as_str()).expect("DevTools JSON");
            if v["id"] == json!(id) {
                if let Some(err) = v.get("error") {
                    panic!("{method} failed: {err}");
                }
                return v["result"].clone();
            }
            self.note(&v);
        }
    }

    /// Keep what the page said, for failure reports.
    fn note(&mut self, v: &Value) {
        match v["method"].as_str() {
            Some("Runtime.consoleAPICalled") => {
                let args: Vec<String> = v["params"]["args"]
                    .as_array()
                    .map(|a| a.iter().map(|x| x["value"].to_string()).collect())
                    .unwrap_or_default();
                self.console.push(format!("console.{}: {}", v["params"]["type"], args.join(" ")));
            }
            Some("Runtime.exceptionThrown") => {
                self.console.push(format!("exception: {}", v["params"]["exceptionDetails"]));
            }
            _ => {}
        }
    }

    fn call_browser(&mut self, method: &str, params: Value) -> Value {
        self.send(method, params, false)
    }

    /// A DevTools command on the page.
    pub fn call(&mut self, method: &str, params: Value) -> Value {
        self.send(method, params, true)
    }

    /// Open `url` (no wait).
    pub fn goto(&mut self, url: &str) {
        self.call("Page.navigate", json!({"url": url}));
    }

    /// Open the dashboard at `url` and wait for its first complete render.
    pub fn open_dashboard(&mut self, url: &str) {
        self.goto(url);
        self.wait_for("document.body && document.body.dataset.ready === '1'", "the dashboard's first render");
    }

    /// Evaluate `expr` in the page (promises awaited) and return its value.
    pub fn eval(&mut self, expr: &str) -> Value {
        let r = self.call("Runtime.evaluate", json!({"expression": expr, "awaitPromise": true, "returnByValue": true}));
        if let Some(ex) = r.get("exceptionDetails") {
            panic!("page script failed: {ex}\nconsole: {:#?}", self.console);
        }
        r["result"]["value"].clone()
    }

    /// Wait until `cond` (a JavaScript expression) is true in the page: checked at once and
    /// after every DOM change, from inside the page. Panics after a minute with `what`.
    pub fn wait_for(&mut self, cond: &str, what: &str) {
        let js = format!(
            r#"new Promise((resolve) => {{
                const check = () => {{ try {{ return !!({cond}); }} catch (e) {{ return false; }} }};
                if (check()) return resolve(true);
                const obs = new MutationObserver(() => {{ if (check()) {{ obs.disconnect(); clearTimeout(t); resolve(true); }} }});
                obs.observe(document, {{ subtree: true, childList: true, characterData: true, attributes: true }});
                const t = setTimeout(() => {{ obs.disconnect(); resolve(check()); }}, 45000);
            }})"#
        );
        let ok = self.eval(&js);
        assert_eq!(ok, json!(true), "timed out waiting for {what} ({cond})\nconsole: {:#?}", self.console);
    }

    /// Focus the element matching `selector`, type `text` and press Enter.
    pub fn type_enter(&mut self, selector: &str, text: &str) {
        let sel = serde_json::to_string(selector).unwrap();
        self.wait_for(&format!("document.querySelector({sel})"), selector);
        self.eval(&format!("document.querySelector({sel}).focus()"));
        self.call("Input.insertText", json!({"text": text}));
        for kind in ["keyDown", "keyUp"] {
            self.call(
                "Input.dispatchKeyEvent",
                json!({"type": kind, "key": "Enter", "code": "Enter", "windowsVirtualKeyCode": 13, "nativeVirtualKeyCode": 13}),
            );
        }
    }

    /// Resize the page's viewport (390×844: a phone; 1400×800: a laptop).
    pub fn viewport(&mut self, width: u32, height: u32) {
        self.call(
            "Emulation.setDeviceMetricsOverride",
            json!({"width": width, "height": height, "deviceScaleFactor": 1, "mobile": false}),
        );
        self.wait_for(&format!("window.innerWidth === {width}"), "the new viewport width");
    }

    /// How far the page is wider than the window, in pixels (0: no horizontal overflow),
    /// with the widest element that sticks out, for the failure message.
    pub fn overflow(&mut self) -> (i64, String) {
        let v = self.eval(
            "(() => { const w = window.innerWidth; let worst = '', max = w;
               for (const el of document.querySelectorAll('body *')) {
                 const r = el.getBoundingClientRect();
                 if (r.width && r.right > max) { max = r.right; worst = el.tagName + '.' + el.className + ' ' + (el.textContent || '').slice(0, 40); }
               }
               return [document.documentElement.scrollWidth - w, worst]; })()",
        );
        (v[0].as_i64().unwrap_or(i64::MAX), v[1].as_str().unwrap_or_default().to_string())
    }

    /// Save a PNG of the page.
    pub fn screenshot(&mut self, path: &Path) {
        let r = self.call("Page.captureScreenshot", json!({"format": "png"}));
        let png = data_encoding::BASE64.decode(r["data"].as_str().unwrap().as_bytes()).expect("base64 screenshot");
        std::fs::write(path, png).expect("write screenshot");
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
