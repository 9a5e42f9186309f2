//! The million-page bench (#27): a soft crawl at default settings (delay 0 on loopback) of
//! `--pages` pages (default 1,000,000) of a procedural web (8,000 sites, pages made on
//! request) by the real binary. Prints peak RSS, database bytes per fetched page, throughput
//! in ten windows and last/first, and checkout latency at the end. About 15-20 minutes and a
//! few GB of scratch disk (deleted after): `cargo bench --bench million -- --pages 1000000`.

mod common;

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    let pages = common::million::pages_arg(1_000_000);
    let report = common::million::run(pages, 1000);
    println!("{report}");
    println!("  {}", report.last_line);
}
