//! The report's view of the target as `/proc` showed it: which processes were observed, the
//! threads of the largest pools by state at each step (a stacked-bar chart), and the
//! connections at each step (a table), with the notes on evidence that is missing.
use crate::html::escape;
use chokepoint_result::{PoolThreads, Step, SweepResult, ThreadCounts};
use plotters::prelude::*;
use std::fmt::Write;

/// Pools charted: the largest ones (by the most threads at any step).
const POOLS_CHARTED: usize = 4;
const WIDTH: u32 = 960;
const PANEL_HEIGHT: u32 = 190;

/// The states drawn, bottom to top, with their colours and labels.
const STATES: [(&str, RGBColor); 7] = [
    ("running", RGBColor(214, 39, 40)),
    ("socket wait", RGBColor(31, 119, 180)),
    ("lock wait (futex)", RGBColor(255, 127, 14)),
    ("event loop", RGBColor(44, 160, 44)),
    ("sleeping", RGBColor(148, 103, 189)),
    ("disk wait", RGBColor(140, 86, 75)),
    ("other", RGBColor(150, 150, 150)),
];

fn by_state(counts: &ThreadCounts) -> [f64; 7] {
    [
        counts.running,
        counts.socket_wait,
        counts.lock_wait,
        counts.event_wait,
        counts.sleeping,
        counts.disk_wait,
        counts.other,
    ]
}

/// The "Target as /proc saw it" section; empty when no step observed the target.
pub fn section(result: &SweepResult) -> String {
    let steps = &result.steps;
    if steps
        .iter()
        .all(|s| s.observed_pids.is_empty() && s.observation_notes.is_empty())
    {
        return String::new();
    }
    let mut html = String::from("<h2>The target as /proc saw it</h2>\n");
    let mut pids: Vec<i32> = steps.iter().flat_map(|s| s.observed_pids.clone()).collect();
    pids.sort_unstable();
    pids.dedup();
    let interval = steps
        .iter()
        .find_map(|s| s.threads_by_pool.as_ref().map(|t| t.interval_ms))
        .unwrap_or(0);
    let _ = writeln!(
        html,
        "<p>Processes observed (the given process and its descendants, listed again at every sample): {}. \
         Threads and connections are sampled every {interval} ms during each step's measured window.</p>",
        pids.iter().map(i32::to_string).collect::<Vec<_>>().join(", ")
    );
    let notes: Vec<String> = steps
        .iter()
        .flat_map(|s| {
            s.observation_notes
                .iter()
                .map(move |n| format!("{} clients: {n}", s.clients))
        })
        .collect();
    for note in notes {
        let _ = writeln!(html, "<p class=\"note\">{}</p>", escape(&note));
    }
    match threads_chart(steps) {
        Some(Ok(svg)) => {
            let _ = writeln!(
                html,
                "<figure id=\"threads\">\n{}\n<figcaption>Threads of the largest pools at each step, by what they were doing \
                 (the mean over the samples). A pool held by a blocking call shows as all its threads in a socket wait.</figcaption>\n</figure>",
                svg.trim()
            );
        }
        Some(Err(err)) => {
            let _ = writeln!(
                html,
                "<p class=\"note\">The threads chart could not be drawn: {}</p>",
                escape(&err)
            );
        }
        None => {}
    }
    html.push_str(&connections_table(steps));
    html
}

/// The largest pools over the sweep, by the most threads seen at any step.
fn largest_pools(steps: &[Step]) -> Vec<String> {
    let mut pools: Vec<(String, f64)> = Vec::new();
    for pool in steps
        .iter()
        .filter_map(|s| s.threads_by_pool.as_ref())
        .flat_map(|t| t.pools.iter())
    {
        match pools.iter_mut().find(|(name, _)| *name == pool.pool) {
            Some((_, most)) => *most = most.max(pool.most.threads),
            None => pools.push((pool.pool.clone(), pool.most.threads)),
        }
    }
    pools.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    pools
        .into_iter()
        .take(POOLS_CHARTED)
        .map(|(name, _)| name)
        .collect()
}

fn pool_at<'s>(step: &'s Step, pool: &str) -> Option<&'s PoolThreads> {
    step.threads_by_pool
        .as_ref()?
        .pools
        .iter()
        .find(|p| p.pool == pool)
}

