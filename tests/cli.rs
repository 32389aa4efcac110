//! Tests for the `umcp` binary, installed with `cargo install --path . --features cli` and
//! run from the `PATH` as a user would, end to end against the bundled demo server.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::OnceLock;

use serde_json::Value;

#[allow(dead_code)] // Only the binary's path is used here.
#[path = "common/demo.rs"]
mod demo;

/// The directory `cargo install` put `umcp` in, installed once per test run with this
/// test's features. `--debug` and the shared target directory reuse what `cargo test`
/// built, so this takes a moment rather than a release build.
fn install_dir() -> PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let target = demo::demo_binary()
            .ancestors()
            .nth(3)
            .expect("the target directory")
            .to_path_buf();
        let install = target.join("cli-install");
        let features: Vec<&str> = [
            ("cli", true),
            ("http", cfg!(feature = "http")),
            ("oauth", cfg!(feature = "oauth")),
            ("oauth-jwt", cfg!(feature = "oauth-jwt")),
        ]
        .iter()
        .filter(|(_, on)| *on)
        .map(|(name, _)| *name)
        .collect();
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
        let status = Command::new(cargo)
            .args([
                "install", "--quiet", "--force", "--locked", "--debug", "--path", ".",
            ])
            .args(["--no-default-features", "--features", &features.join(",")])
            .arg("--root")
            .arg(&install)
            .arg("--target-dir")
            .arg(&target)
            .current_dir(root)
            .status()
            .expect("run cargo install");
        assert!(
            status.success(),
            "cargo install --path . --features cli failed"
        );
        install.join("bin")
    })
    .clone()
}

