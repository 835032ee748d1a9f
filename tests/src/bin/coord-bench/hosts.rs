//! `--only pg`'s hosts emulated on one machine: each daemon, the PostgreSQL server and the
//! bench's clients run on a CPU budget of their own (a cgroup's CPU quota), so that the
//! second daemon brings CPU of its own, as a second host would, instead of sharing the
//! first one's cores. On a machine whose cores the first daemon, the server and the
//! clients already fill, the plain rounds of `pg_bench` measure those cores, not what a
//! second host adds; these rounds measure the second.
//!
//! Linux only, as root, with the `cpu` controller of cgroup v1 (`/sys/fs/cgroup/cpu`) or
//! v2 (`cpu.max`); otherwise the bench says why they were not measured. Each budget is a
//! quota per period ([`PERIOD_US`]), with as much again allowed as a burst saved from
//! quieter periods, since a PostgreSQL server or a daemon is many processes or threads
//! that wake together.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use coord_client::Client;
use coord_tests::Project;
use coord_tests::pg::Server;

use super::pg_bench::{clients, settle};
use super::procfs::{cpu_secs, pids_cpu_secs, with_children};
use super::sends_bench::sends;
use super::{pg_writer, report};

/// The budgets' period: a budget of a quarter of a core is 1 ms (the kernel's least quota)
/// of every 4.
const PERIOD_US: u64 = 4_000;

/// The CPU, in cores, of each emulated host (`--hosts-cpu DAEMON,SERVER,CLIENTS`).
#[derive(Debug, Clone, Copy)]
pub struct Budgets {
    pub daemon: f64,
    pub server: f64,
    pub clients: f64,
}

/// By default each daemon's host has a quarter of a core, so that one daemon alone is
/// bound by its host (what a second host adds to); the server has a core and the clients
/// half of one, which neither phase uses up (the bench prints how much of each budget a
/// phase used). In all two cores, this machine's.
pub const DEFAULT: Budgets = Budgets { daemon: 0.25, server: 1.0, clients: 0.5 };

impl Budgets {
    /// `0.25,1,0.5` (the daemons', the server's, the clients'), or why not.
    pub fn parse(s: &str) -> Result<Budgets, String> {
        let v: Vec<f64> = s.split(',').map(|x| x.trim().parse::<f64>()).collect::<Result<_, _>>().map_err(|e| {
            format!("--hosts-cpu takes three numbers of cores (the daemons', the server's, the clients'): {e}")
        })?;
        let min = 1_000.0 / PERIOD_US as f64;
        match v.as_slice() {
            [d, s, c] if [d, s, c].iter().all(|x| x.is_finite() && **x >= min) => {
                Ok(Budgets { daemon: *d, server: *s, clients: *c })
            }
            _ => Err(format!("--hosts-cpu takes three numbers of cores of at least {min} each, such as 0.25,1,0.5")),
        }
    }
}

/// One cgroup with a CPU budget; when dropped, everything in it goes back to the group the
/// first process it took came from (the bench's own first group when that process was
/// born in one of the bench's), and the group is removed.
struct Group {
    dir: PathBuf,
    root: PathBuf,
    v1: bool,
    origin: PathBuf,
    taken: bool,
}

/// The cgroup hierarchy holding the `cpu` controller: v1's `cpu` mount, or v2's root.
fn cpu_root() -> Result<(PathBuf, bool), String> {
    let v1 = Path::new("/sys/fs/cgroup/cpu");
    if v1.join("cpu.cfs_quota_us").exists() {
        return Ok((v1.to_path_buf(), true));
    }
    let v2 = Path::new("/sys/fs/cgroup");
    let controllers = std::fs::read_to_string(v2.join("cgroup.controllers")).unwrap_or_default();
    if controllers.split_whitespace().any(|c| c == "cpu") {
        // Children get the controller only once the root hands it down.
        std::fs::write(v2.join("cgroup.subtree_control"), "+cpu")
            .map_err(|e| format!("cannot enable cgroup v2's cpu controller: {e}"))?;
        return Ok((v2.to_path_buf(), false));
    }
    Err("no cgroup cpu controller (neither /sys/fs/cgroup/cpu nor cgroup v2's cpu)".into())
}

