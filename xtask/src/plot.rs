//! Figures (SVG and PNG) drawn with plotters from a spec's summary.
//!
//! Text is rendered with plotters' pure-Rust `ab_glyph` backend and DejaVu Sans embedded in the binary (crate
//! `dejavu`), so labels are readable on machines without fontconfig or system fonts.
//!
//! A figure has one panel per (metric, dataset): metrics are panel rows, datasets panel columns, one line per
//! method with x read from the setting (`m=1000` -> 1000), or with `x_metric` from another metric of the same
//! cell (error against time: each point at the time measured at its `m`, the line joining the points in the
//! order of `m`). Methods whose id ends in `_exact` are drawn dashed in the colour of their base method (the
//! paper's "dashed lines indicate the exact solution").
use std::path::Path;
use std::sync::OnceLock;

use anyhow::{anyhow, Result};
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use crate::fsx;
use crate::rows::Summary;
use crate::spec::{setting_value, FigureLayout, Key, Spec};

const PANEL: (u32, u32) = (520, 340);
const TITLE_HEIGHT: u32 = 50;
// Okabe-Ito colours: green and blue first, as in the paper's Nystrom figure (green KSVD, blue KPCA).
const COLORS: [RGBColor; 6] = [
    RGBColor(0, 158, 115),
    RGBColor(0, 114, 178),
    RGBColor(213, 94, 0),
    RGBColor(204, 121, 167),
    RGBColor(230, 159, 0),
    RGBColor(86, 180, 233),
];

fn register_font() -> Result<()> {
    static REGISTERED: OnceLock<bool> = OnceLock::new();
    let ok = *REGISTERED.get_or_init(|| {
        plotters::style::register_font("sans-serif", FontStyle::Normal, dejavu::sans::regular()).is_ok()
    });
    if ok {
        Ok(())
    } else {
        Err(anyhow!(
            "the embedded DejaVu Sans font could not be registered with plotters"
        ))
    }
}

struct Series {
    label: String,
    color: RGBColor,
    dashed: bool,
    points: Vec<(f64, f64)>,
}

struct Panel {
    title: String,
    y_label: String,
    series: Vec<Series>,
    /// Axes on a log10 scale (the points are stored as log10 of the values).
    log: (bool, bool),
}

fn panels(spec: &Spec, fig: &FigureLayout, summary: &[Summary]) -> Vec<Panel> {
    let datasets: Vec<&str> = match &fig.datasets {
        Some(d) => d.iter().map(String::as_str).collect(),
        None => spec.file.datasets.iter().map(|d| d.id.as_str()).collect(),
    };
    let methods: Vec<&str> = match &fig.methods {
        Some(m) => m.iter().map(String::as_str).collect(),
        None => spec.file.methods.iter().map(|m| m.id.as_str()).collect(),
    };
    let base_color = |m: &str| {
        let base = m.strip_suffix("_exact").unwrap_or(m);
        let i = methods
            .iter()
            .filter(|x| !x.ends_with("_exact"))
            .position(|x| *x == base)
            .unwrap_or(0);
        COLORS[i % COLORS.len()]
    };
    let mut out = Vec::new();
    for metric in &fig.metrics {
        for d in &datasets {
            let series = methods
                .iter()
                .filter_map(|m| {
                    // (order along the line, x, y): the setting orders the points; x is the setting's
                    // value or, with `x_metric`, that metric's value in the same cell.
                    let mut ordered: Vec<(f64, f64, f64)> = summary
                        .iter()
                        .filter(|s| s.dataset == *d && s.method == *m && &s.metric == metric)
                        .filter_map(|s| {
                            let order = setting_value(&s.setting, &fig.x)?;
                            let x = match &fig.x_metric {
                                None => order,
                                Some(xm) => {
                                    summary
                                        .iter()
                                        .find(|t| {
                                            t.dataset == s.dataset
                                                && t.method == s.method
                                                && &t.metric == xm
                                                && t.setting == s.setting
                                        })?
                                        .value?
                                }
                            };
                            Some((order, to_axis(x, fig.log_x)?, to_axis(s.value?, fig.log_y)?))
                        })
                        .collect();
                    ordered.sort_by(|a, b| a.0.total_cmp(&b.0));
                    let mut points: Vec<(f64, f64)> = ordered.into_iter().map(|(_, x, y)| (x, y)).collect();
                    // A reference without an x (e.g. the exact solution, setting `exact`) is one value:
                    // kept as a flat line, spread over the panel's x range below.
                    if points.is_empty() {
                        let flat: Vec<f64> = summary
                            .iter()
                            .filter(|s| s.dataset == *d && s.method == *m && &s.metric == metric)
                            .filter(|s| setting_value(&s.setting, &fig.x).is_none())
                            .filter_map(|s| to_axis(s.value?, fig.log_y))
                            .collect();
                        if let [y] = flat[..] {
                            points = vec![(f64::NAN, y)];
                        }
                    }
                    (!points.is_empty()).then(|| Series {
                        label: spec.label(Key::Method, m),
                        color: base_color(m),
                        dashed: m.ends_with("_exact"),
                        points,
                    })
                })
                .collect::<Vec<_>>();
            let xs = series
                .iter()
                .flat_map(|s| s.points.iter().map(|p| p.0))
                .filter(|x| x.is_finite());
            let (lo, hi) = xs.fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), x| (a.min(x), b.max(x)));
            let series: Vec<Series> = series
                .into_iter()
                .filter_map(|mut s| {
                    if s.points.len() == 1 && s.points[0].0.is_nan() {
                        if lo > hi {
                            return None;
                        }
                        let y = s.points[0].1;
                        s.points = vec![(lo, y), (hi, y)];
                    }
                    Some(s)
                })
                .collect();
            out.push(Panel {
                title: spec.label(Key::Dataset, d),
                y_label: spec.label(Key::Metric, metric),
                series,
                log: (fig.log_x, fig.log_y),
            });
        }
    }
    out
}

