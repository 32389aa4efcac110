//! Elicitation and sampling through a manager: one handler for every server, told which server
//! asks, since the user must be shown who wants the information, or whose prompt goes to the
//! model.

use std::fmt;
use std::sync::Arc;

use crate::client::Options;
use crate::jsonrpc::ErrorObject;
use crate::types::{
    CreateMessageRequestParams, CreateMessageResult, ElicitRequestParams, ElicitResult,
};

type Handler = dyn Fn(&str, ElicitRequestParams) -> Result<ElicitResult, ErrorObject> + Send + Sync;

/// The manager's elicitation handler, shared by every server's client.
#[derive(Clone)]
pub(crate) struct ServerElicitation(Arc<Handler>);

impl ServerElicitation {
    /// The handler `ManagerOptions::with_elicitation_handler` was given.
    pub(crate) fn new<F>(handler: F) -> ServerElicitation
    where
        F: Fn(&str, ElicitRequestParams) -> Result<ElicitResult, ErrorObject>
            + Send
            + Sync
            + 'static,
    {
        ServerElicitation(Arc::new(handler))
    }

    /// `options` with an elicitation handler that passes `server`'s name to this one.
    pub(crate) fn install(&self, options: Options, server: &str) -> Options {
        let handler = Arc::clone(&self.0);
        let server = server.to_owned();
        options.with_elicitation_handler(move |request| handler(&server, request))
    }
}

impl fmt::Debug for ServerElicitation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ServerElicitation")
    }
}

type Sampler = dyn Fn(&str, CreateMessageRequestParams) -> Result<CreateMessageResult, ErrorObject>
    + Send
    + Sync;

/// The manager's sampling handler, shared by every server's client.
#[derive(Clone)]
pub(crate) struct ServerSampling(Arc<Sampler>);

impl ServerSampling {
    /// The handler `ManagerOptions::with_sampling_handler` was given.
    pub(crate) fn new<F>(handler: F) -> ServerSampling
    where
        F: Fn(&str, CreateMessageRequestParams) -> Result<CreateMessageResult, ErrorObject>
            + Send
            + Sync
            + 'static,
    {
        ServerSampling(Arc::new(handler))
    }

    /// `options` with a sampling handler that passes `server`'s name to this one.
    pub(crate) fn install(&self, options: Options, server: &str) -> Options {
        let handler = Arc::clone(&self.0);
        let server = server.to_owned();
        options.with_sampling_handler(move |request| handler(&server, request))
    }
}

impl fmt::Debug for ServerSampling {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ServerSampling")
    }
}
