//! One command of `inbox` or `orch`, the same shape in both: its file holds its clap `Args`
//! and implements [`Command`] (`run`, and whether it only reads); [`subcommands!`] lists the
//! commands of a level in one place, one line each, under the headings of the top-level
//! help. Every command gets a [`Ctx`] and ends with an [`Outcome`]; its name comes from
//! clap ([`command_name`]), never written twice.
//!
//! [`subcommands!`]: crate::subcommands

use clap::ArgMatches;
use coord_client::{Client, ConnectOptions};
use coord_proto::Exit;

use crate::{CliError, Connection, envelope, to_value};

/// How a command that did not fail ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// It did what was asked.
    Done,
    /// Nothing matched: an empty list, no work to fetch, a wait that timed out.
    NoMatch,
    /// It was refused by what someone else holds: a merge conflicted (its resolution task
    /// was opened), or the git guard refused a commit whose staged files lie in another
    /// agent's reservation.
    Conflict,
}

impl Outcome {
    /// The exit status of a command that ended so (a failed one gets `CliError::exit`).
    pub fn exit(self) -> Exit {
        match self {
            Outcome::Done => Exit::Ok,
            Outcome::NoMatch => Exit::NoMatch,
            Outcome::Conflict => Exit::Conflict,
        }
    }

    /// Done when `list` has something, else nothing matched.
    pub fn found<T>(list: &[T]) -> Outcome {
        if list.is_empty() { Outcome::NoMatch } else { Outcome::Done }
    }
}

/// What a command returns.
pub type Res = Result<Outcome, CliError>;

/// One command: its clap `Args` (or, for a command with subcommands, their enum).
// Both CLIs run their command on a current-thread runtime: the futures need not be `Send`.
#[allow(async_fn_in_trait)]
pub trait Command {
    /// The command only reads: outside a project it says so (exit 40) instead of creating
    /// one.
    fn read_only(&self) -> bool {
        false
    }

    /// Run it: check the arguments and build the params first, then ask `ctx` for the
    /// client, so a usage error never connects or starts a daemon.
    async fn run(self, ctx: &Ctx) -> Res;
}

/// The command's name as typed, from clap: the subcommand words (`task add`).
pub fn command_name(m: &ArgMatches) -> String {
    let mut words = Vec::new();
    let mut at = m;
    while let Some((name, sub)) = at.subcommand() {
        words.push(name);
        at = sub;
    }
    words.join(" ")
}

/// The context of one command: its name and output mode, who is asking (`inbox --agent`),
/// and the daemon connection, opened on first use.
pub struct Ctx {
    /// The command's name in envelopes and error messages (`task add`, ...).
    pub command: String,
    /// Print one JSON envelope instead of text.
    pub json: bool,
    /// Who you are: `--agent`, else `COORD_AGENT` (inbox only).
    pub agent: Option<String>,
    /// `--agent` was given on the command line, not only through `COORD_AGENT`.
    agent_explicit: bool,
    conn: Connection,
    /// The whole command line's definition, for `completions` and `man`.
    definition: Option<clap::Command>,
}

impl Ctx {
    /// The context of the command `matches` names, printing JSON when `json`, reaching the
    /// daemon through `conn`.
    pub fn new(matches: &ArgMatches, json: bool, conn: Connection) -> Ctx {
        Ctx { command: command_name(matches), json, agent: None, agent_explicit: false, conn, definition: None }
    }

    /// The program's whole command line (`Cli::command()`), which `completions` and `man`
    /// print.
    pub fn with_definition(mut self, definition: clap::Command) -> Ctx {
        self.definition = Some(definition);
        self
    }

    /// The program's whole command line, as given to [`Ctx::with_definition`].
    pub fn definition(&self) -> Result<clap::Command, CliError> {
        self.definition.clone().ok_or_else(|| CliError::Internal("the command line's definition is missing".into()))
    }

    /// Who is asking; `explicit`: --agent was given on the command line (see
    /// [`Ctx::explicit_agent`]).
    pub fn with_agent(mut self, agent: Option<String>, explicit: bool) -> Ctx {
        self.agent = agent;
        self.agent_explicit = explicit;
        self
    }

    /// The daemon client, connected (and the daemon started if allowed) on the first call.
    pub async fn client(&self) -> Result<&Client, CliError> {
        self.conn.client().await
    }

    /// Where the daemon is, for the commands that connect their own way (the hooks, MCP,
    /// a live view) or only need the database path.
    pub fn connect_options(&self) -> &ConnectOptions {
        self.conn.options()
    }

