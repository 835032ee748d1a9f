//! The `inbox` CLI: the worker-facing side of coordd. Every command is one JSON-RPC call
//! (or one subscription for the waits) to the project's daemon, started on demand.
//!
//! `main` parses the command line, builds the [`Ctx`], runs the command's handler (the
//! one `match` over the commands is [`run`]) and turns how it ended into the exit status.

mod agents;
mod artifacts;
mod claude_hook;
mod cli;
mod codex_setup;
mod control;
mod ctx;
mod githook;
mod mcp;
mod output;
mod permission_hook;
mod policy;
mod search;
mod session;
mod threads;
mod waits;

use std::process::ExitCode;

use clap::{CommandFactory, FromArgMatches};
use coord_cli::CliError;
use coord_cli::usage::clap_exit;
use coord_proto::Exit;

use crate::cli::{AgentCmd, Cmd, HookCmd, HookEvent, PeerCmd};
use crate::ctx::{Ctx, Outcome, Res};

fn main() -> ExitCode {
    coord_cli::reset_sigpipe();
    let command = coord_cli::usage::group_commands(cli::Cli::command(), cli::GROUPS);
    let matches = match command.clone().try_get_matches() {
        Ok(m) => m,
        Err(e) => return clap_exit(e, &command),
    };
    let cli = match cli::Cli::from_arg_matches(&matches) {
        Ok(c) => c,
        Err(e) => return clap_exit(e, &command),
    };
    let ctx = Ctx::new(&cli, agent_on_command_line(&matches));
    let res = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
        Ok(rt) => rt.block_on(run(&ctx, cli.command)),
        Err(e) => Err(CliError::Internal(e.to_string())),
    };
    // The one place where a command's outcome becomes the exit status (errors get theirs
    // from `CliError::exit`).
    match res {
        Ok(Outcome::Done) => Exit::Ok.into(),
        Ok(Outcome::NoMatch) => Exit::NoMatch.into(),
        Ok(Outcome::Refused) => Exit::Conflict.into(),
        Err(e) => coord_cli::fail(ctx.json, "inbox", ctx.command, &e),
    }
}

/// Run one command: its handler checks the arguments, then connects if it needs to.
async fn run(ctx: &Ctx, cmd: Cmd) -> Res {
    match cmd {
        Cmd::Init(a) => threads::init(ctx, a).await,
        Cmd::Send(a) => threads::send(ctx, a).await,
        Cmd::Fetch(a) => threads::fetch(ctx, a).await,
        Cmd::Claim(a) => threads::claim(ctx, a).await,
        Cmd::Renew(a) => threads::renew(ctx, a).await,
        Cmd::Update(a) => threads::update(ctx, a).await,
        Cmd::Reply(a) => threads::reply(ctx, a).await,
        Cmd::Done(a) => threads::done(ctx, a).await,
        Cmd::Fail(a) => threads::fail(ctx, a).await,
        Cmd::Cancel(a) => threads::cancel(ctx, a).await,
        Cmd::List(a) => threads::list(ctx, a).await,
        Cmd::Show(a) => threads::show(ctx, a).await,
        Cmd::Watch(a) => waits::watch(ctx, a).await,
        Cmd::WaitReply(a) => waits::wait_reply(ctx, a).await,
        Cmd::Search(a) => search::search(ctx, a).await,
        Cmd::Agent(AgentCmd::Register(a)) => agents::register(ctx, a).await,
        Cmd::Agent(AgentCmd::List(a)) => agents::list(ctx, a).await,
        Cmd::Agent(AgentCmd::Show) => agents::show(ctx).await,
        Cmd::Agent(AgentCmd::Heartbeat(a)) => agents::heartbeat(ctx, a).await,
        Cmd::Mail(a) => agents::mail(ctx, a).await,
        Cmd::Read(a) => agents::read(ctx, a).await,
        Cmd::Ack(a) => agents::ack(ctx, a).await,
        Cmd::Reserve(a) => agents::reserve(ctx, a).await,
        Cmd::Release(a) => agents::release(ctx, a).await,
        Cmd::Reservations(a) => agents::reservations(ctx, a).await,
        Cmd::Status(a) => agents::status(ctx, a).await,

        Cmd::Check(a) => session::check(ctx, a).await,
        Cmd::Pending(a) => session::pending(ctx, a).await,
        Cmd::Withdraw(a) => session::withdraw(ctx, a).await,
        Cmd::Peer(PeerCmd::Link(a)) => session::peer_link(ctx, a).await,
        Cmd::Hook(HookCmd::Install(a)) => session::hook_install(ctx, a).await,
        Cmd::Hook(HookCmd::Doctor(a)) => codex_setup::doctor(ctx, a),
        Cmd::Hook(HookCmd::Claude(a)) if matches!(a.event, HookEvent::PreToolUse | HookEvent::PermissionRequest) => {
            permission_hook::answer(ctx, a).await
        }
        Cmd::Hook(HookCmd::Claude(a)) => claude_hook::answer(ctx, a).await,
        Cmd::Hook(HookCmd::InstallGit(a)) => githook::install(ctx, a),
        Cmd::Hook(HookCmd::PreCommit) => githook::pre_commit(ctx).await,
        Cmd::Mcp(a) => mcp::serve(ctx, a).await,
        Cmd::Control(a) => control::control(ctx, a).await,
        Cmd::Requests(a) => control::requests(ctx, a).await,
        Cmd::Permit(a) => control::permit(ctx, a).await,
        Cmd::ApprovePlan(a) => control::approve_plan(ctx, a).await,
        Cmd::Idle(a) => control::idle(ctx, a).await,
        Cmd::Shutdown(a) => control::shutdown(ctx, a).await,
        Cmd::Plan(a) => control::plan(ctx, a).await,
        Cmd::Progress(a) => control::progress(ctx, a).await,
        Cmd::Policy(c) => policy::run(ctx, c).await,
        Cmd::Dashboard(a) => {
            coord_cli::dashboard::command(ctx.client().await?, &a, ctx.json, ctx.command).await?;
            Ok(Outcome::Done)
        }
        Cmd::Completions(a) => {
            coord_cli::usage::completions(cli::Cli::command(), a.shell);
            Ok(Outcome::Done)
        }
        Cmd::Man => coord_cli::usage::man(cli::Cli::command())
            .map(|()| Outcome::Done)
            .map_err(|e| CliError::Internal(format!("cannot write the man page: {e}"))),
    }
}

/// Was --agent given on the command line (at any level), rather than through COORD_AGENT?
fn agent_on_command_line(m: &clap::ArgMatches) -> bool {
    m.value_source("agent") == Some(clap::parser::ValueSource::CommandLine)
        || m.subcommand().is_some_and(|(_, sub)| agent_on_command_line(sub))
}
