//! The spellings of a gated command, as a table: with `Bash(git push*)` and
//! `Bash(npm test*)` gated, every way of running `git push` or `npm test` is gated, each
//! with the reason the model and the approver see, and commands that run neither stay free.

use coord_policy::Compiled;
use coord_proto::types::{Policy, PolicyRule};
use serde_json::json;

/// What the gate must decide for a command line.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Expect {
    /// Gated, matched as written (no reason needed).
    Plain,
    /// Gated once resolved: the reason says what it runs.
    Runs,
    /// Gated because what it runs cannot be known: the reason says why.
    Unknown,
    /// Not gated.
    Free,
}
use Expect::*;

const ROWS: &[(&str, Expect)] = &[
    // The spellings of issue 32.
    ("bash -c 'git push'", Runs),
    ("sh -c 'git push'", Runs),
    ("git -C . push", Runs),
    ("git  push", Runs),
    ("/usr/bin/git push", Runs),
    ("env git push", Runs),
    ("command git push", Runs),
    ("nohup git push", Runs),
    ("time git push", Runs),
    ("eval \"git push\"", Runs),
    // As written, and in compound commands.
    ("git push", Plain),
    ("git push origin main --force", Plain),
    ("cd app && git push", Plain),
    ("make; git push -f", Plain),
    ("false || git push", Plain),
    ("git status | git push", Plain),
    ("git push 2>&1 | tee push.log", Plain),
    ("(git push)", Plain),
    ("{ git push; }", Plain),
    ("if true; then git push; fi", Plain),
    ("for r in a b; do git push origin $r; done", Plain),
    ("f() { git push; }; f", Plain),
    ("echo $(git push)", Plain),
    ("echo \"`git push`\"", Plain),
    ("X=$(git push origin main)", Plain),
    ("diff <(git push) expected.txt", Plain),
    ("cat <<EOF\n$(git push)\nEOF", Plain),
    // Quoting, escapes, spacing, paths.
    ("GIT_DIR=.git git push", Plain),
    ("\\git push", Runs),
    ("'git' push", Runs),
    ("\"git\" \"push\" origin", Runs),
    ("g''it pu\"\"sh", Runs),
    ("$'\\x67it' push", Runs),
    ("git   -C   repo   push   --force", Runs),
    ("./bin/../../usr/bin/git push", Runs),
    // Shells and strings run as code.
    ("zsh -c \"git push origin main\"", Runs),
    ("bash -lc 'git push'", Runs),
    ("busybox sh -c 'git push'", Runs),
    ("bash -c \"bash -c 'git push'\"", Runs),
    ("eval git push", Runs),
    ("builtin eval 'git push'", Runs),
    ("bash <<'EOF'\ngit push\nEOF", Runs),
    ("sh <<< 'git push'", Runs),
    ("trap 'git push' EXIT", Runs),
    ("alias p='git push'", Runs),
    ("watch -n 60 git push", Runs),
    ("su -c 'git push' bot", Runs),
    ("script -q -c 'git push' /dev/null", Runs),
    ("flock /tmp/push.lock -c 'git push'", Runs),
    // Wrappers.
    ("env -i PATH=/usr/bin GIT_TRACE=1 git push", Runs),
    ("env -S 'git push'", Runs),
    ("exec git push", Runs),
    ("nice -n 10 git push", Runs),
    ("timeout -s KILL 30 git push", Runs),
    ("sudo -u bot git push", Runs),
    ("stdbuf -oL git push", Runs),
    ("coproc git push", Runs),
    ("flock /tmp/push.lock git push", Runs),
    ("find . -maxdepth 0 -exec git push \\;", Runs),
    ("echo origin | xargs git push", Unknown),
    ("echo push | xargs git", Unknown),
    // git's global options and aliases.
    ("git -c user.name=x --no-pager --git-dir=.git --work-tree=. push", Runs),
    ("git --git-dir .git --namespace ns push", Runs),
    ("git -c alias.p=push p", Runs),
    ("git -c alias.p='!git push' p", Runs),
    ("git -c core.pager='git push' log", Runs),
    ("GIT_PAGER='git push' git log", Runs),
    ("git p", Unknown),
    // Computed at run time, unparsable, or read later: unknown.
    ("git $SUB", Unknown),
    ("$GIT push", Unknown),
    ("\"$(which git)\" push", Unknown),
    ("eval \"$CMD\"", Unknown),
    ("sh -c \"$CMD\"", Unknown),
    ("git pu?h", Unknown),
    ("{git,push}", Unknown),
    ("if true; then git status", Unknown),
    ("echo 'git push' | sh", Unknown),
    ("bash", Unknown),
    ("sudo -s", Unknown),
    ("source /dev/stdin <<< 'git push'", Runs),
    // Another rule, as before.
    ("npm test", Plain),
    ("npm test -- --watch", Plain),
    ("cd web && CI=1 npm test", Plain),
    ("bash -c 'npm test'", Runs),
    // Commands that run neither stay free.
    ("git status", Free),
    ("git -C repo status --short", Free),
    ("git pull --rebase", Free),
    ("git stash push -m wip", Free),
    ("git log --oneline | head -5", Free),
    ("git commit -m 'git push later'", Free),
    ("echo git push", Free),
    ("echo 'git push' > notes.txt", Free),
    ("grep -rn \"git push\" docs", Free),
    ("cat <<'EOF'\ngit push\nEOF", Free),
    ("npm install && npm run lint", Free),
    ("ls *.rs", Free),
    ("cargo test -- $FILTER", Free),
    ("bash scripts/check.sh", Free),
    ("source .venv/bin/activate && pytest", Free),
    ("timeout 5 cargo test", Free),
    ("[ -f Cargo.toml ] && echo ok", Free),
    ("find . -name '*.rs' -exec grep -l push {} \\;", Free),
    ("xargs rm -f < files.txt", Free),
    ("sudo apt-get install -y jq", Free),
    ("bash -c 'git fetch && git status'", Free),
];

