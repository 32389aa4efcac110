//! Namespaced names for the tools and prompts of many servers, unique and deterministic.
//!
//! Tool `t` of server `s` is called `s{sep}t` (`s__t` by default). Two entries can still end
//! up with the same name: server `a` with tool `b__c` and server `a__b` with tool `c`, or a
//! server that lists a name twice. Entries are considered in order (servers by name, then
//! each server's own order); the first keeps the plain name and each later one gets the
//! smallest suffix `_2`, `_3`, … that no other entry has or uses as its plain name. Routing
//! looks names up in the resulting table and never splits them, so a separator inside a
//! server or tool name is harmless.

use std::collections::HashSet;

/// The namespaced names of `entries` (server, item name), in the same order.
pub(crate) fn assign(entries: &[(&str, &str)], separator: &str) -> Vec<String> {
    let plain: Vec<String> = entries
        .iter()
        .map(|(server, item)| format!("{server}{separator}{item}"))
        .collect();
    let reserved: HashSet<&str> = plain.iter().map(String::as_str).collect();
    let mut taken: HashSet<String> = HashSet::new();
    let mut out = Vec::with_capacity(plain.len());
    for name in &plain {
        if taken.insert(name.clone()) {
            out.push(name.clone());
            continue;
        }
        let unique = (2..)
            .map(|n| format!("{name}_{n}"))
            .find(|candidate| !reserved.contains(candidate.as_str()) && !taken.contains(candidate))
            .unwrap_or_else(|| name.clone());
        taken.insert(unique.clone());
        out.push(unique);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::assign;

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
    fn custom_separator() {
        assert_eq!(assign(&[("s", "t")], "."), ["s.t"]);
    }
}
