//! The elicitation form API: fields read from the restricted schema, values checked before
//! anything is sent, and the form used by a real client against the demo server.

use umcp_test_support::demo;

use serde_json::{json, Value};
use umcp::jsonrpc::{ErrorCode, ErrorObject};
use umcp::types::{
    Choice, ElicitAction, ElicitForm, ElicitRequestFormParams, ElicitRequestParams, ElicitResult,
    FieldKind,
};
use umcp::{Client, Error, Options};

fn request() -> ElicitRequestFormParams {
    ElicitRequestFormParams::new(
        "Tell us about you",
        json!({"type": "object", "properties": {
            "name": {"type": "string", "title": "Name", "minLength": 2, "maxLength": 5},
            "email": {"type": "string", "format": "email"},
            "born": {"type": "string", "format": "date"},
            "site": {"type": "string", "format": "uri"},
            "age": {"type": "integer", "minimum": 0, "maximum": 150, "default": 30},
            "ratio": {"type": "number", "minimum": 0.5},
            "agree": {"type": "boolean", "default": false},
            "color": {"type": "string", "enum": ["r", "g"], "enumNames": ["Red", "Green"]},
            "size": {"type": "string", "oneOf": [{"const": "s", "title": "Small"},
                                                  {"const": "l", "title": "Large"}]},
            "tags": {"type": "array", "minItems": 1, "maxItems": 2,
                     "items": {"type": "string", "enum": ["a", "b", "c"]}}
        }, "required": ["name", "tags"]}),
    )
}

fn message(result: Result<(), Error>) -> String {
    match result {
        Err(Error::Invalid(message)) => message,
        other => panic!("{other:?}"),
    }
}

#[test]
fn fields_follow_the_requested_schema() {
    let form = ElicitForm::new(&request()).unwrap();
    assert_eq!(form.message(), "Tell us about you");
    let names: Vec<&str> = form.fields().iter().map(|f| f.name.as_str()).collect();
    assert_eq!(names.len(), 10);
    let field = |n: &str| form.fields().iter().find(|f| f.name == n).unwrap().clone();
    let name = field("name");
    assert!(name.required && name.label() == "Name");
    assert_eq!(
        name.kind,
        FieldKind::Text {
            min_length: Some(2),
            max_length: Some(5),
            format: None
        }
    );
    assert_eq!(
        field("age").kind,
        FieldKind::Number {
            integer: true,
            minimum: Some(0.0),
            maximum: Some(150.0)
        }
    );
    assert_eq!(field("age").default, Some(json!(30)));
    assert_eq!(field("agree").kind, FieldKind::Boolean);
    assert_eq!(
        field("color").kind,
        FieldKind::Choice(vec![
            Choice {
                value: "r".into(),
                title: Some("Red".into())
            },
            Choice {
                value: "g".into(),
                title: Some("Green".into())
            },
        ])
    );
    assert!(
        matches!(field("size").kind, FieldKind::Choice(ref c) if c[1].title.as_deref() == Some("Large"))
    );
    assert!(matches!(
        field("tags").kind,
        FieldKind::MultiChoice { min_items: Some(1), max_items: Some(2), ref choices } if choices.len() == 3
    ));
}

#[test]
fn values_outside_the_schema_are_refused_naming_the_field() {
    let mut form = ElicitForm::new(&request()).unwrap();
    for (field, value, expected) in [
        (
            "name",
            json!("A"),
            "form field `name` must be at least 2 characters",
        ),
        (
            "name",
            json!("Adalbert"),
            "form field `name` must be at most 5 characters",
        ),
        (
            "name",
            json!(5),
            "form field `name` must be a string, not 5",
        ),
        (
            "email",
            json!("not-an-email"),
            "form field `email` must be a valid email",
        ),
        (
            "born",
            json!("12/01/1990"),
            "form field `born` must be a valid date",
        ),
        (
            "site",
            json!("no scheme"),
            "form field `site` must be a valid uri",
        ),
        ("age", json!(151), "form field `age` must be at most 150"),
        ("age", json!(2.5), "form field `age` must be a whole number"),
        (
            "ratio",
            json!(0.1),
            "form field `ratio` must be at least 0.5",
        ),
        (
            "agree",
            json!("yes"),
            "form field `agree` must be true or false, not \"yes\"",
        ),
        (
            "color",
            json!("b"),
            "form field `color` `b` is not one of r, g",
        ),
        (
            "tags",
            json!([]),
            "form field `tags` needs at least 1 choices",
        ),
        (
            "tags",
            json!(["a", "b", "c"]),
            "form field `tags` allows at most 2 choices",
        ),
        (
            "tags",
            json!(["z"]),
            "form field `tags` `z` is not one of a, b, c",
        ),
        (
            "nope",
            json!(1),
            "form field `nope` is not a field of this form",
        ),
    ] {
        assert_eq!(message(form.set(field, value)), expected);
    }
    assert!(form.values().is_empty(), "refused values are not kept");
    // What fits is kept; a whole float for an integer is sent as an integer.
    form.set("age", json!(40.0)).unwrap();
    assert!(form.values()["age"].is_i64());
    form.set("email", json!("ada@example.org")).unwrap();
    form.set("born", json!("1815-12-10")).unwrap();
    form.set("site", json!("https://example.org")).unwrap();
}

