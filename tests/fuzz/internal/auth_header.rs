//! The `WWW-Authenticate` parser: any header value parses without panic into challenges
//! that survive being written out and read again, and the chosen one is the first `Bearer`.

use super::{parse, parse_challenges, Challenge};

use crate::fuzz_engine::{Rng, Target};

const DICTIONARY: &[&[u8]] = &[
    b"Bearer ",
    b"Basic ",
    b"DPoP ",
    b"resource_metadata=",
    b"scope=",
    b"error=\"invalid_token\"",
    b"error_description=",
    b"realm=\"mcp\"",
    b"\"",
    b"\\\"",
    b"\\",
    b", ",
    b"=",
    b"==",
    b"abc123==",
    b"\t",
];

#[test]
fn www_authenticate_values_parse_and_round_trip() {
    Target {
        name: "www-authenticate",
        dictionary: DICTIONARY,
        default_cases: 4000,
    }
    .run(check);
}

fn check(input: &[u8], _rng: &mut Rng) {
    let value = String::from_utf8_lossy(input);
    let challenges = parse_challenges(&value);
    for challenge in &challenges {
        assert!(!challenge.scheme.is_empty(), "a challenge without a scheme");
        for (name, param) in &challenge.params {
            assert!(!name.is_empty() && name.len() <= value.len() && param.len() <= value.len());
            assert_eq!(
                name,
                &name.to_ascii_lowercase(),
                "param names are lowercased"
            );
        }
    }
    let written = write(&challenges);
    assert_eq!(
        parse_challenges(&written),
        challenges,
        "round trip through {written:?}"
    );

    let chosen = parse(&value);
    let expected = challenges
        .iter()
        .find(|c| c.scheme.eq_ignore_ascii_case("bearer"))
        .or_else(|| challenges.first());
    assert_eq!(
        chosen.as_ref().map(|c| &c.scheme),
        expected.map(|c| &c.scheme)
    );
    if let (Some(chosen), Some(expected)) = (chosen, expected) {
        let param = |n: &str| {
            expected
                .params
                .iter()
                .find(|(k, _)| k == n)
                .map(|(_, v)| v.clone())
        };
        assert_eq!(chosen.resource_metadata, param("resource_metadata"));
        assert_eq!(chosen.scope, param("scope"));
        assert_eq!(chosen.error, param("error"));
        assert_eq!(chosen.error_description, param("error_description"));
    }
}

/// The challenges written the canonical way: every value quoted, `"` and `\` escaped.
fn write(challenges: &[Challenge]) -> String {
    let written: Vec<String> = challenges
        .iter()
        .map(|challenge| {
            let params: Vec<String> = challenge
                .params
                .iter()
                .map(|(name, value)| {
                    let escaped = value.replace('\\', "\\\\").replace('"', "\\\"");
                    format!("{name}=\"{escaped}\"")
                })
                .collect();
            if params.is_empty() {
                challenge.scheme.clone()
            } else {
                format!("{} {}", challenge.scheme, params.join(", "))
            }
        })
        .collect();
    written.join(", ")
}
