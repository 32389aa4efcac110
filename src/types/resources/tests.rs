//! Tests of `types::resources`.

use super::*;
use serde_json::json;

#[test]
fn lists_read_across_versions() {
    let page: ListResourcesResult = serde_json::from_value(json!({
        "resources": [
            {"uri": "file:///a", "name": "a", "mimeType": "text/plain"},
            {"uri": "file:///b", "name": "b", "title": "B", "size": 2048,
             "annotations": {"lastModified": "2025-01-12T15:00:58Z"},
             "icons": [{"src": "https://x/i.svg", "mimeType": "image/svg+xml"}]}
        ],
        "nextCursor": "page2"
    }))
    .unwrap();
    assert_eq!(page.next_cursor.as_deref(), Some("page2"));
    assert_eq!(page.resources[0].display_name(), "a");
    assert_eq!(page.resources[1].display_name(), "B");
    assert_eq!(page.resources[1].size, Some(2048));

    let templates: ListResourceTemplatesResult = serde_json::from_value(json!({
        "resourceTemplates": [{"uriTemplate": "file:///{path}", "name": "files"}]
    }))
    .unwrap();
    assert_eq!(
        templates.resource_templates[0],
        ResourceTemplate::new("file:///{path}", "files")
    );
    assert_eq!(templates.next_cursor, None);
    let empty: ListResourcesResult = serde_json::from_value(json!({})).unwrap();
    assert!(empty.resources.is_empty());
}

#[test]
fn read_result_tells_text_from_blob() {
    let v = json!({"contents": [
        {"uri": "file:///t", "mimeType": "text/plain", "text": "hello"},
        {"uri": "file:///b", "mimeType": "image/png", "blob": "iVBORw0KGgo="},
        {"uri": "file:///e", "text": ""}
    ]});
    let r: ReadResourceResult = serde_json::from_value(v.clone()).unwrap();
    assert_eq!(r.contents[0].as_text(), Some("hello"));
    assert_eq!(r.contents[0].mime_type(), Some("text/plain"));
    assert_eq!(r.contents[1].as_blob(), Some("iVBORw0KGgo="));
    assert_eq!(r.contents[1].as_text(), None);
    assert_eq!(r.contents[1].uri(), "file:///b");
    assert_eq!(r.contents[2].as_text(), Some(""));
    assert_eq!(serde_json::to_value(&r).unwrap(), v);
    let neither = serde_json::from_value::<ResourceContents>(json!({"uri": "x"}));
    assert!(neither.is_err());
}

#[test]
fn params_serialise_with_the_uri() {
    assert_eq!(
        serde_json::to_value(ReadResourceRequestParams::new("file:///a")).unwrap(),
        json!({"uri": "file:///a"})
    );
    assert_eq!(
        serde_json::to_value(SubscribeRequestParams::new("u")).unwrap(),
        serde_json::to_value(UnsubscribeRequestParams::new("u")).unwrap()
    );
    let n: ResourceUpdatedNotificationParams =
        serde_json::from_value(json!({"uri": "file:///a/b"})).unwrap();
    assert_eq!(n, ResourceUpdatedNotificationParams::new("file:///a/b"));
    let built = ReadResourceResult::new(vec![
        ResourceContents::text("a", "t"),
        ResourceContents::blob("b", "AA=="),
    ]);
    assert_eq!(
        serde_json::to_value(&built).unwrap(),
        json!({"contents": [{"uri": "a", "text": "t"}, {"uri": "b", "blob": "AA=="}]})
    );
    let r = Resource::new("u", "n")
        .with_description("d")
        .with_mime_type("m");
    assert_eq!(
        serde_json::to_value(&r).unwrap(),
        json!({"uri": "u", "name": "n", "description": "d", "mimeType": "m"})
    );
}
