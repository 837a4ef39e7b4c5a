//! WireMock's own Java client (`com.github.tomakehurst.wiremock.client.WireMock`, from the
//! standalone jar on Maven Central) drives the mock: `tests/fixtures/java/ClientCheck.java`
//! registers stubs, calls them, verifies the calls, lists, edits and removes stubs, and walks a
//! scenario; it exits non-zero on the first thing that is not as WireMock would have it.
