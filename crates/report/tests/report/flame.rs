//! The flame graphs in "Where the limit sits": the knee's step as inferno draws it from the
//! stacks the step kept, and what grew from the step below, the place outlined.
use crate::place::observed;
use chokepoint_report::html;

fn section(page: &str) -> &str {
    let start = page
        .find("<section id=\"place\">")
        .expect("a place section");
    let end = page[start..].find("</section>").expect("closed") + start;
    &page[start..end]
}

#[test]
fn the_knee_and_what_grew_below_it_are_drawn_with_the_place_outlined() {
    let result = observed(true);
    let knee = result.diagnosis.as_ref().unwrap().knee_clients().unwrap();
    let page = html::render(&result);
    let section = section(&page);
    let graphs: Vec<&str> = section.split("<svg version=").skip(1).collect();
    assert_eq!(graphs.len(), 2, "the knee's and the differential");
    assert!(
        graphs[0].contains(&format!("Threads at {knee} clients, by where they were")),
        "{}",
        graphs[0]
    );
    // Widths are threads: jcmd saw 20 of the pool in the call at the knee (it has 20 actors).
    assert!(graphs[0].contains("waiting on a downstream call (20 threads, 100.00%)"));
    // The place, its pool and its blocking call, is outlined (the page's `g.place` style).
    let outlined: Vec<&str> = graphs[0]
        .split("<g class=\"place\">")
        .skip(1)
        .map(|g| g.split("</title>").next().unwrap())
        .collect();
    assert_eq!(
        outlined,
        [
            "<title>actor-pool (20 threads, 100.00%)",
            "<title>java.net.http.HttpClient.send (20 threads, 100.00%)"
        ]
    );
    // The idle selector thread waits for work, not in a request: left out.
    assert!(!graphs[0].contains("EPoll.wait"));
    // Neither inferno's script nor its style, which would apply to the whole page.
    for left_out in ["<script", "onload", "<style"] {
        assert!(!section.contains(left_out), "{left_out}");
    }
    let below = result
        .steps
        .iter()
        .filter(|s| s.clients < knee)
        .map(|s| s.clients)
        .max()
        .unwrap();
    assert!(graphs[1].contains(&format!("What grew from {below} to {knee} clients")));
}

#[test]
fn a_sweep_without_stacks_draws_no_flame_graph() {
    let page = html::render(&observed(false));
    assert!(!section(&page).contains("<svg"));
}
