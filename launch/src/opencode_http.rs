//! The little HTTP the live opencode driver (opencode_live.rs) speaks to its own `opencode
//! serve` on 127.0.0.1: one request per connection (`Connection: close`) with a JSON body
//! and basic auth, and the server's event stream (`GET /event`, server-sent events, one
//! JSON object per `data:` line). Blocking, on the driver's own threads: it never runs on an
//! async executor. Bodies come with a length, chunked, or up to the connection's end.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;

use serde_json::Value;

/// How long a request may wait for its answer.
const CALL_LIMIT: std::time::Duration = std::time::Duration::from_secs(60);

/// An `opencode serve` on a loopback port, with its password.
#[derive(Clone)]
pub struct Server {
    port: u16,
    /// The `Authorization` header's value (user `opencode`).
    auth: String,
}

/// A fresh password: 16 bytes from the OS's random source, as hex.
pub fn password() -> std::io::Result<String> {
    let mut b = [0u8; 16];
    std::fs::File::open("/dev/urandom")?.read_exact(&mut b)?;
    Ok(b.iter().map(|x| format!("{x:02x}")).collect())
}

impl Server {
    pub fn new(port: u16, password: &str) -> Server {
        let basic = data_encoding::BASE64.encode(format!("opencode:{password}").as_bytes());
        Server { port, auth: format!("Basic {basic}") }
    }

    /// Send a request's head and body; the response's status and a reader of its body.
    fn send(
        &self,
        method: &str,
        path: &str,
        body: &str,
        accept: &str,
    ) -> std::io::Result<(u16, Box<dyn BufRead + Send>)> {
        let mut conn = TcpStream::connect(("127.0.0.1", self.port))?;
        if accept != "text/event-stream" {
            // A request is answered at once (`prompt_async` too): a server that does not
            // answer within this is hung. The event stream waits as long as it takes.
            conn.set_read_timeout(Some(CALL_LIMIT))?;
        }
        let head = format!(
            "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nConnection: close\r\nAuthorization: {}\r\n\
             Accept: {accept}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n",
            self.port,
            self.auth,
            body.len()
        );
        conn.write_all(head.as_bytes())?;
        conn.write_all(body.as_bytes())?;
        conn.flush()?;
        let mut r = BufReader::new(conn);
        let mut line = String::new();
        r.read_line(&mut line)?;
        let status = line.split_whitespace().nth(1).and_then(|s| s.parse().ok());
        let status = status.ok_or_else(|| std::io::Error::other(format!("not an HTTP response: {line:?}")))?;
        let (mut length, mut chunked) = (None, false);
        loop {
            let mut h = String::new();
            if r.read_line(&mut h)? == 0 {
                break;
            }
            let h = h.trim_end().to_ascii_lowercase();
            if h.is_empty() {
                break;
            }
            if let Some(v) = h.strip_prefix("content-length:") {
                length = v.trim().parse::<u64>().ok();
            } else if h.starts_with("transfer-encoding:") && h.contains("chunked") {
                chunked = true;
            }
        }
        let body: Box<dyn BufRead + Send> = match (chunked, length) {
            (true, _) => Box::new(BufReader::new(Chunked { inner: r, left: 0, done: false })),
            (false, Some(n)) => Box::new(r.take(n)),
            (false, None) => Box::new(r),
        };
        Ok((status, body))
    }

    /// One JSON request: the status and the body (`null` when empty or not JSON).
    pub fn call(&self, method: &str, path: &str, body: &Value) -> std::io::Result<(u16, Value)> {
        let body = if body.is_null() { String::new() } else { body.to_string() };
        let (status, mut r) = self.send(method, path, &body, "application/json")?;
        let mut raw = Vec::new();
        r.read_to_end(&mut raw)?;
        Ok((status, serde_json::from_slice(&raw).unwrap_or(Value::Null)))
    }

    /// The server's event stream, once it answered.
    pub fn events(&self) -> std::io::Result<Events> {
        let (status, body) = self.send("GET", "/event", "", "text/event-stream")?;
        if status != 200 {
            return Err(std::io::Error::other(format!("GET /event answered {status}")));
        }
        Ok(Events { body })
    }
}

/// Server-sent events, each `data:` a JSON object.
pub struct Events {
    body: Box<dyn BufRead + Send>,
}

impl Iterator for Events {
    type Item = Value;

    /// The next event; `None` when the stream ended (or broke).
    fn next(&mut self) -> Option<Value> {
        let mut data = String::new();
        loop {
            let mut line = String::new();
            if self.body.read_line(&mut line).ok()? == 0 {
                return None;
            }
            let line = line.trim_end_matches(['\r', '\n']);
            if let Some(d) = line.strip_prefix("data:") {
                data.push_str(d.strip_prefix(' ').unwrap_or(d));
            } else if line.is_empty() && !data.is_empty() {
                match serde_json::from_str(&data) {
                    Ok(v) => return Some(v),
                    Err(_) => data.clear(),
                }
            }
        }
    }
}

/// A chunked body, read as the bytes it carries.
struct Chunked<R> {
    inner: R,
    /// What is left of the current chunk.
    left: usize,
    done: bool,
}

impl<R: BufRead> Read for Chunked<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.done || buf.is_empty() {
            return Ok(0);
        }
        if self.left == 0 {
            let mut size = String::new();
            if self.inner.read_line(&mut size)? == 0 {
                self.done = true;
                return Ok(0);
            }
            let hex = size.trim().split(';').next().unwrap_or_default();
            self.left = usize::from_str_radix(hex, 16)
                .map_err(|_| std::io::Error::new(std::io::ErrorKind::InvalidData, format!("a chunk size: {size:?}")))?;
            if self.left == 0 {
                self.done = true;
                return Ok(0);
            }
        }
        let want = buf.len().min(self.left);
        let n = self.inner.read(&mut buf[..want])?;
        if n == 0 {
            self.done = true;
            return Ok(0);
        }
        self.left -= n;
        if self.left == 0 {
            // The CRLF after the chunk's bytes.
            let mut crlf = String::new();
            self.inner.read_line(&mut crlf)?;
        }
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_chunked_event_stream_reads_as_its_events() {
        let body = "7\r\ndata: {\r\n13\r\n\"type\":\"a\"}\n\ndata: \r\ne\r\n{\"type\":\"b\"}\n\n\r\n0\r\n\r\n";
        let chunked = Chunked { inner: body.as_bytes(), left: 0, done: false };
        let events = Events { body: Box::new(BufReader::new(chunked)) };
        let types: Vec<String> = events.map(|e| e["type"].as_str().unwrap_or_default().to_string()).collect();
        assert_eq!(types, ["a", "b"]);
    }
}
