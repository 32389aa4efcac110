//! Tests for the `umcp` binary: help, info, configuration files, the terminal, completions,
//! installed with `cargo install --path cli` and run from the `PATH` as a user would, end to end
//! against the bundled demo server.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

use serde_json::Value;

use umcp_test_support::demo;

use umcp_test_support::installed::{
    cli, demo, demo_stdio, empty_home, fixtures_stdio, on_a_terminal, stderr, stdout, umcp_in,
};

#[test]
fn help_for_every_command() {
    let out = cli(&["--help"]);
    assert_eq!(out.status.code(), Some(0));
    let help = stdout(&out);
    for command in [
        "tools",
        "call",
        "resources",
        "read",
        "prompts",
        "prompt",
        "complete",
        "info",
        "ping",
        "watch",
        "completions",
        "man",
    ] {
        assert!(
            help.contains(&format!("\n  {command} ")),
            "{command}: {help}"
        );
        for args in [&[command, "--help"][..], &["help", command][..]] {
            let out = cli(args);
            assert_eq!(out.status.code(), Some(0), "{args:?}");
            let text = stdout(&out);
            assert!(
                text.starts_with(&format!("usage: umcp [OPTIONS] {command}")),
                "{args:?}: {text}"
            );
        }
    }
    for option in [
        "--stdio",
        "--env",
        "--header",
        "--config",
        "--json",
        "--timeout",
    ] {
        assert!(help.contains(option), "{option}");
    }
    assert!(
        help.contains("./.mcp.json") && help.contains("EXIT CODES"),
        "{help}"
    );
    let version = stdout(&cli(&["--version"]));
    assert_eq!(version, format!("umcp {}\n", env!("CARGO_PKG_VERSION")));
}

#[test]
fn info_ping_and_complete() {
    let out = stdout(&demo(&["info"], 0));
    assert!(out.contains("serverInfo: {\"name\":\"umcp-demo\""), "{out}");
    assert!(out.contains("protocolVersion: 2025-11-25"), "{out}");
    assert!(out.contains("era: legacy"), "{out}");
    assert!(out.contains("transport: stdio"), "{out}");
    assert!(out.contains("\"completions\":{}"), "{out}");
    assert!(out.contains("instructions: A demo server"), "{out}");
    let info: Value = serde_json::from_str(&stdout(&demo(&["--json", "info"], 0))).unwrap();
    assert_eq!(info[0]["serverInfo"]["name"], "umcp-demo");
    assert!(info[0]["capabilities"]["tools"].is_object());
    assert_eq!(info[0]["era"], "legacy");

    let out = stdout(&demo(&["ping"], 0));
    assert!(
        out.starts_with("demo  ok  ") && out.ends_with(" ms\n"),
        "{out}"
    );
    let ping: Value = serde_json::from_str(&stdout(&demo(&["ping", "--json"], 0))).unwrap();
    assert_eq!(ping[0]["ok"], true);

    let out = stdout(&demo(&["complete", "prompt", "greet", "style", "p"], 0));
    assert_eq!(out, "pirate\n");
    demo(&["complete", "tool", "greet", "style"], 2);
}

