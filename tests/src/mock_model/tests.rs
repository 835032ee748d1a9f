//! The mock's own behaviour, over real HTTP on loopback: scripted usage in each dialect's
//! reply, the sum of what it reported, and a live session's user turns.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use serde_json::{Value, json};

use super::anthropic::Anthropic;
use super::openai::OpenAi;
use super::{MockModel, Scenario, Turn, Usage, shell, text};

/// POST `body` to the mock and return the response body.
fn post(mock: &MockModel, path: &str, body: &Value) -> String {
    let mut conn = TcpStream::connect(("127.0.0.1", mock.port())).unwrap();
    let body = body.to_string();
    write!(conn, "POST {path} HTTP/1.1\r\nHost: x\r\nContent-Length: {}\r\n\r\n{body}", body.len()).unwrap();
    let mut r = BufReader::new(conn);
    let mut length = 0;
    loop {
        let mut h = String::new();
        r.read_line(&mut h).unwrap();
        if h.trim().is_empty() {
            break;
        }
        if let Some(v) = h.to_ascii_lowercase().strip_prefix("content-length:") {
            length = v.trim().parse().unwrap();
        }
    }
    let mut out = vec![0; length];
    r.read_exact(&mut out).unwrap();
    String::from_utf8(out).unwrap()
}

/// The data of the SSE events named `name`.
fn events(sse: &str, name: &str) -> Vec<Value> {
    sse.split("\n\n")
        .filter(|e| e.starts_with(&format!("event: {name}\n")))
        .filter_map(|e| e.lines().find_map(|l| l.strip_prefix("data: ")))
        .map(|d| serde_json::from_str(d).unwrap())
        .collect()
}

fn claude_request(messages: Value) -> Value {
    json!({ "model": "m", "stream": true, "tools": [{ "name": "Bash" }], "messages": messages })
}

fn codex_request(input: Value) -> Value {
    json!({ "model": "m", "stream": true, "tools": [{ "type": "function", "name": "exec_command" }], "input": input })
}

#[test]
fn an_anthropic_reply_reports_its_turns_usage_in_message_start_and_message_delta() {
    let scripted = Usage::new(1000, 77, 300, 50);
    let mock = MockModel::start(Anthropic, Scenario::new(vec![Turn::reply(vec![text("hi")]).usage(scripted)]));
    let sse = post(&mock, "/v1/messages", &claude_request(json!([{ "role": "user", "content": "go" }])));
    let start = &events(&sse, "message_start")[0]["message"]["usage"];
    assert_eq!(
        (&start["input_tokens"], &start["cache_read_input_tokens"], &start["cache_creation_input_tokens"]),
        (&json!(1000), &json!(300), &json!(50)),
        "{sse}"
    );
    assert_eq!(events(&sse, "message_delta")[0]["usage"]["output_tokens"], 77, "{sse}");
    assert_eq!(mock.reported_usage(), scripted);
    assert_eq!(mock.requests()[0].usage, Some(scripted));
}

#[test]
fn a_responses_reply_counts_cached_tokens_in_its_input_tokens() {
    let scripted = Usage::new(1000, 77, 300, 50);
    let mock = MockModel::start(OpenAi, Scenario::new(vec![Turn::reply(vec![text("hi")]).usage(scripted)]));
    let sse = post(&mock, "/v1/responses", &codex_request(json!([])));
    let usage = &events(&sse, "response.completed")[0]["response"]["usage"];
    assert_eq!(
        usage,
        &json!({ "input_tokens": 1350, "input_tokens_details": { "cached_tokens": 300, "cache_write_tokens": 50 },
                 "output_tokens": 77, "output_tokens_details": { "reasoning_tokens": 0 }, "total_tokens": 1427 }),
        "{sse}"
    );
    assert_eq!(mock.reported_usage(), scripted);
}

#[test]
fn every_reply_reports_the_standard_usage_unless_its_turn_scripts_one() {
    let mock = MockModel::start(Anthropic, Scenario::new(vec![Turn::reply(vec![text("hi")])]));
    // A main-loop turn, a turn past the scenario's end, a request of another kind (no Bash),
    // and a request that is not for the model.
    post(&mock, "/v1/messages", &claude_request(json!([{ "role": "user", "content": "go" }])));
    let past = json!([{ "role": "user", "content": "go" }, { "role": "assistant", "content": "hi" },
                      { "role": "user", "content": "more" }]);
    post(&mock, "/v1/messages", &claude_request(past));
    post(&mock, "/v1/messages", &json!({ "model": "m", "messages": [] }));
    post(&mock, "/v1/other", &json!({}));
    let usages: Vec<Option<Usage>> = mock.requests().iter().map(|r| r.usage).collect();
    let standard = Some(Usage::STANDARD);
    assert_eq!(usages, [standard, standard, standard, None]);
    assert_eq!(mock.reported_usage(), Usage::new(300, 60, 0, 0));
}

