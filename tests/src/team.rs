//! A team with credentials required, for the authority suites: the lead `leader` and the
//! workers `w-a` and `w-b`, each registered with a secret, and helpers to act as each of
//! them through the CLIs or a raw connection.

use serde_json::Value;

use crate::{Daemon, Out, Project, RawConn, ok, register};

const ENV: &str = coord_proto::types::AGENT_SECRET_ENV;

/// A project whose daemon runs, with `leader`, `w-a` and `w-b` registered.
pub struct Team {
    pub d: Daemon,
    pub p: Project,
    secrets: Vec<(&'static str, String)>,
}

impl Team {
    /// The team, with credentials not yet required: build what a test needs as anyone,
    /// then call [`Team::require_credentials`].
    pub fn new() -> Team {
        let p = Project::new();
        let d = p.serve();
        let secrets = ["leader", "w-a", "w-b"].into_iter().map(|a| (a, register(&p, a))).collect();
        Team { d, p, secrets }
    }

    /// Require credentials, `leader` being the lead.
    pub fn require_credentials(&self) {
        ok(&self.p, &["init", "--require-credentials", "--lead", "leader"]);
    }

    /// The secret of `agent`.
    pub fn secret(&self, agent: &str) -> &str {
        &self.secrets.iter().find(|(a, _)| *a == agent).unwrap_or_else(|| panic!("no agent {agent}")).1
    }

    /// `inbox ARGS --json` with `agent`'s secret.
    pub fn inbox(&self, agent: &str, args: &[&str]) -> Out {
        self.p.inbox().args(args).json_flag().env(ENV, self.secret(agent)).run()
    }

    /// `orch ARGS --json` with `agent`'s secret.
    pub fn orch(&self, agent: &str, args: &[&str]) -> Out {
        self.p.orch().args(args).json_flag().env(ENV, self.secret(agent)).run()
    }

    /// A raw connection authenticated as `agent`.
    pub fn conn(&self, agent: &str) -> RawConn {
        RawConn::connect_as(&self.d.socket, agent, self.secret(agent))
    }

    /// A raw connection authenticated as nobody.
    pub fn anonymous(&self) -> RawConn {
        RawConn::connect(&self.d.socket)
    }

    /// Run R1 (the lead's) with thread tasks `tasks`, each `(task, worker)`, dispatched; the
    /// thread of each, in order. Made before credentials are required.
    pub fn dispatched(&self, tasks: &[(&str, &str)]) -> Vec<String> {
        let orch = |args: &[&str]| self.p.orch().args(args).json_flag().run().ok().json();
        orch(&["run", "create", "--goal", "G", "--id", "R1", "--created-by", "leader"]);
        tasks
            .iter()
            .map(|(task, worker)| {
                orch(&["task", "add", "--run", "R1", "--id", task, "--title", task, "--kind", "thread"]);
                let d = orch(&["dispatch", "--run", "R1", "--task", task, "--to", worker]);
                d["dispatches"][0]["thread_id"].as_str().expect("thread_id").to_string()
            })
            .collect()
    }
}

impl Default for Team {
    fn default() -> Self {
        Self::new()
    }
}

/// The `error.data.code` of a raw reply (null when it succeeded).
pub fn code(reply: &Value) -> &Value {
    &reply["error"]["data"]["code"]
}
