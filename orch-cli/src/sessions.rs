//! Launched sessions as `orch status` and `orch top` show them: client, pid, running time
//! or how it ended, and the last lines of its log.

use std::time::{SystemTime, UNIX_EPOCH};

use coord_proto::types::{LaunchSession, SessionState};

/// Seconds since the epoch of a stored instant (`YYYY-MM-DDTHH:MM:SS.mmmZ`, UTC).
fn epoch(ts: &str) -> Option<i64> {
    let n = |r: std::ops::Range<usize>| ts.get(r)?.parse::<i64>().ok();
    let (y, m, d) = (n(0..4)?, n(5..7)?, n(8..10)?);
    let (hh, mm, ss) = (n(11..13)?, n(14..16)?, n(17..19)?);
    // Days from the civil date (Howard Hinnant's algorithm).
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    Some(days * 86_400 + hh * 3600 + mm * 60 + ss)
}

fn duration(secs: i64) -> String {
    match secs.max(0) {
        s if s < 60 => format!("{s}s"),
        s if s < 3600 => format!("{}m{:02}s", s / 60, s % 60),
        s => format!("{}h{:02}m", s / 3600, (s % 3600) / 60),
    }
}

/// `running 3m12s`; once ended, how ([`LaunchSession::how_it_ended`]): `exit 0`,
/// `stopped (exit 143): the attempt was cancelled`, `lost: …`, `ended, no exit status: …`.
pub fn state(s: &LaunchSession) -> String {
    if s.state != SessionState::Running {
        return s.how_it_ended();
    }
    let now = SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_secs() as i64).unwrap_or(0);
    let ran = epoch(&s.started_at).map_or(String::new(), |t| format!(" {}", duration(now - t)));
    format!("running{ran}")
}

/// The last `n` lines of a session's log: the file while it is here, else the tail kept
/// with the session.
pub fn tail(s: &LaunchSession, n: usize) -> Vec<String> {
    let text = std::fs::read(&s.log_path)
        .ok()
        .map(|b| String::from_utf8_lossy(&b[b.len().saturating_sub(16 * 1024)..]).into_owned())
        .or_else(|| s.log_tail.clone())
        .unwrap_or_default();
    let lines: Vec<String> = text.lines().map(str::to_string).collect();
    lines[lines.len().saturating_sub(n)..].to_vec()
}

/// One line: `T1 a2 claude live @W1 pid 4242 running 3m12s` (the mode: `live` or
/// `one_shot`).
pub fn line(s: &LaunchSession) -> String {
    format!("{} a{} {} {} @{} pid {} {}", s.task_id, s.attempt, s.client, s.mode, s.agent, s.pid, state(s))
}

/// `orch status`: each task's newest session, with its log's last lines.
pub fn print(sessions: &[LaunchSession]) {
    let newest = newest_per_task(sessions);
    if newest.is_empty() {
        return;
    }
    println!("sessions:");
    for s in newest {
        println!("  {}  log: {}", line(s), s.log_path);
        for l in tail(s, 3) {
            println!("    | {l}");
        }
    }
}

/// The newest session of each task, in the order the tasks first had one.
pub fn newest_per_task(sessions: &[LaunchSession]) -> Vec<&LaunchSession> {
    let mut out: Vec<&LaunchSession> = Vec::new();
    for s in sessions {
        match out.iter_mut().find(|o| o.task_id == s.task_id) {
            Some(o) => *o = s,
            None => out.push(s),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn instants_and_durations_read_as_people_expect() {
        assert_eq!(epoch("1970-01-02T00:00:01.000Z"), Some(86_401));
        assert_eq!(epoch("2026-11-26T04:00:00.000Z").unwrap() - epoch("2026-11-25T04:00:00.000Z").unwrap(), 86_400);
        assert_eq!((duration(59), duration(192), duration(7380)), ("59s".into(), "3m12s".into(), "2h03m".into()));
    }
}