#[test]
fn a_new_user_turn_takes_the_next_turn_of_the_scenario_and_records_its_text() {
    let turns = vec![
        Turn::reply(vec![shell("inbox ask")]),
        Turn::reply(vec![text("Waiting for the lead.")]),
        Turn::reply(vec![text("Thanks.")]).usage(Usage::new(5, 6, 7, 8)),
    ];
    let mock = MockModel::start(Anthropic, Scenario::new(turns));
    let mut messages = vec![json!({ "role": "user", "content": [{ "type": "text", "text": "the task" }] })];
    let asked = post(&mock, "/v1/messages", &claude_request(json!(messages)));
    assert!(asked.contains("inbox ask"), "{asked}");
    messages.push(
        json!({ "role": "assistant", "content": [{ "type": "tool_use", "id": "t1", "name": "Bash", "input": {} }] }),
    );
    messages.push(
        json!({ "role": "user", "content": [{ "type": "tool_result", "tool_use_id": "t1", "content": "asked" }] }),
    );
    post(&mock, "/v1/messages", &claude_request(json!(messages)));
    messages.push(json!({ "role": "assistant", "content": [{ "type": "text", "text": "Waiting for the lead." }] }));
    // The session is idle now; the answer comes as a new user turn, whenever.
    messages.push(json!({ "role": "user", "content": [{ "type": "text", "text": "Answer from lead: yes" }] }));
    let answered = post(&mock, "/v1/messages", &claude_request(json!(messages)));
    assert!(answered.contains("Thanks."), "{answered}");
    let reqs = mock.turn_requests();
    let seen: Vec<(Option<usize>, Vec<String>)> = reqs.iter().map(|r| (r.turn, r.user_input.clone())).collect();
    assert_eq!(
        seen,
        [
            (Some(0), vec!["the task".to_string()]),
            (Some(1), vec![]),
            (Some(2), vec!["Answer from lead: yes".to_string()]),
        ]
    );
    assert_eq!(reqs[2].usage, Some(Usage::new(5, 6, 7, 8)));
}

#[test]
fn a_message_injected_beside_a_tool_result_is_user_input() {
    let mock = MockModel::start(Anthropic, Scenario::new(vec![]));
    let messages = json!([
        { "role": "user", "content": "the task" },
        { "role": "assistant", "content": [{ "type": "tool_use", "id": "t1", "name": "Bash", "input": {} }] },
        { "role": "user", "content": [
            { "type": "tool_result", "tool_use_id": "t1", "content": "out" },
            { "type": "text", "text": "The user sent a new message while you were working:\nmail" } ] },
    ]);
    post(&mock, "/v1/messages", &claude_request(messages));
    let user = &mock.requests()[0].user_input;
    assert_eq!(user.len(), 1, "{user:?}");
    assert!(user[0].ends_with("mail"), "{user:?}");
}

#[test]
fn a_responses_request_records_the_user_messages_after_the_models_last_item() {
    let mock = MockModel::start(OpenAi, Scenario::new(vec![Turn::reply(vec![text("one")])]));
    let input = json!([
        { "type": "message", "role": "user", "content": [{ "type": "input_text", "text": "the task" }] },
        { "type": "message", "role": "assistant", "id": "msg_t0_1", "content": [{ "type": "output_text", "text": "one" }] },
        { "type": "message", "role": "developer", "content": [{ "type": "input_text", "text": "hook context" }] },
        { "type": "message", "role": "user", "content": [{ "type": "input_text", "text": "answer" }] },
    ]);
    post(&mock, "/v1/responses", &codex_request(input));
    let r = &mock.requests()[0];
    assert_eq!((r.turn, r.user_input.clone()), (Some(1), vec!["answer".to_string()]));
}

#[test]
fn wait_for_returns_a_request_as_it_arrives() {
    let mock = MockModel::start(Anthropic, Scenario::new(vec![]));
    assert!(mock.wait_for(Duration::ZERO, |_| true).is_none());
    let port = mock.port();
    let poster = std::thread::spawn(move || {
        let mut conn = TcpStream::connect(("127.0.0.1", port)).unwrap();
        let body = claude_request(json!([{ "role": "user", "content": "late" }])).to_string();
        write!(conn, "POST /v1/messages HTTP/1.1\r\nContent-Length: {}\r\n\r\n{body}", body.len()).unwrap();
        let mut first = String::new();
        BufReader::new(conn).read_line(&mut first).unwrap();
    });
    let got = mock.wait_for(Duration::from_secs(60), |r| r.user_input.iter().any(|t| t == "late"));
    assert_eq!(got.map(|r| r.turn), Some(Some(0)));
    poster.join().unwrap();
}
