//! `umcp skills ls URI [PATH]`: a directory of a skill, as the server serves it now
//! (`resources/directory/read`, when it offers `directoryRead`) beside what the skill's entry
//! lists, each child marked where the two differ; nothing of the skill is read.

use std::collections::BTreeMap;

use serde_json::json;
use umcp::types::{Resource, Skill};
use umcp::Client;

use crate::exit::{usage, Exit};
use crate::output::warn;
use crate::target::Target;

/// One child of the directory: whether the entry lists it and the server serves it.
struct Child {
    name: String,
    directory: bool,
    listed: bool,
    served: Option<bool>,
}

impl Target<'_> {
    /// `skills ls URI [PATH]` for the skill whose `SKILL.md` is at `uri`, fetched as `entry`.
    pub fn skill_dir(&self, client: &Client, entry: &Skill, path: &str) -> Result<(), Exit> {
        let dir = entry
            .directory_uri(path)
            .ok_or_else(|| usage(format!("skills ls: `{path}` is not inside the skill")))?;
        // A directory the entry lists nothing in has no children of its: an empty list.
        let listed = entry
            .files()
            .map(|_| entry.list_directory(path).unwrap_or_default());
        let served = match client.offers_directory_read() {
            true => Some(
                self.timed(client.with(self.options()).read_whole_directory(&dir))
                    .map_err(|e| self.failed(e))?,
            ),
            false => None,
        };
        if listed.is_none() && served.is_none() {
            return Err(Exit(
                1,
                "the skill is dynamic (its entry lists no file) and the server lists no \
                 directory (no directoryRead)"
                    .into(),
            ));
        }
        if served.is_none() {
            warn("umcp: the server lists no directory (no directoryRead): from the entry alone");
        }
        let children = merged(&dir, listed.as_deref(), served.as_deref());
        self.out.table(children.into_iter().map(|(uri, child)| {
            let note = match (child.listed, child.served) {
                (true, Some(false)) => "(in the entry, not served now)",
                (false, Some(true)) if listed.is_some() => "(not in the entry: fetch it again)",
                _ => "",
            };
            let shown = match child.directory {
                true => format!("{}/", child.name),
                false => child.name.clone(),
            };
            let row = json!({"uri": uri, "name": child.name, "directory": child.directory,
                             "listed": child.listed, "served": child.served});
            (row, vec![shown, uri, note.to_owned()])
        }));
        Ok(())
    }
}

/// The children of `dir` the entry lists and the server serves (those inside `dir`), by URI.
fn merged(
    dir: &str,
    listed: Option<&[Resource]>,
    served: Option<&[Resource]>,
) -> BTreeMap<String, Child> {
    let mut children = BTreeMap::new();
    let inside = |uri: &str| {
        uri.strip_prefix(dir)
            .is_some_and(|rest| rest.starts_with('/'))
    };
    for (resource, from_entry) in (listed.into_iter().flatten().map(|r| (r, true)))
        .chain(served.into_iter().flatten().map(|r| (r, false)))
    {
        if !inside(&resource.uri) {
            continue;
        }
        let child = children
            .entry(resource.uri.clone())
            .or_insert_with(|| Child {
                name: resource.uri[dir.len() + 1..].to_owned(),
                directory: resource.is_directory(),
                listed: false,
                served: served.map(|_| false),
            });
        match from_entry {
            true => child.listed = true,
            false => child.served = Some(true),
        }
    }
    children
}
