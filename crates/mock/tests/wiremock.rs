//! WireMock compatibility, tried against the real thing: the differential test (the same
//! requests sent to WireMock's standalone jar and to the mock, both serving the same mapping
//! folder), WireMock's own Java client and its Python client (PyPI `wiremock`) driving the
//! mock. They need `java` and the jar from Maven Central, `python3` and the package (`.ci/run`
//! installs them); when one is missing the tests fail, naming the fix.
#[allow(dead_code)]
#[path = "suite/client.rs"]
mod client;
mod wiremock_suite;
