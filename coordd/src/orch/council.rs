//! Council review: a structured review by (by default) three reviewers, in two phases,
//! both carried by inbox threads.
//!
//! 1. Brainstorm: each reviewer gets the topic and finishes its thread with
//!    `{"recommendations":[{"title":..,"detail":..,"group":..?}]}`.
//! 2. Vote: once every reviewer answered, recommendations are grouped (explicit `group`
//!    key, else the normalised title) and each reviewer gets a vote thread listing the
//!    groups; it finishes with `{"votes":{"G1":"approve"|"reject"|"abstain"}}`.
//!
//! Phase changes happen in [`on_thread`], inside the inbox write that finished the last
//! thread. A reviewer whose thread fails or is cancelled counts as having answered nothing
//! (missing votes count as abstentions), so one absent reviewer cannot stall the council.

use coord_proto::ErrorCode;
use coord_proto::types::*;
use rusqlite::{Connection, OptionalExtension};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::*;
use crate::db::WriteCtx;
use crate::error::{Error, Result};
use crate::inbox;
use crate::util;

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

fn open_thread_for(
    ctx: &mut WriteCtx<'_>,
    run: &Run,
    council_id: &str,
    reviewer: &str,
    summary: String,
    body: String,
    payload: Value,
) -> Result<String> {
    let sent = inbox::write::send(
        ctx,
        SendParams {
            from: run.created_by.clone(),
            to: reviewer.to_string(),
            subject: Some(inbox::subject_from(&format!("[{}/{council_id}] ", run.run_id), &summary)),
            run_id: Some(run.run_id.clone()),
            task_id: Some(council_id.to_string()),
            kind: Some(MessageKind::Task),
            message: MessageInput { summary, body: Some(body), payload_json: Some(payload), artifacts: vec![] },
            ..Default::default()
        },
    )?;
    Ok(sent.thread.thread_id)
}

/// `orch.councilStart`.
pub fn start(ctx: &mut WriteCtx<'_>, p: CouncilStartParams) -> Result<Council> {
    inbox::check_text("topic", &p.topic)?;
    let run = load_run(ctx.conn, &p.run_id)?;
    if run.status == RunStatus::Cancelled {
        return Err(Error::app(ErrorCode::InvalidTransition, format!("run '{}' is cancelled", run.run_id)));
    }
    let mut reviewers: Vec<String> =
        p.reviewers.iter().map(|r| r.trim().to_string()).filter(|r| !r.is_empty()).collect();
    if reviewers.is_empty() {
        reviewers = (1..=3).map(|i| format!("reviewer-{i}")).collect();
    }
    for r in &reviewers {
        inbox::check_agent("reviewer", r)?;
    }
    let mut unique = reviewers.clone();
    unique.sort();
    unique.dedup();
    if unique.len() != reviewers.len() {
        return Err(Error::invalid("reviewers must be distinct"));
    }
    let n: i64 = ctx.conn.query_row("SELECT COUNT(*) FROM councils WHERE run_id = ?1", [&p.run_id], |r| r.get(0))?;
    let council_id = format!("C{}", n + 1);
    let now = util::ts(util::now());
    let body = p.body.clone().unwrap_or_default();
    ctx.conn
        .prepare_cached(
            "INSERT INTO councils (run_id, council_id, topic, body, phase, created_at, updated_at) \
             VALUES (?1, ?2, ?3, ?4, 'brainstorm', ?5, ?5)",
        )?
        .execute(rusqlite::params![p.run_id, council_id, p.topic, body, now])?;
    for (i, reviewer) in reviewers.iter().enumerate() {
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
        let thread = open_thread_for(
            ctx,
            &run,
            &council_id,
            reviewer,
            format!("Council brainstorm: {}", p.topic),
            text,
            payload,
        )?;
        ctx.conn
            .prepare_cached(
                "INSERT INTO council_members (run_id, council_id, reviewer, ord, brainstorm_thread_id) VALUES (?1, ?2, ?3, ?4, ?5)",
            )?
            .execute(rusqlite::params![p.run_id, council_id, reviewer, i as i64, thread])?;
    }
    let summary = format!("council {council_id} started: {}", p.topic);
    let id = run_event(
        ctx,
        EventType::CouncilStarted,
        &run,
        &run.created_by,
        &summary,
        &json!({"council_id": council_id, "reviewers": reviewers}),
        &now,
    )?;
    let mut c = show(ctx.conn, &p.run_id, &council_id)?;
    c.event_id = id;
    Ok(c)
}

