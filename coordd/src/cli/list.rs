//! `coordd list`: the daemons running for this user, from the records they leave in the
//! runtime directory (`super::registry`), each asked for its details on its socket. A
//! record whose daemon does not answer is stale (it was killed) and is removed.

use std::process::ExitCode;
use std::time::Duration;

use super::control;
use super::registry;
use coord_proto::Exit;
use coord_proto::types::HelloResult;

/// How long one daemon gets to answer.
const PROBE: Duration = Duration::from_secs(2);

pub async fn run(json: bool) -> anyhow::Result<ExitCode> {
    let mut live = Vec::new();
    for (path, info) in registry::all() {
        let socket = std::path::PathBuf::from(&info.socket);
        let hello =
            tokio::time::timeout(PROBE, control::call::<HelloResult>(&socket, "system.hello", serde_json::json!({})));
        match hello.await {
            Ok(Ok(h)) if h.pid == info.pid => live.push(h),
            Ok(Err(control::ControlError::NotRunning)) | Ok(Ok(_)) => registry::remove(&path, info.pid),
            _ => {}
        }
    }
    // Our own probe is one of each daemon's connections.
    let clients = |h: &HelloResult| h.connections.saturating_sub(1);
    if json {
        let daemons: Vec<serde_json::Value> = live
            .iter()
            .map(|h| {
                serde_json::json!({"project": project(&h.db), "db": h.db, "socket": h.socket, "pid": h.pid,
                                   "version": h.version, "started_at": h.started_at, "uptime_ms": h.uptime_ms,
                                   "clients": clients(h), "subscriptions": h.subscriptions})
            })
            .collect();
        println!("{}", serde_json::json!({"ok": true, "command": "list", "daemons": daemons}));
    } else if live.is_empty() {
        println!("no coordd daemon is running for this user");
    } else {
        let rows: Vec<[String; 5]> = live
            .iter()
            .map(|h| {
                let up = humantime::format_duration(Duration::from_secs(h.uptime_ms / 1000)).to_string();
                [h.pid.to_string(), up, clients(h).to_string(), h.subscriptions.to_string(), project(&h.db)]
            })
            .collect();
        let width = terminal_size::terminal_size().map(|(w, _)| w.0 as usize);
        print!("{}", table(["PID", "UPTIME", "CLIENTS", "WAITS", "PROJECT"], &rows, width));
    }
    Ok(if live.is_empty() { Exit::NoMatch } else { Exit::Ok }.into())
}

/// The project of a database in its default place, else the database itself.
fn project(db: &str) -> String {
    let p = std::path::Path::new(db);
    match p.parent() {
        Some(dir) if dir.file_name().is_some_and(|n| n == ".agents") => {
            dir.parent().map_or(db.to_string(), |r| r.display().to_string())
        }
        _ => db.to_string(),
    }
}

/// Columns padded to their widest cell; the last one cut (keeping its end, the telling part
/// of a path) to fit `width` when printing to a terminal.
fn table<const N: usize>(head: [&str; N], rows: &[[String; N]], width: Option<usize>) -> String {
    let mut w = [0usize; N];
    for r in std::iter::once(&head.map(str::to_string)).chain(rows) {
        for (i, c) in r.iter().enumerate() {
            w[i] = w[i].max(c.chars().count());
        }
    }
    let fixed: usize = w[..N - 1].iter().map(|x| x + 2).sum();
    let last = width.map_or(usize::MAX, |t| t.saturating_sub(fixed).max(12));
    let mut out = String::new();
    for r in std::iter::once(&head.map(str::to_string)).chain(rows) {
        for (i, c) in r.iter().enumerate().take(N - 1) {
            out.push_str(&format!("{c:<width$}  ", width = w[i]));
        }
        let c = &r[N - 1];
        let n = c.chars().count();
        if n > last {
            out.push('…');
            out.extend(c.chars().skip(n - last + 1));
        } else {
            out.push_str(c);
        }
        out.push('\n');
    }
    out
}
