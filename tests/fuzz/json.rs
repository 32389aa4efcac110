//! Structure-aware mutations of JSON values, for decoders whose byte-level mutants would
//! mostly stop at the JSON parser.

use serde_json::{json, Map, Value};

use super::engine::Rng;

/// Applies one to four random changes somewhere inside `value`. `words` are strings worth
/// trying as keys and values (field names, method names, variables).
pub fn mutate(value: &mut Value, words: &[&str], rng: &mut Rng) {
    for _ in 0..=rng.below(4) {
        let target = pick_node(value, rng);
        change(target, words, rng);
    }
}

/// A random node of the tree (the root included), reached by walking down from the root.
fn pick_node<'a>(value: &'a mut Value, rng: &mut Rng) -> &'a mut Value {
    let mut node = value;
    loop {
        let len = match node {
            Value::Array(items) => items.len(),
            Value::Object(map) => map.len(),
            _ => 0,
        };
        if len == 0 || rng.one_in(3) {
            return node;
        }
        let i = rng.below(len);
        node = match node {
            Value::Array(items) => &mut items[i],
            Value::Object(map) => map.values_mut().nth(i).expect("index below the length"),
            _ => unreachable!("only containers have children"),
        };
    }
}

fn change(node: &mut Value, words: &[&str], rng: &mut Rng) {
    match rng.below(8) {
        0 => *node = scalar(words, rng),
        1 => {
            // Wrap it: one more level of nesting.
            let inner = node.take();
            *node = if rng.one_in(2) {
                json!([inner])
            } else {
                json!({ word(words, rng): inner })
            };
        }
        2 => match node {
            Value::Object(map) if !map.is_empty() => {
                let key = map.keys().nth(rng.below(map.len())).cloned();
                if let Some(key) = key {
                    map.remove(&key);
                }
            }
            Value::Array(items) if !items.is_empty() => {
                items.remove(rng.below(items.len()));
            }
            _ => *node = Value::Null,
        },
        3 => match node {
            Value::Object(map) => {
                map.insert(word(words, rng), scalar(words, rng));
            }
            Value::Array(items) => {
                let at = rng.below(items.len() + 1);
                items.insert(at, scalar(words, rng));
            }
            _ => *node = json!({ word(words, rng): node.take() }),
        },
        4 => {
            // Duplicate a subtree into itself, growing the document.
            let copy = node.clone();
            match node {
                Value::Object(map) => {
                    map.insert(word(words, rng), copy);
                }
                Value::Array(items) => items.push(copy),
                _ => *node = json!([copy.clone(), copy]),
            }
        }
        5 => *node = Value::Object(Map::new()),
        6 => *node = json!([]),
        _ => {
            if let Value::String(s) = node {
                let at = (0..=s.len())
                    .filter(|&i| s.is_char_boundary(i))
                    .nth(rng.below(s.len() + 1))
                    .unwrap_or(0);
                s.insert_str(at, &word(words, rng));
            } else {
                *node = scalar(words, rng);
            }
        }
    }
}

/// A scalar of any type, with the edges of each: huge and negative numbers, floats, empty
/// and odd strings.
fn scalar(words: &[&str], rng: &mut Rng) -> Value {
    match rng.below(12) {
        0 => Value::Null,
        1 => Value::Bool(rng.one_in(2)),
        2 => json!(rng.next_u64() as i64),
        3 => json!(u64::MAX - rng.below(2) as u64),
        4 => json!(i64::MIN),
        5 => json!(rng.below(1000) as f64 + 0.5),
        6 => json!(-1),
        7 => json!(0),
        8 => json!(""),
        9 => json!("\u{0}\n\r\u{feff}\u{10ffff}"),
        _ => Value::String(word(words, rng)),
    }
}

fn word(words: &[&str], rng: &mut Rng) -> String {
    if words.is_empty() || rng.one_in(8) {
        let len = rng.small(40);
        (0..len)
            .map(|_| (b' ' + rng.below(95) as u8) as char)
            .collect()
    } else {
        (*rng.pick(words)).to_owned()
    }
}
