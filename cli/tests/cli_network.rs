//! Tests for the `umcp` binary through a company network: `--cacert`, `--cert`/`--key`,
//! `--proxy` and the proxy variables, and `umcp doctor`, against mitmproxy (intercepting and
//! buffering), a trustme CA and the Python SDK server over TLS, in both eras.

use std::process::Output;
use std::time::{Duration, Instant};

use umcp_test_support::installed::{cli, empty_home, stderr, stdout, umcp_in};
use umcp_test_support::peers::network::{certs, python_https, Mitm, MitmMode};
use umcp_test_support::peers::{self, python_http};

fn path(p: std::path::PathBuf) -> String {
    p.to_string_lossy().into_owned()
}

fn code(out: &Output) -> Option<i32> {
    out.status.code()
}

/// `tools` and `call` work behind the intercepting proxy once its CA is given with `--cacert`,
/// in both eras; without it the error names the unknown issuer and `--cacert`.
#[test]
fn cacert_lets_tools_and_call_through_an_intercepting_proxy() {
    if peers::skip_interop() {
        return;
    }
    let certs = certs();
    let server = python_https("server.pem", "server.key", false);
    let mitm = Mitm::start(MitmMode::Streaming, &certs.file("ca.pem"));
    let url = format!("https://127.0.0.1:{}/mcp", server.port());
    let proxy = mitm.url();

    let refused = cli(&["--url", &url, "--proxy", &proxy, "tools"]);
    assert_eq!(code(&refused), Some(3), "{}", stderr(&refused));
    let said = stderr(&refused);
    assert!(
        said.contains("issued by `mitmproxy`") && said.contains("--cacert"),
        "{said}"
    );

    let ca = path(mitm.ca());
    for era in ["legacy", "modern"] {
        let base = [
            "--url",
            &url,
            "--proxy",
            &proxy,
            "--cacert",
            &ca,
            "--protocol",
            era,
        ];
        let tools = cli(&[&base[..], &["tools"]].concat());
        assert_eq!(code(&tools), Some(0), "{era}: {}", stderr(&tools));
        assert!(
            stdout(&tools).contains("add(a: integer, b: integer)"),
            "{}",
            stdout(&tools)
        );
        let call = cli(&[&base[..], &["call", "add", "a:=2", "b:=3"]].concat());
        assert_eq!(code(&call), Some(0), "{era}: {}", stderr(&call));
        assert_eq!(stdout(&call).trim(), "5");
    }
    assert!(
        mitm.seen(&format!("POST {url}"), 4) >= 4,
        "{}",
        mitm.output()
    );
}

/// A server that requires a client certificate refuses without one, saying what to give, and
/// works with `--cert` and `--key`; either alone is a usage error.
#[test]
fn cert_and_key_answer_a_server_that_requires_them() {
    if peers::skip_interop() {
        return;
    }
    let certs = certs();
    let server = python_https("server.pem", "server.key", true);
    let url = format!("https://127.0.0.1:{}/mcp", server.port());
    let ca = path(certs.file("ca.pem"));
    let without = cli(&["--url", &url, "--cacert", &ca, "tools"]);
    assert_eq!(code(&without), Some(3), "{}", stderr(&without));
    assert!(
        stderr(&without).contains("--cert FILE --key FILE"),
        "{}",
        stderr(&without)
    );
    let (cert, key) = (
        path(certs.file("client.pem")),
        path(certs.file("client.key")),
    );
    let with = cli(&[
        "--url", &url, "--cacert", &ca, "--cert", &cert, "--key", &key, "tools",
    ]);
    assert_eq!(code(&with), Some(0), "{}", stderr(&with));
    assert!(
        stdout(&with).contains("add(a: integer, b: integer)"),
        "{}",
        stdout(&with)
    );
    let half = cli(&["--url", &url, "--cert", &cert, "tools"]);
    assert_eq!(code(&half), Some(2), "{}", stderr(&half));
    assert!(
        stderr(&half).contains("--cert needs --key"),
        "{}",
        stderr(&half)
    );
    let stray = cli(&["--stdio", "x", "--cacert", &ca, "tools"]);
    assert_eq!(code(&stray), Some(2), "{}", stderr(&stray));
}

