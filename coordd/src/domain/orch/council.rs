//! Council review: a structured review by (by default) three reviewers, in two phases,
//! both carried by inbox threads.
//!
//! 1. Brainstorm: each reviewer gets the topic and finishes its thread with
//!    `{"recommendations":[{"title":..,"detail":..,"group":..?}]}`.
//! 2. Vote: once every reviewer answered, recommendations are grouped (explicit `group`
//!    key, else the normalised title) and each reviewer gets a vote thread listing the
//!    groups; it finishes with `{"votes":{"G1":"approve"|"reject"|"abstain"}}`.
//!
//! The phase changes in [`on_thread`], inside the inbox change that finished the last
//! thread; it says which vote threads to open and `ops` opens them. A reviewer whose
//! thread fails or is cancelled counts as having answered nothing (missing votes count as
//! abstentions), so one absent reviewer cannot stall the council.

use std::collections::HashMap;

use coord_proto::types::*;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::model::*;
use crate::bound;
use crate::domain::check;
use crate::error::{Error, Result};
use crate::store::Tx;
use crate::store::repos::{CouncilRow, MemberRow};
use crate::time::Ts;

/// A group as stored (votes are tallied when shown).
#[derive(Debug, Clone, Serialize, Deserialize)]
struct StoredGroup {
    group_id: String,
    key: String,
    title: String,
    details: Vec<ProposalDetail>,
    proposed_by: Vec<String>,
}

