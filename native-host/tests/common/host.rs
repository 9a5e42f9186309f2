//! The native-messaging host as the browser sees it: a child process speaking framed JSON,
//! and the generated web it crawls.

use super::{forager, run};
use serde_json::{json, Value};
use std::io::{Read, Write};
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

/// The host as a child process, spoken to as the browser does.
pub struct Host {
    /// The host process.
    pub child: Child,
}

impl Host {
    pub fn start(home: &std::path::Path) -> Host {
        let child = forager()
            .arg("chrome-extension://abcdefghijklmnopabcdefghijklmnop/")
            .env("FORAGER_HOME", home)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(if std::env::var("DBG").is_ok() {
                Stdio::inherit()
            } else {
                Stdio::null()
            })
            .spawn()
            .unwrap();
        Host { child }
    }

    pub fn send_raw(&mut self, bytes: &[u8]) {
        let stdin = self.child.stdin.as_mut().unwrap();
        stdin.write_all(bytes).unwrap();
        stdin.flush().unwrap();
    }

    pub fn send(&mut self, v: &Value) {
        let body = serde_json::to_vec(v).unwrap();
        let mut frame = (body.len() as u32).to_ne_bytes().to_vec();
        frame.extend(body);
        self.send_raw(&frame);
    }

    pub fn recv(&mut self) -> Value {
        let out = self.child.stdout.as_mut().unwrap();
        let mut len = [0u8; 4];
        out.read_exact(&mut len).unwrap();
        let mut body = vec![0u8; u32::from_ne_bytes(len) as usize];
        out.read_exact(&mut body).unwrap();
        serde_json::from_slice(&body).unwrap()
    }

    /// The next reply, skipping events.
    pub fn reply(&mut self) -> Value {
        loop {
            let v = self.recv();
            if v["type"] == "reply" {
                return v;
            }
        }
    }

    pub fn request(&mut self, v: Value) -> Value {
        self.send(&v);
        self.reply()
    }

    /// Waits for the process to exit; fails if it hangs or dies of a signal.
    pub fn exit_code(mut self) -> i32 {
        drop(self.child.stdin.take());
        let t = Instant::now();
        loop {
            if let Some(s) = self.child.try_wait().unwrap() {
                return s.code().expect("killed by a signal");
            }
            assert!(t.elapsed() < Duration::from_secs(20), "host hangs");
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

/// The generated web served on loopback: (server process, its proxy URL, astronomy's seeds).
pub fn serve_generated_web(home: &std::path::Path) -> (Child, String, Vec<String>) {
    serve_generated_web_with(home, &[])
}

/// The generated web, made with `gen-web` options `args`, served on loopback.
pub fn serve_generated_web_with(
    home: &std::path::Path,
    args: &[&str],
) -> (Child, String, Vec<String>) {
    let web = home.join("web");
    run(forager().args(["gen-web", "--out"]).arg(&web).args(args));
    let mut server = forager()
        .arg("serve-web")
        .arg(&web)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut line = String::new();
    std::io::BufRead::read_line(
        &mut std::io::BufReader::new(server.stdout.take().unwrap()),
        &mut line,
    )
    .unwrap();
    let proxy = format!("http://127.0.0.1:{}", line.trim());
    let w = forager::miniweb::MiniWeb::open(&web).unwrap();
    (server, proxy, w.task("astronomy").unwrap().seeds.clone())
}

/// The id of the topic at `path` on the host.
pub fn topic_id(h: &mut Host, path: &str) -> Value {
    let topics = h.request(json!({"id": 10, "type": "topics"}));
    (topics["result"]["topics"].as_array().unwrap().iter())
        .find(|t| t["path"] == path)
        .unwrap()["id"]
        .clone()
}

/// Marks /Science/Astronomy good on the host.
pub fn mark_astronomy_good(h: &mut Host) {
    let astro = topic_id(h, "/Science/Astronomy");
    h.request(json!({"id": 11, "type": "set_good", "topic": astro, "good": true}));
}

/// Waits for the crawl to stop; returns the event.
pub fn until_stopped(h: &mut Host) -> Value {
    let t = Instant::now();
    loop {
        assert!(
            t.elapsed() < Duration::from_secs(60),
            "no crawl_stopped event"
        );
        let v = h.recv();
        if v["type"] == "crawl_stopped" {
            return v;
        }
    }
}
