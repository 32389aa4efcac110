//! Namespaced names for the tools and prompts of many servers, unique and bound for life.
//!
//! Tool `t` of server `s` is called `s{sep}t` (`s__t` by default). Two entries can still end
//! up with the same name: server `a` with tool `b__c` and server `a__b` with tool `c`, or a
//! server that lists a name twice. A name, once given, stays bound to its entry (server, item
//! name, and which occurrence of that name in the server's list) for the life of the table:
//! when a server fails, restarts or goes away, its names are not handed to anyone else, so a
//! name can never route to another server's tool. A new entry gets its plain name unless that
//! is bound already; otherwise the smallest suffix `_2`, `_3`, … that is neither bound nor
//! the plain name of another entry in the same listing. Entries are considered in order
//! (servers by name, then each server's own order), so the first listing is deterministic.
//! Routing looks names up in the table and never splits them, so a separator inside a server
//! or tool name is harmless.
//!
//! The table grows by one binding per distinct entry ever listed, which is bounded by what
//! the configured servers list; it is never pruned, because pruning is what would let a
//! name change hands.
//!
//! With portable names ([`ManagerOptions::with_portable_names`]) a name is also made fit for
//! LLM tool-calling APIs, which take only `[A-Za-z0-9_-]` and a bounded length: any other
//! character becomes `_`, and a name too long keeps its beginning and ends in `_` and eight
//! hex digits of a hash of the whole name, so long names that share a beginning stay apart.
//! Names that become equal this way are told apart by the suffixes above, kept within the
//! bound too.
//!
//! [`ManagerOptions::with_portable_names`]: crate::ManagerOptions::with_portable_names

use std::collections::{HashMap, HashSet};

/// How a namespaced name is made from a server's name and an item's.
#[derive(Debug, Clone)]
pub(crate) struct Shape {
    pub(crate) separator: String,
    /// `Some(max)`: only `[A-Za-z0-9_-]`, at most `max` characters.
    pub(crate) portable: Option<usize>,
}

impl Shape {
    /// The name an entry gets when nothing else has it.
    fn plain(&self, server: &str, item: &str) -> String {
        let name = format!("{server}{}{item}", self.separator);
        let Some(max) = self.portable else {
            return name;
        };
        let clean: String = name
            .chars()
            .map(|c| match c {
                'A'..='Z' | 'a'..='z' | '0'..='9' | '_' | '-' => c,
                _ => '_',
            })
            .collect();
        if clean.len() <= max {
            return clean;
        }
        let hash = format!("_{:08x}", fnv1a(name.as_bytes()));
        // `clean` is ASCII, so any byte index is a character boundary.
        format!("{}{hash}", &clean[..max.saturating_sub(hash.len())])
    }

    /// How the plain names of `server`'s items begin (`server__`), or `None` when a portable
    /// name that long would be shortened past it.
    pub(crate) fn prefix(&self, server: &str) -> Option<String> {
        let prefix = self.plain(server, "");
        match self.portable {
            // A shortened name keeps `max` less its hash (`_` and eight digits) of its start.
            Some(max) if prefix.len() > max.saturating_sub(9) => None,
            _ => Some(prefix),
        }
    }

    /// The `n`th alternative to `plain`, within the bound.
    fn suffixed(&self, plain: &str, n: u64) -> String {
        let suffix = format!("_{n}");
        match self.portable {
            Some(max) if plain.len() + suffix.len() > max => {
                format!("{}{suffix}", &plain[..max.saturating_sub(suffix.len())])
            }
            _ => format!("{plain}{suffix}"),
        }
    }
}

/// The 32-bit FNV-1a hash: stable across runs and platforms, so a shortened name is the same
/// in every process.
fn fnv1a(bytes: &[u8]) -> u32 {
    bytes.iter().fold(0x811c_9dc5, |hash, &byte| {
        (hash ^ u32::from(byte)).wrapping_mul(0x0100_0193)
    })
}

/// What a name is bound to: the server, the item's own name, and which occurrence of that
/// item name in the server's list it is (0 for the first).
type Key = (String, String, usize);

/// The bindings between namespaced names and entries, for one kind of item (tools, or
/// prompts).
#[derive(Debug, Default)]
pub(crate) struct Names {
    by_key: HashMap<Key, String>,
    by_name: HashMap<String, Key>,
    /// For a plain name, a suffix number below which every suffixed name is bound: the
    /// search for a free one starts there, so a server listing one name thousands of times
    /// costs linear time, not quadratic (bindings are never undone, so it only grows).
    first_free: HashMap<String, u64>,
}

