//! The dashboard in a real headless Chromium (Debian's `chromium`), driven over the DevTools
//! protocol: the page loads with its token and not without, updates live as mail is queued
//! and delivered, sends into a session, answers a blocked question and a permission request
//! as the overseer (a person, not the lead), also with credentials required (where only the
//! lead learns its URL, and the page answers as nobody else), and resumes after a daemon
//! restart. Skips (saying so) without Chromium, but fails under `COORD_CI`.

use coord_tests::browser::Browser;
use coord_tests::team::Team;
use coord_tests::*;
use serde_json::json;

/// `true` when the agent's unread badge shows `n`.
fn badge(agent: &str, n: u64) -> String {
    format!("document.querySelector('tr[data-agent=\"{agent}\"] .badge.unread')?.dataset.count === '{n}'")
}

/// The page's card of an open permission request.
const OPEN_REQUEST: &str = ".card.control.open[data-type=\"permission_request\"]";

/// Run `inbox` (its agent given) as a Claude Code PreToolUse hook for `git push origin main`,
/// which asks for permission and waits; return once the page shows the request.
fn push_hook(b: &mut Browser, p: &Project, inbox: Run) -> std::thread::JoinHandle<Out> {
    let input = json!({
        "session_id": "sess-1", "transcript_path": "/tmp/t.jsonl", "cwd": p.path(), "permission_mode": "default",
        "hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_use_id": "toolu_01",
        "tool_input": {"command": "git push origin main"}
    });
    let hook =
        inbox.args(["hook", "claude", "pre-tool-use", "--timeout-seconds", "120"]).stdin(input.to_string().as_bytes());
    let hook = std::thread::spawn(move || hook.run());
    b.wait_for(
        &format!("document.querySelector('{OPEN_REQUEST}')?.textContent.includes('git push origin main')"),
        "the request",
    );
    hook
}

#[test]
fn the_page_loads_with_its_token_and_is_refused_without_it() {
    let Some(mut b) = Browser::launch() else { return };
    let p = Project::new();
    let url = dashboard_url(&p);
    b.open_dashboard(&url);
    b.wait_for("document.getElementById('conn').dataset.state === 'live'", "the live indicator");
    assert_eq!(b.eval("document.title"), json!("coordd dashboard"));

    let token = url.trim_end_matches('/').rsplit('/').next().unwrap().to_string();
    let wrong = url.replace(&token, &"0".repeat(token.len()));
    b.goto(&wrong);
    b.wait_for("document.body && document.body.innerText.includes('token')", "the refusal");
    assert_eq!(b.eval("document.getElementById('conn') === null"), json!(true), "no page without the token");
}

#[test]
fn inbox_send_raises_the_badge_live_without_a_reload() {
    let Some(mut b) = Browser::launch() else { return };
    let p = Project::new();
    ok(&p, &["agent", "register", "--name", "bob-1", "--role", "worker"]);
    let url = dashboard_url(&p);
    b.open_dashboard(&format!("{url}#agents"));
    b.wait_for(&badge("bob-1", 0), "bob-1's empty badge");
    b.eval("window.__marker = 'same page'");

    ok(&p, &["send", "--from", "lead", "--to", "bob-1", "--summary", "please rebase"]);
    b.wait_for(&badge("bob-1", 1), "bob-1's badge to show 1");
    assert_eq!(b.eval("window.__marker"), json!("same page"), "the page was not reloaded");
}

#[test]
fn the_send_box_queues_mail_that_inbox_check_delivers_and_the_badge_clears() {
    let Some(mut b) = Browser::launch() else { return };
    let p = Project::new();
    ok(&p, &["agent", "register", "--name", "bob-2", "--role", "worker"]);
    let url = dashboard_url(&p);
    b.open_dashboard(&format!("{url}#agents"));
    b.type_enter("tr[data-agent=\"bob-2\"] input.send", "stop and run the tests");
    b.wait_for(&badge("bob-2", 1), "the badge after sending from the page");

    let checked = ok(&p, &["check", "--agent", "bob-2"]);
    let msgs = checked["messages"].as_array().expect("messages");
    assert_eq!(msgs.len(), 1, "{checked}");
    assert_eq!(msgs[0]["summary"], "stop and run the tests");
    assert_eq!(msgs[0]["from_agent"], "overseer");
    b.wait_for(&badge("bob-2", 0), "the badge to clear after inbox check");
}

