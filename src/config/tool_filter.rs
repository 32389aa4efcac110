//! An entry's allowed and excluded tools, in the spellings of the hosts that have them.
//!
//! mcphost writes `allowedTools` and `excludedTools`, Gemini CLI `includeTools` and
//! `excludeTools`, mcporter `allowedTools` and `blockedTools`, Codex `enabled_tools` and
//! `disabled_tools`: umcp reads them all as the same two lists. A file meant for several
//! hosts may repeat a list in two spellings; each allow list narrows (a tool must be in every
//! one), and every excluded name is excluded.

use super::entry::Entry;
use super::entry::ServerConfigError;
use crate::client::ToolFilter;

/// The keys of allow lists.
const ALLOWED: [&str; 3] = ["allowedTools", "includeTools", "enabled_tools"];

/// The keys of deny lists.
const EXCLUDED: [&str; 4] = [
    "excludedTools",
    "excludeTools",
    "blockedTools",
    "disabled_tools",
];

/// The tool filter of `entry`; a list that is not an array of strings is an error naming it.
pub(super) fn parse(entry: &Entry<'_>) -> Result<ToolFilter, ServerConfigError> {
    let mut filter = ToolFilter::new();
    for key in ALLOWED {
        // Absent and `null` say nothing; `[]` allows nothing.
        if entry.get(key).is_some_and(|value| !value.is_null()) {
            filter = filter.with_allowed(entry.list(key)?);
        }
    }
    for key in EXCLUDED {
        if entry.get(key).is_some_and(|value| !value.is_null()) {
            filter = filter.with_denied(entry.list(key)?);
        }
    }
    Ok(filter)
}
