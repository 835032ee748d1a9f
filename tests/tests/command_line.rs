//! The command line of `inbox`, `orch` and `coordd`: usage errors as `invalid_args`
//! (an envelope on stdout under `--json`), every command's `--help` with an example and
//! its commands grouped by purpose, `hook` and `hooks` as one command, global flags on
//! either side of the command, completions and man pages, tables that fit the terminal,
//! colour only on a terminal, and mail states that agree across `mail`, `check` and
//! `withdraw`.

use coord_tests::{Project, have, ok, on_terminal};
use serde_json::Value;

/// `program ARGS --json`: a usage error, as an envelope on stdout, exit 30.
fn usage_error(p: &Project, program: &str, args: &[&str]) -> Value {
    let run = match program {
        "inbox" => p.inbox(),
        "orch" => p.orch(),
        _ => p.coordd(),
    };
    let out = run.args(args).args(["--json"]).run().code(30);
    let v = out.json();
    assert_eq!(v["ok"], false, "{v}");
    assert_eq!(v["error"]["code"], "invalid_args", "{v}");
    assert!(!v["error"]["message"].as_str().unwrap().is_empty());
    v
}

#[test]
fn usage_errors_are_invalid_args_and_an_envelope_under_json() {
    let p = Project::new();
    let v = usage_error(&p, "inbox", &["claim", "--bogus"]);
    assert_eq!(v["command"], "claim");
    assert!(v["error"]["message"].as_str().unwrap().contains("--bogus"), "{v}");
    usage_error(&p, "inbox", &["send", "--from", "a", "--to", "b", "--summary", "x", "--priority", "asap"]);
    usage_error(&p, "inbox", &["claim", "--agent", "w"]);
    let v = usage_error(&p, "orch", &["task", "add", "--run", "R1"]);
    assert_eq!(v["command"], "task add");
    usage_error(&p, "coordd", &["serve", "--idle-timeout", "soon"]);
    // Without --json: clap's message on stderr, nothing on stdout, the same exit status.
    let out = p.inbox().args(["claim", "--bogus"]).run().code(30);
    assert!(out.stdout.is_empty() && out.stderr.contains("--bogus"), "{out:?}");
    assert!(!p.path().join(".agents").exists(), "a usage error never starts a daemon");
}

#[test]
fn a_usage_error_without_a_command_names_the_program() {
    let p = Project::new();
    assert_eq!(usage_error(&p, "inbox", &["bogus"])["command"], "inbox");
    assert_eq!(usage_error(&p, "orch", &[])["command"], "orch");
}

#[test]
fn a_usage_errors_message_keeps_its_line_breaks_under_json() {
    let p = Project::new();
    let v = usage_error(&p, "inbox", &["done"]);
    let message = v["error"]["message"].as_str().unwrap();
    assert!(message.contains("\n  --thread <THREAD_ID>\n"), "one missing flag a line: {message:?}");
    assert!(!message.contains("   "), "no runs of spaces for line breaks: {message:?}");
}

#[test]
fn a_missing_agent_names_the_command_once() {
    let p = Project::new();
    let out = p.inbox().args(["done", "--thread", "thr_x", "--summary", "s"]).run().code(30);
    assert!(out.stderr.starts_with("inbox done: --agent is required"), "{}", out.stderr);
    assert_eq!(out.stderr.matches("done").count(), 1, "{}", out.stderr);
}

#[test]
fn a_missing_body_file_is_the_callers_error() {
    let p = Project::new();
    let args = ["done", "--agent", "w", "--thread", "thr_x", "--summary", "s", "--body-file", "result.md", "--json"];
    let v = p.inbox().args(args).run().code(30).json();
    assert_eq!(v["error"]["code"], "invalid_args");
    assert!(v["error"]["message"].as_str().unwrap().contains("result.md"), "{v}");
    let v = p
        .orch()
        .args(["answer", "--run", "R", "--task", "T", "--summary", "s", "--body-file", "nope", "--json"])
        .run()
        .code(30)
        .json();
    assert_eq!(v["error"]["code"], "invalid_args");
}

