//! The blocking MCP client: connect, handshake, calls, notifications and close.
//!
//! # Layers
//!
//! The client is four layers, and each names only those below it:
//!
//! 1. **`engine/`**: JSON-RPC over one [`Transport`](crate::Transport): request ids, the
//!    pending table and each calling thread's reusable slot, deadlines, progress,
//!    cancellation, the sending threads, the router with its bounded server-request pool, and
//!    the notification queue. It knows no protocol era, no cache and no subscription. The
//!    layers above plug in what answers the server's requests (`engine::pool::Serve`) and
//!    what hears of the rest (`engine::observer::Observer`: a notification tap that may keep
//!    what it takes, the responses no caller waits for, gaps, and the close).
//! 2. **`era/`**: the two protocol eras over the engine. `era::call::call` is the one entry of
//!    every request: the handshake era's path (a new session when the old one expired), or
//!    the stateless era's input rounds and tasks. Both reach the engine through `era::wire`,
//!    the one place the response cache is consulted.
//! 3. **`follow/`**: following a server: subscriptions in either era, and the response cache,
//!    fed by the engine through `follow::route::Follower`, its observer. It is installed
//!    when the client first subscribes or sends a request whose result may be cached, so a
//!    program that does neither has none of it in its binary.
//! 4. **The face**, this folder's own files: [`Client`] (`handle.rs` and the files of its
//!    methods), [`Options`] (every builder in `options.rs`), [`RequestOptions`], connecting,
//!    and the client's handlers for the server's requests with the checks before them, one
//!    path for both eras (`server_requests.rs`).
//!
//! `.ci/layers` keeps it so: nothing in `engine/` names a layer above it, no circle of files
//! is larger than four, and no function is longer than 80 lines.
//!
//! # Threads
//!
//! A call runs on the caller's own thread: it sends, waits and decodes there. Besides its
//! transport's threads (stdio: `umcp-stdio-reader`, `umcp-stdio-writer`, `umcp-stdio-stderr`
//! with `umcp-stdio-stderr-callback`, `umcp-stdio-monitor`, `umcp-stdio-wait`; Streamable
//! HTTP: a `umcp-http-get` stream and one `umcp-http-post` per streamed answer; legacy SSE:
//! `umcp-sse-reader`; their bounds are in each transport's docs), a connection has these,
//! each with a bounded queue:
//!
//! | thread | how many | its queue, and what happens when it is full |
//! |---|---|---|
//! | `umcp-router` | one | 64 server requests, callback notifications and late responses: the transport's reader waits for room (backpressure to the server), a notification at most a second before it is dropped and counted |
//! | `umcp-handler` | up to [`Options::with_handler_threads`] (4), each started when first needed | as many server requests again: beyond that the server gets a JSON-RPC error at once |
//! | `umcp-reply` | one, over HTTP only, once needed | 4 of the router's own replies (`ping`, the busy error): beyond that they are dropped |
//! | `umcp-send` | up to 4, each started when first needed | 4 sends: beyond that a request is sent on its caller's thread, a subscription's reopening is tried again shortly, and a cancellation notice is dropped |
//! | `umcp-connect-cancel` | one, while a cancelled connect closes its connection | none: the connect joins it before it returns |
//!
//! Closing waits up to two seconds for them all, then leaves one still inside a user's
//! handler to end on its own.
//!
//! # A request's way
//!
//! `client.call_tool("echo", args)` over stdio, in the handshake era:
//!
//! 1. **Caller.** `methods.rs` checks the server's capability and builds the params;
//!    `requests.rs` hands a `CallSpec` to `era::call::call`, which takes the handshake path
//!    (`era::lifecycle::call`: the params are moved into the message, not copied) to
//!    `engine::exchange`.
//! 2. **Pending slot.** The engine registers the request: a fresh id and progress token, the
//!    calling thread's reusable slot (`engine::pending`) entered in the pending table under
//!    that id, and the call's cancel handle.
//! 3. **Transport.** It sends on the caller's thread (on a sending thread only for a
//!    cancellable request whose transport's send waits for the server), through the era's
//!    wrapper (`era::transport`, which stamps stateless requests), to the transport, which
//!    writes the line to the server's input.
//! 4. **Reader.** The transport's reading thread hands the server's line to the engine's
//!    inbox (`engine::router`), which reads a successful response straight from its text,
//!    finds the slot by the id and puts the raw result there: no channel, no thread between.
//! 5. **Caller.** The caller, parked on its slot (the only one in flight yields a few times
//!    first), takes the result and decodes it once, straight into `CallToolResult`.
//!
//! A server's own request takes the other way up: reader, router thread, handler thread,
//! `server_requests.rs` (the handler and its checks), and the reply back through the
//! transport.

mod connect;
mod connect_cancel;
mod directory;
mod elicitation;
mod engine;
mod era;
mod errors;
mod follow;
mod fresh;
mod handle;
mod lists;
mod methods;
mod one_shot;
mod options;
mod requests;
mod sampling;
mod screen;
mod server_requests;
#[cfg(feature = "oauth")]
mod sign_in;
mod skills;
mod task_handle;
mod tasks;
mod tool_filter;
mod with_options;

pub use elicitation::ElicitationModes;
pub use engine::cancel::CancelHandle;
pub use engine::late::LateResponse;
pub use engine::notifications::Notifications;
pub(crate) use engine::queued;
pub use engine::queued::NOTIFICATION_BYTES;
pub use engine::request_options::RequestOptions;
pub use era::state::{Era, ProtocolMode, DEFAULT_MAX_INPUT_ROUNDS, DEFAULT_PROBE_TIMEOUT};
pub use era::verdicts::VerdictStore;
pub use follow::listen::Subscription;
pub use follow::state::{SubscriptionEnd, SubscriptionEvent};
pub use fresh::FreshTools;
pub use handle::Client;
#[cfg(feature = "http")]
pub use one_shot::one_shot;
pub use options::Options;
pub(crate) use screen::ToolScreen;
pub use skills::{LoadedSkill, SkillPolicy};
pub use task_handle::{TaskHandle, TaskStatus, ToolCall};
pub use tool_filter::ToolFilter;
pub use with_options::WithOptions;

#[cfg(test)]
mod tests {
    #[test]
    fn client_is_send_and_sync() {
        fn assert_send_sync<T: Send + Sync>() {}
        assert_send_sync::<super::Client>();
        assert_send_sync::<super::Notifications>();
        assert_send_sync::<super::CancelHandle>();
        assert_send_sync::<super::Subscription>();
        assert_send_sync::<crate::ManagedSubscription>();
    }
}
