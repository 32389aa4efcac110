//! Re-listing the tools after a Streamable HTTP server refused a `tools/call` for its headers
//! (-32020): the listing refreshes the `Mcp-Param-*` table the headers are built from.

use std::collections::HashSet;

use serde::Deserialize;

use crate::error::{Error, Result};

use super::super::engine::request_options::RequestOptions;
use super::finish::listed_tools;
use super::session::{CallSpec, Session};
use super::wire::once;

/// A re-listing stops after this many pages.
const MAX_RELIST_PAGES: usize = 1_000;

/// Fetches every page of `tools/list`, which refreshes the `Mcp-Param-*` table, within
/// what `left` says is left of the call that needs it (its time, its cancel handle): each
/// page gets only that, and a cursor the server repeats ends the listing.
pub(super) fn relist_tools(
    session: &Session,
    left: &dyn Fn() -> Result<RequestOptions>,
) -> Result<()> {
    let mut cursor: Option<String> = None;
    let mut seen = HashSet::new();
    for _ in 0..MAX_RELIST_PAGES {
        let call = left()?;
        // The annotations may have changed: a cached list is what got the headers wrong.
        let mut options = RequestOptions::default().with_no_cache();
        options.timeout = call.timeout;
        options.max_total = call.max_total;
        options.cancel = call.cancel;
        let params = cursor.as_ref().map(|c| serde_json::json!({ "cursor": c }));
        let answer = once(
            session,
            &mut CallSpec {
                method: "tools/list",
                params,
                options: &options,
                handshake: false,
            },
        )?;
        let answer = listed_tools(session, answer);
        #[derive(Deserialize)]
        struct Cursor {
            #[serde(rename = "nextCursor")]
            next_cursor: Option<String>,
        }
        cursor = answer.peek::<Cursor>().ok().and_then(|c| c.next_cursor);
        match &cursor {
            None => break,
            Some(next) if !seen.insert(next.clone()) => {
                return Err(Error::Protocol(format!(
                    "`tools/list` repeated the cursor {next:?}"
                )))
            }
            Some(_) => {}
        }
    }
    Ok(())
}