/// The command names an `inbox --help`-style listing shows (two-space indented lines).
fn listed(help: &str) -> Vec<String> {
    let commands = help.split("\nOptions:").next().unwrap_or_default();
    commands
        .lines()
        .filter(|l| l.starts_with("  ") && !l.starts_with("   "))
        .filter_map(|l| l.split_whitespace().next().map(str::to_string))
        .filter(|n| n != "help")
        .collect()
}

/// Walk every command of `program` through `--help`: each has an example.
fn every_help_has_an_example(p: &Project, program: &str) -> usize {
    let run = |args: &[&str]| if program == "inbox" { p.inbox().args(args).run() } else { p.orch().args(args).run() };
    let mut todo: Vec<Vec<String>> = listed(&run(&["--help"]).ok().stdout).into_iter().map(|c| vec![c]).collect();
    let mut seen = 0;
    while let Some(path) = todo.pop() {
        let mut args: Vec<&str> = path.iter().map(String::as_str).collect();
        args.push("--help");
        let help = run(&args).ok().stdout;
        let subs = if help.contains("Commands:") { listed(help.split("Commands:").nth(1).unwrap()) } else { vec![] };
        if subs.is_empty() {
            assert!(help.contains("Example"), "`{program} {}` has no example:\n{help}", path.join(" "));
            seen += 1;
        }
        todo.extend(subs.into_iter().map(|s| [path.clone(), vec![s]].concat()));
    }
    seen
}

#[test]
fn every_command_has_an_example_and_the_top_level_help_groups_them() {
    let p = Project::new();
    assert!(every_help_has_an_example(&p, "inbox") >= 35);
    assert!(every_help_has_an_example(&p, "orch") >= 30);
    let help = p.inbox().args(["--help"]).run().ok().stdout;
    for group in ["Work (the worker protocol):", "Mail:", "Agents:", "Reservations:", "Sessions and setup:"] {
        assert!(help.contains(group), "{group} in:\n{help}");
    }
    let send = p.inbox().args(["send", "--help"]).run().ok().stdout;
    assert!(send.contains("low, normal, high, urgent"), "--priority lists its values:\n{send}");
    let coordd = p.coordd().args(["--help"]).run().ok().stdout;
    assert!(coordd.contains("Examples:") && coordd.contains("coordd --json list"), "{coordd}");
}

#[test]
fn help_examples_stay_whole_on_a_narrow_terminal() {
    let p = Project::new();
    let example =
        r#"  inbox update --agent backend --thread thr_... --status blocked --summary "Need auth decision" --json"#;
    for args in [&["update", "--help"][..], &["update", "-h"], &["help", "update"]] {
        let out = p.inbox().args(args).env("COLUMNS", "60").run().ok();
        assert!(out.stdout.lines().any(|l| l == example), "{args:?}:\n{}", out.stdout);
        let widest = out
            .stdout
            .lines()
            .filter(|l| !l.starts_with("  inbox") && !l.starts_with("Usage:"))
            .map(str::len)
            .max()
            .unwrap_or(0);
        assert!(widest <= 60, "the rest wraps to the terminal: {}", out.stdout);
    }
}

#[test]
fn hook_and_hooks_are_one_command() {
    let p = Project::new();
    let hook = p.inbox().args(["hook", "--help"]).run().ok().stdout;
    let hooks = p.inbox().args(["hooks", "--help"]).run().ok().stdout;
    assert_eq!(hook, hooks);
    for sub in ["install", "claude", "install-git", "pre-commit"] {
        assert!(hook.contains(sub), "{sub}:\n{hook}");
    }
    // The git guard installed by an older `inbox hooks install-git` still finds its command.
    p.inbox().args(["hooks", "pre-commit", "--help"]).run().ok();
}

