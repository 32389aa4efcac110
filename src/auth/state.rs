//! The provider's memory between requests: the current credentials, which of them a thread
//! last sent, and the choice of scopes.

use std::cell::Cell;
use std::sync::atomic::{AtomicU64, Ordering};

use super::config::OAuthConfig;
use super::discovery::Discovered;
use super::store::StoredCredentials;
use crate::error::WwwAuthenticate;

/// Numbers the providers of the process, for [`remember_sent`].
static NEXT_PROVIDER: AtomicU64 = AtomicU64::new(1);

thread_local! {
    /// `(provider, generation)` of the credentials this thread sent last. A request and the
    /// 401 or 403 that answers it are handled on one thread, so this tells whether another
    /// thread replaced the credentials in between (then the request is just repeated).
    static SENT: Cell<(u64, u64)> = const { Cell::new((0, 0)) };
}

/// A fresh provider number.
pub(crate) fn next_provider_id() -> u64 {
    NEXT_PROVIDER.fetch_add(1, Ordering::Relaxed)
}

/// Records that this thread is sending the credentials of `generation`.
pub(crate) fn remember_sent(provider: u64, generation: u64) {
    SENT.with(|sent| sent.set((provider, generation)));
}

/// The generation this thread sent last for `provider`, when it sent any.
pub(crate) fn sent_generation(provider: u64) -> Option<u64> {
    SENT.with(|sent| {
        let (id, generation) = sent.get();
        (id == provider).then_some(generation)
    })
}

/// What the provider holds between requests.
#[derive(Debug, Default)]
pub(crate) struct State {
    /// Whether the store was consulted.
    pub loaded: bool,
    /// The credentials in use.
    pub credentials: Option<StoredCredentials>,
    /// Incremented whenever the credentials change.
    pub generation: u64,
    /// Incremented when the identity may have changed (a logout, a new grant), not on a
    /// refresh: the client's cache drops private results then.
    pub context: u64,
    /// Whether the current access token came from a refresh that followed a 401 (when it is
    /// rejected in turn, a new authorization follows, not another refresh).
    pub refreshed: bool,
    /// The scopes asked for last, the base of a step-up.
    pub requested_scope: Option<String>,
    /// The generation whose refresh before expiry failed (not tried again).
    pub refresh_failed: Option<u64>,
}

impl State {
    /// The current access token, when there is one.
    pub fn access_token(&self) -> Option<&str> {
        self.credentials
            .as_ref()
            .and_then(|c| c.token.as_ref())
            .map(|t| t.access_token.as_str())
    }

    /// Installs new credentials.
    pub fn replace(&mut self, credentials: StoredCredentials, refreshed: bool) {
        self.credentials = Some(credentials);
        self.generation += 1;
        self.refreshed = refreshed;
    }
}

/// The scopes of a first authorization: the challenge's, else the configured ones, else the
/// resource's `scopes_supported`, else none; plus `offline_access` when wanted and the
/// authorization server lists it.
pub(crate) fn select_scope(
    challenge: Option<&WwwAuthenticate>,
    discovered: &Discovered,
    config: &OAuthConfig,
    wants_refresh_token: bool,
) -> Option<String> {
    let from_challenge = challenge
        .and_then(|c| c.scope.as_deref())
        .filter(|s| !s.trim().is_empty())
        .map(|s| s.split_whitespace().map(str::to_owned).collect::<Vec<_>>());
    let from_metadata = discovered
        .resource_metadata
        .as_ref()
        .and_then(|m| m.scopes_supported.clone())
        .filter(|s| !s.is_empty());
    let mut scopes = from_challenge
        .or_else(|| config.scopes.clone())
        .or(from_metadata)
        .unwrap_or_default();
    if wants_refresh_token
        && config.offline_access
        && discovered.metadata.supports_scope("offline_access")
        && !scopes.iter().any(|s| s == "offline_access")
    {
        scopes.push("offline_access".into());
    }
    (!scopes.is_empty()).then(|| scopes.join(" "))
}

/// The union of two space-separated scope lists, in order of first appearance.
pub(crate) fn union(first: Option<&str>, second: Option<&str>) -> Option<String> {
    let mut scopes: Vec<&str> = Vec::new();
    for scope in [first, second]
        .into_iter()
        .flatten()
        .flat_map(str::split_whitespace)
    {
        if !scopes.contains(&scope) {
            scopes.push(scope);
        }
    }
    (!scopes.is_empty()).then(|| scopes.join(" "))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::auth::metadata::{AuthorizationServerMetadata, ProtectedResourceMetadata};
    use crate::auth::HeadlessHandler;

    fn discovered(prm_scopes: Option<&[&str]>, as_scopes: Option<&[&str]>) -> Discovered {
        let list = |s: &[&str]| s.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        Discovered {
            resource: "http://h/mcp".into(),
            resource_metadata: Some(ProtectedResourceMetadata {
                scopes_supported: prm_scopes.map(list),
                ..ProtectedResourceMetadata::default()
            }),
            issuer: "http://as".into(),
            metadata: AuthorizationServerMetadata {
                scopes_supported: as_scopes.map(list),
                ..AuthorizationServerMetadata::default()
            },
            published: true,
        }
    }

    fn challenge(scope: &str) -> WwwAuthenticate {
        WwwAuthenticate {
            scheme: "Bearer".into(),
            scope: Some(scope.into()),
            ..WwwAuthenticate::default()
        }
    }

    #[test]
    fn scopes_come_from_the_challenge_then_config_then_metadata() {
        let config = OAuthConfig::new(HeadlessHandler::new());
        let d = discovered(Some(&["a", "b"]), None);
        let c = challenge("x  y");
        assert_eq!(
            select_scope(Some(&c), &d, &config, true).as_deref(),
            Some("x y")
        );
        assert_eq!(
            select_scope(None, &d, &config, true).as_deref(),
            Some("a b")
        );
        let configured = config.clone().scopes(["c"]);
        assert_eq!(
            select_scope(None, &d, &configured, true).as_deref(),
            Some("c")
        );
        assert_eq!(
            select_scope(None, &discovered(None, None), &config, true),
            None
        );
    }

    #[test]
    fn offline_access_only_when_listed_and_wanted() {
        let config = OAuthConfig::new(HeadlessHandler::new());
        let listed = discovered(Some(&["a"]), Some(&["a", "offline_access"]));
        assert_eq!(
            select_scope(None, &listed, &config, true).as_deref(),
            Some("a offline_access")
        );
        assert_eq!(
            select_scope(None, &listed, &config, false).as_deref(),
            Some("a")
        );
        let off = config.clone().offline_access(false);
        assert_eq!(
            select_scope(None, &listed, &off, true).as_deref(),
            Some("a")
        );
        let unlisted = discovered(Some(&["a"]), Some(&["a"]));
        assert_eq!(
            select_scope(None, &unlisted, &config, true).as_deref(),
            Some("a")
        );
    }

    #[test]
    fn union_keeps_order_and_drops_duplicates() {
        assert_eq!(union(Some("a b"), Some("b c")).as_deref(), Some("a b c"));
        assert_eq!(union(None, Some("c")).as_deref(), Some("c"));
        assert_eq!(union(None, None), None);
    }

    #[test]
    fn sent_generations_are_per_provider_and_thread() {
        let (a, b) = (next_provider_id(), next_provider_id());
        remember_sent(a, 5);
        assert_eq!(sent_generation(a), Some(5));
        assert_eq!(sent_generation(b), None);
        std::thread::spawn(move || assert_eq!(sent_generation(a), None))
            .join()
            .unwrap();
    }
}
