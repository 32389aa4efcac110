//! A skill's directories as its entry lists them: the direct children of one, files and
//! subdirectories, answered from the manifest alone, with nothing read or sent.

use std::collections::HashSet;

use super::rules::within;
use crate::error::SkillError;
use crate::types::{Resource, Skill, SkillResource, DIRECTORY_MIME_TYPE};

impl Skill {
    /// The URI of the skill's directory `path_or_uri`: a path relative to its root
    /// (`templates`; `""` or `.` for the root itself) or a URI; `None` when it is not
    /// inside the skill.
    ///
    /// See the example on [`Skill::list_directory`].
    pub fn directory_uri(&self, path_or_uri: &str) -> Option<String> {
        let root = self.root()?;
        let dir = match path_or_uri.trim_end_matches('/') {
            "" | "." => return Some(root.to_owned()),
            path => self.resolve(path)?,
        };
        (dir == root || within(root, &dir)).then_some(dir)
    }

    /// The direct children of the skill's directory `path_or_uri` (as
    /// [`Skill::directory_uri`] takes it) that the entry lists, sorted by URI: its files
    /// (with their sizes), and one directory resource
    /// ([`Resource::is_directory`]) for each subdirectory holding any. Nothing is read.
    ///
    /// ```
    /// use serde_json::json;
    /// use umcp::types::{Skill, SkillResource};
    ///
    /// let entry: Skill = serde_json::from_value(json!({
    ///     "uri": "skill://pdf/SKILL.md",
    ///     "frontmatter": {"name": "pdf", "description": "Read PDFs"},
    ///     "resources": [
    ///         SkillResource::of("skill://pdf/SKILL.md", b"---\nname: pdf\n---\n"),
    ///         SkillResource::of("skill://pdf/templates/invoice.md", b"# Invoice\n"),
    ///         SkillResource::of("skill://pdf/templates/eu/invoice.md", b"# EU\n"),
    ///     ],
    /// }))?;
    /// assert_eq!(entry.directory_uri("templates").as_deref(), Some("skill://pdf/templates"));
    /// let root = entry.list_directory("")?;
    /// assert_eq!(root[1].uri, "skill://pdf/templates");
    /// assert!(root[1].is_directory());
    /// let templates = entry.list_directory("templates")?;
    /// assert_eq!(templates.len(), 2);
    /// assert!(entry.list_directory("scripts").is_err());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`SkillError::Unlisted`] when the path is outside the skill, or is not a directory
    /// the entry lists files in (the root always is); a dynamic entry lists none.
    pub fn list_directory(&self, path_or_uri: &str) -> Result<Vec<Resource>, SkillError> {
        let unlisted = || SkillError::Unlisted {
            skill: self.uri.clone(),
            uri: path_or_uri.to_owned(),
        };
        let dir = self.directory_uri(path_or_uri).ok_or_else(unlisted)?;
        let files = self.files().ok_or_else(unlisted)?;
        let children = children(files, &dir);
        if children.is_empty() && Some(dir.as_str()) != self.root() {
            return Err(unlisted());
        }
        Ok(children)
    }
}

/// The direct children of `dir` among a skill's listed `files`, sorted by URI.
fn children(files: &[SkillResource], dir: &str) -> Vec<Resource> {
    let mut children: Vec<Resource> = Vec::new();
    let mut dirs = HashSet::new();
    for file in files {
        let Some(rest) = file.uri.strip_prefix(dir).and_then(|r| r.strip_prefix('/')) else {
            continue;
        };
        match rest.split_once('/') {
            None => {
                let mut child = Resource::new(file.uri.clone(), rest);
                child.size = file.size;
                children.push(child);
            }
            Some((name, _)) if dirs.insert(name) => {
                children.push(
                    Resource::new(format!("{dir}/{name}"), name)
                        .with_mime_type(DIRECTORY_MIME_TYPE),
                );
            }
            Some(_) => {}
        }
    }
    children.sort_by(|a, b| a.uri.cmp(&b.uri));
    children
}
