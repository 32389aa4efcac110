//! The client's answers to what a server asks of it (`roots/list`, `sampling/createMessage`,
//! `elicitation/create`), by one path in both eras: the checks before a handler, the handler,
//! and what a refusal becomes. In the handshake era the server sends a request, which the
//! engine's pool answers ([`Serve`]) with the result or a JSON-RPC error; in the stateless era
//! it asks for input within a call's result, which the input rounds answer ([`Inputs`]) with
//! the result, or by failing the call (an input response cannot carry an error).

use std::sync::Arc;

use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::{Map, Value};

use crate::error::{Error, Result, Unsupported};
use crate::jsonrpc::{ErrorCode, ErrorObject};
use crate::types::{
    CreateMessageRequestParams, CreateMessageResult, ElicitRequestParams, ElicitResult,
    ListRootsResult,
};

use super::elicitation::{refuse_undeclared_mode, ElicitationModes};
use super::engine::pool::{Serve, StartThreads};
use super::era::session::Inputs;
use super::era::state::EraState;
use super::sampling::{refuse_unbalanced_tools, refuse_undeclared_tools};

/// A handler for one kind of server request as the client keeps it: the params' checks, their
/// decoding, the user's handler and the result's encoding in one closure, built by the
/// builder that sets the handler ([`sampling`], [`elicitation`], [`roots`]). A program that
/// sets none of them links none of that code.
pub(crate) type Answerer =
    Arc<dyn Fn(Option<Value>, &Declared) -> std::result::Result<Value, Refusal> + Send + Sync>;

/// What the client declared beyond having a handler, which the checks before it read.
#[derive(Clone, Copy, Default)]
pub(crate) struct Declared {
    /// Whether `sampling.tools` is declared.
    pub(crate) sampling_tools: bool,
    /// The modes declared with the elicitation handler.
    pub(crate) elicitation_modes: ElicitationModes,
}

/// The `sampling/createMessage` answerer around `handler`: a request using tools when
/// `sampling.tools` is not declared, or whose tool uses and results do not balance, is refused
/// before the handler runs.
pub(crate) fn sampling<F>(handler: F) -> Answerer
where
    F: Fn(CreateMessageRequestParams) -> std::result::Result<CreateMessageResult, ErrorObject>
        + Send
        + Sync
        + 'static,
{
    Arc::new(move |params, declared| {
        refuse_undeclared_tools(declared.sampling_tools, params.as_ref()).map_err(|error| {
            Refusal::Undeclared {
                error,
                asking: " with tools",
                builder: "with_sampling_tools",
            }
        })?;
        refuse_unbalanced_tools(params.as_ref()).map_err(Refusal::Broken)?;
        encode(handler(decode(params)?).map_err(Refusal::Handler)?)
    })
}

/// The `elicitation/create` answerer around `handler`: a request of a mode not declared is
/// refused before the handler runs.
pub(crate) fn elicitation<F>(handler: F) -> Answerer
where
    F: Fn(ElicitRequestParams) -> std::result::Result<ElicitResult, ErrorObject>
        + Send
        + Sync
        + 'static,
{
    Arc::new(move |params, declared| {
        refuse_undeclared_mode(declared.elicitation_modes, params.as_ref()).map_err(|error| {
            Refusal::Undeclared {
                error,
                asking: "",
                builder: "with_elicitation_modes",
            }
        })?;
        encode(handler(decode(params)?).map_err(Refusal::Handler)?)
    })
}

/// The `roots/list` answerer around `handler`; roots whose URI is not `file://` are left out.
pub(crate) fn roots<F>(handler: F) -> Answerer
where
    F: Fn() -> std::result::Result<ListRootsResult, ErrorObject> + Send + Sync + 'static,
{
    Arc::new(move |_, _| {
        let roots = handler().map_err(Refusal::Handler)?;
        encode(roots.file_roots_only())
    })
}

/// The client's handlers for the server's requests, and what they declare.
#[derive(Clone, Default)]
pub(crate) struct Handlers {
    pub(crate) roots: Option<Answerer>,
    pub(crate) sampling: Option<Answerer>,
    pub(crate) elicitation: Option<Answerer>,
    /// What the checks before the handlers read.
    pub(crate) declared: Declared,
    /// Starts the handler threads the handlers run on; set with the first handler, so that a
    /// client with none answers every server request at once and has no handler threads.
    pub(crate) threads: Option<StartThreads>,
}