/// Cancel the unfinished councils of a run (with the run): phase `cancelled` first, so
/// cancelling their threads does not open a vote, then every open thread.
pub fn cancel_open(ctx: &mut WriteCtx<'_>, run: &Run, reason: &str) -> Result<()> {
    let threads: Vec<String> = {
        let mut stmt = ctx.conn.prepare_cached(
            "SELECT m.brainstorm_thread_id, m.vote_thread_id FROM council_members m JOIN councils c \
             ON c.run_id = m.run_id AND c.council_id = m.council_id \
             WHERE m.run_id = ?1 AND c.phase IN ('brainstorm', 'voting')",
        )?;
        let rows = stmt.query_map([&run.run_id], |r| Ok((r.get::<_, String>(0)?, r.get::<_, Option<String>>(1)?)))?;
        let mut v = Vec::new();
        for row in rows {
            let (b, vt) = row?;
            v.push(b);
            v.extend(vt);
        }
        v
    };
    ctx.conn.execute(
        "UPDATE councils SET phase = 'cancelled' WHERE run_id = ?1 AND phase IN ('brainstorm', 'voting')",
        [&run.run_id],
    )?;
    let now = util::ts(util::now());
    for t in threads {
        if !inbox::read::thread(ctx.conn, &t, &now)?.status.is_terminal() {
            let p = CancelParams {
                agent: run.created_by.clone(),
                thread_id: t,
                reason: reason.to_string(),
                artifacts: vec![],
            };
            inbox::write::cancel(ctx, p)?;
        }
    }
    Ok(())
}

/// The payload of the message that finished a thread, if it finished with `done`.
fn final_payload(conn: &Connection, thread: &Thread) -> Result<Value> {
    if thread.status != ThreadStatus::Done {
        return Ok(Value::Null);
    }
    let Some(mid) = &thread.latest_message_id else { return Ok(Value::Null) };
    Ok(inbox::read::message(conn, mid)?.map(|m| m.payload_json).unwrap_or(Value::Null))
}

