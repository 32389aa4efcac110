//! A server's questions to its client (elicitation, sampling, roots), put to the host whose
//! request the server is working on: as a request of the bridge to a handshake-era host, as
//! an input round of its request to a stateless-era one. Whatever era the server speaks: a
//! handshake-era server's request and a stateless-era server's input round reach the bridge
//! alike, through the library's handlers.
//!
//! A question goes only to a host that declared what it takes (`elicitation` with the mode,
//! `sampling` with `tools` when the question offers tools, `roots`); otherwise the server is
//! refused, with the reason. A question no request of a host can carry (a handshake-era
//! server asking between calls) goes to the newest handshake-era host that takes it.

use std::sync::Arc;
use std::time::Duration;

use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::Value;
use umcp::jsonrpc::{ErrorCode, ErrorObject};
use umcp::types::{
    ClientCapabilities, CreateMessageRequestParams, CreateMessageResult, ElicitRequestParams,
    ElicitResult, ListRootsResult,
};

use super::host::Hosts;
use super::jobs::{self, Job, Jobs};
use super::wire::{refusal, Era};

/// How long a server's question waits for the host's answer: a person may be filling in a
/// form. The request that carried it does not lose this time (see `clock`).
pub const ASK_WAIT: Duration = Duration::from_secs(600);

/// What a question needs the host to have declared.
#[derive(Clone, Copy, Debug)]
enum Need {
    Form,
    Url,
    Sampling { tools: bool },
    Roots,
}

impl Need {
    fn met_by(self, declared: &ClientCapabilities) -> bool {
        match self {
            Need::Form => declared
                .elicitation
                .as_ref()
                .is_some_and(|e| e.supports_form()),
            Need::Url => declared
                .elicitation
                .as_ref()
                .is_some_and(|e| e.supports_url()),
            Need::Sampling { tools } => declared
                .sampling
                .as_ref()
                .is_some_and(|s| !tools || s.tools.is_some()),
            Need::Roots => declared.roots.is_some(),
        }
    }

    fn what(self) -> &'static str {
        match self {
            Need::Form => "form elicitation",
            Need::Url => "URL elicitation",
            Need::Sampling { tools: false } => "sampling",
            Need::Sampling { tools: true } => "sampling with tools",
            Need::Roots => "roots",
        }
    }
}

/// Puts the servers' questions to the hosts.
pub struct Asker {
    jobs: Arc<Jobs>,
    hosts: Arc<Hosts>,
}

impl Asker {
    pub fn new(jobs: Arc<Jobs>, hosts: Arc<Hosts>) -> Arc<Asker> {
        Arc::new(Asker { jobs, hosts })
    }

    /// `elicitation/create` from `server` (any server when unknown).
    pub fn elicit(
        &self,
        server: Option<&str>,
        params: ElicitRequestParams,
    ) -> Result<ElicitResult, ErrorObject> {
        let need = match params {
            ElicitRequestParams::Url(_) => Need::Url,
            _ => Need::Form,
        };
        self.ask(server, "elicitation/create", &params, need)
    }

    /// `sampling/createMessage` from `server`.
    pub fn sample(
        &self,
        server: Option<&str>,
        params: CreateMessageRequestParams,
    ) -> Result<CreateMessageResult, ErrorObject> {
        let tools = params.tools.is_some() || params.tool_choice.is_some();
        self.ask(
            server,
            "sampling/createMessage",
            &params,
            Need::Sampling { tools },
        )
    }

    /// `roots/list` from a server.
    pub fn roots(&self) -> Result<ListRootsResult, ErrorObject> {
        self.ask(None, "roots/list", &serde_json::json!({}), Need::Roots)
    }

    fn ask<T: DeserializeOwned>(
        &self,
        server: Option<&str>,
        method: &str,
        params: &impl Serialize,
        need: Need,
    ) -> Result<T, ErrorObject> {
        let params = serde_json::to_value(params)
            .map_err(|e| refusal(ErrorCode::INTERNAL_ERROR, format!("{method}: {e}")))?;
        let job = jobs::working().or_else(|| self.jobs.attribute(server));
        let answer = match job {
            Some(job) => self.through(&job, (method, params), need)?,
            None => self.to_a_session((method, params), need)?,
        };
        serde_json::from_value(answer).map_err(|e| {
            let why = format!("the host's answer to {method} does not read: {e}");
            refusal(ErrorCode::INVALID_PARAMS, why)
        })
    }

    /// Asks the host of `job`, within that request.
    fn through(
        &self,
        job: &Arc<Job>,
        question: (&str, Value),
        need: Need,
    ) -> Result<Value, ErrorObject> {
        if !need.met_by(&job.capabilities()) {
            return Err(undeclared(need));
        }
        if job.era == Era::Modern {
            return self.jobs.round(job, question, ASK_WAIT);
        }
        let via = job.reply();
        self.jobs.clock.pause(job.key);
        let answer = job.host.ask(&*via, question, &job.stopped, ASK_WAIT);
        self.jobs.clock.resume(job.key);
        answer
    }

    /// Asks the newest handshake-era host that takes the question, outside any request.
    fn to_a_session(&self, question: (&str, Value), need: Need) -> Result<Value, ErrorObject> {
        let takes =
            |declared: Option<ClientCapabilities>| declared.is_some_and(|c| need.met_by(&c));
        let host = self
            .hosts
            .sessions()
            .into_iter()
            .find(|host| takes(host.handshake().map(|h| h.capabilities)));
        let Some(host) = host else {
            let why = format!(
                "no host request is in progress to carry {} to, and no host session takes it",
                need.what()
            );
            return Err(refusal(ErrorCode::METHOD_NOT_FOUND, why));
        };
        // Never closed: such a question ends with its answer, its wait, or the host.
        let (_open, stop) = crossbeam_channel::bounded::<()>(0);
        host.ask(&*host.out.clone(), question, &stop, ASK_WAIT)
    }
}

/// The refusal of a question the host did not declare it takes.
fn undeclared(need: Need) -> ErrorObject {
    let why = format!(
        "the host did not declare {}, so the question cannot be put to it",
        need.what()
    );
    refusal(ErrorCode::METHOD_NOT_FOUND, why)
}

#[cfg(test)]
mod tests {
    use super::*;
    use umcp::types::{ElicitationCapability, SamplingCapability};

    #[test]
    fn a_question_needs_what_the_host_declared() {
        let mut declared = ClientCapabilities::default();
        assert!(!Need::Form.met_by(&declared));
        declared.elicitation = Some(ElicitationCapability::default());
        assert!(Need::Form.met_by(&declared) && !Need::Url.met_by(&declared));
        declared.sampling = Some(SamplingCapability::default());
        assert!(Need::Sampling { tools: false }.met_by(&declared));
        assert!(!Need::Sampling { tools: true }.met_by(&declared));
        assert!(!Need::Roots.met_by(&declared));
        assert!(undeclared(Need::Roots)
            .message
            .contains("did not declare roots"));
    }
}
