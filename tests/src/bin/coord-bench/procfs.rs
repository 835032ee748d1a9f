//! What the bench reads of a process from /proc: CPU time (of the process, or of one of
//! its threads by name) and resident size.

/// CPU time (user + system) the process has used, in seconds, from `/proc/PID/stat`.
pub(crate) fn cpu_secs(pid: u32) -> f64 {
    stat_cpu_secs(&format!("/proc/{pid}/stat"))
}

/// CPU time the process's thread named `name` has used, in seconds (NaN if none is).
pub(crate) fn thread_cpu_secs(pid: u32, name: &str) -> f64 {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else { return f64::NAN };
    tasks
        .flatten()
        .find(|t| std::fs::read_to_string(t.path().join("comm")).is_ok_and(|c| c.trim() == name))
        .map_or(f64::NAN, |t| stat_cpu_secs(&t.path().join("stat").display().to_string()))
}

/// User + system CPU seconds from a `stat` file of /proc.
pub(crate) fn stat_cpu_secs(path: &str) -> f64 {
    let stat = std::fs::read_to_string(path).unwrap_or_default();
    // Fields after the command name (which may hold spaces) start after the last ')'.
    let fields: Vec<&str> = stat.rsplit_once(')').map(|(_, f)| f.split_whitespace().collect()).unwrap_or_default();
    let ticks = |i: usize| fields.get(i).and_then(|v| v.parse::<f64>().ok()).unwrap_or(f64::NAN);
    // utime and stime are fields 14 and 15 of the line (11 and 12 after the name);
    // Linux counts them in USER_HZ, 100 per second.
    (ticks(11) + ticks(12)) / 100.0
}

/// Resident size of the process, in MiB, from `/proc/PID/status`.
pub(crate) fn rss_mib(pid: u32) -> f64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find(|l| l.starts_with("VmRSS:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|kb| kb.parse::<f64>().ok())
        .map_or(f64::NAN, |kb| kb / 1024.0)
}

/// CPU time used so far by every live process whose command name is `comm` (for
/// PostgreSQL: the server and all its backends), in seconds.
pub(crate) fn comm_cpu_secs(comm: &str) -> f64 {
    pids_of(comm).into_iter().map(|pid| stat_cpu_secs(&format!("/proc/{pid}/stat"))).filter(|s| s.is_finite()).sum()
}

/// Every live process whose command name is `comm`.
fn pids_of(comm: &str) -> Vec<u32> {
    let Ok(procs) = std::fs::read_dir("/proc") else { return Vec::new() };
    procs
        .flatten()
        .filter_map(|p| p.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| std::fs::read_to_string(format!("/proc/{pid}/comm")).is_ok_and(|c| c.trim() == comm))
        .collect()
}

/// `pid` and every live process whose parent it is (for PostgreSQL's postmaster: the
/// server's processes, one per connection among them).
pub(crate) fn with_children(pid: u32) -> Vec<u32> {
    let Ok(procs) = std::fs::read_dir("/proc") else { return vec![pid] };
    let parent = |child: u32| -> Option<u32> {
        let stat = std::fs::read_to_string(format!("/proc/{child}/stat")).ok()?;
        // The fields after the command name: state, then the parent's pid.
        stat.rsplit_once(')')?.1.split_whitespace().nth(1)?.parse().ok()
    };
    let children = procs.flatten().filter_map(|p| p.file_name().to_str()?.parse::<u32>().ok());
    std::iter::once(pid).chain(children.filter(|c| parent(*c) == Some(pid))).collect()
}

/// CPU seconds used so far by `pids` (the live ones).
pub(crate) fn pids_cpu_secs(pids: &[u32]) -> f64 {
    pids.iter().map(|p| cpu_secs(*p)).filter(|s| s.is_finite()).sum()
}
