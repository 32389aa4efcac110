//! The one definition of the command line: options, commands and their help, from which the
//! parser, `--help` and the shell completions are all derived.

use umcp::types::LoggingLevel;

/// An option of the command line.
pub struct Flag {
    /// The long name, without the dashes.
    pub long: &'static str,
    /// The value's placeholder, or `None` for a switch.
    pub value: Option<&'static str>,
    /// The values the option accepts, when it is a fixed list (offered by the completions).
    pub choices: &'static [&'static str],
    /// What the value is, for the completions: a file, a command, or free text.
    pub completes: Completes,
    /// One line of help.
    pub help: &'static str,
}

/// What a shell should offer for an option's value or a command's argument.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Completes {
    /// Nothing in particular.
    Text,
    /// A file name.
    File,
    /// A command on the `PATH`.
    Command,
    /// A running session's name, which umcp gives.
    Session,
    /// A server of the configuration file in use, which umcp gives.
    Server,
}

/// A command (the first word that is not an option).
pub struct Cmd {
    /// The command's name.
    pub name: &'static str,
    /// Its arguments, as shown in the usage line.
    pub args: &'static str,
    /// How many arguments it takes: at least, at most.
    pub arity: (usize, usize),
    /// One line of help.
    pub help: &'static str,
    /// More help, shown by `umcp COMMAND --help`.
    pub details: &'static str,
    /// Whether it needs exactly one server (with a configuration file, `--server NAME`).
    pub one_server: bool,
}

const fn flag(long: &'static str, value: Option<&'static str>, help: &'static str) -> Flag {
    Flag {
        long,
        value,
        choices: &[],
        completes: Completes::Text,
        help,
    }
}

/// `--log`'s choices: the wire names of the levels, least severe first.
const LOG_LEVELS: [&str; 8] = {
    let mut names = [""; 8];
    let mut i = 0;
    while i < names.len() {
        names[i] = LoggingLevel::ALL[i].as_str();
        i += 1;
    }
    names
};

