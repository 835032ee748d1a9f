//! The Windows suite's harness (`tests/tests/windows.rs`): the cross-built `coordd.exe`,
//! `inbox.exe` and `orch.exe` (`.ci/run` builds them for `x86_64-pc-windows-gnu`) run
//! under Wine, talking over real named pipes. Wine 8.0 lacks `bcryptprimitives.dll`, which
//! every Rust `.exe` imports, so the stub in `tests/windows/` is built with mingw-w64 and
//! put beside them. One Wine prefix serves the whole run: made afresh by the first test
//! that needs it, shared by all (a prefix takes seconds to make).
//!
//! Paths: Wine maps the Unix root to drive `Z:`, so a project in `/tmp/coord-x` is
//! `Z:\tmp\coord-x` to the programs ([`win_path`]).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::Duration;

use crate::{Daemon, Out, Run, have, skip_or_fail};

/// The Rust target of the Windows build.
pub const TARGET: &str = "x86_64-pc-windows-gnu";

/// How long one command of the suite may take before the test calls it hung (a bound for
/// a hang, far above the second or two a command takes under Wine on a loaded machine).
pub const HANG: Duration = Duration::from_secs(120);

/// The Windows binaries and the Wine prefix they run in.
pub struct Wine {
    /// Where `coordd.exe`, `inbox.exe`, `orch.exe` (and the stub DLL) are.
    pub bin_dir: PathBuf,
    prefix: PathBuf,
}

/// The Wine set-up of this run, made once; `None` (after [`skip_or_fail`]: a failure under
/// `COORD_CI`) when the Windows build, Wine or mingw-w64 is missing.
pub fn wine() -> Option<&'static Wine> {
    static WINE: OnceLock<Option<Wine>> = OnceLock::new();
    WINE.get_or_init(set_up).as_ref()
}

/// `target/` of this build (the test binary is in `target/debug/deps`).
fn target_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("current_exe");
    exe.ancestors().nth(3).expect("target dir").to_path_buf()
}

/// `$COORD_WINDOWS_BIN`, else `target/x86_64-pc-windows-gnu/debug`.
fn bin_dir() -> PathBuf {
    match std::env::var_os("COORD_WINDOWS_BIN") {
        Some(d) if !d.is_empty() => d.into(),
        _ => target_dir().join(TARGET).join("debug"),
    }
}

fn set_up() -> Option<Wine> {
    let bin_dir = bin_dir();
    let missing: Vec<&str> =
        ["coordd", "inbox", "orch"].into_iter().filter(|n| !bin_dir.join(format!("{n}.exe")).is_file()).collect();
    if !missing.is_empty() {
        skip_or_fail(&format!(
            "the Windows build ({} in {}; .ci/run makes it: CARGO_TARGET_X86_64_PC_WINDOWS_GNU_LINKER=x86_64-w64-mingw32-gcc \
             cargo build --target {TARGET} -p coordd -p inbox-cli -p orch-cli)",
            missing.join(", "),
            bin_dir.display()
        ));
        return None;
    }
    if !have("wine", "the Windows suite") || !have("x86_64-w64-mingw32-gcc", "the Windows suite's DLL stub") {
        return None;
    }
    build_stub(&bin_dir);
    let prefix = target_dir().join("tmp").join("wine-prefix");
    // A fresh prefix per run: end whatever a previous run left in it, then make it anew.
    let _ = Command::new("wineserver").arg("-k").env("WINEPREFIX", &prefix).status();
    let _ = std::fs::remove_dir_all(&prefix);
    std::fs::create_dir_all(&prefix).unwrap();
    let wine = Wine { bin_dir, prefix };
    // One wineserver (and Wine's own services, which wineboot starts with no output to
    // inherit) for the whole run, kept for a while after its last program exits.
    let mut server = Command::new("wineserver");
    wine.env(&mut server);
    let _ = server.arg("-p120").status();
    let mut boot = Command::new("wine");
    wine.env(&mut boot);
    let status = boot.args(["wineboot", "--init"]).stdout(Stdio::null()).stderr(Stdio::null()).status();
    assert!(status.is_ok_and(|s| s.success()), "wineboot --init failed in {}", wine.prefix.display());
    Some(wine)
}

/// Build `bcryptprimitives.dll` from `tests/windows/bcryptprimitives.c` into `dir`.
fn build_stub(dir: &Path) {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("windows/bcryptprimitives.c");
    let dll = dir.join("bcryptprimitives.dll");
    let out = Command::new("x86_64-w64-mingw32-gcc")
        .args(["-shared", "-O2", "-s", "-o"])
        .arg(&dll)
        .arg(&src)
        .arg("-ladvapi32")
        .output()
        .expect("run x86_64-w64-mingw32-gcc");
    assert!(out.status.success(), "building the DLL stub failed: {}", String::from_utf8_lossy(&out.stderr));
}

impl Wine {
    /// Wine's settings on a command: this prefix, no debug output, no Mono or Gecko
    /// installers, no desktop menu entries.
    fn env(&self, cmd: &mut Command) {
        cmd.env("WINEPREFIX", &self.prefix)
            .env("WINEDEBUG", "-all")
            .env("WINEDLLOVERRIDES", "mscoree,mshtml=;winemenubuilder.exe=d");
    }
}

/// A Unix path as the Windows programs see it (`/tmp/x` → `Z:\tmp\x`).
pub fn win_path(p: &Path) -> String {
    format!("Z:{}", p.display().to_string().replace('/', "\\"))
}

