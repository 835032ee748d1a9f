//! Newline-delimited framing: one JSON message per line, with a maximum line length.
//!
//! [`LineCodec`] is a `tokio_util` [`Decoder`], so a `FramedRead` over it is cancel-safe
//! (what was read of a partial line lives in the `FramedRead`, not in the future). A line
//! longer than the maximum is not an error that ends the stream: it is skipped up to its
//! newline, never buffered past the maximum, and reported as [`Frame::TooLong`], after
//! which the next line decodes normally. Blank lines are skipped; a trailing `\r` is
//! dropped.

use bytes::{Buf, BytesMut};
use tokio_util::codec::Decoder;

/// One decoded line.
#[derive(Debug, PartialEq, Eq)]
pub enum Frame {
    /// A non-blank line, without its line ending.
    Line(BytesMut),
    /// A line longer than the maximum; it was discarded.
    TooLong,
}

/// The decoder. See the module documentation.
#[derive(Debug, Clone)]
pub struct LineCodec {
    max: usize,
    /// Skipping the rest of a too-long line, up to its newline.
    discarding: bool,
    /// How far the current buffer was already searched for a newline.
    searched: usize,
}

impl LineCodec {
    /// A decoder accepting lines of at most `max` bytes (line ending excluded).
    pub fn new(max: usize) -> Self {
        LineCodec { max, discarding: false, searched: 0 }
    }

    /// The maximum line length, in bytes.
    pub fn max_length(&self) -> usize {
        self.max
    }

    /// Give up the line being read: call it when [`Decoder::decode`] returned `None`, so
    /// that `buf` holds only the start of one unfinished line. That part is dropped now,
    /// the rest is skipped up to its newline as it arrives, and the line is then reported
    /// as [`Frame::TooLong`].
    pub fn skip_line(&mut self, buf: &mut BytesMut) {
        buf.clear();
        self.discarding = true;
        self.searched = 0;
    }
}

fn is_blank(line: &[u8]) -> bool {
    line.iter().all(u8::is_ascii_whitespace)
}

fn trim_line_end(mut line: BytesMut) -> BytesMut {
    if line.last() == Some(&b'\n') {
        line.truncate(line.len() - 1);
    }
    if line.last() == Some(&b'\r') {
        line.truncate(line.len() - 1);
    }
    line
}

impl Decoder for LineCodec {
    type Item = Frame;
    type Error = std::io::Error;

    fn decode(&mut self, buf: &mut BytesMut) -> Result<Option<Frame>, Self::Error> {
        loop {
            if self.discarding {
                // Skip up to the newline that ends the long line, keeping nothing of it.
                return Ok(match buf.iter().position(|&b| b == b'\n') {
                    Some(i) => {
                        buf.advance(i + 1);
                        self.discarding = false;
                        Some(Frame::TooLong)
                    }
                    None => {
                        buf.clear();
                        None
                    }
                });
            }
            // A line of `max` bytes has its newline at index `max` at the latest.
            let window = buf.len().min(self.max.saturating_add(1));
            let from = self.searched.min(window);
            match buf[from..window].iter().position(|&b| b == b'\n') {
                Some(i) => {
                    let line = trim_line_end(buf.split_to(from + i + 1));
                    self.searched = 0;
                    if is_blank(&line) {
                        continue;
                    }
                    return Ok(Some(Frame::Line(line)));
                }
                None if buf.len() > self.max => {
                    self.discarding = true;
                    self.searched = 0;
                    buf.advance(window);
                }
                None => {
                    self.searched = buf.len();
                    return Ok(None);
                }
            }
        }
    }

