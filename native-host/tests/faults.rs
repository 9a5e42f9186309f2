//! The crawler against a hostile web: a fault-injection server on loopback addresses with
//! hanging and dripping connections, resets, 5xx bursts, 429s, redirect loops and chains,
//! endless link spaces, huge and compressed-bomb bodies, lying headers, binary and malformed
//! HTML, a page with a huge number of links, and robots.txt edge cases. The crawl must finish,
//! record each failure kind, respect every limit and keep its memory bounded.

mod common;
use bytes::Bytes;
use common::{forager, tmp};
use hyper::body::{Body, Frame, SizeHint};
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;
use std::convert::Infallible;
use std::future::Future;
use std::io::Write;
use std::net::SocketAddr;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

/// A response body: all at once, or produced lazily (`chunk` bytes every `pause`), or cut off
/// after `reset_after` bytes with an error (the connection drops mid-body).
struct Fault {
    data: Option<Bytes>,
    chunk: usize,
    left: usize,
    pause: Duration,
    sleep: Option<Pin<Box<tokio::time::Sleep>>>,
    reset_after: Option<usize>,
}

impl Fault {
    fn full(b: impl Into<Bytes>) -> Self {
        Fault {
            data: Some(b.into()),
            chunk: 0,
            left: 0,
            pause: Duration::ZERO,
            sleep: None,
            reset_after: None,
        }
    }

    fn stream(chunk: usize, pause: Duration, total: usize) -> Self {
        Fault {
            data: None,
            chunk,
            left: total,
            pause,
            sleep: None,
            reset_after: None,
        }
    }
}

impl Body for Fault {
    type Data = Bytes;
    type Error = std::io::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, std::io::Error>>> {
        if let Some(d) = self.data.take() {
            return Poll::Ready(Some(Ok(Frame::data(d))));
        }
        if self.left == 0 {
            return Poll::Ready(None);
        }
        if !self.pause.is_zero() {
            let pause = self.pause;
            let sleep = self
                .sleep
                .get_or_insert_with(|| Box::pin(tokio::time::sleep(pause)));
            if sleep.as_mut().poll(cx).is_pending() {
                return Poll::Pending;
            }
            self.sleep = None;
        }
        if self.reset_after == Some(0) {
            return Poll::Ready(Some(Err(std::io::Error::other("reset"))));
        }
        let n = self.chunk.min(self.left);
        self.left -= n;
        if let Some(r) = self.reset_after.as_mut() {
            *r = r.saturating_sub(n);
        }
        Poll::Ready(Some(Ok(Frame::data(Bytes::from(vec![b'x'; n])))))
    }

    fn size_hint(&self) -> SizeHint {
        SizeHint::default()
    }
}

fn reply(status: u16, headers: &[(&str, &str)], body: Fault) -> Response<Fault> {
    let mut r = Response::builder().status(status);
    for (k, v) in headers {
        r = r.header(*k, *v);
    }
    r.body(body).unwrap()
}

fn page(body: &str) -> String {
    format!("<!DOCTYPE html><html><head><title>t</title></head><body>{body}</body></html>")
}

fn gzip_bomb() -> Bytes {
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    gz.write_all(b"<html><body>").unwrap();
    let zeros = vec![b' '; 1 << 20];
    for _ in 0..64 {
        gz.write_all(&zeros).unwrap();
    }
    Bytes::from(gz.finish().unwrap())
}

fn brotli_bomb() -> Bytes {
    let mut out = Vec::new();
    {
        let mut w = brotli::CompressorWriter::new(&mut out, 4096, 1, 22);
        w.write_all(b"<html><body>").unwrap();
        let zeros = vec![b' '; 1 << 20];
        for _ in 0..64 {
            w.write_all(&zeros).unwrap();
        }
    }
    Bytes::from(out)
}

/// What each loopback address does with its robots.txt.
#[derive(Clone, Copy)]
enum Robots {
    /// Huge and partly malformed, disallowing /private/.
    HugeMalformed,
    /// Answers 503.
    ServerError,
    /// Redirects to a rules file elsewhere on the host.
    Redirect,
}

