//! Tests for reading server configuration files: every common format, and every way an entry
//! can be wrong.

use std::path::Path;

use umcp::{ConfigFile, EnvPolicy, HttpTransportKind, ServerConfig, ServerTransport};

mod formats;
mod oauth;
mod robustness;
mod settings;
mod tool_filters;

/// A fixed environment, so the tests do not depend on the machine's.
fn vars(name: &str) -> Option<String> {
    let value = match name {
        "HOME" => "/home/ada",
        "GITHUB_TOKEN" => "ghp_test",
        "TZ_NAME" => "Europe/Paris",
        "API_TOKEN" => "tok-123",
        "PROJECT_ROOT" => "/src/project",
        "API_KEY" => "key-456",
        _ => return None,
    };
    Some(value.to_owned())
}

fn server<'a>(file: &'a ConfigFile, name: &str) -> &'a ServerConfig {
    file.servers
        .iter()
        .find(|s| s.name == name)
        .unwrap_or_else(|| panic!("no server `{name}` in {:?}", file.errors))
}

/// The fields of a stdio server.
struct Stdio<'a> {
    command: &'a str,
    args: &'a [String],
    env: &'a [(String, String)],
    cwd: Option<&'a Path>,
    policy: EnvPolicy,
}

fn stdio(config: &ServerConfig) -> Stdio<'_> {
    match &config.transport {
        ServerTransport::Stdio(stdio) => Stdio {
            command: stdio.get_command(),
            args: stdio.get_args(),
            env: stdio.get_envs(),
            cwd: stdio.get_cwd(),
            policy: stdio.get_env_policy(),
        },
        other => panic!("`{}` is not stdio: {other:?}", config.name),
    }
}

/// (url, headers, kind) of an HTTP server.
fn http(config: &ServerConfig) -> (&str, &[(String, String)], HttpTransportKind) {
    match &config.transport {
        ServerTransport::Http(http, _) => {
            (http.get_url(), http.get_headers(), http.get_transport())
        }
        other => panic!("`{}` is not HTTP: {other:?}", config.name),
    }
}

fn pair(k: &str, v: &str) -> (String, String) {
    (k.to_owned(), v.to_owned())
}
