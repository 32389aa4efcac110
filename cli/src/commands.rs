//! Running a command against the servers the manager connected.

use std::time::{Duration, Instant};

use serde_json::{json, Value};
use umcp::types::{
    CallToolResult, CompleteReference, CompleteRequestParams, ContentBlock, EmbeddedResource,
    SubscriptionFilter, Tool,
};
use umcp::{Client, Manager, RequestOptions, ServerError};

use crate::args::usage;
use crate::arguments::Arguments;
use crate::deadline::Deadline;
use crate::interact::Progress;
use crate::output::{first_line, pretty, say, warn, Output};
use crate::shown;
use crate::Exit;

/// One tool of `tools --json`: a struct, not a `Value`, so the tool's schemas are printed in
/// the server's key order.
#[derive(serde::Serialize)]
struct ToolRow {
    name: String,
    server: String,
    tool: Tool,
}

/// The servers a command runs against.
pub struct Target<'a> {
    pub manager: &'a Manager,
    /// The server's name when there is only one: names are then used as the server gives them.
    pub single: Option<String>,
    pub out: Output,
    /// The clock of every request: the `--timeout`, counted from when the servers connected
    /// (see `deadline`).
    pub deadline: Deadline,
    /// What `watch` follows (empty: every list) and for how long (`None`: until ended).
    pub watch: (SubscriptionFilter, Option<Duration>),
}

