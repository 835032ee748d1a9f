//! The README's first lines stay true: the first command installs the three binaries and
//! runs the demo (which works, and says how to stop what it leaves running), the second is
//! exactly what `.ci/run` runs.

use coord_tests::{Project, bin};

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
