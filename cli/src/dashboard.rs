//! `orch dashboard` and `inbox dashboard`: the flags and the one call behind both. The
//! daemon serves the page; the command asks it to (or to stop), prints the URL, and with
//! `--open` hands the desktop's browser a 0600 local file that redirects to the URL.

use coord_client::Client;
use coord_proto::api::DashboardApiClient;
use coord_proto::types::{DashboardInfo, DashboardStartParams};

use crate::CliError;

/// Flags of the `dashboard` command.
#[derive(clap::Args, Debug, Clone)]
pub struct DashboardArgs {
    /// Open the page in the default browser ($BROWSER, else xdg-open / open), through a
    /// local file only you can read that redirects to the URL, so the token never shows
    /// on a command line (where /proc shows it to every local user).
    #[arg(long, conflicts_with = "stop")]
    pub open: bool,
    /// The person the page acts as when it sends and answers (default: the one in use,
    /// else `overseer`). It answers what is addressed to the lead or to them, as themselves.
    #[arg(long = "as", value_name = "NAME", conflicts_with = "stop")]
    pub overseer: Option<String>,
    /// Listen on this loopback port (default: the port in use, else a free one).
    #[arg(long, value_name = "PORT", value_parser = clap::value_parser!(u16).range(1..), conflicts_with = "stop")]
    pub port: Option<u16>,
    /// Stop serving the dashboard (it is otherwise served as long as the daemon runs,
    /// and again after a restart).
    #[arg(long)]
    pub stop: bool,
}

/// Help text shared by both CLIs.
pub const ABOUT: &str = "\
The daemon serves a live dashboard on a loopback port; this prints its URL. The URL holds a
random token, the only credential: keep it private. Every change shows within a fraction of a
second, pushed by the daemon; the page reconnects by itself after a daemon restart.

Examples:
  orch dashboard --open          # serve it and open a browser
  orch dashboard --port 8787     # on a fixed port
  orch dashboard --as alice      # the page sends and answers as alice
  orch dashboard --stop";

/// What the command did.
pub enum Done {
    Serving(DashboardInfo),
    Stopped { was_running: bool },
}

/// Start (or keep) serving, or stop.
pub async fn run(client: &Client, args: &DashboardArgs) -> Result<Done, CliError> {
    if args.stop {
        let r = client.dashboard_stop().await?;
        return Ok(Done::Stopped { was_running: r.stopped });
    }
    let params = DashboardStartParams { port: args.port, overseer: args.overseer.clone() };
    let info = client.dashboard_start(params).await?;
    if args.open
        && let Some(url) = &info.url
    {
        let opened = redirect_file(&redirect_dir(&client.server_info().db), url).and_then(|f| open_browser(&f));
        if let Err(e) = opened {
            eprintln!("could not open a browser ({e}); open the URL yourself");
        }
    }
    Ok(Done::Serving(info))
}

/// Name of the local file that redirects the browser to the dashboard.
pub const REDIRECT_FILE: &str = "dashboard-open.html";

/// Where the redirect file goes: beside the database (`.agents/`, only its owner may enter
/// it), else the temporary folder (a PostgreSQL store has no folder).
fn redirect_dir(db: &str) -> std::path::PathBuf {
    std::path::Path::new(db).parent().filter(|d| d.is_dir()).map(|d| d.to_path_buf()).unwrap_or_else(std::env::temp_dir)
}

/// Write the page that sends the browser on to `url`, mode 0600 (as Jupyter does); its
/// `file://` URL, which holds no token.
pub fn redirect_file(dir: &std::path::Path, url: &str) -> std::io::Result<String> {
    use std::io::Write;
    let path = dir.join(REDIRECT_FILE);
    // Made anew, so it has the mode below even if an older copy had another.
    match std::fs::remove_file(&path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(e),
        _ => {}
    }
    let mut opts = std::fs::OpenOptions::new();
    opts.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        opts.mode(0o600);
    }
    let mut f = opts.open(&path)?;
    let url = url.replace('&', "&amp;").replace('"', "&quot;").replace('<', "&lt;");
    write!(
        f,
        "<!doctype html>\n<html><head><meta charset=\"utf-8\">\n<meta http-equiv=\"refresh\" content=\"0;url={url}\">\n\
         <title>coordd dashboard</title></head>\n<body><p>Opening <a href=\"{url}\">the coordd dashboard</a>…</p></body></html>\n"
    )?;
    f.sync_all()?;
    let abs = std::path::absolute(&path)?;
    Ok(format!("file://{}", abs.display()))
}

/// Hand `url` to the desktop's browser without waiting for it.
pub fn open_browser(url: &str) -> std::io::Result<()> {
    let program = std::env::var("BROWSER")
        .ok()
        .filter(|b| !b.trim().is_empty())
        .unwrap_or_else(|| if cfg!(target_os = "macos") { "open".into() } else { "xdg-open".into() });
    std::process::Command::new(program)
        .arg(url)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .map(|_| ())
}

/// The whole command: the call, then the envelope (`json`) or the text.
pub async fn command(client: &Client, args: &DashboardArgs, json: bool, name: &str) -> Result<(), CliError> {
    let done = run(client, args).await?;
    if json {
        crate::envelope(name, to_json(&done));
    } else {
        print_text(&done);
    }
    Ok(())
}

/// The text output of both CLIs.
fn print_text(done: &Done) {
    match done {
        Done::Serving(info) => match &info.url {
            Some(url) => println!("{url}"),
            None => println!("dashboard not running"),
        },
        Done::Stopped { was_running: true } => println!("dashboard stopped"),
        Done::Stopped { was_running: false } => println!("dashboard was not running"),
    }
}

/// The JSON body of both CLIs' envelopes.
fn to_json(done: &Done) -> serde_json::Value {
    match done {
        Done::Serving(info) => crate::to_value(info),
        Done::Stopped { was_running } => serde_json::json!({"stopped": was_running}),
    }
}
