//! The bearer token `bridge --listen` requires of every HTTP request: `$UMCP_BRIDGE_TOKEN`
//! when set, else 32 random bytes (hex) written to a file only the user can read, whose path
//! is said on stderr, for the host's configuration to read it from.

use std::io::Write;
use std::path::{Path, PathBuf};

use crate::exit::Exit;

/// The variable a token may be given in.
pub const VARIABLE: &str = "UMCP_BRIDGE_TOKEN";

/// The shortest token taken from the environment: a short one is guessed.
const MIN_GIVEN: usize = 16;

/// The token hosts must send, and the file it was written to when generated.
pub struct Token {
    pub secret: String,
    pub file: Option<PathBuf>,
}

impl Token {
    /// `$UMCP_BRIDGE_TOKEN`, or a new token written to `file` (default: `bridge-PORT.token`
    /// in umcp's state directory).
    pub fn obtain(file: Option<&str>, port: u16) -> Result<Token, Exit> {
        if let Some(given) = std::env::var_os(VARIABLE).filter(|v| !v.is_empty()) {
            let given = given
                .into_string()
                .map_err(|_| Exit(2, format!("{VARIABLE} is not UTF-8")))?;
            if given.len() < MIN_GIVEN || !given.bytes().all(|b| b.is_ascii_graphic()) {
                let why = format!("{VARIABLE} must be at least {MIN_GIVEN} visible characters");
                return Err(Exit(2, why));
            }
            return Ok(Token {
                secret: given,
                file: None,
            });
        }
        let path = match file {
            Some(file) => PathBuf::from(file),
            None => crate::user_dirs::state_dir()
                .map(|d| d.join(format!("bridge-{port}.token")))
                .ok_or_else(|| {
                    Exit(
                        2,
                        format!(
                            "no state directory for the token: give --token-file or {VARIABLE}"
                        ),
                    )
                })?,
        };
        let secret = generate()?;
        write_private(&path, &secret).map_err(|e| {
            Exit(
                1,
                format!("bridge: writing the token to {}: {e}", path.display()),
            )
        })?;
        Ok(Token {
            secret,
            file: Some(path),
        })
    }

    /// Whether `header` (an `Authorization` value) carries the token; compared in time that
    /// does not depend on where they differ.
    pub fn admits(&self, header: Option<&str>) -> bool {
        let Some(given) = header.and_then(|h| h.strip_prefix("Bearer ")) else {
            return false;
        };
        let (given, secret) = (given.trim().as_bytes(), self.secret.as_bytes());
        given.len() == secret.len()
            && given
                .iter()
                .zip(secret)
                .fold(0u8, |diff, (a, b)| diff | (a ^ b))
                == 0
    }
}

/// 32 random bytes from the operating system, as hex.
fn generate() -> Result<String, Exit> {
    let mut bytes = [0u8; 32];
    getrandom::getrandom(&mut bytes)
        .map_err(|e| Exit(1, format!("bridge: no random bytes for the token: {e}")))?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// Writes `secret` to `path`, readable by the user alone: a file there before is replaced,
/// never written through (it may be a link, or readable by others).
fn write_private(path: &Path, secret: &str) -> std::io::Result<()> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)?;
    }
    match std::fs::remove_file(path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(e),
        _ => {}
    }
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let mut file = options.open(path)?;
    file.write_all(format!("{secret}\n").as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_exact_token_is_admitted() {
        let token = Token {
            secret: "abcdef0123456789".into(),
            file: None,
        };
        assert!(token.admits(Some("Bearer abcdef0123456789")));
        assert!(!token.admits(Some("Bearer abcdef012345678")));
        assert!(!token.admits(Some("Bearer abcdef0123456780")));
        assert!(!token.admits(Some("Basic abcdef0123456789")));
        assert!(!token.admits(None));
    }

    #[test]
    fn a_generated_token_is_written_for_the_user_alone() {
        let dir = std::env::temp_dir().join(format!("umcp-token-test-{}", std::process::id()));
        let path = dir.join("bridge.token");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(&path, "old").unwrap();
        let secret = generate().ok().unwrap();
        assert_eq!(secret.len(), 64);
        write_private(&path, &secret).unwrap();
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            format!("{secret}\n")
        );
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&path).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