/// Why the client's handlers gave no result.
#[derive(Debug)]
pub(crate) enum Refusal {
    /// No handler takes the method: for one the client knows, the handler missing and the
    /// builder that sets it.
    NoHandler(Option<(&'static str, &'static str)>),
    /// The params ask for what the client did not declare: the error for the server, what the
    /// request asked for beyond the method (` with tools`), and the builder that declares it.
    Undeclared {
        error: ErrorObject,
        asking: &'static str,
        builder: &'static str,
    },
    /// The params break the spec's rules (unbalanced tool use): the error for the server.
    Broken(ErrorObject),
    /// The params do not decode, for this reason.
    Params(String),
    /// The handler's own error.
    Handler(ErrorObject),
    /// The handler's result does not encode, for this reason.
    Unencodable(String),
}

// A refusal holds the server's error object whole; refusals are the rare road, and boxing
// them would cost an allocation to save a copy.
#[allow(clippy::result_large_err)]
impl Handlers {
    /// The answer to the request (or input request) `method` with `params`: its checks, then
    /// its handler.
    pub(crate) fn answer(
        &self,
        method: &str,
        params: Option<Value>,
    ) -> std::result::Result<Value, Refusal> {
        let (handler, missing) = match method {
            "roots/list" => (&self.roots, ("roots", "with_roots")),
            "sampling/createMessage" => (&self.sampling, ("sampling", "with_sampling_handler")),
            "elicitation/create" => (
                &self.elicitation,
                ("elicitation", "with_elicitation_handler"),
            ),
            _ => return Err(Refusal::NoHandler(None)),
        };
        let handler = handler.as_ref().ok_or(Refusal::NoHandler(Some(missing)))?;
        handler(params, &self.declared)
    }
}

impl Refusal {
    /// The JSON-RPC error answering a handshake-era server request `method`.
    fn reply(self, method: &str) -> ErrorObject {
        match self {
            Refusal::NoHandler(_) => ErrorObject::new(
                ErrorCode::METHOD_NOT_FOUND,
                format!("method not found: {method}"),
            ),
            Refusal::Undeclared { error, .. } | Refusal::Broken(error) => error,
            Refusal::Handler(error) => error,
            Refusal::Params(why) => {
                ErrorObject::new(ErrorCode::INVALID_PARAMS, format!("invalid params: {why}"))
            }
            Refusal::Unencodable(why) => ErrorObject::new(
                ErrorCode::INTERNAL_ERROR,
                format!("unencodable result: {why}"),
            ),
        }
    }

    /// The error of a stateless call whose input round asked for `method`: the call ends
    /// here, naming what the handlers could not answer.
    fn fails_call(self, method: &str) -> Error {
        let unsupported = |what: String| Error::Unsupported(Unsupported::Feature(what));
        match self {
            Refusal::NoHandler(Some((handler, builder))) => unsupported(format!(
                "the server asked for `{method}` input, but no {handler} handler is set \
                 (Options::{builder})"
            )),
            Refusal::NoHandler(None) => Error::Protocol(format!(
                "the server asked for input through unknown method `{method}`"
            )),
            Refusal::Undeclared {
                error,
                asking,
                builder,
            } => unsupported(format!(
                "the server asked for `{method}` input{asking}, but {} (Options::{builder})",
                error.message
            )),
            Refusal::Broken(error) => Error::Protocol(format!(
                "the server asked for `{method}` input with {}",
                error.message
            )),
            Refusal::Params(why) => {
                Error::Protocol(format!("malformed `{method}` input request: {why}"))
            }
            Refusal::Handler(error) => Error::Protocol(format!(
                "the client's `{method}` handler failed ({}): {}",
                error.code.0, error.message
            )),
            Refusal::Unencodable(why) => {
                Error::Protocol(format!("unencodable `{method}` answer: {why}"))
            }
        }
    }
}

/// The client's handlers as the engine and the input rounds reach them: one object, plugged
/// into both.
pub(crate) struct ServerRequests {
    handlers: Handlers,
    /// The era the connection speaks: the stateless era takes no server requests.
    era: Arc<EraState>,
}

