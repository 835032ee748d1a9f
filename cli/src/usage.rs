//! The command line itself, shared by `inbox` and `orch`: usage errors (an envelope on
//! stdout under `--json`), enum values listed in `--help`, commands grouped by purpose in
//! the top-level help, examples printed unwrapped, shell completions and man pages.

use std::collections::HashSet;
use std::process::ExitCode;

use clap::Command;
use clap::builder::{PossibleValuesParser, TypedValueParser};
use coord_proto::{ErrorCode, Exit};
use serde_json::json;

/// Is `--json` on the command line (before a `--`)? Known even when parsing fails.
pub fn json_requested() -> bool {
    std::env::args().skip(1).take_while(|a| a != "--").any(|a| a == "--json")
}

/// The subcommand words given (e.g. `task add`), for a usage error's envelope: the words
/// that name subcommands of `cmd`, in order; the program's name (`inbox`) when none does
/// (`inbox --json`, `inbox --json bogus`), so the envelope always names a command.
fn command_words(cmd: &Command) -> String {
    let mut words = Vec::new();
    let mut at = cmd;
    for a in std::env::args().skip(1).take_while(|a| a != "--") {
        if let Some(sub) = at.find_subcommand(&a) {
            words.push(sub.get_name().to_string());
            at = sub;
        }
    }
    if words.is_empty() {
        return cmd.get_name().to_string();
    }
    words.join(" ")
}

/// A usage error from clap: `--help` and `--version` succeed; anything else (a bad flag, a
/// bad value, a missing required flag) is `invalid_args`, exit 30: an envelope on stdout
/// with `--json` (naming the command, the message's line breaks kept), clap's message on
/// stderr otherwise.
pub fn clap_exit(e: clap::Error, cmd: &Command) -> ExitCode {
    use clap::error::ErrorKind;
    let ok = matches!(
        e.kind(),
        ErrorKind::DisplayHelp | ErrorKind::DisplayVersion | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
    );
    if e.kind() == ErrorKind::DisplayHelp {
        print_help(cmd);
        return Exit::Ok.into();
    }
    if ok || !json_requested() {
        let _ = e.print();
        return if ok { Exit::Ok } else { Exit::Invalid }.into();
    }
    let rendered = e.render().to_string();
    let message = rendered.trim().trim_start_matches("error: ");
    // clap's message as it reads on a terminal, line breaks kept (`\n` in the JSON), less
    // the usage block that follows it.
    let message = message.split("\n\nUsage:").next().unwrap_or(message);
    let error = json!({"code": ErrorCode::InvalidArgs.as_str(), "message": message.trim()});
    println!("{}", json!({"ok": false, "command": command_words(cmd), "error": error}));
    Exit::Invalid.into()
}

/// Print the help asked for (`-h` short, `--help` long) with its examples (the after-help)
/// as written: clap wraps every section to the terminal's width, which would cut a long
/// example command in two and break it when pasted. The rest still wraps. `inbox help
/// send` is `inbox send --help`.
fn print_help(cmd: &Command) {
    let mut root = cmd.clone();
    root.build();
    let mut at = &root;
    let mut long = false;
    for a in std::env::args().skip(1).take_while(|a| a != "--") {
        if a == "--help" || a == "help" && at.find_subcommand("help").is_some() {
            long = true;
        } else if let Some(sub) = at.find_subcommand(&a) {
            at = sub;
        }
    }
    let examples = if long { at.get_after_long_help().or(at.get_after_help()) } else { at.get_after_help() };
    let examples = examples.map(|e| e.to_string());
    let mut bare = at.clone().after_help(None::<&str>).after_long_help(None::<&str>);
    let help = if long { bare.render_long_help() } else { bare.render_help() };
    print!("{}", help.to_string().trim_end());
    match examples {
        Some(ex) => println!("\n\n{ex}"),
        None => println!(),
    }
}

