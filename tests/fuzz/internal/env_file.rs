//! The env file reader (VS Code's `envFile`): names valid and each once, no value across a line
//! break; an error names a line that is there and is no variable; and what it read, written
//! back as `NAME="value"` lines, reads back the same.

use super::parse;

use crate::fuzz_engine::{Rng, Target};

const DICTIONARY: &[&[u8]] = &[
    b"\n",
    b"\r\n",
    b"=",
    b"export ",
    b"#",
    b"\"",
    b"'",
    b"API_KEY=",
    b" = ",
    b"\xc3\xa9",
];

#[test]
fn env_files_read_each_name_once_and_write_back() {
    Target {
        name: "env-file",
        dictionary: DICTIONARY,
        default_cases: 2000,
    }
    .run(check);
}

fn check(input: &[u8], _rng: &mut Rng) {
    let text = String::from_utf8_lossy(input);
    let vars = match parse(&text) {
        Ok(vars) => vars,
        Err(e) => {
            let number: usize = e
                .strip_prefix("line ")
                .and_then(|rest| rest.split(':').next())
                .and_then(|n| n.parse().ok())
                .unwrap_or_else(|| panic!("an error without its line: {e}"));
            // Lines end at `\n`, `\r\n` or a lone `\r`.
            let lines = text.replace("\r\n", "\n").replace('\r', "\n");
            let line = lines.split('\n').nth(number - 1).map(str::trim);
            assert!(
                line.is_some_and(|l| !l.is_empty() && !l.starts_with('#')),
                "{e} names {line:?}"
            );
            return;
        }
    };
    let mut names: Vec<&str> = vars.iter().map(|(k, _)| k.as_str()).collect();
    for (name, value) in &vars {
        assert!(
            !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'),
            "name {name:?}"
        );
        assert!(
            !value.contains(['\n', '\r']),
            "a value across lines: {value:?}"
        );
    }
    names.sort_unstable();
    let count = names.len();
    names.dedup();
    assert_eq!(names.len(), count, "a name read twice");
    let written: String = vars.iter().map(|(k, v)| format!("{k}=\"{v}\"\n")).collect();
    assert_eq!(
        parse(&written).as_ref(),
        Ok(&vars),
        "written back as {written:?}"
    );
}
