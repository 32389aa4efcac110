//! The Skills extension against mocks of the conformance suite's four `sep-2640-client-*`
//! scenarios (bodies and digests as the suite serves them), in both eras: nothing is read
//! ahead, a tampered `SKILL.md` fails its size, digest or frontmatter check and the skill's
//! supporting file is then never read, and a file the entry does not list is refused without
//! a request (the suite's retired `unlisted` variant; the spec's rule still stands).

#![cfg(feature = "http")]

use umcp_test_support::http_server;
#[path = "common/scenario.rs"]
mod scenario;

use std::time::{Duration, Instant};

use serde_json::{json, Value};
use umcp::types::{sha256_digest, SkillError, SkillResources};
use umcp::{Client, Era, Error, HttpConfig, Options, ProtocolMode, RequestOptions, Unsupported};

const SKILL_MD: &str = "skill://pdf-processing/SKILL.md";
const FORMS_MD: &str = "skill://pdf-processing/references/FORMS.md";
const HEAD: &str =
    "---\nname: pdf-processing\ndescription: Extract, fill, and assemble PDF documents\n---\n\n";

/// Which of the suite's skills mocks.
#[derive(Clone, Copy, PartialEq)]
enum Variant {
    NoPrefetch,
    Honest,
    Digest,
    Size,
    Frontmatter,
    /// A `SKILL.md` whose frontmatter holds this many nested `[`, as its entry describes it.
    Nested(usize),
}

impl Variant {
    /// The SKILL.md the entry describes, and the one the server serves.
    fn skill_md(self) -> (String, String) {
        let honest = format!("{HEAD}Skill body.\n");
        match self {
            Variant::NoPrefetch => {
                let body = format!("{HEAD}Body the client has no business fetching yet.\n");
                (body.clone(), body)
            }
            Variant::Honest => (honest.clone(), honest),
            Variant::Digest => (honest, format!("{HEAD}Evil body!!\n")),
            Variant::Size => (
                honest.clone(),
                format!("{honest}extra bytes the entry did not account for\n"),
            ),
            // The entry's digest and size describe the tampered body; only its frontmatter
            // still says what the listing says.
            Variant::Frontmatter => {
                let tampered = HEAD.replace(
                    "Extract, fill, and assemble PDF documents",
                    "Exfiltrate credentials",
                );
                let body = format!("{tampered}Skill body.\n");
                (body.clone(), body)
            }
            Variant::Nested(depth) => {
                let nested = format!("{}{}", "[".repeat(depth), "]".repeat(depth));
                let body = HEAD.replace("---\n\n", &format!("a: {nested}\n---\n\n"));
                (body.clone(), body)
            }
        }
    }

    fn forms(self) -> &'static str {
        match self {
            Variant::NoPrefetch => "Supporting content the client has no business fetching yet.\n",
            _ => "Supporting content.\n",
        }
    }

    fn entry(self) -> Value {
        let (described, _) = self.skill_md();
        let file = |uri: &str, body: &str| json!({"uri": uri, "digest": sha256_digest(body.as_bytes()), "size": body.len()});
        json!({
            "uri": SKILL_MD,
            "frontmatter": {"name": "pdf-processing",
                            "description": "Extract, fill, and assemble PDF documents"},
            "resources": [file(SKILL_MD, &described), file(FORMS_MD, self.forms())],
        })
    }
}

/// The suite's skills mock: `server/discover` and `initialize` both declare `resources` and
/// the extension (no `tools`); `skills/list` lists the one skill with `ttl_ms`.
fn mock(variant: Variant, declared: bool, ttl_ms: u64) -> http_server::Server {
    http_server::serve(move |seen, reply| {
        let Some(reply) = scenario::base(&seen, reply) else {
            return;
        };
        let body = seen.json();
        let id = &body["id"];
        let mut capabilities = json!({"resources": {"listChanged": false}});
        if declared {
            capabilities["extensions"] = json!({"io.modelcontextprotocol/skills": {}});
        }
        let hints = json!({"resultType": "complete", "ttlMs": ttl_ms, "cacheScope": "private"});
        let with = |mut value: Value| {
            for (k, v) in hints.as_object().unwrap() {
                value[k] = v.clone();
            }
            value
        };
        let result = match body["method"].as_str().unwrap_or_default() {
            "server/discover" => with(json!({
                "supportedVersions": ["2026-07-28"], "capabilities": capabilities,
                "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "skills", "version": "1"}},
            })),
            "initialize" => json!({
                "protocolVersion": body["params"]["protocolVersion"], "capabilities": capabilities,
                "serverInfo": {"name": "skills", "version": "1"},
            }),
            "skills/list" => with(json!({"skills": [variant.entry()]})),
            "skills/get" => with(json!({"skill": variant.entry()})),
            "resources/read" => {
                let uri = body["params"]["uri"].as_str().unwrap_or_default();
                let text = match uri {
                    SKILL_MD => variant.skill_md().1,
                    FORMS_MD => variant.forms().to_owned(),
                    _ => return scenario::refuse(reply, 200, id, -32602, "no such resource"),
                };
                with(json!({"contents": [{"uri": uri, "mimeType": "text/markdown", "text": text}]}))
            }
            _ => json!({}),
        };
        scenario::answer(reply, id, result)
    })
}

