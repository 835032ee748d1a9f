//! `--only pipeline` (issue 32): clients that pipeline large replies and do not read them.
//! Three connections each write 64 `events.list {"limit":1000}` over 1 MiB messages (a
//! page of about 15 MiB each) and read nothing, while a fourth sends one batch of 16 such
//! calls; then everyone reads. The aim: the daemon's peak resident size (`VmHWM`, reset
//! after the messages are sent) stays at or under [`AIM_MIB`].

use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::time::Instant;

use coord_tests::{proc_mib, reset_peak_rss};
use serde_json::{Value, json};

use super::report;

/// The aim for the daemon's peak resident size, in MiB.
const AIM_MIB: u64 = 300;
/// Messages of 1 MiB in the store (as in `--only replies`): each page holds 15 of them.
const MESSAGES: usize = 100;
const CONNECTIONS: usize = 3;
const PIPELINED: usize = 64;
const BATCH: usize = 16;

struct Conn {
    w: UnixStream,
    r: BufReader<UnixStream>,
}

impl Conn {
    fn open(socket: &std::path::Path) -> Conn {
        let s = UnixStream::connect(socket).unwrap();
        Conn { w: s.try_clone().unwrap(), r: BufReader::new(s) }
    }

    fn send(&mut self, v: &Value) {
        self.w.write_all(v.to_string().as_bytes()).unwrap();
        self.w.write_all(b"\n").unwrap();
    }

    /// The next reply line, unparsed; `None` once the daemon closed the connection (a
    /// line cut short by the close is not one).
    fn line(&mut self) -> Option<Vec<u8>> {
        let mut line = Vec::new();
        self.r.read_until(b'\n', &mut line).ok()?;
        line.ends_with(b"\n").then_some(line)
    }
}

fn page(id: usize) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "events.list", "params": {"limit": 1000}})
}

pub fn pipeline(socket: &std::path::Path, pid: u32) {
    let mut w = Conn::open(socket);
    let body = "x".repeat(1024 * 1024);
    for i in 0..MESSAGES {
        w.send(&json!({"jsonrpc": "2.0", "id": i, "method": "inbox.send",
            "params": {"from": "lead", "to": "r", "summary": "m", "body": body}}));
        w.line().expect("a reply to the send");
    }
    let before = proc_mib(pid, "VmRSS");
    reset_peak_rss(pid);
    let t0 = Instant::now();
    let mut stuck: Vec<Conn> = (0..CONNECTIONS).map(|_| Conn::open(socket)).collect();
    for c in &mut stuck {
        for i in 0..PIPELINED {
            c.send(&page(i));
        }
    }
    let mut batch = Conn::open(socket);
    batch.send(&Value::Array((0..BATCH).map(page).collect()));
    let batch_said = match batch.line() {
        Some(reply) => {
            let members: Vec<Value> = serde_json::from_slice(&reply).unwrap_or_default();
            let ran = members.iter().filter(|m| m["result"].is_object()).count();
            format!("batch reply {:.1} MiB, {ran} of {BATCH} calls run", reply.len() as f64 / 1048576.0)
        }
        None => "batch: the daemon closed the connection before its whole reply".into(),
    };
    let (mut largest, mut pages) = (0, 0);
    for c in &mut stuck {
        for _ in 0..PIPELINED {
            let Some(line) = c.line() else { break };
            (largest, pages) = (largest.max(line.len()), pages + 1);
        }
    }
    let peak = proc_mib(pid, "VmHWM");
    report(
        &format!("{CONNECTIONS} connections x {PIPELINED} pipelined pages, not reading, + a batch of {BATCH}"),
        format!(
            "RSS {before} -> {} MiB, peak {peak} MiB (aim <= {AIM_MIB} MiB: {}); {pages} of {} pages \
             of {:.1} MiB read; {batch_said}; {:.0} s",
            proc_mib(pid, "VmRSS"),
            if peak <= AIM_MIB { "met" } else { "MISSED" },
            CONNECTIONS * PIPELINED,
            largest as f64 / 1048576.0,
            t0.elapsed().as_secs_f64()
        ),
    );
}
