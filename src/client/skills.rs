//! The Skills extension on the client: listing and describing a server's skills, and loading
//! one, every file it reads checked against the skill's entry (see `docs/skills.md`).

mod directory;
mod flow;
mod frontmatter;
mod rules;
mod scalar;
mod verify;

use serde_json::json;

use crate::error::{Error, Result, SkillError, Unsupported};
use crate::types::{
    GetSkillResult, ListSkillsResult, Resource, ResourceContents, Skill, SkillResource,
    SkillResources, SkillsSettings, MAX_SKILL_BYTES, MAX_SKILL_FILES, SKILLS_EXTENSION,
};

use super::directory::inside;

use super::engine::request_options::RequestOptions;
use super::handle::Client;
use super::with_options::WithOptions;

/// The capability named when a server does not declare the extension.
const CAPABILITY: &str = "extensions.io.modelcontextprotocol/skills";

/// What a host accepts when it loads a skill: the spec's limits by default (512 files,
/// 16 MiB), and no dynamic skill, whose files cannot be verified.
///
/// ```
/// use umcp::SkillPolicy;
///
/// let policy = SkillPolicy::default().with_dynamic(true).with_limits(1024, 64 << 20);
/// assert!(policy.allows_dynamic());
/// ```
#[derive(Debug, Clone)]
pub struct SkillPolicy {
    dynamic: bool,
    max_files: usize,
    max_bytes: u64,
}

impl Default for SkillPolicy {
    fn default() -> SkillPolicy {
        SkillPolicy {
            dynamic: false,
            max_files: MAX_SKILL_FILES,
            max_bytes: MAX_SKILL_BYTES,
        }
    }
}

impl SkillPolicy {
    /// Whether a `"dynamic"` skill may be loaded (default no). Its `SKILL.md` is still checked
    /// against the entry's frontmatter; its files are read unverified, and only from inside
    /// the skill's root.
    ///
    /// See the example on [`SkillPolicy`].
    pub fn with_dynamic(mut self, allowed: bool) -> SkillPolicy {
        self.dynamic = allowed;
        self
    }

    /// The most files and total bytes a skill's entry may list; never below the spec's
    /// floor of 512 files and 16 MiB, which every host must accept.
    ///
    /// See the example on [`SkillPolicy`].
    pub fn with_limits(mut self, files: usize, bytes: u64) -> SkillPolicy {
        self.max_files = files.max(MAX_SKILL_FILES);
        self.max_bytes = bytes.max(MAX_SKILL_BYTES);
        self
    }

    /// Whether dynamic skills are loaded.
    ///
    /// See the example on [`SkillPolicy`].
    pub fn allows_dynamic(&self) -> bool {
        self.dynamic
    }
}

/// A skill loaded from its server: the entry it was loaded from (held for as long as the
/// skill is used), and its verified `SKILL.md`. Its other files are read only when asked for,
/// each only if the held entry lists it, and each verified before it is returned.
///
/// See the example on [`Client::load_skill`].
pub struct LoadedSkill<'c> {
    client: &'c Client,
    entry: Skill,
    instructions: String,
    // The options the skill was loaded with, which its reads keep.
    options: RequestOptions,
}

impl Client {
    /// The server's settings of the Skills extension (`io.modelcontextprotocol/skills`), or
    /// `None` when it did not declare it; then every skills method fails without sending.
    ///
    /// See the example on [`Client::load_skill`].
    pub fn skills_settings(&self) -> Option<SkillsSettings> {
        if !self.session.offers_extension(SKILLS_EXTENSION) {
            return None;
        }
        let settings = self.session.extensions().remove(SKILLS_EXTENSION);
        // Settings that do not parse still declare the extension.
        Some(
            settings
                .and_then(|s| serde_json::from_value(s).ok())
                .unwrap_or_default(),
        )
    }

    /// Lists one page of the server's skills (`skills/list`). The listing may be partial: a
    /// skill not in it may still be loaded by its URI ([`Client::get_skill`]). Nothing of
    /// any skill is read. The page is cached for the `ttlMs` the server gives, as the other
    /// listings are.
    ///
    /// See the example on [`Client::load_skill`].
    ///
    /// # Errors
    ///
    /// [`Error::Unsupported`] when the server did not declare the extension (nothing is
    /// sent), or any error of [`Client::request`].
    pub fn list_skills(&self, cursor: Option<&str>) -> Result<ListSkillsResult> {
        self.with(&RequestOptions::default()).list_skills(cursor)
    }

