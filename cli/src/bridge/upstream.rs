//! The servers behind the bridge, run by one [`Manager`]: one server, whose items keep the
//! names it gives them, or every server of a configuration file, whose tools and prompts are
//! namespaced as the manager names them (`server__tool`) and whose resources are told apart
//! by the server that listed them. A request of a host is routed here to the server it is for.
//!
//! The manager reconnects a server that went away (a crash, an expired session) on its own;
//! a call that was in flight then fails, and the next one goes to the new connection.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::Value;
use umcp::types::{CompleteReference, CompleteRequestParams, LoggingLevel, SubscriptionFilter};
use umcp::{Client, Error, ManagedSubscription, Manager, RequestOptions, ToolEntry};

use crate::sync::lock;

/// How long a tool listing waits for the manager to list a server again after it announced
/// a change, so that a host listing right after hearing of it sees the new list.
const FRESH_WAIT: Duration = Duration::from_secs(2);

/// The servers.
pub struct Upstream {
    manager: Arc<Manager>,
    /// The one server's name, when the bridge serves one.
    single: Option<String>,
    /// Each resource URI of the listings, with its server (several servers).
    resources: Mutex<HashMap<String, String>>,
    /// Each resource template's URI up to its first `{`, with its server.
    templates: Mutex<Vec<(String, String)>>,
    /// Each prompt's name given to hosts, with its server and own name, for completion.
    prompts: Mutex<HashMap<String, (String, String)>>,
}

impl Upstream {
    /// The servers of `manager`; `single` names the one server when there is one.
    pub fn new(manager: Arc<Manager>, single: Option<String>) -> Upstream {
        Upstream {
            manager,
            single,
            resources: Mutex::default(),
            templates: Mutex::default(),
            prompts: Mutex::default(),
        }
    }

    pub fn manager(&self) -> &Arc<Manager> {
        &self.manager
    }

    /// The one server's name, when the bridge serves one.
    pub fn single(&self) -> Option<&str> {
        self.single.as_deref()
    }

    /// Waits up to `wait` for every server to connect or fail; for one server, why it is
    /// not connected.
    pub fn ready(&self, wait: Duration) -> Result<(), String> {
        self.manager.wait_ready(wait);
        let Some(single) = &self.single else {
            return Ok(());
        };
        match self.manager.status(single) {
            Some(status) if status.is_connected() => Ok(()),
            Some(status) => Err(format!("server `{single}`: {status}")),
            None => Err(format!("no server `{single}`")),
        }
    }

    /// The client of `server`, waiting for one still starting.
    pub fn client(&self, server: &str) -> umcp::Result<Arc<Client>> {
        self.manager.client(server)
    }

    /// The clients of every connected server, by name.
    pub fn clients(&self) -> Vec<(String, Arc<Client>)> {
        self.manager
            .statuses()
            .into_iter()
            .filter(|(_, status)| status.is_connected())
            .filter_map(|(name, _)| Some((name.clone(), self.manager.client(&name).ok()?)))
            .collect()
    }

    /// The server of the tool hosts call `name`.
    pub fn tool_server(&self, name: &str) -> Option<String> {
        if let Some(single) = &self.single {
            return Some(single.clone());
        }
        let entries = self.manager.known_tools();
        entries
            .into_iter()
            .find(|e| e.name == name)
            .map(|e| e.server)
    }

    /// The server of the prompt hosts call `name`, and its own name there.
    pub fn prompt_route(&self, name: &str) -> umcp::Result<(String, String)> {
        if let Some(single) = &self.single {
            return Ok((single.clone(), name.to_owned()));
        }
        if let Some(route) = lock(&self.prompts).get(name) {
            return Ok(route.clone());
        }
        self.remember_prompts(&RequestOptions::default());
        let route = lock(&self.prompts).get(name).cloned();
        route.ok_or_else(|| Error::Invalid(format!("no prompt named `{name}`")))
    }

    /// The server of resource `uri` (or of the template it was made from).
    pub fn resource_server(&self, uri: &str, options: &RequestOptions) -> umcp::Result<String> {
        if let Some(single) = &self.single {
            return Ok(single.clone());
        }
        if let Some(server) = self.known_resource(uri) {
            return Ok(server);
        }
        self.remember_resources(options);
        self.known_resource(uri).ok_or_else(|| {
            Error::Invalid(format!(
                "no server of the bridge lists the resource `{uri}`"
            ))
        })
    }

