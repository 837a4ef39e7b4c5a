//! WireMock compatibility, tried against the real thing: the differential test (the same
//! requests sent to WireMock's standalone jar and to the mock, both serving the same mapping
//! folder) and WireMock's own Java client driving the mock. Both need `java` and the jar from
//! Maven Central (`.ci/run` fetches it); when either is missing the tests fail, naming the fix.
#[allow(dead_code)]
#[path = "suite/client.rs"]
mod client;
mod wiremock_suite;
