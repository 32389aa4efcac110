//! The Skills extension (`io.modelcontextprotocol/skills`): a server's skills, each a
//! `SKILL.md` with supporting files, listed with `skills/list`, described with `skills/get`,
//! and read with `resources/read`, every file checked against the skill's entry.
//!
//! An entry is a complete manifest: the `SKILL.md` URI, its frontmatter, and every file with
//! its SHA-256 digest and size (or `"dynamic"` for a skill generated on demand). The types
//! here read every entry a server sends, even an invalid one, so that one bad entry does not
//! hide the others; [`Skill::validate`] says whether an entry may be loaded, and the checks
//! of what was read ([`SkillResource::verify`], [`Skill::verify_frontmatter`]) say whether a
//! file may be used. Verification fails with a [`SkillError`].

mod directory;
mod frontmatter;
mod sha256;

use std::fmt;

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

/// Why a skill may not be loaded, or a file of it may not be used. Each is a host-side
/// verdict: nothing was sent to the server about it. The remedy for a mismatch is to fetch
/// the entry again (`skills/get`) and, if it still fails, not to use the skill.
///
/// See the example on [`Skill`].
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum SkillError {
    /// The entry breaks the extension's rules (no files listed, a file outside the skill, a
    /// name that does not match its URI, over the size limits, …).
    Invalid {
        /// The skill's `SKILL.md` URI.
        skill: String,
        /// What is wrong.
        reason: String,
    },
    /// The skill is `"dynamic"`: its files cannot be verified, and the host declined it.
    Dynamic {
        /// The skill's `SKILL.md` URI.
        skill: String,
    },
    /// A file the entry does not list was asked for; it was not read.
    Unlisted {
        /// The skill's `SKILL.md` URI.
        skill: String,
        /// The URI asked for.
        uri: String,
    },
    /// The file read has another length than its entry says.
    SizeMismatch {
        /// The file's URI.
        uri: String,
        /// The entry's size.
        expected: u64,
        /// The length read (at least this much when the read was cut short).
        actual: u64,
    },
    /// The file read has another SHA-256 than its entry says.
    DigestMismatch {
        /// The file's URI.
        uri: String,
        /// The entry's digest.
        expected: String,
        /// The digest of what was read.
        actual: String,
    },
    /// The `SKILL.md` read says something else in its frontmatter than the entry.
    FrontmatterMismatch {
        /// The `SKILL.md` URI.
        uri: String,
        /// The first field that differs.
        field: String,
    },
    /// The `SKILL.md` read has no frontmatter umcp can read (none at all, or YAML beyond
    /// the plain mappings, sequences and scalars frontmatter uses), so it cannot be checked.
    FrontmatterUnreadable {
        /// The `SKILL.md` URI.
        uri: String,
        /// Why.
        reason: String,
    },
    /// The server's answer to `resources/read` held no usable contents for the file.
    NoContents {
        /// The file's URI.
        uri: String,
    },
}

impl fmt::Display for SkillError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SkillError::Invalid { skill, reason } => write!(f, "invalid skill {skill}: {reason}"),
            SkillError::Dynamic { skill } => write!(
                f,
                "skill {skill} is dynamic: its files are not listed and cannot be verified"
            ),
            SkillError::Unlisted { skill, uri } => {
                write!(f, "{uri} is not a file skill {skill} lists; not read")
            }
            SkillError::SizeMismatch {
                uri,
                expected,
                actual,
            } => write!(
                f,
                "verification failed: {uri} is {actual} bytes, its entry says {expected}"
            ),
            SkillError::DigestMismatch {
                uri,
                expected,
                actual,
            } => write!(
                f,
                "verification failed: {uri} has digest {actual}, its entry says {expected}"
            ),
            SkillError::FrontmatterMismatch { uri, field } => write!(
                f,
                "verification failed: the frontmatter of {uri} differs from its entry in `{field}`"
            ),
            SkillError::FrontmatterUnreadable { uri, reason } => write!(
                f,
                "verification failed: the frontmatter of {uri} cannot be checked: {reason}"
            ),
            SkillError::NoContents { uri } => {
                write!(f, "the server returned no contents for {uri}")
            }
        }
    }
}