fn threads_chart(steps: &[Step]) -> Option<Result<String, String>> {
    let pools = largest_pools(steps);
    if pools.is_empty() {
        return None;
    }
    let mut buffer = String::new();
    let drawn = (|| -> Result<(), Box<dyn std::error::Error>> {
        let height = PANEL_HEIGHT * pools.len() as u32 + 40;
        let root = SVGBackend::with_string(&mut buffer, (WIDTH, height)).into_drawing_area();
        root.fill(&WHITE)?;
        let panels = root.split_evenly((pools.len(), 1));
        for (panel, pool) in panels.iter().zip(&pools) {
            let most = steps
                .iter()
                .filter_map(|s| pool_at(s, pool))
                .map(|p| p.mean.threads)
                .fold(1.0, f64::max);
            let mut chart = ChartBuilder::on(panel)
                .caption(format!("pool {pool}"), ("sans-serif", 18))
                .margin(8)
                .x_label_area_size(30)
                .y_label_area_size(50)
                .build_cartesian_2d(0f64..steps.len() as f64, 0f64..most * 1.1)?;
            chart
                .configure_mesh()
                .disable_x_mesh()
                .x_labels(steps.len().max(1))
                .x_label_formatter(&|x| {
                    let i = x.floor() as usize;
                    steps
                        .get(i)
                        .map(|s| format!("{} clients", s.clients))
                        .unwrap_or_default()
                })
                .y_desc("threads")
                .draw()?;
            for (state, (label, colour)) in STATES.iter().enumerate() {
                let bars = steps.iter().enumerate().filter_map(|(i, step)| {
                    let counts = by_state(&pool_at(step, pool)?.mean);
                    let below: f64 = counts[..state].iter().sum();
                    let x = i as f64 + 0.2;
                    Some(Rectangle::new(
                        [(x, below), (x + 0.6, below + counts[state])],
                        colour.filled(),
                    ))
                });
                chart
                    .draw_series(bars)?
                    .label(*label)
                    .legend(move |(x, y)| {
                        Rectangle::new([(x, y - 5), (x + 10, y + 5)], colour.filled())
                    });
            }
            chart
                .configure_series_labels()
                .background_style(WHITE.mix(0.8))
                .border_style(BLACK.mix(0.3))
                .position(SeriesLabelPosition::UpperLeft)
                .draw()?;
        }
        root.present()?;
        Ok(())
    })();
    Some(
        drawn
            .map(|_| buffer.replace(" xmlns=\"http://www.w3.org/2000/svg\"", ""))
            .map_err(|e| e.to_string()),
    )
}

/// Connections per step: the client side and each downstream peer port (the mock named).
fn connections_table(steps: &[Step]) -> String {
    let observed: Vec<&Step> = steps.iter().filter(|s| s.connections.is_some()).collect();
    if observed.is_empty() {
        return String::new();
    }
    let mut html = String::from(
        "<table>\n<thead><tr><th>clients</th><th>client side: established (most / mean)</th><th>TIME_WAIT</th>\
         <th>downstream: peer port, established most (served by the peer), TIME_WAIT</th></tr></thead>\n<tbody>\n",
    );
    for step in observed {
        let c = step.connections.as_ref().expect("filtered");
        let downstream = c
            .downstream
            .iter()
            .map(|peer| {
                format!(
                    "{}{}: {} ({}), {}",
                    peer.peer_port,
                    if peer.mock { " (mock)" } else { "" },
                    peer.counts.most.established,
                    peer.counts.most_served,
                    peer.counts.most.time_wait
                )
            })
            .collect::<Vec<_>>()
            .join("; ");
        let _ = writeln!(
            html,
            "<tr><td>{}</td><td>{} / {:.1}</td><td>{}</td><td>{}</td></tr>",
            step.clients,
            c.client_side.most.established,
            c.client_side.mean_established,
            c.client_side.most.time_wait,
            escape(&downstream)
        );
    }
    html.push_str(
        "</tbody>\n</table>\n<p class=\"note\">Counts are the most one sample saw. TIME_WAIT sockets belong to no process: \
         they are counted by port, so other processes' sockets to the same port count too.</p>\n",
    );
    html
}

#[cfg(test)]
mod tests {
    use super::*;
    use chokepoint_result::{LoadReport, ObservationNote, ThreadsByPool};

    fn step(clients: u32, waiting: f64) -> Step {
        let counts = ThreadCounts {
            threads: 20.0,
            socket_wait: waiting,
            lock_wait: 20.0 - waiting,
            ..ThreadCounts::default()
        };
        Step {
            load: LoadReport {
                clients,
                ..LoadReport::default()
            },
            observed_pids: vec![41, 42],
            threads_by_pool: Some(ThreadsByPool {
                interval_ms: 250,
                samples: 8,
                pools: vec![PoolThreads {
                    pool: "actor-pool".into(),
                    most: counts,
                    mean: counts,
                    waits_on: Vec::new(),
                    main_threads: None,
                }],
            }),
            ..Step::default()
        }
    }

    fn result(steps: Vec<Step>) -> SweepResult {
        SweepResult {
            target: "http://127.0.0.1:8080/".into(),
            context: Default::default(),
            steps,
            diagnosis: None,
            interrupted: false,
            chokepoint_version: String::new(),
            shard: None,
            merge: None,
            duration_s: 0.0,
            load_s: 0.0,
        }
    }

    #[test]
    fn the_section_names_the_processes_charts_the_pools_and_keeps_the_notes() {
        let mut steps = vec![step(10, 10.0), step(40, 20.0)];
        steps[1].observation_notes = vec![ObservationNote::ProcessGone { pid: 42 }];
        let html = section(&result(steps));
        assert!(html.contains("41, 42"), "{html}");
        assert!(html.contains("every 250 ms"), "{html}");
        assert!(
            html.contains("<svg") && html.contains("pool actor-pool"),
            "{html}"
        );
        assert!(html.contains("40 clients: process 42 was gone"), "{html}");
        // Nothing observed: no section.
        assert_eq!(section(&result(vec![Step::default()])), "");
    }
}