#[test]
fn global_flags_go_before_or_after_the_command() {
    let p = Project::new();
    let _d = p.serve();
    for args in [&["--json", "status"][..], &["status", "--json"]] {
        assert_eq!(p.coordd().args(args).run().ok().json()["running"], true, "coordd {args:?}");
    }
    for args in [&["--json", "agent", "list"][..], &["agent", "list", "--json"], &["agent", "--json", "list"]] {
        assert_eq!(p.inbox().args(args).run().json()["ok"], true, "inbox {args:?}");
    }
    for args in [&["--json", "run", "list"][..], &["run", "list", "--json"]] {
        assert_eq!(p.orch().args(args).run().json()["command"], "run list", "orch {args:?}");
    }
}

#[test]
fn completions_and_man_pages() {
    let p = Project::new();
    let bash = p.inbox().args(["completions", "bash"]).run().ok().stdout;
    assert!(bash.contains("_inbox") && bash.contains("wait-reply"), "{}", &bash[..200.min(bash.len())]);
    let zsh = p.orch().args(["completions", "zsh"]).run().ok().stdout;
    assert!(zsh.starts_with("#compdef orch"), "{}", &zsh[..100.min(zsh.len())]);
    assert!(p.inbox().args(["man"]).run().ok().stdout.contains(".TH inbox"));
    assert!(p.orch().args(["man"]).run().ok().stdout.contains(".TH orch"));
}

#[test]
fn tables_fit_the_terminal_and_are_whole_in_a_pipe() {
    let p = Project::new();
    let _d = p.serve();
    let long = format!("A subject that goes on {}", "and on ".repeat(20));
    ok(&p, &["send", "--from", "lead", "--to", "worker-with-a-long-name", "--summary", &long]);
    let piped = p.inbox().args(["list"]).run().ok().stdout;
    assert!(
        piped.contains(long.trim()) && piped.contains("worker-with-a-long-name"),
        "nothing is cut in a pipe:\n{piped}"
    );
    if !have("script", "a pseudo-terminal") {
        return;
    }
    let inbox = coord_tests::bin("inbox").display().to_string();
    let shown = on_terminal(p.path(), 80, &format!("{inbox} list"), &[]);
    let lines: Vec<&str> = shown.lines().filter(|l| !l.is_empty()).collect();
    assert!(lines.len() >= 2, "{shown}");
    for l in &lines {
        assert!(l.chars().count() <= 80, "{} wide: {l}", l.chars().count());
    }
    assert!(shown.contains('…'), "the subject was cut to fit:\n{shown}");
}

#[test]
fn colour_only_on_a_terminal_and_never_with_no_color() {
    let p = Project::new();
    // The daemon's log in a pipe: plain text.
    let p2 = Project::new();
    let mut d2 = p2.serve_with(&[], &[]);
    let log = d2.log();
    // Every line up to `coordd ready` (the store's line comes first) is plain.
    let ready = log
        .map(|l| l.unwrap())
        .inspect(|l| assert!(!l.contains('\u{1b}'), "{l:?}"))
        .find(|l| l.contains("coordd ready"));
    assert!(ready.is_some(), "the log never said it was ready");
    d2.signal("TERM");
    if !have("script", "a pseudo-terminal") {
        return;
    }
    let coordd = coord_tests::bin("coordd").display().to_string();
    // On a terminal: colour, unless NO_COLOR says no. `--idle-timeout 1` makes it end.
    let line = format!("{coordd} serve --idle-timeout 1");
    let coloured = on_terminal(p.path(), 120, &line, &[("COORDD_LOG", "info")]);
    assert!(coloured.contains("\u{1b}["), "{coloured:?}");
    let plain = on_terminal(p.path(), 120, &line, &[("COORDD_LOG", "info"), ("NO_COLOR", "1")]);
    assert!(plain.contains("coordd ready") && !plain.contains("\u{1b}["), "{plain:?}");
    // `inbox search` marks matches in bold on a terminal, with ** elsewhere.
    let _d3 = p.serve();
    ok(&p, &["send", "--from", "lead", "--to", "w1", "--summary", "colour check"]);
    let inbox = coord_tests::bin("inbox").display().to_string();
    let bold = on_terminal(p.path(), 120, &format!("{inbox} search colour"), &[]);
    assert!(bold.contains("\u{1b}[1mcolour\u{1b}[0m"), "{bold:?}");
    let no_color = on_terminal(p.path(), 120, &format!("{inbox} search colour"), &[("NO_COLOR", "1")]);
    assert!(no_color.contains("**colour**") && !no_color.contains('\u{1b}'), "{no_color:?}");
}

