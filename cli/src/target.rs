//! The servers a command runs against, and what every command does with them: each request
//! on the command's clock, the one server's client or every connected one, and a failure
//! turned into its exit code.

use std::sync::Arc;
use std::time::Duration;

use umcp::types::{CallToolResult, ContentBlock, SubscriptionFilter};
use umcp::{Client, Manager, RequestOptions};

use crate::args::Args;
use crate::deadline::Deadline;
use crate::exit::{usage, Exit};
use crate::output::{pretty, say, Output};
use crate::{shaping, shown};

/// The servers a command runs against.
pub struct Target<'a> {
    pub manager: &'a Manager,
    /// The command line, for the options of one command (how a result is printed, how a
    /// tool is called).
    pub args: &'a Args,
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
    /// The options of every request: the command's deadline.
    pub fn options(&self) -> &RequestOptions {
        self.deadline.options()
    }

    /// The options of the request a command is for (the call, the read): the command's
    /// deadline, and the `_meta` of `--meta`.
    pub fn request_options(&self) -> RequestOptions {
        let options = self.options().clone();
        match self.args.meta.is_empty() {
            true => options,
            false => options.with_meta(self.args.meta.clone()),
        }
    }

    /// `result` of a request sent with [`Target::options`], a timeout once the command's time
    /// is up.
    pub fn timed<T>(&self, result: umcp::Result<T>) -> umcp::Result<T> {
        self.deadline.timed(result)
    }

    /// The one server's client (commands that need one server are checked before).
    pub fn client(&self) -> Result<Arc<Client>, Exit> {
        let server = self.single.as_deref().unwrap_or_default();
        self.manager.client(server).map_err(|e| self.failed(e))
    }

    /// Whether `server` is one this command is for: every server, or the one `--server`
    /// named in a session of several.
    pub fn picked(&self, server: &str) -> bool {
        self.single.as_deref().is_none_or(|single| single == server)
    }

    /// The clients of every connected server this command is for, by name.
    pub fn clients(&self) -> Vec<(String, Arc<Client>)> {
        self.manager
            .statuses()
            .into_iter()
            .filter(|(name, _)| self.picked(name))
            .filter(|(_, status)| status.is_connected())
            .filter_map(|(name, _)| Some((name.clone(), self.manager.client(&name).ok()?)))
            .collect()
    }

    /// Prints the result of the tool `name`: its content, or its structured content when it
    /// has no other, shaped as the command line asks ([`shaping`]); exit code 4 when the tool
    /// reported an error.
    pub fn show_result(&self, result: &CallToolResult, name: &str) -> Result<(), Exit> {
        let shape = &self.args.shaping;
        if self.out.json {
            let saved = match shape.save {
                Some(_) => shaping::render(&result.content, shape, name).1,
                None => Vec::new(),
            };
            say(&pretty(&shaping::envelope(result, &saved)));
        } else if shape.structured {
            shaping::emit(&shaping::structured(result)?, shape.max_chars)?;
        } else {
            let (mut text, _) = shaping::render(&result.content, shape, name);
            if let (true, Some(structured)) = (text.is_empty(), &result.structured_content) {
                text = pretty(structured);
            }
            if !text.is_empty() {
                shaping::emit(&text, shape.max_chars)?;
            }
        }
        if result.is_error() {
            return Err(Exit(4, String::new()));
        }
        Ok(())
    }

    /// Prints a resource's or prompt's content: the whole result as JSON, or its blocks as
    /// text, shaped as the command line asks (`--raw`, `--max-chars`, `--save`).
    pub fn show_content(
        &self,
        whole: &impl serde::Serialize,
        blocks: &[ContentBlock],
        name: &str,
    ) -> Result<(), Exit> {
        let shape = &self.args.shaping;
        if self.out.json {
            say(&pretty(whole));
            return Ok(());
        }
        if shape.structured {
            return Err(usage("--structured is for a tool's result"));
        }
        let (text, _) = shaping::render(blocks, shape, name);
        if !text.is_empty() {
            shaping::emit(&text, shape.max_chars)?;
        }
        Ok(())
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
        if let Some(hidden) = error.hidden_tool() {
            // Filtered out by the configuration: as a name the server does not offer. Not as
            // the lock pinned it: drift.
            let code = match hidden.why {
                umcp::Hidden::Filtered => 2,
                _ => crate::exit::DRIFTED,
            };
            return Exit(code, shown::block(&error.to_string()));
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
            other if other.is_timeout() => {
                let mut message = shown::block(&other.to_string());
                if let Some(hint) = crate::network::hint_for(self.single.as_deref()) {
                    message.push_str(&format!("\n{}", shown::block(&hint)));
                }
                Exit(crate::exit::TIMED_OUT, message)
            }
            other => Exit(1, shown::block(&other.to_string())),
        }
    }
}
