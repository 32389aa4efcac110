"""A real OAuth 2.1 authorization server on Authlib, and an MCP server on the Python SDK (mcp 2.3)
that it protects: the peers of umcp's sign-in tests. Both bind 127.0.0.1 only.

Usage:

    python oauth_peer.py authorization-server --port N [--access-token-ttl S] [--interval S]
        [--enforced-interval S] [--device-lifetime S]
    python oauth_peer.py mcp-server --port N --issuer URL

The authorization server (Flask, Authlib 1.9) offers RFC 8414 metadata, dynamic client
registration (RFC 7591), the authorization code grant with PKCE S256 and RFC 9207 `iss`, the
device authorization grant (RFC 8628), refresh tokens that rotate, revocation (RFC 7009) and
introspection (RFC 7662). The RFC 8707 `resource` a client asks for becomes the token's `aud`.
The user's side goes through its own pages, as a person's browser would:

    POST /device   user_code=…&action=approve|deny      (the verification page)
    POST /authorize (the query of the authorization URL) action=approve|deny
                                                        -> 302 to the client's redirect URI

`GET /stats` tells what the server saw: `{"grants": {grant_type: count}, "revocations":
[token_type_hint, …], "polls": [seconds since start, …], "registered": n}`. `--enforced-interval` makes the device grant answer
`slow_down` to polls closer together than that, whatever `--interval` advertises;
`--device-lifetime` expires device codes sooner than the `expires_in` advertised (600 s).

The MCP server checks every bearer token at the introspection endpoint (as the client
`mcp-server`), requires the scope `mcp:tools` and an audience equal to its own URL, and
publishes its protected resource metadata (RFC 9728). Its one tool, `whoami`, answers with the
token's subject, client and scopes. Each server prints `listening on http://127.0.0.1:N` when
ready.
"""

from __future__ import annotations

import argparse
import base64
import json
import secrets
import sys
import threading
import time
import urllib.parse
import urllib.request
import warnings

USER = "alice"
RS_CLIENT_ID = "mcp-server"
RS_CLIENT_SECRET = "rs-secret-not-for-production"
SCOPES = ["mcp:tools", "offline_access"]


