//! A gRPC unary call's request, from its schema: what `chokepoint load --grpc` sends.
//!
//! How data flows:
//! - [`Schema::from_descriptor_set`] reads the bytes `protoc --descriptor_set_out`
//!   (`--include_imports`) writes, a `FileDescriptorSet`, with prost-reflect.
//! - [`Schema::method`] finds `package.Service/Method` in it (a unary method: streaming ones are
//!   refused), and [`Method::request`] turns the request message given as JSON (protobuf's
//!   canonical JSON mapping, prost-reflect's serde) into a [`Call`]: the HTTP/2 path
//!   (`/package.Service/Method`) and the body, the message length-prefixed as gRPC frames it.
//! - The load engine sends the call as any HTTP/2 request, with [`CONTENT_TYPE`] and
//!   `te: trailers`, and reads its `grpc-status` (`chokepoint_load`'s `h2client`).
//!
//! - [`reflection::fetch`]: the schema asked from the server's own reflection service, when
//!   no descriptor set is given.
//! - The mock's side (`json.rs`): a call's request as JSON for the stubs' matchers,
//!   a stub's JSON as the method's response message, as WireMock's gRPC extension does.
//!
//! Every error is one line naming what was wrong and how to fix it ([`GrpcError`]).
#![deny(missing_docs)]

mod json;
pub mod reflection;

use bytes::{BufMut, Bytes, BytesMut};
use prost::Message;
use prost_reflect::{DescriptorPool, DeserializeOptions, DynamicMessage, MethodDescriptor};

/// The `content-type` of a gRPC request (protobuf messages, gRPC over HTTP/2's spec).
pub const CONTENT_TYPE: &str = "application/grpc";

/// Why a gRPC call could not be made from what was given.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum GrpcError {
    /// The descriptor set does not parse, or holds no service.
    #[error("{0}")]
    Descriptor(String),
    /// `--grpc` is not written `package.Service/Method`, or names nothing in the descriptor set.
    #[error("{0}")]
    Method(String),
    /// The JSON does not fit the method's request message.
    #[error("{0}")]
    Message(String),
}

/// The services of a descriptor set.
#[derive(Debug, Clone)]
pub struct Schema {
    pool: DescriptorPool,
    /// Where it was read from, for messages.
    source: String,
}

/// A unary method of a [`Schema`].
#[derive(Debug, Clone)]
pub struct Method {
    descriptor: MethodDescriptor,
}

/// One call as the load engine sends it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Call {
    /// The HTTP/2 `:path`: `/package.Service/Method`.
    pub path: String,
    /// The request message, framed: not compressed (0), its length (u32, big-endian), its bytes.
    pub body: Bytes,
}

impl Schema {
    /// Reads a `FileDescriptorSet`; `source` names the file in messages.
    pub fn from_descriptor_set(bytes: &[u8], source: &str) -> Result<Schema, GrpcError> {
        let pool = DescriptorPool::decode(bytes).map_err(|e| {
            GrpcError::Descriptor(format!(
                "--descriptor-set {source} is not a usable descriptor set ({}): make one with \
                 protoc --include_imports --descriptor_set_out=services.pb your.proto",
                one_line(&e.to_string())
            ))
        })?;
        if pool.services().len() == 0 {
            return Err(GrpcError::Descriptor(format!(
                "--descriptor-set {source} holds no service: make one with protoc \
                 --include_imports --descriptor_set_out=services.pb from the .proto that \
                 defines the service"
            )));
        }
        Ok(Schema {
            pool,
            source: source.to_string(),
        })
    }

    /// The unary method `package.Service/Method` (a `.` before the method is accepted too, as
    /// grpcurl writes it).
    pub fn method(&self, name: &str) -> Result<Method, GrpcError> {
        let name = name.trim().trim_start_matches('/');
        let split = name.rsplit_once('/').or_else(|| name.rsplit_once('.'));
        let Some((service_name, method_name)) =
            split.filter(|(s, m)| !s.is_empty() && !m.is_empty())
        else {
            return Err(GrpcError::Method(format!(
                "--grpc '{name}' is not a method: write it as package.Service/Method"
            )));
        };
        let Some(service) = self.pool.get_service_by_name(service_name) else {
            let known: Vec<String> = self
                .pool
                .services()
                .map(|s| s.full_name().to_string())
                .collect();
            return Err(GrpcError::Method(format!(
                "--grpc {name}: no service '{service_name}' in {} (it has {})",
                self.source,
                known.join(", ")
            )));
        };
        let Some(descriptor) = service.methods().find(|m| m.name() == method_name) else {
            let known: Vec<String> = service.methods().map(|m| m.name().to_string()).collect();
            return Err(GrpcError::Method(format!(
                "--grpc {name}: service {service_name} has no method '{method_name}' (it has {})",
                known.join(", ")
            )));
        };
        if descriptor.is_client_streaming() || descriptor.is_server_streaming() {
            return Err(GrpcError::Method(format!(
                "--grpc {name} is a streaming method: chokepoint sends unary calls only"
            )));
        }
        Ok(Method { descriptor })
    }
}

impl Method {
    /// `package.Service/Method`.
    pub fn name(&self) -> String {
        format!(
            "{}/{}",
            self.descriptor.parent_service().full_name(),
            self.descriptor.name()
        )
    }

    /// The call with this request message, given as JSON (protobuf's JSON mapping; a field the
    /// message does not have is an error, as a typo would otherwise send an empty field).
    pub fn request(&self, json: &str) -> Result<Call, GrpcError> {
        let input = self.descriptor.input();
        let mut deserializer = serde_json::Deserializer::from_str(json);
        let misfit = |why: String| {
            GrpcError::Message(format!(
                "the message for {} does not fit {} ({}): give its fields as JSON, e.g. \
                 --data '{{\"field\": \"value\"}}'",
                self.name(),
                input.full_name(),
                one_line(&why)
            ))
        };
        let message = DynamicMessage::deserialize_with_options(
            input.clone(),
            &mut deserializer,
            &DeserializeOptions::new().deny_unknown_fields(true),
        )
        .map_err(|e| misfit(e.to_string()))?;
        deserializer.end().map_err(|e| misfit(e.to_string()))?;
        Ok(Call {
            path: format!("/{}", self.name()),
            body: frame(&message.encode_to_vec()),
        })
    }
}

/// One gRPC message on the wire: not compressed (0), its length (u32, big-endian), its bytes.
pub fn frame(message: &[u8]) -> Bytes {
    let mut framed = BytesMut::with_capacity(5 + message.len());
    framed.put_u8(0);
    framed.put_u32(message.len() as u32);
    framed.extend_from_slice(message);
    framed.freeze()
}

fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests;