impl std::error::Error for SkillError {}

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

impl SkillResource {
    /// The entry of a file of `bytes` at `uri`: its digest and size computed here.
    ///
    /// See the example on [`Skill`].
    pub fn of(uri: impl Into<String>, bytes: &[u8]) -> SkillResource {
        SkillResource {
            uri: uri.into(),
            digest: sha256_digest(bytes),
            size: Some(bytes.len() as u64),
            extra: Map::new(),
        }
    }

    /// Checks `bytes` read for this file: the size first (a wrong length fails without
    /// hashing), then the digest.
    ///
    /// See the example on [`Skill`].
    ///
    /// # Errors
    ///
    /// [`SkillError::SizeMismatch`] or [`SkillError::DigestMismatch`].
    pub fn verify(&self, bytes: &[u8]) -> Result<(), SkillError> {
        let actual = bytes.len() as u64;
        let expected = self.size.unwrap_or(0);
        if self.size != Some(actual) {
            return Err(SkillError::SizeMismatch {
                uri: self.uri.clone(),
                expected,
                actual,
            });
        }
        let digest = sha256_digest(bytes);
        if digest != self.digest {
            return Err(SkillError::DigestMismatch {
                uri: self.uri.clone(),
                expected: self.digest.clone(),
                actual: digest,
            });
        }
        Ok(())
    }
}

/// `sha256:` and the 64 lowercase hexadecimal digits of the SHA-256 of `bytes`, as skill
/// entries write digests.
///
/// ```
/// assert_eq!(
///     umcp::types::sha256_digest(b"abc"),
///     "sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
/// );
/// ```
pub fn sha256_digest(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(71);
    out.push_str("sha256:");
    for byte in sha256::digest(bytes) {
        out.push_str(&format!("{byte:02x}"));
    }
    out
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

    /// Whether `uri` names a file inside the skill's root (listed or not).
    pub(crate) fn holds(&self, uri: &str) -> bool {
        self.root().is_some_and(|root| within(root, uri))
    }

    /// Checks the entry against the extension's rules, with the spec's limits (512 files,
    /// 16 MiB in all); a dynamic entry passes.
    ///
    /// See the example on [`Skill`].
    ///
    /// # Errors
    ///
    /// [`SkillError::Invalid`] saying what is wrong.
    pub fn validate(&self) -> Result<(), SkillError> {
        self.validate_within(MAX_SKILL_FILES, MAX_SKILL_BYTES)
    }

    /// [`Skill::validate`] with other limits on the number of files and their total size.
    ///
    /// See the example on [`Skill`].
    ///
    /// # Errors
    ///
    /// As [`Skill::validate`].
    pub fn validate_within(&self, max_files: usize, max_bytes: u64) -> Result<(), SkillError> {
        let invalid = |reason: String| SkillError::Invalid {
            skill: self.uri.clone(),
            reason,
        };
        let root = self
            .root()
            .ok_or_else(|| invalid("its URI does not end in /SKILL.md".into()))?;
        let name = self
            .name()
            .ok_or_else(|| invalid("its frontmatter has no string `name`".into()))?;
        if !valid_name(name) {
            return Err(invalid(format!(
                "the name {name:?} is not 1-64 lowercase letters, digits and single hyphens"
            )));
        }
        let last = root.rsplit('/').next().unwrap_or_default();
        if percent_decode(last).as_deref() != Some(name) {
            return Err(invalid(format!(
                "the last segment of its path, {last:?}, is not its name {name:?}"
            )));
        }
        match self.description() {
            Some(d) if !d.is_empty() && d.chars().count() <= 1024 => {}
            _ => {
                return Err(invalid(
                    "its frontmatter has no `description` of 1-1024 characters".into(),
                ))
            }
        }
        let files = match &self.resources {
            None => return Err(invalid("it lists no `resources`".into())),
            Some(SkillResources::Dynamic) => return Ok(()),
            Some(SkillResources::Other(_)) => {
                return Err(invalid(
                    "its `resources` is neither a list of files nor \"dynamic\"".into(),
                ))
            }
            Some(SkillResources::Files(files)) => files,
        };
        if files.len() > max_files {
            return Err(invalid(format!(
                "it lists {} files, more than {max_files}",
                files.len()
            )));
        }
        let mut seen = std::collections::HashSet::new();
        let mut total: u64 = 0;
        for file in files {
            if !seen.insert(file.uri.as_str()) {
                return Err(invalid(format!("it lists {} twice", file.uri)));
            }
            if !within(root, &file.uri) {
                return Err(invalid(format!("{} is outside the skill", file.uri)));
            }
            if !valid_digest(&file.digest) {
                return Err(invalid(format!("{} has no valid sha256 digest", file.uri)));
            }
            let size = file
                .size
                .ok_or_else(|| invalid(format!("{} has no size", file.uri)))?;
            total = total.saturating_add(size);
        }
        if !seen.contains(self.uri.as_str()) {
            return Err(invalid("it does not list its own SKILL.md".into()));
        }
        if total > max_bytes {
            return Err(invalid(format!(
                "its files are {total} bytes in all, more than {max_bytes}"
            )));
        }
        Ok(())
    }

    /// Checks the frontmatter of `skill_md` (the text of this skill's `SKILL.md`) against the
    /// entry's, field by field; a field absent on one side equals `null` on the other, and
    /// numbers equal by value (`1` and `1.0`).
    ///
    /// See the example on [`Skill`].
    ///
    /// # Errors
    ///
    /// [`SkillError::FrontmatterUnreadable`] when the text has no frontmatter umcp can read,
    /// [`SkillError::FrontmatterMismatch`] naming the first field that differs.
    pub fn verify_frontmatter(&self, skill_md: &str) -> Result<(), SkillError> {
        let read =
            frontmatter::parse(skill_md).map_err(|reason| SkillError::FrontmatterUnreadable {
                uri: self.uri.clone(),
                reason,
            })?;
        let mut keys: Vec<&String> = self.frontmatter.keys().chain(read.keys()).collect();
        keys.sort();
        keys.dedup();
        for key in keys {
            let ours = self.frontmatter.get(key).unwrap_or(&Value::Null);
            let theirs = read.get(key).unwrap_or(&Value::Null);
            if !same(ours, theirs) {
                return Err(SkillError::FrontmatterMismatch {
                    uri: self.uri.clone(),
                    field: key.clone(),
                });
            }
        }
        Ok(())
    }
}

