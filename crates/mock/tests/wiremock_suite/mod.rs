//! Index of the WireMock compatibility tests.
mod differential; // the same requests to WireMock and to the mock: the share that agrees
mod java_client; // WireMock's Java client registers, matches and verifies stubs on the mock
mod jvm; // finding java and the jar, starting WireMock standalone
mod python_client; // the wiremock package from PyPI registers, matches and verifies stubs
mod recording; // WireMock and the mock record the same upstream: alike mappings, alike replays
