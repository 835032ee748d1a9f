//! Request decoding: whatever a line holds, the daemon answers well-formed JSON-RPC (or
//! nothing, for a notification) and never panics.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|line: &[u8]| {
    if let Some(reply) = coordd::net::transport::fuzzing::handle_line(line) {
        let v: serde_json::Value = serde_json::from_str(&reply).expect("the reply is JSON");
        let ok = |r: &serde_json::Value| r["jsonrpc"] == "2.0" && (r.get("result").is_some() != r.get("error").is_some());
        match &v {
            serde_json::Value::Array(items) => assert!(items.iter().all(ok), "{reply}"),
            one => assert!(ok(one), "{reply}"),
        }
    }
});
