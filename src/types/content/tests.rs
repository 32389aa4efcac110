//! Tests of `types::content`.

use super::*;
use crate::types::common::Role;
use serde_json::json;

/// Reads `v` from a value, from text (borrowed) and from a reader (owned text): the same
/// block each way, written back as `v`.
fn round_trip(v: Value) -> ContentBlock {
    let block: ContentBlock = serde_json::from_value(v.clone()).unwrap();
    assert_eq!(serde_json::to_value(&block).unwrap(), v, "{block:?}");
    let text = v.to_string();
    let from_text: ContentBlock = serde_json::from_str(&text).unwrap();
    assert_eq!(from_text, block);
    let from_reader: ContentBlock = serde_json::from_reader(text.as_bytes()).unwrap();
    assert_eq!(from_reader, block);
    block
}

#[test]
fn read_inside_buffered_or_escaped_input_blocks_are_the_same() {
    // serde buffers an untagged enum's input: no text on offer, a value instead.
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Either {
        Blocks { content: Vec<ContentBlock> },
    }
    let text = r#"{"content": [{"type": "text", "text": "hi"}, {"type": "x", "y": 1}]}"#;
    let Either::Blocks { content } = serde_json::from_str(text).unwrap();
    assert_eq!(content[0], ContentBlock::text("hi"));
    assert_eq!(
        content[1],
        ContentBlock::Unknown(json!({"type": "x", "y": 1}))
    );
    // A tag written with an escape is still the tag.
    let escaped: ContentBlock =
        serde_json::from_str(r#"{"type": "t\u0065xt", "text": "hi"}"#).unwrap();
    assert_eq!(escaped, ContentBlock::text("hi"));
    // Whitespace and key order in the text do not matter to the block.
    let spaced: ContentBlock =
        serde_json::from_str("{ \"text\" : \"hi\",\n \"type\":\"text\" }").unwrap();
    assert_eq!(spaced, ContentBlock::text("hi"));
}

#[test]
fn known_blocks_round_trip() {
    let t = round_trip(json!({"type": "text", "text": "hi",
        "annotations": {"audience": ["user"], "priority": 1.0}, "_meta": {"a": 1}}));
    assert_eq!(t.as_text(), Some("hi"));
    assert_eq!(t.annotations().unwrap().audience, Some(vec![Role::User]));
    let i = round_trip(json!({"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"}));
    assert!(matches!(&i, ContentBlock::Image(img) if img.mime_type == "image/png"));
    assert_eq!(i.as_text(), None);
    let a = round_trip(json!({"type": "audio", "data": "UklGRg==", "mimeType": "audio/wav"}));
    assert_eq!(a.kind(), "audio");
    let l = round_trip(
        json!({"type": "resource_link", "uri": "file:///a.txt", "name": "a.txt",
        "mimeType": "text/plain", "size": 12}),
    );
    assert!(matches!(&l, ContentBlock::ResourceLink(r) if r.size == Some(12)));
    let e = round_trip(json!({"type": "resource",
        "resource": {"uri": "file:///b", "mimeType": "text/plain", "text": "body"}}));
    match &e {
        ContentBlock::Resource(r) => assert_eq!(r.resource.as_text(), Some("body")),
        other => panic!("{other:?}"),
    }
    let blob =
        round_trip(json!({"type": "resource", "resource": {"uri": "file:///c", "blob": "AAE="}}));
    assert_eq!(blob.kind(), "resource");
}

#[test]
fn builders_serialise_with_their_tag() {
    assert_eq!(
        serde_json::to_value(ContentBlock::text("x")).unwrap(),
        json!({"type": "text", "text": "x"})
    );
    assert_eq!(
        serde_json::to_value(ContentBlock::image("AA==", "image/gif")).unwrap(),
        json!({"type": "image", "data": "AA==", "mimeType": "image/gif"})
    );
    assert_eq!(
        serde_json::to_value(ContentBlock::audio("AA==", "audio/mpeg")).unwrap()["type"],
        "audio"
    );
}

#[test]
fn unknown_types_are_preserved_unchanged() {
    let tool_use = json!({"type": "tool_use", "id": "t1", "name": "f", "input": {"x": [1, 2]}});
    let b = round_trip(tool_use);
    assert!(matches!(b, ContentBlock::Unknown(_)));
    assert_eq!(b.kind(), "tool_use");
    assert_eq!(b.annotations(), None);
    let no_type = round_trip(json!({"text": "untyped"}));
    assert_eq!(no_type.kind(), "");
    let not_object = round_trip(json!("just a string"));
    assert!(matches!(
        not_object,
        ContentBlock::Unknown(Value::String(_))
    ));
}

#[test]
fn malformed_known_blocks_are_kept_as_unknown() {
    let b = round_trip(json!({"type": "text", "text": 42}));
    assert_eq!(b.kind(), "text");
    assert_eq!(b.as_text(), None);
    let b = round_trip(json!({"type": "image", "data": "AA=="}));
    assert!(matches!(b, ContentBlock::Unknown(_)));
}

#[test]
fn reads_2024_11_05_blocks() {
    // The first spec had no audio, links or lastModified; these shapes must still read.
    let v = json!([
        {"type": "text", "text": "a", "annotations": {"audience": ["assistant"], "priority": 0.2}},
        {"type": "resource", "resource": {"uri": "test://x", "text": "t"}}
    ]);
    let blocks: Vec<ContentBlock> = serde_json::from_value(v).unwrap();
    assert_eq!(blocks[0].annotations().unwrap().priority, Some(0.2));
    assert!(matches!(&blocks[1], ContentBlock::Resource(_)));
    let embedded = EmbeddedResource::new(blocks_resource(&blocks[1]));
    assert_eq!(ContentBlock::from(embedded), blocks[1]);
}

fn blocks_resource(b: &ContentBlock) -> ResourceContents {
    match b {
        ContentBlock::Resource(r) => r.resource.clone(),
        other => panic!("{other:?}"),
    }
}

#[test]
fn each_block_reads_only_its_own_members() {
    // A member another block would have does not stop a text block, whatever its type.
    let text: ContentBlock =
        serde_json::from_str(r#"{"type":"text","text":"hi","data":5,"annotations":null}"#).unwrap();
    assert_eq!(text, ContentBlock::text("hi"));
    // A member of its own that does not fit makes the block unknown, kept as sent.
    let sent = json!({"type": "image", "data": "AA==", "mimeType": 3});
    let image: ContentBlock = serde_json::from_str(&sent.to_string()).unwrap();
    assert_eq!(image, ContentBlock::Unknown(sent));
    let audio: ContentBlock = serde_json::from_str(
        r#"{"type":"audio","data":"AA==","mimeType":"audio/wav","_meta":{"k":1}}"#,
    )
    .unwrap();
    match audio {
        ContentBlock::Audio(audio) => {
            assert_eq!(audio.mime_type, "audio/wav");
            assert_eq!(audio.meta.unwrap()["k"], 1);
        }
        other => panic!("{other:?}"),
    }
    let missing = json!({"type": "resource"});
    let block: ContentBlock = serde_json::from_str(&missing.to_string()).unwrap();
    assert_eq!(block, ContentBlock::Unknown(missing));
}
