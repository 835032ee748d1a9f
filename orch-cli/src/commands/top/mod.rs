//! `orch top` and `orch status --watch`: the live picture in a terminal. The screen is
//! drawn from `view.agents`, `orch.blocked` and the event stream, and redrawn when an event
//! arrives (or a key is pressed, or the terminal is resized), never on a timer.

mod draw;
mod model;

use std::time::Duration;

use coord_cli::CliError;
use coord_client::{Client, ConnectOptions};
use coord_proto::api::{EventsApiClient, LaunchApiClient, OrchApiClient, ViewApiClient};
use coord_proto::types::*;
use ratatui::crossterm::event::{self as term, Event as TermEvent, KeyCode, KeyEventKind, KeyModifiers};
use tokio::sync::mpsc;

use coord_cli::{Command, Ctx, Outcome, Res};
use model::{Model, Stale};

/// Events shown on start, from before the view opened.
const BACKLOG: i64 = 50;

/// Live terminal view across all runs: agents and their threads, blocked questions,
/// recent events; redrawn as events arrive. q quits.
#[derive(clap::Args)]
#[command(after_help = "Examples:\n  orch top\n  orch top --run R1")]
pub struct Args {
    /// Only this run (as `orch status --run R --watch`).
    #[arg(long, value_name = "RUN_ID")]
    pub run: Option<String>,
}

impl Command for Args {
    fn read_only(&self) -> bool {
        true
    }

    async fn run(self, ctx: &Ctx) -> Res {
        run(ctx, self).await
    }
}

async fn run(ctx: &Ctx, args: Args) -> Res {
    if ctx.json {
        return Err(CliError::Invalid(
            "orch top draws a terminal view; it has no --json output (use orch wait --json)".into(),
        ));
    }
    if !std::io::IsTerminal::is_terminal(&std::io::stdout()) {
        return Err(CliError::Invalid("orch top needs a terminal (stdout is not one)".into()));
    }
    // The first connection checks the project and may start the daemon (saying so, before
    // the screen is taken); the view's own connections start one silently, so that a
    // restart's notice does not land in the middle of the screen.
    ctx.client().await?;
    let mut quiet = ctx.connect_options().clone();
    quiet.on_start = None;
    let client = Client::connect(quiet.clone()).await?;
    let mut model = Model::new(args.run.clone());
    let start = client.server_info().last_event_id;
    model.cursor = start;
    let backlog = EventsListParams {
        filter: EventFilter {
            after_event: Some((start - BACKLOG).max(0)),
            run_id: args.run.clone(),
            ..Default::default()
        },
        limit: Some(BACKLOG as u32),
    };
    let backlog = coord_client::pages::all(backlog, |p| client.events_list(p)).await?;
    for e in backlog.events.into_iter().filter(|e| e.event_id <= start) {
        model.apply(e);
    }
    refresh(&client, &mut model, Stale { agents: true, blocked: true, sessions: true }).await?;
    let mut stream = client.subscribe(EventFilter { after_event: Some(start), ..Default::default() }).await?;

    let mut terminal = ratatui::try_init().map_err(|e| CliError::Internal(format!("cannot open the terminal: {e}")))?;
    let keys = keys();
    let res = drive(client, quiet, &mut model, &mut stream, keys, &mut terminal).await;
    ratatui::restore();
    res
}

enum Input {
    Quit,
    Redraw,
}

/// Keys and resizes from a blocking reader thread.
fn keys() -> mpsc::Receiver<Input> {
    let (tx, rx) = mpsc::channel(16);
    std::thread::spawn(move || {
        while let Ok(ev) = term::read() {
            let input = match ev {
                TermEvent::Key(k) if k.kind == KeyEventKind::Press => match k.code {
                    KeyCode::Char('q') | KeyCode::Esc => Input::Quit,
                    KeyCode::Char('c') if k.modifiers.contains(KeyModifiers::CONTROL) => Input::Quit,
                    _ => continue,
                },
                TermEvent::Resize(..) => Input::Redraw,
                _ => continue,
            };
            let quit = matches!(input, Input::Quit);
            if tx.blocking_send(input).is_err() || quit {
                return;
            }
        }
    });
    rx
}

async fn drive(
    mut client: Client,
    quiet: ConnectOptions,
    model: &mut Model,
    stream: &mut coord_client::EventStream,
    mut keys: mpsc::Receiver<Input>,
    terminal: &mut ratatui::DefaultTerminal,
) -> Res {
    let draw = |t: &mut ratatui::DefaultTerminal, m: &Model| {
        t.draw(|f| draw::draw(f, m)).map(|_| ()).map_err(|e| CliError::Internal(format!("cannot draw: {e}")))
    };
    draw(terminal, model)?;
    loop {
        tokio::select! {
            k = keys.recv() => match k {
                Some(Input::Redraw) => draw(terminal, model)?,
                Some(Input::Quit) | None => return Ok(Outcome::Done),
            },
            e = stream.next_within(None), if model.lost.is_none() => {
                match e {
                    Ok(Some(e)) => {
                        let mut stale = model.apply(e);
                        // Take what else already arrived, then read and draw once.
                        while let Ok(Some(e)) = stream.next_within(Some(Duration::ZERO)).await {
                            stale.merge(model.apply(e));
                        }
                        if stale.any()
                            && let Err(err) = refresh(&client, model, stale).await
                        {
                            // The daemon restarted (the stream has reconnected already):
                            // read through a new connection.
                            match Client::connect(quiet.clone()).await {
                                Ok(c) => {
                                    client = c;
                                    if let Err(err) = refresh(&client, model, stale).await {
                                        model.lost = Some(err.to_string());
                                    }
                                }
                                Err(_) => model.lost = Some(err.to_string()),
                            }
                        }
                    }
                    Ok(None) => {}
                    Err(err) => model.lost = Some(err.to_string()),
                }
                draw(terminal, model)?;
            }
        }
    }
}

/// Sessions the sessions pane lists at most.
const SESSIONS_SHOWN: usize = 50;

/// Read again what the events made stale.
async fn refresh(client: &Client, model: &mut Model, stale: Stale) -> Result<(), CliError> {
    if stale.agents {
        model.agents = Some(coord_client::pages::all(AgentsViewParams::default(), |p| client.view_agents(p)).await?);
    }
    if stale.blocked {
        let runs: Vec<String> = match &model.run {
            Some(r) => vec![r.clone()],
            None => coord_client::pages::all(RunListParams::default(), |p| client.run_list(p))
                .await?
                .runs
                .into_iter()
                .filter(|r| r.status == RunStatus::Active)
                .map(|r| r.run_id)
                .collect(),
        };
        let mut blocked = Vec::new();
        for run in runs {
            let p = RunPageParams { run_id: run.clone(), after: None };
            for b in coord_client::pages::all(p, |p| client.blocked(p)).await?.blocked {
                blocked.push((run.clone(), b));
            }
        }
        model.blocked = blocked;
    }
    if stale.sessions {
        let q = SessionListParams { run_id: model.run.clone(), ..Default::default() };
        let mut all = coord_client::pages::all(q, |p| client.session_list(p)).await?.sessions;
        // Running ones first, then the newest that ended; a pane's worth.
        all.reverse();
        all.sort_by_key(|s| s.state != SessionState::Running);
        all.truncate(SESSIONS_SHOWN);
        let mut runs: Vec<String> = all.iter().map(|s| s.run_id.clone()).collect();
        runs.sort();
        runs.dedup();
        model.usage.clear();
        for run_id in runs {
            model.usage.push(client.usage_show(UsageShowParams { run_id }).await?);
        }
        model.sessions = all;
    }
    Ok(())
}
