//! Server reflection (`grpc.reflection.v1`, else `v1alpha` for older servers: the same
//! messages): the schema of `--grpc` when no `--descriptor-set` is given, asked from the server
//! itself as grpcurl does.
//!
//! [`fetch`] drives the exchange through a caller-given `call` — one call on the wire: one
//! request message sent and half-closed, the response messages read until the trailers
//! (chokepoint_load's `grpc_call_once`) — so that the exchange is tested here on tables: first
//! the file that defines the service (`file_containing_symbol`), then each file it imports that
//! the server did not send with it (`file_by_filename`), at most [`MOST_CALLS`] calls. The
//! messages are encoded with prost from their definitions in grpc's
//! `src/proto/grpc/reflection/v1/reflection.proto` (the `oneof`s as optional fields: the same
//! bytes on the wire), of which only the fields used here are declared.
use crate::{one_line, GrpcError, Schema};
use bytes::Bytes;
use prost::Message;
use prost_reflect::DescriptorPool;
use std::collections::{BTreeMap, BTreeSet};

/// The reflection method, version 1.
pub const V1: &str = "/grpc.reflection.v1.ServerReflection/ServerReflectionInfo";
/// The reflection method before version 1 (grpc-go and grpcio still serve both).
pub const V1ALPHA: &str = "/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo";
/// Calls at most: a schema imports far fewer files than this.
pub const MOST_CALLS: usize = 32;
/// The status of a server without the method (no reflection, or not that version).
const UNIMPLEMENTED: u32 = 12;

/// What one call answered: its response messages (unframed) and its `grpc-status`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Answered {
    /// The response messages, in order.
    pub messages: Vec<Bytes>,
    /// The `grpc-status` (`None` when the server sent none).
    pub status: Option<u32>,
    /// The `grpc-message`.
    pub status_message: String,
}

#[derive(Clone, PartialEq, prost::Message)]
struct ServerReflectionRequest {
    #[prost(string, optional, tag = "3")]
    file_by_filename: Option<String>,
    #[prost(string, optional, tag = "4")]
    file_containing_symbol: Option<String>,
}

#[derive(Clone, PartialEq, prost::Message)]
struct ServerReflectionResponse {
    #[prost(message, optional, tag = "4")]
    file_descriptor_response: Option<FileDescriptorResponse>,
    #[prost(message, optional, tag = "7")]
    error_response: Option<ErrorResponse>,
}

#[derive(Clone, PartialEq, prost::Message)]
struct FileDescriptorResponse {
    #[prost(bytes = "vec", repeated, tag = "1")]
    file_descriptor_proto: Vec<Vec<u8>>,
}

#[derive(Clone, PartialEq, prost::Message)]
struct ErrorResponse {
    #[prost(int32, tag = "1")]
    error_code: i32,
    #[prost(string, tag = "2")]
    error_message: String,
}

/// The two fields of a `FileDescriptorProto` read here: its name and the files it imports.
#[derive(Clone, PartialEq, prost::Message)]
struct FileHead {
    #[prost(string, optional, tag = "1")]
    name: Option<String>,
    #[prost(string, repeated, tag = "3")]
    dependency: Vec<String>,
}

/// A request, framed as gRPC frames a message.
fn request(ask: &ServerReflectionRequest) -> Bytes {
    crate::frame(&ask.encode_to_vec())
}

/// The schema of `service` (`package.Service`) from the reflection service of the server that
/// `call` reaches (`source` names it in messages).
pub fn fetch(
    service: &str,
    source: &str,
    mut call: impl FnMut(&str, Bytes) -> Result<Answered, String>,
) -> Result<Schema, GrpcError> {
    let failed = |why: String| {
        GrpcError::Descriptor(format!(
            "{source} gave no schema by server reflection ({}): give --descriptor-set FILE \
             (protoc --include_imports --descriptor_set_out=FILE your.proto), or enable \
             reflection on the server",
            one_line(&why)
        ))
    };
    // The call itself failed: nothing listens, or no HTTP/2 server does.
    let unreachable = |why: String| {
        GrpcError::Descriptor(format!(
            "{source}: {} (while asking its server reflection for the schema): check the URL \
             and that a gRPC server listens there",
            one_line(&why)
        ))
    };
    let first = ServerReflectionRequest {
        file_containing_symbol: Some(service.to_string()),
        file_by_filename: None,
    };
    let mut calls = 1;
    let mut path = V1;
    let mut answer = call(path, request(&first)).map_err(&unreachable)?;
    if answer.status == Some(UNIMPLEMENTED) {
        path = V1ALPHA;
        calls += 1;
        answer = call(path, request(&first)).map_err(&unreachable)?;
    }
    let mut files: BTreeMap<String, Vec<u8>> = BTreeMap::new();
    take(answer, &mut files).map_err(&failed)?;
    let mut asked: BTreeSet<String> = BTreeSet::new();
    loop {
        let missing: Vec<String> = files
            .values()
            .filter_map(|bytes| FileHead::decode(bytes.as_slice()).ok())
            .flat_map(|head| head.dependency)
            .filter(|name| !files.contains_key(name) && !asked.contains(name))
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect();
        if missing.is_empty() {
            break;
        }
        for name in missing {
            calls += 1;
            if calls > MOST_CALLS {
                return Err(failed(format!(
                    "more than {MOST_CALLS} calls for the files it imports"
                )));
            }
            let ask = ServerReflectionRequest {
                file_by_filename: Some(name.clone()),
                file_containing_symbol: None,
            };
            asked.insert(name);
            take(call(path, request(&ask)).map_err(&unreachable)?, &mut files).map_err(&failed)?;
        }
    }
    let mut set = Vec::new();
    for bytes in files.values() {
        prost::encoding::bytes::encode(1, bytes, &mut set);
    }
    let pool = DescriptorPool::decode(set.as_slice())
        .map_err(|e| failed(format!("its files do not make a schema: {e}")))?;
    if pool.get_service_by_name(service).is_none() {
        return Err(failed(format!("its files do not define {service}")));
    }
    Ok(Schema {
        pool,
        source: format!("the server reflection of {source}"),
    })
}