impl Target<'_> {
    pub fn execute(&self, command: &str, rest: &[&str], arguments: Arguments) -> Result<(), Exit> {
        let (manager, out, single) = (self.manager, &self.out, self.single.is_some());
        match (command, rest) {
            ("tools", _) => {
                let listing = self.tools();
                let failed = listing.failed.iter().map(|(s, e)| (s.as_str(), e));
                let code = self.report_failed("tools", failed);
                if !listing.tools.is_empty() || code == 0 {
                    out.list(listing.tools.into_iter().map(|t| {
                        let line =
                            format!("{}  {}", t.name, first_line(t.tool.description.as_deref()));
                        let row = ToolRow {
                            name: t.name,
                            server: t.server,
                            tool: t.tool,
                        };
                        (row, line)
                    }));
                }
                return done(code);
            }
            ("resources", _) => {
                let (mut resources, errors) = manager.with(self.options()).list_resources();
                resources.retain(|e| self.picked(&e.server));
                let errors = self.timed_errors(errors);
                let code = self.report_failed("resources", server_errors(&errors));
                out.list(resources.iter().map(|e| {
                    let r = &e.resource;
                    let about = first_line(r.description.as_deref().or(Some(&r.name)));
                    let line = format!("{}{}  {about}", self.whose(&e.server), r.uri);
                    (json!({"server": e.server, "resource": r}), line)
                }));
                return done(code);
            }
            ("templates", _) => {
                let (mut templates, errors) =
                    manager.with(self.options()).list_resource_templates();
                templates.retain(|e| self.picked(&e.server));
                let errors = self.timed_errors(errors);
                let code = self.report_failed("resource templates", server_errors(&errors));
                out.list(templates.iter().map(|e| {
                    let t = &e.template;
                    let about = first_line(t.description.as_deref().or(Some(&t.name)));
                    let line = format!("{}{}  {about}", self.whose(&e.server), t.uri_template);
                    (json!({"server": e.server, "template": t}), line)
                }));
                return done(code);
            }
            ("prompts", _) => {
                let (mut prompts, errors) = manager.with(self.options()).list_prompts();
                prompts.retain(|e| self.picked(&e.server));
                let errors = self.timed_errors(errors);
                let code = self.report_failed("prompts", server_errors(&errors));
                out.list(prompts.iter().map(|e| {
                    let name = if single { &e.prompt.name } else { &e.name };
                    let line = format!("{name}  {}", first_line(e.prompt.description.as_deref()));
                    (
                        json!({"name": name, "server": e.server, "prompt": e.prompt}),
                        line,
                    )
                }));
                return done(code);
            }
            ("call", [tool, ..]) => return self.call(tool, arguments),
            ("read", [uri]) => {
                let client = self.client()?;
                let result = self
                    .timed(client.with(self.options()).read_resource(uri))
                    .map_err(|e| self.failed(e))?;
                let blocks: Vec<ContentBlock> = result
                    .contents
                    .iter()
                    .map(|c| ContentBlock::Resource(EmbeddedResource::new(c.clone())))
                    .collect();
                out.content(&result, &blocks);
            }
            ("prompt", [name, ..]) => {
                let arguments = arguments.for_prompt().map_err(usage)?;
                let result = match &self.single {
                    Some(_) => {
                        let client = self.client()?;
                        self.check_prompt(&client, name)?;
                        self.timed(client.with(self.options()).get_prompt(name, arguments))
                            .map_err(|e| self.failed(e))
                    }
                    None => self
                        .timed(manager.with(self.options()).get_prompt(name, arguments))
                        .map_err(|e| self.unknown(name, e)),
                };
                let result = result?;
                if let (Some(description), false) = (&result.description, out.json) {
                    say(&format!("# {}", shown::block(description)));
                }
                let blocks: Vec<ContentBlock> =
                    result.messages.iter().map(|m| m.content.clone()).collect();
                out.content(&result, &blocks);
            }
            ("complete", [kind, name, argument, typed @ ..]) => {
                let reference = match *kind {
                    "prompt" => CompleteReference::prompt(*name),
                    "resource" => CompleteReference::resource(*name),
                    other => {
                        return Err(usage(format!(
                            "complete {other}: expected prompt or resource"
                        )))
                    }
                };
                let value = typed.first().copied().unwrap_or_default();
                let params = CompleteRequestParams::new(reference, *argument, value);
                let client = self.client()?;
                let result = self
                    .timed(client.with(self.options()).complete(params))
                    .map_err(|e| self.failed(e))?;
                match out.json {
                    true => say(&pretty(&result)),
                    false => (result.completion.values.iter()).for_each(|v| say(&shown::line(v))),
                }
            }
            ("info", _) => self.info(),
            ("ping", _) => return self.ping(),
            ("watch", _) => return crate::watch::run(self),
            ("tasks", _) => return self.tasks(rest),
            ("skills", _) => return self.skills(rest),
            _ => return Err(usage("bad command")),
        }
        Ok(())
    }

    fn call(&self, tool: &str, arguments: Arguments) -> Result<(), Exit> {
        // `KEY=VALUE` pairs are read by the types of the tool's input schema.
        let listing = self.tools();
        let schema = listing
            .tools
            .iter()
            .find(|t| t.name == tool)
            .map(|t| t.tool.input_schema.clone().into_value());
        if schema.is_none() && self.deadline.expired() && !listing.failed.is_empty() {
            // The command's time went on the listing: nothing is called.
            let failed = listing.failed.iter().map(|(s, e)| (s.as_str(), e));
            return done(self.report_failed("tools", failed).max(1));
        }
        if schema.is_none() {
            if self.single.is_some() && listing.failed.is_empty() {
                // The one server listed its tools, and not this one: a mistyped name, however
                // the server would refuse it (the SDKs answer with an `isError` result).
                let names = listing.tools.iter().map(|t| t.name.as_str());
                crate::listing::unlisted("tool", tool, names.collect())?;
            }
            if arguments.has_text() {
                for (server, error) in &listing.failed {
                    let why = crate::shown::block(&error.to_string());
                    warn(&format!(
                        "umcp: server `{server}`: listing tools failed: {why}; \
                         KEY=VALUE arguments are sent as text, not typed by the tool's schema"
                    ));
                }
            }
        }
        let arguments = arguments.for_tool(schema.as_ref()).map_err(usage)?;
        let client = match &self.single {
            Some(_) => Some(self.client()?),
            None => None,
        };
        let (options, progress) = Progress::attach(self.options().clone());
        let result = match client {
            Some(client) => self
                .timed(client.with(&options).call_tool(tool, arguments))
                .map_err(|e| self.failed(e)),
            None => self
                .timed(self.manager.with(&options).call_tool(tool, arguments))
                .map_err(|e| self.unknown(tool, e)),
        };
        progress.finish();
        self.show_result(&result?)
    }

    /// Prints a tool's result: its content, or its structured content when it has no other;
    /// exit code 4 when the tool reported an error.
    pub fn show_result(&self, result: &CallToolResult) -> Result<(), Exit> {
        self.out.content(result, &result.content);
        if result.content.is_empty() && !self.out.json {
            if let Some(structured) = &result.structured_content {
                say(&pretty(structured));
            }
        }
        if result.is_error() {
            return Err(Exit(4, String::new()));
        }
        Ok(())
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
                let line = format!("{name}  failed  {}", shown::line(&why));
                rows.push((
                    json!({"server": name, "ok": false, "ms": null, "error": why}),
                    line,
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
            let line = match &outcome {
                Ok(()) => format!("{name}  ok  {millis:.1} ms"),
                Err(e) => format!("{name}  failed  {}", shown::line(&e.to_string())),
            };
            rows.push((
                json!({"server": name, "ok": outcome.is_ok(), "ms": millis,
                       "error": outcome.as_ref().err().map(ToString::to_string)}),
                line,
            ));
            if let Err(e) = outcome {
                code = code.max(self.failed(e).0);
            }
        }
        self.out.list(rows.into_iter());
        match code {
            0 => Ok(()),
            code => Err(Exit(code, String::new())),
        }
    }

    /// The options of every request: the command's deadline.
    pub fn options(&self) -> &RequestOptions {
        self.deadline.options()
    }

    /// `result` of a request sent with [`Target::options`], a timeout once the command's time
    /// is up.
    pub fn timed<T>(&self, result: umcp::Result<T>) -> umcp::Result<T> {
        self.deadline.timed(result)
    }

    /// The failures of a listing across servers, each a timeout once the command's time is up.
    fn timed_errors(&self, errors: Vec<ServerError>) -> Vec<ServerError> {
        errors
            .into_iter()
            .filter(|e| self.picked(&e.server))
            .map(|mut e| {
                e.error = self.deadline.timed_error(e.error);
                e
            })
            .collect()
    }

    /// The one server's client (commands that need one server are checked before).
    pub fn client(&self) -> Result<std::sync::Arc<Client>, Exit> {
        let server = self.single.as_deref().unwrap_or_default();
        self.manager.client(server).map_err(|e| self.failed(e))
    }

    /// Whether `server` is one this command is for: every server, or the one `--server`
    /// named in a session of several.
    pub fn picked(&self, server: &str) -> bool {
        self.single.as_deref().is_none_or(|single| single == server)
    }

    /// The clients of every connected server this command is for, by name.
    pub fn clients(&self) -> Vec<(String, std::sync::Arc<Client>)> {
        self.manager
            .statuses()
            .into_iter()
            .filter(|(name, _)| self.picked(name))
            .filter(|(_, status)| status.is_connected())
            .filter_map(|(name, _)| Some((name.clone(), self.manager.client(&name).ok()?)))
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

    /// A -32042 names the pages to visit before asking again: they are shown in full, never
    /// opened.
    pub fn failed(&self, error: umcp::Error) -> Exit {
        if let Some(pages) = error.url_elicitations_required().filter(|p| !p.is_empty()) {
            let mut message = String::from("the server needs you to open a page first:");
            for page in pages {
                let (text, url) = (shown::block(&page.message), shown::line(&page.url));
                message.push_str(&format!("\n  {text}\n  {url}"));
            }
            message.push_str("\nthen run the command again");
            return Exit(1, message);
        }
        match error {
            // The connection went while the request was out: the server crashed or quit
            // (a stdio server's pipe closed, an HTTP server's connection or event stream
            // broke off before the response), or it refused the credentials.
            umcp::Error::Closed(_)
            | umcp::Error::Io(_)
            | umcp::Error::ResponseLost(_)
            | umcp::Error::Unauthorized(_)
            | umcp::Error::Forbidden(_)
            | umcp::Error::Auth(_) => Exit(3, shown::block(&error.to_string())),
            other => Exit(1, shown::block(&other.to_string())),
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
