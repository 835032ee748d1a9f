//! `orch dashboard` and `inbox dashboard`: the flags and the one call behind both. The
//! daemon serves the page; the command asks it to (or to stop), prints the URL, and with
//! `--open` hands the URL to the desktop's browser.

use coord_client::Client;
use coord_proto::api::DashboardApiClient;
use coord_proto::types::{DashboardInfo, DashboardStartParams};

use crate::CliError;

/// Flags of the `dashboard` command.
#[derive(clap::Args, Debug, Clone)]
pub struct DashboardArgs {
    /// Open the URL in the default browser ($BROWSER, else xdg-open / open).
    #[arg(long, conflicts_with = "stop")]
    pub open: bool,
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
    let info = client.dashboard_start(DashboardStartParams { port: args.port }).await?;
    if args.open
        && let Some(url) = &info.url
        && let Err(e) = open_browser(url)
    {
        eprintln!("could not open a browser ({e}); open the URL yourself");
    }
    Ok(Done::Serving(info))
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
