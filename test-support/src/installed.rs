//! Running the `umcp` binary in tests: installed with `cargo install --path cli` and run from
//! the `PATH` as a user would, in an empty home.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::OnceLock;

/// The directory `cargo install` put `umcp` in, installed once per test run. `--debug` and the
/// shared target directory reuse what `cargo test` built, so this takes a moment rather than a
/// release build.
pub fn install_dir() -> PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let target = crate::demo::demo_binary()
            .ancestors()
            .nth(3)
            .expect("the target directory")
            .to_path_buf();
        let install = target.join("cli-install");
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
        let status = Command::new(cargo)
            .args([
                "install", "--quiet", "--force", "--locked", "--debug", "--path", "cli",
            ])
            .arg("--root")
            .arg(&install)
            .arg("--target-dir")
            .arg(&target)
            .current_dir(crate::workspace_root())
            .status()
            .expect("run cargo install");
        assert!(status.success(), "cargo install --path cli failed");
        install.join("bin")
    })
    .clone()
}

/// An empty directory, used as the working directory and home of every run, so that no
/// configuration file of the machine is found by accident.
pub fn empty_home() -> PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = std::env::temp_dir().join(format!("umcp-cli-home-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    })
    .clone()
}

/// `umcp` found on the `PATH`, in `dir`, with `dir` as its home (its state, the trusted
/// files, under `dir` too), and none of the variables umcp reads for itself.
pub fn umcp_in(dir: &Path) -> Command {
    let path = std::env::var_os("PATH").unwrap_or_default();
    let mut dirs = vec![install_dir()];
    dirs.extend(std::env::split_paths(&path));
    let mut command = Command::new("umcp");
    command
        .env("PATH", std::env::join_paths(dirs).unwrap())
        .env("HOME", dir)
        .env("XDG_CONFIG_HOME", dir.join(".config"))
        .env("XDG_STATE_HOME", dir.join(".local/state"))
        .env_remove("UMCP_STATE_DIR")
        .env_remove("UMCP_OAUTH_CLIENT_SECRET")
        .env_remove("APPDATA")
        .current_dir(dir)
        .stdin(Stdio::null());
    command
}

/// `--stdio '<demo> --server'`, quoted so that a path with spaces survives the split: the demo
/// server as a user runs it.
pub fn demo_stdio() -> String {
    format!("'{}' --server", crate::demo::demo_binary().display())
}

/// `--stdio '<demo> --server --fixtures'`: the demo server with the tools only tests need.
pub fn fixtures_stdio() -> String {
    format!("{} --fixtures", demo_stdio())
}

pub fn cli(args: &[&str]) -> Output {
    umcp_in(&empty_home())
        .args(args)
        .output()
        .expect("run umcp")
}

pub fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

pub fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// Runs umcp against the demo server and checks the exit code.
pub fn demo(args: &[&str], code: i32) -> Output {
    let stdio = fixtures_stdio();
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

/// Runs `line` under `script`, which gives it a pseudo-terminal for stdin, stdout and stderr
/// (all three then arrive on stdout), feeding it `input`.
pub fn on_a_terminal(args: &[&str], input: &str) -> String {
    let out = terminal_session(args, "", input, std::time::Duration::ZERO);
    assert!(out.status.success(), "{}", stdout(&out));
    stdout(&out)
}

/// Runs umcp with `args` under `script` (a pseudo-terminal for stdin, stdout and stderr, all
/// three arriving on stdout), `redirect` added to its shell command line (`2>FILE` takes
/// stderr off the terminal); types `input` after `delay`, as a user would, and returns how
/// `script` ended, with umcp's exit status.
pub fn terminal_session(
    args: &[&str],
    redirect: &str,
    input: &str,
    delay: std::time::Duration,
) -> Output {
    terminal_session_in(&empty_home(), &[], args, redirect, input, delay)
}

/// [`terminal_session`] with `dir` as umcp's working directory and home, and `envs` added to
/// its environment.
pub fn terminal_session_in(
    dir: &Path,
    envs: &[(&str, &str)],
    args: &[&str],
    redirect: &str,
    input: &str,
    delay: std::time::Duration,
) -> Output {
    use std::io::Write;
    let quoted: Vec<String> = std::iter::once("umcp")
        .chain(args.iter().copied())
        .map(|a| format!("'{}'", a.replace('\'', r"'\''")))
        .collect();
    // `exec`: umcp is the terminal's session leader, alone in its foreground process group,
    // as under an interactive shell. A shell left waiting as its parent would take the Ctrl-C
    // as well: dash, which runs `-c` for script(1) where $SHELL is unset or /bin/sh, kills
    // itself with that SIGINT once umcp has exited, and script reports exit status 130.
    let line = format!("exec {} {redirect}", quoted.join(" "));
    let mut script = Command::new("script");
    // umcp's environment, the variables it must not see removed too.
    for (name, value) in umcp_in(dir).get_envs() {
        match value {
            Some(value) => script.env(name, value),
            None => script.env_remove(name),
        };
    }
    let mut child = script
        .env("SHELL", "/bin/sh")
        .envs(envs.iter().copied())
        .args(["-q", "-e", "-c", &line, "/dev/null"])
        .current_dir(dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run script(1) from util-linux, which the terminal tests need");
    let mut stdin = child.stdin.take().unwrap();
    std::thread::sleep(delay);
    stdin.write_all(input.as_bytes()).unwrap();
    hold_until_exit(&mut child, stdin);
    child.wait_with_output().unwrap()
}

/// Keeps `script`'s input open until it has ended (30 seconds at most): once its input ends,
/// script(1) hangs the terminal up, which would race the command's own end (a SIGHUP while
/// it closes its servers).
pub fn hold_until_exit(script: &mut std::process::Child, stdin: std::process::ChildStdin) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while matches!(script.try_wait(), Ok(None)) && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    drop(stdin);
}
