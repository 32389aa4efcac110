//! OAuth 2.1 authorization for HTTP MCP servers, as the MCP authorization spec describes it.
//!
//! [`OAuth`] is a [`CredentialProvider`](crate::CredentialProvider): give it to
//! [`HttpConfig::credentials`](crate::HttpConfig::credentials) and it adds
//! `Authorization: Bearer …` to every request. When the server answers 401 it runs the whole
//! flow and the request is repeated:
//!
//! 1. **Discovery**: the protected resource metadata (RFC 9728) named by the
//!    `WWW-Authenticate` challenge, else at the path-based then the root well-known URL; its
//!    `resource` must name this server. Then the authorization server metadata (RFC 8414 and
//!    OpenID Connect discovery). Servers of the 2025-03-26 revision without resource metadata
//!    get their metadata from the server's origin, or the default `/authorize`, `/token` and
//!    `/register` endpoints.
//! 2. **Client identity**: pre-registered credentials, else a client ID metadata document
//!    URL when the server supports it, else dynamic client registration (RFC 7591).
//! 3. **Authorization code with PKCE S256**, `state` checked, the RFC 8707 `resource` in
//!    both requests, through an [`AuthorizationHandler`]: [`LoopbackHandler`] (a browser and
//!    a one-shot listener on 127.0.0.1), [`PasteHandler`] (a browser on another machine, the
//!    redirect pasted back) or [`HeadlessHandler`] (follows nothing, reads the redirect; for
//!    test servers). Or the **device authorization grant** (RFC 8628,
//!    [`OAuthConfig::device`]): a code the user enters on any device, polled for at the
//!    server's pace.
//! 4. **Tokens** kept in a [`TokenStore`] ([`MemoryStore`] by default, [`FileStore`] to
//!    survive restarts, `KeychainStore` in the operating system's keychain with the `keychain`
//!    feature), per [profile](OAuthConfig::profile), refreshed before they expire and on 401
//!    (once across processes sharing the store), bound to the authorization server that issued
//!    them, and revoked on [`OAuth::logout`] (RFC 7009). A 403 `insufficient_scope` triggers a
//!    step-up authorization with the union of the scopes, a bounded number of times.
//!
//! Grants without a user, the authorization extensions:
//!
//! - **Client credentials** ([`OAuthConfig::client_credentials`]): a client secret, or with
//!   the `oauth-jwt` feature an ES256 `private_key_jwt` assertion.
//! - **Workload identity federation** ([`OAuthConfig::workload_identity`]): the JWT the
//!   platform issued to the workload, read from a file or a variable before every exchange,
//!   presented as an RFC 7523 JWT-bearer grant, and only to the authorization server it was
//!   issued for ([`WorkloadIdentity`] names it).
//!
//! Pre-registered credentials (a client secret, a private key) go to whichever
//! authorization server the MCP server names, unless [`OAuthConfig::issuer`] binds them to
//! theirs. A server that is not on this machine may not name endpoints that are.
//! - **Enterprise-managed authorization** ([`OAuthConfig::cross_app_access`], also called
//!   cross-app access or identity assertion authorization grants), end to end:
//!   1. the user signs in once at the enterprise identity provider; the application holds
//!      the resulting ID token ([`CrossAppAccess::new`]);
//!   2. discovery finds the MCP server's authorization server, as above;
//!   3. at the identity provider's token endpoint, an RFC 8693 token exchange turns the ID
//!      token (`subject_token_type` `…:id_token`) into an identity assertion JWT
//!      authorization grant (ID-JAG, `requested_token_type` `…:id-jag`) whose `audience` is
//!      the authorization server's issuer and whose `resource` is the MCP server; the
//!      identity provider decides by its policy whether this user may use that server;
//!   4. at the authorization server's token endpoint, the ID-JAG is the `assertion` of an
//!      RFC 7523 JWT-bearer grant, with the client's own credentials there (HTTP Basic);
//!   5. the access token goes to the MCP server. No browser step and no consent screen:
//!      the enterprise's identity provider is where access is granted and revoked.
//!
//! **DPoP** (RFC 9449, `oauth-jwt` feature): when the authorization server lists ES256 in
//! `dpop_signing_alg_values_supported`, tokens are bound to a per-client P-256 key (kept
//! with the tokens in the [`TokenStore`]): token requests and every MCP request carry a fresh
//! proof, tokens go out as `Authorization: DPoP …`, and a server's `use_dpop_nonce`
//! challenge is answered once with its nonce. A stolen token is useless without the key.
//! [`OAuthConfig::dpop`] turns it off.
//!
//! Tokens, codes, verifiers, secrets, DPoP keys and proofs never reach umcp's log: its trace
//! lines show them as `<redacted>`, and every `Debug` implementation hides them. (The HTTP library's own trace
//! output, target `ureq`, dumps raw requests; keep it off where logs are kept.)
//!
//! ```no_run
//! use std::sync::Arc;
//! use umcp::auth::{LoopbackHandler, OAuth, OAuthConfig};
//! use umcp::{Client, HttpConfig};
//!
//! # fn show_to_user(_: &str) {}
//! let url = "https://mcp.example.com/mcp";
//! let browser = LoopbackHandler::new(|auth_url: &str| {
//!     show_to_user(auth_url);
//!     Ok(())
//! });
//! let oauth = OAuth::new(url, OAuthConfig::new(browser))?;
//! let client = Client::connect(HttpConfig::new(url).credentials(Arc::new(oauth)))?;
//! # Ok::<(), umcp::Error>(())
//! ```

mod client_credentials;
mod config;
mod device;
mod discovered;
mod discovery;
mod dpop;
mod encoding;
mod file_store;
mod flow;
mod flow_lock;
mod handler;
mod headless;
mod http;
#[cfg(feature = "oauth-jwt")]
mod jwt;
#[cfg(feature = "keychain")]
mod keychain;
mod loopback;
mod metadata;
mod paste;
mod pause;
mod pkce;
mod provider;
mod registration;
mod revocation;
mod sign_in;
mod state;
mod store;
mod tokens;
mod urls;
mod workload;

pub use client_credentials::CrossAppAccess;
pub use config::OAuthConfig;
pub use device::DeviceAuthorization;
pub use discovered::AuthorizationDiscovery;
pub use file_store::FileStore;
pub use handler::AuthorizationHandler;
pub use headless::HeadlessHandler;
#[cfg(feature = "keychain")]
#[cfg_attr(docsrs, doc(cfg(feature = "keychain")))]
pub use keychain::KeychainStore;
pub use loopback::LoopbackHandler;
pub use metadata::{AuthorizationServerMetadata, ProtectedResourceMetadata};
pub use paste::{PasteHandler, PastePrompt};
pub use provider::OAuth;
pub use revocation::Revocation;
pub use sign_in::SignIn;
pub use store::{
    ClientRegistration, MemoryStore, StoreLock, StoredCredentials, TokenSet, TokenStore,
};
pub use workload::WorkloadIdentity;
