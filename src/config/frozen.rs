//! The file-wide `frozen` key: the configuration's tools are pinned to the lock beside it.

use serde::Deserialize;
use serde_json::Value;

use crate::error::{Error, Result};
use crate::jsonrpc::value_kind;

/// The top level of a configuration file, as far as `frozen` goes. serde refuses the key
/// written twice, as the server sections are refused.
#[derive(Deserialize)]
struct Top {
    #[serde(default)]
    frozen: Option<Value>,
}

/// The `frozen` key of the JSON `text` (comments already stripped): `false` when absent.
pub(super) fn read(text: &str) -> Result<bool> {
    let top: Top = serde_json::from_str(text).map_err(|e| Error::Config(e.to_string()))?;
    of(top.frozen.as_ref())
}

/// The `frozen` key of already parsed JSON.
pub(super) fn of_value(root: &Value) -> Result<bool> {
    of(root.get("frozen"))
}

fn of(value: Option<&Value>) -> Result<bool> {
    match value {
        None | Some(Value::Null) => Ok(false),
        Some(Value::Bool(frozen)) => Ok(*frozen),
        Some(other) => Err(Error::Config(format!(
            "`frozen` must be true or false, not {}",
            value_kind(other)
        ))),
    }
}
