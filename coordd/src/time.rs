//! Time: an instant as milliseconds since the Unix epoch ([`Ts`]), which domain rules
//! compare as numbers; and the injected [`Clock`] every operation reads `now` from, so
//! tests move time instead of editing rows.
//!
//! On the wire and in storage an instant is the fixed-width RFC 3339 text
//! `YYYY-MM-DDTHH:MM:SS.mmmZ` ([`Ts::to_string`], [`Ts::parse`]).

use std::fmt;
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::error::{Error, Result};

/// An instant, in milliseconds since the Unix epoch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Ts(i64);

impl Ts {
    pub const fn from_millis(ms: i64) -> Ts {
        Ts(ms)
    }

    pub const fn millis(self) -> i64 {
        self.0
    }

    pub fn from_system(t: SystemTime) -> Ts {
        Ts(t.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_millis() as i64))
    }

    /// `self` plus `secs` seconds.
    pub fn plus_secs(self, secs: u64) -> Ts {
        Ts(self.0.saturating_add((secs as i64).saturating_mul(1000)))
    }

    /// Whole seconds from `earlier` to `self` (0 if `earlier` is later).
    pub fn secs_since(self, earlier: Ts) -> u64 {
        (self.0.saturating_sub(earlier.0).max(0) / 1000) as u64
    }

    /// Parse the stored and wire form (any RFC 3339 instant is accepted).
    pub fn parse(text: &str) -> Result<Ts> {
        humantime::parse_rfc3339_weak(text)
            .map(Ts::from_system)
            .map_err(|e| Error::Internal(format!("bad timestamp '{text}': {e}")))
    }

    fn system(self) -> SystemTime {
        UNIX_EPOCH + Duration::from_millis(self.0.max(0) as u64)
    }
}

impl fmt::Display for Ts {
    /// `YYYY-MM-DDTHH:MM:SS.mmmZ`: fixed width, so the text sorts in time order.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", humantime::format_rfc3339_millis(self.system()))
    }
}

/// Where operations read the time from.
pub trait Clock: Send + Sync + 'static {
    fn now(&self) -> Ts;
}

/// Environment variable that shifts the daemon's clock forward by this many seconds. A
/// testing aid for the end-to-end suites: a daemon restarted an hour ahead sees leases and
/// reservations made before expire without anyone waiting.
pub const CLOCK_OFFSET_ENV: &str = "COORDD_CLOCK_OFFSET_SECS";

/// The system clock, optionally shifted.
pub struct SystemClock {
    offset: Duration,
}

impl SystemClock {
    pub fn new(offset: Duration) -> Self {
        SystemClock { offset }
    }

    /// Shifted by [`CLOCK_OFFSET_ENV`] when that is set.
    pub fn from_env() -> Self {
        let secs = std::env::var(CLOCK_OFFSET_ENV).ok().and_then(|v| v.trim().parse().ok()).unwrap_or(0);
        SystemClock::new(Duration::from_secs(secs))
    }
}

impl Clock for SystemClock {
    fn now(&self) -> Ts {
        Ts::from_system(SystemTime::now() + self.offset)
    }
}

/// A clock that only moves when told to (tests).
pub struct ManualClock(AtomicI64);

impl ManualClock {
    pub fn at(t: Ts) -> Self {
        ManualClock(AtomicI64::new(t.millis()))
    }

    /// Move the clock forward.
    pub fn advance(&self, by: Duration) {
        self.0.fetch_add(by.as_millis() as i64, Ordering::SeqCst);
    }
}

impl Clock for ManualClock {
    fn now(&self) -> Ts {
        Ts(self.0.load(Ordering::SeqCst))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_is_fixed_width_sortable_and_round_trips() {
        let a = Ts::from_millis(1_700_000_000_000);
        let b = a.plus_secs(1);
        assert_eq!(a.to_string(), "2023-11-14T22:13:20.000Z");
        assert_eq!(b.to_string().len(), 24);
        assert!(a.to_string() < b.to_string());
        assert_eq!(Ts::parse(&b.to_string()).unwrap(), b);
        assert_eq!(b.secs_since(a), 1);
        assert_eq!(a.secs_since(b), 0);
    }

    #[test]
    fn the_manual_clock_moves_only_when_told() {
        let c = ManualClock::at(Ts::from_millis(5));
        assert_eq!(c.now(), Ts::from_millis(5));
        c.advance(Duration::from_secs(2));
        assert_eq!(c.now(), Ts::from_millis(2005));
    }
}
