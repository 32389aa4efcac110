//! The tool-list cache: each server's last tool list, and the protocol era it speaks, in a
//! small JSON file only its owner may read, replaced whole (see [`private_file`]).
//!
//! The file is named after a hash of what starts the server (command, arguments,
//! environment, working directory, or URL and headers) as umcp shows it: with every value
//! that may be a secret redacted (environment and header values, secret-looking arguments,
//! URL query values and passwords), so a name reveals nothing to whoever can list the
//! directory, and a guess at a secret cannot be checked against it. A changed configuration
//! starts afresh, except for a changed secret: a rotated key reaches the same server, whose
//! tools the cache only offers (marked stale) until it answers. A cache that cannot be read
//! or written is only logged: it is an optimisation, never a reason to fail.

use std::io;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::Value;

use crate::client::ProtocolMode;
use crate::config::ServerConfig;
use crate::private_file;
use crate::types::Tool;

/// The layout version inside the file; other versions are ignored.
const VERSION: u64 = 1;

/// The cached tools of `config`, if a usable cache file exists.
pub(crate) fn load(dir: &Path, config: &ServerConfig) -> Option<Vec<Tool>> {
    let path = file(dir, config);
    let text = read(&path)?;
    let file: CacheFile<'_> = serde_json::from_str(&text).ok()?;
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

/// The text of the cache file at `path` when it is this version's, and only its owner's to
/// read and write.
fn read(path: &Path) -> Option<String> {
    let text = match private_file::read(path) {
        Ok(text) => text,
        Err(err) if err.kind() == io::ErrorKind::NotFound => return None,
        Err(err) => {
            log::debug!("ignoring the tool cache {}: {err}", path.display());
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
    Some(text)
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

/// The era verdict saved with the tools (`legacy` or a stateless version), so a restart of
/// the host can connect without the `server/discover` probe.
pub(crate) fn load_era(dir: &Path, config: &ServerConfig) -> Option<ProtocolMode> {
    let text = read(&file(dir, config))?;
    let value: Value = serde_json::from_str(&text).ok()?;
    match ProtocolMode::parse(value["era"].as_str()?)? {
        ProtocolMode::Auto => None,
        verdict => Some(verdict),
    }
}

/// Saves the tools of `config`, replacing the file whole, so a reader never sees half a file.
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
    private_file::create_dir(dir)?;
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
    private_file::replace(&file(dir, config), &text)
}

/// The cache file of `config` in `dir`, named after the configuration's `Debug`, which redacts
/// every possible secret; stable within a version of umcp (a new one costs one listing).
pub(crate) fn file(dir: &Path, config: &ServerConfig) -> PathBuf {
    let shown = format!("{:?}", config.transport);
    dir.join(format!("{}.json", hash(&shown)))
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

/// umcp's per-user cache directory: `%LOCALAPPDATA%\umcp\cache`, `~/Library/Caches/umcp`
/// or `$XDG_CACHE_HOME/umcp` (`~/.cache/umcp`).
pub(super) fn user_base() -> Option<PathBuf> {
    let var = |name: &str| {
        std::env::var_os(name)
            .map(PathBuf::from)
            .filter(|p| p.is_absolute())
    };
    if cfg!(windows) {
        var("LOCALAPPDATA").map(|d| d.join("umcp").join("cache"))
    } else if cfg!(target_os = "macos") {
        var("HOME").map(|h| h.join("Library").join("Caches").join("umcp"))
    } else {
        var("XDG_CACHE_HOME")
            .or_else(|| var("HOME").map(|h| h.join(".cache")))
            .map(|d| d.join("umcp"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transport::http::HttpConfig;
    use crate::transport::StdioConfig;
    use serde_json::json;
    use std::fs;

    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("umcp-cache-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        dir
    }

    #[test]
    fn a_file_is_named_by_what_starts_the_server() {
        let dir = Path::new("/cache");
        let a = ServerConfig::new("a", StdioConfig::new("cmd").arg("x"));
        let b = ServerConfig::new("b", StdioConfig::new("cmd").arg("x"))
            .with_startup_timeout(std::time::Duration::from_secs(1));
        let c = ServerConfig::new("a", StdioConfig::new("cmd").arg("y"));
        assert_eq!(file(dir, &a), file(dir, &b), "names and timeouts aside");
        assert_ne!(file(dir, &a), file(dir, &c));
    }

    #[test]
    fn hash_is_stable() {
        assert_eq!(hash(""), "cbf29ce484222325");
        assert_eq!(hash("a"), "af63dc4c8601ec8c");
    }

    #[test]
    fn round_trip_and_replace() {
        let dir = scratch("unit");
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
        let dir = scratch("era");
        let config = ServerConfig::stdio("s", "server-cmd");
        assert!(load_era(&dir, &config).is_none());
        let modern = ProtocolMode::Pinned("2026-07-28".into());
        save(&dir, &config, &[], &modern);
        assert_eq!(load_era(&dir, &config), Some(modern));
        save(&dir, &config, &[], &ProtocolMode::Legacy);
        assert_eq!(load_era(&dir, &config), Some(ProtocolMode::Legacy));
        // A file without a verdict still serves its tools, and no verdict.
        let bare = json!({"version": VERSION, "tools": []});
        private_file::replace(&file(&dir, &config), bare.to_string().as_bytes()).unwrap();
        assert!(load_era(&dir, &config).is_none());
        assert_eq!(load(&dir, &config).map(|t| t.len()), Some(0));
        let _ = fs::remove_dir_all(&dir);
    }

    /// A stdio and an HTTP configuration holding `secret` in every place one goes.
    fn with_secrets(secret: &str) -> [ServerConfig; 2] {
        let stdio = StdioConfig::new("server")
            .args(["--token", secret, "--verbose"])
            .env("API_KEY", secret);
        let http = HttpConfig::new(format!("https://h.example/mcp?api_key={secret}"))
            .header("Authorization", format!("Bearer {secret}"));
        let (stdio, http) = (ServerConfig::new("s", stdio), ServerConfig::new("h", http));
        [stdio, http]
    }

    #[test]
    fn file_names_reveal_no_secret() {
        let dir = scratch("names");
        let [stdio, http] = with_secrets("hunter2");
        let [stdio_rotated, http_rotated] = with_secrets("correct-horse");
        for (config, rotated) in [(&stdio, &stdio_rotated), (&http, &http_rotated)] {
            let name = file(&dir, config);
            // The name is a function of what may be shown: the same whatever the secret, so
            // no guess at it can be checked against the name.
            assert_eq!(name, file(&dir, rotated));
            // A rotated key reaches the same server: its cached tools are offered.
            let tools = [Tool::new("t", json!({}))];
            save(&dir, config, &tools, &ProtocolMode::Legacy);
            assert_eq!(load(&dir, rotated).map(|t| t.len()), Some(1));
        }
        assert_ne!(file(&dir, &stdio), file(&dir, &http));
        let other = ServerConfig::http("h", "https://h.example/other?api_key=hunter2");
        assert_ne!(
            file(&dir, &other),
            file(&dir, &http),
            "the path is no secret"
        );
        let _ = fs::remove_dir_all(&dir);
    }

    #[cfg(unix)]
    #[test]
    fn cache_files_are_the_owners_only_and_planted_ones_are_not_trusted() {
        use std::os::unix::fs::{symlink, PermissionsExt};
        let root = scratch("modes");
        let dir = root.join("tools");
        let config = ServerConfig::stdio("s", "server-cmd");
        let tools = [Tool::new("t", json!({}))];
        save(&dir, &config, &tools, &ProtocolMode::Legacy);
        let mode = |p: &Path| fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&dir), 0o700);
        assert_eq!(mode(&root), 0o700);
        let path = file(&dir, &config);
        assert_eq!(mode(&path), 0o600);

        // A file others may write (as one planted by another user would be) is ignored.
        let text = fs::read_to_string(&path).unwrap();
        fs::set_permissions(&path, fs::Permissions::from_mode(0o666)).unwrap();
        assert!(load(&dir, &config).is_none());
        assert!(load_era(&dir, &config).is_none());

        // Links planted at the cache's path and where a predictable temporary file would go
        // lead nowhere: the cache reads none, and writing it leaves their targets alone.
        let victim = root.join("victim.json");
        fs::write(&victim, &text).unwrap();
        fs::set_permissions(&victim, fs::Permissions::from_mode(0o600)).unwrap();
        fs::remove_file(&path).unwrap();
        symlink(&victim, &path).unwrap();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        for n in 0..4 {
            let guess = format!(".{name}.{}.{n}.tmp", std::process::id());
            symlink(&victim, dir.join(guess)).unwrap();
        }
        assert!(load(&dir, &config).is_none(), "a link is not followed");
        save(&dir, &config, &[], &ProtocolMode::Legacy);
        assert_eq!(fs::read_to_string(&victim).unwrap(), text);
        assert!(!fs::symlink_metadata(&path)
            .unwrap()
            .file_type()
            .is_symlink());
        assert_eq!(load(&dir, &config).map(|t| t.len()), Some(0));
        let _ = fs::remove_dir_all(&root);
    }
}
