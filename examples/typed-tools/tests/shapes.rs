//! The types generated for a schema of every shape (`codegen/tests/fixtures/shapes.lock`):
//! nested objects are structs, string enums enums, arrays `Vec`s, optional fields `Option`s
//! left out of the JSON when `None`, and what cannot be typed `serde_json::Value`. The
//! struct literals below compile only with exactly these field types.

use serde_json::{json, Map, Value};

include!(concat!(env!("OUT_DIR"), "/shapes.rs"));

use shapes::{
    PlanTripArgs, PlanTripArgsMode, PlanTripArgsStay, PlanTripArgsStayKind,
    PlanTripArgsTravellersItem, PlanTripOutput, Seat,
};

#[test]
fn the_arguments_take_every_shape_and_serialize_as_the_schema_says() {
    let args = PlanTripArgs {
        budget: Some(1200.5_f64),
        destination: String::from("Lisbon"),
        extra: Some(Value::from("anything")),
        flexible: None::<bool>,
        meta: Some(Map::<String, Value>::new()),
        mode: PlanTripArgsMode::Train,
        nights: 3_i64,
        notes: None::<String>,
        seat: Some(Seat {
            row: 12_i64,
            window: Some(true),
        }),
        stay: Some(PlanTripArgsStay {
            kind: PlanTripArgsStayKind::Camping,
            stars: None::<i64>,
        }),
        tags: Some(vec![String::from("sea")]),
        travellers: vec![PlanTripArgsTravellersItem {
            age: None::<i64>,
            name: String::from("Ada"),
        }],
        r#type: Some(String::from("holiday")),
    };
    assert_eq!(
        serde_json::to_value(&args).unwrap(),
        json!({
            "budget": 1200.5,
            "destination": "Lisbon",
            "extra": "anything",
            "meta": {},
            "mode": "train",
            "nights": 3,
            "seat": {"row": 12, "window": true},
            "stay": {"kind": "camping"},
            "tags": ["sea"],
            "travellers": [{"name": "Ada"}],
            "type": "holiday",
        })
    );
    let read: PlanTripArgs = serde_json::from_value(serde_json::to_value(&args).unwrap()).unwrap();
    assert_eq!(read, args);
}

#[test]
fn a_typed_result_reads_the_structured_content() {
    let result = umcp::types::CallToolResult::new(Vec::new())
        .with_structured_content(json!({"itinerary": ["fly", "walk"], "total": 99.5}));
    let output: PlanTripOutput = result.structured().unwrap();
    assert_eq!(output.itinerary, ["fly", "walk"]);
    assert_eq!(output.total, 99.5);
    let wrong = umcp::types::CallToolResult::new(Vec::new())
        .with_structured_content(json!({"itinerary": "not a list", "total": 1}));
    assert!(wrong.structured::<PlanTripOutput>().is_err());
    // An unknown mode is refused, not guessed.
    assert!(serde_json::from_value::<PlanTripArgsMode>(json!("bus")).is_err());
}
