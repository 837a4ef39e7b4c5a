//! The four charts of `report.html`, drawn by plotters as inline SVG strings.
//!
//! Every derived figure a chart shows — the base latency of the ideal line, the plateau, the
//! knee, the peak, the overload behaviour, the limit, the stalls — is read from the result's
//! diagnosis, never worked out again here: a result without one (saved mid-sweep, or by an
//! older version) is drawn without them.
//!
//! Clients go on a log-2 axis (1, 2, 4 … 1024 read evenly, and a sweep spans that range): the
//! axis is linear in log₂(clients) with tick labels written back as client counts, so ticks fall
//! on whole powers of two.
use crate::numbers;
use chokepoint_result::{Step, SweepResult};
use plotters::coord::Shift;
use plotters::prelude::*;

pub mod compare;
mod marks;
mod timeline;
use marks::{draw_knee, draw_overload, draw_peak};
pub use timeline::{named_stalls, timelines};

type Drawn = Result<(), Box<dyn std::error::Error>>;
type Area<'a> = DrawingArea<SVGBackend<'a>, Shift>;

/// Chart width in pixels (the page scales it to fit).
const WIDTH: u32 = 960;
/// Height of one of the three charts over clients.
const HEIGHT: u32 = 440;
/// Height of one row of the timeline's small multiples.
const PANEL_HEIGHT: u32 = 200;

const TOTAL: RGBColor = RGBColor(31, 119, 180);
const OK: RGBColor = RGBColor(44, 160, 44);
const IDEAL: RGBColor = RGBColor(150, 150, 150);
const KNEE: RGBColor = RGBColor(214, 39, 40);
const PLATEAU: RGBColor = RGBColor(255, 127, 14);
const PEAK: RGBColor = RGBColor(148, 103, 189);
const OVERLOAD: RGBColor = RGBColor(140, 86, 75);
const P50: RGBColor = RGBColor(31, 119, 180);
const P90: RGBColor = RGBColor(148, 103, 189);
const P99: RGBColor = RGBColor(214, 39, 40);
const MEAN: RGBColor = RGBColor(44, 160, 44);
/// A stall's band: the knee's red, light.
const STALL: RGBColor = RGBColor(246, 190, 190);

/// Runs `draw` on a fresh white SVG canvas and returns the SVG markup, without the XML
/// namespace attribute (an inline `<svg>` in HTML needs none, and the page keeps no URLs).
fn svg(height: u32, draw: impl FnOnce(&Area) -> Drawn) -> Result<String, String> {
    svg_sized((WIDTH, height), draw)
}

/// [`svg`] on a canvas of another size (the compare page sets two charts side by side).
fn svg_sized(size: (u32, u32), draw: impl FnOnce(&Area) -> Drawn) -> Result<String, String> {
    let mut buffer = String::new();
    {
        let root = SVGBackend::with_string(&mut buffer, size).into_drawing_area();
        root.fill(&WHITE).map_err(|e| e.to_string())?;
        draw(&root).map_err(|e| e.to_string())?;
        root.present().map_err(|e| e.to_string())?;
    }
    Ok(buffer.replace(" xmlns=\"http://www.w3.org/2000/svg\"", ""))
}

/// A chart over clients (log₂ axis, ticks at powers of two) with the page's common style.
fn clients_chart<'a, 'b>(
    root: &'a Area<'b>,
    caption: &str,
    axis: &ClientAxis,
    y_max: f64,
    y_desc: &str,
    y_label_width: u32,
) -> Result<Chart<'a, 'b>, Box<dyn std::error::Error>> {
    let mut chart = ChartBuilder::on(root)
        .caption(caption, ("sans-serif", 22))
        .margin(14)
        .x_label_area_size(50)
        .y_label_area_size(y_label_width)
        .build_cartesian_2d(axis.range(), 0f64..y_max)?;
    chart
        .configure_mesh()
        .x_labels(axis.labels())
        .x_label_formatter(&clients_label)
        .y_label_formatter(&value_label)
        .x_desc("clients (log₂ scale)")
        .y_desc(y_desc)
        .label_style(("sans-serif", 14))
        .axis_desc_style(("sans-serif", 16))
        .x_max_light_lines(0)
        .y_max_light_lines(1)
        .light_line_style(RGBColor(238, 238, 238))
        .bold_line_style(RGBColor(210, 210, 210))
        .draw()?;
    Ok(chart)
}

