//! The million-page bench's self-check at CI size: 5,000 pages of the procedural web through
//! the same run as `cargo bench --bench million`. Asserts the report's shape (every figure
//! there and plausible), never timings.

#[path = "../benches/common/mod.rs"]
mod common;
use common::million;

#[test]
fn the_million_page_bench_reports_every_figure_at_5000_pages() {
    let r = million::run(5_000, 1000);
    println!("{r}");
    assert!(r.fetched >= 5_000, "{r}");
    // Most links lead to new URLs: the frontier outgrows the fetched pages several times.
    assert!(r.frontier > 3 * r.fetched as i64, "{r}");
    assert!(r.urls > r.frontier && r.links > r.fetched as i64, "{r}");
    assert_eq!(r.windows.len(), million::WINDOWS);
    assert!(r.windows.iter().all(|w| w.is_finite() && *w > 0.0), "{r}");
    assert!(r.last_over_first().is_finite(), "{r}");
    assert!(r.cpu_ms.iter().all(|w| w.is_finite() && *w > 0.0), "{r}");
    assert!(r.cpu_last_over_first().is_finite(), "{r}");
    assert!(
        r.cores.iter().all(|c| *c > 0.0) && r.load.len() == million::WINDOWS,
        "{r}"
    );
    assert!(r.peak_rss_mb > 0 && r.rss_mb.iter().any(|m| *m > 0), "{r}");
    assert!(r.db_bytes > 0 && r.bytes_per_page() > 100.0, "{r}");
    assert!(
        r.checkout_ms.0 > 0.0 && r.checkout_ms.1 >= r.checkout_ms.0,
        "{r}"
    );
}

#[test]
fn windows_split_the_pages_evenly_and_interpolate_time() {
    // 100 pages/s for 10 s, then 50 pages/s for 10 s: 1,500 pages; half a CPU second a second.
    let mut s = vec![million::Sample::default()];
    for t in 1..=20u64 {
        let fetched = if t <= 10 {
            100 * t
        } else {
            1000 + 50 * (t - 10)
        };
        s.push(million::Sample {
            secs: t as f64,
            fetched,
            rss_mb: 10 + t,
            cpu: t as f64 / 2.0,
            load: t as f64,
        });
    }
    let w = million::windows(&s, 1500);
    assert_eq!(w.len(), million::WINDOWS);
    assert!((w[0].pages_per_sec - 100.0).abs() < 1e-6, "{w:?}");
    assert!((w[9].pages_per_sec - 50.0).abs() < 1e-6, "{w:?}");
    // 5 ms of CPU per page at 100 pages/s, 10 ms at 50; half a core busy throughout.
    assert!((w[0].cpu_ms_per_page - 5.0).abs() < 1e-6, "{w:?}");
    assert!((w[9].cpu_ms_per_page - 10.0).abs() < 1e-6, "{w:?}");
    assert!(w.iter().all(|w| (w.cores - 0.5).abs() < 1e-6), "{w:?}");
    assert_eq!((w[9].rss_mb, w[9].load), (30, 20.0));
}
