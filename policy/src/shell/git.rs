//! `git` as it runs: its global options dropped (`git -C . -c k=v --no-pager push` is
//! `git push`), an alias given with `-c alias.NAME=…` replaced by what it stands for (a
//! `!` alias is shell code), the `-c` settings whose value git runs as a command
//! (`core.pager`, `core.sshCommand`, `*.textconv`, …) parsed as shell code, and a
//! subcommand that is no git command counted as unknown: it may be an alias from git's
//! configuration, which the gate cannot read.

use super::words::Word;
use super::{Walker, quote};

/// Global options that take the next word as their value.
const WITH_VALUE: &[&str] =
    &["-C", "-c", "--git-dir", "--work-tree", "--namespace", "--config-env", "--super-prefix", "--attr-source"];

/// The last part of a setting's name (or, for `pager.*`, its first) when git runs its
/// value as a command.
const RUN_SETTINGS: &[&str] = &[
    "pager",
    "editor",
    "sshcommand",
    "fsmonitor",
    "external",
    "helper",
    "program",
    "textconv",
    "command",
    "driver",
    "clean",
    "smudge",
    "process",
    "cmd",
    "packobjectshook",
];

/// git's own commands (`git --list-cmds=main,nohelpers` of git 2.47, and a few newer or
/// common add-ons); any other subcommand may be an alias.
const COMMANDS: &[&str] = &[
    "add",
    "am",
    "annotate",
    "apply",
    "archimport",
    "archive",
    "backfill",
    "bisect",
    "blame",
    "branch",
    "bugreport",
    "bundle",
    "cat-file",
    "check-attr",
    "check-ignore",
    "check-mailmap",
    "check-ref-format",
    "checkout",
    "checkout-index",
    "cherry",
    "cherry-pick",
    "citool",
    "clean",
    "clone",
    "column",
    "commit",
    "commit-graph",
    "commit-tree",
    "config",
    "count-objects",
    "credential",
    "credential-cache",
    "credential-store",
    "cvsexportcommit",
    "cvsimport",
    "cvsserver",
    "daemon",
    "describe",
    "diagnose",
    "diff",
    "diff-files",
    "diff-index",
    "diff-tree",
    "difftool",
    "fast-export",
    "fast-import",
    "fetch",
    "fetch-pack",
    "filter-branch",
    "fmt-merge-msg",
    "for-each-ref",
    "for-each-repo",
    "format-patch",
    "fsck",
    "fsck-objects",
    "gc",
    "get-tar-commit-id",
    "grep",
    "gui",
    "hash-object",
    "help",
    "hook",
    "http-backend",
    "http-fetch",
    "http-push",
    "imap-send",
    "index-pack",
    "init",
    "init-db",
    "instaweb",
    "interpret-trailers",
    "last-modified",
    "lfs",
    "log",
    "ls-files",
    "ls-remote",
    "ls-tree",
    "mailinfo",
    "mailsplit",
    "maintenance",
    "merge",
    "merge-base",
    "merge-file",
    "merge-index",
    "merge-octopus",
    "merge-one-file",
    "merge-ours",
    "merge-recursive",
    "merge-resolve",
    "merge-subtree",
    "merge-tree",
    "mergetool",
    "mktag",
    "mktree",
    "multi-pack-index",
    "mv",
    "name-rev",
    "notes",
    "p4",
    "pack-objects",
    "pack-redundant",
    "pack-refs",
    "patch-id",
    "pickaxe",
    "prune",
    "prune-packed",
    "pull",
    "push",
    "quiltimport",
    "range-diff",
    "read-tree",
    "rebase",
    "receive-pack",
    "reflog",
    "refs",
    "remote",
    "repack",
    "replace",
    "replay",
    "repo",
    "request-pull",
    "rerere",
    "reset",
    "restore",
    "rev-list",
    "rev-parse",
    "revert",
    "rm",
    "send-email",
    "send-pack",
    "shell",
    "shortlog",
    "show",
    "show-branch",
    "show-index",
    "show-ref",
    "sparse-checkout",
    "stage",
    "stash",
    "status",
    "stripspace",
    "submodule",
    "svn",
    "switch",
    "symbolic-ref",
    "tag",
    "unpack-file",
    "unpack-objects",
    "update-index",
    "update-ref",
    "update-server-info",
    "upload-archive",
    "upload-pack",
    "var",
    "verify-commit",
    "verify-pack",
    "verify-tag",
    "version",
    "whatchanged",
    "worktree",
    "write-tree",
];

