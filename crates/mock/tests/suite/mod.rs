//! Index of the test modules.
mod admin; // admin API round trips, settings, journal, stats and metrics endpoints
mod client; // a tiny raw HTTP/1.1 client over std::net::TcpStream
mod connections; // --max-connections with --keepalive-timeout: batches; admin at the cap
mod delays; // fixed, distributions, global delay, dribble, in-flight counting
mod faults; // each WireMock fault as a client sees it
mod folder; // mappings from a folder of WireMock-style files, __files escapes refused
mod grpc_json; // gRPC stubs as WireMock's gRPC extension writes them: JSON in, JSON out
mod h2; // HTTP/2 against curl and nghttp: h2c and ALPN beside HTTP/1.1, faults, a folder
mod matching; // each matcher, response field, priorities, near-miss 404
mod proxy_templating; // proxy stubs before a real downstream; global templating; 500s
mod recording_webhooks; // recording, replay with the upstream gone; webhooks to a receiver
mod stream_cap; // --max-concurrent-streams against a Go client, nghttp and a gRPC channel
