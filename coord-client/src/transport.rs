//! The jsonrpsee client transport over a local socket: one JSON message per line.

use jsonrpsee::core::client::{ReceivedMessage, TransportReceiverT, TransportSenderT};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};

#[derive(Debug, thiserror::Error)]
pub enum TransportError {
    #[error("socket I/O failed: {0}")]
    Io(#[from] std::io::Error),
    #[error("the daemon closed the connection")]
    Closed,
}

pub struct Sender<W> {
    inner: W,
    buf: Vec<u8>,
}

pub struct Receiver<R> {
    inner: BufReader<R>,
    buf: Vec<u8>,
}

pub fn new<R: AsyncRead, W: AsyncWrite>(read: R, write: W) -> (Sender<W>, Receiver<R>) {
    (
        Sender { inner: write, buf: Vec::new() },
        Receiver { inner: BufReader::with_capacity(64 * 1024, read), buf: Vec::new() },
    )
}

impl<W: AsyncWrite + Unpin + Send + 'static> TransportSenderT for Sender<W> {
    type Error = TransportError;

    async fn send(&mut self, msg: String) -> Result<(), Self::Error> {
        // One write per message: the line and its newline together.
        self.buf.clear();
        self.buf.extend_from_slice(msg.as_bytes());
        self.buf.push(b'\n');
        self.inner.write_all(&self.buf).await?;
        self.inner.flush().await?;
        Ok(())
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.inner.shutdown().await?;
        Ok(())
    }
}

impl<R: AsyncRead + Unpin + Send + 'static> TransportReceiverT for Receiver<R> {
    type Error = TransportError;

    async fn receive(&mut self) -> Result<ReceivedMessage, Self::Error> {
        loop {
            self.buf.clear();
            let n = self.inner.read_until(b'\n', &mut self.buf).await?;
            if n == 0 {
                return Err(TransportError::Closed);
            }
            while matches!(self.buf.last(), Some(b'\n' | b'\r')) {
                self.buf.pop();
            }
            if self.buf.is_empty() {
                continue;
            }
            let text = String::from_utf8(std::mem::take(&mut self.buf))
                .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e))?;
            return Ok(ReceivedMessage::Text(text));
        }
    }
}
