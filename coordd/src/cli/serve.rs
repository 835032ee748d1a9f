//! `coordd serve`'s process setup around `daemon::serve`: logging (to stderr or a file),
//! the allocator's threshold, the multi-threaded runtime, and the exit status.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use coord_proto::Exit;

use crate::daemon::{self, DaemonError, ServeOptions};

pub fn run(opts: ServeOptions, log_file: Option<PathBuf>) -> anyhow::Result<ExitCode> {
    init_tracing(log_file.as_deref())?;
    return_large_buffers_to_the_system();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .thread_name("coordd")
        .build()
        .context("cannot start the async runtime")?;
    match rt.block_on(daemon::serve(opts)) {
        Ok(()) => Ok(Exit::Ok.into()),
        Err(e @ DaemonError::AlreadyRunning { .. }) => {
            tracing::error!("{e}");
            eprintln!("coordd: {e}");
            Ok(Exit::DaemonState.into())
        }
        Err(e) => {
            tracing::error!("{e}");
            Err(e.into())
        }
    }
}

/// glibc's malloc raises its mmap threshold each time a large block is freed, after which
/// multi-MB buffers (a 5 MB message, and its copies for every subscriber) come from the
/// heap and stay in the daemon's resident size long after they are freed. A fixed 1 MiB
/// threshold keeps such buffers in their own mappings, given back the moment they are
/// freed, so the resident size follows what the daemon really holds (docs/performance.md).
fn return_large_buffers_to_the_system() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only sets a malloc parameter; it is called before any other thread
    // of the daemon exists.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 1 << 20);
    }
}

fn init_tracing(log_file: Option<&std::path::Path>) -> anyhow::Result<()> {
    use tracing_subscriber::EnvFilter;
    let filter = EnvFilter::try_from_env("COORDD_LOG").unwrap_or_else(|_| EnvFilter::new("info"));
    let builder = tracing_subscriber::fmt().with_env_filter(filter);
    match log_file {
        Some(path) => {
            let mut opts = std::fs::OpenOptions::new();
            opts.create(true).append(true);
            #[cfg(unix)]
            {
                // Every message's summary can reach the log: only its owner reads it.
                use std::os::unix::fs::OpenOptionsExt;
                opts.mode(crate::private::FILE_MODE);
            }
            let file = opts.open(path).with_context(|| format!("cannot open log file {}", path.display()))?;
            builder.with_ansi(false).with_writer(std::sync::Mutex::new(file)).init();
        }
        None => {
            // Colour only on a terminal, and never with NO_COLOR set (https://no-color.org).
            use std::io::IsTerminal;
            let colour = std::io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty());
            builder.with_ansi(colour).with_writer(std::io::stderr).init()
        }
    }
    Ok(())
}
