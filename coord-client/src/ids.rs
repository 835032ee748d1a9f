//! Ids and instants a client writes in coordd's own form. An id it chooses, so it can use
//! one before the daemon records it (a message sent again under its id, a session whose
//! processes carry its id): a prefix, `_`, and a UUIDv7 in 26 lowercase base32hex
//! characters. An instant: fixed-width RFC 3339 UTC with milliseconds.

use std::time::{SystemTime, UNIX_EPOCH};

/// A new time-ordered id with this prefix (`msg`, `ses`).
pub fn new_id(prefix: &str) -> String {
    const ALPHABET: &[u8; 32] = b"0123456789abcdefghijklmnopqrstuv";
    let v = u128::from_be_bytes(*uuid::Uuid::now_v7().as_bytes());
    // 128 bits in 26 five-bit digits, most significant first (the last one padded).
    let mut id = String::with_capacity(prefix.len() + 27);
    id.push_str(prefix);
    id.push('_');
    for i in 0..26 {
        let digit = if i < 25 { (v >> (123 - 5 * i)) & 31 } else { (v & 0b111) << 2 };
        id.push(ALPHABET[digit as usize] as char);
    }
    id
}

/// Now as fixed-width RFC 3339 UTC with milliseconds.
pub fn now_rfc3339() -> String {
    let ms = SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_millis() as i64).unwrap_or(0);
    let (days, rem) = (ms.div_euclid(86_400_000), ms.rem_euclid(86_400_000));
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    let (h, m, s, milli) = (rem / 3_600_000, rem / 60_000 % 60, rem / 1000 % 60, rem % 1000);
    format!("{year:04}-{month:02}-{day:02}T{h:02}:{m:02}:{s:02}.{milli:03}Z")
}

#[cfg(test)]
mod tests {
    #[test]
    fn ids_have_the_daemons_form_and_sort_in_creation_order() {
        let a = super::new_id("ses");
        let b = super::new_id("ses");
        assert!(a.starts_with("ses_") && a.len() == 30, "{a}");
        assert!(a[4..].bytes().all(|c| c.is_ascii_digit() || (b'a'..=b'v').contains(&c)), "{a}");
        assert!(a < b);
    }
}