def authorization_server(args: argparse.Namespace) -> None:
    from authlib.integrations.flask_oauth2 import AuthorizationServer
    from authlib.oauth2.rfc6749 import ClientMixin, grants
    from authlib.oauth2.rfc6749.errors import OAuth2Error
    from authlib.oauth2.rfc7009 import RevocationEndpoint
    from authlib.oauth2.rfc7591 import ClientRegistrationEndpoint
    from authlib.oauth2.rfc7636 import CodeChallenge
    from authlib.oauth2.rfc7662 import IntrospectionEndpoint
    from authlib.oauth2.rfc8628 import DeviceAuthorizationEndpoint, DeviceCodeGrant, DeviceCredentialDict
    from authlib.oauth2.rfc9207 import IssuerParameter
    from flask import Flask, jsonify, request

    issuer = f"http://127.0.0.1:{args.port}"
    started = time.monotonic()
    lock = threading.Lock()
    clients: dict[str, Client] = {}
    tokens: dict[str, Token] = {}
    codes: dict[str, dict] = {}
    devices: dict[str, DeviceCredentialDict] = {}
    decisions: dict[str, bool] = {}
    last_poll: dict[str, float] = {}
    stats: dict = {"grants": {}, "revocations": [], "polls": [], "registered": 0}

    class Client(ClientMixin):
        def __init__(self, info: dict, metadata: dict):
            self.client_id = info["client_id"]
            self.client_secret = info.get("client_secret")
            self.metadata = metadata

        def get_client_id(self):
            return self.client_id

        def get_default_redirect_uri(self):
            uris = self.metadata.get("redirect_uris") or []
            return uris[0] if uris else None

        def get_allowed_scope(self, scope):
            if not scope:
                return ""
            return " ".join(s for s in scope.split() if s in SCOPES)

        def check_redirect_uri(self, redirect_uri):
            return redirect_uri in (self.metadata.get("redirect_uris") or [])

        def check_client_secret(self, client_secret):
            return self.client_secret is not None and secrets.compare_digest(self.client_secret, client_secret)

        def check_endpoint_auth_method(self, method, endpoint):
            return method == self.metadata.get("token_endpoint_auth_method", "client_secret_basic")

        def check_response_type(self, response_type):
            return response_type in (self.metadata.get("response_types") or ["code"])

        def check_grant_type(self, grant_type):
            return grant_type in (self.metadata.get("grant_types") or ["authorization_code"])

    class Token(dict):
        def check_client(self, client):
            return self["client_id"] == client.get_client_id()

        def get_scope(self):
            return self.get("scope", "")

        def get_expires_in(self):
            return self["expires_in"]

        def is_expired(self):
            return self["issued_at"] + self["expires_in"] < time.time()

        def is_revoked(self):
            return self.get("revoked", False)

    app = Flask(__name__)
    app.config["OAUTH2_REFRESH_TOKEN_GENERATOR"] = True
    app.config["OAUTH2_TOKEN_EXPIRES_IN"] = {
        "authorization_code": args.access_token_ttl,
        "refresh_token": args.access_token_ttl,
        DeviceCodeGrant.GRANT_TYPE: args.access_token_ttl,
    }

    def query_client(client_id):
        return clients.get(client_id)

    def save_token(token, request):
        grant = request.payload.grant_type
        if grant == "authorization_code":
            resource = request.authorization_code["resource"]
        elif grant == DeviceCodeGrant.GRANT_TYPE:
            resource = request.credential.get("resource")
        else:
            resource = request.refresh_token["aud"]
        record = Token(
            token,
            client_id=request.client.get_client_id(),
            user=USER,
            aud=resource,
            issued_at=time.time(),
        )
        tokens[token["access_token"]] = record
        if token.get("refresh_token"):
            tokens[token["refresh_token"]] = record

    server = AuthorizationServer(app, query_client=query_client, save_token=save_token)
    server.scopes_supported = SCOPES

    class AuthorizationCode(grants.AuthorizationCodeGrant):
        TOKEN_ENDPOINT_AUTH_METHODS = ["none", "client_secret_basic", "client_secret_post"]

        def save_authorization_code(self, code, request):
            data = request.payload.data
            codes[code] = {
                "code": code,
                "client_id": request.client.get_client_id(),
                "redirect_uri": request.payload.redirect_uri,
                "scope": request.payload.scope,
                "code_challenge": data.get("code_challenge"),
                "code_challenge_method": data.get("code_challenge_method"),
                "resource": data.get("resource"),
            }

        def query_authorization_code(self, code, client):
            found = codes.get(code)
            if found and found["client_id"] == client.get_client_id():
                return Code(found)
            return None

        def delete_authorization_code(self, authorization_code):
            codes.pop(authorization_code["code"], None)

        def authenticate_user(self, authorization_code):
            return USER

    class Code(dict):
        @property
        def code_challenge(self):
            return self["code_challenge"]

        @property
        def code_challenge_method(self):
            return self["code_challenge_method"]

        def get_redirect_uri(self):
            return self["redirect_uri"]

        def get_scope(self):
            return self["scope"]

        def get_nonce(self):
            return None

        def get_auth_time(self):
            return None

        def get_acr(self):
            return None

        def get_amr(self):
            return None

    class RefreshToken(grants.RefreshTokenGrant):
        TOKEN_ENDPOINT_AUTH_METHODS = ["none", "client_secret_basic", "client_secret_post"]
        INCLUDE_NEW_REFRESH_TOKEN = True

        def authenticate_refresh_token(self, refresh_token):
            token = tokens.get(refresh_token)
            if token and token.get("refresh_token") == refresh_token and not token.is_revoked():
                return token
            return None

        def authenticate_user(self, refresh_token):
            return USER

        def revoke_old_credential(self, refresh_token):
            refresh_token["revoked"] = True

    class DeviceCode(DeviceCodeGrant):
        def query_device_credential(self, device_code):
            return devices.get(device_code)

        def query_user_grant(self, user_code):
            if user_code in decisions:
                return USER, decisions[user_code]
            return None

        def should_slow_down(self, credential):
            now = time.monotonic()
            previous = last_poll.get(credential["device_code"])
            last_poll[credential["device_code"]] = now
            return previous is not None and now - previous < args.enforced_interval

    class DeviceAuthorization(DeviceAuthorizationEndpoint):
        CLIENT_AUTH_METHODS = ["none", "client_secret_basic", "client_secret_post"]
        INTERVAL = args.interval

        def get_verification_uri(self):
            return f"{issuer}/device"

        def save_device_credential(self, client_id, scope, data):
            devices[data["device_code"]] = DeviceCredentialDict(
                data,
                client_id=client_id,
                scope=scope,
                resource=request.form.get("resource"),
                expires_at=time.time() + args.device_lifetime,
            )

    class Registration(ClientRegistrationEndpoint):
        def authenticate_token(self, request):
            return "open registration"

        def get_server_metadata(self):
            return metadata()

        def save_client(self, client_info, client_metadata, request):
            client = Client(client_info, client_metadata)
            clients[client.client_id] = client
            stats["registered"] += 1
            return client

    class Revocation(RevocationEndpoint):
        CLIENT_AUTH_METHODS = ["none", "client_secret_basic", "client_secret_post"]

        def query_token(self, token_string, token_type_hint):
            return tokens.get(token_string)

        def revoke_token(self, token, request):
            token["revoked"] = True

    class Introspection(IntrospectionEndpoint):
        CLIENT_AUTH_METHODS = ["client_secret_basic"]

        def query_token(self, token_string, token_type_hint):
            return tokens.get(token_string)

        def check_permission(self, token, client, request):
            return client.get_client_id() == RS_CLIENT_ID

        def introspect_token(self, token):
            return {
                "active": True,
                "client_id": token["client_id"],
                "token_type": "Bearer",
                "username": token["user"],
                "sub": token["user"],
                "scope": token.get_scope(),
                "aud": token["aud"],
                "iss": issuer,
                "exp": int(token["issued_at"] + token["expires_in"]),
                "iat": int(token["issued_at"]),
            }

    class Issuer(IssuerParameter):
        def get_issuer(self):
            return issuer

    server.register_grant(AuthorizationCode, [CodeChallenge(required=True)])
    server.register_grant(RefreshToken)
    server.register_grant(DeviceCode)
    server.register_extension(Issuer())
    server.register_endpoint(DeviceAuthorization)
    server.register_endpoint(Registration)
    server.register_endpoint(Revocation)
    server.register_endpoint(Introspection)
    clients[RS_CLIENT_ID] = Client(
        {"client_id": RS_CLIENT_ID, "client_secret": RS_CLIENT_SECRET},
        {"token_endpoint_auth_method": "client_secret_basic", "grant_types": []},
    )

    def metadata() -> dict:
        return {
            "issuer": issuer,
            "authorization_endpoint": f"{issuer}/authorize",
            "token_endpoint": f"{issuer}/token",
            "registration_endpoint": f"{issuer}/register",
            "device_authorization_endpoint": f"{issuer}/device_authorization",
            "revocation_endpoint": f"{issuer}/revoke",
            "introspection_endpoint": f"{issuer}/introspect",
            "scopes_supported": SCOPES,
            "response_types_supported": ["code"],
            "grant_types_supported": ["authorization_code", "refresh_token", DeviceCodeGrant.GRANT_TYPE],
            "token_endpoint_auth_methods_supported": ["none", "client_secret_basic", "client_secret_post"],
            "code_challenge_methods_supported": ["S256"],
            "authorization_response_iss_parameter_supported": True,
        }

    @app.get("/.well-known/oauth-authorization-server")
    def well_known():
        return jsonify(metadata())

    @app.post("/register")
    def register():
        return server.create_endpoint_response("client_registration")

    @app.post("/device_authorization")
    def device_authorization():
        return server.create_endpoint_response("device_authorization")

    @app.post("/device")
    def device():
        user_code = request.form.get("user_code", "")
        if not any(d["user_code"] == user_code for d in devices.values()):
            return jsonify({"error": "unknown user_code"}), 404
        decisions[user_code] = request.form.get("action") == "approve"
        return jsonify({"user_code": user_code, "approved": decisions[user_code]})

    @app.get("/authorize")
    def authorize_page():
        try:
            grant = server.get_consent_grant(end_user=USER)
        except OAuth2Error as error:
            return jsonify(dict(error.get_body())), 400
        return f"<p>{grant.client.get_client_id()} asks for {grant.request.payload.scope}</p>"

    @app.post("/authorize")
    def authorize():
        approved = request.form.get("action") == "approve"
        try:
            grant = server.get_consent_grant(end_user=USER)
        except OAuth2Error as error:
            return jsonify(dict(error.get_body())), 400
        return server.create_authorization_response(grant_user=USER if approved else None, grant=grant)

    @app.post("/token")
    def token():
        grant = request.form.get("grant_type", "")
        with lock:
            stats["grants"][grant] = stats["grants"].get(grant, 0) + 1
            if grant == DeviceCodeGrant.GRANT_TYPE:
                stats["polls"].append(round(time.monotonic() - started, 3))
        return server.create_token_response()

    @app.post("/revoke")
    def revoke():
        stats["revocations"].append(request.form.get("token_type_hint"))
        return server.create_endpoint_response("revocation")

    @app.post("/introspect")
    def introspect():
        return server.create_endpoint_response("introspection")

    @app.get("/stats")
    def get_stats():
        return jsonify(stats)

    print(f"listening on {issuer}", file=sys.stderr, flush=True)
    # One request at a time: the stores above are plain dicts.
    app.run(host="127.0.0.1", port=args.port, threaded=False)


