//! Integration tests of the mock, each module one area of issue 4. They start a real mock on
//! 127.0.0.1 port 0 and talk to it over raw TCP, so faults are seen exactly as a client sees them.
mod suite;