/// An empty directory, used as the working directory and home of every run, so that no
/// configuration file of the machine is found by accident.
fn empty_home() -> PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = std::env::temp_dir().join(format!("umcp-cli-home-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    })
    .clone()
}

/// `umcp` found on the `PATH`, in `dir`, with `dir` as its home.
fn umcp_in(dir: &Path) -> Command {
    let path = std::env::var_os("PATH").unwrap_or_default();
    let mut dirs = vec![install_dir()];
    dirs.extend(std::env::split_paths(&path));
    let mut command = Command::new("umcp");
    command
        .env("PATH", std::env::join_paths(dirs).unwrap())
        .env("HOME", dir)
        .env("XDG_CONFIG_HOME", dir.join(".config"))
        .env_remove("APPDATA")
        .current_dir(dir)
        .stdin(Stdio::null());
    command
}

/// `--stdio '<demo> --server'`, quoted so that a path with spaces survives the split.
fn demo_stdio() -> String {
    format!("'{}' --server", demo::demo_binary().display())
}

fn cli(args: &[&str]) -> Output {
    umcp_in(&empty_home())
        .args(args)
        .output()
        .expect("run umcp")
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// Runs the cli against the demo server and checks the exit code.
fn demo(args: &[&str], code: i32) -> Output {
    let stdio = demo_stdio();
    let mut all = vec!["--stdio", stdio.as_str()];
    all.extend_from_slice(args);
    let output = cli(&all);
    assert_eq!(
        output.status.code(),
        Some(code),
        "{args:?}\nstdout: {}\nstderr: {}",
        stdout(&output),
        stderr(&output)
    );
    output
}

#[test]
fn smoke_tools() {
    let out = stdout(&demo(&["tools"], 0));
    assert!(
        out.lines().any(|l| l == "echo  Echoes `message` back."),
        "{out}"
    );
    assert!(out.lines().any(|l| l.starts_with("crash  ")), "{out}");
}

#[test]
fn call_with_json_arguments() {
    let out = demo(&["call", "add", r#"{"a": 2, "b": 3}"#], 0);
    assert_eq!(stdout(&out), "5\n");
    let out = demo(&["call", "echo", r#"{"message": "two words"}"#], 0);
    assert_eq!(stdout(&out), "two words\n");
}

#[test]
fn json_output_for_scripts() {
    let out = demo(&["--json", "tools"], 0);
    let tools: Value = serde_json::from_str(&stdout(&out)).expect("JSON");
    let names: Vec<&str> = tools
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert!(
        names.contains(&"echo") && names.contains(&"add"),
        "{names:?}"
    );
    assert_eq!(tools[0]["tool"]["inputSchema"]["type"], "object");

    let out = demo(&["call", "add", r#"{"a": 2, "b": 3}"#, "--json"], 0);
    let result: Value = serde_json::from_str(&stdout(&out)).expect("JSON");
    assert_eq!(result["structuredContent"]["sum"], 5);
}

#[test]
fn read_resources_and_prompts() {
    let out = demo(&["read", "demo://text/readme"], 0);
    assert_eq!(stdout(&out), "Hello from the umcp demo server.\n");
    let out = stdout(&demo(&["resources"], 0));
    assert!(
        out.contains("demo://blob/bytes  Eight bytes, 0 to 7."),
        "{out}"
    );
    let out = stdout(&demo(&["prompts"], 0));
    assert!(out.lines().any(|l| l.starts_with("greet  ")), "{out}");
    let out = demo(
        &["prompt", "greet", r#"{"name": "Ada", "style": "pirate"}"#],
        0,
    );
    assert_eq!(
        stdout(&out),
        "# A greeting for Ada\nSay hello to Ada in a pirate way.\n"
    );
}

#[test]
fn config_file_with_several_servers() {
    let demo = demo::demo_binary();
    let config = serde_json::json!({
        "mcpServers": {
            "one": { "command": demo, "args": ["--server"], "env": { "WHO": "first" } },
            "two": { "command": demo, "args": ["--server"], "env": { "WHO": "second" } },
            "off": { "command": "/nonexistent/umcp-server", "disabled": true },
        }
    });
    let path = std::env::temp_dir().join(format!("umcp-cli-test-{}.json", std::process::id()));
    std::fs::write(&path, config.to_string()).unwrap();
    let file = path.to_string_lossy().into_owned();

    let out = cli(&["--config", &file, "tools"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let listed = stdout(&out);
    assert!(
        listed.contains("one__echo  ") && listed.contains("two__echo  "),
        "{listed}"
    );
    let out = cli(&["--config", &file, "call", "two__env", r#"{"name": "WHO"}"#]);
    assert_eq!(stdout(&out), "second\n");
    let out = cli(&[
        "--config",
        &file,
        "--server",
        "one",
        "call",
        "env",
        r#"{"name": "WHO"}"#,
    ]);
    assert_eq!(stdout(&out), "first\n");
    let out = cli(&["--config", &file, "read", "demo://text/readme"]);
    assert_eq!(out.status.code(), Some(2), "read needs one server");
    let _ = std::fs::remove_file(path);
}

#[test]
fn usage_errors_exit_2() {
    for args in [
        &[][..],
        &["tools"][..],
        &["--stdio", "x", "--url", "http://h/mcp", "tools"][..],
        &["--stdio", "'unterminated", "tools"][..],
        &[
            "--url",
            "http://h/mcp",
            "--transport",
            "carrier-pigeon",
            "tools",
        ][..],
        &["--stdio", "x", "frobnicate"][..],
        &["--stdio", "x", "call", "echo", "{not json"][..],
        &["--stdio", "x", "call", "echo", "[1, 2]"][..],
        &["--stdio", "x", "--bogus", "tools"][..],
    ] {
        let out = cli(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
        assert!(
            stderr(&out).contains("usage: umcp"),
            "{args:?}: {}",
            stderr(&out)
        );
    }
}

#[test]
fn connection_failures_exit_3() {
    let out = cli(&["--stdio", "/nonexistent/umcp-server --flag", "tools"]);
    assert_eq!(out.status.code(), Some(3));
    assert!(
        stderr(&out).contains("failed to start `/nonexistent/umcp-server`"),
        "{}",
        stderr(&out)
    );
    let out = cli(&["--stdio", "sleep 1000", "--timeout", "0.5", "tools"]);
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    assert!(stderr(&out).contains("timeout"), "{}", stderr(&out));
}

#[test]
fn tool_errors_exit_4_and_other_errors_1() {
    let out = demo(&["call", "fail", r#"{"message": "boom"}"#], 4);
    assert_eq!(stdout(&out), "boom\n");
    let out = demo(&["call", "no_such_tool"], 1);
    assert!(
        stderr(&out).contains("unknown tool `no_such_tool`"),
        "{}",
        stderr(&out)
    );
    demo(&["read", "demo://nothing/here"], 1);
}

#[cfg(feature = "http")]
#[path = "common/http_server.rs"]
mod http_server;

#[cfg(feature = "oauth")]
#[path = "common/auth_server.rs"]
mod auth_server;

/// The browser flow end to end: the cli prints the authorization URL, the test plays the
/// browser (the fixture redirects at once to the cli's loopback listener), and the tokens
/// saved in `--token-store` serve the next runs, including a `--config` entry of that name.
#[cfg(feature = "oauth")]
#[test]
fn oauth_browser_flow_then_the_token_store() {
    use std::io::{BufRead, BufReader};
    use std::sync::mpsc;
    use std::time::Duration;

    const BOUND: Duration = Duration::from_secs(60);
    let fixture = auth_server::AuthServer::start(auth_server::Setup::default());
    let dir = std::env::temp_dir().join(format!("umcp-cli-oauth-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let store = dir.join("tokens.json").to_string_lossy().into_owned();
    let url = fixture.mcp_url();
    let args = ["--url", &url, "--oauth", "--token-store", &store];

    let mut child = umcp_in(&empty_home())
        .args(args)
        .args(["call", "echo"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run umcp");
    let (lines_tx, lines) = mpsc::channel();
    let child_stderr = child.stderr.take().unwrap();
    std::thread::spawn(move || {
        for line in BufReader::new(child_stderr).lines().map_while(Result::ok) {
            let _ = lines_tx.send(line);
        }
    });
    let page = loop {
        let line = lines
            .recv_timeout(BOUND)
            .expect("the cli asks for authorization");
        if let Some(page) = line.strip_prefix("Open this page to authorize: ") {
            break page.to_owned();
        }
    };
    // The "browser" opens the page and follows the redirect to the cli's listener.
    let landed = ureq::get(&page)
        .call()
        .expect("the browser lands on the callback")
        .into_body()
        .read_to_string()
        .unwrap();
    assert!(landed.contains("Authorization complete"), "{landed}");
    let (done_tx, done) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = done_tx.send(child.wait_with_output());
    });
    let out = done.recv_timeout(BOUND).expect("the cli finishes").unwrap();
    let rest: Vec<String> = lines.try_iter().collect();
    assert_eq!(out.status.code(), Some(0), "stderr: {rest:#?}");
    assert_eq!(stdout(&out), "ok\n");
    assert_eq!(fixture.count("GET", "/authorize"), 1);

    // The saved tokens: no browser this time.
    let again = cli(&[&args[..], &["call", "echo"]].concat());
    assert_eq!(again.status.code(), Some(0), "{}", stderr(&again));
    assert_eq!(stdout(&again), "ok\n");
    assert!(
        !stderr(&again).contains("Open this page"),
        "{}",
        stderr(&again)
    );
    let config = serde_json::json!({ "mcpServers": { "server": { "url": url, "auth": "oauth" } } });
    let file = dir.join("mcp.json");
    std::fs::write(&file, config.to_string()).unwrap();
    let file = file.to_string_lossy().into_owned();
    let listed = cli(&["--config", &file, "--token-store", &store, "tools"]);
    assert_eq!(listed.status.code(), Some(0), "{}", stderr(&listed));
    assert!(stdout(&listed).starts_with("echo  "), "{}", stdout(&listed));
    assert_eq!(fixture.count("GET", "/authorize"), 1);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Without `--oauth` the protected server cannot be used: exit 3 with the server's hints.
/// The OAuth options belong to `--url` servers.
#[cfg(feature = "oauth")]
#[test]
fn oauth_refusals_exit_3_and_misplaced_options_exit_2() {
    let fixture = auth_server::AuthServer::start(auth_server::Setup::default());
    let out = cli(&["--url", &fixture.mcp_url(), "tools"]);
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("needs authorization: HTTP 401"),
        "{}",
        stderr(&out)
    );
    for args in [
        &["--stdio", "x", "--oauth", "tools"][..],
        &["--config", "x.json", "--oauth-client-id", "a", "tools"][..],
    ] {
        let out = cli(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
        assert!(stderr(&out).contains("--url servers"), "{}", stderr(&out));
    }
}

/// Runs `line` under `script`, which gives it a pseudo-terminal for stdin, stdout and stderr
/// (all three then arrive on stdout), feeding it `input`.
fn on_a_terminal(args: &[&str], input: &str) -> String {
    use std::io::Write;
    let quoted: Vec<String> = std::iter::once("umcp")
        .chain(args.iter().copied())
        .map(|a| format!("'{}'", a.replace('\'', r"'\''")))
        .collect();
    let mut child = Command::new("script")
        .args(["-q", "-e", "-c", &quoted.join(" "), "/dev/null"])
        .envs(
            umcp_in(&empty_home())
                .get_envs()
                .filter_map(|(k, v)| Some((k, v?))),
        )
        .current_dir(empty_home())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run script(1) from util-linux, which the terminal tests need");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{}", stdout(&out));
    stdout(&out)
}

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
        "completions",
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
    assert!(out.contains("transport: stdio"), "{out}");
    assert!(out.contains("\"completions\":{}"), "{out}");
    assert!(out.contains("instructions: A demo server"), "{out}");
    let info: Value = serde_json::from_str(&stdout(&demo(&["--json", "info"], 0))).unwrap();
    assert_eq!(info[0]["serverInfo"]["name"], "umcp-demo");
    assert!(info[0]["capabilities"]["tools"].is_object());

    let out = stdout(&demo(&["ping"], 0));
    assert!(
        out.starts_with("server  ok  ") && out.ends_with(" ms\n"),
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
    demo(&["--env", "NOEQUALS", "tools"], 2);
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
    let entry = |who: &str| serde_json::json!({ "command": demo, "args": ["--server"], "env": { "WHO": who } });
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
    let vscode = serde_json::json!({ "servers": { "s": entry("vscode") } });
    std::fs::write(project.join(".vscode/mcp.json"), vscode.to_string()).unwrap();
    assert_eq!(home(&project).0, "vscode\n");
    let claude_code = serde_json::json!({ "mcpServers": { "s": entry("project") } });
    std::fs::write(project.join(".mcp.json"), claude_code.to_string()).unwrap();
    assert_eq!(home(&project).0, "project\n");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn questions_are_declined_without_a_terminal_and_asked_on_one() {
    let out = demo(&["call", "ask_user", r#"{"question": "Ready?"}"#], 0);
    assert_eq!(stdout(&out), "declined\n");
    assert!(
        stderr(&out).contains("the server asks: Ready?"),
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
    assert!(screen.contains("The server asks: Ready?"), "{screen}");
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

/// The README's command-line examples, run as written (the demo server's path aside).
#[test]
fn readme_examples_work_as_written() {
    let readme =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md")).unwrap();
    let demo_path = demo::demo_binary().to_string_lossy().into_owned();
    let lines: Vec<&str> = readme
        .lines()
        .filter(|l| l.starts_with("umcp --stdio 'target/debug/examples/demo --server'"))
        .collect();
    assert!(lines.len() >= 3, "{lines:?}");
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

/// `--header` reaches every request to a `--url` server.
#[cfg(feature = "http")]
#[test]
fn headers_for_http_servers() {
    let server = http_server::serve(|seen, reply| {
        let id = seen.rpc_id();
        match (seen.method.as_str(), seen.rpc_method().as_deref()) {
            ("POST", Some("initialize")) => reply.json(
                200,
                &[],
                &serde_json::json!({"jsonrpc": "2.0", "id": id, "result": {
                    "protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
                    "serverInfo": {"name": "headers", "version": "1"}}})
                .to_string(),
            ),
            ("POST", Some("tools/list")) => reply.json(
                200,
                &[],
                &serde_json::json!({"jsonrpc": "2.0", "id": id, "result": {"tools": [
                    {"name": "hello", "inputSchema": {"type": "object"}}]}})
                .to_string(),
            ),
            ("POST", _) => reply.status(202, &[]),
            ("DELETE", _) => reply.status(200, &[]),
            _ => reply.status(405, &[]),
        }
    });
    let out = cli(&[
        "--url",
        &server.url("/mcp"),
        "--transport",
        "streamable-http",
        "--header",
        "X-Api-Key: s3cret",
        "tools",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stdout(&out), "hello  \n");
    let mut posts = 0;
    while let Some(seen) = server.next_within(std::time::Duration::from_millis(500)) {
        if seen.method == "POST" {
            posts += 1;
            assert_eq!(seen.header("x-api-key"), Some("s3cret"), "{seen:?}");
        }
    }
    assert!(posts >= 2, "{posts}");
}

/// `examples/cli.rs`, the short version: a server from one command line, its tools, a call.
#[test]
fn the_short_example_lists_and_calls() {
    let example =
        demo::demo_binary().with_file_name(format!("cli{}", std::env::consts::EXE_SUFFIX));
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let mut build = Command::new(cargo);
    build.args(["build", "--quiet", "--example", "cli"]);
    if example.to_string_lossy().contains("release") {
        build.arg("--release");
    }
    let status = build
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .status()
        .expect("run cargo build --example cli");
    assert!(status.success(), "cargo build --example cli failed");
    let run = |args: &[&str]| Command::new(&example).args(args).output().unwrap();
    let stdio = demo_stdio();
    let out = run(&[&stdio]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stdout(&out).lines().any(|l| l.starts_with("add  ")),
        "{}",
        stdout(&out)
    );
    let out = run(&[&stdio, "add", r#"{"a": 2, "b": 3}"#]);
    assert_eq!(stdout(&out), "5\n", "{}", stderr(&out));
    let out = run(&[&stdio, "fail", r#"{"message": "no"}"#]);
    assert!(!out.status.success());
}
