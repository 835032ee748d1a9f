//! A `DaemonInbox` whose daemon dies and is not restarted by anyone else: its feed
//! reconnects with `Client::connect`, which starts a new daemon (autostart), and resumes
//! after its cursor. A file of its own: it points `COORDD_BIN` at the built daemon for this
//! process, which no other test here may race with.

use std::time::Duration;

use coord_client::ConnectOptions;
use coord_inbox::{DaemonInbox, DaemonInboxOptions, Inbox, Message};
use coord_proto::types::TaskAssignmentPayload;
use coord_tests::{Project, bin};

async fn guarded<T>(f: impl std::future::Future<Output = T>) -> T {
    tokio::time::timeout(Duration::from_secs(120), f).await.expect("hung")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_feed_starts_a_new_daemon_when_the_old_one_died() {
    // SAFETY: the only test of this binary, set before any thread reads the environment.
    unsafe { std::env::set_var("COORDD_BIN", bin("coordd")) };
    let p = Project::new();
    let d = p.serve();
    let mut connect = ConnectOptions::for_dir(None, p.path());
    connect.autostart = true;
    let inbox = DaemonInbox::open(DaemonInboxOptions::new(connect, "w1")).await.unwrap();
    let task = |n: &str| TaskAssignmentPayload { task_id: n.into(), subject: n.into(), ..Default::default() };
    inbox.send(Message::new("lead", "w1", &task("before"))).unwrap();
    assert_eq!(guarded(inbox.recv()).await.unwrap().payload["task_id"], "before");
    d.kill9();
    // Nobody restarts the daemon: the inbox's own reconnection does (autostart).
    inbox.send(Message::new("lead", "w1", &task("after"))).unwrap();
    guarded(inbox.flush()).await.unwrap();
    let got = guarded(inbox.recv()).await.unwrap();
    assert_eq!(got.payload["task_id"], "after");
    assert_eq!(inbox.poll().unwrap(), None, "nothing twice");
    let status = p.coordd().args(["status", "--json"]).run();
    assert_eq!(status.code, 0, "a daemon runs again: {status:?}");
}