/// The files of one answer, by name; its error, or a status that is not OK, as words.
fn take(answer: Answered, files: &mut BTreeMap<String, Vec<u8>>) -> Result<(), String> {
    if let Some(status) = answer.status.filter(|&s| s != 0) {
        return Err(format!(
            "status {status}{}",
            if answer.status_message.is_empty() {
                String::new()
            } else {
                format!(": {}", answer.status_message)
            }
        ));
    }
    if answer.messages.is_empty() {
        return Err("no answer to the request".into());
    }
    for message in answer.messages {
        let response = ServerReflectionResponse::decode(message)
            .map_err(|e| format!("an answer that is not reflection's: {e}"))?;
        if let Some(error) = response.error_response {
            return Err(format!(
                "error {}: {}",
                error.error_code, error.error_message
            ));
        }
        let Some(found) = response.file_descriptor_response else {
            return Err("an answer without files".into());
        };
        for bytes in found.file_descriptor_proto {
            let head = FileHead::decode(bytes.as_slice())
                .map_err(|e| format!("a file that does not decode: {e}"))?;
            files.insert(head.name.unwrap_or_default(), bytes);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// shop.proto's FileDescriptorProto, from the test schema's set.
    fn shop_file() -> Vec<u8> {
        #[derive(Clone, PartialEq, prost::Message)]
        struct Set {
            #[prost(bytes = "vec", repeated, tag = "1")]
            file: Vec<Vec<u8>>,
        }
        let set = Set::decode(&include_bytes!("../tests/fixtures/shop.pb")[..]).unwrap();
        set.file.into_iter().next().unwrap()
    }

    fn files_answer(files: &[Vec<u8>]) -> Answered {
        let response = ServerReflectionResponse {
            file_descriptor_response: Some(FileDescriptorResponse {
                file_descriptor_proto: files.to_vec(),
            }),
            error_response: None,
        };
        Answered {
            messages: vec![Bytes::from(response.encode_to_vec())],
            status: Some(0),
            status_message: String::new(),
        }
    }

    /// The request a call carried, unframed.
    fn asked(body: &Bytes) -> ServerReflectionRequest {
        ServerReflectionRequest::decode(&body[5..]).unwrap()
    }

    #[test]
    fn a_v1alpha_server_is_asked_again_and_an_import_it_left_out_is_asked_by_name() {
        // shop.proto, made to import common.proto (a repeated field merges on the wire), which
        // the server sends only when asked for it by name.
        let mut shop = shop_file();
        prost::encoding::string::encode(3, &"common.proto".to_string(), &mut shop);
        let mut common = Vec::new();
        prost::encoding::string::encode(1, &"common.proto".to_string(), &mut common);
        let mut calls = Vec::new();
        let schema = fetch("shop.v1.Orders", "127.0.0.1:50051", |path, body| {
            let ask = asked(&body);
            calls.push((path.to_string(), ask.clone()));
            Ok(
                match (
                    path,
                    ask.file_containing_symbol.as_deref(),
                    ask.file_by_filename.as_deref(),
                ) {
                    (V1, _, _) => Answered {
                        status: Some(UNIMPLEMENTED),
                        ..Answered::default()
                    },
                    (V1ALPHA, Some("shop.v1.Orders"), None) => files_answer(&[shop.clone()]),
                    (V1ALPHA, None, Some("common.proto")) => files_answer(&[common.clone()]),
                    other => panic!("{other:?}"),
                },
            )
        })
        .expect("a schema");
        assert_eq!(
            schema.method("shop.v1.Orders/Place").unwrap().name(),
            "shop.v1.Orders/Place"
        );
        let paths: Vec<&str> = calls.iter().map(|(p, _)| p.as_str()).collect();
        assert_eq!(paths, [V1, V1ALPHA, V1ALPHA]);
    }

    #[test]
    fn a_server_without_reflection_or_the_service_is_one_line_saying_what_to_give() {
        let table: [(&str, Answered); 3] = [
            (
                "status 12",
                Answered {
                    status: Some(UNIMPLEMENTED),
                    status_message: "unknown service".into(),
                    ..Answered::default()
                },
            ),
            (
                "error 5: symbol not found",
                Answered {
                    messages: vec![Bytes::from(
                        ServerReflectionResponse {
                            file_descriptor_response: None,
                            error_response: Some(ErrorResponse {
                                error_code: 5,
                                error_message: "symbol not found".into(),
                            }),
                        }
                        .encode_to_vec(),
                    )],
                    status: Some(0),
                    status_message: String::new(),
                },
            ),
            (
                "do not define shop.v1.Orders",
                files_answer(&[{
                    let mut other = Vec::new();
                    prost::encoding::string::encode(1, &"other.proto".to_string(), &mut other);
                    other
                }]),
            ),
        ];
        for (why, answer) in table {
            let error = fetch("shop.v1.Orders", "127.0.0.1:50051", |_, _| {
                Ok(answer.clone())
            })
            .unwrap_err()
            .to_string();
            assert!(error.contains(why), "{why}: {error}");
            assert!(error.contains("--descriptor-set FILE"), "{error}");
            assert!(!error.contains('\n'), "{error}");
        }
    }
}
