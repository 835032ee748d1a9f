//! The dashboard's listener without a browser: the token, Host and Origin checks, the
//! security headers, the WebSocket speaking the same JSON-RPC protocol as the socket, and
//! `orch dashboard --port/--stop`.

use std::io::{Read, Write};
use std::net::TcpStream;

use coord_tests::*;
use serde_json::{Value, json};

struct Url {
    port: u16,
    token: String,
}

fn parse(url: &str) -> Url {
    let rest = url.strip_prefix("http://127.0.0.1:").expect("a loopback URL");
    let (port, path) = rest.split_once('/').unwrap();
    Url { port: port.parse().unwrap(), token: path.trim_end_matches('/').to_string() }
}

/// One raw HTTP/1.1 GET; the status, the head and the body.
fn get(port: u16, path: &str, headers: &[(&str, &str)]) -> (u16, String, String) {
    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    let mut req = format!("GET {path} HTTP/1.1\r\nConnection: close\r\n");
    if !headers.iter().any(|(k, _)| k.eq_ignore_ascii_case("host")) {
        req.push_str(&format!("Host: 127.0.0.1:{port}\r\n"));
    }
    for (k, v) in headers {
        req.push_str(&format!("{k}: {v}\r\n"));
    }
    req.push_str("\r\n");
    s.write_all(req.as_bytes()).unwrap();
    let mut out = String::new();
    s.read_to_string(&mut out).unwrap();
    let (head, body) = out.split_once("\r\n\r\n").unwrap_or((&out, ""));
    let status = head.split_whitespace().nth(1).unwrap().parse().unwrap();
    (status, head.to_ascii_lowercase(), body.to_string())
}

fn ws(u: &Url, token: &str, origin: Option<&str>) -> Result<WsConn, String> {
    WsConn::open(&format!("http://127.0.0.1:{}/{token}/", u.port), origin)
}

#[test]
fn requests_without_the_token_get_401_and_no_data() {
    let p = Project::new();
    let u = parse(&dashboard_url(&p));
    let wrong = "f".repeat(u.token.len());
    for path in ["/".to_string(), format!("/{wrong}/"), format!("/{wrong}/app.js"), format!("/{}/", &u.token[..10])] {
        let (status, _, body) = get(u.port, &path, &[]);
        assert_eq!(status, 401, "{path}");
        assert!(!body.contains("<html") && !body.contains("import"), "{path}: {body}");
    }
    let Err(err) = ws(&u, &wrong, None) else { panic!("a wrong token must be refused") };
    assert!(err.contains("401"), "{err}");
}

#[test]
fn the_page_and_its_assets_come_from_the_binary_with_a_strict_csp() {
    let p = Project::new();
    let u = parse(&dashboard_url(&p));
    let (status, head, body) = get(u.port, &format!("/{}/", u.token), &[]);
    assert_eq!(status, 200);
    assert!(body.contains("<script type=\"module\" src=\"app.js\">"), "{body}");
    assert!(head.contains("content-security-policy: default-src 'none'; script-src 'self'"), "{head}");
    assert!(head.contains("x-frame-options: deny") && head.contains("referrer-policy: no-referrer"), "{head}");
    let (status, head, _) = get(u.port, &format!("/{}/app.js", u.token), &[]);
    assert_eq!(status, 200);
    assert!(head.contains("content-type: text/javascript"), "{head}");
    // A refusal carries the policy too.
    let (_, head, _) = get(u.port, "/", &[]);
    assert!(head.contains("content-security-policy"), "{head}");
    let (status, _, _) = get(u.port, &format!("/{}/nope.js", u.token), &[]);
    assert_eq!(status, 404);
}

#[test]
fn a_foreign_host_is_refused_against_dns_rebinding() {
    let p = Project::new();
    let u = parse(&dashboard_url(&p));
    let host = format!("attacker.example:{}", u.port);
    let (status, _, body) = get(u.port, &format!("/{}/", u.token), &[("Host", &host)]);
    assert_eq!(status, 421);
    assert!(!body.contains("<html"));
    let local = format!("localhost:{}", u.port);
    assert_eq!(get(u.port, &format!("/{}/", u.token), &[("Host", &local)]).0, 200);
}

