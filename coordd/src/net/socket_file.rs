//! The daemon's socket file, watched while the daemon runs: a file removed or replaced
//! under it (a cleanup script, `rm .agents/*`) would leave clients unable to reach it and a
//! new daemon unable to start (the lock is this one's), so the daemon listens on a new one.
//!
//! On Linux the socket's folder is watched with inotify: the daemon wakes only when an
//! entry of that folder is created, removed or renamed, never on a timer, so an idle
//! daemon costs nothing. Other Unix systems check the file every [`POLL`]. On Windows the
//! socket is a named pipe, with no file to lose.

use std::path::{Path, PathBuf};

/// How often the file is checked where it cannot be watched (Unix systems other than Linux).
#[cfg(all(unix, not(target_os = "linux")))]
pub const POLL: std::time::Duration = std::time::Duration::from_millis(500);

/// The identity of the socket file (device and inode), to notice when it is removed or
/// replaced. Always unchanged where there is no such file (Windows, where nothing asks).
#[cfg_attr(not(unix), allow(dead_code))]
struct SocketFile {
    path: PathBuf,
    id: Option<(u64, u64)>,
}

impl SocketFile {
    fn of(path: &Path) -> SocketFile {
        SocketFile { path: path.to_path_buf(), id: Self::identity(path) }
    }

    #[cfg(unix)]
    fn identity(path: &Path) -> Option<(u64, u64)> {
        use std::os::unix::fs::MetadataExt;
        std::fs::symlink_metadata(path).ok().map(|m| (m.dev(), m.ino()))
    }

    #[cfg(not(unix))]
    fn identity(_: &Path) -> Option<(u64, u64)> {
        None
    }

    #[cfg_attr(not(unix), allow(dead_code))]
    fn changed(&self) -> bool {
        cfg!(unix) && Self::identity(&self.path) != self.id
    }
}

/// The socket file and what tells the daemon that it changed.
pub struct SocketWatch {
    file: SocketFile,
    #[cfg(target_os = "linux")]
    events: Option<inotify::EventStream<Vec<u8>>>,
    #[cfg(all(unix, not(target_os = "linux")))]
    tick: tokio::time::Interval,
}

impl SocketWatch {
    /// Watch the socket file at `path` (the daemon listens on it now). Must be called
    /// inside the daemon's runtime.
    pub fn new(path: &Path) -> SocketWatch {
        SocketWatch {
            file: SocketFile::of(path),
            #[cfg(target_os = "linux")]
            events: watch_folder(path),
            #[cfg(all(unix, not(target_os = "linux")))]
            tick: {
                let mut t = tokio::time::interval(POLL);
                t.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
                t
            },
        }
    }

    /// The daemon listens on a new socket file at the same path (or tried to): follow it.
    pub fn renew(&mut self) {
        self.file = SocketFile::of(&self.file.path);
        #[cfg(target_os = "linux")]
        if self.events.is_none() {
            self.events = watch_folder(&self.file.path);
        }
    }

    /// Wait until the socket file is removed or replaced (cancel-safe: a `select!` may
    /// drop it and call it again).
    pub async fn changed(&mut self) {
        #[cfg(target_os = "linux")]
        {
            use futures::StreamExt;
            use inotify::EventMask;
            let name = self.file.path.file_name().map(|n| n.to_os_string());
            loop {
                let Some(events) = self.events.as_mut() else { return std::future::pending().await };
                match events.next().await {
                    Some(Ok(ev)) => {
                        // The folder itself went away (or moved): its watch is gone.
                        let gone =
                            ev.mask.intersects(EventMask::IGNORED | EventMask::DELETE_SELF | EventMask::MOVE_SELF);
                        if gone {
                            tracing::warn!(folder = ?self.file.path.parent(), "the socket's folder was removed or moved");
                            self.events = None;
                        }
                        if (gone || ev.name == name) && self.file.changed() {
                            return;
                        }
                    }
                    Some(Err(e)) => {
                        tracing::warn!(error = %e, "cannot watch the socket's folder any more");
                        self.events = None;
                    }
                    None => self.events = None,
                }
            }
        }
        #[cfg(all(unix, not(target_os = "linux")))]
        loop {
            self.tick.tick().await;
            if self.file.changed() {
                return;
            }
        }
        #[cfg(not(unix))]
        std::future::pending().await
    }
}

/// An inotify watch of the folder holding `socket`, for entries created, removed or
/// renamed there (and the folder's own removal); `None` (logged) when it cannot be made.
#[cfg(target_os = "linux")]
fn watch_folder(socket: &Path) -> Option<inotify::EventStream<Vec<u8>>> {
    use inotify::{Inotify, WatchMask};
    let dir = socket.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let mask = WatchMask::CREATE
        | WatchMask::DELETE
        | WatchMask::MOVED_FROM
        | WatchMask::MOVED_TO
        | WatchMask::DELETE_SELF
        | WatchMask::MOVE_SELF;
    let made = Inotify::init().and_then(|i| {
        i.watches().add(dir, mask)?;
        i.into_event_stream(vec![0u8; 4096])
    });
    match made {
        Ok(s) => Some(s),
        Err(e) => {
            tracing::warn!(error = %e, folder = %dir.display(), "cannot watch the socket's folder; a removed socket file will not be re-created");
            None
        }
    }
}