/// A log₂ clients axis covering every step, with whole powers of two at both ends.
struct ClientAxis {
    lo: f64,
    hi: f64,
}

impl ClientAxis {
    fn new(steps: &[Step]) -> ClientAxis {
        let min = steps.iter().map(|s| s.clients).min().unwrap_or(1);
        let max = steps.iter().map(|s| s.clients).max().unwrap_or(1);
        let lo = log2_clients(min as f64).floor();
        let mut hi = log2_clients(max as f64).ceil();
        if hi - lo < 2.0 {
            hi = lo + 2.0;
        }
        ClientAxis { lo, hi }
    }

    /// The plotted range, padded so points at the ends do not sit on the frame.
    fn range(&self) -> std::ops::Range<f64> {
        (self.lo - 0.3)..(self.hi + 0.3)
    }

    /// How many labels to ask for so that plotters puts one on each power of two.
    fn labels(&self) -> usize {
        (self.hi - self.lo) as usize + 2
    }
}

fn log2_clients(clients: f64) -> f64 {
    clients.max(1.0).log2()
}

fn clients_label(x: &f64) -> String {
    format!("{:.0}", 2f64.powf(*x))
}

/// A value axis label: `0`, `2.5`, `1000` (no `.0` on whole numbers).
fn value_label(value: &f64) -> String {
    if value.abs() >= 100.0 || value.fract() == 0.0 {
        format!("{value:.0}")
    } else {
        let text = format!("{value:.2}");
        text.trim_end_matches('0').trim_end_matches('.').to_string()
    }
}

fn finite_max(values: impl IntoIterator<Item = f64>) -> f64 {
    values
        .into_iter()
        .filter(|v| v.is_finite())
        .fold(0.0, f64::max)
}

/// Throughput (all and successful) over clients, the ideal line of clients / base latency, the
/// knee and the plateau.
pub fn throughput(result: &SweepResult) -> Result<String, String> {
    let steps = &result.steps;
    let axis = ClientAxis::new(steps);
    let diagnosis = result.diagnosis.as_ref();
    let plateau = diagnosis
        .and_then(|d| {
            d.plateau()
                .map(|p| p.throughput_rps)
                .or(d.pool().map(|p| p.plateau_rps))
        })
        .filter(|p| p.is_finite() && *p > 0.0);
    let base_ms = diagnosis
        .and_then(|d| d.base_latency_ms())
        .filter(|b| b.is_finite() && *b > 0.0);
    let measured = finite_max(
        steps
            .iter()
            .flat_map(|s| [s.throughput_rps, s.ok_throughput_rps]),
    );
    let y_max = nonzero(finite_max([measured, plateau.unwrap_or(0.0)]) * 1.25);
    svg(HEIGHT, |root| {
        let mut chart = clients_chart(
            root,
            "Throughput vs clients",
            &axis,
            y_max,
            "throughput (requests/s)",
            72,
        )?;
        let total = points(steps, |s| s.throughput_rps);
        let ok = points(steps, |s| s.ok_throughput_rps);
        let mut drawn = vec![total.clone(), ok.clone()];
        if let Some(base_ms) = base_ms {
            // clients / base latency at each step, joined like the measured lines so the two
            // compare segment by segment, up to where it leaves the chart.
            let ideal = clip_below(
                points(steps, |s| s.clients as f64 * 1000.0 / base_ms),
                y_max,
            );
            drawn.push(ideal.clone());
            chart
                .draw_series(DashedLineSeries::new(ideal, 8, 6, IDEAL.stroke_width(2)))?
                .label(format!("ideal: clients / {}", numbers::ms(base_ms)))
                .legend(|(x, y)| {
                    PathElement::new(vec![(x, y), (x + 20, y)], IDEAL.stroke_width(2))
                });
        }
        chart
            .draw_series(LineSeries::new(total.clone(), TOTAL.stroke_width(2)))?
            .label("all responses")
            .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], TOTAL.stroke_width(2)));
        chart.draw_series(total.iter().map(|&p| Circle::new(p, 4, TOTAL.filled())))?;
        chart
            .draw_series(DashedLineSeries::new(ok.clone(), 5, 3, OK.stroke_width(2)))?
            .label("successful (2xx)")
            .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], OK.stroke_width(2)));
        chart.draw_series(ok.iter().map(|&p| Cross::new(p, 5, OK.stroke_width(2))))?;
        if let Some(plateau) = plateau {
            let range = axis.range();
            drawn.push(vec![(range.start, plateau), (range.end, plateau)]);
            chart
                .draw_series(LineSeries::new(
                    [(range.start, plateau), (range.end, plateau)],
                    PLATEAU.stroke_width(1),
                ))?
                .label(format!("plateau {} req/s", numbers::rate(plateau)))
                .legend(|(x, y)| {
                    PathElement::new(vec![(x, y), (x + 20, y)], PLATEAU.stroke_width(1))
                });
        }
        draw_knee(&mut chart, result, y_max)?;
        draw_peak(&mut chart, result)?;
        if let Some(span) = draw_overload(&mut chart, result, &axis, y_max)? {
            drawn.push(span);
        }
        let corner = legend_corner(&drawn, &axis, y_max, 5);
        draw_legend(&mut chart, corner)
    })
}

