//! JUnit XML for CI (`--junit FILE`): the gates of a run as test cases, so Jenkins, GitLab and
//! the like show which gate failed and why. The shape is the one those tools read (the Ant
//! JUnit schema): `<testsuites>` of `<testsuite name tests failures errors skipped>` of
//! `<testcase classname name>`, a failed one holding `<failure message type>` with the gate's
//! words, each case's words also in `<system-out>`.
//!
//! Data flows: the binary turns what it checked (`--expect` gates, the figures of a comparison)
//! into [`Suite`]s of [`Case`]s → [`render`] → [`crate::files::write_junit`] writes it
//! atomically. The XML is written by quick-xml, which escapes text and attributes.
use quick_xml::events::{BytesDecl, BytesText, Event};
use quick_xml::Writer;

/// One gate as a test case.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Case {
    /// The gate, as the user reads it: `p99<500ms@40`, `p99 at 40 clients`.
    pub name: String,
    /// Whether it failed.
    pub failed: bool,
    /// What was measured, in words: the failure's message when it failed.
    pub words: String,
}

/// The gates of one kind (`--expect`, a comparison) as one test suite.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Suite {
    /// The suite's name, e.g. `chokepoint sweep --expect`.
    pub name: String,
    /// The class name of its cases, e.g. `chokepoint.expect` (CI tools group cases by it).
    pub classname: String,
    /// Its cases, in the order they were checked.
    pub cases: Vec<Case>,
}

/// The suites as one JUnit XML document, ending in a newline.
pub fn render(suites: &[Suite]) -> String {
    let mut writer = Writer::new_with_indent(Vec::new(), b' ', 2);
    // Writing to a Vec cannot fail.
    write(&mut writer, suites).expect("writing XML to memory");
    let mut xml = String::from_utf8(writer.into_inner()).expect("the XML is UTF-8");
    xml.push('\n');
    xml
}

fn write(writer: &mut Writer<Vec<u8>>, suites: &[Suite]) -> std::io::Result<()> {
    writer.write_event(Event::Decl(BytesDecl::new("1.0", Some("UTF-8"), None)))?;
    let count = |suite: &Suite| suite.cases.iter().filter(|c| c.failed).count();
    let tests: usize = suites.iter().map(|s| s.cases.len()).sum();
    let failures: usize = suites.iter().map(count).sum();
    writer
        .create_element("testsuites")
        .with_attribute(("name", "chokepoint"))
        .with_attribute(("tests", tests.to_string().as_str()))
        .with_attribute(("failures", failures.to_string().as_str()))
        .with_attribute(("errors", "0"))
        .write_inner_content(|writer| {
            for suite in suites {
                writer
                    .create_element("testsuite")
                    .with_attribute(("name", clean(&suite.name).as_str()))
                    .with_attribute(("tests", suite.cases.len().to_string().as_str()))
                    .with_attribute(("failures", count(suite).to_string().as_str()))
                    .with_attribute(("errors", "0"))
                    .with_attribute(("skipped", "0"))
                    .write_inner_content(|writer| {
                        for case in &suite.cases {
                            write_case(writer, &suite.classname, case)?;
                        }
                        Ok(())
                    })?;
            }
            Ok(())
        })?;
    Ok(())
}

fn write_case(writer: &mut Writer<Vec<u8>>, classname: &str, case: &Case) -> std::io::Result<()> {
    let words = clean(&case.words);
    writer
        .create_element("testcase")
        .with_attribute(("classname", clean(classname).as_str()))
        .with_attribute(("name", clean(&case.name).as_str()))
        .write_inner_content(|writer| {
            if case.failed {
                writer
                    .create_element("failure")
                    .with_attribute(("message", words.as_str()))
                    .with_attribute(("type", "gate"))
                    .write_text_content(BytesText::new(&words))?;
            }
            writer
                .create_element("system-out")
                .write_text_content(BytesText::new(&words))?;
            Ok(())
        })?;
    Ok(())
}

/// The text without the control characters XML 1.0 cannot carry, even escaped.
fn clean(text: &str) -> String {
    text.chars()
        .filter(|c| !c.is_control() || matches!(c, '\n' | '\t'))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markup_in_a_gate_is_escaped_and_control_characters_dropped() {
        let xml = render(&[Suite {
            name: "s".into(),
            classname: "c".into(),
            cases: vec![Case {
                name: "p99<500ms@40 & \"x\"".into(),
                failed: true,
                words: "p99 was 2027 ms <bad>\u{1b}[0m".into(),
            }],
        }]);
        assert!(
            xml.contains("name=\"p99&lt;500ms@40 &amp; &quot;x&quot;\""),
            "{xml}"
        );
        assert!(xml.contains("p99 was 2027 ms &lt;bad&gt;[0m"), "{xml}");
        assert!(!xml.contains('\u{1b}'));
    }
}
