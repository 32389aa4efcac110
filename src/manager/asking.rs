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

use super::options::ManagerOptions;

type Handler = dyn Fn(&str, ElicitRequestParams) -> Result<ElicitResult, ErrorObject> + Send + Sync;

/// The manager's elicitation handler, shared by every server's client.
#[derive(Clone)]
pub(crate) struct ServerElicitation(Arc<Handler>);

impl ServerElicitation {
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

impl ManagerOptions {
    /// Answers every server's `elicitation/create` with `handler`, called with the name of
    /// the server that asks (its [`ServerConfig::name`](crate::ServerConfig::name)) and the
    /// request. The spec has a client make clear to the user which server is asking; a
    /// handler set in [`with_client_options`](Self::with_client_options) is not told.
    ///
    /// It takes the place of that handler, for every server. The modes declared are still
    /// those of the client options ([`Options::with_elicitation_modes`]).
    ///
    /// ```
    /// use umcp::types::{ElicitRequestParams, ElicitResult};
    /// use umcp::ManagerOptions;
    ///
    /// let options = ManagerOptions::default().with_elicitation_handler(|server, request| {
    ///     log::info!("server `{server}` asks: {}", request.message());
    ///     match request {
    ///         ElicitRequestParams::Form(form) => Ok(ElicitResult::accept_defaults(&form)),
    ///         _ => Ok(ElicitResult::decline()),
    ///     }
    /// });
    /// # let _ = options;
    /// ```
    pub fn with_elicitation_handler<F>(mut self, handler: F) -> ManagerOptions
    where
        F: Fn(&str, ElicitRequestParams) -> Result<ElicitResult, ErrorObject>
            + Send
            + Sync
            + 'static,
    {
        self.elicitation = Some(ServerElicitation(Arc::new(handler)));
        self
    }

    /// Answers every server's `sampling/createMessage` with `handler`, called with the name of
    /// the server that asks and the request: a host shows its user whose prompt is about to
    /// go to the model, and may treat servers differently. A handler set in
    /// [`with_client_options`](Self::with_client_options) is not told.
    ///
    /// It takes the place of that handler, for every server; whether tools may be offered
    /// is still the client options' ([`Options::with_sampling_tools`]).
    ///
    /// ```
    /// use umcp::jsonrpc::{ErrorCode, ErrorObject};
    /// use umcp::ManagerOptions;
    ///
    /// let options = ManagerOptions::default().with_sampling_handler(|server, request| {
    ///     log::info!("server `{server}` asks the model: {:?}", request.messages.len());
    ///     Err(ErrorObject::new(ErrorCode::INVALID_REQUEST, format!("`{server}` may not sample")))
    /// });
    /// # let _ = options;
    /// ```
    pub fn with_sampling_handler<F>(mut self, handler: F) -> ManagerOptions
    where
        F: Fn(&str, CreateMessageRequestParams) -> Result<CreateMessageResult, ErrorObject>
            + Send
            + Sync
            + 'static,
    {
        self.sampling = Some(ServerSampling(Arc::new(handler)));
        self
    }
}
