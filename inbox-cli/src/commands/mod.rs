//! Every `inbox` command, one file each holding its clap `Args` and its `run`, in a folder
//! per purpose: `threads/` (the worker protocol), `waits/`, `agents/` (agents, mail,
//! reservations), `session/` (the session mailbox, peers), `control/` (team control),
//! `policy/`; the hooks are in `crate::hooks`, the MCP server in `crate::mcp`. The list
//! below is the one place a command is registered, under its heading in the top-level
//! help; whether it only reads is declared beside it (`Command::read_only`), and its name
//! is clap's. [`args`] holds the flags several commands share.

pub mod agents;
pub mod args;
pub mod control;
pub mod dashboard;
pub mod policy;
pub mod search;
pub mod session;
pub mod threads;
pub mod waits;

coord_cli::subcommands! {
    /// The commands of `inbox`, by heading.
    pub enum Cmd {
        "Work (the worker protocol)" => {
            Fetch(threads::fetch::Args),
            Claim(threads::claim::Args),
            Renew(threads::renew::Args),
            Update(threads::update::Args),
            WaitReply(waits::wait_reply::Args),
            Done(threads::done::Args),
            Fail(threads::fail::Args),
            Send(threads::send::Args),
            Reply(threads::reply::Args),
            Cancel(threads::cancel::Args),
        }
        "Threads and events" => {
            List(threads::list::Args),
            Show(threads::show::Args),
            Watch(waits::watch::Args),
            Search(search::Args),
            Status(agents::status::Args),
            Dashboard(dashboard::Args),
        }
        "Mail" => {
            Mail(agents::mail::Args),
            Read(agents::read::Args),
            Ack(agents::ack::Args),
            Check(session::check::Args),
            Pending(session::pending::Args),
            Withdraw(session::withdraw::Args),
        }
        "Agents" => {
            /// Agent identities: register, list, show, heartbeat.
            #[command(subcommand)]
            Agent(agents::Agent),
            /// Linked peer tasks: `send --to-peer` reaches the other side.
            #[command(subcommand)]
            Peer(session::Peer),
        }
        "Reservations" => {
            Reserve(agents::reserve::Args),
            Release(agents::release::Args),
            Reservations(agents::reservations::Args),
        }
        "Team control (requests, answers, the permission policy)" => {
            Control(control::send::Args),
            Requests(control::requests::Args),
            Permit(control::permit::Args),
            ApprovePlan(control::approve_plan::Args),
            Idle(control::idle::Args),
            Shutdown(control::shutdown::Args),
            Plan(control::plan::Args),
            Progress(control::progress::Args),
            /// The permission policy: which tool calls need whose approval (Claude Code rule syntax).
            #[command(
                subcommand,
                after_help = "Example:\n  inbox --agent lead policy lead lead && inbox --agent lead policy gate 'Bash(git push*)'"
            )]
            Policy(policy::Cmd),
        }
        "Sessions and setup" => {
            Init(threads::init::Args),
            /// Hooks: Claude Code and Codex session hooks (install, doctor, claude) and the git guard (install-git,
            /// pre-commit).
            #[command(subcommand, alias = "hooks")]
            Hook(crate::hooks::Hook),
            Mcp(crate::mcp::Args),
            #[command(after_help = "Example:\n  inbox completions bash > ~/.local/share/bash-completion/completions/inbox")]
            Completions(coord_cli::usage::Completions),
            #[command(after_help = "Example:\n  inbox man | man -l -")]
            Man(coord_cli::usage::Man),
        }
    }
}
