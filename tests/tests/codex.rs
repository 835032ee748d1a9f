//! Codex as a worker: the real `codex` CLI, run headless against the scripted model
//! (`coord_tests::mock_model`), in a project where `inbox hook install` wrote its files.

use coord_tests::mock_model::openai::{CodexExec, OpenAi, tool_outputs};
use coord_tests::mock_model::{MockModel, Scenario, Turn, shell, text};
use coord_tests::*;

/// The scripted model itself: Codex runs the shell command the model asks for, and the
/// next request carries its output back.
#[test]
fn the_scripted_model_drives_codex() {
    let Some(codex) = agent_cli("codex") else { return };
    let p = Project::new();
    let mock = MockModel::start(
        OpenAi,
        Scenario::new(vec![Turn::reply(vec![shell("echo from-the-shell")]), Turn::reply(vec![text("Done.")])]),
    );
    let run =
        CodexExec::new(&codex, p.path(), &mock).args(&["--dangerously-bypass-approvals-and-sandbox"]).run("do it");
    assert_eq!(run.status, Some(0), "{}", run.describe());
    let turns = mock.turn_requests();
    assert_eq!(turns.len(), 2, "{}", mock.transcript());
    assert!(tool_outputs(&turns[1].body).iter().any(|o| o.contains("from-the-shell")), "{}", mock.transcript());
}
