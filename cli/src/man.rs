//! The manual page (`man 1 umcp`), written in the `man` macros of roff from the same table,
//! [`spec`](crate::spec), as `--help` and the completions.

use crate::spec::{
    ABOUT, COMMANDS, ENVIRONMENT, EXAMPLES, EXIT_CODES, FILES, FILES_WHEN, FLAGS, ONE_SERVER,
};

/// The page, ready for `man -l` or a `man1` directory.
pub fn page() -> String {
    let mut page = String::from(".\\\" The manual page of umcp, printed by `umcp man`.\n");
    page += &format!(
        ".TH UMCP 1 \"\" \"umcp {}\" \"User Commands\"\n",
        env!("CARGO_PKG_VERSION")
    );
    // No hyphenation and a ragged right margin: the page is full of paths and options.
    page += ".nh\n.ad l\n";
    page += &format!(".SH NAME\numcp \\- {}\n", prose(ABOUT));
    page += ".SH SYNOPSIS\n.B umcp\n[\\fIOPTIONS\\fR] \\fICOMMAND\\fR [\\fIARGS\\fR]\n";
    page += ".SH DESCRIPTION\n";
    page += &prose(
        "umcp lists and calls the tools, resources and prompts of Model Context Protocol \
         servers: one started with --stdio, one at --url, or every server of a configuration \
         file (see FILES). umcp COMMAND --help shows the help of one command. Whatever a \
         server wrote is shown with its control characters, bidi controls and invisible \
         characters escaped (ESC as \\u{1b}), on a terminal or not; --json prints the same \
         text as JSON strings, those characters as \\u escapes.",
    );
    page += "\n.SH COMMANDS\n";
    page += &commands();
    page += ".SH OPTIONS\n";
    page += &options();
    page += &reference();
    page
}

/// The entries of COMMANDS, each with its details and whether it needs one server.
fn commands() -> String {
    let mut page = String::new();
    for cmd in COMMANDS {
        page += &format!(".TP\n\\fB{}\\fR", code(cmd.name));
        if !cmd.args.is_empty() {
            page += &format!(" \\fI{}\\fR", code(cmd.args));
        }
        page += &format!("\n{}\n", prose(cmd.help));
        // Details of several lines are command lines, each shown as it is typed.
        match cmd.details.lines().count() {
            0 => {}
            1 => page += &format!(".br\n{}\n", prose(cmd.details)),
            _ => {
                page += ".nf\n";
                for line in cmd.details.lines() {
                    page += &format!("{}\n", code(line.trim()));
                }
                page += ".fi\n";
            }
        }
        if cmd.one_server {
            page += &format!(".br\n{}\n", prose(ONE_SERVER));
        }
    }
    page
}

/// The entries of OPTIONS, each with its value and choices.
fn options() -> String {
    let mut page = String::new();
    for flag in FLAGS {
        page += &format!(".TP\n\\fB\\-\\-{}\\fR", code(flag.long));
        if let Some(value) = flag.value {
            page += &format!(" \\fI{}\\fR", code(value));
        }
        page += &format!("\n{}\n", prose(flag.help));
        if !flag.choices.is_empty() {
            let choices: Vec<String> = flag
                .choices
                .iter()
                .map(|c| format!("\\fB{}\\fR", code(c)))
                .collect();
            page += &format!(".br\nOne of: {}.\n", choices.join(", "));
        }
    }
    page
}

/// ENVIRONMENT, FILES, EXIT STATUS and EXAMPLES.
fn reference() -> String {
    let mut page = String::from(".SH ENVIRONMENT\n");
    for (name, meaning) in ENVIRONMENT {
        page += &format!(".TP\n.B {}\n{}\n", code(name), prose(meaning));
    }
    page += &format!(
        ".SH FILES\n{}:\n.PP\n.RS\n.nf\n",
        prose(&capitalized(FILES_WHEN))
    );
    for line in FILES.lines() {
        page += &code(line.strip_prefix("  ").unwrap_or(line));
        page.push('\n');
    }
    page += ".fi\n.RE\n.SH \"EXIT STATUS\"\n";
    for (code, meaning) in EXIT_CODES {
        page += &format!(".TP\n.B {code}\n{}\n", prose(meaning));
    }
    page += ".SH EXAMPLES\n";
    for (line, what) in EXAMPLES {
        page += &format!(
            ".PP\n{}:\n.PP\n.RS\n.nf\n{}\n.fi\n.RE\n",
            prose(&capitalized(what)),
            code(line)
        );
    }
    page
}

/// Text to be typed as it is: every hyphen is a minus sign (`\-`), so that it copies as one.
fn code(text: &str) -> String {
    escaped(text, |_, _| true)
}

/// Running text: only the hyphens of options (`--stdio`, `-y`) are minus signs; the others
/// (start-up) stay hyphens.
fn prose(text: &str) -> String {
    escaped(text, |before, after| {
        matches!(before, None | Some(' ' | '(' | '-')) || after == Some('-')
    })
}

/// `text` with roff's special characters escaped: backslashes, the hyphens `minus` picks,
/// non-ASCII (`…` as three dots, others as `\[uXXXX]`, read whatever the page's encoding) and a
/// leading `.` or `'`.
fn escaped(text: &str, minus: impl Fn(Option<char>, Option<char>) -> bool) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    if matches!(chars.first(), Some('.' | '\'')) {
        out += "\\&";
    }
    for (i, &c) in chars.iter().enumerate() {
        let before = i.checked_sub(1).map(|j| chars[j]);
        match c {
            '\\' => out += "\\e",
            '-' if minus(before, chars.get(i + 1).copied()) => out += "\\-",
            '…' => out += "...",
            c if !c.is_ascii() => out += &format!("\\[u{:04X}]", u32::from(c)),
            c => out.push(c),
        }
    }
    out
}