    fn known_resource(&self, uri: &str) -> Option<String> {
        if let Some(server) = lock(&self.resources).get(uri) {
            return Some(server.clone());
        }
        let templates = lock(&self.templates);
        let by_prefix = templates
            .iter()
            .filter(|(prefix, _)| uri.starts_with(prefix.as_str()))
            .max_by_key(|(prefix, _)| prefix.len());
        by_prefix.map(|(_, server)| server.clone())
    }

    /// The manager's tools, once every connected server's list is fresh (or a moment has
    /// passed): a listing right after a change announced sees the change.
    pub fn fresh_tools(&self) -> Vec<ToolEntry> {
        let started = Instant::now();
        loop {
            let entries = self.manager.known_tools();
            let connected = |server: &str| {
                self.manager
                    .status(server)
                    .is_some_and(|status| status.is_connected())
            };
            let stale = entries.iter().any(|e| e.stale && connected(&e.server));
            if !stale || started.elapsed() >= FRESH_WAIT {
                return entries;
            }
            // The manager lists on its own thread and says nothing when done.
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Remembers the prompts of every server under the names hosts get.
    pub fn remember_prompts(&self, options: &RequestOptions) -> Vec<umcp::PromptEntry> {
        let (entries, failed) = self.manager.with(options).list_prompts();
        for failure in failed {
            log::debug!("listing prompts: {failure}");
        }
        let mut prompts = lock(&self.prompts);
        for entry in &entries {
            let route = (entry.server.clone(), entry.prompt.name.clone());
            prompts.insert(entry.name.clone(), route);
        }
        entries
    }

    /// Remembers the resources and templates of every server, with their servers.
    pub fn remember_resources(
        &self,
        options: &RequestOptions,
    ) -> (Vec<umcp::ResourceEntry>, Vec<umcp::ResourceTemplateEntry>) {
        let listing = self.manager.with(options);
        let (resources, failed) = listing.list_resources();
        let (templates, failed_templates) = listing.list_resource_templates();
        for failure in failed.iter().chain(&failed_templates) {
            log::debug!("listing resources: {failure}");
        }
        let mut known = lock(&self.resources);
        for entry in &resources {
            known.insert(entry.resource.uri.clone(), entry.server.clone());
        }
        *lock(&self.templates) = templates
            .iter()
            .map(|t| {
                let uri = &t.template.uri_template;
                let prefix = uri.split('{').next().unwrap_or(uri).to_owned();
                (prefix, t.server.clone())
            })
            .collect();
        (resources, templates)
    }

    /// The server a completion is for, and the request as that server knows it.
    pub fn completion_route(
        &self,
        mut params: CompleteRequestParams,
        options: &RequestOptions,
    ) -> umcp::Result<(String, CompleteRequestParams)> {
        let server = match &mut params.reference {
            CompleteReference::Prompt(prompt) => {
                let (server, own) = self.prompt_route(&prompt.name)?;
                prompt.name = own;
                server
            }
            CompleteReference::Resource(template) => {
                self.resource_server(&template.uri, options)?
            }
        };
        Ok((server, params))
    }

    /// Sets every connected server's log level; a server that cannot is skipped.
    pub fn set_level(&self, level: LoggingLevel) {
        for (name, client) in self.clients() {
            if let Err(e) = client.set_logging_level(level) {
                log::debug!("server `{name}`: logging/setLevel: {e}");
            }
        }
    }

    /// Tells every connected handshake-era server that the host's roots changed.
    pub fn roots_changed(&self) {
        for (name, client) in self.clients() {
            match client.notify_roots_list_changed() {
                Ok(()) | Err(Error::Unsupported(_)) => {}
                Err(e) => log::debug!("server `{name}`: roots/list_changed: {e}"),
            }
        }
    }

    /// Follows resource `uri` on its server, across reconnections.
    pub fn follow(&self, uri: &str) -> umcp::Result<ManagedSubscription> {
        let server = self.resource_server(uri, &RequestOptions::default())?;
        self.manager
            .listen(&server, SubscriptionFilter::new().resource(uri))
    }

    /// Describes a server's tool for hosts: named as hosts call it, and without the task
    /// support it declares, as the bridge follows a tool's task to its end for the host.
    pub fn tool_for_host(tool: &umcp::types::Tool, name: &str) -> Value {
        let mut value = serde_json::to_value(tool).unwrap_or(Value::Null);
        if let Some(object) = value.as_object_mut() {
            object.insert("name".into(), Value::from(name));
            object.remove("execution");
        }
        value
    }
}