/// `git ARGS` resolved: the words to resolve next (`git SUB …` without global options),
/// or `None` when git runs no command of its own or it was handled here.
pub fn resolve(w: &mut Walker, args: &[Word], written: &str) -> Option<Vec<Word>> {
    let mut settings: Vec<(String, Word)> = Vec::new();
    let mut i = 0;
    while let Some(arg) = args.get(i) {
        let Some(a) = arg.as_deref() else { break };
        if !a.starts_with('-') {
            break;
        }
        i += 1;
        let (name, value) = match a.split_once('=').filter(|_| a.starts_with("--")) {
            Some((n, v)) => (n, Some(v.to_string())),
            None if WITH_VALUE.contains(&a) => {
                i += 1;
                (a, args.get(i - 1).cloned().flatten())
            }
            None => (a, None),
        };
        match (name, value) {
            ("-c", Some(kv)) => settings.push(setting(&kv)),
            ("-c", None) => {
                w.open("git ".into(), format!("{}: a `-c` setting is computed when it runs", quote(written)))
            }
            ("--config-env", Some(kv)) => settings.push((setting(&kv).0, None)),
            _ => {}
        }
    }
    for (key, value) in &settings {
        let parts: Vec<&str> = key.split('.').collect();
        let runs = parts.first() == Some(&"pager") || parts.last().is_some_and(|l| RUN_SETTINGS.contains(l));
        if runs && parts.first() != Some(&"alias") {
            let code = value.as_deref().map(|v| v.strip_prefix('!').unwrap_or(v).to_string());
            w.code(code, written, &format!("git's setting {key}"));
        }
    }
    let rest = &args[i..];
    let sub = rest.first()?.as_deref()?;
    if COMMANDS.contains(&sub) {
        // Nothing dropped: this is already the command as it runs.
        if i == 0 {
            return None;
        }
        return Some(std::iter::once(Some("git".to_string())).chain(rest.iter().cloned()).collect());
    }
    let alias = format!("alias.{}", sub.to_ascii_lowercase());
    match settings.iter().rev().find(|(k, _)| *k == alias).map(|(_, v)| v.clone()) {
        Some(Some(v)) if v.starts_with('!') => {
            let tail: Option<Vec<String>> = rest[1..].iter().cloned().collect();
            let code = tail.map(|t| format!("{} {}", &v[1..], t.join(" ")));
            w.code(code, written, &format!("the alias git {sub}"));
            None
        }
        Some(Some(v)) => {
            let expanded = v.split_whitespace().map(|p| Some(p.to_string()));
            Some(std::iter::once(Some("git".to_string())).chain(expanded).chain(rest[1..].iter().cloned()).collect())
        }
        Some(None) => {
            w.code(None, written, &format!("the alias git {sub}"));
            None
        }
        None => {
            let why = format!(
                "{}: `git {sub}` is no git command, so it may be an alias set in git's configuration",
                quote(written)
            );
            w.open("git ".into(), why);
            None
        }
    }
}

/// `key=value` of a `-c`: the key lower-cased (git's names are case-insensitive; a
/// subsection's case is kept by git, but lowering only widens what is caught).
fn setting(kv: &str) -> (String, Word) {
    match kv.split_once('=') {
        Some((k, v)) => (k.to_ascii_lowercase(), Some(v.to_string())),
        None => (kv.to_ascii_lowercase(), Some("true".into())),
    }
}