/// Every option, in the order `--help` lists them.
pub const FLAGS: &[Flag] = &[
    Flag {
        completes: Completes::Command,
        ..flag(
            "stdio",
            Some("'CMD ARGS…'"),
            "run a stdio server (one shell-quoted command line; no shell is run)",
        )
    },
    flag(
        "env",
        Some("KEY=VALUE|NAME"),
        "set a variable for the --stdio server, or pass umcp's own NAME (repeatable)",
    ),
    flag("url", Some("URL"), "connect to an HTTP server"),
    Flag {
        choices: &["auto", "streamable-http", "sse"],
        ..flag(
            "transport",
            Some("KIND"),
            "the --url transport (default auto)",
        )
    },
    flag(
        "header",
        Some("'Name: value'"),
        "send a header to the --url server (repeatable; ${VAR} from the environment)",
    ),
    flag(
        "proxy",
        Some("URL|none"),
        "the --url server's proxy (http://, https://, socks5://, socks5h://), or none; default: https_proxy, http_proxy, all_proxy, no_proxy",
    ),
    Flag {
        completes: Completes::File,
        ..flag(
            "cacert",
            Some("FILE"),
            "also trust the CA certificates of this PEM file for the --url server (repeatable)",
        )
    },
    flag(
        "system-trust",
        None,
        "trust the operating system's certificate store for the --url server, not the bundled roots",
    ),
    Flag {
        completes: Completes::File,
        ..flag(
            "cert",
            Some("FILE"),
            "show this client certificate chain (PEM) to the --url server; needs --key",
        )
    },
    Flag {
        completes: Completes::File,
        ..flag("key", Some("FILE"), "the private key (PEM) of --cert")
    },
    Flag {
        completes: Completes::File,
        ..flag(
            "unix-socket",
            Some("PATH"),
            "reach the --url server through this Unix domain socket",
        )
    },
    Flag {
        completes: Completes::File,
        ..flag(
            "config",
            Some("FILE"),
            "the servers of an mcpServers/servers JSON file (default: see FILES)",
        )
    },
    Flag {
        completes: Completes::Server,
        ..flag(
            "server",
            Some("NAME"),
            "use only this server of the configuration file",
        )
    },
    flag(
        "json",
        None,
        "print JSON for scripts (text output shows a server's control characters escaped)",
    ),
    flag(
        "raw",
        None,
        "print the text content alone, nothing added, for pipes (call, read, prompt)",
    ),
    flag(
        "structured",
        None,
        "print a tool result's structured content alone, as JSON",
    ),
    flag(
        "max-chars",
        Some("N"),
        "print at most N characters; the whole output goes to a file whose path is printed",
    ),
    Flag {
        completes: Completes::File,
        ..flag(
            "save",
            Some("DIR"),
            "write images, audio and binary contents into DIR and print their paths",
        )
    },
    flag(
        "meta",
        Some("KEY=VALUE"),
        "add KEY to the request's _meta: VALUE as JSON, or as text (repeatable)",
    ),
    Flag {
        completes: Completes::File,
        ..flag(
            "root",
            Some("DIR"),
            "offer the directory DIR to the servers as a root (repeatable)",
        )
    },
    flag(
        "task",
        None,
        "call: start the tool as a task and print its id at once (see tasks wait)",
    ),
    flag(
        "no-check",
        None,
        "call: send the arguments without checking them against the tool's input schema",
    ),
    flag(
        "timeout",
        Some("SECS"),
        "bounds start-up, then the command's requests together (default 30)",
    ),
    Flag {
        choices: &["auto", "legacy", "modern"],
        ..flag(
            "protocol",
            Some("MODE"),
            "auto (probe the server; the default), legacy (the handshake era), modern (the \
             stateless era) or a stateless-era version (2026-07-28)",
        )
    },
    Flag {
        choices: &LOG_LEVELS,
        ..flag(
            "log",
            Some("LEVEL"),
            "show the servers' log messages from LEVEL up on stderr",
        )
    },
    flag(
        "verbose",
        None,
        "-v: show umcp's own log on stderr (connecting, protocol eras, retries); -vv: every \
         message too, secrets included",
    ),
    flag("oauth", None, "authorize the --url server with OAuth"),
    flag(
        "oauth-client-id",
        Some("ID"),
        "a pre-registered OAuth client id",
    ),
    flag(
        "oauth-client-secret",
        Some("SECRET"),
        "its secret: ${VAR} from the environment (a literal is visible to local users)",
    ),
    Flag {
        completes: Completes::File,
        ..flag(
            "oauth-client-secret-file",
            Some("FILE"),
            "read the secret from FILE (default: $UMCP_OAUTH_CLIENT_SECRET, see ENVIRONMENT)",
        )
    },
    flag("oauth-scopes", Some("'SCOPE…'"), "the scopes to ask for"),
    Flag {
        completes: Completes::File,
        ..flag(
            "token-store",
            Some("FILE"),
            "keep OAuth tokens in FILE (default: the system keychain where it works, else a file)",
        )
    },
    flag(
        "profile",
        Some("NAME"),
        "the sign-in to use, of several to one --url server (implies --oauth)",
    ),
    Flag {
        choices: &["auto", "device", "browser", "paste"],
        ..flag(
            "flow",
            Some("FLOW"),
            "how to sign in: a device code, a browser here, or a pasted address (default auto)",
        )
    },
    Flag {
        completes: Completes::File,
        ..flag(
            "out",
            Some("FILE"),
            "record: the file the session is written to; lock: the lockfile (default mcp.lock)",
        )
    },
    flag(
        "listen",
        Some("ADDR"),
        "bridge: serve hosts over Streamable HTTP at ADDR (127.0.0.1:PORT), not stdio",
    ),
    Flag {
        completes: Completes::File,
        ..flag(
            "token-file",
            Some("FILE"),
            "bridge --listen: write the generated bearer token to FILE (owner-only)",
        )
    },
    flag(
        "allow-origin",
        Some("ORIGIN"),
        "bridge --listen: accept requests from this web origin too (repeatable)",
    ),
    flag(
        "allow-remote",
        None,
        "bridge --listen: allow an address other than loopback",
    ),
    flag(
        "check",
        None,
        "lock: compare the servers' tools with the lockfile, writing nothing",
    ),
    flag(
        "frozen",
        None,
        "pin the servers' tools to mcp.lock: one changed or not locked is refused (see lock)",
    ),
    flag("tools", None, "watch: tool list changes"),
    flag("prompts", None, "watch: prompt list changes"),
    flag("resources", None, "watch: resource list changes"),
    flag(
        "resource",
        Some("URI"),
        "watch: updates of this resource (repeatable)",
    ),
    flag(
        "for",
        Some("SECS"),
        "watch: stop after this many seconds (default: until interrupted)",
    ),
    flag("list", None, "trust: list the trusted files"),
    Flag {
        completes: Completes::File,
        ..flag("revoke", Some("FILE"), "trust: no longer trust FILE")
    },
    Flag {
        completes: Completes::Session,
        ..flag(
            "session",
            Some("NAME"),
            "run the command through a session's servers (see umcp session)",
        )
    },
    flag(
        "idle",
        Some("SECS"),
        "session start: end the session after this long without a command (default 3600)",
    ),
    flag(
        "help",
        None,
        "show help (also after a command: umcp call --help)",
    ),
    flag("version", None, "show the version"),
];

