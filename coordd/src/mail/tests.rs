//! Mail rows at the store level: one per recipient, none for the sender, and the
//! recipient's newest-first listing served by its index.

use coord_proto::types::*;

use crate::db::Db;
use crate::inbox::write;

fn send(to: &str) -> SendParams {
    SendParams {
        from: "lead".into(),
        to: to.into(),
        task_id: Some("t1".into()),
        category: Some("handoff".into()),
        message: MessageInput { summary: "s".into(), ..Default::default() },
        ..Default::default()
    }
}

#[tokio::test]
async fn one_row_per_recipient_and_an_indexed_listing() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(&dir.path().join("coord.db")).unwrap();
    for id in ["lead", "w-a", "w-b"] {
        let p = RegisterParams { agent_id: id.into(), role: "r".into(), ..Default::default() };
        db.write(move |ctx| crate::agents::register(ctx, p)).await.unwrap();
    }
    let b = db.write(|ctx| write::send(ctx, send(BROADCAST))).await.unwrap();
    assert_eq!(b.message.category, Some(Category::Handoff));
    assert!(b.message.requires_ack);
    db.write(|ctx| write::send(ctx, send("w-a"))).await.unwrap();
    db.write(|ctx| write::send(ctx, SendParams { to: "lead".into(), ..send("lead") })).await.unwrap();
    let rows: Vec<(String, i64)> = db
        .read(|c| {
            let mut s = c.prepare("SELECT recipient, COUNT(*) FROM mail GROUP BY recipient ORDER BY recipient")?;
            Ok(s.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?.collect::<Result<_, _>>()?)
        })
        .await
        .unwrap();
    assert_eq!(rows, [("w-a".to_string(), 2), ("w-b".to_string(), 1)], "no copy for the sender");
    let plan: String = db
        .read(|c| {
            let sql = format!(
                "EXPLAIN QUERY PLAN SELECT {} FROM {} WHERE x.recipient = 'w-a' ORDER BY x.event_id DESC LIMIT 50",
                super::ITEM_COLUMNS,
                super::ITEM_FROM
            );
            let mut s = c.prepare(&sql)?;
            let rows: Vec<String> = s.query_map([], |r| r.get(3))?.collect::<Result<_, _>>()?;
            Ok(rows.join("; "))
        })
        .await
        .unwrap();
    assert!(plan.contains("idx_mail_recipient_event"), "{plan}");
    assert!(!plan.contains("TEMP B-TREE"), "no sort step: {plan}");
}
