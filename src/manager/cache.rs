//! The tool-list cache: each server's last tool list, and the protocol era it speaks, in a
//! small JSON file, written atomically.
//!
//! The file is named after a hash of what starts the server (command, arguments,
//! environment, working directory, or URL and headers), so a changed configuration never
//! serves another server's tools. A cache that cannot be read or written is only logged: it
//! is an optimisation, never a reason to fail.

use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::Value;

use crate::client::ProtocolMode;
use crate::config::ServerConfig;
use crate::types::Tool;

/// The layout version inside the file; other versions are ignored.
const VERSION: u64 = 1;

/// The cached tools of `config`, if a usable cache file exists.
pub(crate) fn load(dir: &Path, config: &ServerConfig) -> Option<Vec<Tool>> {
    let path = file(dir, config);
    let text = match fs::read_to_string(&path) {
        Ok(text) => text,
        Err(err) if err.kind() == io::ErrorKind::NotFound => return None,
        Err(err) => {
            log::debug!("cannot read the tool cache {}: {err}", path.display());
            return None;
        }
    };
    let file: CacheFile<'_> = serde_json::from_str(&text).ok()?;
    if file.version != Some(VERSION) {
        log::debug!(
            "ignoring the tool cache {} of another version",
            path.display()
        );
        return None;
    }
    // From the file's text, so the schemas keep the server's own text (see `Schema`).
    match serde_json::from_str(file.tools?.get()) {
        Ok(tools) => Some(tools),
        Err(err) => {
            log::debug!(
                "ignoring the malformed tool cache {}: {err}",
                path.display()
            );
            None
        }
    }
}

/// The parts of a cache file read back; the tools are decoded once the version is known.
#[derive(Deserialize)]
struct CacheFile<'a> {
    version: Option<u64>,
    #[serde(borrow)]
    tools: Option<&'a RawValue>,
}

/// A cache file as written: a struct, not a `Value`, so the tools' schemas are written as the
/// server wrote them.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Saved<'a> {
    version: u64,
    server: &'a str,
    saved_at: u64,
    era: &'a str,
    tools: &'a [Tool],
}

/// Saves the tools of `config`: a temporary file in the same directory, then a rename, so a
/// reader never sees half a file.
/// The era verdict saved with the tools (`legacy` or a stateless version), so a restart of
/// the host can connect without the `server/discover` probe.
pub(crate) fn load_era(dir: &Path, config: &ServerConfig) -> Option<ProtocolMode> {
    let text = fs::read_to_string(file(dir, config)).ok()?;
    let value: Value = serde_json::from_str(&text).ok()?;
    match ProtocolMode::parse(value["era"].as_str()?)? {
        ProtocolMode::Auto => None,
        verdict => Some(verdict),
    }
}

pub(crate) fn save(dir: &Path, config: &ServerConfig, tools: &[Tool], era: &ProtocolMode) {
    if let Err(err) = try_save(dir, config, tools, era) {
        log::debug!("cannot write the tool cache for `{}`: {err}", config.name);
    }
}

fn try_save(
    dir: &Path,
    config: &ServerConfig,
    tools: &[Tool],
    era: &ProtocolMode,
) -> io::Result<()> {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    fs::create_dir_all(dir)?;
    let path = file(dir, config);
    let saved_at = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let body = Saved {
        version: VERSION,
        server: &config.name,
        saved_at,
        era: era.as_str(),
        tools,
    };
    let text = serde_json::to_vec_pretty(&body).map_err(io::Error::other)?;
    let temp = dir.join(format!(
        ".{}.{}.{}.tmp",
        hash(&config.identity()),
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    ));
    let written = fs::File::create(&temp).and_then(|mut f| {
        f.write_all(&text)?;
        f.sync_all()
    });
    let renamed = written.and_then(|()| fs::rename(&temp, &path));
    if renamed.is_err() {
        let _ = fs::remove_file(&temp);
    }
    renamed
}

/// The cache file of `config` inside `dir`.
pub(crate) fn file(dir: &Path, config: &ServerConfig) -> PathBuf {
    dir.join(format!("{}.json", hash(&config.identity())))
}

/// FNV-1a, 64 bits, as 16 hex digits: tiny and the same in every build and version, which
/// std's hasher does not promise.
fn hash(text: &str) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in text.bytes() {
        h ^= u64::from(byte);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    format!("{h:016x}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn hash_is_stable() {
        assert_eq!(hash(""), "cbf29ce484222325");
        assert_eq!(hash("a"), "af63dc4c8601ec8c");
    }

    #[test]
    fn round_trip_and_replace() {
        let dir = std::env::temp_dir().join(format!("umcp-cache-unit-{}", std::process::id()));
        let config = ServerConfig::stdio("s", "server-cmd");
        assert!(load(&dir, &config).is_none());
        save(
            &dir,
            &config,
            &[Tool::new("one", json!({"type": "object"}))],
            &ProtocolMode::Legacy,
        );
        save(
            &dir,
            &config,
            &[Tool::new("two", json!({"type": "object"}))],
            &ProtocolMode::Legacy,
        );
        let tools = load(&dir, &config).expect("cached tools");
        assert_eq!(tools.len(), 1);
        assert_eq!(tools[0].name, "two");
        // A schema read from a server comes back from the cache as the server wrote it.
        let schema = r#"{"type": "object", "$defs": {}, "additionalProperties": false}"#;
        let listed: Tool =
            serde_json::from_str(&format!(r#"{{"name":"three","inputSchema":{schema}}}"#)).unwrap();
        save(&dir, &config, &[listed], &ProtocolMode::Legacy);
        let tools = load(&dir, &config).expect("cached tools");
        assert_eq!(tools[0].input_schema.raw_json(), Some(schema));
        let other = ServerConfig::stdio("s", "other-cmd");
        assert!(load(&dir, &other).is_none());
        let leftovers = fs::read_dir(&dir).unwrap().count();
        assert_eq!(leftovers, 1, "no temporary files are left behind");
        let _ = fs::remove_dir_all(&dir);
    }

    #[test]
    fn the_era_verdict_is_kept_next_to_the_tools() {
        let dir = std::env::temp_dir().join(format!("umcp-cache-era-{}", std::process::id()));
        let config = ServerConfig::stdio("s", "server-cmd");
        assert!(load_era(&dir, &config).is_none());
        let modern = ProtocolMode::Pinned("2026-07-28".into());
        save(&dir, &config, &[], &modern);
        assert_eq!(load_era(&dir, &config), Some(modern));
        save(&dir, &config, &[], &ProtocolMode::Legacy);
        assert_eq!(load_era(&dir, &config), Some(ProtocolMode::Legacy));
        // A file from before the era was saved still serves its tools, and no verdict.
        fs::write(file(&dir, &config), r#"{"version": 1, "tools": []}"#).unwrap();
        assert!(load_era(&dir, &config).is_none());
        assert_eq!(load(&dir, &config).map(|t| t.len()), Some(0));
        let _ = fs::remove_dir_all(&dir);
    }
}
