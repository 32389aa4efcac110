//! A configuration file found in the working directory came with the checkout: umcp runs
//! nothing of it, and expands none of its variables, until the user trusts it (`umcp trust`,
//! or `y` at the terminal); a changed file must be trusted again. Files named with
//! `--config` and the user's own need no trust.

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::Output;
use std::time::Duration;

use serde_json::json;

use umcp_test_support::installed::{empty_home, stderr, stdout, terminal_session_in, umcp_in};

/// The exit code of a run refused for an untrusted project file.
const UNTRUSTED: i32 = 5;

/// A fresh directory for one test, with `.mcp.json` holding `servers`; it is also the home.
fn project(test: &str, servers: serde_json::Value) -> PathBuf {
    let dir = empty_home().join(format!("trust-{test}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    write(&dir.join(".mcp.json"), &json!({ "mcpServers": servers }));
    dir
}

fn write(path: &Path, value: &serde_json::Value) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, value.to_string()).unwrap();
}

/// A server that leaves a file named `ran` in the working directory when it is started.
fn toucher() -> serde_json::Value {
    json!({ "command": "sh", "args": ["-c", "touch ran"] })
}

/// Runs umcp in `dir` (stdin not a terminal) with `args`.
fn umcp(dir: &Path, args: &[&str]) -> Output {
    umcp_in(dir).args(args).output().expect("run umcp")
}

fn code(out: &Output) -> Option<i32> {
    out.status.code()
}

/// Whether the `toucher` server was started in `dir`.
fn ran(dir: &Path) -> bool {
    dir.join("ran").exists()
}

#[test]
fn a_found_project_file_runs_nothing_until_trusted() {
    let dir = project("found", json!({ "a": toucher() }));
    let out = umcp(&dir, &["tools"]);
    let err = stderr(&out);
    assert_eq!(code(&out), Some(UNTRUSTED), "{err}");
    assert!(
        err.contains(".mcp.json") && err.contains("umcp trust .mcp.json"),
        "{err}"
    );
    assert!(!ran(&dir), "nothing runs before trust");

    let out = umcp(&dir, &["trust", ".mcp.json"]);
    assert_eq!(code(&out), Some(0), "{}", stderr(&out));
    assert!(
        stdout(&out).contains("  a: runs sh -c 'touch ran'"),
        "{}",
        stdout(&out)
    );
    // The state: owner-only, in the user's state directory, written without leftovers.
    let state = dir.join(".local/state/umcp");
    let names: Vec<String> = std::fs::read_dir(&state)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, ["trusted.json"]);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&state), 0o700);
        assert_eq!(mode(&state.join("trusted.json")), 0o600);
    }
    let recorded = std::fs::read_to_string(state.join("trusted.json")).unwrap();
    let canonical = std::fs::canonicalize(dir.join(".mcp.json")).unwrap();
    assert!(
        recorded.contains(&json!(canonical).to_string()),
        "{recorded}"
    );

    // Trusted, it is used: the server is started (and, being `sh`, fails at once: exit 3).
    let out = umcp(&dir, &["--timeout", "10", "tools"]);
    assert_eq!(code(&out), Some(3), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("using the servers of .mcp.json (this project's, trusted)"),
        "{}",
        stderr(&out)
    );
    assert!(ran(&dir));
    std::fs::remove_file(dir.join("ran")).unwrap();

    // Changed, it must be trusted again.
    let mut changed = std::fs::read_to_string(dir.join(".mcp.json")).unwrap();
    changed.push(' ');
    std::fs::write(dir.join(".mcp.json"), changed).unwrap();
    let out = umcp(&dir, &["tools"]);
    assert_eq!(code(&out), Some(UNTRUSTED), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("has changed since it was trusted"),
        "{}",
        stderr(&out)
    );
    assert!(!ran(&dir));
    let listed = umcp(&dir, &["trust", "--list"]);
    let line = format!("changed  {}\n", canonical.display());
    assert_eq!(stdout(&listed), line, "{}", stderr(&listed));

    // `umcp trust` without a file trusts the one umcp would find.
    let out = umcp(&dir, &["trust"]);
    assert_eq!(code(&out), Some(0), "{}", stderr(&out));
    let listed = umcp(&dir, &["--json", "trust", "--list"]);
    let entries: serde_json::Value = serde_json::from_str(&stdout(&listed)).unwrap();
    assert_eq!(entries[0]["status"], "trusted", "{entries}");
    assert_eq!(entries[0]["path"], json!(canonical));
    assert_eq!(entries[0]["sha256"].as_str().map(str::len), Some(64));

    // Revoked, it is refused again.
    let out = umcp(&dir, &["trust", "--revoke", ".mcp.json"]);
    assert_eq!(code(&out), Some(0), "{}", stderr(&out));
    assert!(
        stdout(&out).contains("no longer trusted"),
        "{}",
        stdout(&out)
    );
    assert_eq!(code(&umcp(&dir, &["tools"])), Some(UNTRUSTED));
    assert!(!ran(&dir));
    let listed = umcp(&dir, &["trust", "--list"]);
    assert_eq!(stdout(&listed), "");
    assert!(stderr(&listed).contains("no file is trusted"));
    let out = umcp(&dir, &["trust", "--revoke", ".mcp.json"]);
    assert_eq!(code(&out), Some(1), "not trusted, nothing to revoke");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Nothing of an untrusted file reaches the network, and its variables are not read: what the