/// A project directory for the Windows programs. Dropping it stops its daemon.
pub struct WinProject {
    dir: tempfile::TempDir,
    root: PathBuf,
    wine: &'static Wine,
}

impl WinProject {
    /// A project in a new temporary directory; `None` when the suite cannot run here.
    pub fn new() -> Option<WinProject> {
        WinProject::at("")
    }

    /// A project in `rel` (spaces and all) inside a new temporary directory.
    pub fn at(rel: &str) -> Option<WinProject> {
        let wine = wine()?;
        let dir = tempfile::Builder::new().prefix("coord-win-").tempdir_in("/tmp").expect("tempdir");
        let base = std::fs::canonicalize(dir.path()).expect("canonical temp dir");
        // Each project its own runtime directory: `coordd list` sees this project's daemons.
        std::fs::create_dir_all(base.join("rt")).unwrap();
        let root = if rel.is_empty() { base } else { base.join(rel) };
        std::fs::create_dir_all(&root).unwrap();
        Some(WinProject { dir, root, wine })
    }

    /// The project root (a Unix path).
    pub fn path(&self) -> &Path {
        &self.root
    }

    fn command(&self, exe: &str) -> Command {
        self.wine_command(self.wine.bin_dir.join(format!("{exe}.exe")).as_os_str())
    }

    /// `wine PROGRAM` in the project, with the project's environment.
    fn wine_command(&self, program: &std::ffi::OsStr) -> Command {
        let mut cmd = Command::new("wine");
        cmd.arg(program).current_dir(&self.root);
        self.wine.env(&mut cmd);
        for var in ["COORD_DB", "COORD_AGENT", "COORD_TASK", "COORD_RUN", "COORD_PROGRESS", "COORD_NO_AUTOSTART"] {
            cmd.env_remove(var);
        }
        for var in ["COORD_STORE_URL", "COORD_HOST", "COORDD_BIN"] {
            cmd.env_remove(var);
        }
        let rt = self.dir.path().join("rt");
        cmd.env("XDG_RUNTIME_DIR", win_path(&std::fs::canonicalize(rt).unwrap()));
        cmd
    }

    /// `inbox.exe` in this project.
    pub fn inbox(&self) -> Run {
        Run { cmd: self.command("inbox"), stdin: None }
    }

    /// `orch.exe` in this project.
    pub fn orch(&self) -> Run {
        Run { cmd: self.command("orch"), stdin: None }
    }

    /// `coordd.exe` in this project.
    pub fn coordd(&self) -> Run {
        Run { cmd: self.command("coordd"), stdin: None }
    }

    /// Run `line` as a batch file through Windows' `cmd /c`, in the project.
    pub fn cmd(&self, line: &str) -> Out {
        let bat = self.dir.path().join("line.bat");
        std::fs::write(&bat, format!("@{line}\r\n")).unwrap();
        let mut cmd = self.wine_command("cmd".as_ref());
        cmd.args(["/c", &win_path(&std::fs::canonicalize(&bat).unwrap())]);
        run(Run { cmd, stdin: None })
    }

    /// `coordd.exe serve` in the foreground, ready; `Err` with its stderr if it exits.
    pub fn try_serve(&self) -> Result<Daemon, String> {
        crate::serve_with_command(self.command("coordd"), &[])
    }

    /// `inbox.exe ARGS --json`, expected to succeed; its envelope.
    #[track_caller]
    pub fn ok(&self, args: &[&str]) -> serde_json::Value {
        run(self.inbox().args(args).json_flag()).ok().json()
    }

    /// `orch.exe ARGS --json`, expected to succeed; its envelope.
    #[track_caller]
    pub fn orch_ok(&self, args: &[&str]) -> serde_json::Value {
        run(self.orch().args(args).json_flag()).ok().json()
    }

    /// `coordd.exe ARGS --json`, with any exit status.
    #[track_caller]
    pub fn coordd_json(&self, args: &[&str]) -> Out {
        run(self.coordd().args(args).json_flag())
    }

    /// Block until the daemon counts at least `n` subscriptions (a waiter is listening).
    pub fn wait_subscribed(&self, n: u64) {
        while self.coordd_json(&["status"]).json()["subscriptions"].as_u64().unwrap_or(0) < n {}
    }
}

impl Drop for WinProject {
    fn drop(&mut self) {
        // Stop an auto-started daemon, if any; harmless when none runs.
        let _ = self.command("coordd").arg("stop").stdout(Stdio::null()).stderr(Stdio::null()).status();
    }
}

/// Run a command to completion with its stdout captured through a pipe, as an agent CLI
/// captures a hook's output, and its stderr in a file; fail the test if it has not
/// returned and closed its stdout within [`HANG`]. (Not stderr through a pipe: every
/// process Wine starts keeps its parent's Unix stderr open for Wine's own messages, so an
/// auto-started daemon would hold a captured stderr open under Wine whatever its Windows
/// handles are. On Windows it inherits neither.)
#[track_caller]
pub fn run(run: Run) -> Out {
    let mut cmd = run.into_command();
    let what = format!("{cmd:?}");
    let err = tempfile::NamedTempFile::new().expect("stderr file");
    cmd.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(err.reopen().expect("stderr file"));
    let child = cmd.spawn().expect("spawn wine");
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    let out = rx.recv_timeout(HANG).unwrap_or_else(|_| panic!("{what} did not return within {HANG:?}"));
    let out = out.expect("wait for wine");
    Out {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: std::fs::read_to_string(err.path()).unwrap_or_default(),
    }
}
