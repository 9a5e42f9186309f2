//! Fetching pages over HTTP(S): timeouts, a body-size cap, recorded redirects, proxies, and
//! charset decoding (crawling-the-web-2004 §2.2).

use crate::address::{PrivateAddress, Reach, Resolver};
use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use thiserror::Error;
use tokio::sync::Semaphore;
use tracing::Instrument;

/// How the fetcher behaves; defaults suit the real web.
#[derive(Clone, Debug)]
pub struct FetchConfig {
    /// The User-Agent header, naming the crawler and where to learn about it.
    pub user_agent: String,
    /// Time allowed to establish a connection.
    pub connect_timeout: Duration,
    /// Time allowed for one whole request including the body.
    pub total_timeout: Duration,
    /// Largest body kept; longer bodies are truncated and marked so.
    pub max_body: usize,
    /// Redirect hops followed before giving up.
    pub max_redirects: usize,
    /// HTTP(S) proxy for every request (how mini-webs are reached).
    pub proxy: Option<String>,
    /// Requests in flight to one host at once (politeness; also the idle connections kept).
    pub per_host_connections: usize,
    /// Which local or private addresses may be reached (by default none).
    pub reach: Reach,
}

impl Default for FetchConfig {
    fn default() -> Self {
        FetchConfig {
            user_agent: concat!(
                "Forager/",
                env!("CARGO_PKG_VERSION"),
                " (focused crawler; +https://example.invalid/forager)"
            )
            .into(),
            connect_timeout: Duration::from_secs(10),
            total_timeout: Duration::from_secs(30),
            max_body: 2 << 20,
            max_redirects: 5,
            proxy: None,
            per_host_connections: 2,
            reach: Reach::default(),
        }
    }
}

/// The environment variable that sets the fetch timeout of the browser's host, in seconds
/// (`forager crawl` has `--timeout`): a test's silent server need not hold a crawl 30 s.
pub const TIMEOUT_ENV: &str = "FORAGER_FETCH_TIMEOUT";

/// A fetch timeout that is not a number of seconds from 0.1 to 3600.
#[derive(Debug, Error, PartialEq, Eq)]
#[error("{TIMEOUT_ENV}={0:?}: the fetch timeout must be a number of seconds from 0.1 to 3600")]
pub struct BadTimeout(pub String);

impl FetchConfig {
    /// These settings with the request timeout `secs` (connecting takes at most 10 s of it),
    /// as `forager crawl --timeout` sets it.
    pub fn with_timeout(self, secs: f64) -> Self {
        FetchConfig {
            total_timeout: Duration::from_secs_f64(secs.clamp(0.1, 3600.0)),
            connect_timeout: Duration::from_secs_f64(secs.clamp(0.1, 10.0)),
            ..self
        }
    }

    /// These settings with the timeout `value` of [`TIMEOUT_ENV`] if given (`None`: unset);
    /// a value that is not seconds from 0.1 to 3600 is refused in words.
    pub fn with_timeout_from(self, value: Option<&str>) -> Result<Self, BadTimeout> {
        let Some(v) = value else {
            return Ok(self);
        };
        match v.trim().parse::<f64>() {
            Ok(secs) if (0.1..=3600.0).contains(&secs) => Ok(self.with_timeout(secs)),
            _ => Err(BadTimeout(v.to_owned())),
        }
    }
}