impl ServerRequests {
    pub(crate) fn new(handlers: Handlers, era: Arc<EraState>) -> ServerRequests {
        ServerRequests { handlers, era }
    }
}

impl Serve for ServerRequests {
    fn takes_requests(&self) -> bool {
        // The stateless era has no server requests (input comes through input rounds), and
        // its stdio transport forbids the client to write responses.
        !self.era.is_modern()
    }

    fn at_once(&self, method: &str) -> Option<Value> {
        (method == "ping").then(|| Value::Object(Map::new()))
    }

    fn answer(
        &self,
        method: &str,
        params: Option<Value>,
    ) -> std::result::Result<Value, ErrorObject> {
        self.handlers
            .answer(method, params)
            .map_err(|refusal| refusal.reply(method))
    }
}

impl Inputs for ServerRequests {
    fn input(&self, method: &str, params: Option<Value>) -> Result<Value> {
        self.handlers
            .answer(method, params)
            .map_err(|refusal| refusal.fails_call(method))
    }
}

#[allow(clippy::result_large_err)] // As `Handlers::answer`.
fn decode<T: DeserializeOwned>(params: Option<Value>) -> std::result::Result<T, Refusal> {
    crate::jsonrpc::decode_value(&params.unwrap_or(Value::Null))
        .map_err(|e| Refusal::Params(e.to_string()))
}

#[allow(clippy::result_large_err)] // As `Handlers::answer`.
fn encode<T: Serialize>(result: T) -> std::result::Result<Value, Refusal> {
    serde_json::to_value(result).map_err(|e| Refusal::Unencodable(e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn sampling(tools: bool) -> Handlers {
        let handler = super::sampling(|_| {
            let answer = crate::types::ContentBlock::text("ok");
            Ok(CreateMessageResult::new("m", answer))
        });
        Handlers {
            sampling: Some(handler),
            declared: Declared {
                sampling_tools: tools,
                ..Declared::default()
            },
            ..Handlers::default()
        }
    }

    #[test]
    fn one_refusal_answers_the_server_or_fails_the_call() {
        let unbalanced = json!({"messages": [{"role": "assistant", "content": [
            {"type": "tool_use", "id": "a", "name": "weather", "input": {}}]}], "maxTokens": 1});
        let method = "sampling/createMessage";
        let refused = sampling(true).answer(method, Some(unbalanced.clone()));
        let Err(refusal @ Refusal::Broken(_)) = refused else {
            panic!("expected a broken conversation, got {refused:?}");
        };
        assert_eq!(refusal.reply(method).code, ErrorCode::INVALID_PARAMS);
        let failed = sampling(true).answer(method, Some(unbalanced)).unwrap_err();
        assert!(matches!(failed.fails_call(method), Error::Protocol(_)));

        let tools = json!({"messages": [], "maxTokens": 1, "tools": []});
        let undeclared = sampling(false).answer(method, Some(tools)).unwrap_err();
        match undeclared.fails_call(method) {
            Error::Unsupported(Unsupported::Feature(why)) => {
                assert!(why.contains("input with tools"), "{why}");
                assert!(why.contains("Options::with_sampling_tools"), "{why}");
            }
            other => panic!("expected Unsupported, got {other:?}"),
        }
        let plain = json!({"messages": [], "maxTokens": 1});
        assert!(sampling(false).answer(method, Some(plain)).is_ok());
    }

    #[test]
    fn a_missing_handler_is_method_not_found_or_names_its_builder() {
        let none = Handlers::default();
        let refusal = none.answer("roots/list", None).unwrap_err();
        assert_eq!(
            refusal.reply("roots/list").code,
            ErrorCode::METHOD_NOT_FOUND
        );
        let refusal = none.answer("elicitation/create", None).unwrap_err();
        match refusal.fails_call("elicitation/create") {
            Error::Unsupported(Unsupported::Feature(why)) => {
                assert!(why.contains("Options::with_elicitation_handler"), "{why}")
            }
            other => panic!("expected Unsupported, got {other:?}"),
        }
        let unknown = none.answer("vendor/ask", None).unwrap_err();
        assert!(matches!(
            unknown.fails_call("vendor/ask"),
            Error::Protocol(why) if why.contains("unknown method `vendor/ask`")
        ));
    }
}
