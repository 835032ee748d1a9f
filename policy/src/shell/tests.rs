//! What `analyze` finds in a line: the commands it runs, step by step, and what it
//! cannot know.

use super::*;

fn seen(line: &str) -> Vec<String> {
    analyze(line).seen.into_iter().map(|s| s.command).collect()
}

fn open(line: &str) -> Vec<String> {
    analyze(line).open.into_iter().map(|o| o.prefix).collect()
}

#[test]
fn each_command_is_seen_as_written_then_as_it_runs() {
    assert_eq!(
        seen("sudo -u bot /usr/bin/git -C . push"),
        ["sudo -u bot /usr/bin/git -C . push", "/usr/bin/git -C . push", "git -C . push", "git push"]
    );
    assert_eq!(seen("cd x && 'git'  pu\"sh\""), ["cd x", "'git' pu\"sh\"", "git push"]);
    assert!(open("cd x && git push").is_empty());
}

#[test]
fn strings_run_as_code_are_parsed_and_remember_the_written_command() {
    let a = analyze("bash -lc 'git push'");
    let inner = a.seen.iter().find(|s| s.command == "git push").unwrap();
    assert_eq!(inner.written.as_deref(), Some("bash -lc 'git push'"));
}

#[test]
fn what_is_computed_when_it_runs_is_open_from_its_known_start() {
    assert_eq!(open("git $SUB origin"), ["git "]);
    assert_eq!(open("$CMD push"), [""]);
    assert_eq!(open("eval \"$X\""), ["eval ", ""]);
    assert_eq!(open("echo 'git push' | bash"), [""]);
    assert_eq!(open("xargs git"), ["git "]);
    let why = &analyze("bash").open[0].why;
    assert!(why.contains("which no hook sees"), "{why}");
}
