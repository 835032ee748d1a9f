//! The jsonrpsee client transport over a local socket: one JSON message per line, framed
//! by [`coord_ipc::LineCodec`] on the way in.

use coord_ipc::{Frame, LineCodec};
use futures::StreamExt;
use jsonrpsee::core::client::{ReceivedMessage, TransportReceiverT, TransportSenderT};
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt};
use tokio_util::codec::FramedRead;

/// Longest line accepted from the daemon (a notification or response), in bytes. Requests
/// are limited to `MAX_REQUEST_BYTES`, but a response may carry several of them (a thread
/// with its history), so the bound is generous.
pub const MAX_RESPONSE_BYTES: usize = 1 << 30;

#[derive(Debug, thiserror::Error)]
pub enum TransportError {
    #[error("socket I/O failed: {0}")]
    Io(#[from] std::io::Error),
    #[error("the daemon closed the connection")]
    Closed,
    #[error("the daemon sent a line longer than {MAX_RESPONSE_BYTES} bytes")]
    TooLong,
}

pub struct Sender<W> {
    inner: W,
    buf: Vec<u8>,
}

pub struct Receiver<R> {
    inner: FramedRead<R, LineCodec>,
}

pub fn new<R: AsyncRead, W: AsyncWrite>(read: R, write: W) -> (Sender<W>, Receiver<R>) {
    (
        Sender { inner: write, buf: Vec::new() },
        Receiver { inner: FramedRead::with_capacity(read, LineCodec::new(MAX_RESPONSE_BYTES), 64 * 1024) },
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
        match self.inner.next().await {
            None => Err(TransportError::Closed),
            Some(Err(e)) => Err(e.into()),
            Some(Ok(Frame::TooLong)) => Err(TransportError::TooLong),
            Some(Ok(Frame::Line(line))) => {
                let text = String::from_utf8(line.to_vec())
                    .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e))?;
                Ok(ReceivedMessage::Text(text))
            }
        }
    }
}
