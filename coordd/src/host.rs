//! The name of the host this daemon runs on, recorded on the attempts it makes: a
//! worktree lives on the host that made it, and `orch worktree list|prune` act only on
//! this host's (see `docs/scaling.md`). `COORD_HOST` overrides it (two daemons of one
//! project on one machine, as the tests run them, are two hosts).

use std::sync::OnceLock;

/// This host's name: `COORD_HOST`, else the kernel's host name (`%COMPUTERNAME%` on
/// Windows), else `localhost`.
pub fn name() -> &'static str {
    static NAME: OnceLock<String> = OnceLock::new();
    NAME.get_or_init(|| {
        let from_env = std::env::var("COORD_HOST").ok();
        let from_kernel = || {
            if cfg!(windows) {
                std::env::var("COMPUTERNAME").ok()
            } else {
                std::fs::read_to_string("/proc/sys/kernel/hostname").ok()
            }
        };
        let from_var = || std::env::var("HOSTNAME").ok();
        [from_env, from_kernel(), from_var()]
            .into_iter()
            .flatten()
            .map(|s| s.trim().to_string())
            .find(|s| !s.is_empty())
            .unwrap_or_else(|| "localhost".into())
    })
}

/// Whether an attempt recorded on `host` is this host's (attempts recorded before hosts
/// were, `None`, belong to the only host there was).
pub fn is_local(host: Option<&str>) -> bool {
    host.is_none_or(|h| h == name())
}
