//! Typed requests: each MCP method as a marker type naming its params and result.

use serde::de::DeserializeOwned;
use serde::Serialize;

use super::common::{EmptyParams, EmptyResult, PaginatedRequestParams};
use super::completion::{CompleteRequestParams, CompleteResult};
use super::elicitation::{ElicitRequestParams, ElicitResult};
use super::lifecycle::{InitializeRequestParams, InitializeResult};
use super::logging::SetLevelRequestParams;
use super::prompts::{GetPromptRequestParams, GetPromptResult, ListPromptsResult};
use super::resources::{
    ListResourceTemplatesResult, ListResourcesResult, ReadResourceRequestParams,
    ReadResourceResult, SubscribeRequestParams, UnsubscribeRequestParams,
};
use super::roots::ListRootsResult;
use super::sampling::{CreateMessageRequestParams, CreateMessageResult};
use super::tools::{CallToolRequestParams, CallToolResult, ListToolsResult};

/// An MCP request method: its wire name, the params it sends and the result it expects.
///
/// ```
/// use umcp::types::{CallTool, CallToolRequestParams, Method};
///
/// assert_eq!(CallTool::METHOD, "tools/call");
/// let params: <CallTool as Method>::Params = CallToolRequestParams::new("echo");
/// assert_eq!(serde_json::to_value(&params).unwrap()["name"], "echo");
/// ```
pub trait Method {
    /// The method name on the wire, e.g. `tools/call`.
    ///
    /// See the example on [`types::Method`](crate::types::Method).
    const METHOD: &'static str;
    /// The request's `params`.
    ///
    /// See the example on [`types::Method`](crate::types::Method).
    type Params: Serialize;
    /// The response's `result`.
    ///
    /// See the example on [`types::Method`](crate::types::Method).
    type Result: DeserializeOwned;
}

/// `ping`: a liveness check, sent by either side.
///
/// See the example on [`types::Method`](crate::types::Method).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct Ping;

/// `initialize`: the handshake's first request.
///
/// See the example on [`types::Method`](crate::types::Method).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct Initialize;

/// `tools/list`: one page of tools.
///
/// See the example on [`types::Method`](crate::types::Method).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct ListTools;

/// `tools/call`: run a tool.
///
/// See the example on [`types::Method`](crate::types::Method).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct CallTool;

/// `resources/list`: one page of resources.
///
/// See the example on [`types::Method`](crate::types::Method).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct ListResources;

/// `resources/templates/list`: one page of resource templates.
///
/// See the example on [`types::Method`](crate::types::Method).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct ListResourceTemplates;

/// `resources/read`: read one resource.
///
/// See the example on [`types::Method`](crate::types::Method).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct ReadResource;

/// `resources/subscribe`: watch a resource for changes.
///
/// See the example on [`types::Method`](crate::types::Method).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct Subscribe;

/// `resources/unsubscribe`: stop watching a resource.
///
/// See the example on [`types::Method`](crate::types::Method).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct Unsubscribe;

/// `prompts/list`: one page of prompts.
///
/// See the example on [`types::Method`](crate::types::Method).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct ListPrompts;

/// `prompts/get`: fill in a prompt.
///
/// See the example on [`types::Method`](crate::types::Method).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct GetPrompt;

/// `completion/complete`: suggest argument values.
///
/// See the example on [`types::Method`](crate::types::Method).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct Complete;

/// `logging/setLevel`: choose which log messages the server sends.
///
/// See the example on [`types::Method`](crate::types::Method).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct SetLevel;

/// `roots/list`, sent by the server; the client answers with its roots.
///
/// See the example on [`types::Method`](crate::types::Method).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct ListRoots;

/// `sampling/createMessage`, sent by the server; the client answers with a model's message.
///
/// See the example on [`types::Method`](crate::types::Method).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct CreateMessage;

/// `elicitation/create`, sent by the server; the client answers with the user's input.
///
/// See the example on [`types::Method`](crate::types::Method).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct Elicit;

impl Method for Ping {
    const METHOD: &'static str = "ping";
    type Params = EmptyParams;
    type Result = EmptyResult;
}

impl Method for Initialize {
    const METHOD: &'static str = "initialize";
    type Params = InitializeRequestParams;
    type Result = InitializeResult;
}