#[allow(clippy::too_many_lines)] // the hostile server's routes, one arm each
fn respond(
    req: &Request<hyper::body::Incoming>,
    robots: Robots,
    bombs: &(Bytes, Bytes),
) -> Response<Fault> {
    let path = req.uri().path().to_owned();
    let q = req.uri().query().unwrap_or("").to_owned();
    let h = |s: String| {
        reply(
            200,
            &[("content-type", "text/html; charset=utf-8")],
            Fault::full(s),
        )
    };
    match path.as_str() {
        "/robots.txt" => match robots {
            Robots::HugeMalformed => {
                let mut t = String::from("User-agent: *\nDisallow: /private/\n");
                for i in 0..40_000 {
                    t += &format!("Disallow /no-colon-{i}\n\u{0}garbage line {i}\n");
                }
                reply(200, &[("content-type", "text/plain")], Fault::full(t))
            }
            Robots::ServerError => reply(503, &[], Fault::full("busy")),
            Robots::Redirect => reply(301, &[("location", "/rules.txt")], Fault::full("")),
        },
        "/rules.txt" => reply(
            200,
            &[],
            Fault::full("User-agent: *\nDisallow: /private/\n"),
        ),
        "/" => h(page(
            r#"<a href="/hang">1</a> <a href="/drip">2</a> <a href="/reset">3</a>
               <a href="/busy">4</a> <a href="/slow-down">5</a> <a href="/loop-a">6</a>
               <a href="/chain/0">7</a> <a href="/cal/2024/1">8</a> <a href="/sid?s=1">9</a>
               <a href="/deep/d0">10</a> <a href="/huge">11</a> <a href="/gzip-bomb">12</a>
               <a href="/br-bomb">13</a> <a href="/octet">14</a> <a href="/untyped">15</a>
               <a href="/lying-charset">16</a> <a href="/binary">17</a> <a href="/nested">18</a>
               <a href="/malformed">19</a> <a href="/many-links">20</a>
               <a href="/private/secret">21</a> <a href="/ok">22</a>
               <a href="/nested-2mb">23</a>"#,
        )),
        "/ok" => h(page("fine")),
        "/hang" => reply(
            200,
            &[("content-type", "text/html")],
            Fault::stream(1, Duration::from_secs(3600), 1),
        ),
        "/drip" => reply(
            200,
            &[("content-type", "text/html")],
            Fault::stream(1, Duration::from_millis(100), 1 << 20),
        ),
        "/reset" => {
            let mut f = Fault::stream(1024, Duration::ZERO, 1 << 20);
            f.reset_after = Some(4096);
            reply(200, &[("content-type", "text/html")], f)
        }
        "/busy" => reply(503, &[], Fault::full("try later")),
        "/slow-down" => reply(429, &[("retry-after", "1")], Fault::full("too many")),
        "/loop-a" => reply(302, &[("location", "/loop-b")], Fault::full("")),
        "/loop-b" => reply(302, &[("location", "/loop-a")], Fault::full("")),
        p if p.starts_with("/chain/") => {
            let n: u32 = p[7..].parse().unwrap_or(0);
            reply(
                302,
                &[("location", &format!("/chain/{}", n + 1))],
                Fault::full(""),
            )
        }
        p if p.starts_with("/cal/") => {
            let n: u32 = p
                .rsplit('/')
                .next()
                .and_then(|x| x.parse().ok())
                .unwrap_or(1);
            h(page(&format!(r#"<a href="/cal/2024/{}">next</a>"#, n + 1)))
        }
        "/sid" => {
            let n: u64 = q.trim_start_matches("s=").parse().unwrap_or(1);
            h(page(&format!(
                r#"<a href="/sid?s={}">more</a> <a href="/sid?s={}">more</a>"#,
                n * 2,
                n * 2 + 1
            )))
        }
        p if p.starts_with("/deep/") => {
            // One level deeper, and a relative-link bug that jumps twenty levels at once.
            let next = format!("{p}/d{}", p.matches('/').count());
            let bug = format!("{p}/{}", "x/".repeat(20));
            h(page(&format!(
                r#"<a href="{next}">deeper</a> <a href="{bug}">bug</a>"#
            )))
        }
        "/huge" => reply(
            200,
            &[("content-type", "text/html")],
            Fault::stream(64 * 1024, Duration::ZERO, 100 << 20),
        ),
        "/gzip-bomb" => reply(
            200,
            &[("content-type", "text/html"), ("content-encoding", "gzip")],
            Fault::full(bombs.0.clone()),
        ),
        "/br-bomb" => reply(
            200,
            &[("content-type", "text/html"), ("content-encoding", "br")],
            Fault::full(bombs.1.clone()),
        ),
        "/octet" => reply(
            200,
            &[("content-type", "application/octet-stream")],
            Fault::full(page("hidden html")),
        ),
        "/untyped" => reply(200, &[], Fault::full(page("no content type"))),
        "/lying-charset" => reply(
            200,
            &[("content-type", "text/html; charset=utf-16")],
            Fault::full(page("actually utf-8 é")),
        ),
        "/binary" => {
            let bytes: Vec<u8> = (0..50_000u32)
                .map(|i| (i.wrapping_mul(2654435761) >> 13) as u8)
                .collect();
            reply(200, &[("content-type", "text/html")], Fault::full(bytes))
        }
        "/nested" => h(format!(
            "<html><body>{}deep{}</body></html>",
            "<div><span>".repeat(20_000),
            "</span></div>".repeat(10)
        )),
        // 2 MB of nested divs: html5ever alone spends minutes on this (quadratic in depth).
        "/nested-2mb" => h(format!(
            "<html><body>{}<a href=\"/ok\">deep link</a>{}</body></html>",
            "<div>".repeat(400_000),
            "</div>".repeat(10)
        )),
        "/malformed" => h(
            "<html><<<body><a href='/ok'>x</a><a href=\"/ok\"<<p></td></table>\u{0}</div></html"
                .to_string(),
        ),
        "/many-links" => {
            let links: String = (0..100_000)
                .map(|i| format!("<a href=\"/ml/{i}\">{i}</a>"))
                .collect();
            h(page(&links))
        }
        p if p.starts_with("/ml/") => h(page("one of many")),
        p if p.starts_with("/private/") => h(page("private")),
        _ => reply(404, &[], Fault::full("")),
    }
}

async fn serve(ip: [u8; 4], robots: Robots, bombs: std::sync::Arc<(Bytes, Bytes)>) -> SocketAddr {
    let listener = tokio::net::TcpListener::bind(SocketAddr::from((ip, 0)))
        .await
        .unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            let bombs = bombs.clone();
            tokio::spawn(async move {
                let svc = hyper::service::service_fn(move |req| {
                    let bombs = bombs.clone();
                    async move { Ok::<_, Infallible>(respond(&req, robots, &bombs)) }
                });
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), svc)
                    .await;
            });
        }
    });
    addr
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[allow(clippy::too_many_lines)] // one hostile web, its every trap checked in turn
async fn a_crawl_survives_a_hostile_web() {
    let bombs = std::sync::Arc::new((gzip_bomb(), brotli_bomb()));
    let a = serve([127, 0, 0, 1], Robots::HugeMalformed, bombs.clone()).await;
    let b = serve([127, 0, 0, 2], Robots::ServerError, bombs.clone()).await;
    let c = serve([127, 0, 0, 3], Robots::Redirect, bombs.clone()).await;
    let dir = tmp("faults");
    let model = dir.join("m.fgm");
    common::run(forager().args(["starter-model", "--out"]).arg(&model));
    let db = dir.join("f.db");
    let crawl = tokio::task::spawn_blocking(move || {
        let mut cmd = forager();
        cmd.args(["crawl", "--mode", "bfs", "--delay", "0", "--timeout", "1"])
            .args(["--host-backoff", "0.2"])
            .args([
                "--max-pages-per-host",
                "300",
                "--pages",
                "2000",
                "--seconds",
                "120",
            ])
            .arg("--model")
            .arg(&model)
            .arg("--db")
            .arg(&db);
        for addr in [a, b, c] {
            cmd.args(["--seed", &format!("http://{addr}/")]);
        }
        let out = cmd.output().unwrap();
        (out, db)
    });
    let (out, db) = crawl.await.unwrap();
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{err}");
    let last = err.lines().last().unwrap_or("");
    assert!(
        last.contains("stopped: FrontierEmpty") || last.contains("stopped: PageBudget"),
        "{last}"
    );
    // Memory stayed bounded despite 100 MB bodies and 200 MB bombs.
    let rss: u64 = last
        .split("peak RSS ")
        .nth(1)
        .and_then(|s| s.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or(u64::MAX);
    assert!(rss < 300, "peak RSS {rss} MB");
    // CPU stayed bounded despite the 2 MB nested page (it alone took minutes before depth was
    // capped).
    let cpu: f64 = last
        .split("cpu ")
        .nth(1)
        .and_then(|s| s.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or(f64::MAX);
    assert!(cpu < 60.0, "crawl used {cpu} s of CPU");
    let conn = forager::store::Store::open_read_only(&db).unwrap();
    let kinds: Vec<String> = conn
        .prepare("SELECT DISTINCT error FROM doc WHERE error IS NOT NULL")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    for k in [
        "timeout",
        "network",
        "redirect",
        "http-503",
        "http-429",
        "not-html",
        "robots",
        "robots-unavailable",
        "truncated",
    ] {
        // Each kind is counted in the crawl's report; the database keeps each URL's last one.
        let reported = last.contains(&format!("\"{k}\""));
        assert!(
            reported || kinds.iter().any(|x| x == k),
            "no {k:?} in {last} or {kinds:?}"
        );
    }
    // Trap guards fired and were reported: the host cap, the depth limit, too many links.
    for k in [
        "trap-host-page-cap",
        "trap-path-depth",
        "trap-too-many-links",
    ] {
        assert!(err.contains(k), "{k} not reported: {last}");
    }
    // The page cap held on the host with the endless spaces.
    let most: i64 = conn
        .query_row("SELECT max(crawled) FROM server", [], |r| r.get(0))
        .unwrap();
    assert!(most <= 300, "{most}");
    let check: String = conn
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .unwrap();
    assert_eq!(check, "ok");
}
