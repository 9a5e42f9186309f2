//! Reports for people: self-contained HTML with SVG charts drawn by plotters.

use forager_core::store::{Ranking, Reader, StoreError};
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

/// A page with a score (hub, authority).
#[derive(Clone, Debug, serde::Serialize)]
pub struct Scored {
    /// The page.
    pub url: String,
    /// Its score.
    pub score: f64,
    /// Of its out-links to fetched pages, those to pages with R >= 0.5 (why it ranks).
    pub relevant_links: i64,
    /// Its out-links to fetched pages.
    pub fetched_links: i64,
}

/// A server rated by its density of relevant pages (the paper's "site rating").
#[derive(Clone, Debug, serde::Serialize)]
pub struct SiteRating {
    /// Host name.
    pub host: String,
    /// Pages fetched from it.
    pub fetched: i64,
    /// Of those, relevant (R ≥ 0.5).
    pub relevant: i64,
    /// relevant / fetched.
    pub density: f64,
}

/// Everything `forager report` shows.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Report {
    /// Pages fetched.
    pub fetched: i64,
    /// URLs in the frontier.
    pub frontier: i64,
    /// Top hubs, best first.
    pub hubs: Vec<Scored>,
    /// Top authorities, best first.
    pub authorities: Vec<Scored>,
    /// Servers by density of relevant pages (at least 3 pages fetched).
    pub sites: Vec<SiteRating>,
    /// (best leaf path, pages) by count.
    pub census: Vec<(String, i64)>,
    /// (num_tries, rows).
    pub num_tries: Vec<(i64, i64)>,
    /// (pages fetched, moving average of R over the last 100): the acquisition rate.
    pub acquisition: Vec<(i64, f64)>,
    /// (error kind, rows).
    pub errors: Vec<(String, i64)>,
    /// Stagnation and diffusion alarms.
    pub alarms: Vec<forager_core::monitor::Alarm>,
    /// R(d) in fetch order, for the charts.
    #[serde(skip)]
    pub relevance: Vec<f64>,
    /// How sure the classifier is of the crawl's pages (`None`: no readable model stored).
    pub confidence: Option<crate::confidence::Confidence>,
}

/// Builds the report of a crawl database; hub and authority scores come from the last
/// distillation, or are computed now when there is none.
pub fn build(db: &dyn Reader, top: usize) -> Result<Report, StoreError> {
    let scored = |ranking| -> Result<Vec<Scored>, StoreError> {
        Ok((db.ranked(ranking, Some(top))?.into_iter())
            .map(|p| Scored {
                url: p.url,
                score: p.score,
                relevant_links: p.relevant_links,
                fetched_links: p.fetched_links,
            })
            .collect())
    };
    let (mut hubs, mut authorities) = (scored(Ranking::Hubs)?, scored(Ranking::Authorities)?);
    if hubs.is_empty() {
        let (edges, rel) = db.graph()?;
        let s = forager_core::distiller::distill(&edges, &rel, &Default::default());
        let mk = |v: &[(i64, f64)]| -> Result<Vec<Scored>, StoreError> {
            (v.iter().take(top))
                .map(|&(o, score)| {
                    let url = db.url_of(o)?.unwrap_or_default();
                    let (fetched_links, relevant_links) = db.link_evidence(o)?;
                    Ok(Scored {
                        url,
                        score,
                        relevant_links,
                        fetched_links,
                    })
                })
                .collect()
        };
        hubs = mk(&s.hubs)?;
        authorities = mk(&s.authorities)?;
    }
    let sites = (db.site_ratings(top)?.into_iter())
        .map(|r| SiteRating {
            density: r.relevant as f64 / r.fetched.max(1) as f64,
            host: r.host,
            fetched: r.fetched,
            relevant: r.relevant,
        })
        .collect();
    let relevance = db.relevance_in_fetch_order()?;
    let acquisition = moving_average(&relevance, 100)
        .into_iter()
        .enumerate()
        .filter(|(i, _)| (i + 1) % 50 == 0 || i + 1 == relevance.len())
        .map(|(i, m)| ((i + 1) as i64, m))
        .collect();
    let counts = db.counts()?;
    Ok(Report {
        fetched: counts.fetched,
        frontier: counts.frontier,
        hubs,
        authorities,
        sites,
        census: db.census()?,
        num_tries: db.num_tries()?,
        acquisition,
        errors: db.errors()?,
        alarms: db.alarms(&relevance, counts.frontier),
        relevance,
        confidence: crate::confidence::confidence(db)?,
    })
}

