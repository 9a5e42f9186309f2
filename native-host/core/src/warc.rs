//! WARC archives of what a crawl fetched (ISO 28500, WARC/1.1): a `warcinfo` record at the
//! head of each file, then a `request` and a `response` record per answered fetch, each record
//! its own gzip member (so files can be cut, joined and read from any record), files rotated
//! by size.
//!
//! The HTTP client undoes content codings (gzip, br) and chunking, so a response record holds
//! the decoded body: its `Content-Encoding`, `Transfer-Encoding` and `Content-Length` headers
//! are kept as `X-Forager-Orig-*` and a `Content-Length` of the stored body is added, as web
//! archives do for such records. The request record is the request as the crawler sends it.

use flate2::write::GzEncoder;
use sha1::{Digest, Sha1};
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

/// Where and how large the WARC files are.
#[derive(Clone, Debug)]
pub struct WarcConfig {
    /// Files are `<prefix>-00000.warc.gz`, `<prefix>-00001.warc.gz`, ...
    pub prefix: PathBuf,
    /// A file is closed and the next begun once it holds this many bytes.
    pub max_bytes: u64,
    /// The User-Agent the crawler sends (for the request records).
    pub user_agent: String,
}

/// Default rotation size: 1 GB, as the Internet Archive's crawlers use.
pub const DEFAULT_MAX_BYTES: u64 = 1_000_000_000;

/// One answered fetch, as the archive records it.
#[derive(Clone, Debug)]
pub struct Exchange {
    /// The URL that answered (after redirects).
    pub url: String,
    /// HTTP version of the answer.
    pub version: reqwest::Version,
    /// HTTP status.
    pub status: u16,
    /// Response headers as received.
    pub headers: reqwest::header::HeaderMap,
    /// The body as stored (decoded; cut at the crawler's limit when `truncated`).
    pub body: Vec<u8>,
    /// The body was cut at the crawler's size limit.
    pub truncated: bool,
}

impl Exchange {
    /// The exchange of a fetched response.
    pub fn of(f: &crate::fetch::Fetched) -> Self {
        Exchange {
            url: f.final_url.clone(),
            version: f.version,
            status: f.status,
            headers: f.headers.clone(),
            body: f.body.clone(),
            truncated: f.truncated,
        }
    }
}

/// Writes what arrives on `rx` until every sender is gone (run it off the async runtime);
/// returns the files written.
pub fn archive(
    config: WarcConfig,
    mut rx: tokio::sync::mpsc::Receiver<Archived>,
) -> std::io::Result<Vec<PathBuf>> {
    let mut w = WarcWriter::new(config);
    while let Some(m) = rx.blocking_recv() {
        match m {
            Archived::Exchange(x) => w.write(&x)?,
            Archived::Flush(done) => {
                w.flush()?;
                let _ = done.send(());
            }
        }
    }
    w.finish()
}

/// What the crawl sends its archive writer.
#[derive(Debug)]
pub enum Archived {
    /// One exchange to record.
    Exchange(Exchange),
    /// Write out everything received so far (to the OS, so that a killed process loses none
    /// of it), then answer: the crawl waits for this before it commits a batch of pages, so
    /// that every committed page has its records.
    Flush(tokio::sync::oneshot::Sender<()>),
}

/// Writes records into rotating `.warc.gz` files.
pub struct WarcWriter {
    config: WarcConfig,
    next_index: u32,
    current: Option<Current>,
    written: Vec<PathBuf>,
}

struct Current {
    file: BufWriter<File>,
    bytes: u64,
    warcinfo_id: String,
}

/// The existing files of `prefix`, in order.
pub fn files(prefix: &Path) -> Vec<PathBuf> {
    (0..)
        .map(|i| file_name(prefix, i))
        .take_while(|p| p.exists())
        .collect()
}

