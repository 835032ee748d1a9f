//! Small helpers shared by the domain modules: timestamps and identifiers.

use std::time::{Duration, SystemTime};

/// Environment variable that shifts the daemon's clock forward by this many seconds. A
/// testing aid: restarting a daemon an hour ahead makes leases and reservations expire
/// without waiting for them. Read once, at first use.
pub const CLOCK_OFFSET_ENV: &str = "COORDD_CLOCK_OFFSET_SECS";

/// The current time (see [`ts`] for its stored text form), shifted by
/// [`CLOCK_OFFSET_ENV`] when that is set.
pub fn now() -> SystemTime {
    static OFFSET: std::sync::OnceLock<Duration> = std::sync::OnceLock::new();
    let offset = *OFFSET.get_or_init(|| {
        std::env::var(CLOCK_OFFSET_ENV)
            .ok()
            .and_then(|v| v.trim().parse().ok())
            .map(Duration::from_secs)
            .unwrap_or_default()
    });
    SystemTime::now() + offset
}

/// Format a time as `YYYY-MM-DDTHH:MM:SS.mmmZ` (fixed width, so it sorts as text).
pub fn ts(t: SystemTime) -> String {
    humantime::format_rfc3339_millis(t).to_string()
}

/// `t + secs`, as text.
pub fn ts_after(t: SystemTime, secs: u64) -> String {
    ts(t + Duration::from_secs(secs))
}

/// A time-ordered identifier with a readable prefix, e.g. `thr_019aa9f0c2b15f2c9a0b`:
/// 48 bits of milliseconds since the epoch, then 32 random bits. Ids created later sort
/// later, so primary-key inserts append to the right edge of their B-tree instead of
/// dirtying a random page per insert (which made commits and checkpoints several times
/// more expensive).
pub fn new_id(prefix: &str) -> String {
    let ms = SystemTime::now().duration_since(SystemTime::UNIX_EPOCH).map_or(0, |d| d.as_millis() as u64);
    let mut buf = [0u8; 10];
    buf[..6].copy_from_slice(&ms.to_be_bytes()[2..]);
    fill_random(&mut buf[6..]);
    let mut s = String::with_capacity(prefix.len() + 1 + 20);
    s.push_str(prefix);
    s.push('_');
    push_hex(&mut s, &buf);
    s
}

/// A 128-bit secret lease token.
pub fn new_token() -> String {
    let mut buf = [0u8; 16];
    fill_random(&mut buf);
    let mut s = String::with_capacity(3 + 32);
    s.push_str("lt_");
    push_hex(&mut s, &buf);
    s
}

fn fill_random(buf: &mut [u8]) {
    // getrandom only fails when the OS has no entropy source at all.
    getrandom::fill(buf).expect("the OS random source is unavailable");
}

fn push_hex(s: &mut String, bytes: &[u8]) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    for b in bytes {
        s.push(HEX[(b >> 4) as usize] as char);
        s.push(HEX[(b & 15) as usize] as char);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_are_fixed_width_and_sortable() {
        let a = ts(SystemTime::UNIX_EPOCH + Duration::from_millis(1_700_000_000_000));
        let b = ts_after(SystemTime::UNIX_EPOCH + Duration::from_millis(1_700_000_000_000), 1);
        assert_eq!(a.len(), 24);
        assert_eq!(b.len(), 24);
        assert!(a < b);
        assert!(a.ends_with('Z'));
    }

    #[test]
    fn ids_are_prefixed_and_unique() {
        let a = new_id("thr");
        assert!(a.starts_with("thr_"));
        assert_eq!(a.len(), 24);
        assert_ne!(a, new_id("thr"));
        let earlier = new_id("msg");
        std::thread::sleep(Duration::from_millis(2));
        assert!(new_id("msg") > earlier, "ids sort by creation time");
        assert_eq!(new_token().len(), 35);
    }
}
