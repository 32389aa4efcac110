//! Running a command against the servers the manager connected: the dispatch, and the
//! commands that list, call, read, prompt, complete, describe and ping.

use std::time::Instant;

use serde_json::{json, Value};
use umcp::types::{CompleteReference, CompleteRequestParams, ContentBlock, EmbeddedResource, Tool};
use umcp::ServerError;

use crate::arguments::Arguments;
use crate::exit::{usage, Exit};
use crate::interact::Progress;
use crate::output::{first_line, pretty, say, warn};
use crate::target::Target;
use crate::{listing, shape, shown, watch};

/// One tool of `tools --json`: a struct, not a `Value`, so the tool's schemas are printed in
/// the server's key order.
#[derive(serde::Serialize)]
struct ToolRow {
    name: String,
    server: String,
    tool: Tool,
}

impl Target<'_> {
    /// Runs `command` with the words after it (`rest`) and the arguments of `call` and
    /// `prompt`, read before anything started.
    pub fn execute(&self, command: &str, rest: &[&str], arguments: Arguments) -> Result<(), Exit> {
        match (command, rest) {
            ("tools", _) => self.list_tools(),
            ("resources", _) => self.list_resources(),
            ("templates", _) => self.list_templates(),
            ("prompts", _) => self.list_prompts(),
            ("call", [tool, ..]) => self.call(tool, arguments),
            ("read", [uri]) => self.read(uri),
            ("prompt", [name, ..]) => self.prompt(name, arguments),
            ("complete", [kind, name, argument, typed @ ..]) => {
                self.complete(kind, name, argument, typed.first().copied())
            }
            ("info", _) => {
                self.info();
                Ok(())
            }
            ("ping", _) => self.ping(),
            ("watch", _) => watch::run(self),
            ("tasks", _) => self.tasks(rest),
            ("skills", _) => self.skills(rest),
            ("describe", [tool]) => self.describe(tool),
            ("grep", words) => self.grep(&words.join(" ")),
            _ => Err(usage("bad command")),
        }
    }

    /// `tools`: each tool with the first line of its description, or the tools as JSON.
    fn list_tools(&self) -> Result<(), Exit> {
        let listing = self.tools();
        let failed = listing.failed.iter().map(|(s, e)| (s.as_str(), e));
        let code = self.report_failed("tools", failed);
        if !listing.tools.is_empty() || code == 0 {
            self.out.table(listing.tools.into_iter().map(|t| {
                let cells = vec![
                    shape::signature(&t.name, t.tool.input_schema.as_value()),
                    first_line(t.tool.description.as_deref()).to_owned(),
                ];
                let row = ToolRow {
                    name: t.name,
                    server: t.server,
                    tool: t.tool,
                };
                (row, cells)
            }));
        }
        done(code)
    }

    /// `resources`: each resource's URI and what it is.
    fn list_resources(&self) -> Result<(), Exit> {
        let (mut resources, errors) = self.manager.with(self.options()).list_resources();
        resources.retain(|e| self.picked(&e.server));
        let errors = self.timed_errors(errors);
        let code = self.report_failed("resources", server_errors(&errors));
        self.out.table(resources.iter().map(|e| {
            let r = &e.resource;
            let about = first_line(r.description.as_deref().or(Some(&r.name)));
            let cells = vec![
                format!("{}{}", self.whose(&e.server), r.uri),
                about.to_owned(),
            ];
            (json!({"server": e.server, "resource": r}), cells)
        }));
        done(code)
    }

    /// `templates`: each resource template's URI template and what it is.
    fn list_templates(&self) -> Result<(), Exit> {
        let (mut templates, errors) = self.manager.with(self.options()).list_resource_templates();
        templates.retain(|e| self.picked(&e.server));
        let errors = self.timed_errors(errors);
        let code = self.report_failed("resource templates", server_errors(&errors));
        self.out.table(templates.iter().map(|e| {
            let t = &e.template;
            let about = first_line(t.description.as_deref().or(Some(&t.name)));
            let cells = vec![
                format!("{}{}", self.whose(&e.server), t.uri_template),
                about.to_owned(),
            ];
            (json!({"server": e.server, "template": t}), cells)
        }));
        done(code)
    }

    /// `prompts`: each prompt with the first line of its description.
    fn list_prompts(&self) -> Result<(), Exit> {
        let (mut prompts, errors) = self.manager.with(self.options()).list_prompts();
        prompts.retain(|e| self.picked(&e.server));
        let errors = self.timed_errors(errors);
        let code = self.report_failed("prompts", server_errors(&errors));
        let single = self.single.is_some();
        self.out.table(prompts.iter().map(|e| {
            let name = if single { &e.prompt.name } else { &e.name };
            // Its arguments, an optional one marked `?`, as a tool's signature shows them.
            let arguments: Vec<String> = (e.prompt.arguments.iter().flatten())
                .map(|a| format!("{}{}", a.name, if a.is_required() { "" } else { "?" }))
                .collect();
            let cells = vec![
                format!("{name}({})", arguments.join(", ")),
                first_line(e.prompt.description.as_deref()).to_owned(),
            ];
            (
                json!({"name": name, "server": e.server, "prompt": e.prompt}),
                cells,
            )
        }));
        done(code)
    }

    /// `read URI`: the resource's contents.
    fn read(&self, uri: &str) -> Result<(), Exit> {
        let client = self.client()?;
        let result = self
            .timed(client.with(&self.request_options()).read_resource(uri))
            .map_err(|e| self.failed(e))?;
        let blocks: Vec<ContentBlock> = result
            .contents
            .iter()
            .map(|c| ContentBlock::Resource(EmbeddedResource::new(c.clone())))
            .collect();
        self.show_content(&result, &blocks, uri)
    }

    /// `prompt NAME [ARGS]`: the prompt's description and messages.
    fn prompt(&self, name: &str, arguments: Arguments) -> Result<(), Exit> {
        let arguments = arguments.for_prompt().map_err(usage)?;
        let result = match &self.single {
            Some(_) => {
                let client = self.client()?;
                self.check_prompt(&client, name)?;
                self.timed(
                    client
                        .with(&self.request_options())
                        .get_prompt(name, arguments),
                )
                .map_err(|e| self.failed(e))
            }
            None => self
                .timed(
                    self.manager
                        .with(&self.request_options())
                        .get_prompt(name, arguments),
                )
                .map_err(|e| self.unknown(name, e)),
        };
        let result = result?;
        if let (Some(description), false) = (&result.description, self.out.json) {
            say(&format!("# {}", shown::block(description)));
        }
        let blocks: Vec<ContentBlock> = result.messages.iter().map(|m| m.content.clone()).collect();
        self.show_content(&result, &blocks, name)
    }

    /// `complete prompt|resource NAME ARGUMENT [TYPED]`: the values the server offers.
    fn complete(
        &self,
        kind: &str,
        name: &str,
        argument: &str,
        typed: Option<&str>,
    ) -> Result<(), Exit> {
        let reference = match kind {
            "prompt" => CompleteReference::prompt(name),
            "resource" => CompleteReference::resource(name),
            other => {
                return Err(usage(format!(
                    "complete {other}: expected prompt or resource"
                )))
            }
        };
        let params = CompleteRequestParams::new(reference, argument, typed.unwrap_or_default());
        let client = self.client()?;
        let result = self
            .timed(client.with(self.options()).complete(params))
            .map_err(|e| self.failed(e))?;
        match self.out.json {
            true => say(&pretty(&result)),
            false => (result.completion.values.iter()).for_each(|v| say(&shown::line(v))),
        }
        Ok(())
    }

    /// `call TOOL [ARGS]`: the tool's result, `KEY=VALUE` arguments typed by its input schema
    /// and progress shown while it runs.
    fn call(&self, tool: &str, arguments: Arguments) -> Result<(), Exit> {
        // `KEY=VALUE` pairs are read by the types of the tool's input schema.
        let listing = self.tools();
        let listed = listing.tools.iter().find(|t| t.name == tool);
        let schema = listed.map(|t| t.tool.input_schema.clone().into_value());
        if schema.is_none() && self.deadline.expired() && !listing.failed.is_empty() {
            // The command's time went on the listing: nothing is called.
            let failed = listing.failed.iter().map(|(s, e)| (s.as_str(), e));
            return done(self.report_failed("tools", failed).max(1));
        }
        // A tool the configuration filters out or the lock hides is named as such when called.
        if schema.is_none() && !self.hidden(tool) {
            if self.single.is_some() && listing.failed.is_empty() {
                // The one server listed its tools, and not this one: a mistyped name, however
                // the server would refuse it (the SDKs answer with an `isError` result).
                let names = listing.tools.iter().map(|t| t.name.as_str());
                listing::unlisted("tool", tool, names.collect())?;
            }
            if arguments.has_text() {
                for (server, error) in &listing.failed {
                    let why = shown::block(&error.to_string());
                    warn(&format!(
                        "umcp: server `{server}`: listing tools failed: {why}; \
                         KEY=VALUE arguments are sent as text, not typed by the tool's schema"
                    ));
                }
            }
        }
        let arguments = arguments.for_tool(schema.as_ref()).map_err(usage)?;
        // A missing or unknown parameter is the caller's to fix: nothing is sent.
        if let (Some(schema), false) = (&schema, self.args.no_check) {
            shape::check(tool, schema, &arguments).map_err(usage)?;
        }
        if self.args.task {
            let listed = listed
                .ok_or_else(|| usage(format!("--task: no server lists a tool named `{tool}`")))?;
            return self.start_task(&listed.server, &listed.tool.name, arguments);
        }
        let client = match &self.single {
            Some(_) => Some(self.client()?),
            None => None,
        };
        let (options, progress) = Progress::attach(self.request_options());
        let result = match client {
            Some(client) => self
                .timed(client.with(&options).call_tool(tool, arguments))
                .map_err(|e| self.failed(e)),
            None => self
                .timed(self.manager.with(&options).call_tool(tool, arguments))
                .map_err(|e| self.unknown(tool, e)),
        };
        progress.finish();
        self.show_result(&result?, tool)
    }

    /// Whether `tool` is one the one server lists and its filter or lock hides: its call is
    /// refused as such, not as a name the server does not offer. (With several servers the
    /// manager says so itself.)
    fn hidden(&self, tool: &str) -> bool {
        let Some(single) = &self.single else {
            return false;
        };
        let hidden = self.manager.hidden_tools();
        hidden
            .iter()
            .any(|h| h.server.as_ref() == Some(single) && h.tool == tool)
    }

    /// Each server's identity, protocol, capabilities and instructions.
    fn info(&self) {
        let mut all = Vec::new();
        for (name, client) in self.clients() {
            let init = client.initialize_result();
            // One row per fact, shown as `key: value` or as one JSON object per server.
            let rows: Vec<(&str, Value)> = vec![
                ("server", json!(name)),
                ("serverInfo", json!(init.server_info)),
                ("protocolVersion", json!(init.protocol_version)),
                ("era", json!(client.era().as_str())),
                ("transport", json!(client.transport_kind())),
                ("capabilities", json!(init.capabilities)),
                ("instructions", json!(init.instructions)),
            ];
            if self.out.json {
                all.push(Value::Object(
                    rows.into_iter().map(|(k, v)| (k.to_owned(), v)).collect(),
                ));
                continue;
            }
            // Escaped, the instructions keeping their lines (indented under their key).
            for (key, value) in rows {
                let shown = match value {
                    Value::String(s) => shown::block(&s),
                    Value::Null => "-".to_owned(),
                    other => shown::json(&other.to_string()),
                };
                say(&format!("{key}: {shown}"));
            }
            say("");
        }
        if self.out.json {
            say(&pretty(&all));
        }
    }

    /// Pings each server, with a row for each one that never connected too; fails (exit code
    /// 3) when one did not connect, or as its error says when one did not answer.
    fn ping(&self) -> Result<(), Exit> {
        let mut rows = Vec::new();
        let mut code = 0;
        for (name, status) in self.manager.statuses() {
            if !self.picked(&name) {
                continue;
            }
            if !status.is_connected() {
                let why = crate::servers::why_down(&status);
                let cells = vec![name.clone(), "failed".into(), why.clone()];
                rows.push((
                    json!({"server": name, "ok": false, "ms": null, "error": why}),
                    cells,
                ));
                code = 3;
                continue;
            }
            let started = Instant::now();
            let outcome = self
                .manager
                .client(&name)
                .and_then(|c| self.timed(c.with(self.options()).ping()));
            let millis = started.elapsed().as_secs_f64() * 1000.0;
            let cells = match &outcome {
                Ok(()) => vec![name.clone(), "ok".into(), format!("{millis:.1} ms")],
                Err(e) => vec![name.clone(), "failed".into(), e.to_string()],
            };
            rows.push((
                json!({"server": name, "ok": outcome.is_ok(), "ms": millis,
                       "error": outcome.as_ref().err().map(ToString::to_string)}),
                cells,
            ));
            if let Err(e) = outcome {
                code = code.max(self.failed(e).0);
            }
        }
        self.out.table(rows.into_iter());
        match code {
            0 => Ok(()),
            code => Err(Exit(code, String::new())),
        }
    }

    /// The failures of a listing across servers, each a timeout once the command's time is up.
    pub fn timed_errors(&self, errors: Vec<ServerError>) -> Vec<ServerError> {
        errors
            .into_iter()
            .filter(|e| self.picked(&e.server))
            .map(|mut e| {
                e.error = self.deadline.timed_error(e.error);
                e
            })
            .collect()
    }

    /// `server: ` before a listed item, when items of several servers are listed: a resource
    /// is read from one server (`--server NAME`), so its line says which.
    fn whose(&self, server: &str) -> String {
        match self.single {
            Some(_) => String::new(),
            None => format!("{server}: "),
        }
    }

    /// A name the manager does not know is a usage error (a typo, which the message may
    /// correct), unless it begins as the names of a server that did not connect
    /// (`server__tool`): that server's failure is then the reason, exit code 3.
    fn unknown(&self, name: &str, error: umcp::Error) -> Exit {
        let umcp::Error::Invalid(_) = error else {
            return self.failed(error);
        };
        let down = self.manager.statuses().into_iter().any(|(server, status)| {
            !status.is_connected() && name.starts_with(&format!("{server}__"))
        });
        Exit(if down { 3 } else { 2 }, shown::block(&error.to_string()))
    }
}

/// The end of a command whose output is printed: exit code `code`, 0 for success.
fn done(code: u8) -> Result<(), Exit> {
    match code {
        0 => Ok(()),
        code => Err(Exit(code, String::new())),
    }
}

/// The failures of a listing across servers, as server names and errors.
fn server_errors(errors: &[ServerError]) -> impl Iterator<Item = (&str, &umcp::Error)> {
    errors.iter().map(|e| (e.server.as_str(), &e.error))
}
