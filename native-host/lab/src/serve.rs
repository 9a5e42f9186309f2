//! `forager serve-web`: serves a mini-web as an HTTP forward proxy on loopback, exactly as
//! shared/miniweb/FORMAT.md says: `http://host/path` from `sites/host/path`, 404 for a missing
//! file, 502 for an unknown host. Absolute-form (proxy) and origin-form requests both work.
//! An optional [`Latency`] delays each response like a distant server (deterministic per URL).

use crate::miniweb::{MiniWeb, Store};
use crate::synthweb::procedural::ProceduralWeb;
use bytes::Bytes;
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use std::collections::HashSet;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use tokio::net::TcpListener;
use tokio::sync::watch;

/// A running mini-web server; dropping the handle does not stop it, [`Server::shutdown`] does.
pub struct Server {
    /// The address it listens on.
    pub addr: SocketAddr,
    stop: watch::Sender<bool>,
    task: tokio::task::JoinHandle<()>,
}

impl Server {
    /// The proxy URL to give a client, `http://127.0.0.1:PORT`.
    pub fn proxy_url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Stops accepting connections and waits for the accept loop to end.
    pub async fn shutdown(self) {
        let _ = self.stop.send(true);
        let _ = self.task.await;
    }
}

/// A per-response delay drawn from `min..=max` milliseconds, the same for a URL every time
/// (a hash of it), so runs are repeatable; parsed from `50..100` (or `75` for a fixed delay).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Latency {
    /// Shortest delay, in milliseconds.
    pub min_ms: u64,
    /// Longest delay, in milliseconds.
    pub max_ms: u64,
}

impl Latency {
    /// The delay of `url`'s response.
    pub fn for_url(&self, url: &str) -> std::time::Duration {
        // FNV-1a: stable across runs and platforms (std's hasher promises neither).
        let h = url.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
            (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
        });
        let span = self.max_ms - self.min_ms + 1;
        std::time::Duration::from_millis(self.min_ms + h % span)
    }
}

impl std::str::FromStr for Latency {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        let num = |t: &str| {
            t.trim()
                .parse::<u64>()
                .ok()
                .filter(|&v| v <= 60_000)
                .ok_or_else(|| format!("latency {s:?}: milliseconds 0 to 60000, as MIN..MAX or MS"))
        };
        let (min_ms, max_ms) = match s.split_once("..") {
            Some((a, b)) => (num(a)?, num(b)?),
            None => (num(s)?, num(s)?),
        };
        if min_ms > max_ms {
            return Err(format!("latency {s:?}: MIN is above MAX"));
        }
        Ok(Latency { min_ms, max_ms })
    }
}

struct Web {
    web: MiniWeb,
    /// Hosts of an in-memory web (a disk web checks for the host's folder).
    hosts: HashSet<String>,
}

fn content_type(path: &str) -> &'static str {
    match path.rsplit('.').next().unwrap_or("") {
        "txt" => "text/plain; charset=utf-8",
        "css" => "text/css",
        "xml" => "application/xml",
        "json" => "application/json",
        _ => "text/html; charset=utf-8",
    }
}

fn reply(status: StatusCode, ctype: &str, body: impl Into<Bytes>) -> Response<Full<Bytes>> {
    let mut r = Response::new(Full::new(body.into()));
    *r.status_mut() = status;
    if let Ok(v) = ctype.parse() {
        r.headers_mut().insert(hyper::header::CONTENT_TYPE, v);
    }
    r
}

impl Web {
    fn host_known(&self, host: &str) -> bool {
        match &self.web.store {
            Store::Dir => {
                !host.is_empty()
                    && !host.contains(['/', '\\'])
                    && !host.starts_with('.')
                    && self.web.root.join("sites").join(host).is_dir()
            }
            Store::Memory(_) => self.hosts.contains(host),
        }
    }
}

/// What a server answers from: files of a mini-web, or pages made on request.
trait Answer: Send + Sync + 'static {
    /// The response to `req`.
    fn answer(&self, req: &Request<Incoming>) -> Response<Full<Bytes>>;
}

/// The lower-cased host a request names (absolute form or Host header), when it is a GET or
/// HEAD (None: answer [`not_get`]).
fn request_host(req: &Request<Incoming>) -> Option<String> {
    if req.method() != hyper::Method::GET && req.method() != hyper::Method::HEAD {
        return None;
    }
    Some(
        req.uri()
            .host()
            .map(str::to_owned)
            .or_else(|| {
                req.headers()
                    .get(hyper::header::HOST)
                    .and_then(|h| h.to_str().ok())
                    .map(|h| h.split(':').next().unwrap_or("").to_owned())
            })
            .unwrap_or_default()
            .to_ascii_lowercase(),
    )
}

