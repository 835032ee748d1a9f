//! One simple command, resolved to what it runs: the path dropped from its name, then,
//! by name, a shell's `-c` string or input, `eval`'s words, `trap`'s and `alias`'s
//! strings, git without its global options, or the command a wrapper runs. Each step is
//! recorded ([`Walker::seen`]), so a rule may match any of them (`Bash(sudo *)` still
//! sees the `sudo`).

use super::words::Word;
use super::{Stdin, Walker, git, quote, wrappers};

/// The shells whose `-c` string, script or input is shell code.
const SHELLS: &[&str] = &["sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "yash", "posh", "fish"];
/// Paths through which a shell or `source` reads its own input.
const STDIN_PATHS: &[&str] = &["-", "/dev/stdin", "/dev/fd/0", "/proc/self/fd/0"];
/// Environment variables whose value git or the shell runs as a command.
pub const RUN_VARIABLES: &[&str] = &[
    "GIT_PAGER",
    "PAGER",
    "GIT_EDITOR",
    "EDITOR",
    "VISUAL",
    "GIT_SEQUENCE_EDITOR",
    "GIT_SSH_COMMAND",
    "GIT_EXTERNAL_DIFF",
    "PROMPT_COMMAND",
];

/// The words joined by one space, up to the first unknown one; `None` when all are known.
fn known_start(words: &[Word]) -> (String, bool) {
    let known: Vec<&str> = words.iter().map_while(|w| w.as_deref()).collect();
    (known.join(" "), known.len() == words.len())
}

/// Record `words` as a command of `written`: seen when every word is known, otherwise
/// open from its known start.
fn record(w: &mut Walker, words: &[Word], written: &str) -> bool {
    let (start, whole) = known_start(words);
    if whole {
        w.seen(start, written);
    } else if start.is_empty() {
        w.open(String::new(), format!("{}: the command's name is computed when it runs", quote(written)));
        return false;
    } else {
        let why = format!("{}: `{start} …` takes words computed when it runs", quote(written));
        w.open(format!("{start} "), why);
    }
    true
}

/// Resolve the command `words` (its name first) of the written command `written`.
pub fn run(w: &mut Walker, mut words: Vec<Word>, stdin: &Stdin, written: &str) {
    // Each unwrapping shortens the words, so this ends; the bound guards aliases.
    for _ in 0..64 {
        if words.is_empty() || !record(w, &words, written) {
            return;
        }
        let Some(full) = words[0].clone() else { return };
        let name = full.rsplit('/').next().unwrap_or(&full).to_string();
        if name != full {
            words[0] = Some(name.clone());
            record(w, &words, written);
        }
        let args = &words[1..];
        let next = match name.as_str() {
            n if SHELLS.contains(&n) => return shell(w, &name, args, stdin, written),
            "eval" => {
                let (code, whole) = known_start(args);
                return w.code(whole.then_some(code), written, "eval's string");
            }
            "source" | "." => {
                if args.first().is_some_and(|a| a.as_deref().is_some_and(|p| STDIN_PATHS.contains(&p))) {
                    read_stdin(w, &name, stdin, written);
                }
                return;
            }
            "trap" => {
                match args.first() {
                    Some(Some(a)) if a.starts_with('-') => {}
                    Some(action) if args.len() > 1 => w.code(action.clone(), written, "trap's command"),
                    _ => {}
                }
                return;
            }
            "alias" => {
                for a in args {
                    match a.as_deref().map(|a| a.split_once('=')) {
                        Some(Some((_, value))) => w.program(value, Some(written)),
                        Some(None) => {}
                        None => w.code(None, written, "an alias"),
                    }
                }
                return;
            }
            "git" => match git::resolve(w, args, written) {
                Some(next) => next,
                None => return,
            },
            _ => {
                let mut next = wrappers::unwrap(w, &name, args, written);
                if next.len() != 1 {
                    for command in next {
                        run(w, command, &Stdin::Inherited, written);
                    }
                    return;
                }
                next.remove(0)
            }
        };
        words = next;
    }
}

/// `bash [options] [-c string | script | (input)]`.
fn shell(w: &mut Walker, name: &str, args: &[Word], stdin: &Stdin, written: &str) {
    let mut i = 0;
    let (mut command_string, mut reads_stdin) = (false, false);
    while let Some(arg) = args.get(i) {
        let Some(a) = arg.as_deref() else {
            return w.open(String::new(), format!("{}: {name}'s options are computed when it runs", quote(written)));
        };
        if a == "--" || a == "-" {
            i += 1;
            break;
        }
        if a.len() < 2 || !(a.starts_with('-') || a.starts_with('+')) {
            break;
        }
        if a.starts_with("--") {
            i += if matches!(a, "--rcfile" | "--init-file") { 2 } else { 1 };
            continue;
        }
        command_string |= a.starts_with('-') && a.contains('c');
        reads_stdin |= a.starts_with('-') && a.contains('s');
        // `-o name` / `-O name` take the option's name next.
        i += if a.contains(['o', 'O']) { 2 } else { 1 };
    }
    if command_string {
        let code = args.get(i).cloned().flatten();
        return w.code(code, written, &format!("{name} -c's string"));
    }
    match args.get(i) {
        _ if reads_stdin => read_stdin(w, name, stdin, written),
        Some(Some(script)) if !STDIN_PATHS.contains(&script.as_str()) => {}
        Some(None) => w.code(None, written, &format!("the script {name} runs")),
        _ => read_stdin(w, name, stdin, written),
    }
}

/// A shell (or `source /dev/stdin`) reading the commands to run from its input.
fn read_stdin(w: &mut Walker, name: &str, stdin: &Stdin, written: &str) {
    match stdin {
        Stdin::Text(text) => w.code(text.clone(), written, &format!("the input {name} reads")),
        Stdin::File => {}
        Stdin::Pipe | Stdin::Inherited => {
            let from = if *stdin == Stdin::Pipe { "the command before it in the pipe" } else { "its input" };
            let why = format!(
                "{}: {name} runs the commands it reads from {from}, which no hook sees (an interactive shell)",
                quote(written)
            );
            w.open(String::new(), why);
        }
    }
}
