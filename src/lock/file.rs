//! The text of `mcp.lock`: written canonical and indented, read back with every digest checked.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;

use serde::Deserialize;
use serde_json::value::RawValue;

use super::canonical::{canonical, members, pretty, write_string};
use super::{digest, LockedTool, Lockfile, ServerIdentity, ServerLock};
use crate::error::{Error, Result};
use crate::redact::clip;

/// The version of the format this crate writes and reads.
const VERSION: u64 = 1;

/// The file as read, before its digests are checked.
#[derive(Deserialize)]
struct File<'a> {
    #[serde(rename = "lockfileVersion")]
    version: u64,
    #[serde(borrow, default)]
    servers: BTreeMap<String, FileServer<'a>>,
}

#[derive(Deserialize)]
struct FileServer<'a> {
    #[serde(default)]
    server: ServerIdentity,
    #[serde(borrow, default)]
    tools: BTreeMap<String, FileTool<'a>>,
}

#[derive(Deserialize)]
struct FileTool<'a> {
    #[serde(borrow)]
    definition: &'a RawValue,
    digest: String,
}

/// Only the version, read first so that a newer format is named as such.
#[derive(Deserialize)]
struct Version {
    #[serde(rename = "lockfileVersion")]
    version: Option<u64>,
}

pub(super) fn parse(text: &str) -> Result<Lockfile> {
    let invalid = |e: serde_json::Error| Error::Config(format!("not a lockfile: {e}"));
    match serde_json::from_str::<Version>(text)
        .map_err(invalid)?
        .version
    {
        Some(VERSION) => {}
        Some(other) => {
            return Err(Error::Config(format!(
                "lockfileVersion {other} is not one this umcp reads ({VERSION}); a newer umcp \
                 wrote it"
            )))
        }
        None => return Err(Error::Config("not a lockfile: no lockfileVersion".into())),
    }
    let file: File<'_> = serde_json::from_str(text).map_err(invalid)?;
    debug_assert_eq!(file.version, VERSION);
    let mut lock = Lockfile::new();
    for (name, server) in file.servers {
        let mut tools = BTreeMap::new();
        for (tool, entry) in server.tools {
            let locked = read_tool(&name, &tool, &entry)?;
            tools.insert(tool, locked);
        }
        lock.insert(ServerLock {
            name,
            identity: server.server,
            tools,
        });
    }
    Ok(lock)
}

/// One tool's entry, whose definition must be an object named `tool` that has the digest.
fn read_tool(server: &str, tool: &str, entry: &FileTool<'_>) -> Result<LockedTool> {
    let wrong = |what: &str| {
        Error::Config(format!(
            "server `{}`, tool `{}`: {what}; lock again",
            clip(server),
            clip(tool)
        ))
    };
    let definition =
        canonical(entry.definition.get()).map_err(|e| wrong(&format!("bad definition ({e})")))?;
    let named = members(&definition)
        .map_err(|_| wrong("the definition is not an object"))?
        .into_iter()
        .find(|(key, _)| key == "name")
        .and_then(|(_, value)| serde_json::from_str::<String>(&value).ok());
    if named.as_deref() != Some(tool) {
        return Err(wrong("the definition names another tool"));
    }
    if digest(&definition) != entry.digest {
        return Err(wrong(
            "the definition does not match its digest (was the file edited?)",
        ));
    }
    Ok(LockedTool {
        name: tool.to_owned(),
        digest: entry.digest.clone(),
        definition,
    })
}

/// The file's text: its canonical JSON, indented, with a final newline.
pub(super) fn write(lock: &Lockfile) -> String {
    let mut out = String::new();
    out.push_str("{\"lockfileVersion\":");
    out.push_str(&VERSION.to_string());
    out.push_str(",\"servers\":{");
    for (i, server) in lock.servers.values().enumerate() {
        if i > 0 {
            out.push(',');
        }
        write_string(&mut out, &server.name);
        out.push_str(":{\"server\":{\"name\":");
        write_string(&mut out, &server.identity.name);
        out.push_str(",\"version\":");
        write_string(&mut out, &server.identity.version);
        out.push_str("},\"tools\":{");
        for (j, tool) in server.tools.values().enumerate() {
            if j > 0 {
                out.push(',');
            }
            write_string(&mut out, &tool.name);
            out.push_str(":{\"definition\":");
            out.push_str(&tool.definition);
            out.push_str(",\"digest\":");
            write_string(&mut out, &tool.digest);
            out.push('}');
        }
        out.push_str("}}");
    }
    out.push_str("}}");
    let mut text = pretty(&out);
    text.push('\n');
    text
}

/// Writes the file beside `path` and renames it into place.
pub(super) fn save(lock: &Lockfile, path: &Path) -> Result<()> {
    let name = path
        .file_name()
        .map(|name| name.to_string_lossy().into_owned())
        .unwrap_or_else(|| super::LOCKFILE_NAME.to_owned());
    let staging = path.with_file_name(format!(".{name}.{}.tmp", std::process::id()));
    let written = std::fs::File::create(&staging).and_then(|mut file| {
        file.write_all(write(lock).as_bytes())?;
        file.sync_all()
    });
    let renamed = written.and_then(|()| std::fs::rename(&staging, path));
    if let Err(err) = renamed {
        let _ = std::fs::remove_file(&staging);
        return Err(Error::io(std::io::Error::new(
            err.kind(),
            format!("cannot write {}: {err}", path.display()),
        )));
    }
    Ok(())
}