/// A value in axis coordinates: itself, or its log10 on a log axis (`None` when not drawable).
fn to_axis(v: f64, log: bool) -> Option<f64> {
    let a = if log { (v > 0.0).then(|| v.log10())? } else { v };
    a.is_finite().then_some(a)
}

/// The largest font size up to `size` at which `text` fits into `width` pixels (DejaVu Sans averages
/// about 0.55 em per character).
fn fitted_font_size(text: &str, size: f64, width: f64) -> f64 {
    let chars = text.chars().count().max(1) as f64;
    size.min((width - 16.0) / (0.55 * chars)).max(8.0)
}

fn padded(lo: f64, hi: f64) -> (f64, f64) {
    if (hi - lo).abs() < 1e-12 {
        let pad = if lo.abs() > 1e-12 { lo.abs() * 0.05 } else { 1.0 };
        (lo - pad, hi + pad)
    } else {
        let pad = (hi - lo) * 0.06;
        (lo - pad, hi + pad)
    }
}

/// Tick labels with as many decimals as the axis span needs; on a log axis the value `10^t` in
/// engineering-friendly form.
fn tick_formatter(lo: f64, hi: f64, log: bool) -> impl Fn(&f64) -> String {
    let span = (hi - lo).abs();
    let decimals = if span >= 50.0 {
        0
    } else if span >= 5.0 {
        1
    } else if span >= 0.5 {
        2
    } else {
        3
    };
    move |v: &f64| {
        if log {
            let x = 10f64.powf(*v);
            if (1e-3..1e4).contains(&x.abs()) {
                // Three significant digits.
                let digits = (2 - x.abs().log10().floor() as i32).max(0) as usize;
                format!("{x:.digits$}")
            } else {
                format!("{x:.1e}")
            }
        } else {
            format!("{v:.decimals$}")
        }
    }
}

fn draw_panel<DB: DrawingBackend>(area: &DrawingArea<DB, Shift>, panel: &Panel, x_label: &str) -> Result<()> {
    let err = |e: DrawingAreaErrorKind<DB::ErrorType>| anyhow!("drawing a figure panel: {e:?}");
    let all = panel.series.iter().flat_map(|s| s.points.iter());
    let (mut x0, mut x1, mut y0, mut y1) = (f64::INFINITY, f64::NEG_INFINITY, f64::INFINITY, f64::NEG_INFINITY);
    for &(x, y) in all {
        (x0, x1, y0, y1) = (x0.min(x), x1.max(x), y0.min(y), y1.max(y));
    }
    if !x0.is_finite() {
        (x0, x1, y0, y1) = (0.0, 1.0, 0.0, 1.0);
    }
    let (x0, x1) = padded(x0, x1);
    let (y0, y1) = padded(y0, y1);
    let mut chart = ChartBuilder::on(area)
        .caption(&panel.title, ("sans-serif", 18))
        .margin(10)
        .x_label_area_size(42)
        .y_label_area_size(62)
        .build_cartesian_2d(x0..x1, y0..y1)
        .map_err(err)?;
    let (fx, fy) = (tick_formatter(x0, x1, panel.log.0), tick_formatter(y0, y1, panel.log.1));
    chart
        .configure_mesh()
        .x_labels(6)
        .y_labels(6)
        .x_label_formatter(&fx)
        .y_label_formatter(&fy)
        .x_desc(x_label)
        .y_desc(&panel.y_label)
        .label_style(("sans-serif", 13))
        .axis_desc_style(("sans-serif", 14))
        .light_line_style(RGBColor(235, 235, 235))
        .draw()
        .map_err(err)?;
    if panel.series.is_empty() {
        let style = TextStyle::from(("sans-serif", 16)).color(&RGBColor(120, 120, 120));
        chart
            .draw_series(std::iter::once(Text::new(
                "no results",
                ((x0 + x1) / 2.0, (y0 + y1) / 2.0),
                style,
            )))
            .map_err(err)?;
        return Ok(());
    }
    for s in &panel.series {
        let style = s.color.stroke_width(2);
        let color = s.color;
        let drawn = if s.dashed {
            chart
                .draw_series(DashedLineSeries::new(s.points.iter().copied(), 8, 5, style))
                .map_err(err)?
        } else {
            chart
                .draw_series(LineSeries::new(s.points.iter().copied(), style))
                .map_err(err)?
        };
        drawn
            .label(&s.label)
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], color.stroke_width(2)));
        if !s.dashed {
            chart
                .draw_series(s.points.iter().map(|&p| Circle::new(p, 3, color.filled())))
                .map_err(err)?;
        }
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::LowerRight)
        .label_font(("sans-serif", 13))
        .background_style(WHITE.mix(0.85))
        .border_style(RGBColor(180, 180, 180))
        .draw()
        .map_err(err)?;
    Ok(())
}

