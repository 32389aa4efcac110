//! The URIs of a skill's files, a server's to choose: one the rules call inside the skill
//! stays inside it however often a host decodes it (no empty, `.` or `..` segment, no `/` or
//! `\` within a segment, no control character, and a second decoding, by a decoder that
//! leaves a malformed `%` as it is, changes nothing); an entry listing it validates exactly
//! when the rules call it inside; and the loaded skill holds it exactly then.

use serde_json::json;

use super::{percent_decode, within};

use crate::fuzz_engine::{Rng, Target};
use crate::types::{Skill, SkillResource};

const ROOT: &str = "skill://pdf-processing";

const DICTIONARY: &[&[u8]] = &[
    b"/",
    b"//",
    b".",
    b"..",
    b"../",
    b"./",
    b"%2e",
    b"%2E",
    b"%2f",
    b"%5c",
    b"%25",
    b"%252e",
    b"%00",
    b"%0a",
    b"%c3%a9",
    b"%ff",
    b"%",
    b"\\",
    b"?",
    b"#",
    b"skill://",
    b"skill://pdf-processing/",
    b"skill://pdf-processing-2/",
    b"SKILL.md",
];

#[test]
fn skill_file_uris_inside_the_skill_stay_inside_it() {
    Target {
        name: "skill-uris",
        dictionary: DICTIONARY,
        default_cases: 3000,
    }
    .run(check);
}

fn check(input: &[u8], rng: &mut Rng) {
    let text = String::from_utf8_lossy(input);
    let uri = if text.contains("://") || rng.one_in(4) {
        text.into_owned()
    } else {
        format!("{ROOT}/{text}")
    };
    let inside = within(ROOT, &uri);
    if inside {
        let path = &uri[ROOT.len() + 1..];
        for segment in path.split('/') {
            let once = percent_decode(segment).expect("a segment inside decodes");
            assert!(
                !matches!(once.as_str(), "" | "." | ".."),
                "segment {segment:?}"
            );
            assert!(!once.contains(['/', '\\']), "segment {segment:?}");
            assert!(!once.chars().any(char::is_control), "segment {segment:?}");
            assert_eq!(
                lenient(&once),
                once.as_bytes(),
                "decoded twice: {segment:?}"
            );
        }
    }
    let own = SkillResource::of(format!("{ROOT}/SKILL.md"), b"x");
    let entry: Skill = serde_json::from_value(json!({
        "uri": format!("{ROOT}/SKILL.md"),
        "frontmatter": {"name": "pdf-processing", "description": "d"},
        "resources": [own, SkillResource::of(uri.as_str(), b"y")],
    }))
    .expect("an entry");
    let duplicate = uri == format!("{ROOT}/SKILL.md");
    assert_eq!(entry.validate().is_ok(), inside && !duplicate, "{uri:?}");
    assert_eq!(entry.holds(&uri), inside, "{uri:?}");
    if inside {
        assert!(entry.resource(&uri).is_some(), "{uri:?}");
    }
}

/// `%XX` sequences decoded, any other `%` left as it is: how a lenient host decodes again.
fn lenient(text: &str) -> Vec<u8> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = bytes
            .get(i + 1..i + 3)
            .and_then(|h| std::str::from_utf8(h).ok());
        match hex.filter(|h| h.bytes().all(|b| b.is_ascii_hexdigit())) {
            Some(h) if bytes[i] == b'%' => {
                out.push(u8::from_str_radix(h, 16).expect("hex digits"));
                i += 3;
            }
            _ => {
                out.push(bytes[i]);
                i += 1;
            }
        }
    }
    out
}
