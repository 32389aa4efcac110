//! What the servers list, as a command needs it: the tools of each connected server with the
//! listings that failed (the manager's own listing at start-up only logs its failure), and
//! the check that a tool or prompt name is one the server lists before it is asked for.

use umcp::types::Tool;
use umcp::{Client, Error, ToolEntry};

use crate::exit::Exit;
use crate::output::warn;
use crate::shown;
use crate::suggest;
use crate::target::Target;

/// One tool: the name to call it by (as the server gives it when there is one server), its
/// server, and the tool.
pub struct Listed {
    pub name: String,
    pub server: String,
    pub tool: Tool,
}

/// The tools of the connected servers, and the servers whose listing failed.
pub struct Tools {
    pub tools: Vec<Listed>,
    pub failed: Vec<(String, Error)>,
}

impl Target<'_> {
    /// The tools of every connected server. A server the manager holds no fresh tools of,
    /// although it offers tools, is asked again: its listing failed at start-up (the error
    /// is then known only from this second answer) or it has none.
    pub fn tools(&self) -> Tools {
        let entries = self.manager.known_tools();
        let mut listing = Tools {
            tools: Vec::new(),
            failed: Vec::new(),
        };
        for (server, client) in self.clients() {
            let mine: Vec<&ToolEntry> = entries.iter().filter(|e| e.server == server).collect();
            let fresh = !mine.is_empty() && mine.iter().all(|e| !e.stale);
            let mine = mine.into_iter().map(|e| Listed {
                name: match self.single {
                    Some(_) => e.tool.name.clone(),
                    None => e.name.clone(),
                },
                server: e.server.clone(),
                tool: e.tool.clone(),
            });
            if fresh || !client.server_capabilities().supports_tools() {
                listing.tools.extend(mine);
                continue;
            }
            // Under the command's clock, which counts the manager's listing at connect: one
            // that hung then has no time left, and fails at once as the timeout it was.
            match self.timed(client.with(self.options()).list_all_tools()) {
                // With one server the names are the server's own, so its answer is used as
                // it is; with several, names are the manager's to give.
                Ok(tools) if self.single.is_some() => {
                    listing.tools.extend(tools.into_iter().map(|tool| Listed {
                        name: tool.name.clone(),
                        server: server.clone(),
                        tool,
                    }));
                }
                Ok(_) => listing.tools.extend(mine),
                Err(error) => listing.failed.push((server, error)),
            }
        }
        listing
    }

    /// Says on stderr why each failed listing failed, and returns the exit code they give
    /// (0 when none failed). Servers that never connected were reported at start-up, and are
    /// not counted again.
    pub fn report_failed<'e>(
        &self,
        what: &str,
        failed: impl IntoIterator<Item = (&'e str, &'e Error)>,
    ) -> u8 {
        let connected: Vec<String> = self.clients().into_iter().map(|(name, _)| name).collect();
        let mut code = 0;
        for (server, error) in failed {
            if !connected.iter().any(|c| c == server) {
                continue;
            }
            let why = shown::block(&error.to_string());
            warn(&format!(
                "umcp: server `{server}`: listing {what} failed: {why}"
            ));
            code = code.max(self.failed(error.clone()).0);
        }
        code
    }

    /// A usage error (exit code 2) when the one server's prompt listing lacks `name`: a mistyped
    /// name, whatever the server would answer. A failed listing leaves it to the server's own
    /// answer.
    pub fn check_prompt(&self, client: &Client, name: &str) -> Result<(), Exit> {
        if !client.server_capabilities().supports_prompts() {
            return Err(Exit(
                2,
                format!("no prompt named `{name}`: the server offers no prompts"),
            ));
        }
        let prompts = match self.timed(client.with(self.options()).list_all_prompts()) {
            Ok(prompts) => prompts,
            Err(error) if self.deadline.expired() => return Err(self.failed(error)),
            Err(_) => return Ok(()),
        };
        let names = prompts.iter().map(|p| p.name.as_str());
        unlisted("prompt", name, names.collect())
    }
}

/// `Ok` when `name` is one of `names`; else the usage error (exit code 2) for a name the
/// server does not list, with the closest listed name when one stands out.
pub fn unlisted(kind: &str, name: &str, names: Vec<&str>) -> Result<(), Exit> {
    if names.contains(&name) {
        return Ok(());
    }
    let mut message = format!("no {kind} named `{name}`");
    match suggest::closest(name, names.iter().copied()) {
        Some(near) => message += &format!("; did you mean `{}`?", shown::line(near)),
        None => message += &format!(" (umcp {kind}s lists them)"),
    }
    Err(Exit(2, message))
}
