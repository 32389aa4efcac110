//! The checks of skill entries and of what was read for them.

use serde_json::{json, Value};

use super::decode_base64;
use crate::error::SkillError;
use crate::types::{sha256_digest, Skill, SkillResource, SkillResources, MAX_SKILL_BYTES};

const BODY: &str = "---\nname: pdf-processing\ndescription: Extract, fill, and assemble PDF \
                    documents\n---\n\nSkill body.\n";

fn entry(resources: Value) -> Skill {
    serde_json::from_value(json!({
        "uri": "skill://pdf-processing/SKILL.md",
        "frontmatter": {"name": "pdf-processing", "description": "Extract, fill, and assemble PDF documents"},
        "resources": resources,
    }))
    .unwrap()
}

fn honest() -> Skill {
    entry(json!([
        SkillResource::of("skill://pdf-processing/SKILL.md", BODY.as_bytes()),
        SkillResource::of(
            "skill://pdf-processing/references/FORMS.md",
            b"Supporting content.\n"
        ),
    ]))
}

#[test]
fn the_suites_digests_are_those_computed_here() {
    // verify-digest's entry describes the 97-byte body ending in "Skill body.".
    assert_eq!(BODY.len(), 97);
    assert_eq!(
        sha256_digest(BODY.as_bytes()),
        "sha256:a6d5f1f48af94923633d597c756194482fe5d48f74e49eb54bc9ee7c4902d5ba"
    );
}

#[test]
fn an_honest_entry_validates_and_its_files_verify() {
    let skill = honest();
    skill.validate().unwrap();
    skill
        .resource("SKILL.md")
        .unwrap()
        .verify(BODY.as_bytes())
        .unwrap();
    skill.verify_frontmatter(BODY).unwrap();
    let forms = skill.resource("references/FORMS.md").unwrap();
    assert_eq!(forms.uri, "skill://pdf-processing/references/FORMS.md");
    assert!(skill.resource("scripts/extract.py").is_none());
}

#[test]
fn size_is_checked_before_the_digest_and_both_fail_typed() {
    let skill = honest();
    let file = skill.resource("SKILL.md").unwrap();
    let longer = format!("{BODY}extra\n");
    assert!(matches!(
        file.verify(longer.as_bytes()),
        Err(SkillError::SizeMismatch {
            expected: 97,
            actual: 103,
            ..
        })
    ));
    let evil = BODY.replace("Skill body.", "Evil body!!");
    assert_eq!(evil.len(), BODY.len());
    assert!(matches!(
        file.verify(evil.as_bytes()),
        Err(SkillError::DigestMismatch { .. })
    ));
}

#[test]
fn a_changed_frontmatter_field_is_named() {
    let skill = honest();
    let tampered = BODY.replace(
        "Extract, fill, and assemble PDF documents",
        "Exfiltrate credentials",
    );
    assert_eq!(
        skill.verify_frontmatter(&tampered),
        Err(SkillError::FrontmatterMismatch {
            uri: skill.uri.clone(),
            field: "description".into()
        })
    );
    // A field only one side has differs too; absent equals null.
    let extra = BODY.replace("---\n\n", "license: MIT\n---\n\n");
    assert!(
        matches!(skill.verify_frontmatter(&extra), Err(SkillError::FrontmatterMismatch { field, .. }) if field == "license")
    );
    let null = BODY.replace("---\n\n", "license: ~\n---\n\n");
    skill.verify_frontmatter(&null).unwrap();
    assert!(matches!(
        skill.verify_frontmatter("no frontmatter"),
        Err(SkillError::FrontmatterUnreadable { .. })
    ));
}