#[test]
fn answering_a_blocked_question_in_the_page_wakes_wait_reply() {
    let Some(mut b) = Browser::launch() else { return };
    let p = Project::new();
    let (thr, after) = blocked_task(&p, "wkr", "diesel or sqlx?");
    let after = after.to_string();
    let waiter = p
        .inbox()
        .args(["wait-reply", "--agent", "wkr", "--thread", &thr, "--after-event", &after, "--timeout-seconds", "120"])
        .json_flag()
        .spawn();

    let url = dashboard_url(&p);
    b.open_dashboard(&format!("{url}#runs"));
    b.wait_for(
        "document.querySelector('.card.blocked[data-task=\"T1\"] .question')?.textContent.includes('diesel or sqlx?')",
        "the question",
    );
    b.type_enter(".card.blocked[data-task=\"T1\"] textarea", "sqlx, async all the way");

    let woke = finish(waiter).ok().json();
    assert_eq!(woke["woke"], true, "{woke}");
    assert_eq!(woke["message"]["kind"], "answer");
    assert_eq!(woke["message"]["summary"], "sqlx, async all the way");
    assert_eq!(woke["message"]["from_agent"], "overseer", "the person answers as themselves");
    b.wait_for("document.querySelector('.card.blocked[data-task=\"T1\"]') === null", "the card to leave the panel");
}

#[test]
fn the_page_resumes_after_a_daemon_restart() {
    let Some(mut b) = Browser::launch() else { return };
    let p = Project::new();
    let daemon = p.serve();
    ok(&p, &["agent", "register", "--name", "bob-3", "--role", "worker"]);
    let url = dashboard_url(&p);
    b.open_dashboard(&format!("{url}#agents"));
    b.wait_for(&badge("bob-3", 0), "bob-3's row");
    b.eval("window.__marker = 'same page'");

    daemon.signal("TERM");
    b.wait_for("document.getElementById('conn').dataset.state === 'down'", "the page to notice the daemon is gone");
    let _daemon = p.serve();
    // Committed by the new daemon, whether or not the page has reconnected yet.
    ok(&p, &["send", "--from", "lead", "--to", "bob-3", "--summary", "after the restart"]);
    b.wait_for(&badge("bob-3", 1), "the badge after the restart");
    b.wait_for("document.getElementById('conn').dataset.state === 'live'", "live again");
    assert_eq!(dashboard_url(&p), url, "the same URL is served again");
    let state = b.eval("({connects: window.__coord.connects, gaps: window.__coord.gaps, marker: window.__marker})");
    assert_eq!(state, json!({"connects": 2, "gaps": 0, "marker": "same page"}), "resumed in place, nothing missed");
}

#[test]
fn a_permission_request_is_denied_from_the_page_and_the_waiting_hook_says_so() {
    let Some(mut b) = Browser::launch() else { return };
    let p = Project::new();
    let _d = p.serve();
    ok(&p, &["--agent", "lead", "policy", "lead", "lead"]);
    ok(&p, &["--agent", "lead", "policy", "gate", "Bash(git push*)"]);
    let url = dashboard_url(&p);
    b.open_dashboard(&format!("{url}#control"));
    b.wait_for("document.getElementById('conn').dataset.state === 'live'", "the live indicator");

    // A worker's session is about to push: its PreToolUse hook asks the lead and waits.
    let hook = push_hook(&mut b, &p, p.inbox().args(["--agent", "w1"]));
    let card = OPEN_REQUEST;
    b.wait_for("document.getElementById('tab-control').textContent === '1'", "the open-request badge");
    b.eval(&format!("document.querySelector('{card} input.reason').value = 'not before review'"));
    b.eval(&format!("document.querySelector('{card} button.deny').click()"));

    let out = hook.join().unwrap().ok();
    let decision: serde_json::Value = serde_json::from_str(out.stdout.trim()).expect("the hook's decision");
    assert_eq!(decision["hookSpecificOutput"]["permissionDecision"], "deny", "{decision}");
    assert_eq!(decision["hookSpecificOutput"]["permissionDecisionReason"], "Denied by overseer: not before review");
    let answered = ".card.control.answered[data-type=\"permission_request\"]";
    b.wait_for(&format!("document.querySelector('{answered} .answerer')?.textContent === 'overseer'"), "who answered");
    let reason = b.eval(&format!("document.querySelector('{answered} .answer-reason').textContent"));
    assert!(reason.as_str().unwrap().contains("not before review"), "the reason is kept: {reason}");
    b.wait_for("document.getElementById('tab-control').hidden", "the badge cleared");
}