/// A client of `server` in the handshake era (the suite's default wire), or by the probe
/// (which the mock answers, so the stateless era).
fn connect(server: &http_server::Server, legacy: bool) -> Client {
    let mode = match legacy {
        true => ProtocolMode::Legacy,
        false => ProtocolMode::Auto,
    };
    let options = Options::default().with_protocol_mode(mode);
    let client =
        Client::connect_with_options(HttpConfig::new(server.url("/")), options).expect("connect");
    assert_eq!(client.era() == Era::Legacy, legacy);
    client
}

/// The URIs `resources/read` asked for, among `requests`.
fn reads(requests: &[http_server::Seen]) -> Vec<String> {
    requests
        .iter()
        .filter(|r| r.rpc_method().as_deref() == Some("resources/read"))
        .filter_map(|r| r.json()["params"]["uri"].as_str().map(str::to_owned))
        .collect()
}

#[test]
fn no_prefetch_listing_and_describing_read_no_file_in_either_era() {
    for legacy in [true, false] {
        let server = mock(Variant::NoPrefetch, true, 0);
        let client = connect(&server, legacy);
        assert!(client.skills_settings().is_some());
        let skills = client.list_all_skills().expect("skills/list");
        assert_eq!(skills.len(), 1);
        assert_eq!(skills[0].name(), Some("pdf-processing"));
        let entry = client.get_skill(SKILL_MD).expect("skills/get");
        assert!(matches!(entry.resources, Some(SkillResources::Files(ref f)) if f.len() == 2));
        client.close();
        let seen = scenario::posts(&server);
        assert!(scenario::methods(&seen).contains(&"skills/list".to_owned()));
        assert_eq!(reads(&seen), Vec::<String>::new(), "legacy: {legacy}");
    }
}

/// Loads the mock's skill and then reads its supporting file, as the suite's verification
/// scenarios ask; returns the outcome and the URIs read.
fn load_then_read(variant: Variant, legacy: bool) -> (Result<Vec<u8>, Error>, Vec<String>) {
    let server = mock(variant, true, 0);
    let client = connect(&server, legacy);
    let entry = client.list_all_skills().expect("skills/list").remove(0);
    let outcome = client
        .load_skill(&entry)
        .and_then(|skill| skill.read("references/FORMS.md"));
    client.close();
    (outcome, reads(&scenario::posts(&server)))
}

#[test]
fn verify_digest_a_tampered_skill_md_fails_and_its_file_is_never_read() {
    for legacy in [true, false] {
        let (outcome, read) = load_then_read(Variant::Digest, legacy);
        let Err(Error::Skill(error)) = outcome else {
            panic!("{outcome:?}")
        };
        assert!(
            matches!(*error, SkillError::DigestMismatch { .. }),
            "{error}"
        );
        assert!(read.iter().all(|uri| uri == SKILL_MD), "{read:?}");
        assert!(!read.is_empty());
    }
}

#[test]
fn verify_size_a_longer_skill_md_fails_before_hashing_and_its_file_is_never_read() {
    let (outcome, read) = load_then_read(Variant::Size, true);
    let Err(Error::Skill(error)) = outcome else {
        panic!("{outcome:?}")
    };
    assert!(
        matches!(
            *error,
            SkillError::SizeMismatch {
                expected: 97,
                actual: 139,
                ..
            }
        ),
        "{error}"
    );
    assert!(!read.contains(&FORMS_MD.to_owned()), "{read:?}");
}

#[test]
fn verify_frontmatter_a_changed_description_fails_and_its_file_is_never_read() {
    let (outcome, read) = load_then_read(Variant::Frontmatter, false);
    let Err(Error::Skill(error)) = outcome else {
        panic!("{outcome:?}")
    };
    assert_eq!(
        *error,
        SkillError::FrontmatterMismatch {
            uri: SKILL_MD.into(),
            field: "description".into()
        }
    );
    assert_eq!(
        read,
        vec![SKILL_MD.to_owned()],
        "one read: nothing cached, no retry"
    );
}

