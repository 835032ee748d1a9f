//! `mail.*`, `peers.*` and `session.*`: per-recipient mail with read/ack, the session
//! mailbox (delivery into running sessions), linked peer tasks and hook installation.

use jsonrpsee::core::RpcResult;
use jsonrpsee::proc_macros::rpc;

use crate::types::*;

#[rpc(server, client)]
pub trait MailApi {
    /// An agent's mail, newest first.
    ///
    /// The read advances `agent`'s `last_seen_at`.
    #[method(name = "mail.list")]
    async fn mail_list(&self, params: MailParams) -> RpcResult<MailResult>;

    /// Mark one mail row read for its recipient (delivering it if it was still queued).
    ///
    /// Events: `mail.read` if it was unread.
    #[method(name = "mail.read")]
    async fn mail_read(&self, params: MailRef) -> RpcResult<MailItemResult>;

    /// Acknowledge one mail row for its recipient.
    ///
    /// Events: `mail.acked` unless already acked.
    #[method(name = "mail.ack")]
    async fn mail_ack(&self, params: MailRef) -> RpcResult<MailItemResult>;

    /// Deliver queued mail (marks it delivered; a message is delivered once).
    ///
    /// Events: `mail.delivered` if something was delivered.
    #[method(name = "mail.check")]
    async fn mail_check(&self, params: CheckParams) -> RpcResult<CheckResult>;

    /// Count queued mail; with `remind`, also hand out (once) what nobody was reminded of.
    #[method(name = "mail.pending")]
    async fn mail_pending(&self, params: PendingParams) -> RpcResult<PendingResult>;

    /// The sender takes back a message that was not delivered yet.
    ///
    /// Events: `mail.withdrawn`.
    #[method(name = "mail.withdraw")]
    async fn mail_withdraw(&self, params: MailRef) -> RpcResult<WithdrawResult>;

    /// Link two tasks so that their sessions can address each other (`inbox.send` with
    /// `to_peer`). Symmetric and idempotent; `event_id` is null when the link already
    /// existed.
    ///
    /// Events: `peers.linked` if a link was added.
    #[method(name = "peers.link")]
    async fn peers_link(&self, params: PeerLinkParams) -> RpcResult<PeersResult>;

    /// The peers linked to a task.
    #[method(name = "peers.list")]
    async fn peers_list(&self, params: PeerListParams) -> RpcResult<PeersResult>;

    /// Write agent hooks and instructions into a worktree.
    #[method(name = "session.installHooks")]
    async fn install_hooks(&self, params: InstallHooksParams) -> RpcResult<InstallHooksResult>;
}
