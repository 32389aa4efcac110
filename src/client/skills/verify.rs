//! The checks of what was read for a skill: a file's size and SHA-256 digest, and the
//! frontmatter of its `SKILL.md`, against the skill's entry.

use serde_json::{Map, Value};

use crate::error::SkillError;
use crate::types::{Skill, SkillResource};

use super::frontmatter;
use crate::sha256::sha256_digest;

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

impl Skill {
    /// Checks the frontmatter of `skill_md` (the text of this skill's `SKILL.md`) against the
    /// entry's, field by field; a field absent on one side equals `null` on the other, and
    /// numbers equal by value (`1` and `1.0`).
    ///
    /// The text is the server's, so it is read within bounds, whatever it holds: a
    /// frontmatter of at most 64 KiB between its `---` lines (the closing line is looked for
    /// no further), collections nested at most 64 deep, and time linear in its length. Past
    /// a bound, the frontmatter is unreadable.
    ///
    /// See the example on [`Skill`].
    ///
    /// # Errors
    ///
    /// [`SkillError::FrontmatterUnreadable`] when the text has no frontmatter umcp can read
    /// (or one past a bound), [`SkillError::FrontmatterMismatch`] naming the first field that
    /// differs.
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
