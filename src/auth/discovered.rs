//! What discovery finds for a server, as a program may show it: the protected resource's
//! metadata and the authorization server's, without registering or asking for a token.

use super::metadata::{AuthorizationServerMetadata, ProtectedResourceMetadata};

/// The authorization server of an MCP server, as [`OAuth::discover`](super::OAuth::discover)
/// finds it.
///
/// See the example on [`OAuth::discover`](super::OAuth::discover).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct AuthorizationDiscovery {
    /// The `resource` the tokens are for (RFC 8707).
    pub resource: String,
    /// The protected resource metadata, absent for servers of the 2025-03-26 revision.
    pub resource_metadata: Option<ProtectedResourceMetadata>,
    /// The authorization server's issuer.
    pub issuer: String,
    /// The authorization server's metadata, or its default endpoints when it publishes none.
    pub metadata: AuthorizationServerMetadata,
    /// Whether the metadata was published (`false`: the default endpoints).
    pub published: bool,
}

impl From<super::discovery::Discovered> for AuthorizationDiscovery {
    fn from(found: super::discovery::Discovered) -> Self {
        AuthorizationDiscovery {
            resource: found.resource,
            resource_metadata: found.resource_metadata,
            issuer: found.issuer,
            metadata: found.metadata,
            published: found.published,
        }
    }
}
