//! Starting the servers behind the bridge, as one client of each, declaring to them what the
//! host declared to the bridge: a server asks only what the host can answer, and sees the
//! host's name. With `--listen` hosts come and go, so everything is declared, and a question
//! a host did not declare it takes is refused when it comes (see `asks`).

use std::sync::Arc;

use umcp::jsonrpc::Message;
use umcp::types::{ClientCapabilities, ElicitationCapability, Implementation};
use umcp::{ElicitationModes, Manager, ManagerOptions, Options, ProtocolMode};

use super::asks::Asker;
use super::context::Bridge;
use super::fanout::{self, Audience};
use super::upstream::Upstream;
use super::wire::{declared_capabilities, stated_client};
use crate::args::Args;
use crate::exit::{usage, Exit};
use crate::run::Configured;
use crate::sign_in;
use crate::signals::Shutdown;

/// What the servers are told of their client.
pub struct Declared {
    pub capabilities: ClientCapabilities,
    /// The host's name and version, when it gave them.
    pub client: Option<Implementation>,
}

impl Declared {
    /// What a host's first message declares: its `initialize`, or a stateless request's
    /// `_meta`; nothing for anything else.
    pub fn by(first: &Message) -> Declared {
        let params = match first {
            Message::Request(request) => request.params.as_ref(),
            _ => None,
        };
        let initialize = matches!(first, Message::Request(r) if r.method == "initialize");
        let (capabilities, client) = match initialize {
            true => (
                params.and_then(|p| p.get("capabilities")).cloned(),
                params.and_then(|p| p.get("clientInfo")).cloned(),
            ),
            false => (
                Some(serde_json::to_value(declared_capabilities(params)).unwrap_or_default()),
                stated_client(params),
            ),
        };
        Declared {
            capabilities: capabilities
                .and_then(|c| serde_json::from_value(c).ok())
                .unwrap_or_default(),
            client: client.and_then(|c| serde_json::from_value(c).ok()),
        }
    }

    /// Everything the bridge can pass on, for hosts not known yet (`--listen`).
    pub fn everything() -> Declared {
        let elicitation = ElicitationCapability::default().with_form().with_url();
        let capabilities = ClientCapabilities::default()
            .with_elicitation(elicitation)
            .with_sampling(Default::default())
            .with_roots(Default::default());
        Declared {
            capabilities,
            client: None,
        }
    }
}

/// Starts the servers, reached through `bridge`, and the threads that hand on what they
/// announce.
pub fn start(
    bridge: &Arc<Bridge>,
    (args, configured): (&Args, Configured),
    declared: &Declared,
    shutdown: &Shutdown,
) -> Result<(), Exit> {
    let Configured { servers, lock, .. } = configured;
    let single = (servers.len() == 1).then(|| servers[0].name.clone());
    let options = options(args, declared, &bridge.asker)?;
    let options = match lock {
        Some(lock) => options.with_tool_lock(lock),
        None => options,
    };
    let manager = shutdown.start(|| Manager::start(servers, options));
    let upstream = Arc::new(Upstream::new(manager, single));
    bridge.set_upstream(Arc::clone(&upstream));
    let audience = Audience {
        upstream,
        hosts: Arc::clone(&bridge.hosts),
        followers: Arc::clone(&bridge.followers),
        jobs: Arc::clone(&bridge.jobs),
    };
    fanout::start(audience).map_err(|e| Exit(1, format!("bridge: cannot start a thread: {e}")))
}

/// The manager's options: the servers' deadlines, and a handler for each question the host
/// takes, putting it to the host.
fn options(args: &Args, declared: &Declared, asker: &Arc<Asker>) -> Result<ManagerOptions, Exit> {
    let identity = declared
        .client
        .clone()
        .unwrap_or_else(|| Implementation::new("umcp-bridge", env!("CARGO_PKG_VERSION")));
    // A tool that runs as a task is followed to its result for the host, whatever its era.
    let mut client = Options::default()
        .with_tasks(true)
        .with_request_timeout(args.timeout)
        .with_protocol_mode(args.protocol.clone().unwrap_or(ProtocolMode::Auto))
        .with_client_info(identity);
    // The manager's cache keeps each server's era (and tool list) across runs: a host starts
    // the bridge again and again, and a server whose era is known costs no probe.
    let mut manager = ManagerOptions::default().with_startup_timeout(args.timeout);
    let wanted = &declared.capabilities;
    if let Some(elicitation) = &wanted.elicitation {
        let modes = match (elicitation.supports_form(), elicitation.supports_url()) {
            (true, true) => ElicitationModes::ALL,
            (false, true) => ElicitationModes::URL,
            _ => ElicitationModes::FORM,
        };
        client = client.with_elicitation_modes(modes);
        let asker = Arc::clone(asker);
        manager = manager.with_elicitation_handler(move |server, p| asker.elicit(Some(server), p));
    }
    if let Some(sampling) = &wanted.sampling {
        client = client.with_sampling_tools(sampling.tools.is_some());
        let asker = Arc::clone(asker);
        manager = manager.with_sampling_handler(move |server, p| asker.sample(Some(server), p));
    }
    if wanted.roots.is_some() {
        let asker = Arc::clone(asker);
        client = client.with_roots_handler(move || asker.roots());
    }
    sign_in::configure(manager.with_client_options(client), &args.oauth).map_err(usage)
}