impl Method for ListTools {
    const METHOD: &'static str = "tools/list";
    type Params = PaginatedRequestParams;
    type Result = ListToolsResult;
}

impl Method for CallTool {
    const METHOD: &'static str = "tools/call";
    type Params = CallToolRequestParams;
    type Result = CallToolResult;
}

impl Method for ListResources {
    const METHOD: &'static str = "resources/list";
    type Params = PaginatedRequestParams;
    type Result = ListResourcesResult;
}

impl Method for ListResourceTemplates {
    const METHOD: &'static str = "resources/templates/list";
    type Params = PaginatedRequestParams;
    type Result = ListResourceTemplatesResult;
}

impl Method for ReadResource {
    const METHOD: &'static str = "resources/read";
    type Params = ReadResourceRequestParams;
    type Result = ReadResourceResult;
}

impl Method for Subscribe {
    const METHOD: &'static str = "resources/subscribe";
    type Params = SubscribeRequestParams;
    type Result = EmptyResult;
}

impl Method for Unsubscribe {
    const METHOD: &'static str = "resources/unsubscribe";
    type Params = UnsubscribeRequestParams;
    type Result = EmptyResult;
}

impl Method for ListPrompts {
    const METHOD: &'static str = "prompts/list";
    type Params = PaginatedRequestParams;
    type Result = ListPromptsResult;
}

impl Method for GetPrompt {
    const METHOD: &'static str = "prompts/get";
    type Params = GetPromptRequestParams;
    type Result = GetPromptResult;
}

impl Method for Complete {
    const METHOD: &'static str = "completion/complete";
    type Params = CompleteRequestParams;
    type Result = CompleteResult;
}

impl Method for SetLevel {
    const METHOD: &'static str = "logging/setLevel";
    type Params = SetLevelRequestParams;
    type Result = EmptyResult;
}

impl Method for ListRoots {
    const METHOD: &'static str = "roots/list";
    type Params = EmptyParams;
    type Result = ListRootsResult;
}

impl Method for CreateMessage {
    const METHOD: &'static str = "sampling/createMessage";
    type Params = CreateMessageRequestParams;
    type Result = CreateMessageResult;
}

impl Method for Elicit {
    const METHOD: &'static str = "elicitation/create";
    type Params = ElicitRequestParams;
    type Result = ElicitResult;
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{json, Value};

    fn name<M: Method>(_: M) -> &'static str {
        M::METHOD
    }

    fn decode<M: Method>(result: Value) -> M::Result {
        serde_json::from_value(result).unwrap()
    }

    #[test]
    fn method_names_match_the_spec() {
        let names = [
            name(Ping),
            name(Initialize),
            name(ListTools),
            name(CallTool),
            name(ListResources),
            name(ListResourceTemplates),
            name(ReadResource),
            name(Subscribe),
            name(Unsubscribe),
            name(ListPrompts),
            name(GetPrompt),
            name(Complete),
            name(SetLevel),
            name(ListRoots),
            name(CreateMessage),
            name(Elicit),
        ];
        assert_eq!(
            names,
            [
                "ping",
                "initialize",
                "tools/list",
                "tools/call",
                "resources/list",
                "resources/templates/list",
                "resources/read",
                "resources/subscribe",
                "resources/unsubscribe",
                "prompts/list",
                "prompts/get",
                "completion/complete",
                "logging/setLevel",
                "roots/list",
                "sampling/createMessage",
                "elicitation/create",
            ]
        );
    }

    #[test]
    fn params_and_results_decode_through_the_trait() {
        let params: <ListTools as Method>::Params = PaginatedRequestParams::new(Some("c2"));
        assert_eq!(
            serde_json::to_value(params).unwrap(),
            json!({"cursor": "c2"})
        );
        assert_eq!(
            serde_json::to_value(EmptyParams::default()).unwrap(),
            json!({})
        );
        let page = decode::<ListTools>(
            json!({"tools": [{"name": "t", "inputSchema": {"type": "object"}}]}),
        );
        assert_eq!(page.tools[0].name, "t");
        assert_eq!(decode::<Ping>(json!({})), EmptyResult::default());
        assert_eq!(decode::<SetLevel>(json!({})), EmptyResult::default());
        let roots = decode::<ListRoots>(json!({"roots": [{"uri": "file:///r"}]}));
        assert_eq!(roots.roots[0].uri, "file:///r");
    }
}
