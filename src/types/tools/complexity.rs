//! An upper estimate of the work checking a value against a schema can take, so that a schema
//! built to take exponential time is refused before the validator runs.
//!
//! JSON Schema validators try every branch of `anyOf`, `oneOf` and `allOf`, and `$ref` lets a
//! schema of a few lines nest such branches dozens of levels deep: `{"anyOf": [A, A]}` with `A`
//! the same again, thirty times over, checks a value thirty objects deep 2^30 times, hours of
//! work that a server could ask of every call. The estimate counts the checks of a subschema
//! against a part of the value that validation can make, following references and every
//! branch, and stepping into the value's members where a keyword does (`properties`, `items`
//! and the like; patterns are taken to match every member). A recursive schema (a tree of
//! nodes) costs what the value holds; a loop of references that never steps into the value
//! is refused outright, as the validator could never finish it either. The estimate's own
//! work is bounded by the same number of steps, and its recursion by [`MAX_NESTING`].
//! References are followed inside the schema (`#`, `#/pointer`, `#anchor`); other ones are
//! counted as one step, since they only load the bundled meta-schemas or fail to compile.

use std::collections::{HashMap, HashSet};

use serde_json::{Map, Value};

/// The most schema steps a check may be estimated to take: the cost of an ordinary schema
/// is in the hundreds, and a million steps take the validator about a second.
pub(super) const MAX_STEPS: u64 = 100_000;

/// What an estimate over [`MAX_STEPS`] is reported as.
const OVER: u64 = MAX_STEPS + 1;

/// How deeply the estimate may follow subschemas and references: far beyond any schema
/// written by hand, and well within a thread's stack. A chain deeper than this is refused.
const MAX_NESTING: usize = 512;

/// Keywords whose subschema applies to the instance itself.
const IN_PLACE: &[&str] = &["not", "if", "then", "else"];
/// Keywords with a list of subschemas that apply to the instance itself.
const IN_PLACE_LISTS: &[&str] = &["anyOf", "oneOf", "allOf"];
/// Keywords with a map of subschemas that apply to the instance itself (`dependencies` is
/// draft 7's name; its lists of names are no subschemas, and cost one step each here).
const IN_PLACE_MAPS: &[&str] = &["dependentSchemas", "dependencies"];

/// Whether checking `value` against `schema` may take more than [`MAX_STEPS`] steps.
pub(super) fn too_complex(schema: &Value, value: &Value) -> bool {
    let mut anchors = HashMap::new();
    collect_anchors(schema, &mut anchors);
    let mut estimate = Estimate {
        root: schema,
        anchors,
        memo: HashMap::new(),
        open: HashSet::new(),
        visited: 0,
    };
    estimate.cost(schema, value) > MAX_STEPS
}

struct Estimate<'a> {
    root: &'a Value,
    anchors: HashMap<&'a str, &'a Value>,
    /// Cost by subschema and part of the value (their addresses).
    memo: HashMap<(usize, usize), u64>,
    /// The pairs being costed, to catch a loop that never steps into the value.
    open: HashSet<(usize, usize)>,
    /// Pairs costed so far: the estimate's own work, bounded like the check's.
    visited: u64,
}

impl<'a> Estimate<'a> {
    /// How many (subschema, part of the value) checks checking `value` against `node` makes,
    /// at most; more than [`MAX_STEPS`] is reported as `MAX_STEPS + 1`.
    fn cost(&mut self, node: &'a Value, value: &'a Value) -> u64 {
        let Value::Object(object) = node else {
            return 1;
        };
        let key = (
            std::ptr::from_ref(node) as usize,
            std::ptr::from_ref(value) as usize,
        );
        if let Some(&known) = self.memo.get(&key) {
            return known;
        }
        self.visited += 1;
        if self.visited > MAX_STEPS || self.open.len() >= MAX_NESTING || !self.open.insert(key) {
            return OVER;
        }
        let itself = self.in_place(object, value);
        let inside = match value {
            Value::Object(members) => self.members(object, members),
            Value::Array(items) => self.items(object, items),
            _ => 0,
        };
        let total = capped(capped(1, itself), inside);
        self.open.remove(&key);
        self.memo.insert(key, total);
        total
    }

