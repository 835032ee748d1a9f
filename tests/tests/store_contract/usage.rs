//! The storage contract's usage cases: launched sessions' usage and budgets and runs'
//! budgets (`launch_usage`, `run_budgets`), read back as written and replaced in place.

use super::*;

fn session_usage(id: &str, task: &str, at: i64, input: i64, cost: f64) -> SessionUsage {
    SessionUsage {
        session_id: id.into(),
        run_id: "R1".into(),
        task_id: task.into(),
        agent: "w".into(),
        usage: Usage {
            input_tokens: input,
            output_tokens: 20,
            cache_read_tokens: 30,
            cache_write_tokens: 40,
            cost_usd: cost,
        },
        budget: Budget { max_cost_usd: Some(1.25), max_tokens: None },
        updated_at: text(at),
    }
}

/// Two sessions' usage and a run's budget; a second save replaces, never adds.
pub(super) async fn usage_records_read_back_as_written(s: &Opened) {
    let store = &*s.store;
    let (a, b) = (session_usage("S1", "K1", 1, 10, 0.123456), session_usage("S2", "K2", 2, 5, 2.5));
    let budget = RunBudget {
        run_id: "R1".into(),
        budget: Budget { max_cost_usd: Some(3.0), max_tokens: Some(1 << 40) },
        reached_at: some(&text(3)),
    };
    let (a2, b2, r2) = (a.clone(), b.clone(), budget.clone());
    write(store, move |tx| {
        tx.launches_mut().usage_save(&b2)?;
        tx.launches_mut().usage_save(&a2)?;
        tx.launches_mut().run_budget_save(&r2)
    })
    .await
    .unwrap();
    let got = read(store, |tx| {
        Ok((tx.launches().usage("S1")?, tx.launches().usage_of_run("R1")?, tx.launches().run_budget("R1")?))
    })
    .await
    .unwrap();
    assert_eq!(got.0, Some(a.clone()));
    assert_eq!(got.1, vec![a.clone(), b.clone()], "oldest change first");
    assert_eq!(got.2, Some(budget.clone()));

    let mut later = session_usage("S1", "K1", 4, 99, 0.5);
    later.budget = Budget::default();
    let cleared = RunBudget { reached_at: None, budget: Budget::default(), ..budget };
    let (l, c) = (later.clone(), cleared.clone());
    write(store, move |tx| {
        tx.launches_mut().usage_save(&l)?;
        tx.launches_mut().run_budget_save(&c)
    })
    .await
    .unwrap();
    let got = read(store, |tx| {
        Ok((
            tx.launches().usage_of_run("R1")?,
            tx.launches().run_budget("R1")?,
            tx.launches().usage("S9")?,
            tx.launches().run_budget("R9")?,
        ))
    })
    .await
    .unwrap();
    assert_eq!(got.0, vec![b, later]);
    assert_eq!(got.1, Some(cleared));
    assert_eq!((got.2, got.3), (None, None));
}