/// Trailing moving average over `window` values.
pub fn moving_average(xs: &[f64], window: usize) -> Vec<f64> {
    let mut out = Vec::with_capacity(xs.len());
    let mut sum = 0.0;
    for (i, x) in xs.iter().enumerate() {
        sum += x;
        if i >= window {
            sum -= xs[i - window];
        }
        out.push(sum / (i + 1).min(window) as f64);
    }
    out
}

/// The report as text for a terminal.
pub fn text(r: &Report) -> String {
    let mut s = format!("fetched {}  frontier {}\n", r.fetched, r.frontier);
    for a in &r.alarms {
        s += &format!("ALARM {}: {}\n", a.kind, a.detail);
    }
    let list = |title: &str, v: &[Scored]| {
        let mut s = format!("\n{title} (score, relevant/fetched out-links):\n");
        for x in v {
            s += &format!(
                "  {:.4}  {:>5}  {}\n",
                x.score,
                format!("{}/{}", x.relevant_links, x.fetched_links),
                x.url
            );
        }
        s
    };
    s += &list("top hubs", &r.hubs);
    s += &list("top authorities", &r.authorities);
    s += "\ntop sites (relevant/fetched):\n";
    for x in &r.sites {
        s += &format!(
            "  {:>5.2}  {:>4}/{:<4} {}\n",
            x.density, x.relevant, x.fetched, x.host
        );
    }
    s += "\ncategory census (pages per best leaf):\n";
    for (c, n) in &r.census {
        s += &format!("  {n:>6}  {c}\n");
    }
    s += "\nnum_tries histogram:\n";
    for (t, n) in &r.num_tries {
        s += &format!("  {t:>3}: {n}\n");
    }
    s += "\nacquisition (moving average of relevance, window 100):\n";
    for (n, m) in r
        .acquisition
        .iter()
        .step_by((r.acquisition.len() / 10).max(1))
    {
        s += &format!("  {n:>7}  {m:.3}\n");
    }
    if let Some(c) = &r.confidence {
        s += &confidence_text(c);
    }
    s += "\nfetch errors by kind:\n";
    for (k, n) in &r.errors {
        s += &format!("  {n:>6}  {k}\n");
    }
    s
}

/// The classifier's confidence as text: the share of pages it cannot place, overall and
/// along the crawl.
fn confidence_text(c: &crate::confidence::Confidence) -> String {
    let mut s = format!(
        "\nclassifier confidence: {} of {} fetched pages ({:.0}%) fit none of the topics or no \
         leaf at p >= 0.5 (background learned from {} of the crawl's pages)\n",
        c.unplaced,
        c.pages,
        100.0 * c.unplaced as f64 / c.pages.max(1) as f64,
        c.background
    );
    s += "  share it cannot place, per 100 pages in fetch order:\n";
    for (n, share) in c
        .by_fetch_order
        .iter()
        .step_by((c.by_fetch_order.len() / 10).max(1))
    {
        s += &format!("  {n:>7}  {share:.2}\n");
    }
    s
}

/// An SVG scatter of relevance against fetch order with its moving average (the monitoring
/// applet's chart, focused-crawling-1999 Fig. 2).
fn relevance_scatter(relevance: &[f64]) -> String {
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (760, 320)).into_drawing_area();
        let _ = root.fill(&WHITE);
        let n = relevance.len().max(1) as f64;
        if let Ok(mut chart) = ChartBuilder::on(&root)
            .margin(12)
            .x_label_area_size(36)
            .y_label_area_size(48)
            .build_cartesian_2d(0.0..n, 0.0..1.05)
        {
            let _ = chart
                .configure_mesh()
                .x_desc("pages fetched")
                .y_desc("relevance R(d)")
                .x_label_formatter(&|x| format!("{x:.0}"))
                .draw();
            let step = (relevance.len() / 3000).max(1);
            let _ =
                chart.draw_series(
                    relevance.iter().enumerate().step_by(step).map(|(i, &r)| {
                        Circle::new((i as f64, r), 2, PALETTE[0].mix(0.35).filled())
                    }),
                );
            let avg = moving_average(relevance, 100);
            let _ = chart.draw_series(LineSeries::new(
                avg.iter().enumerate().map(|(i, &m)| (i as f64, m)),
                PALETTE[3].stroke_width(2),
            ));
        }
        let _ = root.present();
    }
    format!("<figure><figcaption>Relevance of each fetched page, with its moving average over 100 pages</figcaption>{svg}</figure>")
}

