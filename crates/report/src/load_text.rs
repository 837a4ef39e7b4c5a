//! stub: being written.
