//! `umcp doctor URL`: checks the way to an HTTP server step by step — the proxy that applies,
//! DNS, TCP, the tunnel and TLS (chain, issuer, expiry, roots), an HTTP answer, the MCP era
//! probe and the authorization metadata — and prints each result with its fix. The exit code
//! says whether the server is usable: 0 when every step passed, 3 otherwise.

use std::time::Duration;

use serde_json::json;
use umcp::auth::{HeadlessHandler, OAuth, OAuthConfig};
use umcp::{Client, ConfigFile, Error, HttpConfig, NetworkCheck, Options};

use crate::args::Args;
use crate::exit::{usage, Exit};
use crate::output::say;
use crate::shown;

/// One line of the report.
struct Step {
    name: &'static str,
    ok: bool,
    detail: String,
    fix: Option<String>,
}

impl From<NetworkCheck> for Step {
    fn from(check: NetworkCheck) -> Step {
        Step {
            name: check.step.as_str(),
            ok: check.ok,
            detail: check.detail,
            fix: check.fix,
        }
    }
}

/// Runs the checks against the URL in `rest` (or `--url`), with the `--url` options.
pub fn run(args: &Args, rest: &[&str]) -> Result<(), Exit> {
    let given = match (rest.first(), &args.url) {
        (Some(url), None) => *url,
        (None, Some(url)) => url.as_str(),
        _ => return Err(usage("doctor needs one URL: umcp doctor URL")),
    };
    let url = ConfigFile::expand(given).map_err(|e| usage(format!("doctor {given}: {e}")))?;
    let mut config = HttpConfig::new(&url);
    for (name, value) in &args.headers {
        let value =
            ConfigFile::expand(value).map_err(|e| usage(format!("--header {name}: {e}")))?;
        config = config.header(name, value);
    }
    let config = args.network.apply(config).map_err(usage)?;
    let steps = check(&config, args.timeout);
    let usable = steps.iter().all(|s| s.ok);
    if args.json {
        let report: Vec<_> = steps
            .iter()
            .map(|s| json!({"step": s.name, "ok": s.ok, "detail": s.detail, "fix": s.fix}))
            .collect();
        say(&crate::output::pretty(
            &json!({"usable": usable, "steps": report}),
        ));
    } else {
        for step in &steps {
            print(step);
        }
        say(if usable {
            "the server is usable"
        } else {
            "the server is not usable: see the step that failed"
        });
    }
    match usable {
        true => Ok(()),
        false => Err(Exit(3, String::new())),
    }
}

/// Every step, up to the first that fails.
fn check(config: &HttpConfig, timeout: Duration) -> Vec<Step> {
    let network = config.check_network(timeout);
    let reached = network.iter().all(|c| c.ok);
    let mut steps: Vec<Step> = network.into_iter().map(Step::from).collect();
    if !reached {
        return steps;
    }
    let options = Options::default()
        .with_startup_timeout(timeout)
        .with_request_timeout(timeout);
    match Client::connect_with_options(config.clone(), options) {
        Ok(client) => {
            let server = client.server_info();
            steps.push(Step {
                name: "mcp",
                ok: true,
                detail: format!(
                    "{} era, protocol {} over {}; server {} {}",
                    client.era().as_str(),
                    client.protocol_version(),
                    client.transport_kind(),
                    server.name,
                    server.version
                ),
                fix: None,
            });
            client.close();
            steps.push(Step {
                name: "auth",
                ok: true,
                detail: "no authorization asked for".into(),
                fix: None,
            });
        }
        Err(Error::Unauthorized(refused)) => {
            steps.push(Step {
                name: "mcp",
                ok: true,
                detail: format!("the server asks for authorization ({})", refused.status),
                fix: None,
            });
            steps.push(authorization(config, &refused));
        }
        Err(error) => {
            let fix = match &error {
                Error::Timeout { .. } => crate::network::timeout_hint(config),
                _ => None,
            };
            steps.push(Step {
                name: "mcp",
                ok: false,
                detail: error.to_string(),
                fix,
            });
        }
    }
    steps
}

/// The authorization metadata, found as an authorization would find it.
fn authorization(config: &HttpConfig, refused: &umcp::HttpError) -> Step {
    let oauth_config = OAuthConfig::new(HeadlessHandler::new()).same_network_as(config);
    let found = OAuth::new(config.get_url(), oauth_config).and_then(|o| o.discover(Some(refused)));
    match found {
        Ok(found) => {
            let endpoint = |e: &Option<String>| e.clone().unwrap_or_else(|| "none".into());
            Step {
                name: "auth",
                ok: true,
                detail: format!(
                    "issuer {}{}; authorization {}; token {}; registration {}",
                    found.issuer,
                    if found.published {
                        ""
                    } else {
                        " (no metadata: default endpoints)"
                    },
                    endpoint(&found.metadata.authorization_endpoint),
                    endpoint(&found.metadata.token_endpoint),
                    endpoint(&found.metadata.registration_endpoint),
                ),
                fix: None,
            }
        }
        Err(error) => Step {
            name: "auth",
            ok: false,
            detail: error.to_string(),
            fix: Some(
                "the server's authorization metadata cannot be used: its operators must fix it"
                    .into(),
            ),
        },
    }
}

/// Prints a step: `ok` or `FAIL`, its name, what it found, and the fix.
fn print(step: &Step) {
    let mark = if step.ok { "ok  " } else { "FAIL" };
    let mut lines = step.detail.lines();
    let first = shown::line(lines.next().unwrap_or_default());
    say(&format!("{mark} {:5} {first}", step.name));
    for line in lines {
        say(&format!("           {}", shown::line(line)));
    }
    if let Some(fix) = &step.fix {
        say(&format!("     fix:  {}", shown::line(fix)));
    }
}