/// The answer to a request other than GET or HEAD.
fn not_get() -> Response<Full<Bytes>> {
    reply(StatusCode::METHOD_NOT_ALLOWED, "text/plain", "GET only\n")
}

impl Answer for ProceduralWeb {
    fn answer(&self, req: &Request<Incoming>) -> Response<Full<Bytes>> {
        let Some(host) = request_host(req) else {
            return not_get();
        };
        if self.topic_of_host(&host).is_none() {
            return reply(StatusCode::BAD_GATEWAY, "text/plain", "unknown host\n");
        }
        match self.page(&host, req.uri().path()) {
            Some(html) => reply(StatusCode::OK, "text/html; charset=utf-8", html),
            None => reply(StatusCode::NOT_FOUND, "text/plain", "not found\n"),
        }
    }
}

impl Answer for Web {
    fn answer(&self, req: &Request<Incoming>) -> Response<Full<Bytes>> {
        let uri = req.uri();
        let Some(host) = request_host(req) else {
            return not_get();
        };
        if !self.host_known(&host) {
            return reply(StatusCode::BAD_GATEWAY, "text/plain", "unknown host\n");
        }
        let path = uri.path();
        let url = format!("http://{host}{path}");
        // Small, usually cached files: a plain read costs less than a trip to the blocking pool.
        let body = match &self.web.store {
            Store::Dir => crate::miniweb::file_for(&self.web.root.join("sites"), &url)
                .and_then(|p| std::fs::read(p).ok())
                .map(Bytes::from),
            Store::Memory(_) => self.web.read_page(&url).ok().map(Bytes::from),
        };
        match body {
            Some(b) => {
                let file = if path.ends_with('/') {
                    "index.html"
                } else {
                    path
                };
                reply(StatusCode::OK, content_type(file), b)
            }
            None => reply(StatusCode::NOT_FOUND, "text/plain", "not found\n"),
        }
    }
}

/// Starts serving `web` on `addr` (port 0 picks a free port).
pub async fn start(web: MiniWeb, addr: SocketAddr) -> std::io::Result<Server> {
    start_with(web, addr, None).await
}

/// Starts serving `web` on `addr`, each response delayed by `latency` when given.
pub async fn start_with(
    web: MiniWeb,
    addr: SocketAddr,
    latency: Option<Latency>,
) -> std::io::Result<Server> {
    let hosts = match &web.store {
        Store::Memory(files) => files
            .keys()
            .filter_map(|u| url::Url::parse(u).ok()?.host_str().map(str::to_owned))
            .chain(std::iter::once("events-calendar.test".to_owned()))
            .collect(),
        Store::Dir => HashSet::new(),
    };
    listen(Arc::new(Web { web, hosts }), addr, latency).await
}

/// Starts serving the procedural web `web` on `addr` (port 0 picks a free port).
pub async fn start_procedural(web: ProceduralWeb, addr: SocketAddr) -> std::io::Result<Server> {
    listen(Arc::new(web), addr, None).await
}

