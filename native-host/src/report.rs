//! Reports for people: self-contained HTML with SVG charts drawn by plotters.

use plotters::prelude::*;

/// Stylesheet shared by Forager's HTML reports.
pub const CSS: &str = "body{font-family:system-ui,sans-serif;margin:2em;max-width:70em;color:#222}\
table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #ccc;padding:.3em .6em;\
text-align:right}td:first-child,th:first-child{text-align:left}h1{font-size:1.5em}\
figure{margin:1.5em 0}figcaption{font-weight:600;margin-bottom:.3em}";

/// Escapes text for HTML.
pub fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

const PALETTE: [RGBColor; 8] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(127, 127, 127),
];

/// An SVG line chart of named series of (x, y) points, inside a `<figure>`.
pub fn line_chart(title: &str, y_label: &str, series: &[(String, Vec<(f64, f64)>)]) -> String {
    line_chart_at(title, y_label, series, SeriesLabelPosition::UpperRight)
}

/// [`line_chart`] with the legend where the curves leave room for it.
pub fn line_chart_at(
    title: &str,
    y_label: &str,
    series: &[(String, Vec<(f64, f64)>)],
    legend: SeriesLabelPosition,
) -> String {
    let mut svg = String::new();
    let (mut x_max, mut y_max) = (1.0f64, 0.0f64);
    for (_, pts) in series {
        for &(x, y) in pts {
            x_max = x_max.max(x);
            y_max = y_max.max(y);
        }
    }
    let y_max = if y_max <= 0.0 { 1.0 } else { y_max * 1.05 };
    {
        let root = SVGBackend::with_string(&mut svg, (760, 360)).into_drawing_area();
        let _ = root.fill(&WHITE);
        let chart = ChartBuilder::on(&root)
            .margin(12)
            .x_label_area_size(36)
            .y_label_area_size(56)
            .build_cartesian_2d(0.0..x_max, 0.0..y_max);
        if let Ok(mut chart) = chart {
            let _ = chart
                .configure_mesh()
                .x_desc("pages fetched")
                .x_label_formatter(&|x| format!("{x:.0}"))
                .y_desc(y_label)
                .draw();
            for (i, (name, pts)) in series.iter().enumerate() {
                let color = PALETTE[i % PALETTE.len()];
                if let Ok(s) =
                    chart.draw_series(LineSeries::new(pts.iter().copied(), color.stroke_width(2)))
                {
                    s.label(name.clone()).legend(move |(x, y)| {
                        PathElement::new(vec![(x, y), (x + 16, y)], color.stroke_width(2))
                    });
                }
            }
            let _ = chart
                .configure_series_labels()
                .background_style(WHITE.mix(0.8))
                .border_style(BLACK)
                .position(legend)
                .draw();
        }
        let _ = root.present();
    }
    format!(
        "<figure><figcaption>{}</figcaption>{svg}</figure>",
        escape(title)
    )
}