    /// Lists every skill, following cursors as [`Client::list_all_tools`] does.
    ///
    /// See the example on [`Client::load_skill`].
    ///
    /// # Errors
    ///
    /// As [`Client::list_skills`], plus [`Error::Protocol`] when the server repeats a cursor.
    pub fn list_all_skills(&self) -> Result<Vec<Skill>> {
        self.with(&RequestOptions::default()).list_all_skills()
    }

    /// The current entry of the skill whose `SKILL.md` is at `uri` (`skills/get`), listed or
    /// not. Nothing of the skill is read.
    ///
    /// See the example on [`Client::load_skill`].
    ///
    /// # Errors
    ///
    /// As [`Client::list_skills`]; a URI the server does not serve is [`Error::Rpc`] with
    /// code -32602, as the server sent it.
    pub fn get_skill(&self, uri: &str) -> Result<Skill> {
        self.with(&RequestOptions::default()).get_skill(uri)
    }

    /// Loads the skill `entry` describes: checks the entry, reads its `SKILL.md` with
    /// `resources/read`, and verifies its size, digest and frontmatter against the entry.
    /// The skill's other files are not read here; [`LoadedSkill::read`] reads one when asked.
    ///
    /// ```no_run
    /// # fn main() -> umcp::Result<()> {
    /// # let client = umcp::Client::connect(umcp::StdioConfig::new("server"))?;
    /// if client.skills_settings().is_some() {
    ///     for entry in client.list_all_skills()? {
    ///         log::info!("{}: {}", entry.uri, entry.description().unwrap_or(""));
    ///     }
    ///     let entry = client.get_skill("skill://pdf-processing/SKILL.md")?;
    ///     let skill = client.load_skill(&entry)?;
    ///     log::info!("{}", skill.instructions());
    ///     let forms = skill.read_text("references/FORMS.md")?;
    ///     # let _ = forms;
    /// }
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::Skill`] when the entry may not be loaded ([`SkillError::Invalid`], or
    /// [`SkillError::Dynamic`] under the default [`SkillPolicy`]) or the `SKILL.md` read
    /// differs from it; as [`Client::read_resource`] when the read fails.
    pub fn load_skill(&self, entry: &Skill) -> Result<LoadedSkill<'_>> {
        self.load_skill_under(entry, &SkillPolicy::default())
    }

    /// [`Client::load_skill`] under `policy` (dynamic skills, larger limits).
    ///
    /// See the example on [`Client::load_skill`].
    ///
    /// # Errors
    ///
    /// As [`Client::load_skill`].
    pub fn load_skill_under(&self, entry: &Skill, policy: &SkillPolicy) -> Result<LoadedSkill<'_>> {
        load(self, entry, policy, &RequestOptions::default())
    }

    /// Fails without sending when the server did not declare the Skills extension.
    fn require_skills(&self, method: &str) -> Result<()> {
        if self.session.offers_extension(SKILLS_EXTENSION) {
            return Ok(());
        }
        Err(Error::Unsupported(Unsupported::Capability {
            method: method.to_owned(),
            capability: CAPABILITY,
        }))
    }
}

impl<'a> WithOptions<'a> {
    /// [`Client::list_skills`] with these options.
    ///
    /// See the example on [`WithOptions`].
    ///
    /// # Errors
    ///
    /// As [`Client::list_skills`].
    pub fn list_skills(&self, cursor: Option<&str>) -> Result<ListSkillsResult> {
        self.client.require_skills("skills/list")?;
        self.client.follow();
        let params = cursor.map(|c| json!({ "cursor": c }));
        self.client.request_as("skills/list", params, self.options)
    }

    /// [`Client::list_all_skills`] with these options, applied to each page's request.
    ///
    /// See the example on [`WithOptions`].
    ///
    /// # Errors
    ///
    /// As [`Client::list_all_skills`].
    pub fn list_all_skills(&self) -> Result<Vec<Skill>> {
        self.client.require_skills("skills/list")?;
        self.all_pages("skills/list", "skills")
    }

    /// [`Client::get_skill`] with these options.
    ///
    /// See the example on [`WithOptions`].
    ///
    /// # Errors
    ///
    /// As [`Client::get_skill`].
    pub fn get_skill(&self, uri: &str) -> Result<Skill> {
        self.client.require_skills("skills/get")?;
        self.client.follow();
        let params = Some(json!({ "uri": uri }));
        let result: GetSkillResult = self.client.request_as("skills/get", params, self.options)?;
        Ok(result.skill)
    }

    /// [`Client::load_skill`] with these options, which the loaded skill's reads keep.
    ///
    /// See the example on [`WithOptions`].
    ///
    /// # Errors
    ///
    /// As [`Client::load_skill`].
    pub fn load_skill(&self, entry: &Skill) -> Result<LoadedSkill<'a>> {
        self.load_skill_under(entry, &SkillPolicy::default())
    }

    /// [`Client::load_skill_under`] with these options, which the loaded skill's reads keep.
    ///
    /// See the example on [`WithOptions`].
    ///
    /// # Errors
    ///
    /// As [`Client::load_skill`].
    pub fn load_skill_under(&self, entry: &Skill, policy: &SkillPolicy) -> Result<LoadedSkill<'a>> {
        load(self.client, entry, policy, self.options)
    }
}

impl LoadedSkill<'_> {
    /// The entry the skill was loaded from, held while it is used.
    ///
    /// See the example on [`Client::load_skill`].
    pub fn entry(&self) -> &Skill {
        &self.entry
    }

    /// The verified text of the skill's `SKILL.md`, frontmatter included.
    ///
    /// See the example on [`Client::load_skill`].
    pub fn instructions(&self) -> &str {
        &self.instructions
    }

    /// Reads one file of the skill, by URI or by path relative to its root
    /// (`references/FORMS.md`), and verifies it against its entry. A file the held entry does
    /// not list is refused before anything is sent.
    ///
    /// See the example on [`Client::load_skill`].
    ///
    /// # Errors
    ///
    /// [`Error::Skill`]: [`SkillError::Unlisted`] (nothing sent), or a size or digest
    /// mismatch (the content is not returned); as [`Client::read_resource`] when the read
    /// fails.
    ///
    /// The read keeps the options the skill was loaded with (`client.with(&options)
    /// .load_skill(…)`).
    pub fn read(&self, path_or_uri: &str) -> Result<Vec<u8>> {
        let unlisted = || SkillError::Unlisted {
            skill: self.entry.uri.clone(),
            uri: path_or_uri.to_owned(),
        };
        let uri = self.entry.resolve(path_or_uri).ok_or_else(unlisted)?;
        let listed = match &self.entry.resources {
            Some(SkillResources::Files(_)) => self.entry.resource(&uri).is_some(),
            // A dynamic skill (loaded only when the policy allowed it) lists nothing: any
            // file inside its root, unverified.
            _ => self.entry.holds(&uri),
        };
        if !listed {
            return Err(unlisted().into());
        }
        read_file(self.client, &self.entry, &uri, &self.options)
    }

