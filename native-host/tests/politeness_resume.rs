//! Crawl-delay holds across stop and start (#28 defect 6): a host whose robots.txt asks for
//! 3 s between requests gets its first request of a resumed crawl no sooner than 3 s after
//! the last one of the crawl before.

use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

mod common;
use common::{forager, run, tmp};

/// A loopback site: robots.txt with Crawl-delay 3, pages linking onwards; the time of every
/// page request.
fn serve() -> (u16, Arc<Mutex<Vec<Instant>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let hits: Arc<Mutex<Vec<Instant>>> = Arc::default();
    let seen = hits.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let seen = seen.clone();
            std::thread::spawn(move || {
                let mut reader = BufReader::new(stream.try_clone().unwrap());
                let mut stream = stream;
                loop {
                    let mut first = String::new();
                    if reader.read_line(&mut first).unwrap_or(0) == 0 {
                        return;
                    }
                    let path = first.split_whitespace().nth(1).unwrap_or("/").to_owned();
                    loop {
                        let mut h = String::new();
                        if reader.read_line(&mut h).unwrap_or(0) == 0 || h == "\r\n" {
                            break;
                        }
                    }
                    let (kind, body) = if path == "/robots.txt" {
                        ("text/plain", "User-agent: *\nCrawl-delay: 3\n".to_owned())
                    } else {
                        seen.lock().unwrap().push(Instant::now());
                        let n: u32 = path.trim_start_matches("/p").parse().unwrap_or(0);
                        let body = format!(
                            "<html><head><title>p{n}</title></head><body>astronomy telescope \
                             <a href=\"/p{}\">next</a></body></html>",
                            n + 1
                        );
                        ("text/html", body)
                    };
                    let head = format!(
                        "HTTP/1.1 200 OK\r\nContent-Type: {kind}\r\nContent-Length: {}\r\n\r\n",
                        body.len()
                    );
                    if stream.write_all(head.as_bytes()).is_err()
                        || stream.write_all(body.as_bytes()).is_err()
                    {
                        return;
                    }
                }
            });
        }
    });
    (port, hits)
}

#[test]
fn crawl_delay_is_remembered_across_stop_and_start() {
    let dir = tmp("politeness");
    let model = dir.join("m.fgm");
    run(forager().args(["starter-model", "--out"]).arg(&model));
    let (port, hits) = serve();
    let crawl = |pages: &str| {
        run(forager()
            .args(["crawl", "--delay", "0", "--pages", pages, "--seed"])
            .arg(format!("http://127.0.0.1:{port}/p0"))
            .arg("--model")
            .arg(&model)
            .arg("--db")
            .arg(dir.join("c.db")));
    };
    crawl("1");
    crawl("2");
    let hits = hits.lock().unwrap();
    assert_eq!(hits.len(), 2, "one page per run");
    let gap = hits[1] - hits[0];
    assert!(
        gap >= Duration::from_millis(2900),
        "the resumed crawl asked again after {gap:?}, not the 3 s robots.txt asks for"
    );
}
