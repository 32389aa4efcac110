//! What the servers announce, handed on to the hosts, by two threads.
//!
//! `umcp-bridge-notes` reads the manager's notifications: a list that changed goes to every
//! handshake-era host and to the listen streams that want it; a log line (named after its
//! server when there are several) to the handshake-era hosts whose level it reaches, and to the
//! requests in progress of stateless-era hosts that asked for log lines in their `_meta`; the
//! end of a URL elicitation to the handshake-era hosts. `umcp-bridge-status` watches the
//! servers' connections: after a server reconnected, its lists are compared with those it
//! had, and the hosts hear of those that changed, and of nothing else.

use std::collections::hash_map::DefaultHasher;
use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::sync::Arc;

use serde_json::{json, Value};
use umcp::types::ServerNotification;
use umcp::TaggedNotification;

use super::follow::Followers;
use super::host::Hosts;
use super::jobs::Jobs;
use super::outbox::Kind;
use super::upstream::Upstream;
use super::wire::notification;

const TOOLS_CHANGED: &str = "notifications/tools/list_changed";
const PROMPTS_CHANGED: &str = "notifications/prompts/list_changed";
const RESOURCES_CHANGED: &str = "notifications/resources/list_changed";

/// Who hears what the servers announce.
#[derive(Clone)]
pub struct Audience {
    pub upstream: Arc<Upstream>,
    pub hosts: Arc<Hosts>,
    pub followers: Arc<Followers>,
    /// The requests in progress, for the log lines of stateless-era hosts.
    pub jobs: Arc<Jobs>,
}

impl Audience {
    /// Tells every host that follows lists that the list of `method` changed.
    pub fn announce(&self, method: &str) {
        for host in self.hosts.sessions() {
            host.out.send(notification(method, json!({})), Kind::Note);
        }
        self.followers.announce(method, None, &json!({}));
    }
}

/// Starts both threads; they end when the manager is closed.
pub fn start(audience: Audience) -> std::io::Result<()> {
    let notes = audience.upstream.manager().notifications();
    let relaying = audience.clone();
    std::thread::Builder::new()
        .name("umcp-bridge-notes".into())
        .spawn(move || {
            for tagged in notes.iter() {
                relay(&relaying, tagged);
            }
        })?;
    let events = audience.upstream.manager().status_events();
    std::thread::Builder::new()
        .name("umcp-bridge-status".into())
        .spawn(move || {
            let mut seen = HashMap::new();
            for event in events.iter() {
                if event.status.is_connected() {
                    compare(&audience, &event.server, &mut seen);
                }
            }
        })?;
    Ok(())
}

fn relay(audience: &Audience, tagged: TaggedNotification) {
    match tagged.notification {
        ServerNotification::ToolListChanged => {
            // The manager lists the server again on its own: wait for it, so that a host
            // listing now sees the change.
            audience.upstream.fresh_tools();
            audience.announce(TOOLS_CHANGED);
        }
        ServerNotification::PromptListChanged => audience.announce(PROMPTS_CHANGED),
        ServerNotification::ResourceListChanged => audience.announce(RESOURCES_CHANGED),
        ServerNotification::LoggingMessage(mut message) => {
            if audience.upstream.single().is_none() {
                let logger = match message.logger.take() {
                    Some(logger) => format!("{}/{logger}", tagged.server),
                    None => tagged.server.clone(),
                };
                message.logger = Some(logger);
            }
            let params = serde_json::to_value(&message).unwrap_or_default();
            let line = || notification("notifications/message", params.clone());
            for host in audience.hosts.sessions() {
                if host.wants_log(message.level) {
                    host.out.send(line(), Kind::Note);
                }
            }
            for reply in audience.jobs.log_replies(&tagged.server, message.level) {
                reply.send(line(), Kind::Note);
            }
        }
        ServerNotification::ElicitationComplete(complete) => {
            let params = serde_json::to_value(&complete).unwrap_or_default();
            for host in audience.hosts.sessions() {
                let note = notification("notifications/elicitation/complete", params.clone());
                host.out.send(note, Kind::Note);
            }
        }
        // Resource updates come through the subscriptions hosts opened (see `follow`).
        _ => {}
    }
}

/// What a server's lists were, as digests: its tools, prompts and resources.
#[derive(Clone, Copy, PartialEq, Eq)]
struct Lists {
    tools: u64,
    prompts: u64,
    resources: u64,
}

/// Takes `server`'s lists, now that it is connected; after a reconnection, announces those
/// that differ from before.
fn compare(audience: &Audience, server: &str, seen: &mut HashMap<String, Lists>) {
    let Ok(client) = audience.upstream.client(server) else {
        return;
    };
    let tools: Vec<Value> = audience
        .upstream
        .fresh_tools()
        .into_iter()
        .filter(|entry| entry.server == server)
        .map(|entry| serde_json::to_value(entry.tool).unwrap_or_default())
        .collect();
    let digest = |value: &Value| {
        let mut hasher = DefaultHasher::new();
        value.to_string().hash(&mut hasher);
        hasher.finish()
    };
    let listed = |list: umcp::Result<Value>| list.map(|v| digest(&v)).unwrap_or(0);
    let capabilities = client.server_capabilities();
    let lists = Lists {
        tools: digest(&Value::Array(tools)),
        prompts: match capabilities.prompts {
            Some(_) => listed(client.list_all_prompts().map(as_value)),
            None => 0,
        },
        resources: match capabilities.resources {
            Some(_) => listed(client.list_all_resources().map(as_value)),
            None => 0,
        },
    };
    let Some(before) = seen.insert(server.to_owned(), lists) else {
        return;
    };
    for (changed, method) in [
        (before.tools != lists.tools, TOOLS_CHANGED),
        (before.prompts != lists.prompts, PROMPTS_CHANGED),
        (before.resources != lists.resources, RESOURCES_CHANGED),
    ] {
        if changed {
            log::debug!("server `{server}` reconnected with a new list: {method}");
            audience.announce(method);
        }
    }
}

fn as_value(items: impl serde::Serialize) -> Value {
    serde_json::to_value(items).unwrap_or_default()
}
