//! MemoryInbox and Router semantics: backpressure, close, waking waiters, cancel-safe
//! receiving, and no message lost or repeated under concurrent senders.

use std::collections::HashSet;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use coord_inbox::{Closed, Inbox, MemoryInbox, Message, Router, SendError};
use serde_json::json;

fn msg(n: usize) -> Message {
    Message::with_payload("sender", "me", "count", json!({ "n": n }))
}

/// A guard against a hang, not a timing assumption: generous, and only ever hit by a bug.
async fn guarded<T>(f: impl std::future::Future<Output = T>) -> T {
    tokio::time::timeout(Duration::from_secs(30), f).await.expect("hung")
}

#[tokio::test]
async fn a_full_inbox_refuses_at_once_and_hands_the_message_back() {
    let inbox = MemoryInbox::with_capacity(2);
    inbox.send(msg(1)).unwrap();
    inbox.send(msg(2)).unwrap();
    match inbox.send(msg(3)) {
        Err(SendError::Full { message, capacity: 2 }) => assert_eq!(message.payload["n"], 3),
        other => panic!("expected Full, got {other:?}"),
    }
    assert_eq!(inbox.len(), 2);
    assert_eq!(inbox.poll().unwrap().unwrap().payload["n"], 1);
    inbox.send(msg(3)).unwrap();
}

#[tokio::test]
async fn the_default_capacity_is_256() {
    let inbox = MemoryInbox::new();
    for n in 0..256 {
        inbox.send(msg(n)).unwrap();
    }
    assert!(matches!(inbox.send(msg(256)), Err(SendError::Full { capacity: 256, .. })));
}

#[tokio::test]
async fn a_closed_inbox_refuses_sends_and_drains_before_reporting_closed() {
    let inbox = MemoryInbox::new();
    inbox.send(msg(1)).unwrap();
    inbox.close();
    inbox.close();
    assert!(inbox.is_closed());
    assert!(matches!(inbox.send(msg(2)), Err(SendError::Closed(_))));
    assert_eq!(inbox.recv().await.unwrap().payload["n"], 1);
    assert_eq!(inbox.recv().await, Err(Closed));
    assert_eq!(inbox.poll(), Err(Closed));
}

#[tokio::test]
async fn poll_returns_at_once() {
    let inbox = MemoryInbox::new();
    assert_eq!(inbox.poll(), Ok(None));
}

#[tokio::test(flavor = "current_thread")]
async fn close_wakes_every_waiter() {
    let inbox = MemoryInbox::new();
    let waiters: Vec<_> = (0..5)
        .map(|_| {
            let i = inbox.clone();
            tokio::spawn(async move { i.recv().await })
        })
        .collect();
    // On the current-thread runtime one yield runs every spawned task until it waits.
    tokio::task::yield_now().await;
    inbox.close();
    for w in waiters {
        assert_eq!(guarded(w).await.unwrap(), Err(Closed));
    }
}

#[tokio::test(flavor = "current_thread")]
async fn a_cancelled_recv_loses_nothing_and_passes_its_wakeup_on() {
    let inbox = MemoryInbox::new();
    let (a, b) = (inbox.clone(), inbox.clone());
    let first = tokio::spawn(async move { a.recv().await });
    let second = tokio::spawn(async move { b.recv().await });
    tokio::task::yield_now().await; // both wait now
    inbox.send(msg(7)).unwrap(); // wakes the first waiter...
    first.abort(); // ...which is cancelled before it runs
    assert!(first.await.unwrap_err().is_cancelled());
    assert_eq!(guarded(second).await.unwrap().unwrap().payload["n"], 7);

    // A recv dropped while pending takes nothing either.
    let pending = inbox.recv();
    drop(pending);
    inbox.send(msg(8)).unwrap();
    assert_eq!(inbox.recv().await.unwrap().payload["n"], 8);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_senders_lose_and_repeat_nothing() {
    const SENDERS: usize = 8;
    const EACH: usize = 2000;
    let inbox = MemoryInbox::with_capacity(64);
    let mut tasks = Vec::new();
    for s in 0..SENDERS {
        let i = inbox.clone();
        tasks.push(tokio::spawn(async move {
            for k in 0..EACH {
                let mut m = msg(s * EACH + k);
                // Backpressure: retry the same message until there is room.
                loop {
                    match i.send(m) {
                        Ok(()) => break,
                        Err(SendError::Full { message, .. }) => {
                            m = *message;
                            tokio::task::yield_now().await;
                        }
                        Err(e) => panic!("{e}"),
                    }
                }
            }
        }));
    }
    // Two receivers race for the messages, one of them through cancelled selects.
    let r1 = {
        let i = inbox.clone();
        tokio::spawn(async move {
            let mut got = Vec::new();
            while let Ok(m) = i.recv().await {
                got.push(m.payload["n"].as_u64().unwrap());
            }
            got
        })
    };
    let r2 = {
        let i = inbox.clone();
        tokio::spawn(async move {
            let mut got = Vec::new();
            loop {
                tokio::select! {
                    m = i.recv() => match m {
                        Ok(m) => got.push(m.payload["n"].as_u64().unwrap()),
                        Err(_) => return got,
                    },
                    _ = tokio::task::yield_now() => {}
                }
            }
        })
    };
    for t in tasks {
        guarded(t).await.unwrap();
    }
    inbox.close();
    let mut all = guarded(r1).await.unwrap();
    all.extend(guarded(r2).await.unwrap());
    assert_eq!(all.len(), SENDERS * EACH, "lost or repeated messages");
    let unique: HashSet<u64> = all.into_iter().collect();
    assert_eq!(unique.len(), SENDERS * EACH);
}

#[tokio::test]
async fn the_router_creates_on_first_use_and_reuses() {
    let made = Arc::new(AtomicUsize::new(0));
    let m = made.clone();
    let router = Router::with_factory(Arc::new(move |_: &str| {
        m.fetch_add(1, Ordering::SeqCst);
        Arc::new(MemoryInbox::with_capacity(4)) as Arc<dyn Inbox>
    }));
    router.send("b", msg(1)).unwrap();
    router.send("a", msg(2)).unwrap();
    router.send("b", msg(3)).unwrap();
    assert_eq!(made.load(Ordering::SeqCst), 2);
    assert!(Arc::ptr_eq(&router.inbox("b"), &router.inbox("b")));
    assert_eq!(router.agent_names(), vec!["a", "b"]);
    let b = router.inbox("b");
    assert_eq!(b.len(), 2);
    assert_eq!(b.recv().await.unwrap().to, "me", "a message's own recipient is kept");
}

#[tokio::test]
async fn remove_keeps_the_inbox_open_and_remove_and_close_closes_it() {
    let router = Router::new();
    let kept = router.inbox("a");
    let removed = router.remove("a").unwrap();
    assert!(Arc::ptr_eq(&kept, &removed));
    assert!(!kept.is_closed());
    assert!(router.agent_names().is_empty());
    assert!(!Arc::ptr_eq(&kept, &router.inbox("a")), "a new inbox after removal");

    let b = router.inbox("b");
    router.remove_and_close("b");
    assert!(b.is_closed());
    router.remove_and_close("nobody");
}

#[tokio::test]
async fn closing_the_router_closes_every_inbox_and_wakes_their_waiters() {
    let router = Router::new();
    let a = router.inbox("a");
    let waiting = tokio::spawn(async move { a.recv().await });
    tokio::task::yield_now().await;
    let b = router.inbox("b");
    router.close();
    assert!(b.is_closed());
    assert_eq!(guarded(waiting).await.unwrap(), Err(Closed));
}
