//! The configuration files looked for when none is given: the project's, in the working
//! directory, and the user's own of Claude Desktop, Cursor and VS Code.

use std::path::PathBuf;

use crate::user_dirs::user_path;

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
/// and VS Code. Only absolute ones: an empty or relative `HOME`, `XDG_CONFIG_HOME` or
/// `APPDATA` is ignored (as the XDG spec asks), since it would name a file of the working
/// directory, which came with the checkout, as the user's own.
pub fn user() -> Vec<PathBuf> {
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
    let mut candidates = Vec::new();
    candidates.extend(user_dir("Claude").map(|d| d.join("claude_desktop_config.json")));
    candidates.extend(home.as_ref().map(|h| h.join(".cursor/mcp.json")));
    candidates.extend(user_dir("Code").map(|d| d.join("User/mcp.json")));
    candidates.retain(|path| path.is_absolute());
    candidates
}
