//! The mock's side of a schema, as WireMock's gRPC extension does it: the descriptor sets of a
//! WireMock root's `grpc/` folder ([`Schema::from_descriptor_sets`]), a call's request message
//! turned into protobuf's JSON so that the stubs' JSON matchers and the journal read it
//! ([`Schema::request_as_json`]), a stub's JSON body turned into the method's response message
//! ([`Schema::response_from_json`]).
use crate::{one_line, GrpcError, Schema};
use prost::Message;
use prost_reflect::{DescriptorPool, DynamicMessage, MethodDescriptor};

impl Schema {
    /// Every descriptor set of `sets` (its bytes, and the file it was read from) in one schema,
    /// as the extension loads every `.dsc` and `.desc` file of its root's `grpc/` folder
    /// (wiremock-grpc-extension `GrpcHttpServerFactory.loadFileDescriptors`, at commit
    /// 00ad3e47b7a6518ebb11bca865b4488a4f0f9f22).
    pub fn from_descriptor_sets(sets: &[(Vec<u8>, String)]) -> Result<Schema, GrpcError> {
        let mut pool = DescriptorPool::new();
        for (bytes, source) in sets {
            pool.decode_file_descriptor_set(bytes.as_slice())
                .map_err(|e| {
                    GrpcError::Descriptor(format!(
                        "{source} is not a usable descriptor set ({}): make one with protoc \
                         --include_imports --descriptor_set_out={source} your.proto",
                        one_line(&e.to_string())
                    ))
                })?;
        }
        let source = sets
            .iter()
            .map(|(_, source)| source.as_str())
            .collect::<Vec<_>>()
            .join(", ");
        if pool.services().len() == 0 {
            return Err(GrpcError::Descriptor(format!(
                "{source}: no service in these descriptor sets: make them with protoc \
                 --include_imports --descriptor_set_out=FILE.dsc from the .proto that defines \
                 the service"
            )));
        }
        Ok(Schema { pool, source })
    }

    /// Whether HTTP/2 `:path` names a method of the schema (`/package.Service/Method`).
    pub fn knows(&self, path: &str) -> bool {
        self.method_at(path).is_some()
    }

    /// The request of a call to `path` (its body as gRPC frames it; the first message) as
    /// protobuf's JSON; `None` when the schema has no such method or the body is not one of its
    /// request messages (then the stubs see the bytes as they came).
    pub fn request_as_json(&self, path: &str, framed: &[u8]) -> Option<String> {
        let method = self.method_at(path)?;
        let message = unframe(framed)?;
        let decoded = DynamicMessage::decode(method.input(), message).ok()?;
        serde_json::to_string(&decoded).ok()
    }

    /// A stub's JSON body as the response message of the method at `path`, encoded (not
    /// framed); `None` when the schema has no such method, an error (one line) when the JSON
    /// does not fit the message.
    pub fn response_from_json(
        &self,
        path: &str,
        json: &[u8],
    ) -> Option<Result<Vec<u8>, GrpcError>> {
        let method = self.method_at(path)?;
        let output = method.output();
        let mut deserializer = serde_json::Deserializer::from_slice(json);
        let decoded = DynamicMessage::deserialize(output.clone(), &mut deserializer)
            .and_then(|message| deserializer.end().map(|()| message));
        Some(decoded.map(|message| message.encode_to_vec()).map_err(|e| {
            GrpcError::Message(format!(
                "the stub's JSON for {path} does not fit {} ({})",
                output.full_name(),
                one_line(&e.to_string())
            ))
        }))
    }

    /// The method an HTTP/2 `:path` names, of any kind.
    fn method_at(&self, path: &str) -> Option<MethodDescriptor> {
        let (service, method) = path.strip_prefix('/')?.rsplit_once('/')?;
        self.pool
            .get_service_by_name(service)?
            .methods()
            .find(|m| m.name() == method)
    }
}

/// The first message of a gRPC body: its compression flag (0, none), its length (u32,
/// big-endian), its bytes.
fn unframe(framed: &[u8]) -> Option<&[u8]> {
    let (&compressed, rest) = framed.split_first()?;
    if compressed != 0 {
        return None;
    }
    let length = u32::from_be_bytes(rest.get(..4)?.try_into().ok()?) as usize;
    rest.get(4..4 + length)
}

#[cfg(test)]
mod tests {
    use super::*;

    const SHOP: &[u8] = include_bytes!("../tests/fixtures/shop.pb");

    fn schema() -> Schema {
        Schema::from_descriptor_sets(&[(SHOP.to_vec(), "grpc/shop.dsc".into())]).unwrap()
    }

    #[test]
    fn a_calls_request_reads_as_json_and_a_stubs_json_encodes_as_its_reply() {
        let schema = schema();
        assert!(schema.knows("/shop.v1.Orders/Place"));
        assert!(!schema.knows("/shop.v1.Orders/Take"));
        assert!(
            !schema.knows("shop.v1.Orders/Place"),
            "a :path starts with /"
        );
        // OrderRequest{customer: "ada", total_cents: 1200}, framed.
        let call = schema
            .method("shop.v1.Orders/Place")
            .unwrap()
            .request(r#"{"customer": "ada", "totalCents": "1200"}"#)
            .unwrap();
        let json = schema
            .request_as_json("/shop.v1.Orders/Place", &call.body)
            .expect("the request read");
        let value: serde_json::Value = serde_json::from_str(&json).unwrap();
        assert_eq!(value["customer"], "ada");
        assert_eq!(value["totalCents"], "1200");
        // Not a framed message of the method: left as bytes.
        assert_eq!(schema.request_as_json("/shop.v1.Orders/Place", b"{}"), None);
        // OrderReply{id: "order-7"}: field 1, length 7.
        let reply = schema
            .response_from_json("/shop.v1.Orders/Place", br#"{"id": "order-7"}"#)
            .expect("a method of the schema")
            .unwrap();
        assert_eq!(reply, b"\x0a\x07order-7");
        assert!(schema
            .response_from_json("/other.Service/Call", b"{}")
            .is_none());
    }

    #[test]
    fn json_that_does_not_fit_the_reply_and_a_set_that_does_not_parse_are_one_line() {
        let misfit = schema()
            .response_from_json("/shop.v1.Orders/Place", br#"{"ident": 7}"#)
            .unwrap()
            .unwrap_err()
            .to_string();
        assert!(misfit.contains("shop.v1.OrderReply"), "{misfit}");
        assert!(!misfit.contains('\n'), "{misfit}");
        let broken = Schema::from_descriptor_sets(&[(b"not a set".to_vec(), "grpc/x.dsc".into())])
            .unwrap_err()
            .to_string();
        assert!(
            broken.starts_with("grpc/x.dsc is not a usable descriptor set"),
            "{broken}"
        );
    }
}