#[test]
fn typed_text_is_parsed_by_the_fields_type() {
    let mut form = ElicitForm::new(&request()).unwrap();
    form.set_text("age", " 36 ").unwrap();
    form.set_text("ratio", "0.75").unwrap();
    form.set_text("agree", "Yes").unwrap();
    form.set_text("color", "Green").unwrap(); // by title
    form.set_text("size", "1").unwrap(); // by position
    form.set_text("tags", "a, c").unwrap();
    form.set_text("name", "Ada").unwrap();
    assert_eq!(
        Value::Object(form.values().clone()),
        json!({"age": 36, "ratio": 0.75, "agree": true, "color": "g", "size": "s",
               "tags": ["a", "c"], "name": "Ada"})
    );
    assert_eq!(
        message(form.set_text("age", "thirty")),
        "form field `age` `thirty` is not a number"
    );
    assert_eq!(
        message(form.set_text("agree", "perhaps")),
        "form field `agree` `perhaps` is not yes or no"
    );
    // Empty text clears.
    form.set_text("age", "").unwrap();
    assert!(!form.values().contains_key("age"));
}

#[test]
fn accept_needs_the_required_fields_and_defaults_fill_in() {
    let mut form = ElicitForm::new(&request()).unwrap();
    form.fill_defaults();
    assert_eq!(form.values()["age"], 30);
    assert_eq!(form.values()["agree"], false);
    assert_eq!(
        form.accept().unwrap_err().to_string(),
        "form field `name` is required"
    );
    form.set("name", json!("Ada")).unwrap();
    form.set("tags", json!(["b"])).unwrap();
    let answer = form.accept().unwrap();
    assert_eq!(answer.action, ElicitAction::Accept);
    assert_eq!(
        serde_json::to_value(&answer).unwrap(),
        json!({"action": "accept", "content":
               {"name": "Ada", "tags": ["b"], "age": 30, "agree": false}})
    );
}

#[test]
fn schemas_outside_the_restricted_subset_are_named() {
    let nested = ElicitRequestFormParams::new(
        "m",
        json!({"type": "object", "properties": {"address": {"type": "object"}}}),
    );
    assert_eq!(
        ElicitForm::new(&nested).unwrap_err().to_string(),
        "protocol: form field `address` has the unsupported type `object`"
    );
    let untyped = ElicitRequestFormParams::new("m", json!({"properties": {"x": {}}}));
    assert!(ElicitForm::new(&untyped).is_err());
    let empty = ElicitRequestFormParams::new("m", json!({"type": "object"}));
    let form = ElicitForm::new(&empty).unwrap();
    assert!(form.fields().is_empty());
    assert_eq!(
        form.accept().unwrap(),
        ElicitResult::accept(Default::default())
    );
}

#[test]
fn a_client_answers_the_demo_server_through_the_form() {
    let handler = |params: ElicitRequestParams| -> Result<ElicitResult, ErrorObject> {
        let ElicitRequestParams::Form(request) = params else {
            return Ok(ElicitResult::decline());
        };
        let invalid = |e: Error| ErrorObject::new(ErrorCode::INVALID_PARAMS, e.to_string());
        let mut form = ElicitForm::new(&request).map_err(invalid)?;
        form.fill_defaults();
        // The demo asks for a required string `answer` and a boolean `sure`.
        assert!(form.set("sure", json!("maybe")).is_err());
        form.set_text("sure", "no").map_err(invalid)?;
        form.set_text("answer", "typed").map_err(invalid)?;
        form.accept().map_err(invalid)
    };
    let client = Client::connect_with_options(
        demo::demo("normal"),
        Options::default().with_elicitation_handler(handler),
    )
    .unwrap();
    let result = client
        .call_tool("ask_user", json!({"question": "Ready?"}))
        .unwrap();
    let structured = result.structured_content.clone().unwrap();
    assert_eq!(structured["action"], "accept");
    assert_eq!(
        structured["content"],
        json!({"answer": "typed", "sure": false})
    );
}