/// terminal is shown names them, never their values, and shows what the file itself says as
/// it is. `y` trusts the file for the runs after.
#[test]
fn the_terminal_is_shown_what_would_run_and_asked() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let url = format!(
        "http://127.0.0.1:{}/mcp?key=hunter2",
        listener.local_addr().unwrap().port()
    );
    let leak =
        json!({ "type": "http", "url": url, "headers": { "X-Leak": "${env:UMCP_TEST_LEAK}" } });
    let dir = project("asked", json!({ "a": toucher(), "b": leak }));
    let session = |input: &str| {
        let envs = [("UMCP_TEST_LEAK", "the-leaked-value")];
        let args = ["--timeout", "10", "tools"];
        stdout(&terminal_session_in(
            &dir,
            &envs,
            &args,
            "",
            input,
            Duration::ZERO,
        ))
    };
    let screen = session("n\n");
    // What the file's author wrote is shown as it will be sent (the key in the URL); what
    // umcp would fill in from the user's environment is shown as the variable it reads.
    for shown in [
        "is not trusted",
        "  a: runs sh -c 'touch ran'",
        "?key=hunter2 sending X-Leak: ${env:UMCP_TEST_LEAK}",
        "reads the environment variables UMCP_TEST_LEAK",
        "Trust it and start its servers? [y/N]",
        "none of its servers was started",
    ] {
        assert!(screen.contains(shown), "{shown}: {screen}");
    }
    assert!(!screen.contains("the-leaked-value"));
    assert!(!ran(&dir));
    assert!(listener.accept().is_err(), "nothing was sent");

    let screen = session("y\n");
    assert!(screen.contains("is trusted from now on"), "{screen}");
    assert!(ran(&dir), "{screen}");
    let listed = umcp(&dir, &["trust", "--list"]);
    assert!(
        stdout(&listed).starts_with("trusted  "),
        "{}",
        stdout(&listed)
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn named_files_and_the_users_own_need_no_trust() {
    // Named with --config, the project file is the user's word.
    let dir = project("named", json!({ "a": toucher() }));
    let out = umcp(&dir, &["--config", ".mcp.json", "--timeout", "10", "tools"]);
    assert_eq!(code(&out), Some(3), "{}", stderr(&out));
    assert!(ran(&dir));
    let _ = std::fs::remove_dir_all(&dir);

    // The user's own file, found under the home directory.
    let dir = empty_home().join("trust-own");
    let _ = std::fs::remove_dir_all(&dir);
    write(
        &dir.join(".cursor/mcp.json"),
        &json!({ "mcpServers": { "mine": toucher() } }),
    );
    let out = umcp(&dir, &["--timeout", "10", "tools"]);
    assert_eq!(code(&out), Some(3), "{}", stderr(&out));
    assert!(ran(&dir));
    std::fs::remove_file(dir.join("ran")).unwrap();

    // A project file beside it shadows it: refused untrusted, naming the user's file; used
    // once trusted, saying which was chosen.
    write(
        &dir.join(".vscode/mcp.json"),
        &json!({ "servers": { "theirs": toucher() } }),
    );
    let cursor = dir.join(".cursor/mcp.json");
    let out = umcp(&dir, &["tools"]);
    let err = stderr(&out);
    assert_eq!(code(&out), Some(UNTRUSTED), "{err}");
    assert!(err.contains("umcp trust .vscode/mcp.json"), "{err}");
    assert!(
        err.contains(&format!("It shadows your own {}", cursor.display())),
        "{err}"
    );
    assert!(!ran(&dir));
    assert_eq!(code(&umcp(&dir, &["trust"])), Some(0));
    let out = umcp(&dir, &["--timeout", "10", "tools"]);
    let err = stderr(&out);
    assert!(
        err.contains("using the servers of .vscode/mcp.json (this project's, trusted)")
            && err.contains(&format!("It shadows your own {}", cursor.display())),
        "{err}"
    );
    assert!(err.contains("server `theirs`"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn trust_options_and_the_state_directory() {
    let dir = project("options", json!({ "a": toucher() }));
    for args in [
        &["tools", "--list"][..],
        &["trust", "--list", ".mcp.json"],
        &["trust", "--list", "--revoke", ".mcp.json"],
        &["--config", ".mcp.json", "trust"],
    ] {
        let out = umcp(&dir, args);
        assert_eq!(code(&out), Some(2), "{args:?}: {}", stderr(&out));
    }
    let empty = empty_home().join("trust-nothing");
    std::fs::create_dir_all(&empty).unwrap();
    let out = umcp(&empty, &["trust"]);
    assert_eq!(code(&out), Some(2));
    assert!(stderr(&out).contains("no project configuration file here"));
    // A file that is no configuration file is not trusted.
    std::fs::write(empty.join("notes.json"), "[1, 2]").unwrap();
    let out = umcp(&empty, &["trust", "notes.json"]);
    assert_eq!(code(&out), Some(2), "{}", stderr(&out));

    // UMCP_STATE_DIR moves the state.
    let elsewhere = dir.join("elsewhere/state");
    let out = umcp_in(&dir)
        .env("UMCP_STATE_DIR", &elsewhere)
        .args(["trust", ".mcp.json"])
        .output()
        .unwrap();
    assert_eq!(code(&out), Some(0), "{}", stderr(&out));
    assert!(elsewhere.join("trusted.json").is_file());
    assert!(!dir.join(".local/state/umcp/trusted.json").exists());
    assert_eq!(code(&umcp(&dir, &["tools"])), Some(UNTRUSTED));

    // A state file other users may write is not believed.
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let file = elsewhere.join("trusted.json");
        let open = std::fs::Permissions::from_mode(0o666);
        std::fs::set_permissions(&file, open).unwrap();
        let out = umcp_in(&dir)
            .env("UMCP_STATE_DIR", &elsewhere)
            .arg("tools")
            .output()
            .unwrap();
        assert_eq!(code(&out), Some(1), "{}", stderr(&out));
        assert!(
            stderr(&out).contains("other users may write it"),
            "{}",
            stderr(&out)
        );
        assert!(!ran(&dir));
    }
    let _ = std::fs::remove_dir_all(&dir);
    let _ = std::fs::remove_dir_all(&empty);
}

/// The prompt shows what will run, as its author wrote it: a secret-looking word does not hide
/// the command after it, and an environment value (a package registry) is shown.
#[test]
fn the_prompt_shows_the_commands_and_values_that_will_run() {
    let hostile = json!({
        "command": "sh",
        "args": ["-c", "sk-live-1 2>/dev/null; touch pwned"],
        "env": {"npm_config_registry": "https://evil.example/"},
    });
    let dir = project("shown", json!({ "docs": hostile }));
    let out = terminal_session_in(&dir, &[], &["tools"], "", "n\n", Duration::ZERO);
    let screen = stdout(&out);
    for shown in [
        "  docs: runs sh -c 'sk-live-1 2>/dev/null; touch pwned' \
         with npm_config_registry=https://evil.example/",
        "Trust it and start its servers? [y/N]",
    ] {
        assert!(screen.contains(shown), "{shown}: {screen}");
    }
    assert!(!screen.contains("<redacted>"), "{screen}");
    assert!(!dir.join("pwned").exists());
    let _ = std::fs::remove_dir_all(&dir);
}

/// A checkout whose `.mcp.json` (or `.vscode` folder) is a link to another project's trusted
/// file does not borrow its trust: the servers would run here, with this checkout's own
/// scripts. Nothing starts, and the run ends with the untrusted code.
#[cfg(unix)]
#[test]
fn trust_is_not_borrowed_through_a_link() {
    let workspace = empty_home().join("trust-borrowed");
    let _ = std::fs::remove_dir_all(&workspace);
    let (acme, evil) = (workspace.join("acme"), workspace.join("evil"));
    // The trusted project runs `sh server.sh` from its own directory.
    let runs_script = json!({"mcpServers": {"acme": {"command": "sh", "args": ["server.sh"]}}});
    write(&acme.join(".mcp.json"), &runs_script);
    write(&acme.join(".vscode/mcp.json"), &runs_script);
    std::fs::write(acme.join("server.sh"), "touch ran-acme\n").unwrap();
    std::fs::create_dir_all(&evil).unwrap();
    std::fs::write(evil.join("server.sh"), "touch PWNED\n").unwrap();
    // Both places share one home, so one list of trusted files.
    let run = |dir: &Path, args: &[&str]| {
        umcp_in(dir)
            .env("HOME", &workspace)
            .env("XDG_STATE_HOME", workspace.join("state"))
            .args(args)
            .output()
            .expect("run umcp")
    };
    for file in [".mcp.json", ".vscode/mcp.json"] {
        let out = run(&acme, &["trust", file]);
        assert_eq!(code(&out), Some(0), "{}", stderr(&out));
    }

    std::os::unix::fs::symlink("../acme/.mcp.json", evil.join(".mcp.json")).unwrap();
    let out = run(&evil, &["--timeout", "10", "tools"]);
    let err = stderr(&out);
    assert_eq!(code(&out), Some(UNTRUSTED), "{err}");
    assert!(
        err.contains("is not trusted") && err.contains("a link to"),
        "{err}"
    );
    assert!(!evil.join("PWNED").exists(), "the checkout's script ran");

    std::fs::remove_file(evil.join(".mcp.json")).unwrap();
    std::os::unix::fs::symlink("../acme/.vscode", evil.join(".vscode")).unwrap();
    let out = run(&evil, &["--timeout", "10", "tools"]);
    assert_eq!(code(&out), Some(UNTRUSTED), "{}", stderr(&out));
    assert!(!evil.join("PWNED").exists(), "the checkout's script ran");

    // Where it was trusted, it still is.
    let out = run(&acme, &["--timeout", "10", "tools"]);
    assert!(
        stderr(&out).contains("(this project's, trusted)"),
        "{}",
        stderr(&out)
    );
    assert!(acme.join("ran-acme").exists());
    let _ = std::fs::remove_dir_all(&workspace);
}

/// An empty or relative `HOME` or `XDG_CONFIG_HOME` names no home: the checkout's
/// `Claude/claude_desktop_config.json` is not taken for the user's, nor `.cursor/mcp.json`
/// (Cursor's own project file), which is the project's and needs trust; nothing of them runs.
#[test]
fn an_empty_or_relative_home_makes_no_checkout_file_the_users() {
    let dir = empty_home().join("trust-no-home");
    let _ = std::fs::remove_dir_all(&dir);
    write(
        &dir.join("Claude/claude_desktop_config.json"),
        &json!({ "mcpServers": { "claude": toucher() } }),
    );
    write(
        &dir.join(".config/Claude/claude_desktop_config.json"),
        &json!({ "mcpServers": { "claude": toucher() } }),
    );
    write(
        &dir.join(".cursor/mcp.json"),
        &json!({ "mcpServers": { "cursor": toucher() } }),
    );
    let homes = [("", ""), ("", "/nonexistent"), (".", "."), ("", ".config")];
    let run = |home: &str, config_home: &str| {
        umcp_in(&dir)
            .env("HOME", home)
            .env("XDG_CONFIG_HOME", config_home)
            .args(["--timeout", "10", "tools"])
            .output()
            .unwrap()
    };
    for (home, config_home) in homes {
        let out = run(home, config_home);
        let err = stderr(&out);
        let seen = format!("HOME={home:?} XDG_CONFIG_HOME={config_home:?}: {err}");
        assert_eq!(code(&out), Some(5), "{seen}");
        assert!(err.contains("found in this directory"), "{seen}");
        assert!(!ran(&dir), "{seen}");
    }
    std::fs::remove_file(dir.join(".cursor/mcp.json")).unwrap();
    for (home, config_home) in homes {
        let out = run(home, config_home);
        let err = stderr(&out);
        let seen = format!("HOME={home:?} XDG_CONFIG_HOME={config_home:?}: {err}");
        assert_eq!(code(&out), Some(2), "{seen}");
        assert!(err.contains("no servers in"), "{seen}");
        // The checkout's files are named as the project's only, relative to it.
        assert!(!err.contains(&dir.display().to_string()), "{seen}");
        assert!(!ran(&dir), "{seen}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}
