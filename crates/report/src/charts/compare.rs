//! The compare page's two charts: both sweeps on one chart over clients, before dashed in grey
//! and after solid in colour — successful throughput with each side's plateau, and p50/p99 latency. Like
//! the report's charts, every derived figure (the plateau) is read from the diagnoses.
use super::{
    clients_chart, draw_legend, finite_max, legend_corner, nonzero, points, svg_sized, ClientAxis,
};
use crate::numbers;
use chokepoint_result::{Step, SweepResult};
use plotters::prelude::*;

/// Each chart's canvas: two fit side by side on the page.
const SIZE: (u32, u32) = (540, 430);

const BEFORE: RGBColor = RGBColor(120, 128, 142);
const AFTER: RGBColor = RGBColor(31, 119, 180);
const AFTER_P99: RGBColor = RGBColor(214, 39, 40);
const BEFORE_P50: RGBColor = RGBColor(170, 176, 188);

fn axis(before: &SweepResult, after: &SweepResult) -> ClientAxis {
    let both: Vec<Step> = before.steps.iter().chain(&after.steps).cloned().collect();
    ClientAxis::new(&both)
}

fn plateau(result: &SweepResult) -> Option<f64> {
    result
        .diagnosis
        .as_ref()
        .and_then(|d| d.plateau().map(|p| p.throughput_rps))
        .filter(|p| p.is_finite() && *p > 0.0)
}

/// Successful throughput over clients, before and after, with each side's plateau.
pub fn throughput(before: &SweepResult, after: &SweepResult) -> Result<String, String> {
    let axis = axis(before, after);
    let sides = [("before", BEFORE, before), ("after", AFTER, after)];
    let y_max = nonzero(
        finite_max(
            sides
                .iter()
                .flat_map(|(_, _, r)| r.steps.iter().map(|s| s.ok_throughput_rps)),
        ) * 1.25,
    );
    svg_sized(SIZE, |root| {
        let mut chart = clients_chart(
            root,
            "Successful throughput vs clients",
            &axis,
            y_max,
            "successful requests/s",
            72,
        )?;
        let mut drawn = Vec::new();
        // After first, before dashed over it: where the two coincide both stay visible.
        for (name, color, result) in sides.into_iter().rev() {
            let line = points(&result.steps, |s| s.ok_throughput_rps);
            drawn.push(line.clone());
            let style = color.stroke_width(3);
            let series = if name == "before" {
                chart.draw_series(DashedLineSeries::new(line.clone(), 10, 6, style))?
            } else {
                chart.draw_series(LineSeries::new(line.clone(), style))?
            };
            series
                .label(name)
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], style));
            chart.draw_series(line.iter().map(|&p| Circle::new(p, 4, color.filled())))?;
            if let Some(plateau) = plateau(result) {
                let range = axis.range();
                let flat = vec![(range.start, plateau), (range.end, plateau)];
                drawn.push(flat.clone());
                chart
                    .draw_series(DashedLineSeries::new(flat, 6, 5, color.stroke_width(1)))?
                    .label(format!("{name}'s plateau {} req/s", numbers::rate(plateau)))
                    .legend(move |(x, y)| {
                        PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(1))
                    });
            }
        }
        let corner = legend_corner(&drawn, &axis, y_max, 4);
        draw_legend(&mut chart, corner)
    })
}

/// A latency line: its name, colour, how to read it from a step, and whether it is solid (after)
/// or dashed (before).
type Line = (String, RGBColor, fn(&Step) -> f64, bool);

/// p50 and p99 latency over clients, before and after.
pub fn latency(before: &SweepResult, after: &SweepResult) -> Result<String, String> {
    let axis = axis(before, after);
    let largest = finite_max(
        before
            .steps
            .iter()
            .chain(&after.steps)
            .flat_map(|s| [s.latency_ms.p50, s.latency_ms.p99]),
    );
    let (unit, per_unit) = if largest >= 10_000.0 {
        ("s", 1000.0)
    } else {
        ("ms", 1.0)
    };
    let y_max = nonzero(largest / per_unit * 1.15);
    svg_sized(SIZE, |root| {
        let mut chart = clients_chart(
            root,
            "Latency vs clients",
            &axis,
            y_max,
            &format!("latency ({unit})"),
            80,
        )?;
        // After first, before dashed over it: where the two coincide both stay visible.
        let lines: [(&SweepResult, Line); 4] = [
            (
                after,
                ("p99 after".into(), AFTER_P99, |s| s.latency_ms.p99, true),
            ),
            (
                after,
                ("p50 after".into(), AFTER, |s| s.latency_ms.p50, true),
            ),
            (
                before,
                ("p99 before".into(), BEFORE, |s| s.latency_ms.p99, false),
            ),
            (
                before,
                ("p50 before".into(), BEFORE_P50, |s| s.latency_ms.p50, false),
            ),
        ];
        let mut drawn = Vec::new();
        for (result, (name, color, value, solid)) in lines {
            let line = points(&result.steps, |s| value(s) / per_unit);
            drawn.push(line.clone());
            let style = color.stroke_width(3);
            let series = if solid {
                chart.draw_series(LineSeries::new(line.clone(), style))?
            } else {
                chart.draw_series(DashedLineSeries::new(line.clone(), 10, 6, style))?
            };
            series
                .label(name)
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], style));
            chart.draw_series(line.iter().map(|&p| Circle::new(p, 4, color.filled())))?;
        }
        let corner = legend_corner(&drawn, &axis, y_max, 4);
        draw_legend(&mut chart, corner)
    })
}
