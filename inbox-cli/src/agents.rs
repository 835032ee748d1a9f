//! The `bb agent` commands of `inbox`: agent registry, mail read/ack, reservations and the
//! status summary. Each is one call; output is text, or the envelope with --json.

use std::process::ExitCode;

use coord_client::Client;
use coord_proto::types::*;
use serde_json::json;

use crate::cli::*;
use crate::commands::Ctx;
use crate::output::{self, CliError, envelope, to_value};

type Res = Result<ExitCode, CliError>;

/// An agents-layer command with its params checked.
pub enum Prepared {
    Register(RegisterParams),
    List(AgentListParams),
    Show(AgentRef),
    Heartbeat(HeartbeatParams),
    Mail(MailParams),
    Read(MailRef),
    Ack(MailRef),
    Reserve(ReserveParams),
    Release(ReleaseParams),
    Reservations(ReservationListParams),
    Status(StatusParams),
}

/// Build the params of an agents-layer command; `None` if `cmd` is not one.
pub fn prepare(ctx: &Ctx, cmd: Cmd) -> Result<Result<Prepared, Cmd>, CliError> {
    Ok(Ok(match cmd {
        Cmd::Agent(AgentCmd::Register(a)) => Prepared::Register(RegisterParams {
            agent_id: a.name,
            role: a.role,
            display_name: a.display,
            force_update: a.force_update,
        }),
        Cmd::Agent(AgentCmd::List(a)) => {
            Prepared::List(AgentListParams { role: a.role, status: a.status, include_unregistered: a.all })
        }
        Cmd::Agent(AgentCmd::Show) => Prepared::Show(AgentRef { agent_id: ctx.agent("agent show --agent")? }),
        Cmd::Agent(AgentCmd::Heartbeat(a)) => {
            Prepared::Heartbeat(HeartbeatParams { agent_id: ctx.agent("agent heartbeat --agent")?, status: a.status })
        }
        Cmd::Mail(a) => Prepared::Mail(MailParams {
            agent: ctx.agent("mail --agent")?,
            state: a.state,
            task_id: a.task,
            limit: a.limit,
        }),
        Cmd::Read(a) => Prepared::Read(MailRef { agent: ctx.agent("read --agent")?, message_id: a.message }),
        Cmd::Ack(a) => Prepared::Ack(MailRef { agent: ctx.agent("ack --agent")?, message_id: a.message }),
        Cmd::Reserve(a) => Prepared::Reserve(ReserveParams {
            agent: ctx.agent("reserve --agent")?,
            scope: a.scope,
            task_id: a.task,
            ttl_minutes: a.ttl,
            shared: a.shared,
            takeover_stale: a.takeover_stale,
        }),
        Cmd::Release(a) => Prepared::Release(ReleaseParams { agent: ctx.agent("release --agent")?, scope: a.scope }),
        // Filters: only an --agent given on this command line narrows them, not COORD_AGENT.
        Cmd::Reservations(a) => Prepared::Reservations(ReservationListParams {
            agent: ctx.explicit_agent(),
            task_id: a.task,
            path: a.path,
            include_history: a.all,
            limit: a.limit,
        }),
        Cmd::Status(a) => Prepared::Status(StatusParams { task_id: a.task, agent: ctx.explicit_agent() }),
        other => return Ok(Err(other)),
    }))
}

impl Prepared {
    pub async fn execute(self, json: bool, c: &Client) -> Res {
        match self {
            Prepared::Register(p) => agent_result("agent register", json, c.agent_register(p).await?),
            Prepared::Heartbeat(p) => agent_result("agent heartbeat", json, c.agent_heartbeat(p).await?),
            Prepared::List(p) => {
                let r = c.agent_list(p).await?;
                if json {
                    envelope("agent list", to_value(&r));
                } else {
                    output::agent_table(&r.agents);
                }
            }
            Prepared::Show(p) => {
                let a = c.agent_show(p).await?;
                if json {
                    envelope("agent show", json!({ "agent": a }));
                } else {
                    output::agent_block(&a);
                }
            }
            Prepared::Mail(p) => {
                let r = c.mail(p).await?;
                if json {
                    envelope("mail", to_value(&r));
                } else {
                    output::mail_table(&r.mail);
                }
            }
            Prepared::Read(p) => mail_result("read", json, c.mail_read(p).await?),
            Prepared::Ack(p) => mail_result("ack", json, c.mail_ack(p).await?),
            Prepared::Reserve(p) => {
                let r = c.reserve(p).await?;
                if json {
                    envelope("reserve", to_value(&r));
                } else {
                    for t in &r.taken_over {
                        println!("took over {}'s stale reservation of {}", t.agent_id, t.scope);
                    }
                    let verb = if r.renewed { "extended" } else { "reserved" };
                    println!("{verb}: {}", output::reservation_line(&r.reservation));
                }
            }
            Prepared::Release(p) => {
                let r = c.release(p).await?;
                if json {
                    envelope("release", to_value(&r));
                } else {
                    println!("released: {}", output::reservation_line(&r.reservation));
                }
            }
            Prepared::Reservations(p) => {
                let r = c.reservations(p).await?;
                if json {
                    envelope("reservations", to_value(&r));
                } else {
                    output::reservation_table(&r.reservations);
                }
            }
            Prepared::Status(p) => {
                let r = c.status_summary(p).await?;
                if json {
                    envelope("status", to_value(&r));
                } else {
                    output::status(&r);
                }
            }
        }
        Ok(ExitCode::SUCCESS)
    }
}

fn agent_result(cmd: &str, json: bool, r: AgentResult) {
    if json {
        envelope(cmd, to_value(&r));
    } else {
        output::agent_block(&r.agent);
    }
}

fn mail_result(cmd: &str, json: bool, r: MailItemResult) {
    if json {
        envelope(cmd, to_value(&r));
    } else {
        let m = &r.mail;
        let change = if r.event_id.is_some() { "now" } else { "already" };
        println!("{} is {change} {} for {}", m.message_id, m.state, m.to_agent);
        output::mail_block(m);
    }
}