fn policy(tools: &[&str]) -> Policy {
    let rules = tools.iter().map(|t| PolicyRule { tool: t.to_string(), agents: vec![], approver: None }).collect();
    Policy { lead: Some("lead".into()), rules, ..Policy::default() }
}

fn decide(p: &Policy, command: &str) -> Option<Option<String>> {
    let c = Compiled::new(p).unwrap();
    c.check("w1", "Bash", &json!({ "command": command }), None).map(|g| g.reason)
}

#[test]
fn every_spelling_is_decided_as_the_table_says() {
    assert!(ROWS.len() >= 40);
    let p = policy(&["Bash(git push*)", "Bash(npm test*)"]);
    let mut wrong = Vec::new();
    for &(command, expect) in ROWS {
        let got = decide(&p, command);
        let ok = match (&got, expect) {
            (None, Free) | (Some(None), Plain) => true,
            (Some(Some(r)), Runs) => r.contains(" runs `"),
            (Some(Some(r)), Unknown) => r.ends_with("so it counts as a match"),
            _ => false,
        };
        if !ok {
            wrong.push(format!("{command:?}: expected {expect:?}, got {got:?}"));
        }
    }
    assert!(wrong.is_empty(), "{} of {} rows wrong:\n{}", wrong.len(), ROWS.len(), wrong.join("\n"));
}

#[test]
fn the_reason_names_the_rule_and_what_the_command_runs() {
    let p = policy(&["Bash(git push*)"]);
    let reason = decide(&p, "bash -c 'git -C . push origin'").unwrap().unwrap();
    assert_eq!(reason, "gated by Bash(git push*): `bash -c 'git -C . push origin'` runs `git push origin`");
    let unknown = decide(&p, "eval \"$CMD\"").unwrap().unwrap();
    assert!(unknown.starts_with("gated by Bash(git push*): `eval \"$CMD\"`: eval's string is computed"), "{unknown}");
}

#[test]
fn what_cannot_be_read_is_gated_only_where_a_bash_rule_could_hide_in_it() {
    for unknown in ["eval \"$CMD\"", "bash", "if true; then", "$CMD"] {
        assert_eq!(decide(&policy(&["Write(src/**)", "mcp__*"]), unknown), None, "{unknown}");
        assert!(decide(&policy(&["Bash(git push*)"]), unknown).is_some(), "{unknown}");
        assert_eq!(decide(&policy(&["Bash"]), unknown), Some(None), "{unknown}: a bare Bash rule gates it as before");
    }
    // A computed word after a known start is gated only by rules that start alike.
    assert_eq!(decide(&policy(&["Bash(npm test*)"]), "git $SUB"), None);
    assert_eq!(
        decide(&policy(&["Bash(rm -rf*)"]), "echo push | xargs rm"),
        Some(Some(
            "gated by Bash(rm -rf*): `xargs rm`: `rm …` takes words computed when it runs, so it counts as a match"
                .into()
        ))
    );
}

#[test]
fn a_rule_spelt_with_a_path_or_a_wrapper_still_matches_as_written() {
    let p = policy(&["Bash(/usr/bin/git push*)", "Bash(sudo *)"]);
    assert_eq!(decide(&p, "/usr/bin/git push"), Some(None));
    assert!(decide(&p, "sudo -u bot git status").is_some());
    assert_eq!(decide(&p, "git push"), None, "the rule names that path only");
}