/// An SVG histogram of relevance (focused-crawling-1999 Fig. 7).
fn relevance_histogram(relevance: &[f64]) -> String {
    let mut bins = [0u32; 10];
    for &r in relevance {
        bins[((r * 10.0) as usize).min(9)] += 1;
    }
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (760, 280)).into_drawing_area();
        let _ = root.fill(&WHITE);
        let top = f64::from(bins.iter().copied().max().unwrap_or(1).max(1)) * 1.05;
        if let Ok(mut chart) = ChartBuilder::on(&root)
            .margin(12)
            .x_label_area_size(36)
            .y_label_area_size(56)
            .build_cartesian_2d(0.0..1.0, 0.0..top)
        {
            let _ = chart
                .configure_mesh()
                .x_desc("relevance R(d)")
                .y_desc("pages")
                .draw();
            let _ = chart.draw_series(bins.iter().enumerate().map(|(i, &c)| {
                let x0 = i as f64 / 10.0;
                Rectangle::new(
                    [(x0 + 0.005, 0.0), (x0 + 0.095, f64::from(c))],
                    PALETTE[0].filled(),
                )
            }));
        }
        let _ = root.present();
    }
    format!("<figure><figcaption>Distribution of relevance over fetched pages</figcaption>{svg}</figure>")
}

/// The classifier's confidence as HTML: the share of pages it cannot place, and its line
/// along the crawl.
fn confidence_html(c: &crate::confidence::Confidence) -> String {
    let points = (c.by_fetch_order.iter())
        .map(|&(n, x)| (n as f64, x))
        .collect();
    format!(
        "<p>The classifier cannot place {} of {} fetched pages ({:.0}%): they fit none of the \
         topics (a background learned from the crawl's pages) or no leaf at p ≥ 0.5. A rising \
         line means the crawl drifted into pages it cannot judge.</p>{}",
        c.unplaced,
        c.pages,
        100.0 * c.unplaced as f64 / c.pages.max(1) as f64,
        line_chart(
            "Pages the classifier cannot place (share per 100 fetched pages)",
            "share",
            &[("cannot place".to_string(), points)],
        )
    )
}

/// The report as one self-contained HTML page.
pub fn html(r: &Report, title: &str) -> String {
    let mut harvest = Vec::with_capacity(r.relevance.len());
    let mut sum = 0.0;
    for (i, x) in r.relevance.iter().enumerate() {
        sum += x;
        if (i + 1) % 10 == 0 || i + 1 == r.relevance.len() {
            harvest.push(((i + 1) as f64, sum / (i + 1) as f64));
        }
    }
    let harvest = line_chart(
        "Harvest rate: mean relevance of all pages fetched so far",
        "harvest rate",
        &[("focused crawl".to_string(), harvest)],
    );
    let confidence = r.confidence.as_ref().map_or(String::new(), confidence_html);
    let links = |v: &[Scored]| -> String {
        v.iter()
            .map(|x| {
                format!(
                    "<tr><td><a href=\"{u}\">{u}</a></td><td>{:.4}</td><td>{}/{}</td></tr>",
                    x.score,
                    x.relevant_links,
                    x.fetched_links,
                    u = escape(&x.url)
                )
            })
            .collect()
    };
    let sites: String = r
        .sites
        .iter()
        .map(|s| {
            format!(
                "<tr><td><a href=\"http://{h}/\">{h}</a></td><td>{}</td><td>{}</td><td>{:.2}</td></tr>",
                s.relevant,
                s.fetched,
                s.density,
                h = escape(&s.host)
            )
        })
        .collect();
    let alarms: String = r
        .alarms
        .iter()
        .map(|a| {
            format!(
                "<p class=\"alarm\"><b>{}</b>: {}</p>",
                a.kind,
                escape(&a.detail)
            )
        })
        .collect();
    format!(
        "<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>{t}</title><style>{CSS}\
         .alarm{{background:#fee;border:1px solid #c33;padding:.4em .8em}}</style></head><body>\
         <h1>{t}</h1><p>{} pages fetched, {} in the frontier.</p>{alarms}{}{}{}{confidence}\
         <h2>Top hubs</h2><table><tr><th>page</th><th>hub score</th><th>relevant/fetched out-links</th></tr>{}</table>\
         <h2>Top authorities</h2><table><tr><th>page</th><th>authority score</th><th>relevant/fetched out-links</th></tr>{}</table>\
         <h2>Top sites by density of relevant pages</h2><table><tr><th>site</th><th>relevant</th>\
         <th>fetched</th><th>density</th></tr>{sites}</table></body></html>",
        r.fetched,
        r.frontier,
        relevance_scatter(&r.relevance),
        harvest,
        relevance_histogram(&r.relevance),
        links(&r.hubs),
        links(&r.authorities),
        t = escape(title),
    )
}
