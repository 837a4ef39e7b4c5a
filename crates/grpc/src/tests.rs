use super::*;

const SHOP: &[u8] = include_bytes!("../tests/fixtures/shop.pb");

fn schema() -> Schema {
    Schema::from_descriptor_set(SHOP, "shop.pb").unwrap()
}

#[test]
fn a_method_is_found_by_its_full_name() {
    let schema = schema();
    for name in [
        "shop.v1.Orders/Place",
        "/shop.v1.Orders/Place",
        "shop.v1.Orders.Place",
    ] {
        assert_eq!(schema.method(name).unwrap().name(), "shop.v1.Orders/Place");
    }
}

#[test]
fn unknown_names_and_streaming_methods_are_refused_in_one_line() {
    // (--grpc, a word of the message)
    let table = [
        ("Place", "package.Service/Method"),
        (
            "shop.v1.Order/Place",
            "no service 'shop.v1.Order' in shop.pb (it has shop.v1.Orders)",
        ),
        (
            "shop.v1.Orders/Take",
            "has no method 'Take' (it has Place, Watch)",
        ),
        ("shop.v1.Orders/Watch", "streaming"),
        ("shop.v1.Orders/", "package.Service/Method"),
    ];
    for (name, why) in table {
        let message = schema().method(name).unwrap_err().to_string();
        assert!(message.contains(why), "{name}: {message}");
        assert!(!message.contains('\n'), "{message}");
    }
}

#[test]
fn json_becomes_the_framed_protobuf_message() {
    let place = schema().method("shop.v1.Orders/Place").unwrap();
    let call = place
        .request(
            r#"{"customer": "ab", "items": [{"name": "c", "size": "LARGE"}], "totalCents": "300"}"#,
        )
        .unwrap();
    assert_eq!(call.path, "/shop.v1.Orders/Place");
    // customer (1, len 2 "ab"), items (2, len 5: name (1, len 1 "c"), size (2, varint 2)),
    // total_cents (3, varint 300 = 0xac 0x02).
    let message = b"\x0a\x02ab\x12\x05\x0a\x01c\x10\x02\x18\xac\x02";
    let mut framed = vec![0, 0, 0, 0, message.len() as u8];
    framed.extend_from_slice(message);
    assert_eq!(&call.body[..], &framed[..]);
    // The empty message is five bytes of frame and nothing else.
    assert_eq!(
        &place.request("{}").unwrap().body[..],
        b"\x00\x00\x00\x00\x00"
    );
}

#[test]
fn json_that_does_not_fit_the_message_is_refused() {
    let place = schema().method("shop.v1.Orders/Place").unwrap();
    // (JSON, a word of why)
    let table = [
        (r#"{"custmer": "ab"}"#, "custmer"),
        (r#"{"customer": 3}"#, "OrderRequest"),
        (r#"{"items": [{"size": "HUGE"}]}"#, "HUGE"),
        (r#"{"customer": "ab""#, "OrderRequest"),
        (r#"{} {}"#, "OrderRequest"),
        ("not json", "OrderRequest"),
    ];
    for (json, why) in table {
        let message = place.request(json).unwrap_err().to_string();
        assert!(message.contains(why), "{json}: {message}");
        assert!(message.contains("--data"), "{message}");
        assert!(!message.contains('\n'), "{message}");
    }
}

#[test]
fn a_file_that_is_not_a_descriptor_set_is_refused() {
    let proto = include_bytes!("../tests/fixtures/shop.proto");
    for (bytes, why) in [
        (&proto[..], "not a usable descriptor set"),
        (&b"\xff\xff\xff"[..], "not a usable descriptor set"),
        (&b""[..], "holds no service"),
    ] {
        let message = Schema::from_descriptor_set(bytes, "x.pb")
            .unwrap_err()
            .to_string();
        assert!(message.contains(why), "{message}");
        assert!(
            message.contains("--descriptor_set_out=services.pb"),
            "{message}"
        );
        assert!(!message.contains('\n'), "{message}");
    }
}
