//! Obtaining credentials anew: discovery, the client's identity at the authorization server it
//! found, and the configured grant, with the user's step chosen for that server.

use std::sync::Arc;

use super::{lock, OAuth};
use crate::auth::client_credentials;
use crate::auth::config::Grant;
use crate::auth::device::{self, Prompt};
use crate::auth::discovery::{self, Discovered};
use crate::auth::flow;
use crate::auth::handler::AuthorizationHandler;
use crate::auth::registration::{self, UserPart};
use crate::auth::state;
use crate::auth::store::{StoredCredentials, TokenSet};
use crate::auth::tokens::{AuthMethod, ClientAuth};
use crate::auth::workload;
use crate::error::{AuthError, AuthStep, HttpError, Result, WwwAuthenticate};

/// How the user takes part in this authorization, chosen once the authorization server is known.
enum UserStep<'a> {
    /// No user: a grant of the client's own.
    None,
    /// The authorization code flow through `handler`, redirected to the URI.
    Code(&'a dyn AuthorizationHandler, String),
    /// The device authorization grant, the code shown by the prompt.
    Device(&'a Arc<Prompt>),
}

impl UserStep<'_> {
    fn part(&self) -> UserPart<'_> {
        match self {
            UserStep::None => UserPart::None,
            UserStep::Code(_, uri) => UserPart::Redirect(uri),
            UserStep::Device(_) => UserPart::Device,
        }
    }
}

impl OAuth {
    /// Discovery, client identity and the configured grant; installs and saves the result.
    /// `scope` overrides the scope selection (for step-ups); `refused` is the answer that
    /// asked for it, when there was one.
    pub(super) fn obtain(
        &self,
        challenge: Option<&WwwAuthenticate>,
        scope: Option<String>,
        refused: Option<&HttpError>,
    ) -> Result<()> {
        let version = refused.and_then(|e| e.protocol_version.as_deref());
        let allowed = |issuer: &str| self.check_bound(issuer).is_ok();
        let discovered = discovery::discover(
            &self.http,
            &self.server,
            &self.resource,
            challenge,
            version,
            allowed,
        )?;
        self.check_bound(&discovered.issuer)?;
        let user = self.user_step(&discovered)?;
        let with_user = !matches!(user, UserStep::None);
        let scope =
            scope.or_else(|| state::select_scope(challenge, &discovered, &self.config, with_user));
        let (mut credentials, auth) = self.identify(&discovered, user.part())?;
        let token = self.grant(&discovered, &auth, &user, scope.as_deref())?;
        log::debug!(
            "oauth: obtained a token from {} (scope {:?})",
            crate::redact::url(&discovered.issuer),
            token.scope
        );
        credentials.token = Some(token);
        self.persist(&credentials);
        let mut state = lock(&self.state);
        state.replace(credentials, false);
        // A new grant may speak for another subject than the tokens before it.
        state.context += 1;
        state.requested_scope = scope;
        Ok(())
    }

    /// The user's step for the authorization server `discovered`: the device grant where the
    /// configuration asks for it and the server offers it, else the code flow when there is a
    /// handler.
    fn user_step(&self, discovered: &Discovered) -> Result<UserStep<'_>> {
        let with_user = matches!(
            self.config.grant,
            Grant::AuthorizationCode(_) | Grant::Device(..)
        );
        if let (true, Some(ready)) = (with_user, &self.config.user_ready) {
            ready()?;
        }
        let offers_device = discovered.metadata.device_authorization_endpoint.is_some();
        let handler = match &self.config.grant {
            Grant::AuthorizationCode(handler) => handler,
            Grant::Device(prompt, _) if offers_device => return Ok(UserStep::Device(prompt)),
            Grant::Device(_, Some(handler)) => handler,
            Grant::Device(_, None) => {
                return Err(AuthError::new(
                    AuthStep::Authorization,
                    format!(
                        "{} offers no device authorization grant (no \
                         device_authorization_endpoint); sign in with a browser instead",
                        discovered.issuer
                    ),
                )
                .into())
            }
            _ => return Ok(UserStep::None),
        };
        let redirect_uri = handler.redirect_uri()?;
        Ok(UserStep::Code(handler.as_ref(), redirect_uri))
    }

    /// The client's identity at the authorization server `discovered` names (reused, or
    /// registered and saved at once, so it is not repeated even if the grant fails), with the
    /// credentials it authenticates with and, where the server offers it, a DPoP key.
    fn identify(
        &self,
        discovered: &Discovered,
        user: UserPart<'_>,
    ) -> Result<(StoredCredentials, ClientAuth)> {
        let current = lock(&self.state).credentials.clone();
        let mut credentials = match current {
            Some(c) if c.issuer == discovered.issuer => c,
            other => {
                if let Some(previous) = other {
                    log::debug!(
                        "oauth: the authorization server changed from {} to {}; using credentials \
                         bound to the new one",
                        crate::redact::url(&previous.issuer),
                        crate::redact::url(&discovered.issuer)
                    );
                }
                self.config
                    .store
                    .load(&self.key, Some(&discovered.issuer))?
                    .unwrap_or_else(|| StoredCredentials::new(discovered.issuer.clone()))
            }
        };
        let mut client = registration::client_identity(
            &self.http,
            &self.config,
            discovered,
            credentials.client.as_ref(),
            user,
        )?;
        let method = AuthMethod::choose(
            client.token_endpoint_auth_method.as_deref(),
            client.client_secret.is_some(),
            self.config.private_key_pem.is_some(),
            &discovered.metadata,
        );
        client.token_endpoint_auth_method = Some(method.as_str().to_owned());
        credentials.client = Some(client.clone());
        let prover = self.prover(&mut credentials, Some(&discovered.metadata));
        credentials.token_endpoint = discovered.metadata.token_endpoint.clone();
        credentials.revocation_endpoint = discovered.metadata.revocation_endpoint.clone();
        credentials.resource = Some(discovered.resource.clone());
        credentials.profile = self.config.profile.clone();
        self.persist(&credentials);
        let mut auth = self.client_auth(&client, method, &discovered.issuer)?;
        auth.dpop = prover;
        Ok((credentials, auth))
    }

    /// Runs the grant: the user's step chosen, or the configured grant of the client's own.
    fn grant(
        &self,
        discovered: &Discovered,
        auth: &ClientAuth,
        user: &UserStep<'_>,
        scope: Option<&str>,
    ) -> Result<TokenSet> {
        let http = &self.http;
        match (user, &self.config.grant) {
            (UserStep::Code(handler, redirect_uri), _) => {
                flow::authorization_code(http, discovered, auth, *handler, redirect_uri, scope)
            }
            (UserStep::Device(prompt), _) => {
                device::device_code(http, discovered, auth, prompt, scope)
            }
            (UserStep::None, Grant::CrossAppAccess(access)) => Ok(
                client_credentials::cross_app_access(http, discovered, access, auth, scope)?,
            ),
            (UserStep::None, Grant::WorkloadIdentity(identity)) => Ok(workload::jwt_bearer(
                http, discovered, identity, auth, scope,
            )?),
            (UserStep::None, _) => Ok(client_credentials::client_credentials(
                http, discovered, auth, scope,
            )?),
        }
    }
}