/// Every command, in the order `--help` lists them.
/// The most arguments `call` and `prompt` take (pairs, or one JSON object).
const MAX_PAIRS: usize = 1 + 256;

pub const COMMANDS: &[Cmd] = &[
    Cmd {
        name: "tools",
        args: "",
        arity: (0, 0),
        help: "list the tools",
        details: "With several servers, tools are named SERVER__TOOL.",
        one_server: false,
    },
    Cmd {
        name: "describe",
        args: "TOOL",
        arity: (1, 1),
        help: "show a tool's parameters (types, defaults, descriptions) and annotations",
        details: "Prints the tool's signature and description, then each parameter with its \
                  type, whether it is required or its default, and its description, the \
                  tool's annotations (read-only, destructive, idempotent, open world), the \
                  shape of its structured output and whether it runs as a task. umcp call \
                  TOOL --help prints the same. With --json: the tool as the server lists it, \
                  with its server and signature.",
        one_server: false,
    },
    Cmd {
        name: "grep",
        args: "PATTERN...",
        arity: (1, 16),
        help: "find the tools, resources, templates and prompts whose names or descriptions match",
        details: "Searches every server's tools, resources, resource templates and prompts: \
                  each word of PATTERN must appear, in any case, in the name, title, URI or \
                  description of one. One line per match (its kind, the name to use it by, \
                  the first line of its description), a JSON array with --json. Exit code \
                  1 when nothing matches, as grep's.",
        one_server: false,
    },
    Cmd {
        name: "call",
        args: "TOOL [JSON | KEY=VALUE... | KEY:=JSON...]",
        arity: (1, MAX_PAIRS),
        help: "call a tool with a JSON object of arguments, or with pairs",
        details: "KEY=VALUE is text, or the number, boolean, array or object the tool's input \
                  schema asks for there (a=2 is 2 where the tool wants a number); KEY:=JSON \
                  is always JSON. Progress is shown on stderr when it is a terminal. When the \
                  server asks the user for input, the form is asked on the terminal, naming \
                  the server, or declined when stdin or stderr is not one; the time taken to \
                  answer does not count against --timeout, with this command as with any \
                  other. The tool listing and the call share one --timeout. Exit code 4 when \
                  the tool reports an error.",
        one_server: false,
    },
    Cmd {
        name: "resources",
        args: "",
        arity: (0, 0),
        help: "list the resources",
        details: "",
        one_server: false,
    },
    Cmd {
        name: "templates",
        args: "",
        arity: (0, 0),
        help: "list the resource templates (URIs with {placeholders}, for read)",
        details: "",
        one_server: false,
    },
    Cmd {
        name: "read",
        args: "URI",
        arity: (1, 1),
        help: "read a resource",
        details: "",
        one_server: true,
    },
    Cmd {
        name: "prompts",
        args: "",
        arity: (0, 0),
        help: "list the prompts",
        details: "",
        one_server: false,
    },
    Cmd {
        name: "prompt",
        args: "NAME [JSON | KEY=VALUE...]",
        arity: (1, MAX_PAIRS),
        help: "get a prompt with a JSON object of string arguments, or with pairs",
        details: "",
        one_server: false,
    },
    Cmd {
        name: "complete",
        args: "prompt|resource NAME|URI ARGUMENT [VALUE]",
        arity: (3, 4),
        help: "complete an argument of a prompt or resource template",
        details: "Prints the values the server suggests for ARGUMENT, given what was typed so \
                  far (VALUE, default empty).",
        one_server: true,
    },
    Cmd {
        name: "info",
        args: "",
        arity: (0, 0),
        help: "show each server's identity, protocol, capabilities and instructions",
        details: "",
        one_server: false,
    },
    Cmd {
        name: "ping",
        args: "",
        arity: (0, 0),
        help: "check that each server answers, and how fast",
        details: "Every server gets a row, one that did not connect too (failed, and why). \
                  The exit code is 3 when a server did not connect or its connection was lost, 1 when \
                  one did not answer.",
        one_server: false,
    },
    Cmd {
        name: "watch",
        args: "",
        arity: (0, 0),
        help: "print the servers' notifications as they arrive",
        details: "Follows the lists and resources named by --tools, --prompts, --resources and \
                  --resource URI (without any: every list), in either protocol era: one line \
                  per notification, or one JSON object per line with --json. Runs until \
                  interrupted (Ctrl-C ends the program) or for --for SECS. When the server \
                  ends a subscription, a last line says so; a lost connection is exit \
                  code 3. Ctrl-C ends it without such a line (exit code 130). With several servers each line starts with the server's name \
                  (a \"server\" member with --json).",
        one_server: false,
    },
    Cmd {
        name: "trust",
        args: "[FILE]",
        arity: (0, 1),
        help: "let umcp use a project's configuration file (also --list, --revoke FILE)",
        details: "A configuration file found in the working directory (./.mcp.json, \
                  ./.vscode/mcp.json) came with the checkout, and its servers are commands run \
                  as you: umcp uses it only once you trust it. umcp trust [FILE] (default: the \
                  file umcp would find here) shows what the file runs and records its absolute \
                  path and the SHA-256 of its content in your state directory (see \
                  ENVIRONMENT), owner-only; once the file changes it must be trusted again. \
                  Without trust, a run whose stdin and stderr are a terminal shows what would \
                  start, secrets redacted, and asks (y trusts the file as umcp trust does; the \
                  default is no); any other run starts nothing and exits with code 5. A file \
                  named with --config, and your own files under your home directory, need no \
                  trust. --list shows the trusted files and whether each is unchanged, changed \
                  or missing; --revoke FILE no longer trusts FILE.",
        one_server: false,
    },
    Cmd {
        name: "lock",
        args: "[--check] [--out FILE]",
        arity: (0, 0),
        help: "pin the servers' tools in mcp.lock, or check them against it (--check)",
        details: "Connects the servers and writes, for each, its identity and every tool it \
                  offers (after the configuration's allowedTools and excludedTools) with the \
                  SHA-256 of the tool's canonical definition, and the definition itself, into \
                  mcp.lock beside the configuration file (in the working directory for \
                  --stdio and --url) or --out FILE: the same servers give the same bytes. A \
                  server that does not connect keeps its entry, and the exit code is 3. \
                  --check writes nothing: it prints what drifted (servers and tools added, \
                  removed or changed, with each changed field's old and new value; --json for \
                  a report) and exits with code 6 when anything did. --frozen, on any other \
                  command, or \"frozen\": true in the configuration file, pins the servers to \
                  the lock: a tool that changed since, or that the lock does not have, is \
                  neither listed nor called (exit code 6), and what drifted is said on stderr.",
        one_server: false,
    },
    Cmd {
        name: "record",
        args: "--out FILE",
        arity: (0, 0),
        help: "serve the server given on stdin/stdout, recording the session into FILE",
        details: "Runs as a stdio MCP server that relays every message to the server given \
                  (--stdio, --url or --server), and writes each one, with its timing, as a \
                  JSON line into --out FILE, secrets redacted (tokens, credential headers, \
                  the values of ${VAR}s). Wrap a host's server command with it to record \
                  what the host does: umcp record --out s.jsonl --stdio 'npx -y server'. \
                  umcp replay plays the file back.",
        one_server: true,
    },
    Cmd {
        name: "replay",
        args: "FILE",
        arity: (1, 1),
        help: "serve a recorded session on stdin/stdout, with no server",
        details: "Runs as a stdio MCP server that answers from a recording made by umcp \
                  record (or the library's RecordingTransport): requests are matched by \
                  method and params, ids and progress tokens rewritten; a request the \
                  recording lacks is answered with an error naming the closest recorded one.",
        one_server: false,
    },
    Cmd {
        name: "bridge",
        args: "",
        arity: (0, 0),
        help: "serve the servers given to a host as one MCP server, on stdin/stdout",
        details: "Put it in a host's configuration in place of a server's command: umcp bridge \
                  --url https://mcp.example.com/mcp. The host is answered in the protocol \
                  era it speaks (2024-11-05 to 2025-11-25, or 2026-07-28), whatever the \
                  server speaks; tools, resources, prompts, completions, progress, \
                  cancellation, logs and list changes pass both ways, and the server's \
                  questions (elicitation, sampling, roots) go to the host when it declared \
                  it takes them. OAuth runs here (--oauth, or a config entry's settings); no \
                  token reaches the host. With --config, every server at once, tools and \
                  prompts named SERVER__NAME. Each request has --timeout of the server's \
                  time, restarted by progress. With --listen ADDR it serves Streamable HTTP \
                  instead, on loopback unless --allow-remote, each request needing \
                  Authorization: Bearer TOKEN, the token from $UMCP_BRIDGE_TOKEN or \
                  generated into --token-file FILE (default: said on stderr); a request from \
                  a web origin other than loopback's or --allow-origin's is refused. Ends \
                  when stdin ends or on a signal, closing the servers' sessions.",
        one_server: false,
    },
    Cmd {
        name: "tasks",
        args: "list|get ID|cancel ID|result ID|wait ID",
        arity: (1, 2),
        help: "list the servers' tasks, or show, cancel or wait for one",
        details: "A task is a request the server runs in the background (a tool call the \
                  server made a task). list shows each task's id and status; get shows one \
                  task; cancel asks the server to stop it; result waits, within --timeout, \
                  for the result of its request (tasks/result) and prints it as call does \
                  (exit code 4 when the tool reported an error); wait polls the task \
                  (tasks/get) until it ends, within --timeout, then prints its result the \
                  same way, and cancels the task if it gives up. call --task TOOL starts a \
                  task and prints its id at once; a stdio server, and its tasks, end with \
                  the umcp that started it, so run it in a session to come back for them. \
                  get, cancel, result and wait need one server.",
        one_server: false,
    },
    Cmd {
        name: "skills",
        args: "list|get URI|load URI|file URI PATH|ls URI [PATH]",
        arity: (1, 3),
        help: "list the servers' skills, describe one, or load it verified",
        details: "For servers that offer the Skills extension. list shows each skill's \
                  server, name, URI, description and files, reading none of them; get shows \
                  one skill's entry (skills/get); load reads its SKILL.md and checks size, \
                  digest and frontmatter against the entry; file loads the skill, then reads \
                  the listed PATH (inside the skill, or a URI) and checks it. What passes is \
                  printed; a mismatch fails with exit code 1. A file the entry does not list \
                  is not read. ls lists a directory of the skill (PATH inside it, default its \
                  root) as the server serves it now (resources/directory/read, when the \
                  server offers directoryRead) beside what the entry lists, marking a child \
                  that is in one and not the other; nothing of the skill is read. get, load, \
                  file and ls need one server.",
        one_server: false,
    },
    Cmd {
        name: "shell",
        args: "",
        arity: (0, 0),
        help: "connect once and read commands: tools, call, read, prompt, watch, info...",
        details: "Each line is a command as umcp takes it (call add a=2 b=3, --json tools), \
                  run over the one connection; help lists them, exit or Ctrl-D leaves. On a \
                  terminal, lines are edited with history (kept in the state directory) and \
                  Tab completes commands, tool, prompt and resource names and a tool's \
                  argument names; Ctrl-C stops the running command, not the shell. Without \
                  a terminal, lines are read from stdin and the exit code is the last \
                  command's. With --session NAME, each line runs through the session.",
        one_server: false,
    },
    Cmd {
        name: "session",
        args: "start NAME|list|stop NAME",
        arity: (1, 2),
        help: "keep servers connected in the background for --session NAME COMMAND",
        details: "start NAME, with the server options (--stdio, --url or --config), starts a \
                  background process that connects the servers and returns once they are up \
                  (or fails as a command would). umcp --session NAME COMMAND then runs any \
                  command through it (--server NAME for one of its servers), the commands of \
                  several callers at once (up to 16), its \
                  output, questions and Ctrl-C on the caller's terminal. The process ends with session stop NAME, after --idle \
                  SECS without a command (default 3600), or when its servers are gone. list \
                  shows the running sessions. Not available on Windows yet.",
        one_server: false,
    },
    Cmd {
        name: "servers",
        args: "list|show NAME|add NAME|remove NAME|import HOST|FILE",
        arity: (1, 2),
        help: "list, show, add, remove or import the servers of configuration files",
        details: "Nothing is started or connected. list, without --config, lists the servers \
                  of every configuration file found (see FILES): each row names its host \
                  (Claude Code, Codex, Cursor, VS Code, Gemini CLI, Windsurf, Goose, Zed, \
                  Claude Desktop), with --json its file too. The others work on --config \
                  FILE or the file found. add NAME takes --stdio \
                  'CMD ARGS' (with --env) or --url URL (with --header and --transport), and \
                  --protocol; --env NAME is written as a reference, ${NAME}, set or not. \
                  import HOST|FILE copies the servers of a host's file (its user file, else \
                  the project's) or of FILE into --config FILE, which it creates when \
                  missing, their variables as written; --server NAME copies one; a name the \
                  file has already is left as it is there. A file is edited in place: the \
                  other entries, their order, formatting and comments stay as they are, and \
                  a file umcp cannot read is left untouched; Codex's TOML and Goose's YAML \
                  are read, never written. show hides the values of variables and headers, \
                  and secrets in URLs and arguments.",
        one_server: false,
    },
    Cmd {
        name: "auth",
        args: "login URL|logout URL|status|list",
        arity: (1, 2),
        help: "sign in to a server ahead of time, see who is signed in where, sign out",
        details: "login URL signs in to the server at URL now (with --profile NAME, one of \
                  several sign-ins to it), so that umcp --url URL COMMAND later runs without a \
                  prompt. --flow picks how: device shows a page and a code to enter on any \
                  device, browser prints a page to open here, paste prints one to open anywhere \
                  and reads back the address the browser ends on; auto (the default) is browser \
                  with a display, else the device flow where the server offers it, else paste. \
                  The sign-in waits --timeout SECS if given, else 5 minutes; Ctrl-C ends it. \
                  logout URL revokes the tokens where the server offers it and forgets them. \
                  status says where tokens live and lists the sign-ins, list lists them (with \
                  --json as JSON): server, profile, authorization server, scopes and expiry, \
                  never a token. Tokens live in the system keychain (macOS Keychain, Windows \
                  Credential Manager, the Linux kernel keyring) where it works, else in a file \
                  only you can read; --token-store FILE picks a file.",
        one_server: false,
    },
    Cmd {
        name: "completions",
        args: "bash|zsh|fish",
        arity: (1, 1),
        help: "print a shell completion script",
        details: "bash: umcp completions bash > ~/.local/share/bash-completion/completions/umcp\n\
                  zsh:  umcp completions zsh > ~/.zfunc/_umcp (with ~/.zfunc in fpath)\n\
                  fish: umcp completions fish > ~/.config/fish/completions/umcp.fish",
        one_server: false,
    },
    Cmd {
        name: "doctor",
        args: "URL",
        arity: (0, 1),
        help: "check the way to an HTTP server step by step, each result with its fix",
        details: "Checks in order, stopping at the first failure: which proxy applies, DNS, TCP, \
                  the tunnel and TLS (the certificate chain, its issuer and expiry, the roots \
                  trusted), an HTTP answer, the MCP era probe, and the authorization metadata. \
                  Takes --header, --proxy, --cacert, --system-trust, --cert, --key and \
                  --unix-socket as a --url server does; each step has --timeout. The exit code \
                  is 0 when the server is usable, 3 when a step failed.",
        one_server: false,
    },
    Cmd {
        name: "man",
        args: "",
        arity: (0, 0),
        help: "print the manual page (roff)",
        details: "Generated from the same table as --help and the completions:\n\
                  umcp man > ~/.local/share/man/man1/umcp.1 (then: man umcp)\n\
                  umcp man | man -l -",
        one_server: false,
    },
    Cmd {
        name: "help",
        args: "[COMMAND]",
        arity: (0, 1),
        help: "show help",
        details: "",
        one_server: false,
    },
];

