//! Reservations at the store level: generations grow across repeated takeovers of one
//! scope, and an agent's own stale reservation is replaced without a takeover.

use coord_proto::types::*;

use super::*;
use crate::db::Db;

fn p(agent: &str, scope: &str, takeover: bool) -> ReserveParams {
    ReserveParams {
        agent: agent.into(),
        scope: scope.into(),
        task_id: Some("t".into()),
        takeover_stale: takeover,
        ..Default::default()
    }
}

/// Make every active reservation stale (the store owns its rows; only tests do this).
async fn expire_all(db: &Db) {
    db.write(|ctx| {
        ctx.conn
            .execute("UPDATE reservations SET expires_at = '2000-01-01T00:00:00.000Z' WHERE state = 'active'", [])?;
        Ok(())
    })
    .await
    .unwrap();
}

#[tokio::test]
async fn generations_grow_across_takeovers() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(&dir.path().join("coord.db")).unwrap();
    let first = db.write(|ctx| reserve(ctx, p("a", "src/**", false))).await.unwrap();
    assert_eq!(first.reservation.generation, 1);
    for (i, agent) in ["b", "c", "a"].into_iter().enumerate() {
        expire_all(&db).await;
        let e = db.write(move |ctx| reserve(ctx, p(agent, "src/**", false))).await;
        assert_eq!(e.unwrap_err().to_app().code, ErrorCode::ReservationStaleFound);
        let r = db.write(move |ctx| reserve(ctx, p(agent, "src/**", true))).await.unwrap();
        assert_eq!(r.reservation.generation, i as i64 + 2);
        assert_eq!(r.taken_over.len(), 1);
    }
    // The holder's own stale reservation is replaced without a takeover.
    expire_all(&db).await;
    let own = db.write(|ctx| reserve(ctx, p("a", "src/**", false))).await.unwrap();
    assert_eq!((own.reservation.generation, own.taken_over.len(), own.renewed), (5, 0, false));
    let history =
        db.read(|c| list(c, &ReservationListParams { include_history: true, ..Default::default() })).await.unwrap();
    assert_eq!(history.len(), 5);
    assert_eq!(history.iter().filter(|r| r.state == ReservationState::Active).count(), 1);
}