/// Lowercase, punctuation to spaces, whitespace collapsed: "Add  Rate-limiting!" and
/// "add rate limiting" are the same recommendation.
pub fn normalize(title: &str) -> String {
    let cleaned: String =
        title.chars().map(|c| if c.is_alphanumeric() { c.to_ascii_lowercase() } else { ' ' }).collect();
    cleaned.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The thread that asks one reviewer for something.
fn ask(run: &Run, council_id: &str, reviewer: &str, summary: String, body: String, payload: Value) -> SendParams {
    SendParams {
        from: run.created_by.clone(),
        to: reviewer.to_string(),
        subject: Some(check::subject_from(&format!("[{}/{council_id}] ", run.run_id), &summary)),
        run_id: Some(run.run_id.clone()),
        task_id: Some(council_id.to_string()),
        kind: Some(MessageKind::Task),
        message: MessageInput { summary, body: Some(body), payload_json: Some(payload), artifacts: vec![] },
        ..Default::default()
    }
}

/// A council being started: its threads are opened by `ops`, then [`started`] records them.
pub struct Starting {
    pub run: Run,
    pub council_id: String,
    pub reviewers: Vec<String>,
    /// One brainstorm thread per reviewer, in order.
    pub threads: Vec<SendParams>,
}

/// `orch.councilStart`, first half: check, insert the council, say which threads to open.
pub fn start(tx: &mut dyn Tx, now: Ts, p: CouncilStartParams) -> Result<Starting> {
    check::text("topic", &p.topic)?;
    let run = open_run(tx, &p.run_id)?;
    let mut reviewers: Vec<String> =
        p.reviewers.iter().map(|r| r.trim().to_string()).filter(|r| !r.is_empty()).collect();
    if reviewers.is_empty() {
        reviewers = (1..=3).map(|i| format!("reviewer-{i}")).collect();
    }
    if reviewers.len() > MAX_REVIEWERS {
        return Err(Error::invalid(format!("at most {MAX_REVIEWERS} reviewers, got {}", reviewers.len())));
    }
    for r in &reviewers {
        check::agent("reviewer", r)?;
    }
    let mut unique = reviewers.clone();
    unique.sort();
    unique.dedup();
    if unique.len() != reviewers.len() {
        return Err(Error::invalid("reviewers must be distinct"));
    }
    let council_id = format!("C{}", tx.councils().councils_count(&p.run_id)? + 1);
    let body = p.body.unwrap_or_default();
    tx.councils_mut().council_insert(&CouncilRow {
        run_id: p.run_id.clone(),
        council_id: council_id.clone(),
        topic: p.topic.clone(),
        body: body.clone(),
        phase: CouncilPhase::Brainstorm,
        groups_json: "[]".into(),
        created_at: now.to_string(),
        updated_at: now.to_string(),
    })?;
    let threads = reviewers
        .iter()
        .map(|reviewer| {
            let payload = json!({
                "council_id": council_id,
                "phase": "brainstorm",
                "topic": p.topic,
                "reviewers": reviewers,
                "respond_with": {"recommendations": [{"title": "short title", "detail": "what and why", "group": "optional grouping key"}]},
            });
            let text = format!(
                "{body}\n\nFinish this thread with `inbox done --payload-json` holding \
                 {{\"recommendations\":[{{\"title\":...,\"detail\":...}}]}}."
            );
            ask(&run, &council_id, reviewer, format!("Council brainstorm: {}", p.topic), text, payload)
        })
        .collect();
    Ok(Starting { run, council_id, reviewers, threads })
}

/// `orch.councilStart`, second half: record the members with their brainstorm threads.
pub fn started(tx: &mut dyn Tx, now: Ts, s: Starting, thread_ids: Vec<String>) -> Result<Council> {
    for (i, (reviewer, thread)) in s.reviewers.iter().zip(thread_ids).enumerate() {
        tx.councils_mut().member_insert(&MemberRow {
            run_id: s.run.run_id.clone(),
            council_id: s.council_id.clone(),
            reviewer: reviewer.clone(),
            ord: i as i64,
            brainstorm_thread_id: thread,
            brainstorm_json: None,
            vote_thread_id: None,
            vote_json: None,
        })?;
    }
    let council = tx
        .councils()
        .council(&s.run.run_id, &s.council_id)?
        .ok_or_else(|| Error::Internal("council vanished".into()))?;
    let summary = format!("council {} started: {}", s.council_id, council.topic);
    let payload = json!({"council_id": s.council_id, "reviewers": s.reviewers});
    let id = run_event(tx, EventType::CouncilStarted, &s.run, (&s.run.created_by, &summary, &payload), now)?;
    let mut c = show(tx, &s.run.run_id, &s.council_id)?;
    c.event_id = id;
    Ok(c)
}

/// Cancel the unfinished councils of a run (with the run): phase `cancelled` first, so
/// cancelling their threads does not open a vote. Returns their threads, for `ops` to
/// cancel the open ones.
pub fn cancel_open(tx: &mut dyn Tx, now: Ts, run_id: &str) -> Result<Vec<String>> {
    let mut threads = Vec::new();
    for mut c in tx.councils().councils_open(run_id)? {
        for m in tx.councils().members(run_id, &c.council_id)? {
            threads.push(m.brainstorm_thread_id);
            threads.extend(m.vote_thread_id);
        }
        c.phase = CouncilPhase::Cancelled;
        c.updated_at = now.to_string();
        tx.councils_mut().council_save(&c)?;
    }
    Ok(threads)
}

/// The payload of the message that finished a thread, if it finished with `done`.
fn final_payload(tx: &dyn Tx, thread: &Thread) -> Result<Value> {
    if thread.status != ThreadStatus::Done {
        return Ok(Value::Null);
    }
    let Some(mid) = &thread.latest_message_id else { return Ok(Value::Null) };
    Ok(tx.messages().message(mid)?.map(|m| m.payload_json).unwrap_or(Value::Null))
}

/// The choices of a vote.
pub const CHOICES: [&str; 3] = ["approve", "reject", "abstain"];

/// A finished vote must be `{"votes": {GROUP: approve|reject|abstain}}` over the council's
/// groups (a group left out abstains). Anything else refuses the reviewer's `done`, so a
/// typo is not silently counted as an abstention.
fn check_votes(tx: &dyn Tx, member: &MemberRow, payload: &Value) -> Result<()> {
    let Some(council) = tx.councils().council(&member.run_id, &member.council_id)? else { return Ok(()) };
    let groups: Vec<StoredGroup> = serde_json::from_str(&council.groups_json).unwrap_or_default();
    let usage = "finish the vote with a payload like {\"votes\":{\"G1\":\"approve\"}}";
    let votes = payload
        .get("votes")
        .and_then(Value::as_object)
        .ok_or_else(|| Error::invalid(format!("a council vote needs a \"votes\" object: {usage}")))?;
    for (group, choice) in votes {
        if !groups.iter().any(|g| &g.group_id == group) {
            let known: Vec<&str> = groups.iter().map(|g| g.group_id.as_str()).collect();
            return Err(Error::invalid(format!(
                "council {} has no group '{group}' (its groups: {})",
                member.council_id,
                known.join(", ")
            )));
        }
        if !choice.as_str().is_some_and(|c| CHOICES.contains(&c)) {
            return Err(Error::invalid(format!(
                "vote {choice} for {group} is not one of: {} (lowercase)",
                CHOICES.join(", ")
            )));
        }
    }
    Ok(())
}

/// `orch.councilList`: a run's councils, oldest first.
pub fn list(tx: &dyn Tx, p: &RunPageParams) -> Result<CouncilsResult> {
    load_run(tx, &p.run_id)?;
    let stored = bound::after_key(tx.councils().councils_of(&p.run_id)?, p.after.as_deref(), |c| &c.council_id)?;
    let councils = stored.iter().map(|c| show(tx, &p.run_id, &c.council_id)).collect::<Result<Vec<_>>>()?;
    let page = bound::page(councils, |c: &Council| c.council_id.clone());
    Ok(CouncilsResult { councils: page.items, truncated: page.truncated, next_after: page.next_after })
}

/// The vote to open once every reviewer brainstormed: one thread per reviewer.
pub struct VoteOpening {
    run: Run,
    council_id: String,
    groups: Vec<StoredGroup>,
    reviewers: Vec<String>,
    pub threads: Vec<SendParams>,
}

/// Reconcile for a council thread: record what a finished thread answered; when the last
/// brainstorm finished, say which vote threads to open; when the last vote finished, the
/// council is done.
pub fn on_thread(tx: &mut dyn Tx, now: Ts, thread: &Thread, actor: &str) -> Result<Option<VoteOpening>> {
    if !thread.status.is_terminal() {
        return Ok(None);
    }
    let Some(mut member) = tx.councils().member_by_thread(&thread.thread_id)? else { return Ok(None) };
    let brainstorm = member.brainstorm_thread_id == thread.thread_id;
    let answer = final_payload(tx, thread)?;
    if !brainstorm && thread.status == ThreadStatus::Done {
        check_votes(tx, &member, &answer)?;
    }
    let payload = Some(answer.to_string());
    if brainstorm {
        member.brainstorm_json = payload;
    } else {
        member.vote_json = payload;
    }
    tx.councils_mut().member_save(&member)?;
    let (run_id, council_id) = (member.run_id, member.council_id);
    let Some(mut council) = tx.councils().council(&run_id, &council_id)? else { return Ok(None) };
    let members = tx.councils().members(&run_id, &council_id)?;
    let waiting = members.iter().any(|m| if brainstorm { m.brainstorm_json.is_none() } else { m.vote_json.is_none() });
    if waiting {
        return Ok(None);
    }
    let run = load_run(tx, &run_id)?;
    if brainstorm && council.phase == CouncilPhase::Brainstorm {
        return Ok(Some(vote(&run, &council, &members)));
    }
    if !brainstorm && council.phase == CouncilPhase::Voting {
        council.phase = CouncilPhase::Done;
        council.updated_at = now.to_string();
        tx.councils_mut().council_save(&council)?;
        let summary = format!("council {council_id} voted");
        run_event(tx, EventType::CouncilDone, &run, (actor, &summary, &json!({"council_id": council_id})), now)?;
    }
    Ok(None)
}

/// Most recommendations taken from one reviewer; titles and details are cut to these sizes.
const MAX_RECOMMENDATIONS: usize = 200;
const MAX_TITLE: usize = 200;
const MAX_DETAIL: usize = 4000;

/// Parse the recommendations a reviewer sent (malformed entries are skipped; at most
/// [`MAX_RECOMMENDATIONS`], since grouping runs on the writer).
fn recommendations(payload: &Value) -> Vec<(String, String, Option<String>)> {
    let cut = |s: &str, n: usize| s.chars().take(n).collect::<String>();
    let Some(list) = payload["recommendations"].as_array() else { return vec![] };
    list.iter()
        .take(MAX_RECOMMENDATIONS)
        .filter_map(|r| {
            let title = cut(r["title"].as_str()?.trim(), MAX_TITLE);
            if title.is_empty() {
                return None;
            }
            let detail = cut(r["detail"].as_str().unwrap_or_default(), MAX_DETAIL);
            let group = r["group"].as_str().map(str::trim).filter(|g| !g.is_empty()).map(|g| cut(g, MAX_TITLE));
            Some((title, detail, group))
        })
        .collect()
}

/// Group the brainstormed recommendations and prepare one vote thread per reviewer.
fn vote(run: &Run, council: &CouncilRow, members: &[MemberRow]) -> VoteOpening {
    let mut groups: Vec<StoredGroup> = Vec::new();
    let mut by_key: HashMap<String, usize> = HashMap::new();
    for m in members {
        let payload: Value =
            m.brainstorm_json.as_deref().and_then(|j| serde_json::from_str(j).ok()).unwrap_or_default();
        for (title, detail, group) in recommendations(&payload) {
            let key = group.map(|g| format!("group:{}", normalize(&g))).unwrap_or_else(|| normalize(&title));
            let entry = ProposalDetail { reviewer: m.reviewer.clone(), title: title.clone(), detail };
            match by_key.get(&key) {
                Some(&i) => {
                    let g = &mut groups[i];
                    g.details.push(entry);
                    if g.proposed_by.last() != Some(&m.reviewer) {
                        g.proposed_by.push(m.reviewer.clone());
                    }
                }
                None => {
                    by_key.insert(key.clone(), groups.len());
                    groups.push(StoredGroup {
                        group_id: format!("G{}", groups.len() + 1),
                        key,
                        title,
                        details: vec![entry],
                        proposed_by: vec![m.reviewer.clone()],
                    });
                }
            }
        }
    }
    let listing: Vec<Value> = groups
        .iter()
        .map(|g| json!({"group_id": g.group_id, "title": g.title, "proposed_by": g.proposed_by, "details": g.details}))
        .collect();
    let mut text = String::from("Vote on each group: approve, reject or abstain.\n");
    for g in &groups {
        text.push_str(&format!("\n{}: {} (proposed by {})", g.group_id, g.title, g.proposed_by.join(", ")));
    }
    text.push_str("\n\nFinish this thread with `inbox done --payload-json '{\"votes\":{\"G1\":\"approve\"}}'`.");
    let topic = &council.topic;
    let threads = members
        .iter()
        .map(|m| {
            let payload = json!({
                "council_id": council.council_id,
                "phase": "vote",
                "topic": topic,
                "groups": listing,
                "respond_with": {"votes": {"G1": "approve | reject | abstain"}},
            });
            ask(run, &council.council_id, &m.reviewer, format!("Council vote: {topic}"), text.clone(), payload)
        })
        .collect();
    VoteOpening {
        run: run.clone(),
        council_id: council.council_id.clone(),
        groups,
        reviewers: members.iter().map(|m| m.reviewer.clone()).collect(),
        threads,
    }
}

/// The vote threads are open: record them, and the council is voting.
pub fn voting(tx: &mut dyn Tx, now: Ts, v: VoteOpening, thread_ids: Vec<String>, actor: &str) -> Result<()> {
    let (run_id, council_id) = (&v.run.run_id, &v.council_id);
    let mut members = tx.councils().members(run_id, council_id)?;
    for (reviewer, thread) in v.reviewers.iter().zip(thread_ids) {
        if let Some(m) = members.iter_mut().find(|m| m.reviewer == *reviewer) {
            m.vote_thread_id = Some(thread);
            tx.councils_mut().member_save(m)?;
        }
    }
    let mut council =
        tx.councils().council(run_id, council_id)?.ok_or_else(|| Error::Internal("council vanished".into()))?;
    council.phase = CouncilPhase::Voting;
    council.groups_json = serde_json::to_string(&v.groups).map_err(|e| Error::Internal(e.to_string()))?;
    council.updated_at = now.to_string();
    tx.councils_mut().council_save(&council)?;
    let summary = format!("council {council_id}: {} group(s) to vote on", v.groups.len());
    let payload = json!({"council_id": council_id, "groups": v.groups.len()});
    run_event(tx, EventType::CouncilVoting, &v.run, (actor, &summary, &payload), now)?;
    Ok(())
}

/// `orch.councilShow`: members, groups and tallies.
pub fn show(tx: &dyn Tx, run_id: &str, council_id: &str) -> Result<Council> {
    let c = tx
        .councils()
        .council(run_id, council_id)?
        .ok_or_else(|| Error::not_found(format!("council '{council_id}' not found in run '{run_id}'")))?;
    let stored: Vec<StoredGroup> = serde_json::from_str(&c.groups_json).map_err(|e| Error::Internal(e.to_string()))?;
    let rows = tx.councils().members(run_id, council_id)?;
    let votes: Vec<Value> = rows
        .iter()
        .map(|m| m.vote_json.as_deref().and_then(|j| serde_json::from_str(j).ok()).unwrap_or_default())
        .collect();
    let members: Vec<CouncilMember> = rows
        .into_iter()
        .map(|m| CouncilMember {
            reviewer: m.reviewer,
            brainstorm_thread_id: m.brainstorm_thread_id,
            brainstorm_done: m.brainstorm_json.is_some(),
            vote_done: m.vote_json.is_some(),
            vote_thread_id: m.vote_thread_id,
        })
        .collect();
    let n = members.len() as u32;
    let voted = members.iter().filter(|m| m.vote_done).count() as u32;
    let groups = stored
        .into_iter()
        .map(|g| {
            let count =
                |choice: &str| votes.iter().filter(|v| v["votes"][&g.group_id].as_str() == Some(choice)).count();
            let (approve, reject) = (count("approve") as u32, count("reject") as u32);
            let verdict = if approve * 2 > n {
                "approved"
            } else if reject * 2 > n {
                "rejected"
            } else {
                "no_majority"
            };
            CouncilGroup {
                group_id: g.group_id,
                title: g.title,
                details: g.details,
                proposed_by: g.proposed_by,
                approve,
                reject,
                abstain: voted.saturating_sub(approve + reject),
                verdict: verdict.into(),
            }
        })
        .collect();
    Ok(Council {
        run_id: run_id.to_string(),
        council_id: council_id.to_string(),
        topic: c.topic,
        body: c.body,
        phase: c.phase,
        members,
        groups,
        created_at: c.created_at,
        event_id: 0,
        truncated: false,
        next_after: None,
    })
}

/// Most reviewers a council may have: its members then always fit beside its groups in a
/// reply (protocol §1.7), which pages only the groups.
pub const MAX_REVIEWERS: usize = 100;

/// `orch.councilShow`: the council, its groups after `after_group` within what is left of
/// the reply's bound beside the rest (members, topic, body).
pub fn show_page(tx: &dyn Tx, p: &CouncilRef) -> Result<Council> {
    let mut c = show(tx, &p.run_id, &p.council_id)?;
    let groups = bound::after_key(std::mem::take(&mut c.groups), p.after_group.as_deref(), |g| &g.group_id)?;
    let page = bound::page_within(groups, bound::budget_beside(&c), |g: &CouncilGroup| g.group_id.clone());
    (c.groups, c.truncated, c.next_after) = (page.items, page.truncated, page.next_after);
    Ok(c)
}