/// The subcommands of the commands that have them (`session start NAME`): each one's name
/// and how many words follow it.
pub const SUBCOMMANDS: &[(&str, &[(&str, usize)])] = &[
    (
        "tasks",
        &[
            ("list", 0),
            ("get", 1),
            ("cancel", 1),
            ("result", 1),
            ("wait", 1),
        ],
    ),
    (
        "skills",
        &[
            ("list", 0),
            ("get", 1),
            ("load", 1),
            ("file", 2),
            ("ls", 1),
            ("ls", 2),
        ],
    ),
    ("session", &[("start", 1), ("list", 0), ("stop", 1)]),
    (
        "auth",
        &[("login", 1), ("logout", 1), ("status", 0), ("list", 0)],
    ),
    (
        "servers",
        &[
            ("list", 0),
            ("show", 1),
            ("add", 1),
            ("remove", 1),
            ("import", 1),
        ],
    ),
];

/// The subcommands of the command `name`, none for most.
pub fn subcommands(name: &str) -> &'static [(&'static str, usize)] {
    SUBCOMMANDS
        .iter()
        .find(|(command, _)| *command == name)
        .map_or(&[], |(_, subcommands)| subcommands)
}

/// When the usual places are searched for servers.
pub const FILES_WHEN: &str =
    "when no --stdio, --url or --config is given, the first that holds servers";