fn draw<DB: DrawingBackend>(
    root: DrawingArea<DB, Shift>,
    title: &str,
    fig: &FigureLayout,
    panels: &[Panel],
    cols: usize,
) -> Result<()> {
    let err = |e: DrawingAreaErrorKind<DB::ErrorType>| anyhow!("drawing a figure: {e:?}");
    root.fill(&WHITE).map_err(err)?;
    let (head, body) = root.split_vertically(TITLE_HEIGHT);
    // Two centred lines (caption, then the paper reference), shrunk to fit the figure's width.
    let width = head.dim_in_pixel().0 as f64;
    for (i, (text, size)) in title.lines().zip([18.0, 13.0]).enumerate() {
        let size = fitted_font_size(text, size, width);
        let style = TextStyle::from(("sans-serif", size))
            .color(&BLACK)
            .pos(Pos::new(HPos::Center, VPos::Top));
        head.draw_text(text, &style, ((width / 2.0) as i32, 4 + 21 * i as i32))
            .map_err(err)?;
    }
    let rows = panels.len().div_ceil(cols);
    for (area, panel) in body.split_evenly((rows, cols)).iter().zip(panels) {
        draw_panel(area, panel, &fig.x_label)?;
    }
    root.present().map_err(err)?;
    Ok(())
}

