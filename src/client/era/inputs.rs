//! Answering a server's input requests (an input round's, or a task's) with the client's
//! handlers, keyed as the server keyed them, within the call's time.

use serde_json::{Map, Value};

use crate::error::{Error, Result};

use super::clock::Clock;
use super::session::Session;

/// The most input requests one round may carry: each may be a paid model call or a question
/// to the user, so a round asking for more fails before any handler runs.
const MAX_INPUT_REQUESTS: usize = 64;

/// Answers each input request with the client's handlers, keyed as the server keyed them.
/// A handler cannot be interrupted, so the call's deadline, its cancel handle and the
/// client's closing are checked before each one.
pub(super) fn fulfil<'a>(
    session: &Session,
    clock: &Clock<'_>,
    requests: impl IntoIterator<Item = (&'a String, &'a Value)>,
) -> Result<Map<String, Value>> {
    let requests: Vec<(&String, &Value)> = requests.into_iter().collect();
    if requests.len() > MAX_INPUT_REQUESTS {
        return Err(Error::Protocol(format!(
            "the server asked for {} inputs at once, more than {MAX_INPUT_REQUESTS}",
            requests.len()
        )));
    }
    let mut responses = Map::new();
    for (key, request) in requests {
        clock.check(session)?;
        let method = request
            .get("method")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let params = request.get("params").cloned();
        let answer = session.inputs.input(method, params)?;
        responses.insert(key.clone(), answer);
    }
    Ok(responses)
}
