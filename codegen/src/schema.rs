//! JSON Schema to Rust types: objects with properties become structs, string enums become
//! enums, arrays `Vec`s, and whatever cannot be typed stays a `serde_json::Value`.
//!
//! The mapping, for a schema `s` named after where it sits:
//!
//! | `s` | Rust |
//! |---|---|
//! | `"type": "string"` (or a `const` string) | `String` |
//! | `"type": "string"` with an `enum` of strings (or such an `enum` alone) | an enum, each value a variant |
//! | `"type": "integer"` | `i64` |
//! | `"type": "number"` | `f64` |
//! | `"type": "boolean"` | `bool` |
//! | `"type": "array"` with `items` | `Vec<item type>`; without `items`, `Vec<Value>` |
//! | `"type": "object"` with `properties` (or `properties` alone) | a struct: required fields as they are, others `Option` |
//! | `"type": "object"` without `properties` | `Map<String, Value>` |
//! | `"type": [t, "null"]`, or `anyOf`/`oneOf` of one schema and `{"type": "null"}` | `Option<t's type>` |
//! | `allOf` of one schema | that schema's type |
//! | `$ref` to `#/$defs/N` or `#/definitions/N` of the same root | the type of `N`, made once |
//! | anything else (`true`, other unions, other `$ref`s, nesting past 32 levels, a `$ref` that leads back to itself) | `serde_json::Value` |

use std::collections::HashMap;

use serde_json::{Map, Value};

use crate::names::{camel, snake, Taken};

/// How deep types nest before the rest is a `Value`.
const MAX_DEPTH: usize = 32;

/// A Rust type of a field.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Ty {
    String,
    I64,
    F64,
    Bool,
    Value,
    Map,
    Vec(Box<Ty>),
    Option(Box<Ty>),
    Named(String),
}

