//! Reservation rules against SQLite in memory, with a clock the tests move: generations
//! grow across repeated takeovers of one scope, and an agent's own stale reservation is
//! replaced without a takeover.

use std::time::Duration;

use coord_proto::ErrorCode;
use coord_proto::types::*;

use super::*;
use crate::store::sqlite::testing::Memory;

fn p(agent: &str, scope: &str, takeover: bool) -> ReserveParams {
    ReserveParams {
        agent: agent.into(),
        scope: scope.into(),
        task_id: Some("t".into()),
        takeover_stale: takeover,
        ..Default::default()
    }
}

/// Longer than any TTL: every reservation made before is stale afterwards.
const LATER: Duration = Duration::from_secs(25 * 3600);

#[test]
fn generations_grow_across_takeovers() {
    let m = Memory::new();
    let first = m.write(|tx, now| reserve(tx, now, p("a", "src/**", false))).unwrap();
    assert_eq!(first.reservation.generation, 1);
    for (i, agent) in ["b", "c", "a"].into_iter().enumerate() {
        m.clock.advance(LATER);
        let e = m.write(|tx, now| reserve(tx, now, p(agent, "src/**", false))).unwrap_err();
        assert_eq!(e.code(), Some(ErrorCode::ReservationStaleFound));
        let r = m.write(|tx, now| reserve(tx, now, p(agent, "src/**", true))).unwrap();
        assert_eq!(r.reservation.generation, i as i64 + 2);
        assert_eq!(r.taken_over.len(), 1);
    }
    // The holder's own stale reservation is replaced without a takeover.
    m.clock.advance(LATER);
    let own = m.write(|tx, now| reserve(tx, now, p("a", "src/**", false))).unwrap();
    assert_eq!((own.reservation.generation, own.taken_over.len(), own.renewed), (5, 0, false));
    let all = ReservationListParams { include_history: true, ..Default::default() };
    let history = m.read(|tx, now| list(tx, now, all)).unwrap().reservations;
    assert_eq!(history.len(), 5);
    assert_eq!(history.iter().filter(|r| r.state == ReservationState::Active).count(), 1);
}

#[test]
fn a_live_overlapping_exclusive_reservation_conflicts_and_a_shared_one_does_not() {
    let m = Memory::new();
    m.write(|tx, now| reserve(tx, now, p("a", "src/*.rs", false))).unwrap();
    let e = m.write(|tx, now| reserve(tx, now, p("b", "src/lib.*", false))).unwrap_err();
    assert_eq!(e.code(), Some(ErrorCode::ReservationConflict));
    let shared = |agent: &str| ReserveParams { shared: true, ..p(agent, "docs/**", false) };
    m.write(|tx, now| reserve(tx, now, shared("a"))).unwrap();
    m.write(|tx, now| reserve(tx, now, shared("b"))).unwrap();
}

/// Regression: `src/[ab].rs` covered `src/c.rs`, so the git guard refused a commit of
/// `src/c.rs` by another agent.
#[test]
fn the_git_check_honours_character_classes() {
    let m = Memory::new();
    m.write(|tx, now| reserve(tx, now, p("a", "src/[ab].rs", false))).unwrap();
    let check_paths = |path: &str| CheckPathsParams { agent: Some("b".into()), paths: vec![path.into()], offset: None };
    assert!(m.read(|tx, now| check(tx, now, check_paths("src/c.rs"))).unwrap().is_empty());
    assert_eq!(m.read(|tx, now| check(tx, now, check_paths("src/a.rs"))).unwrap().len(), 1);
}

#[test]
fn only_the_owner_releases() {
    let m = Memory::new();
    m.write(|tx, now| reserve(tx, now, p("a", "src", false))).unwrap();
    let by = |agent: &str| ReleaseParams { agent: agent.into(), scope: "src".into() };
    let e = m.write(|tx, now| release(tx, now, by("b"))).unwrap_err();
    assert_eq!(e.code(), Some(ErrorCode::ReleaseForbidden));
    m.write(|tx, now| release(tx, now, by("a"))).unwrap();
    let e = m.write(|tx, now| release(tx, now, by("a"))).unwrap_err();
    assert_eq!(e.code(), Some(ErrorCode::ReservationNotFound));
}
