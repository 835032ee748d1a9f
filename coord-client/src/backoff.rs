//! The one backoff of every retry loop in the clients (`Client::connect`, `EventStream`,
//! `coord-inbox`'s daemon inbox, `coord-launch`'s calls): a pause that doubles from a first
//! delay up to a cap. What to retry, and when to give up, stays with each loop.

use std::time::Duration;

/// Doubling pauses between tries.
#[derive(Debug, Clone)]
pub struct Backoff {
    first: Duration,
    next: Duration,
    max: Duration,
    pauses: u32,
}

impl Backoff {
    /// Pauses of `first`, then twice as long each time, never longer than `max`.
    pub const fn new(first: Duration, max: Duration) -> Backoff {
        Backoff { first, next: first, max, pauses: 0 }
    }

    /// The next pause, and double the one after it.
    pub fn next_delay(&mut self) -> Duration {
        let d = self.next;
        self.next = self.next.saturating_mul(2).min(self.max);
        self.pauses += 1;
        d
    }

    /// Sleep the next pause.
    pub async fn pause(&mut self) {
        tokio::time::sleep(self.next_delay()).await;
    }

    /// How many pauses were taken since the start (or the last [`Backoff::reset`]).
    pub fn pauses(&self) -> u32 {
        self.pauses
    }

    /// Start again from the first pause (after a success).
    pub fn reset(&mut self) {
        self.next = self.first;
        self.pauses = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pauses_double_up_to_the_cap_and_reset() {
        let mut b = Backoff::new(Duration::from_millis(50), Duration::from_millis(300));
        let ms: Vec<u128> = (0..5).map(|_| b.next_delay().as_millis()).collect();
        assert_eq!(ms, [50, 100, 200, 300, 300]);
        assert_eq!(b.pauses(), 5);
        b.reset();
        assert_eq!((b.next_delay(), b.pauses()), (Duration::from_millis(50), 1));
    }

    #[test]
    fn an_unbounded_cap_does_not_overflow() {
        let mut b = Backoff::new(Duration::from_secs(1), Duration::MAX);
        for _ in 0..100 {
            b.next_delay();
        }
        assert_eq!(b.next_delay(), Duration::MAX);
    }
}
