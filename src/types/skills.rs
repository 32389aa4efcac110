//! The Skills extension (`io.modelcontextprotocol/skills`): a server's skills, each a
//! `SKILL.md` with supporting files, listed with `skills/list`, described with `skills/get`,
//! and read with `resources/read`, every file checked against the skill's entry.
//!
//! An entry is a complete manifest: the `SKILL.md` URI, its frontmatter, and every file with
//! its SHA-256 digest and size (or `"dynamic"` for a skill generated on demand). The types
//! here read every entry a server sends, even an invalid one, so that one bad entry does not
//! hide the others; [`Skill::validate`] says whether an entry may be loaded, and the checks
//! of what was read ([`SkillResource::verify`], [`Skill::verify_frontmatter`]) say whether a
//! file may be used. Verification fails with a [`SkillError`](crate::types::SkillError).
//! These types hold the data; the checks, the digest and the frontmatter reader belong to the
//! client's Skills code.

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};

/// The extension's identifier, as servers declare it in `capabilities.extensions`.
///
/// See the example on [`Skill`].
pub const SKILLS_EXTENSION: &str = "io.modelcontextprotocol/skills";

/// The most files one skill may list that a host must accept (the spec's floor).
///
/// See the example on [`Skill`].
pub const MAX_SKILL_FILES: usize = 512;

/// The largest total size of one skill's files that a host must accept: 16 MiB.
///
/// See the example on [`Skill`].
pub const MAX_SKILL_BYTES: u64 = 16 * 1024 * 1024;

/// The server's settings of the Skills extension.
///
/// See the example on [`Skill`].
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SkillsSettings {
    /// Whether the server implements `resources/directory/read`.
    #[serde(default)]
    pub directory_read: bool,
    /// Settings umcp does not model, as sent.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// One file of a skill: where it is, and what its bytes must be.
///
/// See the example on [`Skill`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SkillResource {
    /// The file's resource URI.
    pub uri: String,
    /// `sha256:` and 64 lowercase hexadecimal digits: the SHA-256 of the file's raw bytes.
    #[serde(default)]
    pub digest: String,
    /// The length of the file's raw bytes (`None` when the server left it out, which makes
    /// the entry invalid).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<u64>,
    /// Members umcp does not model, as sent.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// A skill's files: every one listed, or `"dynamic"` for a skill generated on demand, whose
/// files cannot be verified.
///
/// See the example on [`Skill`].
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum SkillResources {
    /// Every file of the skill, its `SKILL.md` included.
    Files(Vec<SkillResource>),
    /// `"dynamic"`: the files are not listed.
    Dynamic,
    /// Anything else the server sent, kept so the entry can be refused with a reason.
    Other(Value),
}

/// A skill as `skills/list` and `skills/get` describe it: a complete manifest.
///
/// ```
/// use serde_json::json;
/// use umcp::types::{Skill, SkillResource};
///
/// let body = "---\nname: pdf\ndescription: Read PDFs\n---\nUse pdftotext.\n";
/// let entry: Skill = serde_json::from_value(json!({
///     "uri": "skill://pdf/SKILL.md",
///     "frontmatter": { "name": "pdf", "description": "Read PDFs" },
///     "resources": [SkillResource::of("skill://pdf/SKILL.md", body.as_bytes())],
/// }))?;
/// entry.validate()?;
/// entry.resource("SKILL.md").unwrap().verify(body.as_bytes())?;
/// entry.verify_frontmatter(body)?;
/// assert!(entry.resource("scripts/run.py").is_none());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Skill {
    /// The URI of the skill's `SKILL.md`.
    pub uri: String,
    /// The `SKILL.md` frontmatter as JSON, at least `name` and `description`.
    #[serde(default)]
    pub frontmatter: Map<String, Value>,
    /// The skill's files (`None` when the server left them out, which makes the entry
    /// invalid).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resources: Option<SkillResources>,
    /// Protocol-level metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Map<String, Value>>,
    /// Members umcp does not model, as sent.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// The result of `skills/list`: one page of skills.
///
/// See the example on [`Skill`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListSkillsResult {
    /// The skills of this page; an empty or partial listing does not mean the server has no
    /// other skills.
    #[serde(default, deserialize_with = "super::lenient::null_as_default")]
    pub skills: Vec<Skill>,
    /// The cursor of the next page, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
    /// How long, in milliseconds, the listing may be treated as current; `None` or 0 means
    /// stale at once. A value of another type reads as `None`, never failing the result.
    #[serde(
        default,
        deserialize_with = "super::lenient::ttl_ms",
        skip_serializing_if = "Option::is_none"
    )]
    pub ttl_ms: Option<u64>,
    /// `public` or `private`: who may share the cached listing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_scope: Option<String>,
    /// Protocol-level metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Map<String, Value>>,
}

