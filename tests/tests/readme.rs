//! The README stays true: the first command installs the three binaries and runs the demo
//! (which works, prints commands that can be pasted and says how to stop what it leaves
//! running), the second is exactly what `.ci/run` runs, and the quick start works pasted
//! line by line, each id taken from the line an earlier command printed.

use coord_tests::{Project, bin, git_in};

fn readme() -> String {
    std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../README.md")).unwrap()
}

/// The first fenced block of the README, line by line, exactly as a newcomer pastes it
/// (and as `.ci/run` must run it: no comments).
fn first_commands() -> Vec<String> {
    let text = readme();
    let block = text.split("```").nth(1).expect("a code block");
    block.lines().skip(1).map(|l| l.trim_end().to_string()).filter(|l| !l.is_empty()).collect()
}

#[test]
fn the_first_two_commands_install_and_demo_then_test() {
    let cmds = first_commands();
    assert_eq!(cmds, ["./install.sh && orch demo", "cargo test --workspace"]);
    let ci = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../.ci/run")).unwrap();
    assert!(ci.lines().any(|l| l == cmds[1]), ".ci/run runs exactly the README's test command");
    // install.sh installs the four crates whose binaries are coordd, inbox, orch and coord-launch.
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/..");
    let install = std::fs::read_to_string(format!("{root}/install.sh")).unwrap();
    for (krate, binary) in
        [("coordd", "coordd"), ("inbox-cli", "inbox"), ("orch-cli", "orch"), ("launch", "coord-launch")]
    {
        assert!(install.contains(krate), "install.sh installs {krate}");
        let manifest = std::fs::read_to_string(format!("{root}/{krate}/Cargo.toml")).unwrap();
        assert!(manifest.contains(&format!("name = \"{binary}\"")), "{krate} builds {binary}");
    }
    let syntax = std::process::Command::new("bash").args(["-n", &format!("{root}/install.sh")]).status().unwrap();
    assert!(syntax.success());
}

#[test]
fn the_demo_runs_a_leader_and_two_workers_and_says_how_to_stop_its_daemon() {
    let p = Project::new();
    let dir = p.path().join("demo");
    let out = p.orch().args(["demo", "--dir", &dir.display().to_string()]).run().ok();
    for step in
        ["worker-a $ inbox claim", "worker-b $ inbox claim", "leader $ orch answer", "run finish", "fast-forward"]
    {
        assert!(out.stdout.contains(step), "{step}:\n{}", out.stdout);
    }
    assert!(dir.join("greet.sh").is_file(), "the run's work reached main's checkout");
    // It says how to stop the daemon it left running, and that command works.
    let stop = out.stdout.lines().find_map(|l| l.trim().strip_prefix("Stop it with:")).expect("how to stop").trim();
    let coordd = bin("coordd").display().to_string();
    let stop = stop.replacen("coordd", &coordd, 1);
    let status = std::process::Command::new("sh").arg("-c").arg(&stop).status().unwrap();
    assert!(status.success(), "{stop}");
    let st = p.coordd().args(["--db", &dir.join(".agents/coord.db").display().to_string(), "status", "--json"]).run();
    assert_eq!(st.code, 3, "stopped: {st:?}");
}

