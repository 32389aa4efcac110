//! Every host's configuration file read: Claude Code's `~/.claude.json`, Codex's TOML, Goose's
//! YAML, Gemini CLI's, Windsurf's and Zed's JSON, listed by `servers list`, used by commands,
//! and copied by `servers import`; a project's files of every host need trust.

use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::{json, Value};
use umcp_test_support::demo::demo_binary;
use umcp_test_support::installed::{empty_home, stderr, stdout, umcp_in};

/// A home with one file of every host, and a working directory in it.
fn home(test: &str) -> (PathBuf, PathBuf) {
    let home = empty_home().join(format!("hosts-{test}"));
    let _ = std::fs::remove_dir_all(&home);
    let work = home.join("src/app");
    std::fs::create_dir_all(&work).unwrap();
    let demo = demo_binary().display().to_string();
    let write = |path: &str, text: String| {
        let path = home.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    };
    let claude = json!({
        "numStartups": 3,
        "mcpServers": {"cc-demo": {"type": "stdio", "command": demo, "args": ["--server"]}},
        "projects": {work.display().to_string(): {
            "mcpServers": {"local": {"command": demo, "args": ["--server", "--fixtures"]}}}},
    });
    write(".claude.json", claude.to_string());
    write(
        ".codex/config.toml",
        format!(
            "model = \"o3\"\n\n[mcp_servers.codex-demo]\ncommand = {demo:?}\nargs = [\"--server\"]\n\
             startup_timeout_sec = 20\n\n[mcp_servers.figma]\nurl = \"https://mcp.figma.com/mcp\"\n\
             bearer_token_env_var = \"FIGMA_TOKEN\"\nenabled = false\n"
        ),
    );
    write(
        ".config/goose/config.yaml",
        format!(
            "GOOSE_PROVIDER: openai\nextensions:\n  developer:\n    type: builtin\n    enabled: true\n\
             \x20 goose-demo:\n    type: stdio\n    cmd: {demo:?}\n    args: [--server]\n    enabled: true\n"
        ),
    );
    write(
        ".gemini/settings.json",
        json!({"theme": "GitHub", "mcpServers": {"docs": {"httpUrl": "https://docs.example.com/mcp?key=s3cret"}}})
            .to_string(),
    );
    write(
        ".codeium/windsurf/mcp_config.json",
        json!({"mcpServers": {"figma": {"serverUrl": "https://mcp.figma.com/mcp"}}}).to_string(),
    );
    write(
        ".config/zed/settings.json",
        format!(
            "// Zed settings\n{{\n  \"ui_font_size\": 16,\n  \"context_servers\": {{\n    \
             \"zed-demo\": {{\"command\": {{\"path\": {demo:?}, \"args\": [\"--server\"]}}, \"settings\": {{}}}},\n  }},\n}}\n"
        ),
    );
    (home, work)
}

/// `umcp ARGS` with `home` as its home and `work` as its working directory.
fn run_in(home: &Path, work: &Path, args: &[&str], code: i32) -> Output {
    let out = umcp_in(home).current_dir(work).args(args).output().unwrap();
    crate::fake::ended(out, args, code)
}

#[test]
fn servers_list_shows_every_hosts_servers_without_running_any() {
    let (home, work) = home("list");
    let out = run_in(&home, &work, &["--json", "servers", "list"], 0);
    let rows: Value = serde_json::from_slice(&out.stdout).unwrap();
    let rows = rows.as_array().unwrap();
    let found: Vec<(&str, &str)> = rows
        .iter()
        .map(|r| (r["host"].as_str().unwrap(), r["name"].as_str().unwrap()))
        .collect();
    for expected in [
        ("Claude Code", "cc-demo"),
        ("Claude Code", "local"),
        ("Codex", "codex-demo"),
        ("Codex", "figma"),
        ("Windsurf", "figma"),
        ("Gemini CLI", "docs"),
        ("Goose", "goose-demo"),
        ("Zed", "zed-demo"),
    ] {
        assert!(found.contains(&expected), "{expected:?} in {found:?}");
    }
    // Goose's built-in extension is no server; a disabled Codex server is marked.
    assert!(!found.iter().any(|(_, name)| *name == "developer"));
    let figma = rows
        .iter()
        .find(|r| r["host"] == "Codex" && r["name"] == "figma")
        .unwrap();
    assert_eq!(figma["disabled"], true);
    assert_eq!(figma["transport"], "auto");
    let docs = rows.iter().find(|r| r["name"] == "docs").unwrap();
    assert_eq!(docs["transport"], "streamable-http");
    assert!(
        !docs["target"].as_str().unwrap().contains("s3cret"),
        "{docs}"
    );
    let text = stdout(&run_in(&home, &work, &["servers", "list"], 0));
    assert!(
        text.lines()
            .any(|l| l.starts_with("Codex  codex-demo  stdio  ")),
        "{text}"
    );
}