/// The result of `skills/get`: one skill's entry as it is now.
///
/// See the example on [`Skill`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GetSkillResult {
    /// The skill's entry.
    pub skill: Skill,
    /// How long, in milliseconds, the entry may be treated as current; `None` or 0 means
    /// stale at once. A value of another type reads as `None`, never failing the result.
    #[serde(
        default,
        deserialize_with = "super::lenient::ttl_ms",
        skip_serializing_if = "Option::is_none"
    )]
    pub ttl_ms: Option<u64>,
    /// `public` or `private`: who may share the cached entry.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_scope: Option<String>,
    /// Protocol-level metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Map<String, Value>>,
}

impl Serialize for SkillResources {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            SkillResources::Files(files) => files.serialize(serializer),
            SkillResources::Dynamic => serializer.serialize_str("dynamic"),
            SkillResources::Other(value) => value.serialize(serializer),
        }
    }
}

impl<'de> Deserialize<'de> for SkillResources {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = Value::deserialize(deserializer)?;
        Ok(match value {
            Value::String(s) if s == "dynamic" => SkillResources::Dynamic,
            Value::Array(_) => match serde_json::from_value::<Vec<SkillResource>>(value.clone()) {
                Ok(files) => SkillResources::Files(files),
                Err(_) => SkillResources::Other(value),
            },
            other => SkillResources::Other(other),
        })
    }
}

impl Skill {
    /// The skill's `name` (from its frontmatter), if it is a string.
    ///
    /// See the example on [`Skill`].
    pub fn name(&self) -> Option<&str> {
        self.frontmatter.get("name").and_then(Value::as_str)
    }

    /// The skill's `description` (from its frontmatter), if it is a string.
    ///
    /// See the example on [`Skill`].
    pub fn description(&self) -> Option<&str> {
        self.frontmatter.get("description").and_then(Value::as_str)
    }

    /// The skill's root: its `SKILL.md` URI without `/SKILL.md`, when the URI ends so.
    ///
    /// See the example on [`Skill`].
    pub fn root(&self) -> Option<&str> {
        self.uri.strip_suffix("/SKILL.md")
    }

    /// The listed files, or `None` for a dynamic or invalid entry.
    ///
    /// See the example on [`Skill`].
    pub fn files(&self) -> Option<&[SkillResource]> {
        match &self.resources {
            Some(SkillResources::Files(files)) => Some(files),
            _ => None,
        }
    }

    /// The listed file at `path_or_uri`: a URI as listed, or a path relative to the skill's
    /// root (`references/GUIDE.md`, `SKILL.md`). `None` when the entry does not list it.
    ///
    /// See the example on [`Skill`].
    pub fn resource(&self, path_or_uri: &str) -> Option<&SkillResource> {
        let uri = self.resolve(path_or_uri)?;
        self.files()?.iter().find(|file| file.uri == uri)
    }

    /// `path_or_uri` as a URI: as is when it has a scheme, else relative to the skill's root.
    ///
    /// See the example on [`Skill`].
    pub fn resolve(&self, path_or_uri: &str) -> Option<String> {
        if path_or_uri.contains("://") {
            return Some(path_or_uri.to_owned());
        }
        let path = path_or_uri.trim_start_matches("./");
        Some(format!("{}/{path}", self.root()?))
    }
}
