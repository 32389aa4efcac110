//! What the stateless era does with a complete result before the caller decodes it, without
//! turning the server's text into a `Value`: the server's self-description is kept, and
//! `tools/list` loses the tools whose `x-mcp-header` annotations are invalid, and tells which
//! tools may be called again when a response is lost.

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use crate::jsonrpc::decode_value;
use crate::sync::lock;
use crate::types::{Implementation, ResultType, META_SERVER_INFO};

use super::super::engine::pending::Answer;
use super::meta::tool_header_params;
use super::session::Session;

/// The most tools whose `Mcp-Param-*` headers are remembered per connection (and the most
/// remembered as safe to repeat).
const MAX_TOOL_HEADER_ENTRIES: usize = 10_000;

/// The fields of a result the era's bookkeeping reads; the rest stays as the server wrote it.
#[derive(Default, Deserialize)]
pub(super) struct Head {
    #[serde(rename = "resultType", default)]
    pub(super) result_type: Option<Value>,
    #[serde(rename = "_meta", default)]
    meta: Option<Map<String, Value>>,
}

impl Head {
    /// Reads the head of `answer`; a result that is not an object has an empty one.
    pub(super) fn of(answer: &Answer) -> Head {
        answer.peek().unwrap_or_default()
    }

    /// What kind of result this is; `None` for a `resultType` this client does not know.
    pub(super) fn kind(&self) -> Option<ResultType> {
        let mut fields = Map::new();
        if let Some(kind) = &self.result_type {
            fields.insert("resultType".into(), kind.clone());
        }
        ResultType::of(&Value::Object(fields))
    }
}

/// A tool as far as its headers, and whether a lost call may be repeated, go.
#[derive(Deserialize)]
struct ToolHeaders {
    #[serde(default)]
    name: String,
    #[serde(rename = "inputSchema", default)]
    input_schema: Value,
    #[serde(default)]
    annotations: Option<Repeatable>,
}

/// The annotations that make a tool call safe to send twice.
#[derive(Deserialize)]
struct Repeatable {
    #[serde(rename = "readOnlyHint", default)]
    read_only: Option<bool>,
    #[serde(rename = "idempotentHint", default)]
    idempotent: Option<bool>,
}

impl ToolHeaders {
    fn repeatable(&self) -> bool {
        self.annotations
            .as_ref()
            .is_some_and(|a| a.read_only == Some(true) || a.idempotent == Some(true))
    }
}

#[derive(Deserialize)]
struct ToolsPage {
    #[serde(default)]
    tools: Vec<ToolHeaders>,
}

/// Final touches on a complete result: the server's self-description is kept, and a
/// `tools/list` result is finished by what the layer above installed (see
/// [`ToolsListed`](super::session::ToolsListed)).
pub(super) fn finish(session: &Session, method: &str, answer: Answer, head: Head) -> Answer {
    let info = head.meta.as_ref().and_then(|m| m.get(META_SERVER_INFO));
    if let Some(info) = info.and_then(|v| decode_value::<Implementation>(v).ok()) {
        update_server_info(session, info);
    }
    match session.tools_listed.get() {
        Some(listed) if method == "tools/list" => listed(session, answer),
        _ => answer,
    }
}

/// Finishes a complete `tools/list` result: tools with invalid `x-mcp-header` annotations are
/// left out, the `Mcp-Param-*` table is refreshed, and the tools safe to call again after a
/// lost response are noted. The result keeps the server's text (and so tool schemas their
/// bytes) unless a tool has to go.
pub(crate) fn listed_tools(session: &Session, answer: Answer) -> Answer {
    // Not a list of tools: the caller's decoding says what is wrong with it.
    let Ok(page) = answer.peek::<ToolsPage>() else {
        return answer;
    };
    let mut table = lock(&session.era.tool_headers);
    let keep: Vec<bool> = page
        .tools
        .iter()
        .map(|tool| match tool_header_params(&tool.input_schema) {
            Ok(pairs) => {
                let name = tool.name.as_str();
                if pairs.is_empty() {
                    table.remove(name);
                } else if table.len() < MAX_TOOL_HEADER_ENTRIES || table.contains_key(name) {
                    table.insert(name.to_owned(), pairs);
                }
                true
            }
            Err(why) => {
                log::warn!("dropping tool `{}`: invalid x-mcp-header: {why}", tool.name);
                table.remove(tool.name.as_str());
                false
            }
        })
        .collect();
    drop(table);
    let mut repeatable = lock(&session.era.repeatable_tools);
    for tool in &page.tools {
        if !tool.repeatable() {
            repeatable.remove(tool.name.as_str());
        } else if repeatable.len() < MAX_TOOL_HEADER_ENTRIES {
            repeatable.insert(tool.name.clone());
        }
    }
    drop(repeatable);
    if keep.iter().all(|&k| k) {
        return answer;
    }
    without(answer, &keep)
}

/// `answer` with only the tools `keep` marks. The text of every kept tool stays as it was;
/// the top-level keys of the result come out sorted.
fn without(answer: Answer, keep: &[bool]) -> Answer {
    let raw = answer.text();
    let rebuilt = (|| -> serde_json::Result<Box<RawValue>> {
        let mut fields: BTreeMap<String, Box<RawValue>> = serde_json::from_str(raw.get())?;
        let Some(tools) = fields.get("tools") else {
            return Ok(raw.to_owned());
        };
        let tools: Vec<Box<RawValue>> = serde_json::from_str(tools.get())?;
        let kept: Vec<&RawValue> = tools
            .iter()
            .zip(keep.iter().chain(std::iter::repeat(&true)))
            .filter(|(_, &k)| k)
            .map(|(tool, _)| &**tool)
            .collect();
        fields.insert("tools".into(), serde_json::value::to_raw_value(&kept)?);
        serde_json::value::to_raw_value(&fields)
    })();
    match rebuilt {
        Ok(text) => Answer::raw(text),
        // The head and the tools were read from this text already; if it cannot be taken
        // apart again, go through a value.
        Err(_) => match serde_json::from_str::<Value>(raw.get()) {
            Ok(mut value) => {
                if let Some(Value::Array(tools)) = value.get_mut("tools") {
                    let mut marks = keep.iter();
                    tools.retain(|_| marks.next().copied().unwrap_or(true));
                }
                Answer::from_value(&value)
            }
            Err(_) => answer,
        },
    }
}

/// Keeps a server's self-description from a result's `_meta` as its current server info.
fn update_server_info(session: &Session, info: Implementation) {
    let Ok(mut slot) = session.init.write() else {
        return;
    };
    if let Some(init) = slot.as_ref() {
        if init.server_info != info {
            let mut changed = (**init).clone();
            changed.server_info = info;
            *slot = Some(std::sync::Arc::new(changed));
        }
    }
}
