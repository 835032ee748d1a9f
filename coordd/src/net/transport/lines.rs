//! Reading request lines from one connection within the daemon's budgets.
//!
//! Bytes are read in chunks of [`READ_CHUNK`] and framed by [`coord_ipc::LineCodec`]. The
//! unfinished line a connection has sent so far is charged to the daemon-wide
//! [`Limits::partial_lines`] budget: a line that would pass it is dropped (the client is
//! told at once, and the rest of that line is skipped as it arrives), as is a line that
//! waits longer than [`Limits::partial_line_timeout`] for its next byte. After a large
//! line the buffer is shrunk again, so an idle connection holds little whatever it sent
//! before. [`LineReader::next`] is cancel-safe: everything read is kept in the reader.

use std::time::Duration;

use bytes::{BufMut, BytesMut};
use coord_ipc::{Frame, LineCodec};
use coord_proto::MAX_REQUEST_BYTES;
use tokio::io::{AsyncRead, AsyncReadExt};
use tokio::time::Instant;
use tokio_util::codec::Decoder;

use super::limits::Limits;

/// Bytes read from the socket at a time.
pub const READ_CHUNK: usize = 64 * 1024;
/// A buffer that grew past this for one long line is replaced once the line is done.
const SHRINK_ABOVE: usize = 1024 * 1024;

/// What the reader hands the connection.
#[derive(Debug)]
pub enum Input {
    /// One request line (a request, a notification or a batch).
    Line(BytesMut),
    /// The client sent a line it must be told about and that will not be answered.
    Refused(Refusal),
}

/// Why a line was dropped unread.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// Longer than `MAX_REQUEST_BYTES`.
    TooLong,
    /// The unfinished lines of all connections are at their budget.
    OverBudget,
    /// No byte of the line arrived for the timeout.
    TimedOut(Duration),
}

pub struct LineReader<R> {
    read: R,
    buf: BytesMut,
    codec: LineCodec,
    limits: Limits,
    /// Bytes of the unfinished line charged to `limits.partial_lines`.
    charged: usize,
    /// The line being skipped was already refused: its end is not reported again.
    refused: bool,
    last_byte: Instant,
    eof: bool,
}

impl<R: AsyncRead + Unpin> LineReader<R> {
    pub fn new(read: R, limits: Limits) -> Self {
        LineReader {
            read,
            buf: BytesMut::with_capacity(READ_CHUNK),
            codec: LineCodec::new(MAX_REQUEST_BYTES),
            limits,
            charged: 0,
            refused: false,
            last_byte: Instant::now(),
            eof: false,
        }
    }

    /// Restart the idle clock of an unfinished line: the daemon itself did not read for a
    /// while (the connection was applying backpressure).
    pub fn touch(&mut self) {
        self.last_byte = Instant::now();
    }

    /// The next line or refusal; `None` at the end of the stream.
    pub async fn next(&mut self) -> std::io::Result<Option<Input>> {
        loop {
            let frame =
                if self.eof { self.codec.decode_eof(&mut self.buf)? } else { self.codec.decode(&mut self.buf)? };
            if let Some(frame) = frame {
                self.shrink();
                match frame {
                    Frame::Line(line) => return Ok(Some(Input::Line(line))),
                    Frame::TooLong if std::mem::take(&mut self.refused) => continue,
                    Frame::TooLong => return Ok(Some(Input::Refused(Refusal::TooLong))),
                }
            }
            if self.eof {
                self.charge(0);
                return Ok(None);
            }
            // `buf` now holds only the start of one unfinished line (or nothing).
            if !self.charge(self.buf.len()) {
                return Ok(Some(self.refuse(Refusal::OverBudget)));
            }
            let deadline = self.last_byte + self.limits.partial_line_timeout;
            let unfinished = !self.buf.is_empty();
            self.buf.reserve(READ_CHUNK);
            let mut room = (&mut self.buf).limit(READ_CHUNK);
            tokio::select! {
                n = self.read.read_buf(&mut room) => {
                    if n? == 0 {
                        self.eof = true;
                    } else {
                        self.last_byte = Instant::now();
                    }
                }
                _ = tokio::time::sleep_until(deadline), if unfinished => {
                    return Ok(Some(self.refuse(Refusal::TimedOut(self.limits.partial_line_timeout))));
                }
            }
        }
    }

