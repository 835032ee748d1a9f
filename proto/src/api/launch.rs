//! `launch.*`: what a launch bridge records about the worker sessions it starts, so any
//! launcher can report them and every view can show them.

use jsonrpsee::core::RpcResult;
use jsonrpsee::proc_macros::rpc;

use crate::types::*;

#[rpc(server, client)]
pub trait LaunchApi {
    /// Record a session just started for an attempt (`launch.started`).
    ///
    /// Events: `launch.started`.
    #[method(name = "launch.sessionStart")]
    async fn session_start(&self, params: SessionStartParams) -> RpcResult<LaunchSession>;

    /// Record how a session ended (`launch.exited`), failing its attempt when asked and its
    /// thread is still open.
    ///
    /// Events: `launch.exited` (and, with `fail_attempt`, `thread.failed` and the task's events).
    #[method(name = "launch.sessionExit")]
    async fn session_exit(&self, params: SessionExitParams) -> RpcResult<SessionExitResult>;

    /// Sessions, oldest first.
    #[method(name = "launch.sessionList")]
    async fn session_list(&self, params: SessionListParams) -> RpcResult<SessionsResult>;
}
