//! List reads stop at a byte budget in the store (`coordd::store::within`), on both
//! backends: a page of large messages holds about one reply's worth of rows, whatever its
//! `limit`, and says it was cut so the reply is truncated (protocol §1.7).

#[path = "support/stores.rs"]
mod stores;

use coord_proto::types::*;
use coordd::ops::messages;
use coordd::store::backend::{read, write};
use coordd::store::repos::*;
use coordd::time::Ts;
use stores::{Opened, contract};

contract!(
    a_threads_messages_are_read_until_they_hold_the_budget,
    mail_is_read_until_it_holds_the_budget,
    a_timeline_read_stops_at_the_budget_but_never_inside_a_message,
    an_events_page_stops_at_the_budget,
    a_runs_tasks_are_read_until_they_hold_the_budget,
);

/// Body of each message: five of them hold 5,000 bytes of text.
const BODY: usize = 1000;
/// A budget that three of those messages pass.
const BUDGET: usize = 2500;

fn input(n: usize) -> MessageInput {
    MessageInput { summary: format!("m{n}"), body: Some("x".repeat(BODY)), ..Default::default() }
}

/// A thread of five messages of `BODY` bytes from the lead to `to`; its id.
async fn thread_of_five(s: &Opened, to: &str) -> String {
    let now = Ts::from_millis(1_767_225_600_000);
    let to = to.to_string();
    write(&*s.store, move |tx| {
        let p = SendParams { from: "lead".into(), to: to.clone(), message: input(0), ..Default::default() };
        let thread = messages::send(tx, now, p)?.thread.thread_id;
        for n in 1..5 {
            let p =
                ReplyParams { from: "lead".into(), thread_id: thread.clone(), message: input(n), ..Default::default() };
            messages::reply(tx, now, p, &coordd::domain::credentials::Acting::daemon())?;
        }
        Ok(thread)
    })
    .await
    .unwrap()
}

fn summaries(m: &[Message]) -> Vec<&str> {
    m.iter().map(|m| m.summary.as_str()).collect()
}

async fn a_threads_messages_are_read_until_they_hold_the_budget(s: &Opened) {
    let thread = thread_of_five(s, "w").await;
    let t = thread.clone();
    let first = read(&*s.store, move |tx| tx.messages().thread_messages_after(&t, 0, BUDGET)).await.unwrap();
    assert_eq!((summaries(&first.items), first.cut), (vec!["m0", "m1", "m2"], true));
    let after = first.items[2].event_id;
    let rest = read(&*s.store, move |tx| tx.messages().thread_messages_after(&thread, after, BUDGET)).await.unwrap();
    assert_eq!((summaries(&rest.items), rest.cut), (vec!["m3", "m4"], false));
}

async fn mail_is_read_until_it_holds_the_budget(s: &Opened) {
    thread_of_five(s, "w").await;
    let q = MailQuery {
        recipient: "w".into(),
        state: None,
        task_id: None,
        before_event: None,
        limit: 1000,
        max_bytes: BUDGET,
    };
    let got = read(&*s.store, move |tx| tx.mail().mail_list(&q)).await.unwrap();
    let summaries: Vec<&str> = got.items.iter().map(|m| m.summary.as_str()).collect();
    assert_eq!((summaries, got.cut), (vec!["m4", "m3", "m2"], true), "newest first, three of 1000-byte bodies");
}

async fn a_timeline_read_stops_at_the_budget_but_never_inside_a_message(s: &Opened) {
    // Each message has two copies (to ann, and the same for bob): the read takes both
    // copies of the second message, past the budget.
    thread_of_five(s, "ann").await;
    write(&*s.store, |tx| {
        let q = MailQuery {
            recipient: "ann".into(),
            state: None,
            task_id: None,
            before_event: None,
            limit: 10,
            max_bytes: usize::MAX,
        };
        for copy in tx.mail().mail_list(&q)?.items {
            tx.mail_mut().mail_insert(&MailRow { recipient: "bob".into(), ..copy })?;
        }
        Ok(())
    })
    .await
    .unwrap();
    let q = TimelineQuery {
        agent: None,
        thread_id: None,
        run_id: None,
        before_event: None,
        limit: 1000,
        max_bytes: BUDGET,
    };
    let got = read(&*s.store, move |tx| tx.mail().mail_timeline(&q)).await.unwrap();
    let copies: Vec<(&str, &str)> = got.items.iter().map(|m| (m.summary.as_str(), m.recipient.as_str())).collect();
    assert_eq!(copies, [("m4", "ann"), ("m4", "bob"), ("m3", "ann"), ("m3", "bob")], "1,000 bytes a copy");
    assert!(got.cut);
}

async fn an_events_page_stops_at_the_budget(s: &Opened) {
    thread_of_five(s, "w").await;
    let q = EventQuery { after: 0, filter: EventFilter::default() };
    let page = read(&*s.store, move |tx| tx.events().events_page(&q, 1000, BUDGET)).await.unwrap();
    // Events weigh their message plus a fixed estimate, so two pass 2,500 bytes.
    assert!(page.len() < 5 && page.len() >= 2, "{} events of 5", page.len());
}

async fn a_runs_tasks_are_read_until_they_hold_the_budget(s: &Opened) {
    use coordd::domain::orch::plan;
    let now = Ts::from_millis(1_767_225_600_000);
    write(&*s.store, move |tx| {
        plan::create_run(
            tx,
            now,
            RunCreateParams { run_id: Some("R1".into()), goal: "g".into(), ..Default::default() },
        )?;
        for n in 0..5 {
            let body = Some("x".repeat(BODY));
            let depends_on = if n == 4 { vec!["T0".into()] } else { vec![] };
            let p = TaskAddParams {
                run_id: "R1".into(),
                task_id: format!("T{n}"),
                title: "t".into(),
                body,
                depends_on,
                ..Default::default()
            };
            plan::add_task(tx, now, p)?;
        }
        Ok(())
    })
    .await
    .unwrap();
    let page = |after: Option<&'static str>, statuses: Vec<TaskStatus>| {
        read(&*s.store, move |tx| tx.tasks().tasks_page("R1", after, &statuses, 1000, BUDGET))
    };
    let ids = |w: &Within<Task>| w.items.iter().map(|t| t.task_id.clone()).collect::<Vec<_>>();
    let first = page(None, vec![]).await.unwrap();
    assert_eq!((ids(&first), first.cut), (vec!["T0".to_string(), "T1".into(), "T2".into()], true));
    let rest = page(Some("T2"), vec![]).await.unwrap();
    assert_eq!((ids(&rest), rest.cut), (vec!["T3".to_string(), "T4".into()], false));
    assert_eq!(rest.items[1].depends_on, ["T0"], "with their dependencies");
    let pending = page(None, vec![TaskStatus::Pending]).await.unwrap();
    assert_eq!(ids(&pending), ["T4"], "only the statuses asked for");
}
