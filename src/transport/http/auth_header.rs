//! Parsing of `WWW-Authenticate` challenges (RFC 9110 §11.6.1, RFC 6750 §3, RFC 9728 §5.1).

use crate::error::WwwAuthenticate;

/// One challenge: a scheme and its auth-params (names lowercased).
#[derive(Debug, Clone, PartialEq, Eq)]
struct Challenge {
    scheme: String,
    params: Vec<(String, String)>,
}

/// Parses the (possibly combined) `WWW-Authenticate` header values and picks the challenge a
/// client should act on: the first `Bearer` one, else the first one.
pub(crate) fn parse(value: &str) -> Option<WwwAuthenticate> {
    let challenges = parse_challenges(value);
    let chosen = challenges
        .iter()
        .find(|c| c.scheme.eq_ignore_ascii_case("bearer"))
        .or_else(|| challenges.first())?;
    Some(chosen.to_public())
}

/// Whether any challenge asks for a DPoP nonce (RFC 9449 §9), not only the one [`parse`] picks:
/// a server may offer `Bearer` and `DPoP` at once.
pub(crate) fn asks_dpop_nonce(value: &str) -> bool {
    parse_challenges(value).iter().any(|challenge| {
        challenge
            .params
            .iter()
            .any(|(name, value)| name == "error" && value == USE_DPOP_NONCE)
    })
}

/// The `error` of a challenge asking for a DPoP nonce.
const USE_DPOP_NONCE: &str = "use_dpop_nonce";

impl Challenge {
    fn to_public(&self) -> WwwAuthenticate {
        let param = |name: &str| {
            self.params
                .iter()
                .find(|(n, _)| n == name)
                .map(|(_, v)| v.clone())
        };
        WwwAuthenticate {
            scheme: self.scheme.clone(),
            resource_metadata: param("resource_metadata"),
            scope: param("scope"),
            error: param("error"),
            error_description: param("error_description"),
        }
    }
}

fn parse_challenges(value: &str) -> Vec<Challenge> {
    let mut cursor = Cursor {
        s: value.as_bytes(),
        i: 0,
    };
    let mut out = Vec::new();
    loop {
        cursor.skip(|b| b == b',' || is_ows(b));
        let scheme = cursor.token();
        if scheme.is_empty() {
            // Nothing more, or a stray character: skip it so parsing always advances.
            if cursor.i >= cursor.s.len() {
                return out;
            }
            cursor.i += 1;
            continue;
        }
        let mut challenge = Challenge {
            scheme,
            params: Vec::new(),
        };
        cursor.skip(is_ows);
        if cursor.at_token68() {
            cursor.skip(|b| b != b',');
        } else {
            while let Some((name, value)) = cursor.param() {
                challenge.params.push((name, value));
                cursor.skip(is_ows);
                if cursor.peek() != Some(b',') {
                    break;
                }
                // After a comma comes either another param of this challenge or a new one.
                let save = cursor.i;
                cursor.skip(|b| b == b',' || is_ows(b));
                if !cursor.at_param() {
                    cursor.i = save;
                    break;
                }
            }
        }
        out.push(challenge);
    }
}

struct Cursor<'a> {
    s: &'a [u8],
    i: usize,
}

impl Cursor<'_> {
    fn peek(&self) -> Option<u8> {
        self.s.get(self.i).copied()
    }

    fn skip(&mut self, f: impl Fn(u8) -> bool) {
        while self.peek().is_some_and(&f) {
            self.i += 1;
        }
    }

    fn token(&mut self) -> String {
        let start = self.i;
        self.skip(is_tchar);
        String::from_utf8_lossy(&self.s[start..self.i]).into_owned()
    }

    /// Whether a `name = value` param starts here.
    fn at_param(&self) -> bool {
        let mut j = self.i;
        while self.s.get(j).copied().is_some_and(is_tchar) {
            j += 1;
        }
        if j == self.i {
            return false;
        }
        while self.s.get(j).copied().is_some_and(is_ows) {
            j += 1;
        }
        self.s.get(j) == Some(&b'=') && !self.is_token68_end(j)
    }

    /// Whether a token68 (e.g. `abc==`) starts here rather than a param.
    fn at_token68(&self) -> bool {
        if self.at_param() {
            return false;
        }
        let mut j = self.i;
        while self
            .s
            .get(j)
            .copied()
            .is_some_and(|b| b.is_ascii_alphanumeric() || b"-._~+/".contains(&b))
        {
            j += 1;
        }
        j > self.i && self.is_token68_end(j)
    }

    /// At `j` (an `=`): true when only `=` padding follows up to a comma or the end.
    fn is_token68_end(&self, mut j: usize) -> bool {
        while self.s.get(j) == Some(&b'=') {
            j += 1;
        }
        while self.s.get(j).copied().is_some_and(is_ows) {
            j += 1;
        }
        matches!(self.s.get(j), None | Some(b','))
    }

    fn param(&mut self) -> Option<(String, String)> {
        if !self.at_param() {
            return None;
        }
        let name = self.token().to_ascii_lowercase();
        self.skip(is_ows);
        self.i += 1; // the `=`
        self.skip(is_ows);
        let value = if self.peek() == Some(b'"') {
            self.quoted()
        } else {
            self.token()
        };
        Some((name, value))
    }

    fn quoted(&mut self) -> String {
        self.i += 1;
        let mut out = Vec::new();
        while let Some(b) = self.peek() {
            self.i += 1;
            match b {
                b'"' => break,
                b'\\' => {
                    if let Some(next) = self.peek() {
                        out.push(next);
                        self.i += 1;
                    }
                }
                _ => out.push(b),
            }
        }
        String::from_utf8_lossy(&out).into_owned()
    }
}