/// Bytes `offset..offset + len` of the files of `prefix` joined end to end (gzip members
/// join into one valid `.warc.gz`), and the joined length.
pub fn joined_range(prefix: &Path, offset: u64, len: usize) -> std::io::Result<(u64, Vec<u8>)> {
    use std::io::{Read, Seek, SeekFrom};
    let files = files(prefix);
    let sizes: Vec<u64> = (files.iter())
        .map(|f| std::fs::metadata(f).map(|m| m.len()))
        .collect::<std::io::Result<_>>()?;
    let total = sizes.iter().sum();
    let mut out = Vec::new();
    let mut start = 0u64;
    for (f, size) in files.iter().zip(sizes) {
        let end = start + size;
        let want_end = offset.saturating_add(len as u64);
        if end > offset && start < want_end && out.len() < len {
            let from = offset.max(start) - start;
            let mut file = File::open(f)?;
            file.seek(SeekFrom::Start(from))?;
            let take = (len - out.len()) as u64;
            file.take(take).read_to_end(&mut out)?;
        }
        start = end;
    }
    Ok((total, out))
}

/// The prefix of a `--warc FILE` argument: FILE less a `.warc.gz` or `.warc` ending.
pub fn prefix_of(file: &Path) -> PathBuf {
    let s = file.as_os_str().to_string_lossy();
    let stem = (s.strip_suffix(".warc.gz"))
        .or_else(|| s.strip_suffix(".warc"))
        .unwrap_or(&s);
    PathBuf::from(stem)
}

fn file_name(prefix: &Path, i: u32) -> PathBuf {
    let mut name = prefix.as_os_str().to_owned();
    name.push(format!("-{i:05}.warc.gz"));
    PathBuf::from(name)
}

fn record_id() -> String {
    format!("<urn:uuid:{}>", uuid::Uuid::new_v4())
}

fn sha1_label(bytes: &[u8]) -> String {
    format!(
        "sha1:{}",
        data_encoding::BASE32.encode(&Sha1::digest(bytes))
    )
}

fn now() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
}

impl WarcWriter {
    /// A writer whose first file is the first index of `prefix` not on disk yet (a resumed
    /// crawl adds files, never overwrites them).
    pub fn new(config: WarcConfig) -> Self {
        let next_index = files(&config.prefix).len() as u32;
        WarcWriter {
            config,
            next_index,
            current: None,
            written: Vec::new(),
        }
    }

    /// Records one exchange: its request and its response.
    pub fn write(&mut self, x: &Exchange) -> std::io::Result<()> {
        let rotate = self
            .current
            .as_ref()
            .is_some_and(|c| c.bytes >= self.config.max_bytes);
        if rotate || self.current.is_none() {
            self.open_next()?;
        }
        let warcinfo = self.warcinfo_id().to_owned();
        let response_id = record_id();
        let date = now();
        let request = self.request_block(&x.url);
        let response = response_block(x);
        let payload = sha1_label(&x.body);
        let mut fields = vec![
            ("WARC-Type", "response".to_owned()),
            ("WARC-Record-ID", response_id.clone()),
            ("WARC-Date", date.clone()),
            ("WARC-Target-URI", x.url.clone()),
            ("WARC-Warcinfo-ID", warcinfo.clone()),
            ("WARC-Block-Digest", sha1_label(&response)),
            ("WARC-Payload-Digest", payload),
            (
                "Content-Type",
                "application/http;msgtype=response".to_owned(),
            ),
        ];
        if x.truncated {
            fields.push(("WARC-Truncated", "length".to_owned()));
        }
        self.record(&fields, &response)?;
        let fields = [
            ("WARC-Type", "request".to_owned()),
            ("WARC-Record-ID", record_id()),
            ("WARC-Date", date),
            ("WARC-Target-URI", x.url.clone()),
            ("WARC-Warcinfo-ID", warcinfo),
            ("WARC-Concurrent-To", response_id),
            ("WARC-Block-Digest", sha1_label(&request)),
            (
                "Content-Type",
                "application/http;msgtype=request".to_owned(),
            ),
        ];
        self.record(&fields, &request)
    }

