//! `umcp skills`: the skills servers offer (the Skills extension), listed, described, and
//! loaded with every file checked against the skill's entry before it is printed.

use serde_json::json;
use umcp::types::{Skill, SkillResources};

use crate::exit::{usage, Exit};
use crate::output::{pretty, say, warn};
use crate::shown;
use crate::target::Target;

impl Target<'_> {
    /// `skills list`, `skills get URI`, `skills load URI`, `skills file URI PATH` or `skills
    /// ls URI [PATH]`.
    pub fn skills(&self, rest: &[&str]) -> Result<(), Exit> {
        let (what, uri, file) =
            match rest {
                ["list"] => return self.list_skills(),
                ["ls", uri, path] => ("ls", *uri, Some(*path)),
                [what, uri] => (*what, *uri, None),
                ["file", uri, path] => ("load", *uri, Some(*path)),
                _ => return Err(usage(
                    "bad arguments: umcp skills list|get URI|load URI|file URI PATH|ls URI [PATH]",
                )),
            };
        if self.single.is_none() {
            return Err(usage(format!(
                "skills {what} needs one server: add --server NAME"
            )));
        }
        let client = self.client()?;
        let entry = self
            .timed(client.with(self.options()).get_skill(uri))
            .map_err(|e| self.failed(e))?;
        match what {
            "ls" => self.skill_dir(&client, &entry, file.unwrap_or("")),
            "get" => {
                match self.out.json {
                    true => say(&pretty(&entry)),
                    false => say(&describe(&entry, "")),
                }
                Ok(())
            }
            "load" => {
                let loaded = self
                    .timed(client.with(self.options()).load_skill(&entry))
                    .map_err(|e| self.failed(e))?;
                let text = match file {
                    None => loaded.instructions().to_owned(),
                    Some(file) => {
                        let bytes = self.timed(loaded.read(file)).map_err(|e| self.failed(e))?;
                        String::from_utf8_lossy(&bytes).into_owned()
                    }
                };
                match self.out.json {
                    true => say(&pretty(&json!({ "uri": entry.uri, "text": text }))),
                    false => say(&shown::block(text.trim_end_matches('\n'))),
                }
                Ok(())
            }
            other => Err(usage(format!(
                "skills {other}: expected list, get, load, file or ls"
            ))),
        }
    }

    /// Each skill of each connected server that offers the extension: one line (server, name,
    /// URI, description, files) or one JSON object each. Skills that share a name are told
    /// apart by their server and URI, which every line shows.
    fn list_skills(&self) -> Result<(), Exit> {
        let mut rows = Vec::new();
        let mut failed = Vec::new();
        let mut offered = false;
        for (server, client) in self.clients() {
            if client.skills_settings().is_none() {
                warn(&format!("umcp: server `{server}` offers no skills"));
                continue;
            }
            offered = true;
            match self.timed(client.with(self.options()).list_all_skills()) {
                Ok(skills) => rows.extend(skills.into_iter().map(|skill| (server.clone(), skill))),
                Err(error) => failed.push((server, error)),
            }
        }
        let code = self.report_failed("skills", failed.iter().map(|(s, e)| (s.as_str(), e)));
        self.out.list(rows.into_iter().map(|(server, skill)| {
            let line = describe(&skill, &format!("{server}  "));
            (json!({"server": server, "skill": skill}), line)
        }));
        match (code, offered) {
            (0, true) => Ok(()),
            (0, false) => Err(Exit(1, String::new())),
            (code, _) => Err(Exit(code, String::new())),
        }
    }
}

/// One line about a skill's entry: `prefix`, its name, URI, description and files, every
/// string the server sent made safe for a terminal.
fn describe(skill: &Skill, prefix: &str) -> String {
    let files = match &skill.resources {
        Some(SkillResources::Files(files)) => {
            let bytes: u64 = files.iter().filter_map(|f| f.size).sum();
            format!("{} files, {bytes} bytes", files.len())
        }
        Some(SkillResources::Dynamic) => "dynamic".to_owned(),
        _ => "no valid file list".to_owned(),
    };
    let invalid = match skill.validate() {
        Ok(()) => String::new(),
        Err(error) => format!("  [{}]", shown::line(&error.to_string())),
    };
    format!(
        "{}{}  {}  {}  ({files}){invalid}",
        shown::line(prefix),
        shown::line(skill.name().unwrap_or("?")),
        shown::line(&skill.uri),
        shown::line(skill.description().unwrap_or("")),
    )
}