/// Why a fetch failed; the kind is recorded in the crawl database.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum FetchError {
    /// The URL is not http(s) or does not parse.
    #[error("unsupported URL {0}")]
    BadUrl(String),
    /// Sending or receiving failed after the connection was made.
    #[error("network error: {0}")]
    Network(String),
    /// Connecting to the host failed (refused, unreachable).
    #[error("cannot connect: {0}")]
    Connect(String),
    /// The host name did not resolve.
    #[error("name not resolved: {0}")]
    Dns(String),
    /// The proxy could not be reached: no fetch can succeed until it is back.
    #[error("proxy unreachable: {0}")]
    Proxy(String),
    /// The request took longer than allowed.
    #[error("timed out")]
    Timeout,
    /// More redirect hops than allowed, or a redirect without a usable target.
    #[error("redirect error: {0}")]
    Redirect(String),
    /// The fetcher could not be built (bad proxy URL and the like).
    #[error("fetcher configuration: {0}")]
    Config(String),
    /// The target is on a local or private address the crawl may not reach.
    #[error("refused: {0} is on a local or private address")]
    Private(String),
    /// A redirect led to a URL its host's robots.txt disallows.
    #[error("robots.txt disallows the redirect target {0}")]
    Disallowed(String),
    /// A redirect led to a host whose robots.txt cannot be read just now.
    #[error("robots.txt of the redirect target {0} is unavailable")]
    HopUnavailable(String),
}

impl FetchError {
    /// A short stable name for reports and the database.
    pub fn kind(&self) -> &'static str {
        match self {
            FetchError::BadUrl(_) => "bad-url",
            FetchError::Network(_) => "network",
            FetchError::Connect(_) => "connect",
            FetchError::Dns(_) => "dns",
            FetchError::Proxy(_) => "proxy",
            FetchError::Timeout => "timeout",
            FetchError::Redirect(_) => "redirect",
            FetchError::Config(_) => "config",
            FetchError::Private(_) => "private-address",
            FetchError::Disallowed(_) => "robots",
            FetchError::HopUnavailable(_) => "robots-unavailable",
        }
    }
}

/// A fetched response.
#[derive(Clone, Debug)]
pub struct Fetched {
    /// The URL finally answered (after redirects).
    pub final_url: String,
    /// Every URL redirected through, in order, not including the final one.
    pub redirects: Vec<String>,
    /// HTTP status of the final response.
    pub status: u16,
    /// The Content-Type header, if any.
    pub content_type: Option<String>,
    /// The body, at most `max_body` bytes.
    pub body: Vec<u8>,
    /// True when the body was cut at `max_body`.
    pub truncated: bool,
    /// The server's `Retry-After`, in seconds form (for 429 and 503 answers).
    pub retry_after: Option<Duration>,
    /// The final response's HTTP version (for WARC records).
    pub version: reqwest::Version,
    /// The final response's headers as received (less those of a content coding the client
    /// undid), for WARC records; moved out of the response, not copied.
    pub headers: reqwest::header::HeaderMap,
}

impl Fetched {
    /// True when the content type looks like HTML (or is missing, as with many small servers).
    pub fn is_html(&self) -> bool {
        match &self.content_type {
            None => true,
            Some(ct) => {
                let ct = ct.to_ascii_lowercase();
                ct.starts_with("text/html") || ct.starts_with("application/xhtml")
            }
        }
    }

    /// The body decoded to text by the header charset, a `<meta>` charset, or UTF-8.
    pub fn text(&self) -> String {
        self.html().into_owned()
    }

    /// [`Fetched::text`], borrowing the body when it is valid UTF-8 already (no copy of
    /// every page the crawl parses).
    pub fn html(&self) -> std::borrow::Cow<'_, str> {
        decode(&self.body, self.content_type.as_deref())
    }
}

/// Decodes an HTML body: BOM, then the Content-Type charset, then a `<meta charset>` in the
/// first 1024 bytes, else UTF-8; malformed sequences become U+FFFD.
pub fn decode_html(body: &[u8], content_type: Option<&str>) -> String {
    decode(body, content_type).into_owned()
}

/// [`decode_html`], borrowing `body` when it needs no change.
fn decode<'b>(body: &'b [u8], content_type: Option<&str>) -> std::borrow::Cow<'b, str> {
    let from_header = content_type.and_then(charset_param);
    let head = &body[..body.len().min(1024)];
    let from_meta = || sniff_meta_charset(head);
    let enc = from_header
        .or_else(from_meta)
        .and_then(|l| encoding_rs::Encoding::for_label(l.as_bytes()))
        .unwrap_or(encoding_rs::UTF_8);
    let (text, _, _) = enc.decode(body);
    text
}