/// The directory of the group `pid` is in, in the hierarchy at `root` (`/proc/PID/cgroup`:
/// v1's line of the `cpu` controller, v2's `0::` line).
fn cgroup_of(pid: u32, root: &Path, v1: bool) -> Option<PathBuf> {
    let lines = std::fs::read_to_string(format!("/proc/{pid}/cgroup")).ok()?;
    let path = lines.lines().find_map(|l| {
        let mut f = l.splitn(3, ':');
        let (id, controllers, path) = (f.next()?, f.next()?, f.next()?);
        let ours = if v1 { controllers.split(',').any(|c| c == "cpu") } else { id == "0" && controllers.is_empty() };
        ours.then(|| path.to_string())
    })?;
    Some(root.join(path.trim_start_matches('/')))
}

/// Put every process of the group `dir` into the group `to` (else the root `root`).
fn empty_into(dir: &Path, to: &Path, root: &Path) {
    let procs = std::fs::read_to_string(dir.join("cgroup.procs")).unwrap_or_default();
    for pid in procs.split_whitespace() {
        if std::fs::write(to.join("cgroup.procs"), pid).is_err() {
            let _ = std::fs::write(root.join("cgroup.procs"), pid);
        }
    }
}

/// This bench's groups are named `coord-bench-PID-…`.
const PREFIX: &str = "coord-bench-";

/// Remove the groups a bench that did not end cleanly (killed) left behind, their
/// processes put back in the root group.
fn remove_stale(root: &Path) {
    let Ok(entries) = std::fs::read_dir(root) else { return };
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let Some(pid) = name.strip_prefix(PREFIX).and_then(|r| r.split('-').next()?.parse::<u32>().ok()) else {
            continue;
        };
        if !Path::new(&format!("/proc/{pid}")).exists() {
            empty_into(&e.path(), root, root);
            let _ = std::fs::remove_dir(e.path());
        }
    }
}

impl Group {
    /// The group `name` with `cores`; `home`: the group the bench itself came from.
    fn new(root: &Path, v1: bool, name: &str, cores: f64, home: &Path) -> Result<Group, String> {
        let dir = root.join(format!("{PREFIX}{}-{name}", std::process::id()));
        std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create the cgroup {}: {e}", dir.display()))?;
        let group = Group { dir, root: root.to_path_buf(), v1, origin: home.to_path_buf(), taken: false };
        let quota = (cores * PERIOD_US as f64).round() as u64;
        let set = |file: &str, value: String| {
            std::fs::write(group.dir.join(file), &value)
                .map_err(|e| format!("cannot write {value} to {}: {e}", group.dir.join(file).display()))
        };
        if v1 {
            set("cpu.cfs_period_us", PERIOD_US.to_string())?;
            set("cpu.cfs_quota_us", quota.to_string())?;
            // Kernels before 5.14 have no burst: the budget is then a plain quota.
            let _ = set("cpu.cfs_burst_us", quota.to_string());
        } else {
            set("cpu.max", format!("{quota} {PERIOD_US}"))?;
            let _ = set("cpu.max.burst", quota.to_string());
        }
        Ok(group)
    }

    /// Move a process (all its threads) into the group.
    fn take(&mut self, pid: u32) -> Result<(), String> {
        if !std::mem::replace(&mut self.taken, true) {
            let from = cgroup_of(pid, &self.root, self.v1);
            let ours = |d: &PathBuf| d.file_name().is_some_and(|n| n.to_string_lossy().starts_with(PREFIX));
            if let Some(from) = from.filter(|d| !ours(d)) {
                self.origin = from;
            }
        }
        std::fs::write(self.dir.join("cgroup.procs"), pid.to_string())
            .map_err(|e| format!("cannot move process {pid} into {}: {e}", self.dir.display()))
    }
}

impl Drop for Group {
    fn drop(&mut self) {
        empty_into(&self.dir, &self.origin, &self.root);
        let _ = std::fs::remove_dir(&self.dir);
    }
}

/// The emulated hosts: daemon A's, daemon B's, the server's and the clients'.
struct Hosts {
    a: Group,
    b: Group,
    server: Group,
    clients: Group,
    budgets: Budgets,
}