#[test]
fn the_page_resubscribes_from_its_cursor_when_the_daemon_ends_its_subscription() {
    let Some(mut b) = Browser::launch() else { return };
    let p = Project::new();
    ok(&p, &["agent", "register", "--name", "bob-4", "--role", "worker"]);
    let url = dashboard_url(&p);
    b.open_dashboard(&format!("{url}#agents"));
    b.wait_for(&badge("bob-4", 0), "bob-4's row");
    b.wait_for("document.getElementById('conn').dataset.state === 'live'", "live");
    // What the daemon sends a subscriber it cuts loose (protocol.md §5): a subscription error.
    b.eval(
        "(() => { const rpc = window.__coord.rpc; const sub = [...rpc.subs.keys()][0];
           rpc.receive(JSON.stringify({jsonrpc: '2.0', method: 'events.batch',
             params: {subscription: sub, error: {code: -32000, message: 'cut loose'}}})); })()",
    );
    b.wait_for("window.__coord.connects === 2", "a new connection");
    ok(&p, &["send", "--from", "lead", "--to", "bob-4", "--summary", "after the cut"]);
    b.wait_for(&badge("bob-4", 1), "the badge on the new subscription");
    assert_eq!(b.eval("window.__coord.gaps"), json!(0), "nothing missed");
}

#[test]
fn with_credentials_required_only_the_leads_page_approves_a_workers_request_and_never_as_the_worker() {
    let Some(mut b) = Browser::launch() else { return };
    let t = Team::new();
    ok(&t.p, &["--agent", "leader", "policy", "lead", "leader"]);
    ok(&t.p, &["--agent", "leader", "policy", "gate", "Bash(git push*)"]);
    t.require_credentials();
    let url = dashboard_url_as(&t.p, t.secret("leader"));
    // The URL's token is the overseer's credential: the worker cannot learn it.
    let mut wa = t.conn("w-a");
    let status = wa.rpc("dashboard.status", json!({}));
    assert_eq!(status["result"]["running"], true, "{status}");
    assert!(status["result"]["url"].is_null(), "the worker learns the page's URL: {status}");
    let started = wa.rpc("dashboard.start", json!({}));
    assert!(started["result"].is_null(), "the worker got the URL from dashboard.start: {started}");
    b.open_dashboard(&format!("{url}#control"));
    b.wait_for("document.getElementById('conn').dataset.state === 'live'", "the live indicator");

    // The worker's real PreToolUse hook, with its own secret, asks the lead and waits.
    let inbox = t.p.inbox().args(["--agent", "w-a"]).env(coord_proto::types::AGENT_SECRET_ENV, t.secret("w-a"));
    let hook = push_hook(&mut b, &t.p, inbox);
    let card = OPEN_REQUEST;

    // Through the page's own WebSocket, the request cannot be answered as the worker.
    let as_worker = b.eval(
        "(async () => {
           const rpc = window.__coord.rpc;
           const r = (await rpc.call('control.requests', {})).requests[0];
           try {
             await rpc.call('control.send', {from: 'w-a', type: 'permission_response',
               payload: {request_id: r.request_id, approved: true, reason: 'self-approved'}});
             return 'answered';
           } catch (e) { return e.data && e.data.code; }
         })()",
    );
    assert_eq!(as_worker, json!("page_acts_as_overseer"));

    // The person approves it in the page, as the overseer, and the worker's hook allows.
    b.eval(&format!("document.querySelector('{card} input.reason').value = 'reviewed'"));
    b.eval(&format!("document.querySelector('{card} button.approve').click()"));
    let out = hook.join().unwrap().ok();
    let decision: serde_json::Value = serde_json::from_str(out.stdout.trim()).expect("the hook's decision");
    assert_eq!(decision["hookSpecificOutput"]["permissionDecision"], "allow", "{decision}");
    assert_eq!(decision["hookSpecificOutput"]["permissionDecisionReason"], "Approved by overseer: reviewed");
}
