//! Commands that run another command: its words after their own options (`env -u X
//! A=1 git push`, `sudo -u bot git push`, `timeout 5 git push`, `nohup`, `nice`, `time`,
//! `exec`, `command`, `builtin`, `stdbuf`, `setsid`, `ionice`, `flock`), with more words
//! appended at run time (`xargs`, `find -exec … {} \;`), or a string run as shell code
//! (`watch 'git push'`, `su -c`, `script -c`, `flock -c`). `sudo -s`, `su` and `script`
//! with no command start an interactive shell, which counts as unknown.

use super::words::Word;
use super::{Walker, quote};

/// A wrapper's options: those that take the next word as their value (`-u NAME`; a
/// `--long=value` needs no entry) and how many words come between its options and the
/// command (`timeout`'s duration, `flock`'s file).
struct Spec {
    names: &'static [&'static str],
    with_value: &'static [&'static str],
    positional: usize,
}

const fn spec(names: &'static [&'static str], with_value: &'static [&'static str], positional: usize) -> Spec {
    Spec { names, with_value, positional }
}

const SPECS: &[Spec] = &[
    spec(&["nohup", "builtin", "coproc", "busybox", "setsid", "command", "chronic", "unbuffer"], &[], 0),
    spec(&["exec"], &["-a"], 0),
    spec(&["nice"], &["-n", "--adjustment"], 0),
    spec(&["time"], &["-f", "--format", "-o", "--output"], 0),
    spec(&["timeout"], &["-k", "--kill-after", "-s", "--signal"], 1),
    spec(&["stdbuf"], &["-i", "-o", "-e", "--input", "--output", "--error"], 0),
    spec(&["ionice"], &["-c", "--class", "-n", "--classdata", "-p", "--pid", "-P", "--pgid", "-u", "--uid"], 0),
    spec(&["env"], &["-u", "--unset", "-C", "--chdir", "-S", "--split-string", "-a", "--argv0"], 0),
    spec(
        &["sudo"],
        &[
            "-u",
            "--user",
            "-g",
            "--group",
            "-C",
            "--close-from",
            "-D",
            "--chdir",
            "-h",
            "--host",
            "-p",
            "--prompt",
            "-r",
            "--role",
            "-t",
            "--type",
            "-T",
            "--command-timeout",
            "-U",
            "--other-user",
            "-R",
            "--chroot",
        ],
        0,
    ),
    spec(&["doas"], &["-u", "-C"], 0),
    spec(
        &["xargs"],
        &[
            "-a",
            "--arg-file",
            "-d",
            "--delimiter",
            "-E",
            "-I",
            "-L",
            "--max-lines",
            "-n",
            "--max-args",
            "-P",
            "--max-procs",
            "-s",
            "--max-chars",
            "--process-slot-var",
        ],
        0,
    ),
    spec(&["watch"], &["-n", "--interval", "-q", "--equexit"], 0),
    spec(&["flock"], &["-w", "--timeout", "-E", "--conflict-exit-code"], 1),
];

/// The options before the command: their names and values, and where the rest starts.
/// `None` when a word in option position is computed at run time.
fn options(args: &[Word], with_value: &[&str]) -> Option<(Vec<(String, Word)>, usize)> {
    let mut seen = Vec::new();
    let mut i = 0;
    while let Some(arg) = args.get(i) {
        let a = arg.as_deref()?;
        if a == "--" {
            return Some((seen, i + 1));
        }
        if a.len() < 2 || !a.starts_with('-') {
            break;
        }
        i += 1;
        if let Some((name, value)) = a.split_once('=').filter(|_| a.starts_with("--")) {
            seen.push((name.to_string(), Some(value.to_string())));
        } else if with_value.contains(&a) {
            seen.push((a.to_string(), args.get(i).cloned().flatten()));
            i += 1;
        } else if !a.starts_with("--") && with_value.contains(&&a[..2]) {
            seen.push((a[..2].to_string(), Some(a[2..].to_string())));
        } else {
            seen.push((a.to_string(), None));
        }
    }
    Some((seen, i))
}

