//! Which names and values are secrets, as umcp's own messages hide them: the library's
//! [`Redacted`] decides, so the tool and the library never disagree.

use umcp::Redacted;

/// Whether `name` is a secret's name (`API_KEY`, `GITHUB_TOKEN`, `password`).
pub fn secret_name(name: &str) -> bool {
    let pair = [format!("{name}=value")];
    Redacted::args(&pair).words()[0] != pair[0]
}

/// Whether `value` has a known token's form (`sk-…`, `ghp_…`).
pub fn token_like(value: &str) -> bool {
    let word = [value.to_owned()];
    Redacted::args(&word).words()[0] == Redacted::MARK
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_tokens_are_told_as_the_library_tells_them() {
        for name in [
            "API_KEY",
            "GITHUB_TOKEN",
            "password",
            "client_secret",
            "MY_SESSION",
        ] {
            assert!(secret_name(name), "{name}");
        }
        for name in ["REGION", "city", "path"] {
            assert!(!secret_name(name), "{name}");
        }
        assert!(token_like("sk-live-0123456789abcdef") && token_like("ghp_abcdef"));
        assert!(!token_like("paris"));
    }
}
