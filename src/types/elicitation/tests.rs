//! Tests of `types::elicitation`.

use super::*;
use serde_json::json;

fn form(v: Value) -> ElicitRequestFormParams {
    match serde_json::from_value(v).unwrap() {
        ElicitRequestParams::Form(f) => f,
        other => panic!("{other:?}"),
    }
}

#[test]
fn absent_or_form_mode_reads_as_form() {
    // The 2025-06-18 shape has no mode at all.
    let old = json!({"message": "Your name?", "requestedSchema": {"type": "object",
        "properties": {"name": {"type": "string"}}, "required": ["name"]}});
    let f = form(old.clone());
    assert!(f.is_required("name") && !f.is_required("age"));
    assert_eq!(f.properties().unwrap().len(), 1);
    let p = ElicitRequestParams::Form(f);
    assert_eq!((p.mode(), p.message()), ("form", "Your name?"));
    assert_eq!(serde_json::to_value(&p).unwrap(), old);

    let mut explicit = old;
    explicit["mode"] = json!("form");
    assert_eq!(form(explicit).message, "Your name?");
}

#[test]
fn url_mode_reads_and_writes_its_tag() {
    let v = json!({"mode": "url", "message": "Sign in", "url": "https://auth.example/x",
                   "elicitationId": "e-1"});
    let p: ElicitRequestParams = serde_json::from_value(v.clone()).unwrap();
    match &p {
        ElicitRequestParams::Url(u) => {
            assert_eq!(
                u,
                &ElicitRequestUrlParams::new("Sign in", "https://auth.example/x")
                    .with_elicitation_id("e-1")
            )
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(p.mode(), "url");
    assert_eq!(serde_json::to_value(&p).unwrap(), v);
    let u = ElicitRequestUrlParams::new("m", "https://u").with_elicitation_id("id");
    assert_eq!(serde_json::to_value(&u).unwrap()["mode"], "url");
    // 2026-07-28 has no elicitation id: it reads, and is written back without one.
    let modern = json!({"mode": "url", "message": "Sign in", "url": "https://auth.example/x"});
    let p: ElicitRequestParams = serde_json::from_value(modern.clone()).unwrap();
    match &p {
        ElicitRequestParams::Url(u) => assert_eq!(u.elicitation_id, None),
        other => panic!("{other:?}"),
    }
    assert_eq!(serde_json::to_value(&p).unwrap(), modern);
    assert!(
        serde_json::from_value::<ElicitRequestParams>(json!({"mode": "url", "message": "m"}))
            .is_err()
    );
}

#[test]
fn unknown_modes_are_rejected() {
    let err =
        serde_json::from_value::<ElicitRequestParams>(json!({"mode": "voice", "message": "m"}))
            .unwrap_err();
    assert!(err.to_string().contains("voice"), "{err}");
    assert!(
        serde_json::from_value::<ElicitRequestParams>(json!({"mode": 3, "message": "m"})).is_err()
    );
}

#[test]
fn accept_defaults_keeps_each_json_kind() {
    let f = ElicitRequestFormParams::new(
        "Settings",
        json!({"type": "object", "properties": {
            "name": {"type": "string", "default": "Ada"},
            "age": {"type": "integer", "default": 36},
            "retries": {"type": "integer", "default": 3.0},
            "ratio": {"type": "number", "default": 0.75},
            "subscribe": {"type": "boolean", "default": false},
            "color": {"type": "string", "enum": ["red", "green"], "default": "green"},
            "size": {"type": "string", "oneOf": [{"const": "s", "title": "Small"}], "default": "s"},
            "tags": {"type": "array", "items": {"type": "string", "enum": ["a", "b"]},
                     "default": ["a"]},
            "email": {"type": "string", "format": "email"},
            "broken": {"type": "string", "default": null}
        }}),
    );
    let r = ElicitResult::accept_defaults(&f);
    assert_eq!(r.action, ElicitAction::Accept);
    let content = Value::Object(r.content.clone().unwrap());
    assert_eq!(
        content,
        json!({"name": "Ada", "age": 36, "retries": 3, "ratio": 0.75, "subscribe": false,
               "color": "green", "size": "s", "tags": ["a"]})
    );
    assert!(content["age"].is_i64() && content["retries"].is_i64());
    assert!(content["ratio"].is_f64());
    assert_eq!(
        serde_json::to_value(&r).unwrap(),
        json!({"action": "accept", "content": content})
    );
}

#[test]
fn accept_defaults_without_properties_is_an_empty_accept() {
    let f = form(json!({"message": "ok?"}));
    assert_eq!(f.requested_schema, json!({"type": "object"}));
    assert_eq!(
        ElicitResult::accept_defaults(&f),
        ElicitResult::accept(Map::new())
    );
}

#[test]
fn results_and_completion() {
    assert_eq!(
        serde_json::to_value(ElicitResult::decline()).unwrap(),
        json!({"action": "decline"})
    );
    assert_eq!(
        serde_json::to_value(ElicitResult::cancel()).unwrap(),
        json!({"action": "cancel"})
    );
    let r: ElicitResult = serde_json::from_value(json!({"action": "accept"})).unwrap();
    assert_eq!(r, ElicitResult::new(ElicitAction::Accept));
    assert!(serde_json::from_value::<ElicitResult>(json!({"action": "maybe"})).is_err());
    let n: ElicitationCompleteNotificationParams =
        serde_json::from_value(json!({"elicitationId": "e-1"})).unwrap();
    assert_eq!(n, ElicitationCompleteNotificationParams::new("e-1"));
}

#[test]
fn a_form_whose_schema_is_not_an_object_schema_is_refused() {
    for schema in [
        json!(7),
        json!("form"),
        json!([{"type": "string"}]),
        json!(null),
        json!({"type": "string"}),
        json!({"type": "object", "properties": ["name"]}),
    ] {
        let params = json!({"message": "?", "requestedSchema": schema});
        let decoded = serde_json::from_value::<ElicitRequestParams>(params);
        let err = decoded.expect_err(&schema.to_string()).to_string();
        assert!(
            err.contains("requestedSchema must be an object schema"),
            "{err}"
        );
    }
    // Lenient where a member is only missing.
    let bare = json!({"message": "?", "requestedSchema": {"properties": {}}});
    assert!(form(bare).properties().is_some_and(Map::is_empty));
    let empty = json!({"message": "?", "requestedSchema": {}});
    assert!(form(empty).properties().is_none());
}
