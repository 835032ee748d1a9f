//! Leases: one winner among racing claimers, expiry, renewal and fencing by token.

use coord_tests::{Project, finish, thread_id, wait_until};

#[test]
fn many_concurrent_claimers_exactly_one_wins() {
    let p = Project::new();
    let _d = p.serve();
    let thr = thread_id(
        &p.inbox().args(["send", "--from", "lead", "--to", "pool", "--summary", "race", "--json"]).run().ok().json(),
    );
    let claimers: Vec<_> = (0..16)
        .map(|i| p.inbox().args(["claim", "--agent", &format!("w{i}"), "--thread", &thr, "--json"]).spawn())
        .collect();
    let outs: Vec<_> = claimers.into_iter().map(finish).collect();
    let winners: Vec<_> = outs.iter().filter(|o| o.code == 0).collect();
    assert_eq!(winners.len(), 1, "exactly one winner: {outs:#?}");
    for o in outs.iter().filter(|o| o.code != 0) {
        assert_eq!(o.code, 20, "{o:?}");
        assert_eq!(o.json()["error"]["code"], "lease_conflict");
    }
    let winner = winners[0].json()["lease"]["agent_id"].clone();
    let show = p.inbox().args(["show", "--thread", &thr, "--json"]).run().ok().json();
    assert_eq!(show["thread"]["assigned_to"], winner);
    assert_eq!(show["thread"]["lease"]["generation"], 1);
}

#[test]
fn an_expired_lease_no_longer_blocks_claim() {
    let p = Project::new();
    let _d = p.serve();
    let thr = thread_id(
        &p.inbox().args(["send", "--from", "lead", "--to", "w1", "--summary", "t", "--json"]).run().ok().json(),
    );
    let first = p
        .inbox()
        .args(["claim", "--agent", "w1", "--thread", &thr, "--lease-seconds", "1", "--json"])
        .run()
        .ok()
        .json();
    wait_until(first["lease"]["expires_at"].as_str().unwrap());

    // The holder cannot act on an expired lease ...
    let late = p
        .inbox()
        .args(["update", "--agent", "w1", "--thread", &thr, "--summary", "late", "--json"])
        .run()
        .code(20)
        .json();
    assert_eq!(late["error"]["code"], "lease_expired");
    let renew = p.inbox().args(["renew", "--agent", "w1", "--thread", &thr, "--json"]).run().code(20).json();
    assert_eq!(renew["error"]["code"], "lease_expired");
    let show = p.inbox().args(["show", "--thread", &thr, "--json"]).run().ok().json();
    assert_eq!(show["thread"]["lease"]["active"], false);

    // ... and another agent may take it, with the next fencing generation.
    let second = p.inbox().args(["claim", "--agent", "w2", "--thread", &thr, "--json"]).run().ok().json();
    assert_eq!(second["lease"]["generation"], 2);
    assert_eq!(second["thread"]["assigned_to"], "w2");
    let old = p
        .inbox()
        .args(["update", "--agent", "w1", "--thread", &thr, "--summary", "zombie", "--json"])
        .run()
        .code(20)
        .json();
    assert_eq!(old["error"]["code"], "not_lease_holder");
}

#[test]
fn renew_extends_and_tokens_fence_off_stale_processes() {
    let p = Project::new();
    let _d = p.serve();
    let thr = thread_id(
        &p.inbox().args(["send", "--from", "lead", "--to", "w1", "--summary", "t", "--json"]).run().ok().json(),
    );
    let a = p
        .inbox()
        .args(["claim", "--agent", "w1", "--thread", &thr, "--lease-seconds", "60", "--json"])
        .run()
        .ok()
        .json();
    let token_a = a["lease"]["lease_token"].as_str().unwrap().to_string();
    let renewed = p
        .inbox()
        .args([
            "renew",
            "--agent",
            "w1",
            "--thread",
            &thr,
            "--lease-seconds",
            "600",
            "--lease-token",
            &token_a,
            "--json",
        ])
        .run()
        .ok()
        .json();
    assert!(renewed["lease"]["expires_at"].as_str() > a["lease"]["expires_at"].as_str());
    assert_eq!(renewed["lease"]["lease_token"], token_a.as_str());
    assert_eq!(renewed["lease"]["generation"], 1);

    // Renewing never shortens a lease.
    let short = p
        .inbox()
        .args(["renew", "--agent", "w1", "--thread", &thr, "--lease-seconds", "5", "--json"])
        .run()
        .ok()
        .json();
    assert_eq!(short["lease"]["expires_at"], renewed["lease"]["expires_at"]);

    // The same agent restarts and claims again: a new grant replaces the old one.
    let b = p.inbox().args(["claim", "--agent", "w1", "--thread", &thr, "--json"]).run().ok().json();
    let token_b = b["lease"]["lease_token"].as_str().unwrap().to_string();
    assert_ne!(token_a, token_b);
    assert_eq!(b["lease"]["generation"], 2);

    // The stale process (old token) is refused; the new one proceeds.
    for cmd in ["update", "done", "fail"] {
        let stale = p
            .inbox()
            .args([cmd, "--agent", "w1", "--thread", &thr, "--summary", "x", "--lease-token", &token_a, "--json"])
            .run()
            .code(20)
            .json();
        assert_eq!(stale["error"]["code"], "stale_lease", "{cmd}");
    }
    let stale_renew = p
        .inbox()
        .args(["renew", "--agent", "w1", "--thread", &thr, "--lease-token", &token_a, "--json"])
        .run()
        .code(20)
        .json();
    assert_eq!(stale_renew["error"]["code"], "stale_lease");
    p.inbox()
        .args(["update", "--agent", "w1", "--thread", &thr, "--summary", "fresh", "--lease-token", &token_b])
        .run()
        .ok();
    p.inbox()
        .args(["fail", "--agent", "w1", "--thread", &thr, "--summary", "gave up", "--lease-token", &token_b])
        .run()
        .ok();
    let show = p.inbox().args(["show", "--thread", &thr, "--json"]).run().ok().json();
    assert_eq!(show["thread"]["status"], "failed");
}

#[test]
fn cancel_releases_the_lease_and_tells_the_holder() {
    let p = Project::new();
    let _d = p.serve();
    let thr = thread_id(
        &p.inbox().args(["send", "--from", "lead", "--to", "w1", "--summary", "t", "--json"]).run().ok().json(),
    );
    p.inbox().args(["claim", "--agent", "w1", "--thread", &thr]).run().ok();
    let c = p
        .inbox()
        .args(["cancel", "--agent", "lead", "--thread", &thr, "--reason", "obsolete", "--json"])
        .run()
        .ok()
        .json();
    assert_eq!(c["thread"]["status"], "cancelled");
    assert_eq!(c["message"]["kind"], "control");
    assert_eq!(c["message"]["to_agent"], "w1");
    assert_eq!(c["thread"]["lease"]["active"], false);
    p.inbox().args(["update", "--agent", "w1", "--thread", &thr, "--summary", "x"]).run().code(30);
}