    /// Drop the unfinished line and skip the rest of it.
    fn refuse(&mut self, why: Refusal) -> Input {
        self.codec.skip_line(&mut self.buf);
        self.charge(0);
        self.refused = true;
        self.shrink();
        Input::Refused(why)
    }

    /// Charge the unfinished line's `bytes` to the shared budget; false if they do not fit.
    fn charge(&mut self, bytes: usize) -> bool {
        let budget = &self.limits.partial_lines;
        if bytes > self.charged {
            if !budget.try_take(bytes - self.charged) {
                return false;
            }
        } else {
            budget.give_back(self.charged - bytes);
        }
        self.charged = bytes;
        true
    }

    fn shrink(&mut self) {
        if self.buf.capacity() > SHRINK_ABOVE && self.buf.len() <= READ_CHUNK {
            let rest = self.buf.split();
            self.buf = BytesMut::with_capacity(READ_CHUNK);
            self.buf.extend_from_slice(&rest);
        }
    }
}

impl<R> Drop for LineReader<R> {
    fn drop(&mut self) {
        self.limits.partial_lines.give_back(self.charged);
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use tokio::io::AsyncWriteExt;

    use super::*;
    use crate::net::transport::limits::Budget;

    fn limits(budget: usize, timeout: Duration) -> Limits {
        Limits { partial_lines: Arc::new(Budget::new(budget)), ..Limits::with_timeout(timeout) }
    }

    fn line(input: Option<Input>) -> String {
        match input {
            Some(Input::Line(l)) => String::from_utf8(l.to_vec()).unwrap(),
            other => panic!("not a line: {other:?}"),
        }
    }

    #[tokio::test]
    async fn a_line_over_the_shared_budget_is_refused_and_the_next_one_read() {
        let l = limits(100, Duration::from_secs(3600));
        let (mut client, server) = tokio::io::duplex(1024);
        let mut reader = LineReader::new(server, l.clone());
        client.write_all(&[b'x'; 150]).await.unwrap();
        assert!(matches!(reader.next().await.unwrap(), Some(Input::Refused(Refusal::OverBudget))));
        assert_eq!(l.partial_lines.bytes(), 0, "the dropped part is given back");
        client.write_all(b"yyy\nok\n").await.unwrap();
        assert_eq!(line(reader.next().await.unwrap()), "ok", "the rest of the refused line is skipped silently");
    }

    #[tokio::test]
    async fn an_unfinished_line_is_charged_until_it_ends() {
        let l = limits(1000, Duration::from_secs(3600));
        let (mut client, server) = tokio::io::duplex(1024);
        let mut reader = LineReader::new(server, l.clone());
        client.write_all(b"{\"a\":").await.unwrap();
        let pending = {
            use std::future::Future;
            let mut next = Box::pin(reader.next());
            let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
            next.as_mut().poll(&mut cx).is_pending()
        };
        assert!(pending);
        assert_eq!(l.partial_lines.bytes(), 5);
        client.write_all(b"1}\n").await.unwrap();
        assert_eq!(line(reader.next().await.unwrap()), "{\"a\":1}");
        drop(client);
        assert!(reader.next().await.unwrap().is_none());
        assert_eq!(l.partial_lines.bytes(), 0);
    }

    #[tokio::test(start_paused = true)]
    async fn an_idle_unfinished_line_times_out_and_its_end_is_skipped() {
        let l = limits(1000, Duration::from_secs(30));
        let (mut client, server) = tokio::io::duplex(1024);
        let mut reader = LineReader::new(server, l.clone());
        client.write_all(b"{\"stalled\":").await.unwrap();
        // The paused clock jumps to the deadline once everything is idle.
        assert!(matches!(reader.next().await.unwrap(), Some(Input::Refused(Refusal::TimedOut(_)))));
        assert_eq!(l.partial_lines.bytes(), 0);
        client.write_all(b"true}\n{\"next\":1}\n").await.unwrap();
        assert_eq!(line(reader.next().await.unwrap()), "{\"next\":1}");
    }
}
