//! The configuration files looked for when none is given: the project's, in the working
//! directory, and the user's own of every host that keeps MCP servers (Claude Desktop,
//! Cursor, VS Code, Claude Code, Codex, Windsurf, Gemini CLI, Goose, Zed).

use std::path::PathBuf;

use crate::user_dirs::user_path;

/// A host's configuration file: which host writes it, and where it is.
pub struct HostFile {
    pub host: &'static str,
    pub path: PathBuf,
}

/// The configuration files looked for when none is given, in the documented order (see
/// `FILES` in the help): the project's, then the user's own.
pub fn candidates() -> Vec<PathBuf> {
    let mut candidates = project();
    candidates.extend(user());
    candidates
}

/// Every host's file, the project's first, in the order of [`candidates`].
pub fn hosts() -> Vec<HostFile> {
    let mut files = project_hosts();
    files.extend(user_hosts());
    files
}

/// The project's configuration files, in the working directory: used once trusted (see
/// [`trust`](crate::trust)).
pub fn project() -> Vec<PathBuf> {
    project_hosts().into_iter().map(|f| f.path).collect()
}

/// The user's own configuration files, under the home directory.
pub fn user() -> Vec<PathBuf> {
    user_hosts().into_iter().map(|f| f.path).collect()
}

/// The project's files; in the home directory, those that are the user's own files too
/// (`~/.cursor/mcp.json`, `~/.gemini/settings.json`) are the user's, and left out.
fn project_hosts() -> Vec<HostFile> {
    let file = |host, path: &str| HostFile {
        host,
        path: PathBuf::from(path),
    };
    let files = [
        file("Claude Code", ".mcp.json"),
        file("VS Code", ".vscode/mcp.json"),
        file("Cursor", ".cursor/mcp.json"),
        file("Gemini CLI", ".gemini/settings.json"),
        file("Zed", ".zed/settings.json"),
    ];
    let here = std::env::current_dir().ok();
    let users: Vec<PathBuf> = user_hosts().into_iter().map(|f| f.path).collect();
    files
        .into_iter()
        .filter(|f| {
            let absolute = here.as_ref().map(|h| h.join(&f.path));
            !absolute.is_some_and(|a| users.contains(&a))
        })
        .collect()
}

/// The user's own files, of Claude Desktop, Cursor and VS Code first (as before the others
/// were read), then of Claude Code, Codex, Windsurf, Gemini CLI, Goose and Zed. None is
/// looked for under a home or configuration directory that is not absolute: relative to the
/// working directory, it would be the project's, not the user's.
fn user_hosts() -> Vec<HostFile> {
    let home = user_path("HOME").or_else(|| user_path("USERPROFILE"));
    let config_home =
        user_path("XDG_CONFIG_HOME").or_else(|| home.as_ref().map(|h| h.join(".config")));
    let app_data = user_path("APPDATA");
    // The per-user application directory of each platform.
    let user_dir = |app: &str| -> Option<PathBuf> {
        if cfg!(target_os = "macos") {
            home.as_ref()
                .map(|h| h.join("Library/Application Support").join(app))
        } else if cfg!(windows) {
            app_data.as_ref().map(|a| a.join(app))
        } else {
            config_home.as_ref().map(|c| c.join(app))
        }
    };
    let in_home = |path: &str| home.as_ref().map(|h| h.join(path));
    let codex = user_path("CODEX_HOME")
        .map(|d| d.join("config.toml"))
        .or_else(|| in_home(".codex/config.toml"));
    // Goose and Zed keep theirs under `~/.config` on macOS too.
    let xdg = |path: &str| match cfg!(windows) {
        true => app_data.as_ref().map(|a| a.join(path)),
        false => config_home.as_ref().map(|c| c.join(path)),
    };
    let goose = match cfg!(windows) {
        true => xdg("Block/goose/config/config.yaml"),
        false => xdg("goose/config.yaml"),
    };
    let zed = match cfg!(windows) {
        true => xdg("Zed/settings.json"),
        false => xdg("zed/settings.json"),
    };
    let files = [
        (
            "Claude Desktop",
            user_dir("Claude").map(|d| d.join("claude_desktop_config.json")),
        ),
        ("Cursor", in_home(".cursor/mcp.json")),
        ("VS Code", user_dir("Code").map(|d| d.join("User/mcp.json"))),
        ("Claude Code", in_home(".claude.json")),
        ("Codex", codex),
        ("Windsurf", in_home(".codeium/windsurf/mcp_config.json")),
        ("Gemini CLI", in_home(".gemini/settings.json")),
        ("Goose", goose),
        ("Zed", zed),
    ];
    files
        .into_iter()
        .filter_map(|(host, path)| Some(HostFile { host, path: path? }))
        .collect()
}