/// A latency line: its name, colour, and how to read it from a step.
type Percentile = (&'static str, RGBColor, fn(&Step) -> f64);

/// Latency percentiles (p50, p90, p99) and the mean over clients.
pub fn latency(result: &SweepResult) -> Result<String, String> {
    let steps = &result.steps;
    let axis = ClientAxis::new(steps);
    let largest = finite_max(steps.iter().flat_map(|s| {
        let l = s.latency_ms;
        [l.p50, l.p90, l.p99, l.mean]
    }));
    let (unit, per_unit) = if largest >= 10_000.0 {
        ("s", 1000.0)
    } else {
        ("ms", 1.0)
    };
    let y_max = nonzero(largest / per_unit * 1.15);
    svg(HEIGHT, |root| {
        let mut chart = clients_chart(
            root,
            "Latency vs clients",
            &axis,
            y_max,
            &format!("latency ({unit})"),
            80,
        )?;
        let series: [Percentile; 4] = [
            ("p99", P99, |s| s.latency_ms.p99),
            ("p90", P90, |s| s.latency_ms.p90),
            ("p50", P50, |s| s.latency_ms.p50),
            ("mean", MEAN, |s| s.latency_ms.mean),
        ];
        let mut drawn = Vec::new();
        for (name, color, value) in series {
            let line = points(steps, |s| value(s) / per_unit);
            drawn.push(line.clone());
            chart
                .draw_series(LineSeries::new(line.clone(), color.stroke_width(2)))?
                .label(name)
                .legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2))
                });
            chart.draw_series(line.iter().map(|&p| Circle::new(p, 3, color.filled())))?;
        }
        draw_knee(&mut chart, result, y_max)?;
        draw_peak(&mut chart, result)?;
        if let Some(span) = draw_overload(&mut chart, result, &axis, y_max)? {
            drawn.push(span);
        }
        let corner = legend_corner(&drawn, &axis, y_max, 5);
        draw_legend(&mut chart, corner)
    })
}

