//! The JSON-RPC interface, declared once, one namespace per file. For each namespace
//! jsonrpsee generates a `…ApiServer` trait (the daemon implements it and merges the
//! modules into one) and a `…ApiClient` trait (implemented for every jsonrpsee client, so
//! `coord-client` and any Rust program call the methods directly).
//!
//! Every method takes exactly one params object. On the wire `params` is that object
//! (by name); a one-element array holding it is accepted too, which is what the generated
//! clients send. `docs/protocol.md` documents each method for other languages.
//!
//! Adding a method: declare it in its namespace here (with its types in `types/`), give it
//! its entry in [`crate::authority::TABLE`] (who may call it), handle it in the daemon's
//! matching `api/` file, and document it in `docs/protocol.md`.

mod agents;
mod control;
mod dashboard;
mod events;
mod inbox;
mod launch;
mod mail;
mod orch;
mod orch_queue;
mod search;
mod system;
mod view;

pub use agents::{AgentsApiClient, AgentsApiServer};
pub use control::{ControlApiClient, ControlApiServer};
pub use dashboard::{DashboardApiClient, DashboardApiServer};
pub use events::{EventsApiClient, EventsApiServer};
pub use inbox::{InboxApiClient, InboxApiServer};
pub use launch::{LaunchApiClient, LaunchApiServer};
pub use mail::{MailApiClient, MailApiServer};
pub use orch::{OrchApiClient, OrchApiServer};
pub use orch_queue::{OrchQueueApiClient, OrchQueueApiServer};
pub use search::{SearchApiClient, SearchApiServer};
pub use system::{SystemApiClient, SystemApiServer};
pub use view::{ViewApiClient, ViewApiServer};

/// The subscription behind every wait.
pub const EVENTS_SUBSCRIBE: &str = "events.subscribe";
/// The notification that carries each event of an `events.subscribe` subscription.
pub const EVENTS_NOTIFICATION: &str = "events.event";
/// Ends an `events.subscribe` subscription.
pub const EVENTS_UNSUBSCRIBE: &str = "events.unsubscribe";
/// The subscription whose notifications carry arrays of events (the dashboard's).
pub const EVENTS_SUBSCRIBE_BATCHED: &str = "events.subscribeBatched";
/// The notification that carries each batch of an `events.subscribeBatched` subscription.
pub const EVENTS_BATCH_NOTIFICATION: &str = "events.batch";
/// Ends an `events.subscribeBatched` subscription.
pub const EVENTS_UNSUBSCRIBE_BATCHED: &str = "events.unsubscribeBatched";

/// The live feed of progress lines.
pub const PROGRESS_SUBSCRIBE: &str = "progress.subscribe";
/// The notification that carries each line of a `progress.subscribe` subscription.
pub const PROGRESS_NOTIFICATION: &str = "progress.line";
/// Ends a `progress.subscribe` subscription.
pub const PROGRESS_UNSUBSCRIBE: &str = "progress.unsubscribe";
