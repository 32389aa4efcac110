//! The network options of a `--url` server: `--proxy`, `--cacert`, `--system-trust`, `--cert`,
//! `--key` and `--unix-socket`, and the hint a timeout gets when a proxy was on the way.

use serde_json::{json, Map, Value};
use std::sync::Mutex;

use umcp::{
    ClientIdentity, ConfigFile, HttpConfig, Proxy, ServerConfig, ServerTransport, TrustRoots,
};

/// The network options as given.
#[derive(Debug, Default)]
pub struct Flags {
    proxy: Option<String>,
    cacerts: Vec<String>,
    system_trust: bool,
    cert: Option<String>,
    key: Option<String>,
    unix_socket: Option<String>,
}

/// The options' names.
pub const OPTIONS: [&str; 6] = [
    "proxy",
    "cacert",
    "system-trust",
    "cert",
    "key",
    "unix-socket",
];

impl Flags {
    /// Whether `name` is one of these options.
    pub fn takes(name: &str) -> bool {
        OPTIONS.contains(&name)
    }

    /// Stores the value of option `name`.
    pub fn set(&mut self, name: &str, value: String) {
        match name {
            "proxy" => self.proxy = Some(value),
            "cacert" => self.cacerts.push(value),
            "system-trust" => self.system_trust = true,
            "cert" => self.cert = Some(value),
            "key" => self.key = Some(value),
            _ => self.unix_socket = Some(value),
        }
    }

    /// The first option given, for the error when there is no `--url` server to take it.
    pub fn first_given(&self) -> Option<&'static str> {
        [
            (self.proxy.is_some(), "--proxy"),
            (!self.cacerts.is_empty(), "--cacert"),
            (self.system_trust, "--system-trust"),
            (self.cert.is_some(), "--cert"),
            (self.key.is_some(), "--key"),
            (self.unix_socket.is_some(), "--unix-socket"),
        ]
        .into_iter()
        .find_map(|(given, name)| given.then_some(name))
    }

    /// `config` with the options applied; `${VAR}` in a value comes from the environment (a
    /// proxy password need not be on the command line). The error is a usage message.
    pub fn apply(&self, mut config: HttpConfig) -> Result<HttpConfig, String> {
        let expand =
            |what: &str, text: &str| ConfigFile::expand(text).map_err(|e| format!("{what}: {e}"));
        match self.proxy.as_deref() {
            None => {}
            Some("none") => config = config.proxy(Proxy::none()),
            Some(url) => {
                let proxy = Proxy::url(expand("--proxy", url)?);
                // A malformed URL is told now, naming the option, rather than at connect.
                proxy
                    .for_url(config.get_url())
                    .map_err(|e| format!("--proxy: {e}"))?;
                config = config.proxy(proxy);
            }
        }
        if self.system_trust {
            config = config.trust_roots(TrustRoots::System);
        }
        for file in &self.cacerts {
            config = config.add_ca_file(expand("--cacert", file)?);
        }
        match (&self.cert, &self.key) {
            (Some(cert), Some(key)) => {
                let identity =
                    ClientIdentity::from_pem_files(expand("--cert", cert)?, expand("--key", key)?);
                config = config.client_identity(identity);
            }
            (None, None) => {}
            (Some(_), None) => return Err("--cert needs --key (its private key)".into()),
            (None, Some(_)) => return Err("--key needs --cert (its certificate chain)".into()),
        }
        if let Some(path) = &self.unix_socket {
            config = config.unix_socket(expand("--unix-socket", path)?);
        }
        Ok(config)
    }
}

impl Flags {
    /// The keys of a configuration file's entry that say what the options say (`proxy`, `tls`,
    /// `unixSocket`), for `servers add`.
    pub fn entry_keys(&self) -> Vec<(String, Value)> {
        let mut keys = Vec::new();
        if let Some(proxy) = &self.proxy {
            keys.push(("proxy".to_owned(), json!(proxy)));
        }
        let mut tls = Map::new();
        if self.system_trust {
            tls.insert("trustRoots".into(), json!("system"));
        }
        match self.cacerts.as_slice() {
            [] => {}
            [one] => {
                tls.insert("caFile".into(), json!(one));
            }
            many => {
                tls.insert("caFile".into(), json!(many));
            }
        }
        if let (Some(cert), Some(key)) = (&self.cert, &self.key) {
            tls.insert("clientCert".into(), json!(cert));
            tls.insert("clientKey".into(), json!(key));
        }
        if !tls.is_empty() {
            keys.push(("tls".to_owned(), Value::Object(tls)));
        }
        if let Some(path) = &self.unix_socket {
            keys.push(("unixSocket".to_owned(), json!(path)));
        }
        keys
    }
}

