//! docs/reference.md keeps every subcommand's flags as the binary prints them: a flag added,
//! renamed or given another default fails here until the reference is copied again (the
//! block after `## \`chokepoint COMMAND\`` is `chokepoint COMMAND --help`, verbatim).
use std::process::Command;

#[test]
fn the_reference_holds_every_subcommands_help_as_the_binary_prints_it() {
    let reference = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/reference.md"),
    )
    .expect("docs/reference.md");
    for command in [
        "demo",
        "sweep",
        "load",
        "mock",
        "merge",
        "report",
        "demo-service",
        "compare",
        "observe",
    ] {
        let output = Command::new(env!("CARGO_BIN_EXE_chokepoint"))
            .args([command, "--help"])
            .output()
            .expect("the binary runs");
        let help = String::from_utf8_lossy(&output.stdout);
        let block = format!(
            "## `chokepoint {command}`\n```text\n{}\n```",
            help.trim_end()
        );
        assert!(
            reference.contains(&block),
            "docs/reference.md is out of date for `chokepoint {command}`: copy its --help there"
        );
    }
}
