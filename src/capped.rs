//! Reading a whole file whose size nobody vouches for (a configuration found in a checkout, a
//! recording): at most a bound, checked as it is read, so a huge or endless file (a FIFO,
//! `/dev/zero`) is refused without being held in memory.

use std::fs::File;
use std::io::{self, Read};
use std::path::Path;

/// The text of the file at `path`, refused (`InvalidData`) when it is longer than `limit`
/// bytes or not UTF-8.
pub(crate) fn read_text(path: &Path, limit: u64) -> io::Result<String> {
    let file = File::open(path)?;
    let mut bytes = Vec::new();
    file.take(limit.saturating_add(1)).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > limit {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!("larger than {}", size(limit)),
        ));
    }
    String::from_utf8(bytes).map_err(|_| io::Error::new(io::ErrorKind::InvalidData, "not UTF-8"))
}

/// `bytes` in the largest binary unit that divides it (`16 MiB`, `64 KiB`, `100 bytes`).
fn size(bytes: u64) -> String {
    match bytes {
        b if b >= 1 << 20 && b % (1 << 20) == 0 => format!("{} MiB", b >> 20),
        b if b >= 1 << 10 && b % (1 << 10) == 0 => format!("{} KiB", b >> 10),
        b => format!("{b} bytes"),
    }
}

#[cfg(test)]
mod tests {
    use super::read_text;

    #[test]
    fn a_file_over_the_bound_is_refused_and_one_within_it_read() {
        let dir = std::env::temp_dir().join(format!("umcp-capped-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("f");
        std::fs::write(&path, "x".repeat(2048)).unwrap();
        assert_eq!(read_text(&path, 2048).unwrap().len(), 2048);
        let error = read_text(&path, 2047).unwrap_err();
        assert_eq!(error.to_string(), "larger than 2047 bytes");
        assert_eq!(
            read_text(&path, 1024).unwrap_err().to_string(),
            "larger than 1 KiB"
        );
        #[cfg(unix)]
        assert!(read_text(std::path::Path::new("/dev/zero"), 1 << 20).is_err());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