    fn decode_eof(&mut self, buf: &mut BytesMut) -> Result<Option<Frame>, Self::Error> {
        if let Some(frame) = self.decode(buf)? {
            return Ok(Some(frame));
        }
        self.searched = 0;
        if std::mem::take(&mut self.discarding) {
            buf.clear();
            return Ok(Some(Frame::TooLong));
        }
        let rest = trim_line_end(buf.split());
        Ok(if is_blank(&rest) { None } else { Some(Frame::Line(rest)) })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures::StreamExt;
    use tokio_util::codec::FramedRead;

    async fn frames(input: &[u8], max: usize) -> Vec<Frame> {
        FramedRead::new(input, LineCodec::new(max)).map(|f| f.unwrap()).collect().await
    }

    fn line(s: &str) -> Frame {
        Frame::Line(BytesMut::from(s))
    }

    #[tokio::test]
    async fn splits_lines_skips_blanks_and_discards_long_ones() {
        let got = frames(b"abc\n\n  \r\nTOO-LONG-LINE\nxy\r\nlast", 5).await;
        assert_eq!(got, vec![line("abc"), Frame::TooLong, line("xy"), line("last")]);
    }

    #[tokio::test]
    async fn a_line_of_exactly_the_maximum_is_accepted() {
        assert_eq!(frames(b"12345\n123456\n", 5).await, vec![line("12345"), Frame::TooLong]);
    }

    #[tokio::test]
    async fn long_line_at_eof_is_reported() {
        assert_eq!(frames(b"ok\n0123456789", 5).await, vec![line("ok"), Frame::TooLong]);
    }

    /// A read dropped halfway through a line (another `select!` branch won) must not lose
    /// the part already read.
    #[tokio::test]
    async fn a_cancelled_read_keeps_the_partial_line() {
        use tokio::io::AsyncWriteExt;
        let (mut client, server) = tokio::io::duplex(16);
        let mut framed = FramedRead::new(server, LineCodec::new(1024));
        client.write_all(b"{\"first\":").await.unwrap();
        let now = std::pin::pin!(async {});
        let first = matches!(futures::future::select(framed.next(), now).await, futures::future::Either::Left(_));
        assert!(!first, "no full line yet");
        client.write_all(b"1}\nnext\n").await.unwrap();
        assert_eq!(framed.next().await.unwrap().unwrap(), line("{\"first\":1}"));
        assert_eq!(framed.next().await.unwrap().unwrap(), line("next"));
    }

    #[test]
    fn a_skipped_line_is_dropped_up_to_its_newline() {
        let mut codec = LineCodec::new(100);
        let mut buf = BytesMut::from("{\"unfinished\":");
        assert_eq!(codec.decode(&mut buf).unwrap(), None);
        codec.skip_line(&mut buf);
        assert!(buf.is_empty());
        buf.extend_from_slice(b"rest of it}\nnext\n");
        assert_eq!(codec.decode(&mut buf).unwrap(), Some(Frame::TooLong));
        assert_eq!(codec.decode(&mut buf).unwrap(), Some(line("next")));
    }

    #[tokio::test]
    async fn a_long_line_split_across_reads_is_discarded_without_buffering_it() {
        use tokio::io::AsyncWriteExt;
        let (mut client, server) = tokio::io::duplex(8);
        let mut framed = FramedRead::new(server, LineCodec::new(4));
        let writer = tokio::spawn(async move {
            client.write_all(b"0123456789abcdef\nok\n").await.unwrap();
        });
        assert_eq!(framed.next().await.unwrap().unwrap(), Frame::TooLong);
        assert!(framed.read_buffer().len() <= 8);
        assert_eq!(framed.next().await.unwrap().unwrap(), line("ok"));
        writer.await.unwrap();
    }

    /// What the decoder must produce for `input`, written the obvious way.
    fn reference(input: &[u8], max: usize) -> Vec<Frame> {
        let mut out = Vec::new();
        let mut lines: Vec<&[u8]> = input.split(|&b| b == b'\n').collect();
        // A last piece without a newline is still a line (at end of input).
        if lines.last().is_some_and(|l| l.is_empty()) {
            lines.pop();
        }
        for l in lines {
            if l.len() > max {
                out.push(Frame::TooLong);
                continue;
            }
            let l = l.strip_suffix(b"\r").unwrap_or(l);
            if !is_blank(l) {
                out.push(Frame::Line(BytesMut::from(l)));
            }
        }
        out
    }

    proptest::proptest! {
        /// However the input is cut into reads, the frames are those of the reference.
        #[test]
        fn decodes_like_the_reference_whatever_the_reads(
            input in proptest::collection::vec(proptest::sample::select(b"ab \r\n{}\"".to_vec()), 0..200),
            cuts in proptest::collection::vec(1usize..40, 1..20),
            max in 1usize..24,
        ) {
            let mut codec = LineCodec::new(max);
            let mut buf = BytesMut::new();
            let mut got = Vec::new();
            let mut rest = &input[..];
            let mut i = 0;
            while !rest.is_empty() {
                let n = cuts[i % cuts.len()].min(rest.len());
                buf.extend_from_slice(&rest[..n]);
                rest = &rest[n..];
                i += 1;
                while let Some(f) = codec.decode(&mut buf).unwrap() {
                    got.push(f);
                }
                // Never more than one maximal line (and its newline) is kept.
                proptest::prop_assert!(buf.len() <= max + 1 + n);
            }
            while let Some(f) = codec.decode_eof(&mut buf).unwrap() {
                got.push(f);
            }
            proptest::prop_assert_eq!(got, reference(&input, max));
        }
    }
}
