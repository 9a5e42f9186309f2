//! Hostile 2 MB pages (#28 defect 3): the parse time of each of six shapes, then a crawl by
//! the real binary, at its default concurrency, of 64 such pages served on loopback: its peak
//! RSS (the target is under 500 MB). Prints numbers; asserts only sanity.
//! `HOSTILE_SKIP_CRAWL=1` prints the parse times only.

#[path = "../tests/common/http.rs"]
mod http;

use std::time::Instant;

const SIZE: usize = 2 << 20;

/// `head`, then `unit(i)` for i = 0, 1, ... until the page is about 2 MB.
fn fill(head: &str, unit: impl Fn(usize) -> String) -> String {
    let mut s = String::from(head);
    let mut i = 0;
    while s.len() < SIZE - 64 {
        s.push_str(&unit(i));
        i += 1;
    }
    s
}

/// The shapes: name and page.
fn shapes() -> Vec<(&'static str, String)> {
    vec![
        ("table then 700k <a>", fill("<table>", |_| "<a>".into())),
        ("<ol><li><p> nesting", fill("", |_| "<ol><li><p>".into())),
        (
            "600 divs then <dd>",
            fill(&"<div>".repeat(600), |_| "<dd>".into()),
        ),
        (
            "<p><b class=N> formatting",
            fill("", |i| format!("<p><b class=c{i}>x")),
        ),
        (
            "100k real links",
            fill("<body>", |i| format!("<a href=\"/x{i}\">w{i}</a> ")),
        ),
        ("nested tables", fill("", |_| "<table><tr><td>".into())),
    ]
}

/// Serves page `/pN` as shape N mod 6 (each also links to the next pages) until the end.
fn serve(pages: Vec<String>) -> u16 {
    http::serve(move |path| {
        let n: usize = path.trim_start_matches("/p").parse().unwrap_or(0);
        let body = if path == "/robots.txt" {
            String::new()
        } else {
            let links: String = (1..=8)
                .map(|k| format!("<a href=\"/p{}\">next</a>", n * 8 + k))
                .collect();
            format!("<html><body>{links}{}", pages[n % pages.len()])
        };
        ("text/html", body)
    })
}

fn main() {
    let base = url::Url::parse("http://hostile.test/").unwrap();
    let shapes = shapes();
    for (name, html) in &shapes {
        let t = Instant::now();
        let page = forager::parse::parse_page(html, &base);
        println!(
            "parse {name:28} {:5.2} s  ({} KB, {} links, {} leaves)",
            t.elapsed().as_secs_f64(),
            html.len() >> 10,
            page.links.len(),
            page.leaves.len()
        );
    }
    if std::env::var("HOSTILE_SKIP_CRAWL").is_ok() {
        return;
    }
    let dir = std::env::temp_dir().join(format!("forager-hostile-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let model = dir.join("m.fgm");
    std::fs::write(&model, forager::native::STARTER_MODEL).unwrap();
    let port = serve(shapes.into_iter().map(|(_, h)| h).collect());
    let t = Instant::now();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_forager"))
        .args(["crawl", "--delay", "0", "--pages", "64", "--seed"])
        .arg(format!("http://127.0.0.1:{port}/p0"))
        .arg("--model")
        .arg(&model)
        .arg("--db")
        .arg(dir.join("c.db"))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    let line = err.lines().find(|l| l.contains("peak RSS")).unwrap_or("");
    let peak = line
        .split("peak RSS ")
        .nth(1)
        .and_then(|s| s.split(' ').next())
        .unwrap_or("?");
    println!(
        "crawl of 64 hostile 2 MB pages (6 shapes, default concurrency): peak RSS {peak} MB, \
         {:.1} s ({line})",
        t.elapsed().as_secs_f64()
    );
    let _ = std::fs::remove_dir_all(&dir);
}