impl Hosts {
    /// The groups, the bench's server (`postmaster`, its main process: its connections'
    /// processes are its children) and the bench's own process in theirs.
    fn new(budgets: Budgets, postmaster: u32) -> Result<Hosts, String> {
        if !cfg!(target_os = "linux") {
            return Err("needs Linux's cgroups".into());
        }
        let (root, v1) = cpu_root()?;
        remove_stale(&root);
        let home = cgroup_of(std::process::id(), &root, v1).unwrap_or_else(|| root.clone());
        let mut hosts = Hosts {
            a: Group::new(&root, v1, "a", budgets.daemon, &home)?,
            b: Group::new(&root, v1, "b", budgets.daemon, &home)?,
            server: Group::new(&root, v1, "server", budgets.server, &home)?,
            clients: Group::new(&root, v1, "clients", budgets.clients, &home)?,
            budgets,
        };
        // The bench's server: its processes running now; the ones it starts later (a new
        // connection's) are born in its group.
        for pid in with_children(postmaster) {
            hosts.server.take(pid)?;
        }
        hosts.clients.take(std::process::id())?;
        Ok(hosts)
    }
}

/// What share of its budget each host used over a phase.
struct Used {
    t0: Instant,
    daemons: Vec<u32>,
    postmaster: u32,
    cpu: [f64; 3],
}

impl Used {
    fn start(daemons: &[u32], postmaster: u32) -> Used {
        Used { t0: Instant::now(), daemons: daemons.to_vec(), postmaster, cpu: Self::now(daemons, postmaster) }
    }

    fn now(daemons: &[u32], postmaster: u32) -> [f64; 3] {
        [pids_cpu_secs(daemons), pids_cpu_secs(&with_children(postmaster)), cpu_secs(std::process::id())]
    }

    /// `daemon A 98%, server 61%, clients 44%` (of each budget, over the phase).
    fn describe(&self, b: &Budgets) -> String {
        let secs = self.t0.elapsed().as_secs_f64();
        let now = Self::now(&self.daemons, self.postmaster);
        let share = |i: usize, cores: f64| 100.0 * (now[i] - self.cpu[i]) / (cores * secs);
        let who = if self.daemons.len() == 1 { "daemon A" } else { "daemons A and B" };
        let cores = b.daemon * self.daemons.len() as f64;
        format!("{who} {:.0}%, server {:.0}%, clients {:.0}%", share(0, cores), share(1, b.server), share(2, b.clients))
    }
}

/// `rounds` of one instance, then two, each daemon on its own emulated host; B is stopped
/// before each round and started again for its second phase (`db`; None if a round
/// failed after stopping it). The ratios, or why they were not measured.
pub async fn rounds(
    server: &Server,
    (a, da): (&Project, u32),
    b: &Project,
    db: &mut Option<coord_tests::Daemon>,
    stats_a: &Client,
    per_client: usize,
    (budgets, rounds): (Budgets, usize),
) -> Result<Vec<f64>, String> {
    let postmaster = server.postmaster_pid().ok_or("the bench's PostgreSQL server is not running")?;
    let mut hosts = Hosts::new(budgets, postmaster)?;
    hosts.a.take(da)?;
    let mut ratios = Vec::new();
    for round in 1..=rounds {
        drop(db.take());
        settle(stats_a).await;
        let used = Used::start(&[da], postmaster);
        let one = sends(clients(a, 32).await, per_client).await;
        let used_one = used.describe(&hosts.budgets);
        let (d, _) = pg_writer::serve(b);
        hosts.b.take(d.pid())?;
        let pid_b = d.pid();
        *db = Some(d);
        settle(stats_a).await;
        let mut both: Vec<Arc<Client>> = clients(a, 16).await;
        both.extend(clients(b, 16).await);
        let used = Used::start(&[da, pid_b], postmaster);
        let two = sends(both, per_client).await;
        report(
            &format!("  hosts emulated, round {round}: one instance, then two"),
            format!(
                "{one:.0} /s, {two:.0} /s ({:.2} x); budgets used: {used_one}; then {}",
                two / one,
                used.describe(&hosts.budgets)
            ),
        );
        ratios.push(two / one);
    }
    Ok(ratios)
}
