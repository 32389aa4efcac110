//! The name of a server given on the command line (`--stdio 'CMD ARGS'`): what it runs,
//! rather than the interpreter or launcher that runs it, so that `node build/index.js`,
//! `npx -y @modelcontextprotocol/server-everything` and `python -m weather` are named
//! `build`, `server-everything` and `weather`, not `node`, `npx` and `python`.

use std::path::Path;

/// Programs that run a script given after them.
const INTERPRETERS: [&str; 14] = [
    "node", "nodejs", "deno", "bun", "python", "python3", "py", "ruby", "perl", "php", "java",
    "sh", "bash", "pwsh",
];

/// Programs that fetch and run a package named after them.
const RUNNERS: [&str; 6] = ["npx", "bunx", "pnpx", "uvx", "pipx", "uv"];

/// Container runners, whose server is an image.
const CONTAINERS: [&str; 2] = ["docker", "podman"];

/// The options of these programs that take a value, which is not what they run (`-e NAME`
/// of docker, `-r MODULE` of node); `--from PACKAGE` of uvx and `--package` of npx name it.
const VALUED: [&str; 24] = [
    "-e",
    "--env",
    "-v",
    "--volume",
    "-p",
    "--publish",
    "--name",
    "--network",
    "--entrypoint",
    "-w",
    "--workdir",
    "--mount",
    "-u",
    "--user",
    "--env-file",
    "--platform",
    "-r",
    "--require",
    "-X",
    "-W",
    "--with",
    "--python",
    "-c",
    "--import",
];

/// Directory names that say nothing of what a script is (`dist/index.js`).
const PLAIN_DIRS: [&str; 7] = ["dist", "build", "src", "lib", "bin", "out", "."];

/// Script names that say nothing either: the directory above is the name.
const PLAIN_FILES: [&str; 5] = ["index", "main", "server", "cli", "__main__"];

/// The name of the server `command ARGS` runs, or `None` when it is the program itself.
pub fn launched(program: &str, args: &[String]) -> Option<String> {
    let program = program.to_ascii_lowercase();
    let program = program.as_str();
    let interpreter = INTERPRETERS.contains(&program) || program.starts_with("python3.");
    let name = if interpreter {
        script(program, args)
    } else if RUNNERS.contains(&program) {
        package(args)
    } else if CONTAINERS.contains(&program) {
        image(args)
    } else {
        None
    };
    name.filter(|n| !n.is_empty())
}

/// What an interpreter runs: `-m MODULE`, `-jar FILE`, or the first word that is not an
/// option (after deno's and bun's `run`).
fn script(program: &str, args: &[String]) -> Option<String> {
    let mut words = args.iter().map(String::as_str).peekable();
    while let Some(word) = words.next() {
        match word {
            "-m" => {
                return words
                    .next()
                    .map(|m| m.rsplit('.').next().unwrap_or(m).to_owned())
            }
            "-jar" => return words.next().map(file_name),
            "run" if matches!(program, "deno" | "bun") => continue,
            _ if VALUED.contains(&word) => {
                words.next();
            }
            _ if word.starts_with('-') => {}
            _ => return Some(file_name(word)),
        }
    }
    None
}

/// What a package runner runs: `--from PACKAGE` or `--package PACKAGE`, else the first word
/// that is not an option (after pipx's and uv's `run`, npm's `exec`), less its scope and
/// version.
fn package(args: &[String]) -> Option<String> {
    let mut words = args.iter().map(String::as_str);
    while let Some(word) = words.next() {
        match word {
            "--from" | "--package" | "-p" => return words.next().map(package_name),
            "run" | "exec" | "dlx" | "tool" => continue,
            _ if VALUED.contains(&word) => {
                words.next();
            }
            _ if word.starts_with('-') => {}
            // `uv run script.py`: a script, named as one.
            _ if word.ends_with(".py") => return Some(file_name(word)),
            _ => return Some(package_name(word)),
        }
    }
    None
}

/// What a container runner runs: the image after `run`, less its registry, path and tag.
fn image(args: &[String]) -> Option<String> {
    let mut words = args
        .iter()
        .map(String::as_str)
        .skip_while(|w| *w != "run")
        .skip(1);
    while let Some(word) = words.next() {
        match word {
            _ if VALUED.contains(&word) => {
                words.next();
            }
            _ if word.starts_with('-') => {}
            _ => {
                let last = word.rsplit('/').next().unwrap_or(word);
                let last = last.split('@').next().unwrap_or(last);
                return Some(last.split(':').next().unwrap_or(last).to_owned());
            }
        }
    }
    None
}

/// `@scope/name@1.2`, `name==1.0`, `name[extra]>=2` as `name`.
fn package_name(spec: &str) -> String {
    let unscoped = spec
        .strip_prefix('@')
        .map_or(spec, |s| s.split_once('/').map_or(s, |(_, n)| n));
    let end = unscoped
        .find(['@', '=', '<', '>', '~', '!', '[', ' '])
        .unwrap_or(unscoped.len());
    unscoped[..end].to_owned()
}

/// A script's name: its file name less its extension, or, for one that says nothing
/// (`index.js`), the first directory above it that does.
fn file_name(path: &str) -> String {
    let path = Path::new(path);
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    if !PLAIN_FILES.contains(&stem.as_str()) {
        return stem;
    }
    let dirs: Vec<String> = (path.ancestors().skip(1))
        .filter_map(|dir| dir.file_name())
        .map(|dir| dir.to_string_lossy().into_owned())
        .collect();
    // The nearest that says something, else the nearest at all.
    (dirs.iter().find(|dir| !PLAIN_DIRS.contains(&dir.as_str())))
        .or(dirs.first())
        .cloned()
        .unwrap_or(stem)
}

#[cfg(test)]
mod tests {
    use super::launched;

    fn name(line: &str) -> Option<String> {
        let mut words = line.split(' ').map(str::to_owned);
        let program = words.next().unwrap();
        launched(&program, &words.collect::<Vec<_>>())
    }

    #[test]
    fn servers_are_named_after_what_their_launcher_runs() {
        let cases = [
            ("node build/index.js", "build"),
            ("node /srv/weather/dist/index.js", "weather"),
            (
                "node server-everything/dist/index.js stdio",
                "server-everything",
            ),
            ("python weather.py --port 3", "weather"),
            (
                "python3 -u -m mcp_server_time --local-timezone=UTC",
                "mcp_server_time",
            ),
            ("python3.12 -m pkg.sub.tool", "tool"),
            ("deno run -A server.ts", "server"),
            (
                "npx -y @modelcontextprotocol/server-everything",
                "server-everything",
            ),
            ("npx -y @playwright/mcp@latest", "mcp"),
            ("uvx mcp-server-time", "mcp-server-time"),
            (
                "uvx --from mcp-server-fetch==1.0 mcp-server-fetch",
                "mcp-server-fetch",
            ),
            ("uv run --with httpx weather.py", "weather"),
            ("pipx run mcp-server-git", "mcp-server-git"),
            (
                "docker run -i --rm -e GITHUB_TOKEN ghcr.io/github/github-mcp-server:latest",
                "github-mcp-server",
            ),
            ("java -jar /opt/mcp/search-server.jar", "search-server"),
        ];
        for (line, expected) in cases {
            assert_eq!(name(line).as_deref(), Some(expected), "{line}");
        }
        assert_eq!(name("mcp-server-time --utc"), None);
        assert_eq!(name("node"), None);
        assert_eq!(name("npx -y"), None);
    }
}