/// A value parser for one of the protocol's string enums that lists its values in
/// `--help` and in errors (`--priority <low|normal|high|urgent>`).
pub fn one_of<T>(all: &'static [T]) -> impl TypedValueParser<Value = T>
where
    T: std::fmt::Display + std::str::FromStr<Err = String> + Clone + Send + Sync + 'static,
{
    // The values are a handful of short names, made once per parser: leaking them gives
    // clap the `&'static str` it wants.
    let names: Vec<&'static str> = all.iter().map(|v| &*Box::leak(v.to_string().into_boxed_str())).collect();
    PossibleValuesParser::new(names)
        .map(|s| s.parse::<T>().unwrap_or_else(|e| unreachable!("a listed value parses: {e}")))
}

/// Replace the flat command list of `cmd`'s help with the commands under headings, in the
/// order given (`subcommands!` derives them from the headings commands are listed under).
/// Commands in no group are listed last, under "Other commands", so none is ever hidden by
/// omission.
pub fn group_commands(cmd: Command, groups: &[(&str, Vec<String>)]) -> Command {
    let subs: Vec<(String, String)> = cmd
        .get_subcommands()
        .filter(|s| !s.is_hide_set())
        .map(|s| (s.get_name().to_string(), s.get_about().map(|a| a.to_string()).unwrap_or_default()))
        .collect();
    let width = subs.iter().map(|(n, _)| n.len()).max().unwrap_or(0) + 2;
    let line = |name: &str, about: &str| format!("  {name:<width$}{about}\n");
    let mut text = String::new();
    let mut listed = HashSet::new();
    for (heading, names) in groups {
        let entries: Vec<String> = names
            .iter()
            .filter_map(|n| subs.iter().find(|(s, _)| s == n))
            .map(|(n, a)| {
                listed.insert(n.clone());
                line(n, a)
            })
            .collect();
        if !entries.is_empty() {
            text.push_str(&format!("{heading}:\n{}\n", entries.concat()));
        }
    }
    let rest: Vec<String> = subs.iter().filter(|(n, _)| !listed.contains(n)).map(|(n, a)| line(n, a)).collect();
    if !rest.is_empty() {
        text.push_str(&format!("Other commands:\n{}\n", rest.concat()));
    }
    let template = format!(
        "{{before-help}}{{about-with-newline}}\n{{usage-heading}} {{usage}}\n\n{text}Options:\n{{options}}{{after-help}}"
    );
    cmd.help_template(template)
}

// The `completions` command of both CLIs; each registers it with its own example.
/// Print a shell completion script (bash, zsh, fish, elvish, powershell).
#[derive(clap::Args)]
pub struct Completions {
    /// The shell.
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

impl crate::Command for Completions {
    async fn run(self, ctx: &crate::Ctx) -> crate::Res {
        let mut cmd = ctx.definition()?;
        let name = cmd.get_name().to_string();
        clap_complete::generate(self.shell, &mut cmd, name, &mut std::io::stdout());
        Ok(crate::Outcome::Done)
    }
}

// The `man` command of both CLIs; each registers it with its own example.
/// Print the manual page (roff).
#[derive(clap::Args)]
pub struct Man {}

impl crate::Command for Man {
    async fn run(self, ctx: &crate::Ctx) -> crate::Res {
        clap_mangen::Man::new(ctx.definition()?)
            .render(&mut std::io::stdout())
            .map(|()| crate::Outcome::Done)
            .map_err(|e| crate::CliError::Internal(format!("cannot write the man page: {e}")))
    }
}

/// Every command of `cmd` (recursively) has an example in its `--help` (its after-help
/// says "Example"), and every flag and argument a description: for the CLIs' own tests.
/// Returns what is missing.
pub fn missing_help(cmd: &Command) -> Vec<String> {
    fn walk(cmd: &Command, path: &str, out: &mut Vec<String>) {
        let path = if path.is_empty() { cmd.get_name().to_string() } else { format!("{path} {}", cmd.get_name()) };
        for a in cmd.get_arguments().filter(|a| !a.is_hide_set()) {
            let id = a.get_id().as_str();
            if id != "help" && id != "version" && a.get_help().is_none() && a.get_long_help().is_none() {
                out.push(format!("`{path}`: --{id} has no description"));
            }
        }
        let subs: Vec<&Command> = cmd.get_subcommands().filter(|s| s.get_name() != "help").collect();
        if subs.is_empty() && !cmd.get_after_help().is_some_and(|h| h.to_string().contains("Example")) {
            out.push(format!("`{path}` has no example"));
        }
        for s in subs {
            walk(s, &path, out);
        }
    }
    let mut out = Vec::new();
    for s in cmd.get_subcommands().filter(|s| s.get_name() != "help") {
        walk(s, cmd.get_name(), &mut out);
    }
    out
}

#[cfg(test)]
mod tests {
    use clap::{Arg, Command};

    #[test]
    fn missing_help_names_what_lacks_an_example_or_a_description() {
        let cmd = Command::new("x")
            .subcommand(Command::new("good").arg(Arg::new("a").long("a").help("an a")).after_help("Example:\n  x good"))
            .subcommand(Command::new("bad").arg(Arg::new("b").long("b")));
        assert_eq!(super::missing_help(&cmd), ["`x bad`: --b has no description", "`x bad` has no example"]);
    }
}
