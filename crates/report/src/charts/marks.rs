//! The marks a chart over clients carries from the diagnosis: the knee (a dashed line), the peak
//! (a triangle) and what overload does (a bracket over the steps it was read from). Each figure
//! is read from the result's diagnosis; a result without one is drawn without its mark.

use super::{log2_clients, Chart, ClientAxis, Drawn, KNEE, OVERLOAD, PEAK};
use crate::numbers;
use chokepoint_result::{Overload, SweepResult};
use plotters::prelude::*;

/// A vertical line at the diagnosis's knee, labelled.
pub(super) fn draw_knee<'a, 'b: 'a>(
    chart: &mut Chart<'a, 'b>,
    result: &SweepResult,
    y_max: f64,
) -> Drawn {
    let Some(knee) = result.diagnosis.as_ref().and_then(|d| d.knee_clients()) else {
        return Ok(());
    };
    let x = log2_clients(knee as f64);
    chart
        .draw_series(DashedLineSeries::new(
            [(x, 0.0), (x, y_max)],
            6,
            4,
            KNEE.stroke_width(2),
        ))?
        .label(format!("knee: {knee} clients"))
        .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], KNEE.stroke_width(2)));
    chart.draw_series(std::iter::once(Text::new(
        format!("knee: {knee} clients"),
        (x + 0.06, y_max * 0.97),
        ("sans-serif", 15).into_font().color(&KNEE),
    )))?;
    Ok(())
}

/// The peak of successful throughput: a triangle on it, labelled.
pub(super) fn draw_peak<'a, 'b: 'a>(chart: &mut Chart<'a, 'b>, result: &SweepResult) -> Drawn {
    let Some(peak) = result.diagnosis.as_ref().and_then(|d| d.peak()) else {
        return Ok(());
    };
    if !(peak.throughput_rps.is_finite() && peak.throughput_rps > 0.0 && peak.clients > 0) {
        return Ok(());
    }
    let at = (log2_clients(f64::from(peak.clients)), peak.throughput_rps);
    let label = format!(
        "peak: {} req/s at {} clients",
        numbers::rate(peak.throughput_rps),
        peak.clients
    );
    chart
        .draw_series(std::iter::once(TriangleMarker::new(at, 9, PEAK.filled())))?
        .label(label.clone())
        .legend(|(x, y)| TriangleMarker::new((x + 10, y), 6, PEAK.filled()));
    // Below and right of the marker, clear of the line into it.
    chart.draw_series(std::iter::once(
        EmptyElement::at(at)
            + Text::new(label, (10, 8), ("sans-serif", 14).into_font().color(&PEAK)),
    ))?;
    Ok(())
}

/// What overload does, as the chart says it in a few words.
fn overload_words(overload: &Overload) -> String {
    match overload {
        Overload::Queues { .. } => "it queues".to_string(),
        Overload::Sheds {
            error_latency_ms, ..
        } => format!("it sheds (errors in {})", numbers::ms(*error_latency_ms)),
        Overload::TimesOut { wait_ms, .. } => {
            format!("it times out after {}", numbers::ms(*wait_ms))
        }
        Overload::Collapses { fall, .. } => {
            format!("it collapses (−{:.0}%)", fall * 100.0)
        }
    }
}

/// The client counts the overload behaviour was read over: from the knee (the peak for a
/// collapse, the first failing step for errors) to the largest step.
fn overload_span(overload: &Overload) -> (u32, u32) {
    match overload {
        Overload::Queues {
            from_clients,
            to_clients,
            ..
        } => (*from_clients, *to_clients),
        Overload::Sheds {
            from_clients,
            at_clients,
            ..
        }
        | Overload::TimesOut {
            from_clients,
            at_clients,
            ..
        } => (*from_clients, *at_clients),
        Overload::Collapses {
            peak, at_clients, ..
        } => (peak.clients, *at_clients),
    }
}

/// A drawn bracket's points, in the chart's coordinates.
type Bracket = Vec<(f64, f64)>;

/// The overload behaviour: a bracket over the steps it was read from, near the top, labelled.
/// Returns the bracket, for the legend to keep clear of it.
pub(super) fn draw_overload<'a, 'b: 'a>(
    chart: &mut Chart<'a, 'b>,
    result: &SweepResult,
    axis: &ClientAxis,
    y_max: f64,
) -> Result<Option<Bracket>, Box<dyn std::error::Error>> {
    let Some(overload) = result.diagnosis.as_ref().and_then(|d| d.overload()) else {
        return Ok(None);
    };
    let (from, to) = overload_span(overload);
    let range = axis.range();
    let clamp = |c: u32| log2_clients(f64::from(c.max(1))).clamp(range.start, range.end);
    let (x0, x1) = (clamp(from), clamp(to));
    let y = y_max * 0.88;
    let tick = y_max * 0.025;
    let style = OVERLOAD.stroke_width(2);
    let label = format!("past the knee: {}", overload_words(overload));
    chart
        .draw_series(std::iter::once(PathElement::new(
            vec![(x0, y - tick), (x0, y), (x1, y), (x1, y - tick)],
            style,
        )))?
        .label(label.clone())
        .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], style));
    chart.draw_series(std::iter::once(Text::new(
        label,
        (x0 + 0.06, y - tick),
        ("sans-serif", 14).into_font().color(&OVERLOAD),
    )))?;
    Ok(Some(vec![(x0, y), (x1, y)]))
}
