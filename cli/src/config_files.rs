//! The configuration files looked for when none is given: the project's, in the working
//! directory, and the user's own of Claude Desktop, Cursor and VS Code.

use std::path::PathBuf;

/// The configuration files looked for when none is given, in the documented order (see
/// `FILES` in the help): the project's, then the user's own.
pub fn candidates() -> Vec<PathBuf> {
    let mut candidates = project().to_vec();
    candidates.extend(user());
    candidates
}

/// The project's configuration files, in the working directory: used once trusted (see
/// [`trust`](crate::trust)).
pub fn project() -> [PathBuf; 2] {
    [
        PathBuf::from(".mcp.json"),
        PathBuf::from(".vscode/mcp.json"),
    ]
}

/// The user's own configuration files, under the home directory, of Claude Desktop, Cursor
/// and VS Code.
pub fn user() -> Vec<PathBuf> {
    let home = std::env::var_os("HOME")
        .or_else(|| std::env::var_os("USERPROFILE"))
        .map(PathBuf::from);
    let config_home = std::env::var_os("XDG_CONFIG_HOME")
        .map(PathBuf::from)
        .or_else(|| home.as_ref().map(|h| h.join(".config")));
    let app_data = std::env::var_os("APPDATA").map(PathBuf::from);
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
    let mut candidates = Vec::new();
    candidates.extend(user_dir("Claude").map(|d| d.join("claude_desktop_config.json")));
    candidates.extend(home.as_ref().map(|h| h.join(".cursor/mcp.json")));
    candidates.extend(user_dir("Code").map(|d| d.join("User/mcp.json")));
    candidates
}