/// `HTTP_PROXY` sends the requests through the proxy, `NO_PROXY` naming the host bypasses it;
/// through a buffering proxy `tools` ends within its `--timeout`, and a call whose streamed
/// answer the proxy holds fails on time, naming the proxy.
#[test]
fn proxy_variables_and_a_buffering_proxy() {
    if peers::skip_interop() {
        return;
    }
    let python = python_http(&["streamable-http"]);
    let url = python.url("/mcp");
    let mitm = Mitm::start(MitmMode::Streaming, &certs().file("ca.pem"));
    let run = |vars: &[(&str, &str)], args: &[&str]| {
        let mut command = umcp_in(&empty_home());
        for (name, value) in vars {
            command.env(name, value);
        }
        command.args(args).output().expect("run umcp")
    };
    let needle = format!("POST {url}");
    let through = run(&[("HTTP_PROXY", &mitm.url())], &["--url", &url, "tools"]);
    assert_eq!(code(&through), Some(0), "{}", stderr(&through));
    let seen = mitm.seen(&needle, 1);
    assert!(seen >= 1, "{}", mitm.output());
    // The run that must not go through the proxy asks for a URL of its own, so a late line of the
    // first run in the proxy's log is not taken for one of its own.
    let direct_url = format!("{url}?direct");
    let direct = run(
        &[("HTTP_PROXY", &mitm.url()), ("NO_PROXY", "127.0.0.1")],
        &["--url", &direct_url, "tools"],
    );
    assert_eq!(code(&direct), Some(0), "{}", stderr(&direct));
    let direct_needle = format!("POST {direct_url}");
    assert_eq!(mitm.seen(&direct_needle, 1), 0, "{}", mitm.output());

    let buffering = Mitm::start(MitmMode::Buffering, &certs().file("ca.pem"));
    for era in ["legacy", "modern"] {
        let started = Instant::now();
        let out = cli(&[
            "--url",
            &url,
            "--proxy",
            &buffering.url(),
            "--protocol",
            era,
            "--timeout",
            "5",
            "tools",
        ]);
        let took = started.elapsed();
        assert!(
            took < Duration::from_secs(5) + Duration::from_millis(1500),
            "{era}: {took:?}; {}",
            stderr(&out)
        );
    }
    let started = Instant::now();
    let held = cli(&[
        "--url",
        &url,
        "--proxy",
        &buffering.url(),
        "--protocol",
        "legacy",
        "--timeout",
        "3",
        "call",
        "long_task",
        "steps:=300",
    ]);
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(code(&held), Some(124), "{}", stderr(&held));
    let said = stderr(&held);
    assert!(said.contains("timeout"), "{said}");
    assert!(
        said.contains(&format!("through proxy {}", buffering.url())),
        "{said}"
    );
}

/// `umcp doctor` passes every step on a healthy server, and names the failing one behind an
/// intercepting proxy whose CA is not trusted, without a client certificate, and with the
/// proxy down; its exit code says whether the server is usable.
#[test]
fn doctor_names_the_failing_step() {
    if peers::skip_interop() {
        return;
    }
    let certs = certs();
    let ca = path(certs.file("ca.pem"));
    let server = python_https("server.pem", "server.key", false);
    let url = format!("https://127.0.0.1:{}/mcp", server.port());

    let healthy = cli(&["doctor", &url, "--cacert", &ca]);
    assert_eq!(code(&healthy), Some(0), "{}", stdout(&healthy));
    let report = stdout(&healthy);
    for line in [
        "ok   proxy",
        "ok   dns",
        "ok   tcp",
        "ok   tls",
        "ok   http",
        "ok   mcp",
        "ok   auth",
    ] {
        assert!(report.contains(line), "{line}: {report}");
    }
    assert!(report.contains("issued by `umcp test CA`"), "{report}");
    assert!(report.contains("the server is usable"), "{report}");

    let mitm = Mitm::start(MitmMode::Streaming, &certs.file("ca.pem"));
    let intercepted = cli(&["doctor", &url, "--proxy", &mitm.url(), "--cacert", &ca]);
    assert_eq!(code(&intercepted), Some(3), "{}", stdout(&intercepted));
    let report = stdout(&intercepted);
    assert!(
        report.contains("FAIL tls") && report.contains("mitmproxy"),
        "{report}"
    );
    assert!(
        report.contains("fix:") && report.contains("--cacert"),
        "{report}"
    );

    let mtls = python_https("server.pem", "server.key", true);
    let mtls_url = format!("https://127.0.0.1:{}/mcp", mtls.port());
    let report = stdout(&cli(&["doctor", &mtls_url, "--cacert", &ca]));
    assert!(
        report.contains("FAIL tls") && report.contains("client certificate"),
        "{report}"
    );

    let down = cli(&["doctor", &url, "--proxy", "http://127.0.0.1:1"]);
    assert_eq!(code(&down), Some(3));
    assert!(stdout(&down).contains("FAIL tcp"), "{}", stdout(&down));

    let json = cli(&["doctor", &url, "--cacert", &ca, "--json"]);
    let value: serde_json::Value = serde_json::from_str(&stdout(&json)).expect("JSON");
    assert_eq!(value["usable"], true, "{value}");
    assert_eq!(value["steps"][3]["step"], "tls", "{value}");
}
