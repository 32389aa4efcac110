//! The Skills extension's rules for an entry: its name, its files, their digests and sizes,
//! and URIs that stay inside the skill.

use crate::error::SkillError;
use crate::types::{Skill, SkillResources, MAX_SKILL_BYTES, MAX_SKILL_FILES};

impl Skill {
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
/// `.` or `..` segment and no `/` or `\` inside one (percent-encoded ones included), which
/// could lead out of it, and no segment a second decoding would change (`%252e%252e` is
/// `%2e%2e` once decoded, `..` twice) or that holds a control character once decoded
/// (`%00`): a host that maps URIs to files, or decodes them again, reads neither as the
/// server's name for a file.
pub(super) fn within(root: &str, uri: &str) -> bool {
    let Some(path) = uri
        .strip_prefix(root)
        .and_then(|rest| rest.strip_prefix('/'))
    else {
        return false;
    };
    !path.contains(['?', '#', '\\'])
        && path.split('/').all(|segment| {
            percent_decode(segment).is_some_and(|decoded| {
                !matches!(decoded.as_str(), "" | "." | "..")
                    && !decoded.contains(['/', '\\'])
                    && !decoded.chars().any(char::is_control)
                    && !has_escape(&decoded)
            })
        })
}

/// Whether `text` holds a `%` followed by two hexadecimal digits.
fn has_escape(text: &str) -> bool {
    text.as_bytes()
        .windows(3)
        .any(|w| w[0] == b'%' && w[1].is_ascii_hexdigit() && w[2].is_ascii_hexdigit())
}

/// `%XX` sequences decoded; `None` when one is malformed or the result is not UTF-8.
fn percent_decode(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = bytes.get(i + 1..i + 3)?;
            if !hex.iter().all(u8::is_ascii_hexdigit) {
                return None;
            }
            let digit = |b: u8| (b as char).to_digit(16).unwrap_or(0) as u8;
            out.push(digit(hex[0]) << 4 | digit(hex[1]));
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

#[cfg(test)]
#[path = "../../../tests/fuzz/internal/skill_uris.rs"]
mod fuzz;
