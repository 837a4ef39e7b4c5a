//! The timeline chart: throughput over time within each step, one small panel per step, with
//! the stalls the diagnosis named drawn as bands.
use super::{finite_max, nonzero, svg, value_label, Area, Drawn, PANEL_HEIGHT, STALL, TOTAL};
use crate::numbers;
use chokepoint_result::{Fact, Span, Step, SweepResult};
use plotters::prelude::*;

/// The stalls the diagnosis named, by the client count of their step.
pub fn named_stalls(result: &SweepResult) -> Vec<(u32, &[Span])> {
    let Some(diagnosis) = &result.diagnosis else {
        return Vec::new();
    };
    diagnosis
        .facts()
        .iter()
        .filter_map(|f| match f {
            Fact::Stalls { clients, spans, .. } => Some((*clients, spans.as_slice())),
            _ => None,
        })
        .collect()
}

/// Throughput over time within each step, one small chart per step, with the stalls the
/// diagnosis named drawn as red bands.
pub fn timelines(result: &SweepResult) -> Result<String, String> {
    let steps = &result.steps;
    let columns = match steps.len() {
        0 | 1 => 1,
        2 => 2,
        3..=6 => 3,
        _ => 4,
    };
    let rows = steps.len().div_ceil(columns).max(1);
    let x_max = nonzero(finite_max(steps.iter().map(|s| {
        s.timeline
            .last()
            .map_or(s.duration_s, |p| p.t_s + s.timeline_bucket_s)
    })));
    svg(50 + rows as u32 * PANEL_HEIGHT, |root| {
        let body = root.titled("Throughput over time within each step", ("sans-serif", 22))?;
        let stalls = named_stalls(result);
        for (panel, step) in body.split_evenly((rows, columns)).iter().zip(steps) {
            let spans = stalls
                .iter()
                .find(|s| s.0 == step.clients)
                .map_or(&[][..], |s| s.1);
            draw_timeline(panel, step, x_max, spans)?;
        }
        Ok(())
    })
}

fn draw_timeline(panel: &Area, step: &Step, x_max: f64, stalls: &[Span]) -> Drawn {
    let rates = bucket_rates(step);
    let y_max = nonzero(finite_max(rates.iter().map(|p| p.1)) * 1.2);
    let mut chart = ChartBuilder::on(panel)
        .caption(numbers::clients(step.clients), ("sans-serif", 15))
        .margin(8)
        .x_label_area_size(34)
        .y_label_area_size(50)
        .build_cartesian_2d(0f64..x_max, 0f64..y_max)?;
    chart
        .configure_mesh()
        .x_labels(6)
        .y_labels(4)
        .x_label_formatter(&value_label)
        .y_label_formatter(&value_label)
        .x_desc("time in step (s)")
        .y_desc("req/s")
        .label_style(("sans-serif", 11))
        .axis_desc_style(("sans-serif", 12))
        .max_light_lines(0)
        .bold_line_style(RGBColor(215, 215, 215))
        .draw()?;
    if rates.is_empty() {
        chart.draw_series(std::iter::once(Text::new(
            "no timeline recorded",
            (x_max * 0.3, y_max * 0.5),
            ("sans-serif", 14),
        )))?;
        return Ok(());
    }
    chart.draw_series(stalls.iter().map(|s| {
        Rectangle::new(
            [(s.start_s, 0.0), (s.start_s + s.length_s, y_max)],
            STALL.filled(),
        )
    }))?;
    chart.draw_series(LineSeries::new(rates.clone(), TOTAL.stroke_width(2)))?;
    Ok(())
}

/// (middle of the bucket in seconds, responses per second) for each timeline bucket.
pub(crate) fn bucket_rates(step: &Step) -> Vec<(f64, f64)> {
    if step.timeline_bucket_s.is_nan() || step.timeline_bucket_s <= 0.0 {
        return Vec::new();
    }
    let width = step.timeline_bucket_s;
    step.whole_timeline()
        .iter()
        .map(|p| (p.t_s + width / 2.0, p.completed as f64 / width))
        .filter(|p| p.0.is_finite() && p.1.is_finite())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use chokepoint_result::{LoadReport, TimelinePoint};

    #[test]
    fn bucket_rates_are_per_second_at_the_middle_of_each_bucket() {
        let bucket = |t_s: f64, completed: u64| TimelinePoint {
            t_s,
            completed,
            ..TimelinePoint::default()
        };
        let step = Step {
            load: LoadReport {
                duration_s: 2.0,
                timeline_bucket_s: 0.5,
                timeline: vec![
                    bucket(0.0, 10),
                    bucket(0.5, 0),
                    bucket(1.0, 10),
                    bucket(1.5, 0),
                ],
                ..LoadReport::default()
            },
            ..Step::default()
        };
        assert_eq!(bucket_rates(&step)[0], (0.25, 20.0));
        assert_eq!(bucket_rates(&step)[1], (0.75, 0.0));
        let no_width = Step {
            load: LoadReport {
                timeline_bucket_s: 0.0,
                ..step.load.clone()
            },
            ..step
        };
        assert!(bucket_rates(&no_width).is_empty());
    }
}
