//! `umcp grep PATTERN`: the tools, resources, resource templates and prompts of every server
//! whose name, title or description holds the pattern, found in one command.

use serde_json::json;

use crate::exit::{usage, Exit};
use crate::output::first_line;
use crate::target::Target;

/// One thing found: its kind, its server, the name to use it by, and what it is.
struct Found {
    kind: &'static str,
    server: String,
    name: String,
    about: String,
}

impl Target<'_> {
    /// `grep PATTERN`: every match, one line each (kind, name, first line of its
    /// description), or a JSON array; exit code 1 when nothing matches, as grep(1) has it.
    pub fn grep(&self, pattern: &str) -> Result<(), Exit> {
        if pattern.trim().is_empty() {
            return Err(usage("grep: the pattern is empty"));
        }
        let matcher = Matcher::new(pattern);
        let mut found = Vec::new();
        let mut code = self.grep_tools(&matcher, &mut found);
        code = code.max(self.grep_resources(&matcher, &mut found));
        code = code.max(self.grep_prompts(&matcher, &mut found));
        let none = found.is_empty();
        self.out.table(found.into_iter().map(|f| {
            let row =
                json!({"kind": f.kind, "server": f.server, "name": f.name, "description": f.about});
            (
                row,
                vec![
                    f.kind.to_owned(),
                    f.name,
                    first_line(Some(&f.about)).to_owned(),
                ],
            )
        }));
        match (code, none) {
            (0, false) => Ok(()),
            (0, true) => Err(Exit(1, String::new())),
            (code, _) => Err(Exit(code, String::new())),
        }
    }

    fn grep_tools(&self, matcher: &Matcher, found: &mut Vec<Found>) -> u8 {
        let listing = self.tools();
        for listed in listing.tools {
            let tool = &listed.tool;
            let texts = [
                Some(tool.name.as_str()),
                tool.title.as_deref(),
                tool.description.as_deref(),
            ];
            if matcher.any(&texts) {
                found.push(Found {
                    kind: "tool",
                    server: listed.server,
                    name: listed.name,
                    about: tool.description.clone().unwrap_or_default(),
                });
            }
        }
        let failed = listing.failed.iter().map(|(s, e)| (s.as_str(), e));
        self.report_failed("tools", failed)
    }

    fn grep_resources(&self, matcher: &Matcher, found: &mut Vec<Found>) -> u8 {
        let listed = self.manager.with(self.options());
        let (resources, errors) = listed.list_resources();
        for entry in resources.into_iter().filter(|e| self.picked(&e.server)) {
            let r = &entry.resource;
            let texts = [
                Some(r.uri.as_str()),
                Some(r.name.as_str()),
                r.title.as_deref(),
                r.description.as_deref(),
            ];
            if matcher.any(&texts) {
                found.push(Found {
                    kind: "resource",
                    name: self.on_server(&entry.server, &r.uri),
                    about: r.description.clone().unwrap_or_else(|| r.name.clone()),
                    server: entry.server,
                });
            }
        }
        let (templates, template_errors) = listed.list_resource_templates();
        for entry in templates.into_iter().filter(|e| self.picked(&e.server)) {
            let t = &entry.template;
            let texts = [
                Some(t.uri_template.as_str()),
                Some(t.name.as_str()),
                t.title.as_deref(),
                t.description.as_deref(),
            ];
            if matcher.any(&texts) {
                found.push(Found {
                    kind: "template",
                    name: self.on_server(&entry.server, &t.uri_template),
                    about: t.description.clone().unwrap_or_else(|| t.name.clone()),
                    server: entry.server,
                });
            }
        }
        let errors = self.timed_errors(errors.into_iter().chain(template_errors).collect());
        self.report_failed(
            "resources",
            errors.iter().map(|e| (e.server.as_str(), &e.error)),
        )
    }

    fn grep_prompts(&self, matcher: &Matcher, found: &mut Vec<Found>) -> u8 {
        let (prompts, errors) = self.manager.with(self.options()).list_prompts();
        for entry in prompts.into_iter().filter(|e| self.picked(&e.server)) {
            let p = &entry.prompt;
            let texts = [
                Some(p.name.as_str()),
                p.title.as_deref(),
                p.description.as_deref(),
            ];
            if matcher.any(&texts) {
                found.push(Found {
                    kind: "prompt",
                    name: match self.single {
                        Some(_) => p.name.clone(),
                        None => entry.name.clone(),
                    },
                    about: p.description.clone().unwrap_or_default(),
                    server: entry.server,
                });
            }
        }
        let errors = self.timed_errors(errors);
        self.report_failed(
            "prompts",
            errors.iter().map(|e| (e.server.as_str(), &e.error)),
        )
    }
}

impl Target<'_> {
    /// `uri` as `read` needs it named: with several servers, `server: uri` (then
    /// `--server server`).
    fn on_server(&self, server: &str, uri: &str) -> String {
        match self.single {
            Some(_) => uri.to_owned(),
            None => format!("{server}: {uri}"),
        }
    }
}

/// A pattern: words that must all appear, in any case, anywhere in one of the texts.
struct Matcher {
    words: Vec<String>,
}

impl Matcher {
    fn new(pattern: &str) -> Matcher {
        Matcher {
            words: pattern.split_whitespace().map(str::to_lowercase).collect(),
        }
    }

    /// Whether every word is in one of `texts` (each word may be in a different one).
    fn any(&self, texts: &[Option<&str>]) -> bool {
        let texts: Vec<String> = texts.iter().flatten().map(|t| t.to_lowercase()).collect();
        self.words
            .iter()
            .all(|w| texts.iter().any(|t| t.contains(w.as_str())))
    }
}