impl Names {
    /// The namespaced names of `entries` (server, item name), in the same order, binding a
    /// name to each entry that has none yet.
    pub(crate) fn assign(&mut self, entries: &[(&str, &str)], shape: &Shape) -> Vec<String> {
        let plain = |server: &str, item: &str| shape.plain(server, item);
        let reserved: HashSet<String> = entries.iter().map(|(s, i)| plain(s, i)).collect();
        let mut occurrences: HashMap<(&str, &str), usize> = HashMap::new();
        let mut out = Vec::with_capacity(entries.len());
        for &(server, item) in entries {
            let nth = occurrences.entry((server, item)).or_insert(0);
            let key = (server.to_owned(), item.to_owned(), *nth);
            *nth += 1;
            if let Some(name) = self.by_key.get(&key) {
                out.push(name.clone());
                continue;
            }
            let name = plain(server, item);
            let name = if self.by_name.contains_key(&name) {
                self.free_suffixed(&name, &reserved, shape)
            } else {
                name
            };
            self.by_name.insert(name.clone(), key.clone());
            self.by_key.insert(key, name.clone());
            out.push(name);
        }
        out
    }

    /// The smallest suffixed form of `plain` that is neither bound nor `reserved`.
    fn free_suffixed(&mut self, plain: &str, reserved: &HashSet<String>, shape: &Shape) -> String {
        let bound = |by_name: &HashMap<String, Key>, n: u64| {
            by_name.contains_key(&shape.suffixed(plain, n))
        };
        let start = self.first_free.get(plain).copied().unwrap_or(2);
        // Move the mark past the numbers bound since; reserved ones may be free later.
        let start = (start..)
            .find(|&n| !bound(&self.by_name, n))
            .unwrap_or(start);
        self.first_free.insert(plain.to_owned(), start);
        (start..)
            .map(|n| shape.suffixed(plain, n))
            .find(|c| !reserved.contains(c) && !self.by_name.contains_key(c))
            .unwrap_or_else(|| plain.to_owned())
    }

    /// The message for a name that is bound to nothing: it lists the namespaced names of the
    /// items that have `name` as their own name (the usual slip: a tool's name without its
    /// server), at most five, in order.
    pub(crate) fn unknown(&self, kind: &str, name: &str) -> String {
        let mut candidates: Vec<&str> = self
            .by_name
            .iter()
            .filter(|(_, (_, item, _))| item == name)
            .map(|(full, _)| full.as_str())
            .collect();
        candidates.sort_unstable();
        let mut message = format!("no {kind} named `{name}`");
        if let Some((last, first)) = candidates.split_last() {
            let shown: Vec<String> = first.iter().take(4).map(|c| format!("`{c}`")).collect();
            let last = format!("`{last}`");
            let list = match shown.len() {
                0 => last,
                n if n < first.len() => format!("{}, … or {last}", shown.join(", ")),
                _ => format!("{} or {last}", shown.join(", ")),
            };
            message.push_str(&format!("; did you mean {list}?"));
        }
        message
    }

    /// The server and item name `name` is bound to, if it was ever given.
    pub(crate) fn lookup(&self, name: &str) -> Option<(&str, &str)> {
        self.by_name
            .get(name)
            .map(|(server, item, _)| (server.as_str(), item.as_str()))
    }
}

#[cfg(test)]
mod tests {
    use super::{Names, Shape};

    fn verbatim(separator: &str) -> Shape {
        Shape {
            separator: separator.into(),
            portable: None,
        }
    }

    fn assign(entries: &[(&str, &str)], separator: &str) -> Vec<String> {
        Names::default().assign(entries, &verbatim(separator))
    }

    /// A server's prefix is how every plain name of its items begins, even a shortened one;
    /// a server whose prefix a shortened name would lose has none.
    #[test]
    fn a_prefix_begins_every_plain_name_of_the_server() {
        let portable = Shape {
            separator: "__".into(),
            portable: Some(20),
        };
        let prefix = portable.prefix("my.server").expect("short enough");
        assert_eq!(prefix, "my_server__");
        assert!(portable
            .plain("my.server", &"t".repeat(40))
            .starts_with(&prefix));
        assert_eq!(portable.prefix("a-much-longer-name"), None);
        assert_eq!(verbatim(".").prefix("s.t").as_deref(), Some("s.t."));
    }

    #[test]
    fn portable_names_fit_llm_tool_apis() {
        let portable = Shape {
            separator: "__".into(),
            portable: Some(64),
        };
        let long_tool = "t".repeat(80);
        let other_long_tool = format!("{long_tool}x");
        let entries = [
            ("my.server", "read file"),
            ("my_server", "read_file"),
            ("gh", long_tool.as_str()),
            ("gh", other_long_tool.as_str()),
            ("gh", "ok-name_1"),
        ];
        let mut table = Names::default();
        let names = table.assign(&entries, &portable);
        for name in &names {
            assert!(name.len() <= 64, "{name}");
            assert!(
                name.chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-'),
                "{name}"
            );
        }
        // Equal once cleaned: the second gets a suffix, and each routes to its own tool.
        assert_eq!(names[0], "my_server__read_file");
        assert_eq!(names[1], "my_server__read_file_2");
        assert_eq!(table.lookup(&names[1]), Some(("my_server", "read_file")));
        // Long names keep their beginning and differ by their hashes.
        assert!(names[2].starts_with("gh__ttt"), "{}", names[2]);
        assert_ne!(names[2], names[3]);
        assert_eq!(
            table.lookup(&names[3]),
            Some(("gh", other_long_tool.as_str()))
        );
        assert_eq!(names[4], "gh__ok-name_1");
        // The same names in every process: the hash is stable.
        assert_eq!(Names::default().assign(&entries, &portable), names);
        // A suffix stays within the bound too.
        let twice = [("gh", long_tool.as_str()), ("gh", long_tool.as_str())];
        let names = Names::default().assign(&twice, &portable);
        assert!(
            names[1].len() <= 64 && names[1].ends_with("_2"),
            "{names:?}"
        );
        assert_ne!(names[0], names[1]);
    }