#[test]
fn a_foreign_origin_is_refused_on_http_and_websocket() {
    let p = Project::new();
    let u = parse(&dashboard_url(&p));
    let (status, _, _) = get(u.port, &format!("/{}/", u.token), &[("Origin", "http://attacker.example")]);
    assert_eq!(status, 403);
    let Err(err) = ws(&u, &u.token, Some("http://attacker.example")) else {
        panic!("a foreign origin must be refused")
    };
    assert!(err.contains("403"), "{err}");
    let own = format!("http://127.0.0.1:{}", u.port);
    ws(&u, &u.token, Some(&own)).expect("its own origin is accepted");
}

#[test]
fn the_websocket_speaks_the_socket_protocol() {
    let p = Project::new();
    let u = parse(&dashboard_url(&p));
    let mut s = ws(&u, &u.token, None).unwrap();
    // Params as on the socket: left out, a bare object, or a one-element array.
    let hello = s.call(json!({"jsonrpc": "2.0", "id": 1, "method": "system.hello"}));
    assert_eq!(hello["result"]["server"], "coordd");
    let methods = hello["result"]["methods"].as_array().unwrap();
    for m in ["view.agents", "view.run", "view.timeline", "dashboard.start", "dashboard.status", "dashboard.stop"] {
        assert!(methods.contains(&json!(m)), "{m} missing");
    }
    let sub = s.call(json!({"jsonrpc": "2.0", "id": 2, "method": "events.subscribe", "params": {"after_event": 0}}));
    assert!(sub["result"].is_number() || sub["result"].is_string(), "{sub}");
    let sent = s.call(json!({"jsonrpc": "2.0", "id": 3, "method": "inbox.send", "params": {"from": "overseer", "to": "w", "summary": "hi"}}),
    );
    let event_id = sent["result"]["event_id"].clone();
    assert!(event_id.is_number(), "{sent}");
    let is_it = |v: &Value| v["method"] == "events.event" && v["params"]["result"]["event_id"] == event_id;
    let note = match s.notes.iter().find(|v| is_it(v)) {
        Some(v) => v.clone(),
        None => loop {
            let v = s.next_message();
            if is_it(&v) {
                break v;
            }
        },
    };
    assert_eq!(note["params"]["subscription"], sub["result"]);
    let agents = s.call(json!({"jsonrpc": "2.0", "id": 4, "method": "view.agents", "params": [{}]}));
    let w =
        agents["result"]["agents"].as_array().unwrap().iter().find(|a| a["agent"]["agent_id"] == "w").cloned().unwrap();
    assert_eq!(w["pending"], 1, "{w}");
    let bad =
        s.call(json!({"jsonrpc": "2.0", "id": 5, "method": "view.timeline", "params": {"agent": "w", "run_id": "R1"}}));
    assert_eq!(bad["error"]["data"]["code"], "invalid_args", "{bad}");
}

#[test]
fn a_fixed_port_is_used_and_a_busy_one_is_refused() {
    let p = Project::new();
    let busy = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = busy.local_addr().unwrap().port();
    let v = p.orch().args(["dashboard", "--port", &port.to_string()]).json_flag().run().code(20).json();
    assert_eq!(v["error"]["code"], "port_unavailable", "{v}");
    drop(busy);
    let v = p.orch().args(["dashboard", "--port", &port.to_string()]).json_flag().run().ok().json();
    assert_eq!(v["port"], port);
    assert_eq!(parse(v["url"].as_str().unwrap()).port, port);
}

#[test]
fn stop_closes_the_listener_and_a_restart_does_not_serve_it_again() {
    let p = Project::new();
    let d = p.serve();
    let u = parse(&dashboard_url(&p));
    let v = p.inbox().args(["dashboard", "--stop"]).json_flag().run().ok().json();
    assert_eq!(v["stopped"], true);
    assert!(TcpStream::connect(("127.0.0.1", u.port)).is_err(), "nothing listens after --stop");
    d.signal("TERM");
    let _d = p.serve();
    let v = p.orch().args(["dashboard", "--stop"]).json_flag().run().ok().json();
    assert_eq!(v["stopped"], false, "not served again after a restart");
}