/// A type to write.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Item {
    Struct(Struct),
    Enum(Enum),
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Struct {
    pub(crate) name: String,
    pub(crate) doc: Option<String>,
    pub(crate) fields: Vec<Field>,
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Field {
    /// The Rust name (maybe `r#…`).
    pub(crate) ident: String,
    /// The JSON key.
    pub(crate) key: String,
    pub(crate) ty: Ty,
    /// Left out of the JSON when `None` (an optional field).
    pub(crate) skip_none: bool,
    pub(crate) doc: Option<String>,
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Enum {
    pub(crate) name: String,
    pub(crate) doc: Option<String>,
    /// Each variant's name and JSON value.
    pub(crate) variants: Vec<(String, String)>,
}

/// The types made for one server's tools, named apart from each other and from `taken`.
pub(crate) struct Types<'a> {
    pub(crate) items: Vec<Item>,
    taken: &'a mut Taken,
    /// The types made for `$ref`s of the current root, by reference; `None` while being made.
    refs: HashMap<String, Option<String>>,
}

impl<'a> Types<'a> {
    pub(crate) fn new(taken: &'a mut Taken) -> Types<'a> {
        Types {
            items: Vec::new(),
            taken,
            refs: HashMap::new(),
        }
    }

    /// The type of the root schema `schema`, a struct named `name` when it is an object
    /// with properties, documented by `doc` when the schema says nothing (one without
    /// properties gives `None`: nothing to pass).
    pub(crate) fn root(&mut self, schema: &Value, name: &str, doc: &str) -> Option<Ty> {
        self.refs.clear();
        let has_properties = schema
            .get("properties")
            .and_then(Value::as_object)
            .is_some_and(|p| !p.is_empty());
        if !has_properties && object_type(schema) {
            return None;
        }
        let ty = self.ty(schema, schema, name, 0);
        if let Ty::Named(named) = &ty {
            for item in &mut self.items {
                if let Item::Struct(made) = item {
                    if &made.name == named && made.doc.is_none() {
                        made.doc = Some(doc.to_owned());
                    }
                }
            }
        }
        Some(ty)
    }

    /// The type of `schema`, inside the root `root`, named after `hint` if it needs a name.
    fn ty(&mut self, root: &Value, schema: &Value, hint: &str, depth: usize) -> Ty {
        let Some(object) = schema.as_object().filter(|_| depth <= MAX_DEPTH) else {
            return Ty::Value;
        };
        if let Some(reference) = object.get("$ref").and_then(Value::as_str) {
            return self.reference(root, reference, depth);
        }
        if let Some(choices) = object
            .get("anyOf")
            .or_else(|| object.get("oneOf"))
            .and_then(Value::as_array)
        {
            return match nullable(choices) {
                Some(inner) => Ty::Option(Box::new(self.ty(root, inner, hint, depth + 1))),
                None => Ty::Value,
            };
        }
        if let Some([only]) = object
            .get("allOf")
            .and_then(Value::as_array)
            .map(Vec::as_slice)
        {
            return self.ty(root, only, hint, depth + 1);
        }
        if let Some(values) = object.get("enum") {
            return match strings(values) {
                Some(values) => self.enumeration(object, &values, hint),
                None => Ty::Value,
            };
        }
        if object.get("const").is_some_and(Value::is_string) {
            return Ty::String;
        }
        match object.get("type") {
            Some(Value::String(kind)) => self.of_kind(root, object, kind, hint, depth),
            Some(Value::Array(kinds)) => match kinds.as_slice() {
                [Value::String(a), Value::String(b)] if a == "null" || b == "null" => {
                    let kind = if a == "null" { b } else { a };
                    let inner = self.of_kind(root, object, kind, hint, depth);
                    Ty::Option(Box::new(inner))
                }
                _ => Ty::Value,
            },
            None if object.contains_key("properties") => {
                self.of_kind(root, object, "object", hint, depth)
            }
            _ => Ty::Value,
        }
    }

    fn of_kind(
        &mut self,
        root: &Value,
        object: &Map<String, Value>,
        kind: &str,
        hint: &str,
        depth: usize,
    ) -> Ty {
        match kind {
            "string" => Ty::String,
            "integer" => Ty::I64,
            "number" => Ty::F64,
            "boolean" => Ty::Bool,
            "array" => match object.get("items") {
                Some(items) if items.is_object() => {
                    let item = self.ty(root, items, &format!("{hint}Item"), depth + 1);
                    Ty::Vec(Box::new(item))
                }
                _ => Ty::Vec(Box::new(Ty::Value)),
            },
            "object" => match object.get("properties").and_then(Value::as_object) {
                Some(properties) if !properties.is_empty() => {
                    Ty::Named(self.structure(root, object, properties, hint, depth))
                }
                _ => Ty::Map,
            },
            _ => Ty::Value,
        }
    }

    /// A struct for an object with `properties`, named after `hint`.
    fn structure(
        &mut self,
        root: &Value,
        object: &Map<String, Value>,
        properties: &Map<String, Value>,
        hint: &str,
        depth: usize,
    ) -> String {
        let name = self.taken.take(camel(hint, "T"));
        // Its place comes before the types of its fields: a reader meets it first.
        let slot = self.items.len();
        self.items.push(Item::Struct(Struct {
            name: name.clone(),
            doc: None,
            fields: Vec::new(),
        }));
        let required: Vec<&str> = object
            .get("required")
            .and_then(Value::as_array)
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let mut idents = Taken::default();
        let mut keys: Vec<&String> = properties.keys().collect();
        keys.sort();
        let mut fields = Vec::with_capacity(keys.len());
        for key in keys {
            let schema = &properties[key];
            let field_hint = format!("{name}{}", camel(key, "T"));
            let ty = self.ty(root, schema, &field_hint, depth + 1);
            let optional = !required.contains(&key.as_str());
            let ty = match (optional, ty) {
                (true, Ty::Option(inner)) | (false, Ty::Option(inner)) => Ty::Option(inner),
                (true, ty) => Ty::Option(Box::new(ty)),
                (false, ty) => ty,
            };
            fields.push(Field {
                ident: idents.take(snake(key)),
                key: key.clone(),
                ty,
                skip_none: optional,
                doc: description(schema),
            });
        }
        self.items[slot] = Item::Struct(Struct {
            name: name.clone(),
            doc: description(&Value::Object(object.clone())),
            fields,
        });
        name
    }

    /// An enum of string `values`, named after `hint`.
    fn enumeration(&mut self, object: &Map<String, Value>, values: &[String], hint: &str) -> Ty {
        let name = self.taken.take(camel(hint, "T"));
        let mut idents = Taken::default();
        let variants = values
            .iter()
            .map(|value| (idents.take(camel(value, "V")), value.clone()))
            .collect();
        self.items.push(Item::Enum(Enum {
            name: name.clone(),
            doc: description(&Value::Object(object.clone())),
            variants,
        }));
        Ty::Named(name)
    }

    /// The type a `$ref` of the root names: made once, named after its definition.
    fn reference(&mut self, root: &Value, reference: &str, depth: usize) -> Ty {
        let Some(pointer) = reference.strip_prefix('#') else {
            return Ty::Value;
        };
        let local = pointer.starts_with("/$defs/") || pointer.starts_with("/definitions/");
        let target = root.pointer(pointer).filter(|_| local);
        let Some(target) = target else {
            return Ty::Value;
        };
        match self.refs.get(reference) {
            Some(Some(name)) => return Ty::Named(name.clone()),
            // It leads back to itself: a type of infinite size.
            Some(None) => return Ty::Value,
            None => {}
        }
        self.refs.insert(reference.to_owned(), None);
        let hint = pointer.rsplit('/').next().unwrap_or("Def");
        let ty = self.ty(root, target, hint, depth + 1);
        if let Ty::Named(name) = &ty {
            self.refs.insert(reference.to_owned(), Some(name.clone()));
        } else {
            self.refs.remove(reference);
        }
        ty
    }
}

/// Whether `schema` is an object schema (or says nothing of its type).
fn object_type(schema: &Value) -> bool {
    schema.get("type").is_none_or(|kind| kind == "object")
}

/// The one schema of `choices` that is not `{"type": "null"}`, when there are two.
fn nullable(choices: &[Value]) -> Option<&Value> {
    let is_null = |s: &Value| s.get("type").and_then(Value::as_str) == Some("null");
    match choices {
        [a, b] if is_null(b) && !is_null(a) => Some(a),
        [a, b] if is_null(a) && !is_null(b) => Some(b),
        _ => None,
    }
}

/// The values of `values` when it is a non-empty array of distinct strings.
fn strings(values: &Value) -> Option<Vec<String>> {
    let values = values.as_array().filter(|v| !v.is_empty())?;
    let strings: Vec<String> = values
        .iter()
        .map(|v| v.as_str().map(str::to_owned))
        .collect::<Option<_>>()?;
    let mut unique = strings.clone();
    unique.sort();
    unique.dedup();
    (unique.len() == strings.len()).then_some(strings)
}

/// A schema's description, else its title.
fn description(schema: &Value) -> Option<String> {
    ["description", "title"]
        .iter()
        .find_map(|key| schema.get(*key).and_then(Value::as_str))
        .map(str::to_owned)
        .filter(|text| !text.trim().is_empty())
}