/// Draws `fig` as `<out>/<spec>-<file>.svg` and `.png`; returns their file names. Fails with an explanation
/// when no panel has a point to draw.
pub fn figure(spec: &Spec, fig: &FigureLayout, summary: &[Summary], out: &Path) -> Result<(String, String)> {
    register_font()?;
    let panels = panels(spec, fig, summary);
    if panels.iter().all(|p| p.series.is_empty()) {
        let x_from = fig
            .x_metric
            .as_ref()
            .map_or(String::new(), |xm| format!(" and a `{xm}` value for x"));
        return Err(anyhow!(
            "`{}`: no ok results with a `{}=` setting{x_from} to plot",
            fig.file,
            fig.x
        ));
    }
    let cols = fig.datasets.as_ref().map_or(spec.file.datasets.len(), Vec::len).max(1);
    let rows = panels.len().div_ceil(cols);
    let size = (PANEL.0 * cols as u32, PANEL.1 * rows as u32 + TITLE_HEIGHT);
    let title = format!("{}\n{}", fig.title, spec.file.paper_ref);
    let stem = format!("{}-{}", spec.name(), fig.file);
    let (svg_name, png_name) = (format!("{stem}.svg"), format!("{stem}.png"));

    let mut svg = String::new();
    draw(
        SVGBackend::with_string(&mut svg, size).into_drawing_area(),
        &title,
        fig,
        &panels,
        cols,
    )?;
    fsx::write_atomic(&out.join(&svg_name), svg.as_bytes())?;
    fsx::write_atomic_via_path(&out.join(&png_name), |tmp| {
        draw(
            BitMapBackend::new(tmp, size).into_drawing_area(),
            &title,
            fig,
            &panels,
            cols,
        )
    })?;
    Ok((svg_name, png_name))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rows::{summarize, tidy, Row};
    use crate::spec::test_spec;

    #[test]
    fn draws_svg_and_png_with_text() {
        let src = r#"
datasets = [{ id = "cora", label = "Cora" }, { id = "citeseer", label = "Citeseer" }]
methods = [{ id = "ksvd", label = "KSVD" }, { id = "kpca", label = "KPCA" }, { id = "ksvd_exact", label = "KSVD (exact)" }]
metrics = [{ id = "macro_f1", label = "Macro-F1" }]
[[figures]]
file = "f1"
title = "F1 against m"
x = "m"
x_label = "m"
metrics = ["macro_f1"]
"#;
        let spec = test_spec(src).unwrap();
        let mut rows = Vec::new();
        for (i, m) in [1000, 1500, 2000].into_iter().enumerate() {
            rows.push(Row::ok("cora", "ksvd", "macro_f1", 0.70 + 0.02 * i as f64).setting(format!("m={m}")));
            rows.push(Row::ok("cora", "kpca", "macro_f1", 0.65 + 0.02 * i as f64).setting(format!("m={m}")));
            rows.push(Row::ok("cora", "ksvd_exact", "macro_f1", 0.76).setting(format!("m={m}")));
        }
        let summary = summarize(&spec, &tidy(&spec, rows));
        let dir = tempfile::tempdir().unwrap();
        let (svg, png) = figure(&spec, &spec.file.figures[0], &summary, dir.path()).unwrap();
        let svg_text = std::fs::read_to_string(dir.path().join(svg)).unwrap();
        assert!(svg_text.contains("Cora") && svg_text.contains("Macro-F1") && svg_text.contains("KSVD"));
        let png_bytes = std::fs::read(dir.path().join(png)).unwrap();
        assert_eq!(&png_bytes[1..4], b"PNG");

        let empty = summarize(&spec, &tidy(&spec, vec![]));
        assert!(figure(&spec, &spec.file.figures[0], &empty, dir.path()).is_err());

        // An exact reference reported once (setting `exact`, no x) becomes a dashed flat line over
        // the x range of the other curves.
        let mut rows: Vec<Row> = [1000, 2000]
            .into_iter()
            .map(|m| Row::ok("cora", "ksvd", "macro_f1", 0.7).setting(format!("m={m}")))
            .collect();
        rows.push(Row::ok("cora", "ksvd_exact", "macro_f1", 0.76).setting("exact".to_string()));
        let summary = summarize(&spec, &tidy(&spec, rows));
        let cora = &panels(&spec, &spec.file.figures[0], &summary)[0];
        let exact = cora.series.iter().find(|s| s.dashed).expect("exact line drawn");
        assert_eq!(exact.points, vec![(1000.0, 0.76), (2000.0, 0.76)]);
    }

    /// With `x_metric`, each point sits at the other metric's value of its own cell (log10 on a log
    /// axis), the line keeps the order of the setting (not of x), and a cell without that metric
    /// is left out.
    #[test]
    fn x_from_another_metric_keeps_the_setting_order() {
        let src = r#"
datasets = [{ id = "cora", label = "Cora" }]
methods = [{ id = "adaptive", label = "adaptive" }]
metrics = [{ id = "error_ratio", label = "ratio" }, { id = "seconds", label = "time (s)" }]
[[figures]]
file = "error-vs-time"
title = "error against time"
x = "m"
x_metric = "seconds"
x_label = "time (s)"
metrics = ["error_ratio"]
log_x = true
"#;
        let spec = test_spec(src).unwrap();
        let fig = &spec.file.figures[0];
        // Times not monotone in m (m = 200 faster than m = 100), and no time at m = 500.
        let cells = [(50, 1.0, 3.0), (100, 100.0, 2.0), (200, 10.0, 1.5)];
        let mut rows = Vec::new();
        for (m, secs, ratio) in cells {
            rows.push(Row::ok("cora", "adaptive", "error_ratio", ratio).setting(format!("m={m}")));
            rows.push(Row::ok("cora", "adaptive", "seconds", secs).setting(format!("m={m}")));
        }
        rows.push(Row::ok("cora", "adaptive", "error_ratio", 1.1).setting("m=500".to_string()));
        let summary = summarize(&spec, &tidy(&spec, rows));
        let p = &panels(&spec, fig, &summary)[0];
        assert_eq!(p.series.len(), 1);
        assert_eq!(p.series[0].points, vec![(0.0, 3.0), (2.0, 2.0), (1.0, 1.5)]);

        let mut bad = fig.clone();
        bad.x_metric = Some("memory".to_string());
        let src_bad = src.replace("x_metric = \"seconds\"", "x_metric = \"memory\"");
        assert!(test_spec(&src_bad).is_err());
        assert!(panels(&spec, &bad, &summary)[0].series.is_empty());
    }
}
