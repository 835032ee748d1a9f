//! Registry rules at the store level: the id rule, and settings changes appending one
//! event only when the value changes.

use super::*;
use crate::db::Db;

#[test]
fn agent_ids_follow_the_seed_rule() {
    for good in ["abc", "agent-ui-1", "a1-b2-c3", &"x".repeat(48)] {
        assert!(check_agent_id(good).is_ok(), "{good}");
    }
    for bad in ["ab", "ABC", "a_b", "a--b", "-ab", "ab-", "a b", &"x".repeat(49), "broadcast", "é-abc"] {
        let e = check_agent_id(bad).unwrap_err();
        assert_eq!(e.to_app().code, ErrorCode::InvalidArgs, "{bad}");
    }
}

#[tokio::test]
async fn strict_setting_records_an_event_only_when_it_changes() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(&dir.path().join("coord.db")).unwrap();
    for on in [true, true, false, false] {
        db.write(move |ctx| set_strict(ctx, on)).await.unwrap();
    }
    let events: i64 = db
        .read(|c| {
            Ok(c.query_row("SELECT COUNT(*) FROM events WHERE event_type = 'settings.changed'", [], |r| r.get(0))?)
        })
        .await
        .unwrap();
    assert_eq!(events, 2);
    assert!(!db.read(strict).await.unwrap());
}
