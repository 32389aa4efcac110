//! Tool-enabled sampling (protocol 2025-11-25): the option that declares `sampling.tools`, and
//! the checks that refuse a request using tools when it was not declared, or whose tool uses
//! and results do not balance (in `balance`).

use serde_json::Value;

use crate::error::{Error, Unsupported};
use crate::jsonrpc::{ErrorCode, ErrorObject};

use super::server_requests::Handlers;

mod balance;

pub(crate) use balance::{refuse_unbalanced_tools, refuse_unbalanced_tools_input};

/// Why a tool-enabled sampling request is refused.
const UNDECLARED: &str = "the client did not declare the sampling.tools capability, so it takes \
                          no sampling request with `tools` or `toolChoice`";

/// Refuses the params of a `sampling/createMessage` that use tools when the client did not
/// declare `sampling.tools`: servers must not send such a request, and the handler was not
/// written for one. Invalid params is the error the spec uses for sampling requests that
/// break its tool rules.
pub(crate) fn refuse_undeclared_tools(
    options: &Handlers,
    params: Option<&Value>,
) -> Result<(), ErrorObject> {
    if options.sampling_tools || !uses_tools(params) {
        return Ok(());
    }
    log::debug!("refusing tool-enabled sampling: sampling.tools was not declared");
    Err(ErrorObject::new(ErrorCode::INVALID_PARAMS, UNDECLARED))
}

/// [`refuse_undeclared_tools`] for a stateless input request of any `method`, where there is
/// no request to answer with an error: the call fails instead. A client without a sampling
/// handler is left to say that.
pub(crate) fn refuse_undeclared_tools_input(
    options: &Handlers,
    method: &str,
    params: &Value,
) -> crate::Result<()> {
    if method != "sampling/createMessage" || options.sampling.is_none() {
        return Ok(());
    }
    refuse_undeclared_tools(options, Some(params)).map_err(|error| {
        Error::Unsupported(Unsupported::Feature(format!(
            "the server asked for `{method}` input with tools, but {} \
             (Options::with_sampling_tools)",
            error.message
        )))
    })
}

/// Whether sampling params carry `tools` or `toolChoice` (a `null` counts as absent, as it
/// does when the params are decoded).
fn uses_tools(params: Option<&Value>) -> bool {
    ["tools", "toolChoice"].iter().any(|key| {
        params
            .and_then(|p| p.get(key))
            .is_some_and(|v| !v.is_null())
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Options;
    use serde_json::json;

    #[test]
    fn only_undeclared_tool_use_is_refused() {
        let plain = Options::default();
        let declared = Options::default().with_sampling_tools(true);
        let tools = json!({"messages": [], "maxTokens": 1, "tools": []});
        let choice = json!({"messages": [], "maxTokens": 1, "toolChoice": {"mode": "auto"}});
        let none = json!({"messages": [], "maxTokens": 1, "tools": null});
        for params in [&tools, &choice] {
            let refused = refuse_undeclared_tools(&plain.handlers, Some(params)).unwrap_err();
            assert_eq!(refused.code, ErrorCode::INVALID_PARAMS);
            assert!(refused.message.contains("sampling.tools"));
            assert!(refuse_undeclared_tools(&declared.handlers, Some(params)).is_ok());
        }
        assert!(refuse_undeclared_tools(&plain.handlers, Some(&none)).is_ok());
        assert!(refuse_undeclared_tools(&plain.handlers, None).is_ok());
        // Input rounds: other methods, and a client without a handler, are not its business.
        assert!(refuse_undeclared_tools_input(&plain.handlers, "roots/list", &tools).is_ok());
        assert!(
            refuse_undeclared_tools_input(&plain.handlers, "sampling/createMessage", &tools)
                .is_ok()
        );
        let handler = plain.with_sampling_handler(|_| Err(ErrorObject::new(ErrorCode(-1), "no")));
        let refused =
            refuse_undeclared_tools_input(&handler.handlers, "sampling/createMessage", &tools);
        assert!(matches!(refused, Err(Error::Unsupported(_))), "{refused:?}");
        let plain_input = json!({"messages": [], "maxTokens": 1});
        assert!(refuse_undeclared_tools_input(
            &handler.handlers,
            "sampling/createMessage",
            &plain_input
        )
        .is_ok());
    }
}