    /// The agent, which the command requires. The message does not name the command: the
    /// error's line (`inbox done: ...`) and envelope already do.
    pub fn agent(&self) -> Result<String, CliError> {
        self.agent
            .clone()
            .ok_or_else(|| CliError::Invalid("--agent is required: pass --agent NAME (or set COORD_AGENT)".into()))
    }

    /// `explicit` (e.g. `--from`), else the agent.
    pub fn agent_or(&self, explicit: Option<String>, flag: &str) -> Result<String, CliError> {
        match explicit {
            Some(a) => Ok(a),
            None => self
                .agent
                .clone()
                .ok_or_else(|| CliError::Invalid(format!("--{flag} is required (or pass --agent NAME)"))),
        }
    }

    /// The --agent given on this command line, ignoring COORD_AGENT (for filters).
    pub fn explicit_agent(&self) -> Option<String> {
        self.agent.clone().filter(|_| self.agent_explicit)
    }

    /// Print `v` as the command's envelope with --json, else run the text output.
    pub fn print<T: serde::Serialize>(&self, v: &T, text: impl FnOnce()) {
        if self.json {
            envelope(&self.command, to_value(v));
        } else {
            text();
        }
    }
}

/// The commands of one level, one line each: a `#[derive(clap::Subcommand)]` enum whose
/// variants each hold one command's `Args` (or the enum of its subcommands), and its
/// [`Command`] implementation, which hands each call to the variant's. At the top level
/// the variants sit under headings: the enum also gets `groups()`, the headings of the
/// top-level help with their commands' names (taken from clap), for
/// [`usage::group_commands`](crate::usage::group_commands).
///
/// ```ignore
/// coord_cli::subcommands! {
///     /// The commands of `orch`.
///     pub enum Cmd {
///         "Runs" => {
///             #[command(subcommand)]
///             Run(run::Cmd),
///             Status(status::Args),
///         }
///     }
/// }
/// ```
#[macro_export]
macro_rules! subcommands {
    (
        $(#[$meta:meta])*
        $vis:vis enum $name:ident {
            $( $group:literal => { $( $(#[$vmeta:meta])* $variant:ident($ty:ty) ),* $(,)? } )*
        }
    ) => {
        $crate::subcommands! { $(#[$meta])* $vis enum $name { $( $( $(#[$vmeta])* $variant($ty), )* )* } }

        impl $name {
            /// The headings of the top-level help, each with its commands' names.
            pub fn groups() -> Vec<(&'static str, Vec<String>)> {
                let cmd = <$name as clap::Subcommand>::augment_subcommands(clap::Command::new("groups"));
                let mut names = cmd.get_subcommands().map(|s| s.get_name().to_string());
                let sizes: &[(&'static str, usize)] = &[ $( ($group, [$(stringify!($variant)),*].len()) ),* ];
                sizes.iter().map(|&(heading, n)| (heading, names.by_ref().take(n).collect())).collect()
            }
        }
    };
    (
        $(#[$meta:meta])*
        $vis:vis enum $name:ident {
            $( $(#[$vmeta:meta])* $variant:ident($ty:ty) ),* $(,)?
        }
    ) => {
        $(#[$meta])*
        #[derive(clap::Subcommand)]
        $vis enum $name {
            $( $(#[$vmeta])* $variant($ty), )*
        }

        impl $crate::command::Command for $name {
            fn read_only(&self) -> bool {
                match self {
                    $( $name::$variant(c) => $crate::command::Command::read_only(c), )*
                }
            }

            async fn run(self, ctx: &$crate::command::Ctx) -> $crate::command::Res {
                match self {
                    $( $name::$variant(c) => $crate::command::Command::run(c, ctx).await, )*
                }
            }
        }
    };
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    #[derive(Parser)]
    struct Top {
        #[command(subcommand)]
        cmd: Sub,
    }
    #[derive(clap::Subcommand)]
    enum Sub {
        /// A command with subcommands.
        #[command(subcommand)]
        Task(Leaf),
    }
    #[derive(clap::Subcommand)]
    enum Leaf {
        /// A leaf.
        AddMore,
    }

    #[test]
    fn the_command_name_is_the_words_clap_matched() {
        let m = <Top as clap::CommandFactory>::command().get_matches_from(["x", "task", "add-more"]);
        assert_eq!(super::command_name(&m), "task add-more");
    }
}