/// Calls in flight at the downstream (mean and max) over clients, with the limit; `None` when
/// no step has downstream data.
pub fn in_flight(result: &SweepResult) -> Option<Result<String, String>> {
    let steps: Vec<Step> = result
        .steps
        .iter()
        .filter(|s| s.downstream_inflight.is_some())
        .cloned()
        .collect();
    if steps.is_empty() {
        return None;
    }
    let axis = ClientAxis::new(&result.steps);
    let limit = result.diagnosis.as_ref().and_then(|d| d.limit());
    let largest = finite_max(
        steps
            .iter()
            .filter_map(|s| s.downstream_inflight)
            .map(|d| d.max as f64)
            .chain(limit),
    );
    let y_max = nonzero(largest * 1.25);
    Some(svg(HEIGHT, |root| {
        let mut chart = clients_chart(
            root,
            "Downstream calls in flight vs clients",
            &axis,
            y_max,
            "calls in flight at the mock",
            72,
        )?;
        // Every client's request at the downstream at once: where in-flight would go unlimited.
        let diagonal = clip_below(points(&result.steps, |s| s.clients as f64), y_max);
        let mut drawn = vec![diagonal.clone()];
        chart
            .draw_series(DashedLineSeries::new(diagonal, 8, 6, IDEAL.stroke_width(2)))?
            .label("= clients (no limit)")
            .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], IDEAL.stroke_width(2)));
        let max = points(&steps, |s| {
            s.downstream_inflight.map_or(0.0, |d| d.max as f64)
        });
        let mean = points(&steps, |s| s.downstream_inflight.map_or(0.0, |d| d.mean));
        drawn.push(max.clone());
        drawn.push(mean.clone());
        for (name, color, line) in [("max", P99, max), ("mean", TOTAL, mean)] {
            chart
                .draw_series(LineSeries::new(line.clone(), color.stroke_width(2)))?
                .label(name)
                .legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2))
                });
            chart.draw_series(line.iter().map(|&p| Circle::new(p, 4, color.filled())))?;
        }
        if let Some(limit) = limit.filter(|l| l.is_finite()) {
            let range = axis.range();
            drawn.push(vec![(range.start, limit), (range.end, limit)]);
            chart
                .draw_series(LineSeries::new(
                    [(range.start, limit), (range.end, limit)],
                    PLATEAU.stroke_width(1),
                ))?
                .label(format!("limit {}", numbers::concurrency(limit)))
                .legend(|(x, y)| {
                    PathElement::new(vec![(x, y), (x + 20, y)], PLATEAU.stroke_width(1))
                });
        }
        draw_knee(&mut chart, result, y_max)?;
        draw_peak(&mut chart, result)?;
        if let Some(span) = draw_overload(&mut chart, result, &axis, y_max)? {
            drawn.push(span);
        }
        let corner = legend_corner(&drawn, &axis, y_max, 5);
        draw_legend(&mut chart, corner)
    }))
}

/// A line over the steps, ordered by clients: the adaptive search runs them out of order.
fn points(steps: &[Step], value: impl Fn(&Step) -> f64) -> Vec<(f64, f64)> {
    let mut line: Vec<(f64, f64)> = steps
        .iter()
        .map(|s| (log2_clients(s.clients as f64), value(s)))
        .filter(|p| p.1.is_finite())
        .collect();
    line.sort_by(|a, b| a.0.total_cmp(&b.0));
    line
}

/// The line up to where it first rises above `y_max`, ending on the edge.
fn clip_below(line: Vec<(f64, f64)>, y_max: f64) -> Vec<(f64, f64)> {
    let mut clipped: Vec<(f64, f64)> = Vec::with_capacity(line.len());
    for (x, y) in line {
        if y <= y_max {
            clipped.push((x, y));
            continue;
        }
        if let Some(&(x0, y0)) = clipped.last() {
            clipped.push((x0 + (x - x0) * (y_max - y0) / (y - y0), y_max));
        }
        break;
    }
    clipped
}