fn charset_param(ct: &str) -> Option<String> {
    ct.split(';').skip(1).find_map(|p| {
        let (k, v) = p.split_once('=')?;
        (k.trim().eq_ignore_ascii_case("charset"))
            .then(|| v.trim().trim_matches(['"', '\'']).to_owned())
    })
}

fn sniff_meta_charset(head: &[u8]) -> Option<String> {
    let s = String::from_utf8_lossy(head).to_ascii_lowercase();
    let i = s.find("charset=")?;
    let rest = s[i + 8..].trim_start_matches(['"', '\'']);
    let end = rest
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '-' || c == '_'))
        .unwrap_or(rest.len());
    (end > 0).then(|| rest[..end].to_owned())
}

/// Asked before each redirect hop is fetched (robots.txt of the target's host); an error ends
/// the fetch with it.
pub trait HopGate: Send + Sync {
    /// Whether `url`, a redirect target, may be fetched.
    fn allow<'a>(
        &'a self,
        url: &'a url::Url,
    ) -> Pin<Box<dyn Future<Output = Result<(), FetchError>> + Send + 'a>>;
}

/// Hosts whose connection slots are kept before the idle ones are forgotten.
const HOST_SLOTS: usize = 4096;

/// An HTTP client shared by all fetch workers.
#[derive(Clone, Debug)]
pub struct Fetcher {
    client: reqwest::Client,
    config: FetchConfig,
    /// One semaphore per host bounds the requests in flight to it.
    hosts: Arc<Mutex<HashMap<String, Arc<Semaphore>>>>,
    /// Where the fetcher may connect (also enforced by its resolver).
    reach: Arc<Reach>,
}

impl Fetcher {
    /// Builds a fetcher; fails only on a bad proxy URL or TLS setup.
    pub fn new(config: FetchConfig) -> Result<Self, FetchError> {
        let mut reach = config.reach.clone();
        if let Some(p) = config
            .proxy
            .as_deref()
            .and_then(|p| url::Url::parse(p).ok())
        {
            // The proxy is the user's choice, wherever it is.
            reach.allow_seed(&p);
        }
        let reach = Arc::new(reach);
        let mut b = reqwest::Client::builder()
            .dns_resolver(Arc::new(Resolver::new(reach.clone())))
            .user_agent(config.user_agent.clone())
            .connect_timeout(config.connect_timeout)
            .timeout(config.total_timeout)
            .redirect(reqwest::redirect::Policy::none())
            // A crawl touches thousands of hosts: idle connections are kept briefly and no more
            // per host than may be in flight to it, or sockets and their buffers pile up (seen
            // as memory growth and, at last, "too many open files"). One fewer than that made
            // a third of a FOLDOC crawl's requests open a connection (#27).
            .pool_max_idle_per_host(config.per_host_connections.max(1))
            .pool_idle_timeout(Duration::from_secs(2));
        b = match &config.proxy {
            Some(p) => {
                b.proxy(reqwest::Proxy::all(p).map_err(|e| FetchError::Config(e.to_string()))?)
            }
            None => b.no_proxy(),
        };
        let client = b.build().map_err(|e| FetchError::Config(e.to_string()))?;
        Ok(Fetcher {
            client,
            config,
            hosts: Arc::default(),
            reach,
        })
    }

    /// The configuration in force.
    pub fn config(&self) -> &FetchConfig {
        &self.config
    }

    /// Fetches `url`, following redirects up to the limit and recording each hop.
    pub async fn get(&self, url: &str) -> Result<Fetched, FetchError> {
        self.get_via(url, None).await
    }