    /// The checks of the subschemas of `schema` that apply to `value` itself: references,
    /// conditions and the lists and maps of alternatives.
    fn in_place(&mut self, schema: &'a Map<String, Value>, value: &'a Value) -> u64 {
        let mut total = 0;
        for reference in ["$ref", "$dynamicRef", "$recursiveRef"] {
            if let Some(target) = schema.get(reference).and_then(|r| self.resolve(r)) {
                total = capped(total, self.cost(target, value));
            }
        }
        let subs = IN_PLACE.iter().filter_map(|k| schema.get(*k));
        let lists = IN_PLACE_LISTS.iter().flat_map(|k| list(schema.get(*k)));
        let maps = IN_PLACE_MAPS.iter().flat_map(|k| map(schema.get(*k)));
        for sub in subs.chain(lists).chain(maps) {
            total = capped(total, self.cost(sub, value));
        }
        total
    }

    /// The checks of `schema`'s subschemas against the members of an object.
    fn members(&mut self, schema: &'a Map<String, Value>, members: &'a Map<String, Value>) -> u64 {
        let mut total = 0;
        let properties = schema.get("properties").and_then(Value::as_object);
        for (name, sub) in properties.into_iter().flatten() {
            if let Some(member) = members.get(name) {
                total = capped(total, self.cost(sub, member));
            }
        }
        // Patterns and the rest are taken to apply to every member: more, never less.
        let every: Vec<&Value> = map(schema.get("patternProperties"))
            .chain(
                ["additionalProperties", "unevaluatedProperties"]
                    .iter()
                    .filter_map(|k| schema.get(*k)),
            )
            .collect();
        for sub in every {
            for member in members.values() {
                total = capped(total, self.cost(sub, member));
            }
        }
        if schema.contains_key("propertyNames") {
            total = capped(total, members.len() as u64);
        }
        total
    }

    /// The checks of `schema`'s subschemas against the items of an array.
    fn items(&mut self, schema: &'a Map<String, Value>, items: &'a [Value]) -> u64 {
        let mut total = 0;
        for (sub, item) in list(schema.get("prefixItems")).zip(items) {
            total = capped(total, self.cost(sub, item));
        }
        for keyword in ["items", "additionalItems", "unevaluatedItems", "contains"] {
            match schema.get(keyword) {
                // Draft 2019-09 and older: a list of item schemas, in order.
                Some(Value::Array(subs)) => {
                    for (sub, item) in subs.iter().zip(items) {
                        total = capped(total, self.cost(sub, item));
                    }
                }
                Some(sub) => {
                    for item in items {
                        total = capped(total, self.cost(sub, item));
                    }
                }
                None => {}
            }
        }
        total
    }

    /// The subschema a reference inside the schema points at.
    fn resolve(&self, reference: &Value) -> Option<&'a Value> {
        let fragment = reference.as_str()?.strip_prefix('#')?;
        if fragment.is_empty() {
            return Some(self.root);
        }
        if fragment.starts_with('/') {
            return self.root.pointer(&percent_decoded(fragment));
        }
        self.anchors.get(fragment).copied()
    }
}

/// `a + b`, at most [`OVER`].
fn capped(a: u64, b: u64) -> u64 {
    a.saturating_add(b).min(OVER)
}

/// The subschemas of a keyword holding a list of them.
fn list(value: Option<&Value>) -> impl Iterator<Item = &Value> {
    value.and_then(Value::as_array).into_iter().flatten()
}

/// The subschemas of a keyword holding a map of them.
fn map(value: Option<&Value>) -> impl Iterator<Item = &Value> {
    value
        .and_then(Value::as_object)
        .into_iter()
        .flat_map(|m| m.values())
}

/// The `$anchor`s and `$dynamicAnchor`s of a schema, by name.
fn collect_anchors<'a>(node: &'a Value, anchors: &mut HashMap<&'a str, &'a Value>) {
    match node {
        Value::Object(object) => {
            for keyword in ["$anchor", "$dynamicAnchor"] {
                if let Some(name) = object.get(keyword).and_then(Value::as_str) {
                    anchors.insert(name, node);
                }
            }
            object.values().for_each(|v| collect_anchors(v, anchors));
        }
        Value::Array(items) => items.iter().for_each(|v| collect_anchors(v, anchors)),
        _ => {}
    }
}

