//! Local-socket names and connections, the same on both ends: a Unix socket file on Unix,
//! a named pipe (derived from the socket path) on Windows.

use std::io;
use std::path::Path;

use interprocess::local_socket::Name;

/// A connected local socket (async).
pub type Stream = interprocess::local_socket::tokio::Stream;

/// The interprocess name for a socket path.
pub fn name(path: &Path) -> io::Result<Name<'static>> {
    #[cfg(unix)]
    {
        use interprocess::local_socket::{GenericFilePath, ToFsName};
        path.to_path_buf().to_fs_name::<GenericFilePath>()
    }
    #[cfg(windows)]
    {
        use interprocess::local_socket::{GenericNamespaced, ToNsName};
        // Named pipes live in their own namespace; derive a stable name from the path,
        // lower-cased as Windows paths compare (`C:\Proj` and `c:\proj` are one project).
        // Only the current user may open it (`crate::pipe_security`).
        let key = path.to_string_lossy().to_lowercase();
        let h = crate::paths::fnv1a(key.as_bytes());
        format!("coordd-{h:016x}").to_ns_name::<GenericNamespaced>()
    }
}

/// Connect to the daemon's socket.
pub async fn connect(path: &Path) -> io::Result<Stream> {
    use interprocess::local_socket::traits::tokio::Stream as _;
    interprocess::local_socket::tokio::Stream::connect(name(path)?).await
}

/// Connect to the daemon's socket without a runtime (blocking), dropping the connection:
/// is anybody listening?
pub fn probe_blocking(path: &Path) -> io::Result<()> {
    use interprocess::local_socket::traits::Stream as _;
    interprocess::local_socket::Stream::connect(name(path)?).map(drop)
}