fn is_ows(b: u8) -> bool {
    b == b' ' || b == b'\t'
}

fn is_tchar(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_an_rfc9728_bearer_challenge() {
        let got = parse(
            r#"Bearer resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource", scope="files:read files:write""#,
        )
        .unwrap();
        assert_eq!(got.scheme, "Bearer");
        assert_eq!(
            got.resource_metadata.as_deref(),
            Some("https://mcp.example.com/.well-known/oauth-protected-resource")
        );
        assert_eq!(got.scope.as_deref(), Some("files:read files:write"));
        assert_eq!(got.error, None);
    }

    #[test]
    fn reads_unquoted_values_escapes_and_commas_in_quotes() {
        let got = parse(
            r#"bearer error=insufficient_scope, error_description="needs \"a, b\", sorry",SCOPE=a"#,
        )
        .unwrap();
        assert_eq!(got.scheme, "bearer");
        assert_eq!(got.error.as_deref(), Some("insufficient_scope"));
        assert_eq!(
            got.error_description.as_deref(),
            Some(r#"needs "a, b", sorry"#)
        );
        assert_eq!(got.scope.as_deref(), Some("a"));
    }

    #[test]
    fn prefers_bearer_among_several_challenges() {
        let got = parse(r#"Basic realm="x", Bearer realm="y", error="invalid_token""#).unwrap();
        assert_eq!(got.scheme, "Bearer");
        assert_eq!(got.error.as_deref(), Some("invalid_token"));
        let got = parse(r#"Negotiate abc123==, Bearer scope="s""#).unwrap();
        assert_eq!(got.scope.as_deref(), Some("s"));
        let got = parse(r#"Basic realm="only""#).unwrap();
        assert_eq!(got.scheme, "Basic");
        assert_eq!(got.resource_metadata, None);
    }

    #[test]
    fn finds_a_nonce_challenge_beside_a_bearer_one() {
        let both = r#"Bearer resource_metadata="https://h/prm", DPoP error="use_dpop_nonce", algs="ES256""#;
        assert!(asks_dpop_nonce(both));
        // The one to act on is still the Bearer one.
        let chosen = parse(both).unwrap();
        assert_eq!((chosen.scheme.as_str(), chosen.error), ("Bearer", None));
        assert!(asks_dpop_nonce(r#"DPoP error=use_dpop_nonce"#));
        for other in [
            r#"Bearer error="invalid_token", DPoP error="invalid_dpop_proof""#,
            r#"DPoP error_description="use_dpop_nonce""#,
            "",
        ] {
            assert!(!asks_dpop_nonce(other), "{other}");
        }
    }

    #[test]
    fn splits_challenges_and_params() {
        let got = parse_challenges(
            r#"Newauth realm="apps", type=1, title="Login to \"apps\"", Basic realm="simple""#,
        );
        assert_eq!(got.len(), 2);
        assert_eq!(got[0].scheme, "Newauth");
        assert_eq!(got[0].params.len(), 3);
        assert_eq!(
            got[0].params[2],
            ("title".into(), r#"Login to "apps""#.into())
        );
        assert_eq!(got[1].scheme, "Basic");
    }

    #[test]
    fn tolerates_garbage() {
        assert_eq!(parse(""), None);
        assert_eq!(parse("   ,, "), None);
        assert_eq!(parse("Bearer").unwrap().scheme, "Bearer");
        let got = parse(r#"Bearer scope="unterminated"#).unwrap();
        assert_eq!(got.scope.as_deref(), Some("unterminated"));
        assert!(parse("= = \"x\" ,Bearer error=e").is_some());
        assert!(parse("\u{1F600} Bearer").is_some());
    }
}

#[cfg(test)]
#[path = "../../../tests/fuzz/internal/auth_header.rs"]
mod fuzz;