/// A URI fragment's `%XX` escapes decoded (JSON pointers in references may use them).
fn percent_decoded(fragment: &str) -> String {
    let bytes = fragment.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| (b as char).to_digit(16);
        match (
            bytes[i],
            bytes.get(i + 1).copied().and_then(hex),
            bytes.get(i + 2).copied().and_then(hex),
        ) {
            (b'%', Some(high), Some(low)) => {
                out.push((high * 16 + low) as u8);
                i += 3;
            }
            (byte, ..) => {
                out.push(byte);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use serde_json::{json, Map};

    use super::*;

    /// `{"anyOf": [A, A]}` nested `levels` times through `$defs`, and a value that deep.
    fn doubling(levels: usize) -> (Value, Value) {
        let mut defs = Map::new();
        defs.insert("d0".into(), json!({"type": "string"}));
        for n in 1..=levels {
            let inner = json!({"properties": {"a": {"$ref": format!("#/$defs/d{}", n - 1)}}});
            defs.insert(format!("d{n}"), json!({"anyOf": [inner, inner]}));
        }
        let mut value = json!(5);
        for _ in 0..levels {
            value = json!({ "a": value });
        }
        (
            json!({"$ref": format!("#/$defs/d{levels}"), "$defs": defs}),
            value,
        )
    }

    #[test]
    fn exponential_branching_is_caught_and_small_schemas_pass() {
        let (schema, value) = doubling(30);
        assert!(too_complex(&schema, &value));
        let (schema, value) = doubling(8);
        assert!(!too_complex(&schema, &value));
        // The same schema against a shallow value costs what that value allows.
        assert!(!too_complex(&doubling(30).0, &json!({"a": {"a": 1}})));
    }

    #[test]
    fn recursive_schemas_cost_what_the_value_allows() {
        let tree = json!({
            "$defs": {"node": {"$anchor": "node", "type": "object", "properties": {
                "name": {"type": "string"},
                "children": {"type": "array", "items": {"$ref": "#node"}}
            }}},
            "$ref": "#/%24defs/node"
        });
        let mut value = json!({"name": "leaf"});
        for _ in 0..60 {
            value = json!({"name": "n", "children": [value]});
        }
        assert!(!too_complex(&tree, &value));
    }

    #[test]
    fn branches_applied_in_place_count_without_stepping_down() {
        // `dependentSchemas` applies to the same object: thirty levels on a one-level value.
        let mut defs = Map::new();
        defs.insert("d0".into(), json!({"type": "object"}));
        for n in 1..=30 {
            let inner = json!({"dependentSchemas": {"a": {"$ref": format!("#/$defs/d{}", n - 1)}}});
            defs.insert(format!("d{n}"), json!({"anyOf": [inner, inner]}));
        }
        let schema = json!({"$ref": "#/$defs/d30", "$defs": defs});
        assert!(too_complex(&schema, &json!({"a": 1})));
    }

    #[test]
    fn wide_values_multiply_the_branches() {
        // Two branches a level, eight members a level, five levels: 16^5 checks, though the
        // value is only five levels deep.
        let mut defs = Map::new();
        defs.insert("d0".into(), json!({"type": "integer"}));
        for n in 1..=5 {
            let inner = json!({"additionalProperties": {"$ref": format!("#/$defs/d{}", n - 1)}});
            defs.insert(format!("d{n}"), json!({"anyOf": [inner, inner]}));
        }
        let schema = json!({"$ref": "#/$defs/d5", "$defs": defs});
        let mut value = json!(1);
        for _ in 0..5 {
            let members: Map<String, Value> =
                (0..8).map(|k| (format!("k{k}"), value.clone())).collect();
            value = Value::Object(members);
        }
        assert!(too_complex(&schema, &value));
        // One member a level is cheap.
        let mut narrow = json!(1);
        for _ in 0..5 {
            narrow = json!({ "k": narrow });
        }
        assert!(!too_complex(&schema, &narrow));
    }

    #[test]
    fn a_long_chain_of_references_is_refused_without_exhausting_the_stack() {
        let mut defs = Map::new();
        defs.insert("d0".into(), json!({"type": "integer"}));
        for n in 1..=50_000 {
            defs.insert(
                format!("d{n}"),
                json!({"$ref": format!("#/$defs/d{}", n - 1)}),
            );
        }
        let schema = json!({"$ref": "#/$defs/d50000", "$defs": defs});
        assert!(too_complex(&schema, &json!(1)));
    }

    #[test]
    fn a_loop_that_never_steps_into_the_value_is_refused() {
        let looping = json!({"$defs": {"a": {"anyOf": [{"$ref": "#/$defs/b"}]}, "b": {"$ref": "#/$defs/a"}}, "$ref": "#/$defs/a"});
        assert!(too_complex(&looping, &json!(1)));
        assert!(too_complex(&json!({"allOf": [{"$ref": "#"}]}), &json!({})));
    }
}