/// Reconcile hook: a council thread changed.
pub fn on_thread(ctx: &mut WriteCtx<'_>, thread: &Thread, actor: &str, now: &str) -> Result<()> {
    if !thread.status.is_terminal() {
        return Ok(());
    }
    let row: Option<(String, String, bool)> = ctx
        .conn
        .prepare_cached(
            "SELECT run_id, council_id, brainstorm_thread_id = ?1 FROM council_members \
             WHERE brainstorm_thread_id = ?1 OR vote_thread_id = ?1",
        )?
        .query_row([&thread.thread_id], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .optional()?;
    let Some((run_id, council_id, brainstorm)) = row else { return Ok(()) };
    let payload = final_payload(ctx.conn, thread)?.to_string();
    let col = if brainstorm { "brainstorm" } else { "vote" };
    ctx.conn
        .prepare_cached(&format!("UPDATE council_members SET {col}_json = ?2 WHERE {col}_thread_id = ?1"))?
        .execute([&thread.thread_id, &payload])?;
    let phase: String = ctx.conn.query_row(
        "SELECT phase FROM councils WHERE run_id = ?1 AND council_id = ?2",
        [&run_id, &council_id],
        |r| r.get(0),
    )?;
    let waiting: i64 = ctx.conn.query_row(
        &format!("SELECT COUNT(*) FROM council_members WHERE run_id = ?1 AND council_id = ?2 AND {col}_json IS NULL"),
        [&run_id, &council_id],
        |r| r.get(0),
    )?;
    if waiting > 0 {
        return Ok(());
    }
    let run = load_run(ctx.conn, &run_id)?;
    if brainstorm && phase == "brainstorm" {
        open_vote(ctx, &run, &council_id, actor, now)?;
    } else if !brainstorm && phase == "voting" {
        ctx.conn.execute(
            "UPDATE councils SET phase = 'done', updated_at = ?3 WHERE run_id = ?1 AND council_id = ?2",
            rusqlite::params![run_id, council_id, now],
        )?;
        let summary = format!("council {council_id} voted");
        run_event(ctx, EventType::CouncilDone, &run, actor, &summary, &json!({"council_id": council_id}), now)?;
    }
    Ok(())
}

/// Most recommendations taken from one reviewer; titles and details are cut to these sizes.
const MAX_RECOMMENDATIONS: usize = 200;
const MAX_TITLE: usize = 200;
const MAX_DETAIL: usize = 4000;

/// Parse the recommendations a reviewer sent (malformed entries are skipped; at most
/// [`MAX_RECOMMENDATIONS`], since grouping runs on the writer).
fn recommendations(payload: &Value) -> Vec<(String, String, Option<String>)> {
    let cut = |s: &str, n: usize| s.chars().take(n).collect::<String>();
    payload["recommendations"]
        .as_array()
        .map(|a| {
            a.iter()
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
        })
        .unwrap_or_default()
}

fn open_vote(ctx: &mut WriteCtx<'_>, run: &Run, council_id: &str, actor: &str, now: &str) -> Result<()> {
    let mut groups: Vec<StoredGroup> = Vec::new();
    let mut by_key: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    let rows: Vec<(String, Option<String>)> = {
        let mut stmt = ctx.conn.prepare_cached(
            "SELECT reviewer, brainstorm_json FROM council_members WHERE run_id = ?1 AND council_id = ?2 ORDER BY ord",
        )?;
        stmt.query_map([&run.run_id, council_id], |r| Ok((r.get(0)?, r.get(1)?)))?.collect::<Result<_, _>>()?
    };
    for (reviewer, json) in &rows {
        let payload: Value = json.as_deref().and_then(|j| serde_json::from_str(j).ok()).unwrap_or(Value::Null);
        for (title, detail, group) in recommendations(&payload) {
            let key = group.map(|g| format!("group:{}", normalize(&g))).unwrap_or_else(|| normalize(&title));
            let entry = ProposalDetail { reviewer: reviewer.clone(), title: title.clone(), detail };
            match by_key.get(&key) {
                Some(&i) => {
                    let g = &mut groups[i];
                    g.details.push(entry);
                    if g.proposed_by.last() != Some(reviewer) {
                        g.proposed_by.push(reviewer.clone());
                    }
                }
                None => {
                    by_key.insert(key.clone(), groups.len());
                    groups.push(StoredGroup {
                        group_id: format!("G{}", groups.len() + 1),
                        key,
                        title,
                        details: vec![entry],
                        proposed_by: vec![reviewer.clone()],
                    });
                }
            }
        }
    }
    let groups_json = serde_json::to_string(&groups).map_err(|e| Error::Internal(e.to_string()))?;
    let topic: String = ctx.conn.query_row(
        "SELECT topic FROM councils WHERE run_id = ?1 AND council_id = ?2",
        [&run.run_id, council_id],
        |r| r.get(0),
    )?;
    let listing: Vec<Value> = groups
        .iter()
        .map(|g| json!({"group_id": g.group_id, "title": g.title, "proposed_by": g.proposed_by, "details": g.details}))
        .collect();
    let mut text = String::from("Vote on each group: approve, reject or abstain.\n");
    for g in &groups {
        text.push_str(&format!("\n{}: {} (proposed by {})", g.group_id, g.title, g.proposed_by.join(", ")));
    }
    text.push_str("\n\nFinish this thread with `inbox done --payload-json '{\"votes\":{\"G1\":\"approve\"}}'`.");
    for (reviewer, _) in &rows {
        let payload = json!({
            "council_id": council_id,
            "phase": "vote",
            "topic": topic,
            "groups": listing,
            "respond_with": {"votes": {"G1": "approve | reject | abstain"}},
        });
        let thread =
            open_thread_for(ctx, run, council_id, reviewer, format!("Council vote: {topic}"), text.clone(), payload)?;
        ctx.conn
            .prepare_cached("UPDATE council_members SET vote_thread_id = ?4 WHERE run_id = ?1 AND council_id = ?2 AND reviewer = ?3")?
            .execute([&run.run_id, council_id, reviewer, &thread])?;
    }
    ctx.conn.execute(
        "UPDATE councils SET phase = 'voting', groups_json = ?3, updated_at = ?4 WHERE run_id = ?1 AND council_id = ?2",
        rusqlite::params![run.run_id, council_id, groups_json, now],
    )?;
    let summary = format!("council {council_id}: {} group(s) to vote on", groups.len());
    run_event(
        ctx,
        EventType::CouncilVoting,
        run,
        actor,
        &summary,
        &json!({"council_id": council_id, "groups": groups.len()}),
        now,
    )?;
    Ok(())
}

/// `orch.councilShow`: members, groups and tallies.
pub fn show(conn: &Connection, run_id: &str, council_id: &str) -> Result<Council> {
    let row: Option<(String, String, String, String, String)> = conn
        .prepare_cached(
            "SELECT topic, body, phase, groups_json, created_at FROM councils WHERE run_id = ?1 AND council_id = ?2",
        )?
        .query_row([run_id, council_id], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?)))
        .optional()?;
    let (topic, body, phase, groups_json, created_at) =
        row.ok_or_else(|| Error::not_found(format!("council '{council_id}' not found in run '{run_id}'")))?;
    let stored: Vec<StoredGroup> = serde_json::from_str(&groups_json).map_err(|e| Error::Internal(e.to_string()))?;
    let mut members = Vec::new();
    let mut votes: Vec<Value> = Vec::new();
    let mut stmt = conn.prepare_cached(
        "SELECT reviewer, brainstorm_thread_id, brainstorm_json IS NOT NULL, vote_thread_id, vote_json \
         FROM council_members WHERE run_id = ?1 AND council_id = ?2 ORDER BY ord",
    )?;
    let rows = stmt.query_map([run_id, council_id], |r| {
        Ok((
            r.get::<_, String>(0)?,
            r.get::<_, String>(1)?,
            r.get::<_, bool>(2)?,
            r.get::<_, Option<String>>(3)?,
            r.get::<_, Option<String>>(4)?,
        ))
    })?;
    for row in rows {
        let (reviewer, bt, bdone, vt, vjson) = row?;
        votes.push(vjson.as_deref().and_then(|j| serde_json::from_str(j).ok()).unwrap_or(Value::Null));
        members.push(CouncilMember {
            reviewer,
            brainstorm_thread_id: bt,
            brainstorm_done: bdone,
            vote_thread_id: vt,
            vote_done: vjson.is_some(),
        });
    }
    let n = members.len() as u32;
    let groups = stored
        .into_iter()
        .map(|g| {
            let (mut approve, mut reject) = (0, 0);
            for v in &votes {
                match v["votes"][&g.group_id].as_str() {
                    Some("approve") => approve += 1,
                    Some("reject") => reject += 1,
                    _ => {}
                }
            }
            let voted = members.iter().filter(|m| m.vote_done).count() as u32;
            let abstain = voted.saturating_sub(approve + reject);
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
                abstain,
                verdict: verdict.into(),
            }
        })
        .collect();
    Ok(Council {
        run_id: run_id.to_string(),
        council_id: council_id.to_string(),
        topic,
        body,
        phase: phase.parse().map_err(Error::Internal)?,
        members,
        groups,
        created_at,
        event_id: 0,
    })
}