    /// Writes the current file's buffered records out to the OS.
    pub fn flush(&mut self) -> std::io::Result<()> {
        match self.current.as_mut() {
            Some(c) => c.file.flush(),
            None => Ok(()),
        }
    }

    /// Flushes and closes the current file; returns every file this writer wrote.
    pub fn finish(mut self) -> std::io::Result<Vec<PathBuf>> {
        if let Some(mut c) = self.current.take() {
            c.file.flush()?;
            c.file.get_ref().sync_all()?;
        }
        Ok(self.written)
    }

    fn warcinfo_id(&self) -> &str {
        self.current.as_ref().map_or("", |c| c.warcinfo_id.as_str())
    }

    fn open_next(&mut self) -> std::io::Result<()> {
        if let Some(mut c) = self.current.take() {
            c.file.flush()?;
        }
        let path = file_name(&self.config.prefix, self.next_index);
        self.next_index += 1;
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir)?;
        }
        let file = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&path)?;
        let warcinfo_id = record_id();
        self.current = Some(Current {
            file: BufWriter::new(file),
            bytes: 0,
            warcinfo_id: warcinfo_id.clone(),
        });
        let name = path
            .file_name()
            .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
        self.written.push(path);
        let info = format!(
            "software: forager/{}\r\nformat: WARC File Format 1.1\r\n\
             conformsTo: https://iipc.github.io/warc-specifications/specifications/warc-format/warc-1.1/\r\n\
             http-header-user-agent: {}\r\n",
            env!("CARGO_PKG_VERSION"),
            self.config.user_agent
        );
        let fields = [
            ("WARC-Type", "warcinfo".to_owned()),
            ("WARC-Record-ID", warcinfo_id),
            ("WARC-Date", now()),
            ("WARC-Filename", name),
            ("Content-Type", "application/warc-fields".to_owned()),
        ];
        self.record(&fields, info.as_bytes())
    }

    /// One record, as its own gzip member.
    fn record(&mut self, fields: &[(&str, String)], block: &[u8]) -> std::io::Result<()> {
        let c = self
            .current
            .as_mut()
            .ok_or_else(|| std::io::Error::other("no WARC file open"))?;
        let mut head = String::from("WARC/1.1\r\n");
        for (k, v) in fields {
            // Field values never carry line breaks (a URL or a header could try).
            let v: String = v.chars().filter(|ch| *ch != '\r' && *ch != '\n').collect();
            head.push_str(&format!("{k}: {v}\r\n"));
        }
        head.push_str(&format!("Content-Length: {}\r\n\r\n", block.len()));
        let mut gz = GzEncoder::new(Vec::new(), flate2::Compression::default());
        gz.write_all(head.as_bytes())?;
        gz.write_all(block)?;
        gz.write_all(b"\r\n\r\n")?;
        let member = gz.finish()?;
        c.file.write_all(&member)?;
        c.bytes += member.len() as u64;
        Ok(())
    }

    /// The request as the crawler sends it (reqwest's default headers and the crawler's agent).
    fn request_block(&self, url: &str) -> Vec<u8> {
        let (target, host) = match url::Url::parse(url) {
            Ok(u) => {
                let mut t = u.path().to_owned();
                if let Some(q) = u.query() {
                    t.push('?');
                    t.push_str(q);
                }
                let host = match u.port() {
                    Some(p) => format!("{}:{p}", u.host_str().unwrap_or("")),
                    None => u.host_str().unwrap_or("").to_owned(),
                };
                (t, host)
            }
            Err(_) => ("/".to_owned(), String::new()),
        };
        format!(
            "GET {target} HTTP/1.1\r\nhost: {host}\r\nuser-agent: {}\r\naccept: */*\r\n\
             accept-encoding: gzip, br, deflate\r\n\r\n",
            self.config.user_agent
        )
        .into_bytes()
    }
}

