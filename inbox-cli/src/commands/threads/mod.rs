//! The worker protocol: init, send, fetch, claim, renew, update, reply, done, fail,
//! cancel, list and show, one file each. Each command builds its params from the flags,
//! makes one call (`show --agent` also marks the thread read) and prints the result; what
//! they share (message content, artifacts, the printing of a post or a lease) is here.

pub mod cancel;
pub mod claim;
pub mod done;
pub mod fail;
pub mod fetch;
pub mod init;
pub mod list;
pub mod renew;
pub mod reply;
pub mod send;
pub mod show;
pub mod update;

use coord_cli::usage::one_of;
use coord_cli::{CliError, body, json_object};
use coord_proto::api::InboxApiClient;
use coord_proto::types::*;

use crate::commands::args::*;
use crate::output;
use coord_cli::{Command, Ctx, Outcome, Res};

/// `--yes` / `--no` flag pairs (clap makes them conflict): `Some(true)`, `Some(false)` or
/// neither.
fn flag_pair(yes: bool, no: bool) -> Option<bool> {
    if yes {
        Some(true)
    } else if no {
        Some(false)
    } else {
        None
    }
}

/// The params of done and fail.
fn finish(ctx: &Ctx, a: FinishArgs) -> Result<FinishParams, CliError> {
    Ok(FinishParams {
        agent: ctx.agent()?,
        thread_id: a.thread,
        lease_token: a.lease_token,
        message: content(a.content)?,
    })
}

fn content(c: Content) -> Result<MessageInput, CliError> {
    let body = body(c.body, c.body_file.as_deref())?;
    let payload_json = c.payload_json.as_deref().map(|p| json_object("payload-json", p)).transpose()?;
    Ok(MessageInput { summary: c.summary, body, payload_json, artifacts: artifacts(c.artifacts)? })
}

/// Pair --artifact with --artifact-kind and --artifact-metadata-json by position, each
/// path located in its repository (`artifacts::locate`).
fn artifacts(a: ArtifactArgs) -> Result<Vec<ArtifactInput>, CliError> {
    let n = a.paths.len();
    for (flag, len) in [("artifact-kind", a.kinds.len()), ("artifact-metadata-json", a.metadata.len())] {
        if len > 1 && len != n || (len == 1 && n == 0) {
            return Err(CliError::Invalid(format!(
                "--{flag} given {len} times for {n} --artifact: give one for all, or one per --artifact"
            )));
        }
    }
    let pick = |v: &Vec<String>, i: usize| if v.len() == 1 { v.first().cloned() } else { v.get(i).cloned() };
    let given = (0..n)
        .map(|i| {
            Ok(ArtifactInput {
                path: a.paths[i].clone(),
                kind: pick(&a.kinds, i),
                metadata_json: pick(&a.metadata, i).map(|m| json_object("artifact-metadata-json", &m)).transpose()?,
            })
        })
        .collect::<Result<Vec<_>, CliError>>()?;
    Ok(crate::artifacts::locate_all(given))
}

/// A message written: `verb` says how (sent, updated, replied, ...).
fn posted(ctx: &Ctx, verb: &str, r: MessageResult) -> Res {
    ctx.print(&r, || {
        let (m, t) = (&r.message, &r.thread);
        println!("{verb}: {} {} -> {} in {} [{}]", m.message_id, m.from_agent, m.to_agent, t.thread_id, t.status);
        println!("  {}  (event {})", m.summary, r.event_id);
    });
    Ok(Outcome::Done)
}

/// A lease granted (`claimed`) or extended (`renewed`).
fn leased(ctx: &Ctx, verb: &str, r: LeaseResult) -> Res {
    ctx.print(&r, || {
        let l = &r.lease;
        println!("{verb} {} by {} until {} (generation {})", l.thread_id, l.agent_id, l.expires_at, l.generation);
        println!("  lease token {}", l.lease_token);
        println!("  subject: {}", r.thread.subject);
    });
    Ok(Outcome::Done)
}

fn threads(ctx: &Ctx, r: &ThreadsResult) {
    ctx.print(r, || {
        if r.threads.is_empty() {
            println!("no matching threads");
        } else {
            output::thread_table(&r.threads);
        }
    });
}