    /// Like [`Fetcher::get`], asking `gate` before following each redirect.
    pub async fn get_via(
        &self,
        url: &str,
        gate: Option<&dyn HopGate>,
    ) -> Result<Fetched, FetchError> {
        let mut current = url::Url::parse(url).map_err(|_| FetchError::BadUrl(url.to_owned()))?;
        let mut redirects = Vec::new();
        loop {
            if !matches!(current.scheme(), "http" | "https") {
                return Err(FetchError::BadUrl(current.to_string()));
            }
            if !self.reach.permits_literal(&current) {
                return Err(FetchError::Private(current.to_string()));
            }
            let slot = self.host_slot(current.host_str().unwrap_or(""));
            // The semaphore is never closed, so acquiring cannot fail.
            let _permit = slot.acquire_owned().await;
            let resp = (self.client.get(current.clone()).send())
                .instrument(tracing::debug_span!("fetch.headers"))
                .await
                .map_err(|e| net_err(e, self.config.proxy.is_some()))?;
            if let Some(next) = self.redirect_target(&current, &resp, redirects.len())? {
                if let Some(g) = gate {
                    g.allow(&next).await?;
                }
                redirects.push(current.to_string());
                current = next;
                continue;
            }
            return (self.read_response(resp, current, redirects))
                .instrument(tracing::debug_span!("fetch.body"))
                .await;
        }
    }

    /// The connection slots of `host` (at most `per_host_connections` at once).
    fn host_slot(&self, host: &str) -> Arc<Semaphore> {
        let mut hosts = self.hosts.lock().unwrap_or_else(|p| p.into_inner());
        if hosts.len() >= HOST_SLOTS && !hosts.contains_key(host) {
            // Slots no fetch holds or waits for are all free: forgetting them changes nothing.
            hosts.retain(|_, s| Arc::strong_count(s) > 1);
        }
        hosts
            .entry(host.to_owned())
            .or_insert_with(|| Arc::new(Semaphore::new(self.config.per_host_connections.max(1))))
            .clone()
    }

    /// Where a redirect of `current` leads (credentials dropped), or `None` for an answer;
    /// refused past the redirect limit or for a bad `Location`.
    fn redirect_target(
        &self,
        current: &url::Url,
        resp: &reqwest::Response,
        hops: usize,
    ) -> Result<Option<url::Url>, FetchError> {
        if !resp.status().is_redirection() {
            return Ok(None);
        }
        let Some(loc) =
            (resp.headers().get(reqwest::header::LOCATION)).and_then(|v| v.to_str().ok())
        else {
            return Ok(None);
        };
        if hops >= self.config.max_redirects {
            return Err(FetchError::Redirect(format!(
                "more than {} redirects",
                self.config.max_redirects
            )));
        }
        let mut next = current
            .join(loc)
            .map_err(|_| FetchError::Redirect(format!("bad Location {loc:?}")))?;
        // Credentials in a Location are neither sent nor stored.
        let _ = next.set_username("");
        let _ = next.set_password(None);
        Ok(Some(next))
    }

    /// The answer of `current`: headers kept, the body read up to `max_body` (the rest cut).
    async fn read_response(
        &self,
        mut resp: reqwest::Response,
        current: url::Url,
        redirects: Vec<String>,
    ) -> Result<Fetched, FetchError> {
        let status = resp.status().as_u16();
        let retry_after = resp
            .headers()
            .get(reqwest::header::RETRY_AFTER)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.trim().parse::<u64>().ok())
            .map(Duration::from_secs);
        let content_type = resp
            .headers()
            .get(reqwest::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        let headers = std::mem::take(resp.headers_mut());
        let version = resp.version();
        let mut body = Vec::new();
        let mut truncated = false;
        while let Some(chunk) = resp.chunk().await.map_err(|e| net_err(e, false))? {
            let room = self.config.max_body - body.len();
            if chunk.len() > room {
                body.extend_from_slice(&chunk[..room]);
                truncated = true;
                break;
            }
            body.extend_from_slice(&chunk);
        }
        Ok(Fetched {
            final_url: current.to_string(),
            redirects,
            status,
            content_type,
            body,
            truncated,
            retry_after,
            version,
            headers,
        })
    }
}

