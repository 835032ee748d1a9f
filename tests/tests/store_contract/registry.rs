//! The storage contract's registry cases: agents (their `last_seen_at` touches too) and
//! reservations, read back as written on both backends.

use super::*;

/// An agent and a reservation.
pub(super) async fn registry_records_read_back_as_written(s: &Opened) {
    let store = &*s.store;
    let agent = Agent {
        agent_id: "w".into(),
        display_name: "Worker".into(),
        role: "worker".into(),
        status: parse("busy"),
        registered: true,
        created_at: text(0),
        last_seen_at: some(&text(1)),
        version: 7,
    };
    let reservation = Reservation {
        reservation_id: "V1".into(),
        scope: "src/**".into(),
        agent_id: "w".into(),
        task_id: "K1".into(),
        shared: true,
        state: parse("active"),
        stale: false,
        generation: 5,
        created_at: text(2),
        expires_at: text(60_000),
        released_at: None,
    };
    let (a, v) = (agent.clone(), reservation.clone());
    write(store, move |tx| {
        tx.agents_mut().agent_insert(&a)?;
        tx.reservations_mut().reservation_insert(&v)
    })
    .await
    .unwrap();
    let (got, active) =
        read(store, |tx| Ok((tx.agents().agent("w")?.unwrap(), tx.reservations().reservations_active()?)))
            .await
            .unwrap();
    assert_eq!(got, agent);
    assert_eq!(active.len(), 1);
    assert_eq!(active[0].reservation, reservation);
    assert_eq!(active[0].expires, ts(60_000));
}

/// `agents_touch` (one statement for a batch's touches on SQLite): every known agent's
/// `last_seen_at` advances; the unknown ones are returned, in the order given, untouched.
pub(super) async fn touching_agents_advances_the_known_ones_and_names_the_unknown(s: &Opened) {
    let store = &*s.store;
    write(store, |tx| {
        for id in ["a1", "a2"] {
            let a = Agent {
                agent_id: id.into(),
                display_name: String::new(),
                role: String::new(),
                status: parse("idle"),
                registered: true,
                created_at: text(0),
                last_seen_at: None,
                version: 1,
            };
            tx.agents_mut().agent_insert(&a)?;
        }
        Ok(())
    })
    .await
    .unwrap();
    let missing = write(store, |tx| tx.agents_mut().agents_touch(&["z9", "a2", "b7", "a1"], ts(5))).await.unwrap();
    assert_eq!(missing, vec!["z9".to_string(), "b7".to_string()]);
    let seen = read(store, |tx| {
        let seen = |id: &str| tx.agents().agent(id).map(|a| a.map(|a| a.last_seen_at));
        Ok((seen("a1")?, seen("a2")?, seen("z9")?))
    })
    .await
    .unwrap();
    assert_eq!(seen, (Some(some(&text(5))), Some(some(&text(5))), None));
}
