//! File-scope reservations through the real `inbox` binary and daemon: conflicts, shared
//! reservations, owner-only release, stale detection and takeover with fencing
//! generations, racing reservers, "who holds this file?", and the git pre-commit guard.

use std::process::Command;

use coord_tests::{Project, fails, finish, ok};

fn reserve(agent: &str, scope: &str, extra: &[&str]) -> Vec<String> {
    let mut a: Vec<String> =
        ["reserve", "--agent", agent, "--scope", scope, "--task", "bb-1"].iter().map(|s| s.to_string()).collect();
    a.extend(extra.iter().map(|s| s.to_string()));
    a
}

fn args(v: &[String]) -> Vec<&str> {
    v.iter().map(String::as_str).collect()
}

#[test]
fn reserve_conflict_shared_release_and_argument_errors() {
    let p = Project::new();
    let _d = p.serve();
    let r = ok(&p, &args(&reserve("agent-a", "src/components/graph/*", &[])));
    let res = &r["reservation"];
    assert_eq!(res["scope"], "src/components/graph/*");
    assert_eq!(res["state"], "active");
    assert_eq!(res["shared"], false);
    assert_eq!(res["generation"], 1);
    assert_eq!(res["task_id"], "bb-1");

    // A file under the glob, a glob overlapping it, and the directory above all conflict.
    for scope in ["src/components/graph/edge.ts", "src/**/*.ts", "src/components"] {
        let e = fails(&p, &args(&reserve("agent-b", scope, &[])), 20, "reservation_conflict");
        assert_eq!(e["error"]["details"]["conflicts"][0]["agent_id"], "agent-a");
        assert!(e["error"]["message"].as_str().unwrap().contains("src/components/graph/*"));
    }
    // Disjoint scopes do not.
    ok(&p, &args(&reserve("agent-b", "src/components/table/*", &[])));
    fails(&p, &args(&reserve("agent-b", "src/components/graph/*.md", &["--shared"])), 20, "reservation_conflict");

    // Shared reservations coexist with each other, never with an exclusive one.
    ok(&p, &args(&reserve("agent-a", "docs/**", &["--shared"])));
    ok(&p, &args(&reserve("agent-b", "docs/api.md", &["--shared"])));
    fails(&p, &args(&reserve("agent-c", "docs/api.md", &[])), 20, "reservation_conflict");

    // Reserving one's own scope again extends it.
    let again = ok(&p, &args(&reserve("agent-a", "src/components/graph/*", &["--ttl", "600"])));
    assert_eq!(again["renewed"], true);
    assert_eq!(again["reservation"]["reservation_id"], res["reservation_id"]);
    assert!(again["reservation"]["expires_at"].as_str() > res["expires_at"].as_str());

    // Owner-only release; unknown scopes; argument errors.
    fails(&p, &["release", "--agent", "agent-b", "--scope", "src/components/graph/*"], 20, "release_forbidden");
    fails(&p, &["release", "--agent", "agent-a", "--scope", "nowhere/*"], 40, "reservation_not_found");
    let rel = ok(&p, &["release", "--agent", "agent-a", "--scope", "./src/components/graph/*"]);
    assert_eq!(rel["reservation"]["state"], "released");
    ok(&p, &args(&reserve("agent-b", "src/components/graph/edge.ts", &[])));
    for ttl in ["4", "1441", "0"] {
        fails(&p, &args(&reserve("agent-z", "z", &["--ttl", ttl])), 30, "invalid_args");
    }
    for scope in ["/etc/passwd", "../up", ""] {
        fails(&p, &args(&reserve("agent-z", scope, &[])), 30, "invalid_args");
    }
    fails(&p, &["reserve", "--agent", "agent-z", "--scope", "z"], 30, "invalid_args");
}