/// Where the servers come from when none is given, in order, one place a line.
pub const FILES: &str =
    "  ./.mcp.json                      (Claude Code, per project: once trusted, see trust)
  ./.vscode/mcp.json               (VS Code, per workspace: once trusted)
  ./.cursor/mcp.json               (Cursor, per project: once trusted)
  ./.gemini/settings.json          (Gemini CLI, per project: once trusted)
  ./.zed/settings.json             (Zed, per project: once trusted)
  Claude Desktop                   (~/Library/Application Support/Claude/claude_desktop_config.json,
                                    %APPDATA%\\Claude\\claude_desktop_config.json,
                                    ~/.config/Claude/claude_desktop_config.json)
  ~/.cursor/mcp.json               (Cursor)
  VS Code user mcp.json            (~/Library/Application Support/Code/User/mcp.json,
                                    %APPDATA%\\Code\\User\\mcp.json, ~/.config/Code/User/mcp.json)
  ~/.claude.json                   (Claude Code: your servers, and this directory's own)
  ~/.codex/config.toml             (Codex; $CODEX_HOME/config.toml when set)
  ~/.codeium/windsurf/mcp_config.json  (Windsurf)
  ~/.gemini/settings.json          (Gemini CLI)
  ~/.config/goose/config.yaml      (Goose)
  ~/.config/zed/settings.json      (Zed)
  A file that lists no server is passed over.";

/// The environment variables umcp reads for itself, each with what it is for (`${VAR}` in a
/// configuration file, `--url`, `--header` and `--oauth-client-secret` reads any).
pub const ENVIRONMENT: &[(&str, &str)] = &[
    (
        "UMCP_OAUTH_CLIENT_SECRET",
        "the secret of --oauth-client-id, when neither --oauth-client-secret nor \
         --oauth-client-secret-file gives one",
    ),
    (
        "UMCP_BRIDGE_TOKEN",
        "the bearer token bridge --listen requires of hosts, instead of one it generates",
    ),
    (
        "UMCP_STATE_DIR",
        "the directory of umcp's record of the files you trust and of the shell's history \
         (default: $XDG_STATE_HOME/umcp, else ~/.local/state/umcp; %LOCALAPPDATA%\\umcp on \
         Windows; a relative path in any of these is ignored)",
    ),
];

/// The exit codes and what each means.
pub const EXIT_CODES: &[(u8, &str)] = &[
    (0, "ok"),
    (1, "other errors"),
    (2, "usage error (an unknown tool or prompt name too)"),
    (
        3,
        "connection or authorization failure (a server lost during a request too)",
    ),
    (4, "the tool reported an error"),
    (
        5,
        "the configuration file found in the working directory is not trusted (see trust)",
    ),
    (
        6,
        "the servers' tools drifted from the lockfile: lock --check found a change, or a \
         call was refused for one (--frozen)",
    ),
    (
        124,
        "timed out: the command's requests took longer than --timeout",
    ),
    (
        130,
        "interrupted (Ctrl-C; 143 for SIGTERM, 129 for SIGHUP), once the servers are stopped",
    ),
];

/// Command lines that show the common uses, each with what it does.
pub const EXAMPLES: &[(&str, &str)] = &[
    (
        "umcp --stdio 'npx -y @modelcontextprotocol/server-everything' tools",
        "list the tools of a stdio server",
    ),
    (
        "umcp --stdio 'uvx mcp-server-time' call get_current_time '{\"timezone\": \"UTC\"}'",
        "call a tool with its arguments",
    ),
    (
        "umcp --url http://localhost:3000/mcp --header 'Authorization: Bearer x' info",
        "show an HTTP server's identity, protocol and capabilities",
    ),
    (
        "umcp --config ~/.cursor/mcp.json --json tools",
        "the tools of every server of a configuration file, as JSON",
    ),
    (
        "umcp session start time --stdio 'uvx mcp-server-time'",
        "keep a server running in the background, as session time",
    ),
    (
        "umcp --session time call get_current_time timezone=UTC",
        "call a tool of the running session",
    ),
    (
        "umcp --config .mcp.json servers add files --stdio 'npx -y @modelcontextprotocol/server-filesystem .'",
        "add a server to a configuration file",
    ),
    (
        "umcp --config .mcp.json lock --check",
        "check the servers' tools against the mcp.lock beside the file (exit code 6 on drift)",
    ),
];

/// What `umcp` is, after its name.
pub const ABOUT: &str = "a command-line Model Context Protocol client";

/// Said of the commands that need exactly one server.
pub const ONE_SERVER: &str = "Needs one server: with a configuration file, add --server NAME.";

/// The command of this name.
pub fn command(name: &str) -> Option<&'static Cmd> {
    COMMANDS.iter().find(|c| c.name == name)
}

/// The option of this long name.
pub fn flag_named(long: &str) -> Option<&'static Flag> {
    FLAGS.iter().find(|f| f.long == long)
}