def mcp_server(args: argparse.Namespace) -> None:
    import anyio

    from mcp.server.auth.middleware.auth_context import get_access_token
    from mcp.server.auth.provider import AccessToken
    from mcp.server.auth.settings import AuthSettings
    from mcp.server.mcpserver import MCPServer

    warnings.filterwarnings("ignore", category=DeprecationWarning)
    resource = f"http://127.0.0.1:{args.port}/mcp"
    basic = base64.b64encode(f"{RS_CLIENT_ID}:{RS_CLIENT_SECRET}".encode()).decode()

    def introspect(token: str) -> dict:
        body = urllib.parse.urlencode({"token": token}).encode()
        call = urllib.request.Request(f"{args.issuer}/introspect", data=body, method="POST")
        call.add_header("Authorization", f"Basic {basic}")
        call.add_header("Content-Type", "application/x-www-form-urlencoded")
        with urllib.request.urlopen(call, timeout=10) as answer:
            return json.load(answer)

    class IntrospectionVerifier:
        async def verify_token(self, token: str) -> AccessToken | None:
            info = await anyio.to_thread.run_sync(introspect, token)
            if not info.get("active"):
                return None
            return AccessToken(
                token=token,
                client_id=info["client_id"],
                scopes=info.get("scope", "").split(),
                expires_at=info.get("exp"),
                resource=info.get("aud"),
                subject=info.get("sub"),
            )

    server = MCPServer(
        name="umcp-oauth-peer",
        version="1.0.0",
        log_level="INFO",
        token_verifier=IntrospectionVerifier(),
        auth=AuthSettings(
            issuer_url=args.issuer,
            resource_server_url=resource,
            required_scopes=["mcp:tools"],
            validate_token_resource=True,
        ),
    )

    @server.tool(description="Who the bearer token speaks for.")
    def whoami() -> str:
        token = get_access_token()
        if token is None:
            return "nobody"
        return f"{token.subject} via {token.client_id} with {' '.join(sorted(token.scopes))}"

    print(f"listening on http://127.0.0.1:{args.port}", file=sys.stderr, flush=True)
    server.run("streamable-http", host="127.0.0.1", port=args.port)


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    auth = commands.add_parser("authorization-server")
    auth.add_argument("--port", type=int, required=True)
    auth.add_argument("--access-token-ttl", type=int, default=3600)
    auth.add_argument("--interval", type=int, default=1)
    auth.add_argument("--enforced-interval", type=float, default=0.0)
    auth.add_argument("--device-lifetime", type=float, default=600.0)
    mcp = commands.add_parser("mcp-server")
    mcp.add_argument("--port", type=int, required=True)
    mcp.add_argument("--issuer", required=True)
    args = parser.parse_args(argv)
    if args.command == "authorization-server":
        authorization_server(args)
    else:
        mcp_server(args)


if __name__ == "__main__":
    main(sys.argv[1:])