/// Answers from `web` on `addr` until shut down.
async fn listen(
    web: Arc<dyn Answer>,
    addr: SocketAddr,
    latency: Option<Latency>,
) -> std::io::Result<Server> {
    let listener = TcpListener::bind(addr).await?;
    let addr = listener.local_addr()?;
    let (stop, mut stopped) = watch::channel(false);
    let task = tokio::spawn(async move {
        loop {
            let conn = tokio::select! {
                c = listener.accept() => c,
                _ = stopped.changed() => break,
            };
            let Ok((stream, _)) = conn else { continue };
            let _ = stream.set_nodelay(true);
            let web = web.clone();
            let mut stopped = stopped.clone();
            tokio::spawn(async move {
                let svc = hyper::service::service_fn(move |req| {
                    let web = web.clone();
                    async move {
                        if let Some(l) = latency {
                            let url = req.uri().to_string();
                            tokio::time::sleep(l.for_url(&url)).await;
                        }
                        Ok::<_, Infallible>(web.answer(&req))
                    }
                });
                let conn = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), svc);
                tokio::pin!(conn);
                tokio::select! {
                    _ = conn.as_mut() => {}
                    _ = stopped.changed() => conn.as_mut().graceful_shutdown(),
                }
            });
        }
    });
    Ok(Server { addr, stop, task })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::synthweb::{SynthConfig, SynthWeb};

    /// A client whose every request goes through `server`.
    fn proxied(server: &Server) -> reqwest::Client {
        reqwest::Client::builder()
            .proxy(reqwest::Proxy::all(server.proxy_url()).unwrap())
            .build()
            .unwrap()
    }

    /// GET `url` through `client`: the status and the body.
    async fn get(client: &reqwest::Client, url: &str) -> (reqwest::StatusCode, String) {
        let r = client.get(url).send().await.unwrap();
        (r.status(), r.text().await.unwrap())
    }

    #[tokio::test]
    async fn serves_pages_404s_and_502s_through_a_proxy() {
        let synth = SynthWeb::generate(&SynthConfig::default());
        let url = synth.files.keys().next().unwrap().clone();
        let server = start(synth.web.clone(), "127.0.0.1:0".parse().unwrap())
            .await
            .unwrap();
        let client = proxied(&server);
        let (ok, body) = get(&client, &url).await;
        assert_eq!((ok.as_u16(), &body), (200, &synth.files[&url]));
        let host = url::Url::parse(&url)
            .unwrap()
            .host_str()
            .unwrap()
            .to_owned();
        let missing = get(&client, &format!("http://{host}/no-such-page.html")).await;
        assert_eq!(missing.0, 404);
        assert_eq!(get(&client, "http://no-such-host.test/").await.0, 502);
        let trap = get(&client, "http://events-calendar.test/calendar/2024/12").await;
        assert!(trap.1.contains("/calendar/2025/1"));
        server.shutdown().await;
    }

    #[tokio::test]
    async fn serves_a_procedural_web_through_a_proxy() {
        let web = ProceduralWeb::new(3, 10);
        let server = start_procedural(web.clone(), "127.0.0.1:0".parse().unwrap())
            .await
            .unwrap();
        let client = proxied(&server);
        let (ok, body) = get(&client, "http://cooking4.gen.test/p77.html").await;
        assert_eq!(ok, 200);
        assert_eq!(Some(body), web.page("cooking4.gen.test", "/p77.html"));
        let missing = get(&client, "http://cooking4.gen.test/robots.txt").await;
        assert_eq!(missing.0, 404);
        assert_eq!(get(&client, "http://cooking10.gen.test/").await.0, 502);
        server.shutdown().await;
    }

    #[test]
    fn latency_parses_and_is_the_same_for_a_url_within_its_range() {
        let l: Latency = "50..100".parse().unwrap();
        assert_eq!(
            l,
            Latency {
                min_ms: 50,
                max_ms: 100
            }
        );
        assert_eq!(
            "75".parse::<Latency>()
                .unwrap()
                .for_url("http://a.test/")
                .as_millis(),
            75
        );
        for bad in ["", "100..50", "x..1", "1..", "70000"] {
            assert!(bad.parse::<Latency>().is_err(), "{bad:?}");
        }
        let ms: Vec<u128> = (0..200)
            .map(|i| l.for_url(&format!("http://h{i}.test/p.html")).as_millis())
            .collect();
        assert!(ms.iter().all(|m| (50..=100).contains(m)), "{ms:?}");
        assert!(
            ms.iter().min() < Some(&60) && ms.iter().max() > Some(&90),
            "spread: {ms:?}"
        );
        assert_eq!(
            l.for_url("http://h1.test/p.html"),
            l.for_url("http://h1.test/p.html")
        );
    }

    /// A response with latency comes no sooner than its delay (measured; no upper bound).
    #[tokio::test]
    async fn a_response_waits_its_latency() {
        let synth = SynthWeb::generate(&SynthConfig::default());
        let url = synth.files.keys().next().unwrap().clone();
        let latency = Latency {
            min_ms: 300,
            max_ms: 400,
        };
        let server = start_with(
            synth.web.clone(),
            "127.0.0.1:0".parse().unwrap(),
            Some(latency),
        )
        .await
        .unwrap();
        let client = proxied(&server);
        let t = std::time::Instant::now();
        let (ok, body) = get(&client, &url).await;
        assert_eq!((ok.as_u16(), &body), (200, &synth.files[&url]));
        let took = t.elapsed();
        assert!(took >= latency.for_url(&url), "{took:?}");
        assert!(took >= std::time::Duration::from_millis(300), "{took:?}");
        server.shutdown().await;
    }
}