/// Sorts a reqwest error by whose fault it is likely to be. With a proxy, a connection that
/// fails at the socket (refused, reset, unreachable) is to the proxy; a tunnel the proxy could
/// not open is the target's.
fn net_err(e: reqwest::Error, proxied: bool) -> FetchError {
    if e.is_timeout() {
        return FetchError::Timeout;
    }
    let mut chain = e.to_string();
    let mut socket = false;
    let mut src = std::error::Error::source(&e);
    while let Some(s) = src {
        if let Some(p) = s.downcast_ref::<PrivateAddress>() {
            return FetchError::Private(p.0.clone());
        }
        chain.push_str(": ");
        chain.push_str(&s.to_string());
        if let Some(io) = s.downcast_ref::<std::io::Error>() {
            use std::io::ErrorKind as K;
            socket |= matches!(
                io.kind(),
                K::ConnectionRefused
                    | K::ConnectionReset
                    | K::ConnectionAborted
                    | K::AddrNotAvailable
                    | K::NetworkUnreachable
                    | K::HostUnreachable
                    | K::NetworkDown
            );
        }
        src = s.source();
    }
    if chain.contains("forager refuses private address") {
        FetchError::Private(chain)
    } else if !e.is_connect() {
        FetchError::Network(chain)
    } else if chain.contains("dns error") {
        FetchError::Dns(chain)
    } else if proxied && socket {
        FetchError::Proxy(chain)
    } else {
        FetchError::Connect(chain)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_timeout_from_the_environment_is_seconds_within_bounds_or_refused() {
        let d = FetchConfig::default();
        let same = d.clone().with_timeout_from(None).unwrap();
        assert_eq!(same.total_timeout, Duration::from_secs(30));
        let short = d.clone().with_timeout_from(Some(" 2.5 ")).unwrap();
        assert_eq!(short.total_timeout, Duration::from_millis(2500));
        assert_eq!(short.connect_timeout, Duration::from_millis(2500));
        let long = d.clone().with_timeout_from(Some("60")).unwrap();
        assert_eq!(long.connect_timeout, Duration::from_secs(10));
        for bad in ["", "abc", "0", "-1", "NaN", "inf", "3601"] {
            let e = d.clone().with_timeout_from(Some(bad)).unwrap_err();
            assert!(e.to_string().contains(TIMEOUT_ENV), "{e}");
        }
    }

    #[test]
    fn idle_hosts_connection_slots_are_forgotten_busy_ones_kept() {
        let f = Fetcher::new(FetchConfig::default()).unwrap();
        let busy = f.host_slot("busy.test");
        let _permit = busy.clone().try_acquire_owned().unwrap();
        for i in 0..100_000 {
            f.host_slot(&format!("h{i}.test"));
        }
        let kept = f.hosts.lock().unwrap().len();
        assert!(kept <= HOST_SLOTS, "{kept} hosts kept");
        let again = f.host_slot("busy.test");
        assert!(Arc::ptr_eq(&busy, &again), "a slot in use is kept");
        let per_host = FetchConfig::default().per_host_connections;
        assert_eq!(again.available_permits(), per_host - 1);
    }

    #[test]
    fn decodes_by_header_then_meta_then_utf8() {
        let latin1 = b"<p>caf\xe9</p>";
        assert_eq!(
            decode_html(latin1, Some("text/html; charset=ISO-8859-1")),
            "<p>café</p>"
        );
        let meta = b"<meta charset=\"windows-1252\"><p>caf\xe9</p>";
        assert!(decode_html(meta, Some("text/html")).ends_with("café</p>"));
        assert_eq!(decode_html("é".as_bytes(), None), "é");
        assert_eq!(
            decode_html(b"a\xffb", Some("text/html; charset=bogus")),
            "a\u{fffd}b"
        );
    }
}
