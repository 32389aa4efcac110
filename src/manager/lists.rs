//! Resources, resource templates and prompts across servers: listed from every server in
//! parallel, read and got from the right one.

use std::sync::Arc;

use serde_json::Value;

use crate::client::{Client, RequestOptions};
use crate::error::{Error, Result};
use crate::types::{GetPromptResult, Prompt, ReadResourceResult, ResourceTemplate};

use super::handle::Manager;
use super::slot::Slot;
use super::status::{PromptEntry, ResourceEntry, ServerError, ServerStatus};
use super::with_options::ManagerWithOptions;
use crate::sync::lock;

/// One resource template of the aggregated list.
///
/// See the example on [`Manager::list_resource_templates`].
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ResourceTemplateEntry {
    /// The server it belongs to; read a filled-in URI with [`Manager::read_resource`].
    pub server: String,
    /// The template.
    pub template: ResourceTemplate,
}

impl Manager {
    /// Lists the resources of every server that has any, asking them now, in parallel (and
    /// waiting for servers that are still starting). Servers that failed, or failed to
    /// answer, are reported next to the resources of the others; a server that does not
    /// offer resources is no error here (where its `Client` would answer
    /// [`Error::Unsupported`]), it just adds none.
    ///
    /// ```no_run
    /// # fn main() -> umcp::Result<()> {
    /// # let manager = umcp::Manager::start(Vec::new(), umcp::ManagerOptions::default());
    /// let (resources, errors) = manager.list_resources();
    /// for error in &errors {
    ///     log::warn!("{error}"); // one server failing does not fail the list
    /// }
    /// for entry in &resources {
    ///     let read = manager.read_resource(&entry.server, &entry.resource.uri)?;
    ///     let parts = read.contents.len();
    ///     log::info!("{} from {}: {parts} parts", entry.resource.uri, entry.server);
    /// }
    /// # Ok(()) }
    /// ```
    pub fn list_resources(&self) -> (Vec<ResourceEntry>, Vec<ServerError>) {
        self.with(&RequestOptions::default()).list_resources()
    }

    /// The resource templates of every connected server (URIs with `{placeholders}`, read
    /// once filled in), listed in parallel as [`Manager::list_resources`] lists resources.
    ///
    /// ```no_run
    /// # fn main() -> umcp::Result<()> {
    /// # let manager = umcp::Manager::start(Vec::new(), umcp::ManagerOptions::default());
    /// let (templates, errors) = manager.list_resource_templates();
    /// for entry in &templates {
    ///     log::info!("{}: {}", entry.server, entry.template.uri_template);
    /// }
    /// # let _ = errors;
    /// # Ok(()) }
    /// ```
    pub fn list_resource_templates(&self) -> (Vec<ResourceTemplateEntry>, Vec<ServerError>) {
        self.with(&RequestOptions::default())
            .list_resource_templates()
    }

    /// Lists `list` from every server that offers resources, each item tagged by `entry`.
    fn gather_resources<T: Send, E>(
        &self,
        list: impl Fn(&Client) -> Result<Vec<T>> + Sync,
        entry: impl Fn(String, T) -> E,
    ) -> (Vec<E>, Vec<ServerError>) {
        let results = self.each_server(|slot| {
            let client = slot.client()?;
            if !client.server_capabilities().supports_resources() {
                return Ok(Vec::new());
            }
            list(&client)
        });
        let mut entries = Vec::new();
        let mut errors = Vec::new();
        for (server, result) in results {
            match result {
                Ok(items) => entries.extend(items.into_iter().map(|i| entry(server.clone(), i))),
                Err(error) => errors.push(ServerError { server, error }),
            }
        }
        (entries, errors)
    }

    /// Reads a resource from a server.
    ///
    /// See the example on [`Manager::list_resources`].
    ///
    /// # Errors
    ///
    /// As [`Manager::call_tool`](crate::Manager::call_tool), with the errors of
    /// [`Client::read_resource`](crate::Client::read_resource).
    pub fn read_resource(&self, server: &str, uri: &str) -> Result<ReadResourceResult> {
        self.with(&RequestOptions::default())
            .read_resource(server, uri)
    }

    /// Lists the prompts of every server that has any, asking them now, in parallel, under
    /// namespaced names given by the same rules as tools (see
    /// [`Manager::known_tools`](crate::Manager::known_tools)). As with
    /// [`Manager::list_resources`], a server that offers no prompts adds none, without an
    /// error.
    ///
    /// ```no_run
    /// use serde_json::json;
    ///
    /// # fn main() -> umcp::Result<()> {
    /// # let manager = umcp::Manager::start(Vec::new(), umcp::ManagerOptions::default());
    /// let (prompts, errors) = manager.list_prompts();
    /// for error in &errors {
    ///     log::warn!("{error}");
    /// }
    /// if let Some(entry) = prompts.first() {
    ///     let prompt = manager.get_prompt(&entry.name, json!({}))?;
    ///     log::info!("{} from {}: {} messages", entry.name, entry.server, prompt.messages.len());
    /// }
    /// # Ok(()) }
    /// ```
    pub fn list_prompts(&self) -> (Vec<PromptEntry>, Vec<ServerError>) {
        self.with(&RequestOptions::default()).list_prompts()
    }

    /// Gets a prompt by its namespaced name, with its arguments (an object of strings, or
    /// `Value::Null`). Prompt names come from [`Manager::list_prompts`], which is run first
    /// when the name is not known yet, and like tool names stay bound to their server's
    /// prompt for the manager's life.
    ///
    /// See the example on [`Manager::list_prompts`].
    ///
    /// # Errors
    ///
    /// [`Error::Invalid`] for an unknown name (naming the server and why it is down when the
    /// name begins as the names of a server that is not connected, as for
    /// [`Manager::call_tool`]), then as [`Manager::read_resource`].
    pub fn get_prompt(&self, name: &str, arguments: Value) -> Result<GetPromptResult> {
        self.with(&RequestOptions::default())
            .get_prompt(name, arguments)
    }

