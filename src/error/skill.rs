//! The Skills extension's verdicts on an entry or a file read for it.

use std::fmt;

/// Why a skill may not be loaded, or a file of it may not be used. Each is a host-side
/// verdict: nothing was sent to the server about it. The remedy for a mismatch is to fetch
/// the entry again (`skills/get`) and, if it still fails, not to use the skill.
///
/// See the example on [`Skill`](crate::types::Skill).
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