/// The corner of the plot where a legend of `entries` lines hides the least of the drawn lines
/// (each sampled along its segments); lower right, upper left, upper right, lower left when
/// they tie.
fn legend_corner(
    lines: &[Vec<(f64, f64)>],
    axis: &ClientAxis,
    y_max: f64,
    entries: usize,
) -> SeriesLabelPosition {
    let range = axis.range();
    let width = range.end - range.start;
    let mut samples = Vec::new();
    for line in lines {
        for pair in line.windows(2) {
            let ((x0, y0), (x1, y1)) = (pair[0], pair[1]);
            for i in 0..=20 {
                let t = i as f64 / 20.0;
                let x = x0 + (x1 - x0) * t;
                let y = y0 + (y1 - y0) * t;
                samples.push(((x - range.start) / width, y / y_max));
            }
        }
        if let [(x, y)] = line[..] {
            samples.push(((x - range.start) / width, y / y_max));
        }
    }
    // The legend box as a share of the plot: about a third wide, 6% high per entry.
    let box_width = 0.32;
    let box_height = (0.06 * entries as f64 + 0.04).min(0.6);
    let corners = [
        (SeriesLabelPosition::LowerRight, 1.0 - box_width, 0.0),
        (SeriesLabelPosition::UpperLeft, 0.0, 1.0 - box_height),
        (
            SeriesLabelPosition::UpperRight,
            1.0 - box_width,
            1.0 - box_height,
        ),
        (SeriesLabelPosition::LowerLeft, 0.0, 0.0),
    ];
    let hidden = |x0: f64, y0: f64| {
        samples
            .iter()
            .filter(|(x, y)| {
                (x0..=x0 + box_width).contains(x) && (y0..=y0 + box_height).contains(y)
            })
            .count()
    };
    corners
        .into_iter()
        .min_by_key(|&(_, x0, y0)| hidden(x0, y0))
        .map_or(SeriesLabelPosition::LowerRight, |c| c.0)
}

fn nonzero(value: f64) -> f64 {
    if value.is_finite() && value > 0.0 {
        value
    } else {
        1.0
    }
}

type Chart<'a, 'b> = ChartContext<
    'a,
    SVGBackend<'b>,
    Cartesian2d<plotters::coord::types::RangedCoordf64, plotters::coord::types::RangedCoordf64>,
>;

fn draw_legend<'a, 'b: 'a>(chart: &mut Chart<'a, 'b>, position: SeriesLabelPosition) -> Drawn {
    chart
        .configure_series_labels()
        .position(position)
        .label_font(("sans-serif", 14))
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK.mix(0.4))
        .draw()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use chokepoint_result::LoadReport;

    #[test]
    fn lines_run_in_order_of_clients_whatever_order_the_steps_ran_in() {
        let steps: Vec<Step> = [16, 32, 24, 20]
            .iter()
            .map(|&clients| Step {
                load: LoadReport {
                    clients,
                    ..LoadReport::default()
                },
                ..Step::default()
            })
            .collect();
        let xs: Vec<f64> = points(&steps, |s| s.clients as f64)
            .iter()
            .map(|p| p.1)
            .collect();
        assert_eq!(xs, vec![16.0, 20.0, 24.0, 32.0]);
    }

    #[test]
    fn a_line_is_cut_where_it_leaves_the_chart() {
        let line = vec![(0.0, 10.0), (1.0, 20.0), (2.0, 40.0), (3.0, 80.0)];
        assert_eq!(
            clip_below(line.clone(), 30.0),
            [(0.0, 10.0), (1.0, 20.0), (1.5, 30.0)]
        );
        assert_eq!(clip_below(line.clone(), 100.0), line);
        assert!(clip_below(vec![(0.0, 50.0)], 30.0).is_empty());
    }

    #[test]
    fn the_legend_goes_where_the_lines_are_not() {
        let axis = ClientAxis { lo: 0.0, hi: 6.0 };
        // A plateau high on the right: lower right is free.
        let plateau = vec![(0.0, 1.0), (4.0, 20.0), (6.0, 20.0)];
        assert!(matches!(
            legend_corner(&[plateau], &axis, 25.0, 4),
            SeriesLabelPosition::LowerRight
        ));
        // Throughput that collapses to the floor on the right: lower right is taken.
        let collapse = vec![(0.0, 20.0), (1.0, 40.0), (2.0, 5.0), (6.0, 5.0)];
        assert!(!matches!(
            legend_corner(&[collapse], &axis, 50.0, 4),
            SeriesLabelPosition::LowerRight
        ));
    }
}