#[test]
fn a_restart_serves_the_same_url_again() {
    let p = Project::new();
    let d = p.serve();
    let url = dashboard_url(&p);
    d.signal("TERM");
    let _d = p.serve();
    let u = parse(&url);
    assert_eq!(get(u.port, &format!("/{}/", u.token), &[]).0, 200, "served at once after the restart");
    assert_eq!(dashboard_url(&p), url);
}

#[test]
fn with_credentials_required_the_websocket_writes_as_an_agent_only_once_authenticated() {
    let p = Project::new();
    let lead =
        ok(&p, &["agent", "register", "--name", "lead", "--role", "lead"])["secret"].as_str().unwrap().to_string();
    ok(&p, &["init", "--require-credentials", "--lead", "lead"]);
    let u = parse(&dashboard_url_as(&p, &lead));
    let mut s = ws(&u, &u.token, None).unwrap();
    let send = json!({"jsonrpc": "2.0", "id": 1, "method": "inbox.send",
        "params": {"from": "lead", "to": "w1", "summary": "from the page"}});
    let refused = s.call(send.clone());
    assert_eq!(refused["error"]["data"]["code"], "page_acts_as_overseer", "{refused}");
    let off = json!({"jsonrpc": "2.0", "id": 2, "method": "inbox.init", "params": {"require_credentials": false}});
    let refused = s.call(off);
    assert_eq!(
        refused["error"]["data"]["code"], "unauthenticated",
        "the token does not lift the protection: {refused}"
    );
    // Reads need no identity.
    let agents = s.call(json!({"jsonrpc": "2.0", "id": 3, "method": "view.agents"}));
    assert!(agents["result"]["agents"].is_array(), "{agents}");
    // The connection authenticates as an agent, as on the socket, and then writes as it.
    let auth = json!({"jsonrpc": "2.0", "id": 4, "method": "agents.authenticate",
        "params": {"agent_id": "lead", "secret": lead}});
    assert!(s.call(auth)["result"].is_object());
    let sent = s.call(json!({"jsonrpc": "2.0", "id": 5, "method": "inbox.send",
        "params": {"from": "lead", "to": "w1", "summary": "from the page"}}));
    assert!(sent["result"]["event_id"].is_i64(), "{sent}");
}

#[test]
fn the_icon_answers_at_the_root_without_the_token() {
    let p = Project::new();
    let u = parse(&dashboard_url(&p));
    let mut s = TcpStream::connect(("127.0.0.1", u.port)).unwrap();
    let req = format!("GET /favicon.ico HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nConnection: close\r\n\r\n", u.port);
    s.write_all(req.as_bytes()).unwrap();
    let mut out = Vec::new();
    s.read_to_end(&mut out).unwrap();
    let at = out.windows(4).position(|w| w == b"\r\n\r\n").expect("a head");
    let head = String::from_utf8_lossy(&out[..at]).to_ascii_lowercase();
    assert!(head.starts_with("http/1.1 200"), "{head}");
    assert!(head.contains("content-type: image/x-icon"), "{head}");
    assert_eq!(&out[at + 4..at + 8], &[0, 0, 1, 0], "an ICO file");
    // A foreign Host still gets nothing.
    assert_eq!(get(u.port, "/favicon.ico", &[("Host", "evil.example:80")]).0, 421);
}

#[test]
fn moving_to_another_port_gets_a_new_token() {
    let p = Project::new();
    let old = parse(&dashboard_url(&p));
    let free = std::net::TcpListener::bind(("127.0.0.1", 0)).unwrap().local_addr().unwrap().port();
    let v = p.orch().args(["dashboard", "--port", &free.to_string()]).json_flag().run().ok().json();
    let new = parse(v["url"].as_str().unwrap());
    assert_eq!(new.port, free);
    assert_ne!(new.token, old.token, "a page that still knows the old port never learns the new token");
    assert_eq!(get(new.port, &format!("/{}/", new.token), &[]).0, 200);
    assert_eq!(get(new.port, &format!("/{}/", old.token), &[]).0, 401);
}