#[test]
fn env_for_stdio_servers() {
    let out = demo(
        &[
            "--env",
            "WHO=from the flag",
            "call",
            "env",
            r#"{"name": "WHO"}"#,
        ],
        0,
    );
    assert_eq!(stdout(&out), "from the flag\n");
    // A name alone passes umcp's own variable, which the allow-list would otherwise keep from
    // the server; unset, it is a usage error naming it.
    let out = umcp_in(&empty_home())
        .env("UMCP_CLI_SECRET", "from umcp's environment")
        .args(["--stdio", &fixtures_stdio(), "--env", "UMCP_CLI_SECRET"])
        .args(["call", "env", r#"{"name": "UMCP_CLI_SECRET"}"#])
        .output()
        .unwrap();
    assert_eq!(
        stdout(&out),
        "from umcp's environment\n",
        "{}",
        stderr(&out)
    );
    let out = umcp_in(&empty_home())
        .env("UMCP_CLI_SECRET", "not passed")
        .args(["--stdio", &fixtures_stdio()])
        .args(["call", "env", r#"{"name": "UMCP_CLI_SECRET"}"#])
        .output()
        .unwrap();
    assert!(
        !stdout(&out).contains("not passed"),
        "not passed without --env: {}",
        stdout(&out)
    );
    let out = demo(&["--env", "UMCP_CLI_UNSET_VARIABLE", "tools"], 2);
    assert!(
        stderr(&out).contains("`UMCP_CLI_UNSET_VARIABLE` is not set"),
        "{}",
        stderr(&out)
    );
    demo(&["--env", "=x", "tools"], 2);
    let out = cli(&["--url", "http://127.0.0.1:9/mcp", "--env", "A=b", "tools"]);
    assert_eq!(out.status.code(), Some(2), "--env is for --stdio");
}

#[test]
fn configuration_files_are_found_in_the_usual_places() {
    let dir = empty_home().join("discovery");
    let project = dir.join("project");
    std::fs::create_dir_all(project.join(".vscode")).unwrap();
    std::fs::create_dir_all(dir.join(".cursor")).unwrap();
    let demo = demo::demo_binary();
    let entry = |who: &str| serde_json::json!({ "command": demo, "args": ["--server", "--fixtures"], "env": { "WHO": who } });
    let run = |dir: &Path| {
        let out = umcp_in(dir)
            .args(["call", "env", r#"{"name": "WHO"}"#])
            .output()
            .unwrap();
        (out.status.code(), stdout(&out), stderr(&out))
    };
    // Nothing anywhere: a usage error listing where it looked.
    let (code, _, err) = run(&project);
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains(".mcp.json") && err.contains(".cursor/mcp.json"),
        "{err}"
    );
    // The user's Cursor file, with the VS Code workspace file and .mcp.json before it.
    let cursor = serde_json::json!({ "mcpServers": { "s": entry("cursor") } });
    std::fs::write(dir.join(".cursor/mcp.json"), cursor.to_string()).unwrap();
    let home = |project: &Path| {
        let out = umcp_in(project)
            .env("HOME", &dir)
            .args(["call", "env", r#"{"name": "WHO"}"#])
            .output()
            .unwrap();
        (stdout(&out), stderr(&out))
    };
    let (out, err) = home(&project);
    assert_eq!(out, "cursor\n", "{err}");
    assert!(
        err.contains("using the servers of") && err.contains(".cursor"),
        "{err}"
    );
    // A project's files come before it, each used once trusted, saying what it shadows.
    let trust = |project: &Path| {
        let out = umcp_in(project)
            .env("HOME", &dir)
            .arg("trust")
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    };
    let vscode = serde_json::json!({ "servers": { "s": entry("vscode") } });
    std::fs::write(project.join(".vscode/mcp.json"), vscode.to_string()).unwrap();
    let (out, err) = home(&project);
    assert_eq!(out, "", "{err}");
    assert!(err.contains("umcp trust .vscode/mcp.json"), "{err}");
    trust(&project);
    let (out, err) = home(&project);
    assert_eq!(out, "vscode\n", "{err}");
    assert!(
        err.contains("shadows your own") && err.contains(".cursor"),
        "{err}"
    );
    let claude_code = serde_json::json!({ "mcpServers": { "s": entry("project") } });
    std::fs::write(project.join(".mcp.json"), claude_code.to_string()).unwrap();
    trust(&project);
    assert_eq!(home(&project).0, "project\n");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn questions_are_declined_without_a_terminal_and_asked_on_one() {
    let out = demo(&["call", "ask_user", r#"{"question": "Ready?"}"#], 0);
    assert_eq!(stdout(&out), "declined\n");
    assert!(
        stderr(&out).contains("umcp: server `demo --server --fixtures` asks: Ready?"),
        "{}",
        stderr(&out)
    );

    let stdio = demo_stdio();
    let args = [
        "--stdio",
        &stdio,
        "call",
        "ask_user",
        r#"{"question": "Ready?"}"#,
    ];
    // Yes to answering; a required answer; an invalid boolean, asked again; then no.
    let screen = on_a_terminal(&args, "y\nfine\nperhaps\nn\n");
    assert!(
        screen.contains("Server `demo --server` asks: Ready?"),
        "{screen}"
    );
    assert!(screen.contains("`perhaps` is not yes or no"), "{screen}");
    assert!(
        screen.contains(r#"accepted: {"answer":"fine","sure":false}"#),
        "{screen}"
    );
    let screen = on_a_terminal(&args, "n\n");
    assert!(screen.contains("declined"), "{screen}");
}

#[test]
fn progress_is_drawn_on_a_terminal_only() {
    let slow = r#"{"steps": 3, "delay_ms": 30}"#;
    let out = demo(&["call", "slow", slow], 0);
    assert_eq!(stdout(&out), "finished 3 steps\n");
    assert!(!stderr(&out).contains("step"), "{}", stderr(&out));
    let stdio = demo_stdio();
    let screen = on_a_terminal(&["--stdio", &stdio, "call", "slow", slow], "");
    assert!(screen.contains("step 2 of 3 (2/3)"), "{screen}");
    // The line is cleared before the result is printed.
    assert!(screen.contains("\x1b[2Kfinished 3 steps"), "{screen:?}");
}

#[test]
fn completions_for_bash_zsh_and_fish() {
    let script = stdout(&cli(&["completions", "bash"]));
    // Load the script into bash and complete like the shell would.
    let complete = |words: &str| {
        let program = format!(
            "{script}\nCOMP_WORDS=({words}); COMP_CWORD=$((${{#COMP_WORDS[@]}} - 1)); \
             _umcp; printf '%s\\n' \"${{COMPREPLY[@]}}\""
        );
        let out = Command::new("bash")
            .args(["-c", &program])
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
        stdout(&out)
    };
    assert_eq!(complete("umcp in"), "info\n");
    assert_eq!(complete("umcp --ti"), "--timeout\n");
    assert_eq!(complete("umcp --transport s"), "streamable-http\nsse\n");
    assert_eq!(complete("umcp completions f"), "fish\n");
    for shell in ["zsh", "fish"] {
        let text = stdout(&cli(&["completions", shell]));
        assert!(text.contains("umcp") && text.contains("timeout"), "{shell}");
    }
    assert!(stdout(&cli(&["completions", "zsh"])).starts_with("#compdef umcp"));
    let out = cli(&["completions", "tcsh"]);
    assert_eq!(out.status.code(), Some(2));
}

/// `umcp man` is a page groff reads without a single warning, and every command and option
/// `--help` lists has its entry in what groff renders.
#[test]
fn man_page_for_every_command_and_option() {
    let out = cli(&["man"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let page = stdout(&out);
    let groff = |args: &[&str]| {
        let mut child = Command::new("groff")
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("run groff (Debian: apt-get install groff-base; .ci/run installs it)");
        let mut stdin = child.stdin.take().unwrap();
        stdin.write_all(page.as_bytes()).unwrap();
        drop(stdin);
        child.wait_with_output().unwrap()
    };
    // -ww: every warning; -z: no output, only the checks.
    let checked = groff(&["-man", "-ww", "-z"]);
    assert!(checked.status.success(), "{}", stderr(&checked));
    assert_eq!(stderr(&checked), "", "groff warns about the page");
    // Plain text: no overstriking for bold or underlining for italics.
    let text = stdout(&groff(&["-man", "-Tascii", "-P-cbou"]));
    assert!(
        text.contains("umcp - a command-line Model Context Protocol client"),
        "{text}"
    );
    let help = stdout(&cli(&["--help"]));
    let section = |name: &str| -> Vec<String> {
        help.split(&format!("\n{name}:\n"))
            .nth(1)
            .unwrap_or_else(|| panic!("no {name} in: {help}"))
            .lines()
            .take_while(|l| l.starts_with("  "))
            .map(|l| l.split_whitespace().next().unwrap().to_owned())
            .collect()
    };
    let entries = [section("COMMANDS"), section("OPTIONS")].concat();
    assert!(entries.len() > 30, "{entries:?}");
    for entry in entries {
        // An entry's tag starts a line at the page's indentation.
        assert!(
            text.contains(&format!("\n       {entry}")),
            "{entry} is not in the manual page: {text}"
        );
    }
    for heading in ["SYNOPSIS", "FILES", "EXIT STATUS", "EXAMPLES"] {
        assert!(text.contains(&format!("\n{heading}\n")), "{heading}");
    }
}

/// The command-line examples of the library's README and the tool's own that run the demo
/// server, run as written (the demo server's path aside).
#[test]
fn readme_examples_work_as_written() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let demo_path = demo::demo_binary().to_string_lossy().into_owned();
    let mut lines = Vec::new();
    for (file, at_least) in [("../README.md", 3), ("README.md", 7)] {
        let text = std::fs::read_to_string(root.join(file)).unwrap();
        let found: Vec<String> = text
            .lines()
            .filter(|l| l.starts_with("umcp --stdio 'target/debug/examples/demo --server'"))
            .map(str::to_owned)
            .collect();
        assert!(found.len() >= at_least, "{file}: {found:?}");
        lines.extend(found);
    }
    for line in lines {
        let line = line.replace("target/debug/examples/demo", &demo_path);
        let out = Command::new("sh")
            .args(["-c", &line])
            .envs(
                umcp_in(&empty_home())
                    .get_envs()
                    .filter_map(|(k, v)| Some((k, v?))),
            )
            .current_dir(empty_home())
            .stdin(Stdio::null())
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{line}\n{}", stderr(&out));
        assert!(!stdout(&out).is_empty(), "{line}");
    }
}