    /// The prompts of the last listing, namespaced.
    fn prompt_entries(&self) -> Vec<PromptEntry> {
        let mut listed: Vec<(String, Prompt)> = Vec::new();
        let mut stale = Vec::new();
        for slot in self.slots() {
            let state = slot.state();
            listed.extend(
                state
                    .prompts
                    .iter()
                    .map(|p| (slot.name().to_owned(), p.clone())),
            );
            stale.extend(state.prompts.iter().map(|_| !state.prompts_fresh));
        }
        let keys: Vec<(&str, &str)> = listed
            .iter()
            .map(|(s, p)| (s.as_str(), p.name.as_str()))
            .collect();
        let names = lock(&self.prompt_names).assign(&keys, &self.options.name_shape());
        listed
            .into_iter()
            .zip(names)
            .zip(stale)
            .map(|(((server, prompt), name), stale)| PromptEntry {
                name,
                server,
                prompt,
                stale,
            })
            .collect()
    }

    /// Runs `job` for every server that is not disabled or stopped, each on its own thread
    /// (`umcp-manager-list`), and returns the results by server name.
    fn each_server<T, F>(&self, job: F) -> Vec<(String, Result<T>)>
    where
        T: Send,
        F: Fn(&Slot) -> Result<T> + Sync,
    {
        let slots: Vec<Arc<Slot>> = self
            .slots()
            .into_iter()
            .filter(|s| !matches!(s.status(), ServerStatus::Disabled | ServerStatus::Stopped))
            .collect();
        let job = &job;
        std::thread::scope(|scope| {
            let running: Vec<_> = slots
                .iter()
                .map(|slot| {
                    let spawned = std::thread::Builder::new()
                        .name("umcp-manager-list".into())
                        .spawn_scoped(scope, move || job(slot));
                    (slot, spawned)
                })
                .collect();
            running
                .into_iter()
                .map(|(slot, spawned)| {
                    // Without a thread the job runs here: slower, but the answer is the same.
                    let result = match spawned {
                        Ok(handle) => handle
                            .join()
                            .unwrap_or_else(|_| Err(Error::Protocol("listing panicked".into()))),
                        Err(_) => job(slot),
                    };
                    (slot.name().to_owned(), result)
                })
                .collect()
        })
    }
}

impl ManagerWithOptions<'_> {
    /// [`Manager::list_resources`] with these options, applied to every server's requests.
    ///
    /// See the example on [`ManagerWithOptions`].
    pub fn list_resources(&self) -> (Vec<ResourceEntry>, Vec<ServerError>) {
        let options = self.options;
        self.manager.gather_resources(
            |client| client.with(options).list_all_resources(),
            |server, resource| ResourceEntry { server, resource },
        )
    }

    /// [`Manager::list_resource_templates`] with these options, applied to every server's
    /// requests.
    ///
    /// See the example on [`ManagerWithOptions`].
    pub fn list_resource_templates(&self) -> (Vec<ResourceTemplateEntry>, Vec<ServerError>) {
        let options = self.options;
        self.manager.gather_resources(
            |client| client.with(options).list_all_resource_templates(),
            |server, template| ResourceTemplateEntry { server, template },
        )
    }

    /// [`Manager::read_resource`] with these options.
    ///
    /// See the example on [`ManagerWithOptions`].
    ///
    /// # Errors
    ///
    /// As [`Manager::read_resource`].
    pub fn read_resource(&self, server: &str, uri: &str) -> Result<ReadResourceResult> {
        self.manager
            .client_for(server)?
            .with(self.options)
            .read_resource(uri)
    }

    /// [`Manager::list_prompts`] with these options, applied to every server's requests.
    ///
    /// See the example on [`ManagerWithOptions`].
    pub fn list_prompts(&self) -> (Vec<PromptEntry>, Vec<ServerError>) {
        let options = self.options;
        let results = self.manager.each_server(|slot| {
            let client = slot.client()?;
            let prompts = if client.server_capabilities().supports_prompts() {
                client.with(options).list_all_prompts()?
            } else {
                Vec::new()
            };
            let mut state = slot.state();
            state.prompts.clone_from(&prompts);
            state.prompts_fresh = true;
            Ok(prompts)
        });
        let mut errors = Vec::new();
        for (server, result) in results {
            if let Err(error) = result {
                errors.push(ServerError { server, error });
            }
        }
        (self.manager.prompt_entries(), errors)
    }

    /// [`Manager::get_prompt`] with these options (also used for the listing it may run
    /// first).
    ///
    /// See the example on [`ManagerWithOptions`].
    ///
    /// # Errors
    ///
    /// As [`Manager::get_prompt`].
    pub fn get_prompt(&self, name: &str, arguments: Value) -> Result<GetPromptResult> {
        let manager = self.manager;
        let find = || {
            let names = lock(&manager.prompt_names);
            names
                .lookup(name)
                .map(|(s, p)| (s.to_owned(), p.to_owned()))
        };
        let (server, prompt) = match find() {
            Some(found) => found,
            None => {
                self.list_prompts();
                find().ok_or_else(|| manager.unknown("prompt", name, &manager.prompt_names))?
            }
        };
        manager
            .client_for(&server)?
            .with(self.options)
            .get_prompt(&prompt, arguments)
    }
}
