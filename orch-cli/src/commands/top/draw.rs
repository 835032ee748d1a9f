//! Drawing `orch top`: agents with their threads and unread counts, blocked questions, and
//! recent events, in three panes.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Cell, Paragraph, Row, Table, Wrap};

use coord_proto::types::{ActivityState, SessionState};

use super::model::Model;

pub fn draw(f: &mut Frame<'_>, m: &Model) {
    let [title, agents, sessions, blocked, events] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Percentage(30),
        Constraint::Percentage(20),
        Constraint::Percentage(20),
        Constraint::Fill(1),
    ])
    .areas(f.area());
    let scope = m.run.as_deref().map_or("all runs".to_string(), |r| format!("run {r}"));
    let state = match &m.lost {
        Some(why) => Span::styled(format!(" disconnected: {why} "), Style::new().fg(Color::White).bg(Color::Red)),
        None => Span::styled(" live ", Style::new().fg(Color::Black).bg(Color::Green)),
    };
    f.render_widget(
        Paragraph::new(Line::from(vec![
            Span::styled("orch top", Style::new().add_modifier(Modifier::BOLD)),
            Span::raw(format!("  {scope}  event {}  ", m.cursor)),
            state,
            Span::raw("  q quits"),
        ])),
        title,
    );
    f.render_widget(agents_table(m), agents);
    f.render_widget(session_list(m), sessions);
    f.render_widget(blocked_list(m), blocked);
    f.render_widget(event_list(m), events);
}

fn agents_table(m: &Model) -> Table<'static> {
    let rows: Vec<Row> = m
        .agents
        .iter()
        .flat_map(|v| v.agents.iter())
        .map(|a| {
            let t = a.threads.first();
            let thread = t.map_or("-".to_string(), |t| {
                let at = if t.task_id.is_empty() { t.thread_id.clone() } else { format!("{}/{}", t.run_id, t.task_id) };
                format!("{} [{}] {}", t.subject, t.status, at)
            });
            let lease = t.and_then(|t| t.lease.as_ref()).map_or("-".to_string(), |l| clock(&l.claimed_at));
            let colour = match a.activity {
                ActivityState::Busy => Color::Green,
                ActivityState::Idle => Color::Gray,
                ActivityState::Stale => Color::Yellow,
            };
            let unread =
                if a.urgent > 0 { format!("{} ({} urgent)", a.pending, a.urgent) } else { a.pending.to_string() };
            Row::new(vec![
                Cell::from(a.agent.agent_id.clone()),
                Cell::from(Span::styled(a.activity.as_str(), Style::new().fg(colour))),
                Cell::from(thread),
                Cell::from(lease),
                Cell::from(a.agent.last_seen_at.as_deref().map_or("never".to_string(), clock)),
                Cell::from(unread),
            ])
        })
        .collect();
    let widths = [
        Constraint::Length(16),
        Constraint::Length(6),
        Constraint::Fill(1),
        Constraint::Length(9),
        Constraint::Length(9),
        Constraint::Length(14),
    ];
    Table::new(rows, widths)
        .header(
            Row::new(["agent", "state", "current thread", "lease", "seen", "unread"])
                .style(Style::new().add_modifier(Modifier::BOLD)),
        )
        .block(Block::new().borders(Borders::ALL).title(" agents "))
}

fn session_list(m: &Model) -> Paragraph<'static> {
    let lines: Vec<Line> = if m.sessions.is_empty() {
        vec![Line::styled("no launched sessions (coord-launch starts them)", Style::new().fg(Color::DarkGray))]
    } else {
        let runs = m.usage.iter().filter(|r| !r.sessions.is_empty() || r.budget.is_set()).map(|r| {
            let colour = if r.over_budget { Color::Red } else { Color::Cyan };
            Line::styled(format!("{} {}", r.run_id, crate::usage::run_line(r)), Style::new().fg(colour))
        });
        let sessions = m.sessions.iter().map(|s| {
            let colour = if s.state == SessionState::Running { Color::Green } else { Color::Gray };
            let last = crate::sessions::tail(s, 1).pop().unwrap_or_default();
            let used = m
                .usage
                .iter()
                .flat_map(|r| &r.sessions)
                .find(|u| u.session_id == s.session_id)
                .map_or(String::new(), |u| format!(" ${:.2} {}tok", u.usage.cost_usd, u.usage.tokens()));
            Line::from(vec![
                Span::styled(format!("{}/{}{used} ", s.run_id, crate::sessions::line(s)), Style::new().fg(colour)),
                Span::styled(format!(" {last}"), Style::new().fg(Color::DarkGray)),
            ])
        });
        runs.chain(sessions).collect()
    };
    Paragraph::new(lines).block(Block::new().borders(Borders::ALL).title(" sessions (coord-launch) "))
}

fn blocked_list(m: &Model) -> Paragraph<'static> {
    let lines: Vec<Line> = if m.blocked.is_empty() {
        vec![Line::styled("nothing is blocked", Style::new().fg(Color::DarkGray))]
    } else {
        m.blocked
            .iter()
            .map(|(run, b)| {
                let q = b.question.as_ref().map_or("(no question recorded)".to_string(), |q| q.summary.clone());
                Line::from(vec![
                    Span::styled(format!("{run}/{} ", b.task.task_id), Style::new().fg(Color::Yellow)),
                    Span::raw(format!("@{}: {q}", b.worker)),
                ])
            })
            .collect()
    };
    Paragraph::new(lines)
        .wrap(Wrap { trim: true })
        .block(Block::new().borders(Borders::ALL).title(" blocked questions (orch answer) "))
}

fn event_list(m: &Model) -> Paragraph<'static> {
    let lines: Vec<Line> = m
        .events
        .iter()
        .map(|e| {
            Line::from(vec![
                Span::styled(format!("{} ", clock(&e.created_at)), Style::new().fg(Color::DarkGray)),
                Span::styled(format!("#{:<6} ", e.event_id), Style::new().fg(Color::DarkGray)),
                Span::styled(format!("{:<20} ", e.event_type.as_str()), Style::new().fg(Color::Cyan)),
                Span::raw(format!("{} {}", e.actor, e.summary)),
            ])
        })
        .collect();
    Paragraph::new(lines).block(Block::new().borders(Borders::ALL).title(" recent events "))
}

/// `HH:MM:SS` of an RFC 3339 instant (UTC, as stored).
fn clock(ts: &str) -> String {
    ts.get(11..19).unwrap_or(ts).to_string()
}