#[test]
fn the_demo_prints_commands_to_paste_their_json_and_where_to_go_next() {
    let p = Project::new();
    let dir = p.path().join("demo");
    let out = p.orch().args(["demo", "--stop", "--dir", &dir.display().to_string()]).run().ok();
    assert!(out.stdout.contains("--goal 'Greet people in two languages'"), "{}", out.stdout);
    assert!(out.stdout.contains(r#"{"ok":true,"command":"dispatch""#), "the JSON it ran with: {}", out.stdout);
    let end: String = out.stdout.lines().rev().take(2).collect::<Vec<_>>().join(" ");
    assert!(end.contains("quick start") && end.contains("docs/orch.md"), "{end}");
}

#[test]
fn the_launch_demo_has_the_bridge_start_sessions_that_ask_finish_and_merge() {
    let p = Project::new();
    let dir = p.path().join("demo");
    let out = p.orch().args(["demo", "--launch", "--stop", "--dir", &dir.display().to_string()]).run().ok();
    for step in [
        "leader $ coord-launch --run demo --command",
        "\"event_type\":\"task.blocked\"",
        "leader $ orch answer",
        "data a1 command one_shot @worker-a pid",
        "api a1 command one_shot @worker-b pid",
        "fast-forward",
    ] {
        assert!(out.stdout.contains(step), "{step}:\n{}", out.stdout);
    }
    assert_eq!(out.stdout.matches(" exit 0  log: ").count(), 2, "both sessions exited 0:\n{}", out.stdout);
    assert_eq!(std::fs::read_to_string(dir.join("greetings.txt")).unwrap(), "hello\nbonjour\n");
    assert!(dir.join("greet.sh").is_file(), "the sessions' work reached main's checkout");
    let end: String = out.stdout.lines().rev().take(2).collect::<Vec<_>>().join(" ");
    assert!(end.contains("quick start") && end.contains("docs/orch.md"), "{end}");
}

/// `orch demo --team`: one command runs a scripted lead and scripted workers; the lead
/// plans two tasks, answers the question pushed into its session, merges, and the run lands
/// on main; no API key.
#[test]
fn the_team_demo_has_a_scripted_lead_plan_answer_and_merge() {
    let p = Project::new();
    let dir = p.path().join("demo");
    let out = p.orch().args(["demo", "--team", "--stop", "--dir", &dir.display().to_string()]).run().ok();
    for step in [
        "you $ coord-launch --lead command --goal",
        "lead started: command @lead",
        "answered msg_",
        "data a1 command live @worker-a pid",
        "api a1 command live @worker-b pid",
        "run demo done: 2 of 2 tasks done",
        "into main at",
    ] {
        assert!(out.stdout.contains(step), "{step}:\n{}", out.stdout);
    }
    assert_eq!(std::fs::read_to_string(dir.join("greetings.txt")).unwrap(), "hello\nbonjour\n");
    assert!(dir.join("greet.sh").is_file(), "the workers' work reached main's checkout");
}

/// The quick start's lines, comments dropped.
fn quick_start() -> Vec<String> {
    let text = readme();
    let from = text.find("Quick start in your own repository").expect("a quick start");
    let block = text[from..].split("```").nth(1).expect("its code block");
    block.lines().skip(1).map(|l| l.split("  #").next().unwrap().trim().to_string()).filter(|l| !l.is_empty()).collect()
}

/// `THREAD_ID`, `EVENT_ID`: what a newcomer takes from a printed line.
fn placeholder(word: &str) -> bool {
    word.contains('_') && word.chars().all(|c| c.is_ascii_uppercase() || c == '_')
}

/// Where `printed` holds `line` word for word, each placeholder standing for one word:
/// the words the placeholders stand for.
fn printed_as(line: &str, printed: &str) -> Option<Vec<(String, String)>> {
    let want: Vec<&str> = line.split_whitespace().collect();
    let got: Vec<&str> = printed.split_whitespace().collect();
    (0..=got.len().saturating_sub(want.len())).find_map(|start| {
        let window = got.get(start..start + want.len())?;
        let mut bound = Vec::new();
        for (w, g) in want.iter().zip(window) {
            if placeholder(w) {
                bound.push((w.to_string(), g.to_string()));
            } else if w != g {
                return None;
            }
        }
        Some(bound)
    })
}

#[test]
fn the_quick_start_works_pasted_in_order() {
    let p = Project::new();
    git_in(p.path(), &["init", "-q", "-b", "main"]);
    git_in(p.path(), &["-c", "user.email=t@e", "-c", "user.name=t", "commit", "-q", "--allow-empty", "-m", "start"]);
    let mut printed: Vec<String> = Vec::new();
    let mut known: Vec<(String, String)> = Vec::new();
    for line in quick_start() {
        let line = line.replace("cd your-repo && ", "");
        // The line as an earlier command printed it (the latest), else with the ids known.
        let run = match printed.iter().rev().find_map(|out| printed_as(&line, out)) {
            Some(bound) => {
                known.retain(|(k, _)| !bound.iter().any(|(b, _)| b == k));
                known.extend(bound);
                fill(&line, &known)
            }
            None => fill(&line, &known),
        };
        assert!(!run.split_whitespace().any(placeholder), "no earlier command printed `{line}`:\n{printed:#?}");
        let out = p.sh(&run).run();
        assert_eq!(out.code, 0, "`{run}`: {out:?}");
        printed.extend(out.stdout.lines().map(str::to_string));
        if line.starts_with("inbox wait-reply") {
            assert!(out.stdout.contains("Use email/password"), "the answer: {}", out.stdout);
        }
    }
    let status = p.orch().args(["status", "--run", "R1", "--json"]).run().ok().json();
    assert_eq!(status["tasks"][0]["task"]["status"], "done", "{status}");
}

fn fill(line: &str, known: &[(String, String)]) -> String {
    line.split(' ')
        .map(|w| known.iter().find(|(k, _)| k == w).map_or(w.to_string(), |(_, v)| v.clone()))
        .collect::<Vec<_>>()
        .join(" ")
}
