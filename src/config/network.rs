//! The network settings of an HTTP server entry: its proxy, what its TLS trusts and shows, and a
//! Unix domain socket.
//!
//! ```json
//! { "type": "http", "url": "https://mcp.internal.corp/mcp",
//!   "proxy": "http://proxy.corp:3128",
//!   "tls": { "trustRoots": "system", "caFile": "/etc/corp/root-ca.pem",
//!            "clientCert": "/etc/mcp/client.pem", "clientKey": "/etc/mcp/client.key" } }
//! ```
//!
//! - `proxy`: a proxy URL for this server ([`Proxy::url`]), `"none"` to connect directly, or
//!   `"env"` (the default) for the environment's `https_proxy`, `http_proxy`, `all_proxy` and
//!   `no_proxy`.
//! - `tls.trustRoots`: `"bundled"` or `"system"` ([`TrustRoots`]); without it `SSL_CERT_FILE`
//!   and `SSL_CERT_DIR` decide, else the bundled roots.
//! - `tls.caFile`: a PEM file of extra authorities, or an array of them.
//! - `tls.clientCert` and `tls.clientKey`: a client certificate chain and its key, both PEM
//!   files, given together.
//! - `unixSocket`: connect to this Unix domain socket instead of the URL's host.
//!
//! Strings get `${VAR}` expansion like the rest of the entry; relative paths are taken from the
//! working directory, as `envFile`'s are.

use serde_json::Value;

use super::entry::{kind, Entry};
use super::ServerConfigError;
use crate::redact::clip;
use crate::{ClientIdentity, HttpConfig, Proxy, TrustRoots};

/// `config` with the entry's `proxy`, `tls` and `unixSocket` applied.
pub(super) fn apply(
    entry: &Entry<'_>,
    mut config: HttpConfig,
) -> Result<HttpConfig, ServerConfigError> {
    match entry.string("proxy")?.as_deref().map(str::trim) {
        None | Some("env") => {}
        Some("none") => config = config.proxy(Proxy::none()),
        Some("") => return Err(entry.error("proxy", "is empty")),
        Some(url) => config = config.proxy(Proxy::url(url)),
    }
    if let Some(path) = entry.string("unixSocket")? {
        config = config.unix_socket(path);
    }
    match entry.object_at("tls") {
        None | Some(Value::Null) => Ok(config),
        Some(Value::Object(object)) => tls(&entry.nested(object, &["tls"]), config),
        Some(other) => Err(entry.error("tls", format!("must be an object, not {}", kind(other)))),
    }
}

/// Reads the `tls` object.
fn tls(tls: &Entry<'_>, mut config: HttpConfig) -> Result<HttpConfig, ServerConfigError> {
    match tls.string("trustRoots")?.as_deref() {
        None => {}
        Some("bundled") => config = config.trust_roots(TrustRoots::Bundled),
        Some("system") => config = config.trust_roots(TrustRoots::System),
        Some(other) => {
            return Err(tls.error(
                "trustRoots",
                format!(
                    "unknown value `{}` (expected `bundled` or `system`)",
                    clip(other)
                ),
            ))
        }
    }
    let files = match tls.get("caFile") {
        Some(Value::Array(_)) => tls.list("caFile")?,
        _ => tls.string("caFile")?.into_iter().collect(),
    };
    for file in files {
        config = config.add_ca_file(file);
    }
    match (tls.string("clientCert")?, tls.string("clientKey")?) {
        (Some(cert), Some(key)) => {
            config = config.client_identity(ClientIdentity::from_pem_files(cert, key));
        }
        (None, None) => {}
        (Some(_), None) => return Err(tls.error("clientKey", "is missing (clientCert needs it)")),
        (None, Some(_)) => return Err(tls.error("clientCert", "is missing (clientKey needs it)")),
    }
    Ok(config)
}

#[cfg(test)]
mod tests {
    use crate::{ConfigFile, ServerTransport, TrustRoots};

    /// The HTTP server of a file holding only `entry`, or the error the entry got.
    fn http(entry: &str) -> Result<crate::HttpConfig, String> {
        let text = format!(r#"{{ "mcpServers": {{ "s": {entry} }} }}"#);
        let lookup = |name: &str| (name == "CORP").then(|| "/etc/corp".to_owned());
        let file = ConfigFile::parse_with(&text, &lookup).map_err(|e| e.to_string())?;
        if let Some(error) = file.errors.first() {
            return Err(error.to_string());
        }
        match &file.servers[0].transport {
            ServerTransport::Http(config, _) => Ok(config.clone()),
            other => panic!("an HTTP server: {other:?}"),
        }
    }

    #[test]
    fn proxy_tls_and_socket_are_read() {
        let config = http(
            r#"{ "url": "https://h/mcp", "proxy": "socks5h://p:1080", "unixSocket": "/run/s.sock",
                 "tls": { "trustRoots": "system", "caFile": ["${CORP}/a.pem", "b.pem"],
                          "clientCert": "c.pem", "clientKey": "k.pem" } }"#,
        )
        .expect("parses");
        assert_eq!(
            config
                .get_proxy()
                .for_url("https://h/mcp")
                .unwrap()
                .as_deref(),
            Some("socks5h://p:1080")
        );
        assert_eq!(config.get_trust_roots(), Some(TrustRoots::System));
        assert_eq!(config.get_extra_cas().len(), 2);
        assert!(format!("{:?}", config.get_extra_cas()).contains("/etc/corp/a.pem"));
        assert!(config.get_client_identity().is_some());
        assert_eq!(
            config.get_unix_socket(),
            Some(std::path::Path::new("/run/s.sock"))
        );
        let direct =
            http(r#"{ "url": "https://h/mcp", "proxy": "none", "tls": { "caFile": "x.pem" } }"#)
                .expect("parses");
        assert_eq!(direct.get_proxy().for_url("https://h/mcp").unwrap(), None);
        assert_eq!(direct.get_extra_cas().len(), 1);
        assert!(http(r#"{ "url": "https://h/mcp" }"#)
            .expect("parses")
            .get_proxy()
            .is_from_env());
    }

    #[test]
    fn bad_values_name_their_key() {
        for (entry, key) in [
            (
                r#"{ "url": "https://h/", "tls": { "trustRoots": "os" } }"#,
                "tls.trustRoots",
            ),
            (
                r#"{ "url": "https://h/", "tls": { "clientCert": "c.pem" } }"#,
                "tls.clientKey",
            ),
            (
                r#"{ "url": "https://h/", "tls": { "clientKey": "k.pem" } }"#,
                "tls.clientCert",
            ),
            (r#"{ "url": "https://h/", "tls": "yes" }"#, "tls"),
            (r#"{ "url": "https://h/", "proxy": " " }"#, "proxy"),
            (
                r#"{ "url": "https://h/", "tls": { "caFile": 3 } }"#,
                "tls.caFile",
            ),
        ] {
            let error = http(entry).expect_err(entry);
            assert!(error.contains(key), "{entry}: {error}");
        }
    }
}