/// Status line, headers (codings undone, see the module's documentation) and body.
fn response_block(x: &Exchange) -> Vec<u8> {
    let reason = reqwest::StatusCode::from_u16(x.status)
        .ok()
        .and_then(|s| s.canonical_reason())
        .unwrap_or("");
    let mut out = format!("{:?} {} {reason}\r\n", x.version, x.status).into_bytes();
    for (k, v) in &x.headers {
        // Header names are lower case in a HeaderMap.
        if matches!(
            k.as_str(),
            "content-encoding" | "transfer-encoding" | "content-length"
        ) {
            out.extend_from_slice(b"X-Forager-Orig-");
        }
        out.extend_from_slice(k.as_str().as_bytes());
        out.extend_from_slice(b": ");
        out.extend(v.as_bytes().iter().filter(|b| **b != b'\r' && **b != b'\n'));
        out.extend_from_slice(b"\r\n");
    }
    out.extend_from_slice(format!("Content-Length: {}\r\n\r\n", x.body.len()).as_bytes());
    out.extend_from_slice(&x.body);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;

    fn exchange(i: usize) -> Exchange {
        Exchange {
            url: format!("http://a.test/p{i}.html"),
            version: reqwest::Version::HTTP_11,
            status: 200,
            headers: [("content-type", "text/html"), ("content-encoding", "gzip")]
                .into_iter()
                .map(|(k, v)| (k.parse().unwrap(), v.parse().unwrap()))
                .collect(),
            body: format!("<p>page {i}</p>").repeat(50).into_bytes(),
            truncated: false,
        }
    }

    /// Every gzip member of a file, decompressed.
    fn members(path: &Path) -> Vec<String> {
        let bytes = std::fs::read(path).unwrap();
        let mut out = Vec::new();
        let mut rest: &[u8] = &bytes;
        while !rest.is_empty() {
            let mut d = flate2::bufread::GzDecoder::new(rest);
            let mut s = String::new();
            d.read_to_string(&mut s).unwrap();
            rest = d.into_inner();
            out.push(s);
        }
        out
    }

    #[test]
    fn one_gzip_member_per_record_with_digests_that_match() {
        let dir = std::env::temp_dir().join(format!("forager-warc-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let config = WarcConfig {
            prefix: dir.join("crawl"),
            max_bytes: 1500,
            user_agent: "forager-test".into(),
        };
        let mut w = WarcWriter::new(config.clone());
        for i in 0..6 {
            w.write(&exchange(i)).unwrap();
        }
        let written = w.finish().unwrap();
        assert!(written.len() >= 2, "rotated by size: {written:?}");
        assert_eq!(files(&config.prefix), written);
        let mut responses = 0;
        for f in &written {
            let recs = members(f);
            assert!(recs[0].contains("WARC-Type: warcinfo"), "{}", recs[0]);
            for r in &recs[1..] {
                let (head, rest) = r.split_once("\r\n\r\n").unwrap();
                let block = rest.strip_suffix("\r\n\r\n").unwrap();
                let len: usize = (head.lines())
                    .find_map(|l| l.strip_prefix("Content-Length: "))
                    .unwrap()
                    .parse()
                    .unwrap();
                assert_eq!(block.len(), len);
                let digest = (head.lines())
                    .find_map(|l| l.strip_prefix("WARC-Block-Digest: "))
                    .unwrap();
                assert_eq!(digest, sha1_label(block.as_bytes()));
                if head.contains("WARC-Type: response") {
                    responses += 1;
                    assert!(
                        block.contains("X-Forager-Orig-content-encoding: gzip"),
                        "{block}"
                    );
                    let body = block.split_once("\r\n\r\n").unwrap().1;
                    let payload = (head.lines())
                        .find_map(|l| l.strip_prefix("WARC-Payload-Digest: "))
                        .unwrap();
                    assert_eq!(payload, sha1_label(body.as_bytes()));
                }
            }
        }
        assert_eq!(responses, 6);
        // A resumed crawl adds files after the old ones.
        let mut again = WarcWriter::new(config.clone());
        again.write(&exchange(9)).unwrap();
        let more = again.finish().unwrap();
        assert_eq!(more, vec![file_name(&config.prefix, written.len() as u32)]);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
