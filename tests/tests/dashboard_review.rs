//! The dashboard's review of a task's diff (issue 36), in a real headless Chromium: a
//! comment on a line of the diff, sent with "Request changes", reaches the worker with its
//! `file:line` anchor; the diff reads on a 390 px phone and a 1400 px window. With
//! `COORD_DOC_SCREENSHOTS=DIR` it also saves the screenshots of docs/dashboard.md there.
//! Skips (saying so) without Chromium, but fails under `COORD_CI`.

use std::path::PathBuf;

use coord_tests::browser::Browser;
use coord_tests::*;
use serde_json::Value;

fn orch(p: &Project, args: &[&str]) -> Value {
    p.orch().json_flag().args(args).run().ok().json()
}

/// A run that requires approval, whose task T1 (w1's) is done with `files` committed.
fn done_task(files: &[(&str, &str)]) -> Project {
    let p = git_project();
    orch(&p, &["run", "create", "--goal", "Blog MVP", "--id", "R1", "--require-approval"]);
    orch(&p, &["task", "add", "--run", "R1", "--id", "T1", "--title", "Post CRUD", "--assign-to", "w1"]);
    let d = orch(&p, &["dispatch", "--run", "R1", "--task", "T1"]);
    let (wt, thread) = (
        PathBuf::from(d["dispatches"][0]["worktree_path"].as_str().unwrap()),
        d["dispatches"][0]["thread_id"].as_str().unwrap().to_string(),
    );
    p.inbox().args(["claim", "--agent", "w1", "--thread", &thread]).run().ok();
    for (f, text) in files {
        std::fs::write(wt.join(f), text).unwrap();
    }
    git_in(&wt, &["add", "-A"]);
    git_in(&wt, &["-c", "user.email=w@e", "-c", "user.name=w", "commit", "-q", "-m", "posts"]);
    p.inbox().args(["done", "--agent", "w1", "--thread", &thread, "--summary", "posts done"]).run().ok();
    p
}

const LINE: &str = ".review .diff-line[data-path=\"posts.rs\"][data-new=\"2\"]";

#[test]
fn a_comment_on_a_diff_line_reaches_the_worker_with_its_anchor() {
    let Some(mut b) = Browser::launch() else { return };
    let p = done_task(&[("posts.rs", "fn list() {}\nfn create() { todo!() }\n")]);
    b.open_dashboard(&format!("{}#runs/R1/T1", dashboard_url(&p)));
    b.wait_for(&format!("document.querySelector('{LINE}')"), "the diff's line 2");
    b.eval(&format!("document.querySelector('{LINE} button.ln').click()"));
    b.type_enter(".review textarea.comment-body", "create must not panic");
    b.wait_for(
        "document.querySelector('.review .comment')?.textContent.includes('create must not panic')",
        "the comment under its line",
    );
    // In one script: a redraw of the view between typing and clicking would drop the text.
    b.eval(
        "document.querySelector('.review input.summary').value = 'one fix'; \
         document.querySelector('.review button.request-changes').click()",
    );
    b.wait_for(
        "document.querySelector('.review .review-status')?.textContent.includes('sent back to w1 as attempt 2')",
        "the task sent back to its worker",
    );
    // The worker gets it: its new attempt's thread, in its inbox, with the anchor.
    let fetched = p.inbox().json_flag().args(["fetch", "--agent", "w1"]).run().ok().json();
    let thread = fetched["threads"][0]["thread_id"].as_str().unwrap_or_else(|| panic!("{fetched}")).to_string();
    let shown = p.inbox().json_flag().args(["show", "--thread", &thread]).run().ok().json();
    let body = shown["messages"][0]["body"].as_str().unwrap();
    assert!(body.contains("- posts.rs:2: create must not panic"), "{body}");
    assert!(body.contains("requested changes: one fix"), "{body}");
    assert_eq!(shown["messages"][0]["from_agent"], "leader");
}

#[test]
fn the_review_reads_on_a_phone_and_a_laptop_window() {
    let Some(mut b) = Browser::launch() else { return };
    let long = format!("fn create() {{ let message = \"{}\"; }}\n", "a long string literal ".repeat(12));
    let p = done_task(&[("posts.rs", &format!("fn list() {{}}\n{long}")), ("README.md", "hello\nposts\n")]);
    orch(
        &p,
        &[
            "review",
            "comment",
            "--run",
            "R1",
            "--task",
            "T1",
            "--file",
            "posts.rs",
            "--line",
            "2",
            "--body",
            "split this line",
        ],
    );
    let shots = std::env::var_os("COORD_DOC_SCREENSHOTS").map(PathBuf::from);
    b.open_dashboard(&format!("{}#runs/R1/T1", dashboard_url(&p)));
    for (w, h, name) in [(1400, 900, "dashboard-review.png"), (390, 844, "dashboard-phone-review.png")] {
        b.viewport(w, h);
        b.wait_for(
            &format!("document.querySelector('{LINE}') && document.querySelector('.review .comment')"),
            "the diff",
        );
        let (over, worst) = b.overflow();
        assert!(over <= 0, "the review at {w}px is {over}px wider than the window: {worst}");
        if let Some(dir) = &shots {
            b.eval("document.querySelector('.review').scrollIntoView()");
            b.screenshot(&dir.join(name));
        }
    }
}