/// The timeout hints of this run's servers (see [`timeout_hint`]), by server name.
static HINTS: Mutex<Vec<(String, String)>> = Mutex::new(Vec::new());

/// Keeps the timeout hints of `servers`, for [`hint_for`].
pub fn remember(servers: &[ServerConfig]) {
    let hints = servers.iter().filter_map(|server| match &server.transport {
        ServerTransport::Http(config, _) => Some((server.name.clone(), timeout_hint(config)?)),
        _ => None,
    });
    *HINTS.lock().unwrap_or_else(|e| e.into_inner()) = hints.collect();
}

/// The hint for a request to `server` (to every server of the run when `None`) that timed out.
pub fn hint_for(server: Option<&str>) -> Option<String> {
    let hints = HINTS.lock().unwrap_or_else(|e| e.into_inner());
    let found: Vec<&str> = hints
        .iter()
        .filter(|(name, _)| server.is_none_or(|s| s == name))
        .map(|(_, hint)| hint.as_str())
        .collect();
    (!found.is_empty()).then(|| found.join("\n"))
}

/// What a person should know of a request that timed out on its way to `config`'s server: the
/// proxy it went through, which may have held the answer back, and how to check the way.
pub fn timeout_hint(config: &HttpConfig) -> Option<String> {
    let proxy = config.get_proxy().for_url(config.get_url()).ok()??;
    Some(format!(
        "the requests went through proxy {proxy}: a proxy that buffers responses holds a \
         streamed answer back until it ends; `umcp doctor {}` checks the way",
        umcp::Redacted::url(config.get_url())
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn flags(pairs: &[(&str, &str)]) -> Flags {
        let mut flags = Flags::default();
        for (name, value) in pairs {
            flags.set(name, (*value).to_owned());
        }
        flags
    }

    #[test]
    fn options_reach_the_config() {
        let given = flags(&[
            ("proxy", "socks5h://127.0.0.1:1080"),
            ("cacert", "/a.pem"),
            ("cacert", "/b.pem"),
            ("system-trust", ""),
            ("cert", "/c.pem"),
            ("key", "/k.pem"),
            ("unix-socket", "/run/s.sock"),
        ]);
        let config = given
            .apply(HttpConfig::new("https://h.test/mcp"))
            .expect("applies");
        assert_eq!(
            config
                .get_proxy()
                .for_url("https://h.test/mcp")
                .unwrap()
                .as_deref(),
            Some("socks5h://127.0.0.1:1080")
        );
        assert_eq!(config.get_extra_cas().len(), 2);
        assert_eq!(config.get_trust_roots(), Some(TrustRoots::System));
        assert!(config.get_client_identity().is_some());
        assert!(config.get_unix_socket().is_some());
        assert_eq!(given.first_given(), Some("--proxy"));
        assert_eq!(Flags::default().first_given(), None);
    }

    #[test]
    fn halves_and_bad_proxies_are_refused() {
        let cert_alone = flags(&[("cert", "/c.pem")]).apply(HttpConfig::new("https://h/"));
        assert!(cert_alone.unwrap_err().contains("--key"));
        let key_alone = flags(&[("key", "/k.pem")]).apply(HttpConfig::new("https://h/"));
        assert!(key_alone.unwrap_err().contains("--cert"));
        let bad = flags(&[("proxy", "ftp://u:pw@p")]).apply(HttpConfig::new("https://h/"));
        let bad = bad.unwrap_err();
        assert!(bad.starts_with("--proxy") && !bad.contains(":pw@"), "{bad}");
        let none = flags(&[("proxy", "none")])
            .apply(HttpConfig::new("https://h/"))
            .expect("applies");
        assert_eq!(none.get_proxy().for_url("https://h/").unwrap(), None);
    }
}