fn capitalized(text: &str) -> String {
    let mut chars = text.chars();
    chars
        .next()
        .map(|first| first.to_uppercase().chain(chars).collect())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec;

    #[test]
    fn every_command_and_option_has_its_entry() {
        let page = page();
        let section = |name: &str| {
            let start = page.find(&format!(".SH {name}\n")).expect(name);
            let rest = &page[start + 1..];
            rest[..rest.find("\n.SH ").unwrap_or(rest.len())].to_owned()
        };
        let (commands, options) = (section("COMMANDS"), section("OPTIONS"));
        for cmd in COMMANDS {
            let entry = format!(".TP\n\\fB{}\\fR", code(cmd.name));
            assert!(commands.contains(&entry), "{}: {commands}", cmd.name);
            assert!(commands.contains(&prose(cmd.help)), "{}", cmd.name);
        }
        for flag in FLAGS {
            let entry = format!(".TP\n\\fB\\-\\-{}\\fR", code(flag.long));
            assert!(options.contains(&entry), "--{}: {options}", flag.long);
            for choice in flag.choices {
                assert!(options.contains(&code(choice)), "--{} {choice}", flag.long);
            }
        }
        assert_eq!(
            commands.matches(".TP\n").count(),
            COMMANDS.len(),
            "one entry per command"
        );
        assert_eq!(options.matches(".TP\n").count(), FLAGS.len());
        for (code, _) in EXIT_CODES {
            assert!(page.contains(&format!(".TP\n.B {code}\n")), "{code}");
        }
        let environment = section("ENVIRONMENT");
        for (name, meaning) in ENVIRONMENT {
            let entry = format!(".TP\n.B {}\n{}", code(name), prose(meaning));
            assert!(environment.contains(&entry), "{name}: {environment}");
        }
    }

    #[test]
    fn the_page_is_plain_roff() {
        let page = page();
        let mut lines = page.lines();
        assert!(
            lines.next().unwrap().starts_with(".\\\" "),
            "a comment first"
        );
        assert!(lines.next().unwrap().starts_with(".TH UMCP 1 "));
        let headings: Vec<&str> = page.lines().filter(|l| l.starts_with(".SH ")).collect();
        assert_eq!(
            headings,
            [
                ".SH NAME",
                ".SH SYNOPSIS",
                ".SH DESCRIPTION",
                ".SH COMMANDS",
                ".SH OPTIONS",
                ".SH ENVIRONMENT",
                ".SH FILES",
                ".SH \"EXIT STATUS\"",
                ".SH EXAMPLES"
            ]
        );
        for line in page.lines() {
            assert!(line.is_ascii(), "{line}");
            // Requests: only the man macros this page uses, never a stray `.` or `'` line.
            if line.starts_with(['.', '\'']) {
                let request = line.split(' ').next().unwrap_or_default();
                let known = [
                    ".\\\"", ".TH", ".nh", ".ad", ".SH", ".TP", ".PP", ".RS", ".RE", ".B", ".br",
                    ".nf", ".fi",
                ];
                assert!(known.contains(&request), "unknown request: {line}");
            }
            // Every escape is one of those the page means to write, and each font change is
            // undone on its own line.
            let mut rest = line;
            while let Some(at) = rest.find('\\') {
                rest = &rest[at..];
                let escape = ["\\\"", "\\-", "\\e", "\\&", "\\fB", "\\fI", "\\fR", "\\[u"]
                    .into_iter()
                    .find(|e| rest.starts_with(e))
                    .unwrap_or_else(|| panic!("unknown escape in: {line}"));
                rest = &rest[escape.len()..];
                if escape == "\\\"" {
                    break;
                }
            }
            assert_eq!(
                line.matches("\\fB").count() + line.matches("\\fI").count(),
                line.matches("\\fR").count(),
                "{line}"
            );
        }
    }

    #[test]
    fn examples_use_only_the_commands_and_options_of_the_table() {
        for (line, _) in EXAMPLES {
            // Split as a shell would; the first word is `umcp`.
            let config = umcp::StdioConfig::from_command_line(line).unwrap();
            assert_eq!(config.get_command(), "umcp");
            let words = config.get_args();
            let mut command = None;
            let mut i = 0;
            while i < words.len() {
                if let Some(long) = words[i].strip_prefix("--") {
                    let flag = spec::flag_named(long).expect(long);
                    i += 1 + usize::from(flag.value.is_some());
                } else {
                    command = Some(words[i].as_str());
                    break;
                }
            }
            let command = command.expect(line);
            assert!(spec::command(command).is_some(), "{line}");
        }
    }

    #[test]
    fn special_characters_are_escaped() {
        assert_eq!(code("--a-b"), "\\-\\-a\\-b");
        assert_eq!(
            prose("start-up, --json and -y"),
            "start-up, \\-\\-json and \\-y"
        );
        assert_eq!(prose(".mcp.json"), "\\&.mcp.json");
        assert_eq!(prose("'a'"), "\\&'a'");
        assert_eq!(code("%APPDATA%\\Code"), "%APPDATA%\\eCode");
        assert_eq!(code("ARGS…"), "ARGS...");
        assert_eq!(prose("naïve"), "na\\[u00EF]ve");
    }
}