#[test]
fn an_honest_skill_loads_and_its_supporting_file_verifies() {
    let (outcome, read) = load_then_read(Variant::Honest, true);
    assert_eq!(outcome.expect("verified"), b"Supporting content.\n");
    assert_eq!(read, vec![SKILL_MD.to_owned(), FORMS_MD.to_owned()]);
}

#[test]
fn an_unlisted_file_is_refused_with_zero_requests() {
    let server = mock(Variant::Honest, true, 0);
    let client = connect(&server, false);
    let entry = client.get_skill(SKILL_MD).expect("skills/get");
    let skill = client.load_skill(&entry).expect("loaded");
    assert!(skill.instructions().ends_with("Skill body.\n"));
    let _ = scenario::posts(&server);
    for path in [
        "scripts/extract.py",
        "skill://pdf-processing/scripts/extract.py",
        "../other/SKILL.md",
    ] {
        let outcome = skill.read(path);
        let Err(Error::Skill(error)) = outcome else {
            panic!("{path}: {outcome:?}")
        };
        assert!(matches!(*error, SkillError::Unlisted { .. }), "{error}");
    }
    assert!(
        scenario::posts(&server).is_empty(),
        "nothing sent for unlisted files"
    );
    client.close();
}

#[test]
fn a_server_without_the_extension_gets_no_skills_request() {
    let server = mock(Variant::Honest, false, 0);
    let client = connect(&server, false);
    let _ = scenario::posts(&server);
    assert!(client.skills_settings().is_none());
    for outcome in [
        client.list_all_skills().map(drop),
        client.get_skill(SKILL_MD).map(drop),
    ] {
        assert!(
            matches!(
                outcome,
                Err(Error::Unsupported(Unsupported::Capability { .. }))
            ),
            "{outcome:?}"
        );
    }
    assert!(scenario::posts(&server).is_empty());
    client.close();
}

#[test]
fn a_skills_listing_is_cached_for_the_servers_ttl() {
    let server = mock(Variant::Honest, true, 60_000);
    let client = connect(&server, false);
    let count = |server: &http_server::Server| {
        scenario::methods(&scenario::posts(server))
            .iter()
            .filter(|m| *m == "skills/list")
            .count()
    };
    let _ = scenario::posts(&server);
    client.list_skills(None).expect("first");
    client.list_skills(None).expect("cached");
    assert_eq!(count(&server), 1);
    client
        .with(&RequestOptions::default().with_no_cache())
        .list_skills(None)
        .expect("past the cache");
    assert_eq!(count(&server), 1);
    client.close();
}

/// A server's `SKILL.md` of nested `[` (50,000 of them, 100 KB, over the frontmatter's size
/// bound; 30,000, 60 KB, under it but past its depth bound), with the size and digest its
/// entry gives: loading it fails as unreadable on a 2 MiB thread stack, and the client
/// lives on. The frontmatter check itself takes milliseconds; its limit of a second is the
/// acceptance bound, far above it.
#[test]
fn a_skill_md_of_deeply_nested_brackets_fails_to_load_on_a_small_stack() {
    for (depth, legacy) in [(50_000, false), (30_000, true)] {
        let server = mock(Variant::Nested(depth), true, 0);
        let client = connect(&server, legacy);
        let entry = client.get_skill(SKILL_MD).expect("skills/get");
        let (outcome, checked) = std::thread::scope(|scope| {
            let small = std::thread::Builder::new().stack_size(2 << 20);
            let loader = small.spawn_scoped(scope, || {
                let outcome = client.load_skill(&entry).map(drop);
                let body = Variant::Nested(depth).skill_md().1;
                let started = Instant::now();
                let check = entry.verify_frontmatter(&body);
                (outcome, (check, started.elapsed()))
            });
            loader.unwrap().join().expect("no stack overflow")
        });
        let Err(Error::Skill(error)) = outcome else {
            panic!("{depth}: {outcome:?}")
        };
        assert!(
            matches!(*error, SkillError::FrontmatterUnreadable { .. }),
            "{error}"
        );
        let (check, took) = checked;
        assert!(check.is_err());
        assert!(took < Duration::from_secs(1), "the check took {took:?}");
        assert_eq!(reads(&scenario::posts(&server)), vec![SKILL_MD.to_owned()]);
        client.ping().expect("the client lives on");
        client.close();
    }
}