#[test]
fn mail_check_and_withdraw_agree_on_a_messages_state() {
    let p = Project::new();
    let _d = p.serve();
    let first = ok(&p, &["send", "--from", "lead", "--to", "w1", "--summary", "first"]);
    let second = ok(&p, &["send", "--from", "lead", "--to", "w1", "--summary", "second"]);
    let state = |id: &Value| {
        let mail = ok(&p, &["mail", "--agent", "w1"]);
        let m =
            mail["mail"].as_array().unwrap().iter().find(|m| m["message_id"] == id["message"]["message_id"]).cloned();
        m.map(|m| m["delivery"].as_str().unwrap().to_string())
    };
    assert_eq!(state(&second).as_deref(), Some("queued"));
    ok(&p, &["withdraw", "--agent", "lead", "--message", second["message"]["message_id"].as_str().unwrap()]);
    assert_eq!(state(&second).as_deref(), Some("withdrawn"));
    let unread = ok(&p, &["mail", "--agent", "w1", "--state", "unread"]);
    let ids: Vec<&Value> = unread["mail"].as_array().unwrap().iter().map(|m| &m["message_id"]).collect();
    assert_eq!(ids, [&first["message"]["message_id"]], "a withdrawn message is not unread");
    ok(&p, &["check", "--agent", "w1"]);
    assert_eq!(state(&first).as_deref(), Some("delivered"));
    let text = p.inbox().args(["mail", "--agent", "w1"]).run().ok().stdout;
    assert!(text.contains("delivered") && text.contains("withdrawn") && !text.contains("unread"), "{text}");
}

#[test]
fn coord_bench_help_prints_help_and_an_unknown_option_is_refused() {
    let run = |arg: &str| std::process::Command::new(env!("CARGO_BIN_EXE_coord-bench")).arg(arg).output().unwrap();
    let help = run("--help");
    assert!(help.status.success(), "{help:?}");
    let text = String::from_utf8_lossy(&help.stdout);
    assert!(text.starts_with("coord-bench:") && text.contains("--only NAME") && text.contains("Examples:"), "{text}");
    assert_eq!(String::from_utf8_lossy(&run("-h").stdout), text, "-h is --help");
    let unknown = run("--bogus");
    assert_eq!(unknown.status.code(), Some(2), "{unknown:?}");
    assert!(String::from_utf8_lossy(&unknown.stderr).contains("unknown argument '--bogus'"), "{unknown:?}");
}

#[test]
fn coord_bench_refuses_a_hosts_budget_it_cannot_set_before_measuring() {
    let run = |v: &str| {
        std::process::Command::new(env!("CARGO_BIN_EXE_coord-bench"))
            .args(["--only", "pg", "--hosts-cpu", v])
            .output()
            .unwrap()
    };
    for bad in ["0.1,1,0.5", "0.25,1", "a,b,c", "inf,1,0.5"] {
        let out = run(bad);
        assert_eq!(out.status.code(), Some(2), "{bad}: {out:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("--hosts-cpu takes three numbers of cores"), "{bad}: {err}");
        assert!(out.stdout.is_empty(), "{bad}: nothing was measured: {out:?}");
    }
}