/// JSON equality as JavaScript's deep equality has it: numbers by value, objects whatever
/// their key order.
fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => match (x.as_i64(), y.as_i64()) {
            (Some(x), Some(y)) => x == y,
            _ => x.as_f64() == y.as_f64(),
        },
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| same(a, b))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| same(v, w)))
        }
        _ => a == b,
    }
}

/// A skill name: 1-64 of `a-z`, `0-9` and `-`, no hyphen first, last or doubled.
fn valid_name(name: &str) -> bool {
    let ok_chars = name
        .bytes()
        .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-');
    ok_chars
        && (1..=64).contains(&name.len())
        && !name.starts_with('-')
        && !name.ends_with('-')
        && !name.contains("--")
}

fn valid_digest(digest: &str) -> bool {
    digest.strip_prefix("sha256:").is_some_and(|hex| {
        hex.len() == 64
            && hex
                .bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
    })
}

/// Whether `uri` names a file inside the skill rooted at `root`: under it, with no empty,
/// `.` or `..` segment (percent-encoded ones included), which could lead out of it.
fn within(root: &str, uri: &str) -> bool {
    let Some(path) = uri
        .strip_prefix(root)
        .and_then(|rest| rest.strip_prefix('/'))
    else {
        return false;
    };
    !path.contains(['?', '#', '\\'])
        && path.split('/').all(|segment| {
            let decoded = percent_decode(segment);
            !matches!(decoded.as_deref(), None | Some("" | "." | ".."))
                && !decoded.is_some_and(|d| d.contains('/'))
        })
}

/// `%XX` sequences decoded; `None` when one is malformed or the result is not UTF-8.
fn percent_decode(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = text.get(i + 1..i + 3)?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

#[cfg(test)]
mod tests;