    #[test]
    fn plain_names_when_unique() {
        let names = assign(&[("files", "read"), ("web", "read")], "__");
        assert_eq!(names, ["files__read", "web__read"]);
    }

    #[test]
    fn later_duplicates_get_suffixes() {
        let names = assign(
            &[("a", "b__c"), ("a__b", "c"), ("a", "x"), ("a", "x")],
            "__",
        );
        assert_eq!(names, ["a__b__c", "a__b__c_2", "a__x", "a__x_2"]);
    }

    #[test]
    fn suffixes_skip_names_other_entries_have() {
        // `s__t_2` is a real tool, so the duplicate of `s__t` must not take it.
        let names = assign(&[("s", "t"), ("s", "t"), ("s", "t_2")], "__");
        assert_eq!(names, ["s__t", "s__t_3", "s__t_2"]);
    }

    #[test]
    fn an_unknown_name_suggests_the_items_of_that_name() {
        let mut names = Names::default();
        names.assign(
            &[("b", "echo"), ("a", "echo"), ("a", "add")],
            &verbatim("__"),
        );
        assert_eq!(
            names.unknown("tool", "echo"),
            "no tool named `echo`; did you mean `a__echo` or `b__echo`?"
        );
        assert_eq!(names.unknown("tool", "sub"), "no tool named `sub`");
        let servers: Vec<String> = (0..7).map(|n| format!("s{n}")).collect();
        let many: Vec<(&str, &str)> = servers.iter().map(|s| (s.as_str(), "x")).collect();
        names.assign(&many, &verbatim("__"));
        assert_eq!(
            names.unknown("prompt", "x"),
            "no prompt named `x`; did you mean `s0__x`, `s1__x`, `s2__x`, `s3__x`, … or `s6__x`?"
        );
    }

    /// A server listing one name many times gets its suffixes in linear time: the first
    /// listing of a hostile list must not hold the table (and every call) for minutes.
    #[test]
    fn many_duplicates_are_named_in_linear_time() {
        let entries: Vec<(&str, &str)> = (0..20_000).map(|_| ("s", "t")).collect();
        let started = std::time::Instant::now();
        let names = assign(&entries, "__");
        assert!(
            started.elapsed() < std::time::Duration::from_secs(10),
            "{:?}",
            started.elapsed()
        );
        assert_eq!(names[0], "s__t");
        assert_eq!(names[1], "s__t_2");
        assert_eq!(names[19_999], "s__t_20000");
        let unique: std::collections::HashSet<&String> = names.iter().collect();
        assert_eq!(unique.len(), names.len());
    }

    #[test]
    fn custom_separator() {
        assert_eq!(assign(&[("s", "t")], "."), ["s.t"]);
    }

    #[test]
    fn a_name_never_changes_hands_when_its_server_goes_away() {
        let mut names = Names::default();
        let both = names.assign(&[("a", "b__c"), ("a__b", "c")], &verbatim("__"));
        assert_eq!(both, ["a__b__c", "a__b__c_2"]);
        // Server `a` failed: its tools are no longer listed, but its name is not reused.
        assert_eq!(
            names.assign(&[("a__b", "c")], &verbatim("__")),
            ["a__b__c_2"]
        );
        assert_eq!(names.lookup("a__b__c"), Some(("a", "b__c")));
        assert_eq!(names.lookup("a__b__c_2"), Some(("a__b", "c")));
        // And when it comes back, it gets its own name again.
        let again = names.assign(&[("a", "b__c"), ("a__b", "c")], &verbatim("__"));
        assert_eq!(again, both);
    }

    #[test]
    fn a_late_server_never_takes_a_name_already_given() {
        let mut names = Names::default();
        // `a__b` listed first (`a` was still starting), so it keeps the plain name.
        assert_eq!(names.assign(&[("a__b", "c")], &verbatim("__")), ["a__b__c"]);
        let both = names.assign(&[("a", "b__c"), ("a__b", "c")], &verbatim("__"));
        assert_eq!(both, ["a__b__c_2", "a__b__c"]);
        assert_eq!(names.lookup("a__b__c"), Some(("a__b", "c")));
        assert_eq!(names.lookup("nothing"), None);
    }
}