#[test]
fn who_holds_this_file_and_history() {
    let p = Project::new();
    let _d = p.serve();
    ok(&p, &args(&reserve("agent-a", "src/**/*.rs", &[])));
    ok(&p, &args(&reserve("agent-b", "docs", &[])));
    ok(&p, &args(&reserve("agent-c", "assets/*.png", &["--shared"])));
    let holders = |path: &str| -> Vec<String> {
        ok(&p, &["reservations", "--path", path])["reservations"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["agent_id"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(holders("src/deep/mod.rs"), ["agent-a"]);
    assert_eq!(holders("docs/guide/intro.md"), ["agent-b"]);
    assert_eq!(holders("assets/logo.png"), ["agent-c"]);
    assert!(holders("src/deep/mod.ts").is_empty());
    assert!(holders("README.md").is_empty());
    let by_agent = ok(&p, &["--agent", "agent-b", "reservations"]);
    assert_eq!(by_agent["reservations"].as_array().unwrap().len(), 1);
    ok(&p, &["release", "--agent", "agent-b", "--scope", "docs"]);
    assert!(holders("docs/a.md").is_empty());
    let history = ok(&p, &["reservations", "--all", "--task", "bb-1"]);
    let states: Vec<&str> =
        history["reservations"].as_array().unwrap().iter().map(|r| r["state"].as_str().unwrap()).collect();
    assert_eq!(states.len(), 3, "nothing is ever deleted: {states:?}");
    assert!(states.contains(&"released"));
}

#[test]
fn many_concurrent_reservers_of_one_scope_exactly_one_wins() {
    let p = Project::new();
    let _d = p.serve();
    let racers: Vec<_> = (0..16)
        .map(|i| {
            let a = reserve(&format!("agent-{i}"), if i % 2 == 0 { "src/lib.rs" } else { "src/*.rs" }, &[]);
            p.inbox().args(args(&a)).json_flag().spawn()
        })
        .collect();
    let outs: Vec<_> = racers.into_iter().map(finish).collect();
    let winners: Vec<_> = outs.iter().filter(|o| o.code == 0).collect();
    assert_eq!(winners.len(), 1, "exactly one exclusive winner: {outs:#?}");
    for o in outs.iter().filter(|o| o.code != 0) {
        assert_eq!(o.code, 20, "{o:?}");
        assert_eq!(o.json()["error"]["code"], "reservation_conflict");
    }
    let active = ok(&p, &["reservations"]);
    assert_eq!(active["reservations"].as_array().unwrap().len(), 1);
    assert_eq!(active["reservations"][0]["agent_id"], winners[0].json()["reservation"]["agent_id"]);
}

#[test]
fn stale_reservations_are_found_then_taken_over_with_a_higher_generation() {
    let p = Project::new();
    let d = p.serve();
    let first = ok(&p, &args(&reserve("agent-a", "src/**", &["--ttl", "5"])));
    assert_eq!(first["reservation"]["generation"], 1);
    ok(&p, &args(&reserve("agent-c", "lib/**", &["--ttl", "60"])));
    drop(d);
    // Ten minutes later (the daemon's clock runs ahead), the 5-minute reservation is stale.
    let _d = p.serve_ahead(600);
    let listed = ok(&p, &["reservations", "--path", "src/main.rs"]);
    assert_eq!(listed["reservations"][0]["stale"], true);
    let st = ok(&p, &["status"]);
    assert_eq!(st["counts"]["reservations_stale"], 1);
    assert_eq!(st["counts"]["reservations_active"], 1);

    let found = fails(&p, &args(&reserve("agent-b", "src/main.rs", &[])), 20, "reservation_stale_found");
    assert_eq!(found["error"]["details"]["stale"][0]["agent_id"], "agent-a");
    // A live conflict wins over a stale one.
    fails(&p, &args(&reserve("agent-b", "**", &["--takeover-stale"])), 20, "reservation_conflict");

    let took = ok(&p, &args(&reserve("agent-b", "src/**", &["--takeover-stale"])));
    assert_eq!(took["reservation"]["agent_id"], "agent-b");
    assert_eq!(took["reservation"]["generation"], 2, "takeover bumps the fencing generation");
    assert_eq!(took["taken_over"][0]["reservation_id"], first["reservation"]["reservation_id"]);
    assert_eq!(took["taken_over"][0]["state"], "expired");
    fails(&p, &["release", "--agent", "agent-a", "--scope", "src/**"], 20, "release_forbidden");
    let history = ok(&p, &["--agent", "agent-a", "reservations", "--all"]);
    assert_eq!(history["reservations"][0]["state"], "expired");
    let events = p.inbox().args(["watch", "--after-event", "0", "--follow", "--count", "4"]).json_flag().run().ok();
    let types: Vec<String> =
        events.json_lines().iter().map(|e| e["event"]["event_type"].as_str().unwrap().to_string()).collect();
    assert_eq!(types, ["reservation.created", "reservation.created", "reservation.expired", "reservation.created"]);
}

fn git(dir: &std::path::Path, args: &[&str], agent: Option<&str>) -> std::process::Output {
    let mut c = Command::new("git");
    c.current_dir(dir)
        .args(["-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "commit.gpgsign=false"])
        .args(args)
        .env_remove("COORD_DB")
        .env_remove("COORD_AGENT")
        .env("COORD_NO_AUTOSTART", "1");
    if let Some(a) = agent {
        c.env("COORD_AGENT", a);
    }
    c.output().expect("git")
}

#[test]
fn git_hook_refuses_commits_inside_another_agents_exclusive_reservation() {
    let p = Project::new();
    let _d = p.serve();
    let dir = p.path();
    assert!(git(dir, &["init", "-q", "."], None).status.success());
    // A hook that was there before keeps running, first.
    let hooks = dir.join(".git/hooks");
    std::fs::create_dir_all(&hooks).unwrap();
    std::fs::write(hooks.join("pre-commit"), "#!/bin/sh\necho previous-hook-ran >&2\n").unwrap();
    std::process::Command::new("chmod").args(["755"]).arg(hooks.join("pre-commit")).status().unwrap();
    let inst = ok(&p, &["hooks", "install-git"]);
    assert!(inst["chained"].as_str().unwrap().ends_with("pre-commit.local"));
    ok(&p, &["hooks", "install-git"]); // idempotent

    ok(&p, &args(&reserve("agent-a", "src/**", &[])));
    ok(&p, &args(&reserve("agent-c", "shared/*", &["--shared"])));
    std::fs::create_dir_all(dir.join("src")).unwrap();
    std::fs::create_dir_all(dir.join("shared")).unwrap();
    p.write("src/main.rs", "fn main() {}\n");
    p.write("shared/notes.md", "notes\n");
    p.write("README.md", "readme\n");
    assert!(git(dir, &["add", "."], None).status.success());

    let refused = git(dir, &["commit", "-qm", "touches src"], Some("agent-b"));
    assert!(!refused.status.success());
    let err = String::from_utf8_lossy(&refused.stderr);
    assert!(err.contains("previous-hook-ran"), "{err}");
    assert!(err.contains("src/main.rs is reserved by agent-a (scope 'src/**'"), "{err}");
    assert!(!err.contains("shared/notes.md"), "shared reservations do not block commits: {err}");
    // Without COORD_AGENT every holder is someone else.
    assert!(!git(dir, &["commit", "-qm", "anon"], None).status.success());
    // The holder may commit.
    let own = git(dir, &["commit", "-qm", "by the holder"], Some("agent-a"));
    assert!(own.status.success(), "{}", String::from_utf8_lossy(&own.stderr));
    // Files outside any exclusive reservation are fine for anyone.
    p.write("README.md", "changed\n");
    assert!(git(dir, &["add", "README.md"], None).status.success());
    assert!(git(dir, &["commit", "-qm", "readme"], Some("agent-b")).status.success());
    // After release, agent-b may touch src too.
    ok(&p, &["release", "--agent", "agent-a", "--scope", "src/**"]);
    p.write("src/main.rs", "fn main() { println!(); }\n");
    assert!(git(dir, &["add", "src/main.rs"], None).status.success());
    assert!(git(dir, &["commit", "-qm", "after release"], Some("agent-b")).status.success());
}