    /// The direct children of one of the skill's directories, by path relative to its root
    /// (`""` for the root, `templates`) or by URI: files, and subdirectories as directory
    /// resources ([`Resource::is_directory`]).
    ///
    /// For a skill whose entry lists its files, the answer comes from the held entry and
    /// nothing is sent: the entry is what may be read, and a server's newer view of the
    /// directory does not extend it. A dynamic skill's directory is read from the server
    /// ([`Client::read_whole_directory`]), keeping only children inside it.
    ///
    /// ```no_run
    /// # fn main() -> umcp::Result<()> {
    /// # let client = umcp::Client::connect(umcp::StdioConfig::new("server"))?;
    /// let entry = client.get_skill("skill://pdf-processing/SKILL.md")?;
    /// let skill = client.load_skill(&entry)?;
    /// for child in skill.list_directory("templates")? {
    ///     if !child.is_directory() {
    ///         let text = skill.read_text(&child.uri)?;
    ///         log::info!("{}: {} bytes", child.name, text.len());
    ///     }
    /// }
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::Skill`] with [`SkillError::Unlisted`] when the path is not a directory the
    /// entry lists, or lies outside a dynamic skill's root (nothing sent); as
    /// [`Client::read_whole_directory`] for a dynamic skill.
    pub fn list_directory(&self, path_or_uri: &str) -> Result<Vec<Resource>> {
        if self.entry.files().is_some() {
            return Ok(self.entry.list_directory(path_or_uri)?);
        }
        let dir = self
            .entry
            .directory_uri(path_or_uri)
            .ok_or_else(|| SkillError::Unlisted {
                skill: self.entry.uri.clone(),
                uri: path_or_uri.to_owned(),
            })?;
        let children = self.client.with(&self.options).read_whole_directory(&dir)?;
        Ok(children
            .into_iter()
            .filter(|child| inside(&dir, &child.uri) && self.entry.holds(&child.uri))
            .collect())
    }

    /// [`LoadedSkill::read`] as UTF-8 text.
    ///
    /// See the example on [`Client::load_skill`].
    ///
    /// # Errors
    ///
    /// As [`LoadedSkill::read`], plus [`Error::Protocol`] when the file is not UTF-8.
    pub fn read_text(&self, path_or_uri: &str) -> Result<String> {
        String::from_utf8(self.read(path_or_uri)?)
            .map_err(|_| Error::Protocol(format!("{path_or_uri} is not UTF-8 text")))
    }
}

/// Checks `entry` against `policy`, then reads and verifies its `SKILL.md`.
fn load<'c>(
    client: &'c Client,
    entry: &Skill,
    policy: &SkillPolicy,
    options: &RequestOptions,
) -> Result<LoadedSkill<'c>> {
    client.require_skills("skills/get")?;
    entry.validate_within(policy.max_files, policy.max_bytes)?;
    if entry.resources == Some(SkillResources::Dynamic) && !policy.dynamic {
        return Err(SkillError::Dynamic {
            skill: entry.uri.clone(),
        }
        .into());
    }
    let bytes = read_file(client, entry, &entry.uri, options)?;
    let instructions = String::from_utf8(bytes).map_err(|_| SkillError::FrontmatterUnreadable {
        uri: entry.uri.clone(),
        reason: "SKILL.md is not UTF-8 text".into(),
    })?;
    entry.verify_frontmatter(&instructions)?;
    log::debug!("skill {} loaded", entry.uri);
    Ok(LoadedSkill {
        client,
        entry: entry.clone(),
        instructions,
        options: options.clone(),
    })
}

/// Reads `uri` of `entry` and verifies it against the entry's file, when it lists one. A
/// mismatch is read once more past the response cache, which may have held an older copy.
fn read_file(
    client: &Client,
    entry: &Skill,
    uri: &str,
    options: &RequestOptions,
) -> Result<Vec<u8>> {
    let file = entry
        .files()
        .and_then(|files| files.iter().find(|f| f.uri == uri));
    match fetch(client, file, uri, options) {
        Err(Error::Skill(e))
            if !options.no_cache
                && matches!(
                    *e,
                    SkillError::SizeMismatch { .. } | SkillError::DigestMismatch { .. }
                ) =>
        {
            fetch(client, file, uri, &options.clone().with_no_cache())
        }
        other => other,
    }
}

fn fetch(
    client: &Client,
    file: Option<&SkillResource>,
    uri: &str,
    options: &RequestOptions,
) -> Result<Vec<u8>> {
    let result = client.with(options).read_resource(uri)?;
    let contents = match result.contents.as_slice() {
        [only] => Some(only),
        many => many.iter().find(|c| c.uri() == uri),
    };
    let no_contents = || SkillError::NoContents {
        uri: uri.to_owned(),
    };
    let bytes = match contents.ok_or_else(no_contents)? {
        ResourceContents::Text(text) => text.text.as_bytes().to_vec(),
        ResourceContents::Blob(blob) => {
            // A blob far longer than the entry allows is not decoded at all.
            let bound = file
                .and_then(|f| f.size)
                .map(|s| s.saturating_mul(4) / 3 + 4);
            if bound.is_some_and(|bound| blob.blob.len() as u64 > bound) {
                return Err(SkillError::SizeMismatch {
                    uri: uri.to_owned(),
                    expected: file.and_then(|f| f.size).unwrap_or(0),
                    actual: blob.blob.len() as u64 / 4 * 3,
                }
                .into());
            }
            decode_base64(&blob.blob).ok_or_else(|| {
                Error::Protocol(format!("the contents of {uri} are not valid base64"))
            })?
        }
    };
    if let Some(file) = file {
        file.verify(&bytes)?;
    }
    Ok(bytes)
}

/// Standard base64 (RFC 4648 §4), padding optional; `None` on any other character.
fn decode_base64(text: &str) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(text.len() / 4 * 3);
    let mut buffer = 0u32;
    let mut bits = 0;
    for byte in text.trim_end_matches('=').bytes() {
        let value = match byte {
            b'A'..=b'Z' => byte - b'A',
            b'a'..=b'z' => byte - b'a' + 26,
            b'0'..=b'9' => byte - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            _ => return None,
        };
        buffer = (buffer << 6) | u32::from(value);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((buffer >> bits) as u8);
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests;