#[test]
fn commands_use_the_first_hosts_file_that_holds_servers() {
    let (home, work) = home("use");
    // ~/.claude.json comes first of these: the user's servers and this directory's own.
    let out = run_in(&home, &work, &["tools"], 0);
    let tools = stdout(&out);
    assert!(
        tools.contains("cc-demo__echo(") && tools.contains("local__echo("),
        "{tools}"
    );
    assert!(stderr(&out).contains(".claude.json"), "{}", stderr(&out));
    // Codex's TOML, named.
    let codex = home.join(".codex/config.toml").display().to_string();
    let out = run_in(
        &home,
        &work,
        &[
            "--config",
            &codex,
            "--server",
            "codex-demo",
            "--raw",
            "call",
            "echo",
            "message=hi",
        ],
        0,
    );
    assert_eq!(stdout(&out), "hi\n");
    let goose = home.join(".config/goose/config.yaml").display().to_string();
    let out = run_in(&home, &work, &["--config", &goose, "tools"], 0);
    assert!(stdout(&out).starts_with("echo("), "{}", stdout(&out));
    // Elsewhere, Claude Code's project servers are not this directory's.
    let out = run_in(&home, &home, &["tools"], 0);
    assert!(!stdout(&out).contains("local__"), "{}", stdout(&out));
}

#[test]
fn servers_import_copies_a_hosts_servers_with_their_variables_as_written() {
    let (home, work) = home("import");
    let target = work.join("mcp.json");
    let target_arg = target.display().to_string();
    run_in(
        &home,
        &work,
        &["--config", &target_arg, "servers", "import", "codex"],
        0,
    );
    let written: Value = serde_json::from_str(&std::fs::read_to_string(&target).unwrap()).unwrap();
    let servers = &written["mcpServers"];
    assert_eq!(servers["codex-demo"]["args"], json!(["--server"]));
    assert_eq!(servers["codex-demo"]["startupTimeoutMs"], 20000);
    assert_eq!(
        servers["figma"]["headers"]["Authorization"], "Bearer ${FIGMA_TOKEN}",
        "{written}"
    );
    assert_eq!(servers["figma"]["disabled"], true);
    // Again: what is there already stays; one server of another host is added.
    let again = run_in(
        &home,
        &work,
        &[
            "--config",
            &target_arg,
            "servers",
            "import",
            "zed",
            "--server",
            "zed-demo",
        ],
        0,
    );
    assert!(
        stderr(&again).contains("imported `zed-demo`"),
        "{}",
        stderr(&again)
    );
    let repeat = run_in(
        &home,
        &work,
        &["--config", &target_arg, "servers", "import", "codex"],
        0,
    );
    assert!(stderr(&repeat).contains("already"), "{}", stderr(&repeat));
    let out = run_in(
        &home,
        &work,
        &[
            "--config",
            &target_arg,
            "--server",
            "zed-demo",
            "--raw",
            "call",
            "echo",
            "message=z",
        ],
        0,
    );
    assert_eq!(stdout(&out), "z\n");
    run_in(&home, &work, &["servers", "import", "codex"], 2);
    run_in(
        &home,
        &work,
        &["--config", &target_arg, "servers", "import", "nowhere"],
        2,
    );
}

#[test]
fn a_projects_file_of_every_host_needs_trust() {
    let (home, work) = home("trust");
    let demo = demo_binary().display().to_string();
    let planted = json!({"planted": {"command": demo, "args": ["--server"]}});
    for (path, key) in [
        (".gemini/settings.json", "mcpServers"),
        (".cursor/mcp.json", "mcpServers"),
        (".zed/settings.json", "context_servers"),
        (".vscode/mcp.json", "servers"),
        (".mcp.json", "mcpServers"),
    ] {
        let project = work.join(path);
        std::fs::create_dir_all(project.parent().unwrap()).unwrap();
        std::fs::write(&project, json!({key: planted}).to_string()).unwrap();
        let out = run_in(&home, &work, &["tools"], 5);
        assert!(stderr(&out).contains(path), "{path}: {}", stderr(&out));
        assert_eq!(stdout(&out), "", "{path}");
        std::fs::remove_file(&project).unwrap();
    }
    // A Zed settings file of the project with no servers is passed over, not asked about.
    let zed = work.join(".zed/settings.json");
    std::fs::create_dir_all(zed.parent().unwrap()).unwrap();
    std::fs::write(&zed, "{\"tab_size\": 2}").unwrap();
    run_in(&home, &work, &["tools"], 0);
}