/// Leading `NAME=value` words (`env A=1 cmd`, `sudo A=1 cmd`) skipped.
fn skip_assignments(words: &[Word]) -> usize {
    words
        .iter()
        .take_while(|w| {
            w.as_deref()
                .and_then(|w| w.split_once('='))
                .is_some_and(|(n, _)| !n.is_empty() && n.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'))
        })
        .count()
}

/// The commands a wrapper `name` runs (`find` may run several), none when it runs none
/// or it was handled here (strings run as code are parsed here).
pub fn unwrap(w: &mut Walker, name: &str, args: &[Word], written: &str) -> Vec<Vec<Word>> {
    match name {
        "su" | "script" => command_option(w, name, args, written),
        "find" => find_exec(args),
        _ => unwrap_one(w, name, args, written).into_iter().collect(),
    }
}

/// The command a wrapper of [`SPECS`] runs.
fn unwrap_one(w: &mut Walker, name: &str, args: &[Word], written: &str) -> Option<Vec<Word>> {
    let spec = SPECS.iter().find(|s| s.names.contains(&name))?;
    let Some((opts, start)) = options(args, spec.with_value) else {
        w.open(String::new(), format!("{}: {name}'s options are computed when it runs", quote(written)));
        return None;
    };
    let has = |o: &[&str]| {
        opts.iter().any(|(n, _)| {
            o.iter()
                .any(|x| n == x || (x.len() == 2 && n.starts_with('-') && !n.starts_with("--") && n.contains(&x[1..])))
        })
    };
    let mut rest: Vec<Word> = args[(start + spec.positional).min(args.len())..].to_vec();
    match name {
        "command" if has(&["-v", "-V"]) => return None,
        "env" | "sudo" => {
            let split = opts.iter().find(|(n, _)| n == "-S" || n == "--split-string");
            rest.drain(..skip_assignments(&rest));
            if let Some((_, s)) = split {
                let words: Vec<Word> = match s {
                    Some(s) => s.split_whitespace().map(|p| Some(p.to_string())).collect(),
                    None => vec![None],
                };
                rest.splice(0..0, words);
            }
        }
        "flock" if matches!(rest.first(), Some(Some(c)) if c == "-c" || c == "--command") => {
            w.code(rest.get(1).cloned().flatten(), written, "flock's command");
            return None;
        }
        "watch" if !has(&["-x", "--exec"]) => {
            let joined: Option<Vec<String>> = rest.iter().cloned().collect();
            w.code(joined.map(|j| j.join(" ")), written, "watch's command");
            return None;
        }
        "xargs" => {
            if rest.is_empty() {
                rest.push(Some("echo".into()));
            }
            rest.push(None);
        }
        _ => {}
    }
    if rest.is_empty()
        && (matches!(name, "sudo" if has(&["-s", "-i", "--shell", "--login"])) || (name == "doas" && has(&["-s"])))
    {
        interactive(w, name, written);
    }
    (!rest.is_empty()).then_some(rest)
}

/// An interactive shell: what it runs is typed later, where no hook sees it.
fn interactive(w: &mut Walker, name: &str, written: &str) {
    let why = format!("{}: {name} starts an interactive shell, whose commands no hook sees", quote(written));
    w.open(String::new(), why);
}

/// `su -c CMD`, `script -c CMD`; with no command, an interactive shell.
fn command_option(w: &mut Walker, name: &str, args: &[Word], written: &str) -> Vec<Vec<Word>> {
    for (i, a) in args.iter().enumerate() {
        match a.as_deref() {
            Some("-c" | "--command") => {
                w.code(args.get(i + 1).cloned().flatten(), written, &format!("{name}'s command"));
                return Vec::new();
            }
            Some(a) if a.starts_with("--command=") => {
                w.program(&a["--command=".len()..], Some(written));
                return Vec::new();
            }
            _ => {}
        }
    }
    interactive(w, name, written);
    Vec::new()
}

/// `find … -exec CMD … {} ;` (and `-execdir`, `-ok`, `-okdir`): each command, the file
/// names (`{}`) unknown.
fn find_exec(args: &[Word]) -> Vec<Vec<Word>> {
    let mut commands = Vec::new();
    let mut i = 0;
    while i < args.len() {
        if matches!(args[i].as_deref(), Some("-exec" | "-execdir" | "-ok" | "-okdir")) {
            let ends = |a: &Word| matches!(a.as_deref(), Some(";" | "+"));
            let end = args[i + 1..].iter().position(ends).map_or(args.len(), |p| i + 1 + p);
            commands.push(args[i + 1..end].iter().map(|a| a.clone().filter(|a| a != "{}")).collect());
            i = end;
        }
        i += 1;
    }
    commands
}
