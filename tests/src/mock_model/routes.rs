//! Several sessions on one mock: routes and reactions.
//!
//! A team run (an AI lead and its workers) sends every session's requests to the same mock.
//! A [`Route`] tells them apart by a needle their requests hold (the prompt's words: `the
//! lead of run R1`, `Your task is T1:`), and each route plays its own [`Scenario`], with
//! its own turn count and its own `before` commands.
//!
//! A lead reacts to what is pushed into its session rather than to a fixed order, so a
//! scenario can end in [`Reaction`]s: once its scripted turns are spent, each request is
//! answered by the reactions whose needle is in a user text of its conversation (the
//! prompt, a pushed turn, a message injected beside a tool result), each at most once, all
//! their blocks in one reply; with none, a text reply ends the turn and the session waits
//! for its next input. No reaction waits on anything: the session only acts on what
//! reached it.

use std::collections::{HashMap, HashSet};
use std::sync::Mutex;

use serde_json::Value;

use super::{Block, Scenario, text};

/// A reply given once a user text of the conversation holds `when`.
#[derive(Debug, Clone)]
pub struct Reaction {
    pub when: String,
    /// Where the word to put for `{captured}` starts: the word after this prefix in the
    /// matching text (up to a space or a comma).
    pub capture: Option<String>,
    pub reply: Vec<Block>,
}

/// React to `when` with `reply`.
pub fn on(when: &str, reply: Vec<Block>) -> Reaction {
    Reaction { when: when.to_string(), capture: None, reply }
}

impl Reaction {
    /// Put the word after `prefix` in the matching text for each `{captured}` in the
    /// reply's tool inputs (an id the pushed turn names, as a model would copy it).
    pub fn capture(mut self, prefix: &str) -> Reaction {
        self.capture = Some(prefix.to_string());
        self
    }

    /// The reply for `texts` (the conversation's user texts), if one holds `when`.
    fn fire(&self, texts: &[String]) -> Option<Vec<Block>> {
        let hit = texts.iter().rev().find(|t| t.contains(&self.when))?;
        let Some(prefix) = &self.capture else { return Some(self.reply.clone()) };
        let from = &hit[hit.find(prefix.as_str())? + prefix.len()..];
        let word: String = from.chars().take_while(|c| !c.is_whitespace() && *c != ',').collect();
        Some(self.reply.iter().map(|b| put(b, &word)).collect())
    }
}

/// `b` with `{captured}` replaced by `word` in its tool input's strings.
fn put(b: &Block, word: &str) -> Block {
    fn walk(v: &Value, word: &str) -> Value {
        match v {
            Value::String(s) => Value::String(s.replace("{captured}", word)),
            Value::Array(a) => Value::Array(a.iter().map(|v| walk(v, word)).collect()),
            Value::Object(o) => Value::Object(o.iter().map(|(k, v)| (k.clone(), walk(v, word))).collect()),
            v => v.clone(),
        }
    }
    match b {
        Block::Tool { name, input } => Block::Tool { name: name.clone(), input: walk(input, word) },
        b => b.clone(),
    }
}

/// One session's script on a shared mock: the requests whose body holds `needle` (every
/// request, when it is empty).
pub struct Route {
    pub needle: String,
    pub scenario: Scenario,
    /// Turns whose `before` commands have run.
    pub(super) started: Mutex<HashSet<usize>>,
    reacted: Mutex<Reacted>,
}

#[derive(Default)]
struct Reacted {
    /// The reactions that fired.
    fired: HashSet<usize>,
    /// The reply given for each reactive turn (a retried request gets it again).
    replies: HashMap<usize, Vec<Block>>,
}

impl Route {
    pub fn new(needle: &str, scenario: Scenario) -> Route {
        Route { needle: needle.to_string(), scenario, started: Mutex::default(), reacted: Mutex::default() }
    }

    /// Whether a request's raw body belongs to this route.
    pub(super) fn holds(&self, raw: &[u8]) -> bool {
        self.needle.is_empty() || raw.windows(self.needle.len()).any(|w| w == self.needle.as_bytes())
    }

    /// The reply for `turn` past the scripted turns, from the conversation's user texts;
    /// `None` when the scenario has no reactions.
    pub(super) fn react(&self, turn: usize, texts: &[String]) -> Option<Vec<Block>> {
        if self.scenario.reactions.is_empty() {
            return None;
        }
        let mut r = self.reacted.lock().unwrap();
        if let Some(b) = r.replies.get(&turn) {
            return Some(b.clone());
        }
        let mut blocks = Vec::new();
        for (i, reaction) in self.scenario.reactions.iter().enumerate() {
            if r.fired.contains(&i) {
                continue;
            }
            if let Some(b) = reaction.fire(texts) {
                r.fired.insert(i);
                blocks.extend(b);
            }
        }
        if blocks.is_empty() {
            blocks.push(text("Waiting for what comes next."));
        }
        r.replies.insert(turn, blocks.clone());
        Some(blocks)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mock_model::tool;
    use serde_json::json;

    #[test]
    fn a_reaction_fires_once_with_the_word_it_captures_and_a_retry_gets_the_same_reply() {
        let respond = on("permission_request", vec![tool("respond", json!({"request_id": "{captured}"}))]);
        let r = Route::new("lead", Scenario::new(vec![]).on(respond.capture("request_id ")));
        let texts = vec!["[attention] permission_request T1\n  request_id perm-7, payload {}".to_string()];
        let want = vec![tool("respond", json!({"request_id": "perm-7"}))];
        assert_eq!(r.react(3, &texts), Some(want.clone()));
        assert_eq!(r.react(3, &texts), Some(want), "a retried request");
        assert_eq!(r.react(4, &texts), Some(vec![text("Waiting for what comes next.")]), "fired once");
    }
}