#[test]
fn invalid_entries_are_refused_with_a_reason() {
    let file = |uri: &str| SkillResource::of(uri, b"x");
    let own = file("skill://pdf-processing/SKILL.md");
    let cases = [
        entry(json!([
            file("skill://pdf-processing/../other/SKILL.md"),
            own.clone()
        ])),
        entry(json!([
            file("skill://pdf-processing/%2e%2e/x"),
            own.clone()
        ])),
        entry(json!([file("skill://elsewhere/x"), own.clone()])),
        entry(json!([own.clone(), own.clone()])),
        entry(json!([file("skill://pdf-processing/x")])),
        entry(
            json!([{"uri": "skill://pdf-processing/SKILL.md", "digest": "sha256:00", "size": 1}]),
        ),
        entry(json!([{"uri": "skill://pdf-processing/SKILL.md", "digest": own.digest}])),
        entry(json!("static")),
        serde_json::from_value(json!({"uri": "skill://pdf-processing/SKILL.md",
            "frontmatter": {"name": "pdf-processing", "description": "d"}}))
        .unwrap(),
        serde_json::from_value(json!({"uri": "skill://other/SKILL.md",
            "frontmatter": {"name": "pdf-processing", "description": "d"}, "resources": "dynamic"}))
        .unwrap(),
        serde_json::from_value(json!({"uri": "skill://Bad--Name/SKILL.md",
            "frontmatter": {"name": "Bad--Name", "description": "d"}, "resources": "dynamic"}))
        .unwrap(),
    ];
    for skill in cases {
        assert!(
            matches!(skill.validate(), Err(SkillError::Invalid { .. })),
            "{skill:?} should be invalid"
        );
    }
    let many: Vec<SkillResource> = (0..3)
        .map(|i| file(&format!("skill://pdf-processing/{i}")))
        .collect();
    let mut files = many.clone();
    files.push(own);
    let skill = entry(serde_json::to_value(files).unwrap());
    skill.validate().unwrap();
    assert!(skill.validate_within(3, MAX_SKILL_BYTES).is_err());
    assert!(skill.validate_within(10, 3).is_err());
}

#[test]
fn dynamic_and_unknown_resources_round_trip() {
    let dynamic = entry(json!("dynamic"));
    assert_eq!(dynamic.resources, Some(SkillResources::Dynamic));
    dynamic.validate().unwrap();
    assert_eq!(
        serde_json::to_value(&dynamic).unwrap()["resources"],
        "dynamic"
    );
    let other = entry(json!(42));
    assert_eq!(other.resources, Some(SkillResources::Other(json!(42))));
    assert_eq!(serde_json::to_value(&other).unwrap()["resources"], 42);
}

#[test]
fn uris_a_second_decoding_or_a_control_character_would_change_are_outside() {
    let own = SkillResource::of("skill://pdf-processing/SKILL.md", b"x");
    for uri in [
        "skill://pdf-processing/a%00b",
        "skill://pdf-processing/a/%252e%252e/b",
        "skill://pdf-processing/%252F",
        "skill://pdf-processing/a%0a",
        "skill://pdf-processing/a%+f",
        "skill://pdf-processing/a%2",
        "skill://pdf-processing/a%5c..%5cb",
    ] {
        let skill = entry(json!([SkillResource::of(uri, b"x"), own.clone()]));
        assert!(
            matches!(skill.validate(), Err(SkillError::Invalid { .. })),
            "{uri} should be refused"
        );
        assert!(!skill.holds(uri), "{uri}");
    }
    // A percent sign of its own, and encoded letters, are names like any other.
    for uri in [
        "skill://pdf-processing/100%25.md",
        "skill://pdf-processing/a%20b.md",
    ] {
        let skill = entry(json!([SkillResource::of(uri, b"x"), own.clone()]));
        skill.validate().unwrap();
    }
}

#[test]
fn base64_decodes_with_or_without_padding_and_refuses_other_characters() {
    assert_eq!(decode_base64("aGVsbG8=").unwrap(), b"hello");
    assert_eq!(decode_base64("aGVsbG8").unwrap(), b"hello");
    assert_eq!(decode_base64("").unwrap(), b"");
    assert!(decode_base64("aGV sbG8=").is_none());
}
