//! Finds the program of a bare command name the way a Windows shell would, through `PATHEXT`.
//!
//! Windows launchers such as `npx` and `uvx` are `npx.cmd` and `uvx.exe` on disk, and
//! `CreateProcess` only appends `.exe` by itself, so `npx` alone fails with "program not found".
//! Looking the name up in the server's `PATH` with each `PATHEXT` extension gives the file a
//! shell would run; Rust's `Command` then runs `.cmd` and `.bat` files with safe quoting.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};

/// The extensions tried when `PATHEXT` is unset, in the order Windows uses by default.
const DEFAULT_PATHEXT: &str = ".COM;.EXE;.BAT;.CMD";

/// The program to start for `command`: the first `PATH` entry holding `command` plus one of the
/// `PATHEXT` extensions, or `command` unchanged when it has a directory or an extension of its
/// own, or when nothing matches (spawning then reports the usual error).
pub(super) fn program(command: &str, path: Option<&OsStr>, pathext: Option<&OsStr>) -> PathBuf {
    let as_given = Path::new(command);
    if as_given.components().count() != 1 || as_given.extension().is_some() {
        return as_given.to_path_buf();
    }
    let extensions = pathext
        .and_then(OsStr::to_str)
        .filter(|list| !list.trim().is_empty())
        .unwrap_or(DEFAULT_PATHEXT);
    let dirs = path.map(std::env::split_paths).into_iter().flatten();
    search(command, dirs, extensions).unwrap_or_else(|| as_given.to_path_buf())
}

/// The first `dir/command.ext` that is a file, directories first, then extensions in order.
fn search(command: &str, dirs: impl Iterator<Item = PathBuf>, extensions: &str) -> Option<PathBuf> {
    for dir in dirs {
        for ext in extensions
            .split(';')
            .map(str::trim)
            .filter(|e| e.starts_with('.'))
        {
            let candidate = dir.join(format!("{command}{}", ext.to_ascii_lowercase()));
            if candidate.is_file() {
                return Some(candidate);
            }
            let upper = dir.join(format!("{command}{ext}"));
            if upper.is_file() {
                return Some(upper);
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("umcp-resolve-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn a_bare_name_finds_the_launcher_through_pathext() {
        let (first, second) = (scratch("a"), scratch("b"));
        std::fs::write(second.join("npx.cmd"), "@echo off").unwrap();
        let path = std::env::join_paths([&first, &second]).unwrap();
        let found = program("npx", Some(&path), Some(OsStr::new(".COM;.EXE;.BAT;.CMD")));
        assert_eq!(found, second.join("npx.cmd"));
        // An .exe earlier in PATH wins over a .cmd later, as in a shell.
        std::fs::write(first.join("npx.exe"), "").unwrap();
        assert_eq!(program("npx", Some(&path), None), first.join("npx.exe"));
        let _ = std::fs::remove_dir_all(first);
        let _ = std::fs::remove_dir_all(second);
    }

    #[test]
    fn names_with_a_directory_or_an_extension_and_misses_are_left_alone() {
        let dir = scratch("c");
        let path = std::env::join_paths([&dir]).unwrap();
        assert_eq!(
            program("node.exe", Some(&path), None),
            PathBuf::from("node.exe")
        );
        assert_eq!(
            program("./server", Some(&path), None),
            PathBuf::from("./server")
        );
        assert_eq!(
            program("missing", Some(&path), None),
            PathBuf::from("missing")
        );
        assert_eq!(program("missing", None, None), PathBuf::from("missing"));
        let _ = std::fs::remove_dir_all(dir);
    }
}
