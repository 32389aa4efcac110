//! MCP message types for protocol 2025-11-25 that also read 2025-06-18, 2025-03-26 and 2024-11-05,
//! and those of the stateless 2026-07-28 (`server/discover`, input rounds, subscriptions).
//!
//! Every type is named as in the specification's schema and serialises to the wire shape:
//! camelCase members, optional members left out when `None`, `_meta` kept as `meta`.
//! Members a type does not know are ignored when reading, so newer servers stay readable;
//! the capability types keep them instead (in `extra`, and unknown capabilities in `other`),
//! so serializing capabilities gives back what the server sent.
//! Content blocks, roles and notifications of unknown kinds are kept whole
//! ([`ContentBlock::Unknown`], [`Role::Unknown`], [`ServerNotification::Other`]). Shapes real
//! servers send beside the schema read as meant: `null` for a list as an empty list, a whole
//! float (`12.0`) where the schema has an integer as that integer.
//!
//! ```
//! use umcp::types::{CallToolResult, ContentBlock};
//!
//! let result: CallToolResult = serde_json::from_str(
//!     r#"{"content":[{"type":"text","text":"42"},{"type":"hologram","data":"…"}]}"#,
//! ).unwrap();
//! assert_eq!(result.text(), "42");
//! assert!(matches!(result.content[1], ContentBlock::Unknown(_)));
//! assert!(!result.is_error());
//! ```

mod common;
mod completion;
mod content;
mod elicitation;
pub(crate) mod lenient;
mod lifecycle;
mod logging;
mod method;
mod modern;
mod notifications;
mod prompts;
mod raw;
mod resources;
mod roots;
mod sampling;
mod schema;
mod skills;
mod subscriptions;
mod tools;
mod utilities;

pub use common::{
    Annotations, EmptyParams, EmptyResult, Icon, Implementation, PaginatedRequestParams, Role,
};
pub use completion::{
    CompleteArgument, CompleteContext, CompleteReference, CompleteRequestParams, CompleteResult,
    Completion, PromptReference, ResourceTemplateReference,
};
pub use content::{AudioContent, ContentBlock, EmbeddedResource, ImageContent, TextContent};
pub use elicitation::{
    Choice, ElicitAction, ElicitForm, ElicitRequestFormParams, ElicitRequestParams,
    ElicitRequestUrlParams, ElicitResult, ElicitationCompleteNotificationParams, FieldKind,
    FormField,
};
pub use lifecycle::{
    is_supported_protocol_version, ClientCapabilities, CompletionsCapability,
    ElicitationCapability, InitializeRequestParams, InitializeResult, LoggingCapability,
    PromptsCapability, ResourcesCapability, RootsCapability, SamplingCapability,
    ServerCapabilities, TasksCapability, ToolsCapability, LATEST_PROTOCOL_VERSION,
    SUPPORTED_PROTOCOL_VERSIONS,
};
pub use logging::{LoggingLevel, LoggingMessageNotificationParams, SetLevelRequestParams};
pub use method::{
    CallTool, Complete, CreateMessage, Elicit, GetPrompt, Initialize, ListPrompts,
    ListResourceTemplates, ListResources, ListRoots, ListTools, Method, Ping, ReadResource,
    SetLevel, Subscribe, Unsubscribe,
};
pub use modern::{
    is_modern_protocol_version, DiscoverResult, InputRequiredResult,
    MissingRequiredClientCapabilityData, ResultType, UnsupportedProtocolVersionData,
    LATEST_MODERN_PROTOCOL_VERSION, META_CLIENT_CAPABILITIES, META_CLIENT_INFO, META_LOG_LEVEL,
    META_PROTOCOL_VERSION, META_SERVER_INFO, META_SUBSCRIPTION_ID, MODERN_PROTOCOL_VERSIONS,
};
pub use notifications::ServerNotification;
pub use prompts::{
    GetPromptRequestParams, GetPromptResult, ListPromptsResult, Prompt, PromptArgument,
    PromptMessage,
};
pub use resources::{
    BlobResourceContents, ListResourceTemplatesResult, ListResourcesResult,
    ReadResourceDirectoryRequestParams, ReadResourceDirectoryResult, ReadResourceRequestParams,
    ReadResourceResult, Resource, ResourceContents, ResourceTemplate,
    ResourceUpdatedNotificationParams, SubscribeRequestParams, TextResourceContents,
    UnsubscribeRequestParams, DIRECTORY_MIME_TYPE,
};
pub use roots::{ListRootsResult, Root};
pub use sampling::{
    CreateMessageRequestParams, CreateMessageResult, IncludeContext, ModelHint, ModelPreferences,
    SamplingContent, SamplingMessage,
};
pub use schema::Schema;
pub use skills::{
    GetSkillResult, ListSkillsResult, Skill, SkillResource, SkillResources, SkillsSettings,
    MAX_SKILL_BYTES, MAX_SKILL_FILES, SKILLS_EXTENSION,
};
// The Skills extension's error and digest stay where its types are, though the error lives
// with the crate's errors and the digest with the client's Skills code.
pub use crate::error::SkillError;
pub use crate::sha256::sha256_digest;
pub use subscriptions::{
    SubscriptionFilter, SubscriptionsAcknowledgedNotificationParams,
    SubscriptionsListenRequestParams, SubscriptionsListenResult, SUBSCRIPTIONS_ACKNOWLEDGED,
    SUBSCRIPTIONS_LISTEN,
};
pub use tools::{CallToolRequestParams, CallToolResult, ListToolsResult, Tool, ToolAnnotations};
pub use utilities::{CancelledNotificationParams, ProgressNotificationParams, ProgressToken};
