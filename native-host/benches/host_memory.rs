//! The host's memory under large examples (#28 defect 2): the real `forager` host, driven over
//! its stdio framing as the browser does, gets 30 examples (and 30 "not relevant" marks) of
//! 2 MB of unique words each. Prints the host's peak RSS, the model's size against its
//! budget, and how fast a fresh host answers `hello` with that model. Asserts only sanity.

use serde_json::{json, Value};
use std::io::{Read, Write};
use std::process::{Child, Command, Stdio};
use std::time::Instant;

struct Host(Child);

impl Host {
    fn start(home: &std::path::Path) -> Host {
        let child = Command::new(env!("CARGO_BIN_EXE_forager"))
            .arg("chrome-extension://abcdefghijklmnopabcdefghijklmnop/")
            .env("FORAGER_HOME", home)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        Host(child)
    }

    fn request(&mut self, v: Value) -> Value {
        let body = serde_json::to_vec(&v).unwrap();
        let stdin = self.0.stdin.as_mut().unwrap();
        stdin.write_all(&(body.len() as u32).to_ne_bytes()).unwrap();
        stdin.write_all(&body).unwrap();
        stdin.flush().unwrap();
        let out = self.0.stdout.as_mut().unwrap();
        loop {
            let mut len = [0u8; 4];
            out.read_exact(&mut len).unwrap();
            let mut b = vec![0u8; u32::from_ne_bytes(len) as usize];
            out.read_exact(&mut b).unwrap();
            let r: Value = serde_json::from_slice(&b).unwrap();
            if r["type"] == "reply" {
                return r;
            }
        }
    }

    /// Peak resident memory of the host so far, in MB.
    fn peak_mb(&self) -> u64 {
        let s = std::fs::read_to_string(format!("/proc/{}/status", self.0.id())).unwrap();
        let kb: u64 = (s.lines())
            .find_map(|l| l.strip_prefix("VmHWM:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            .unwrap_or(0);
        kb >> 10
    }

    fn stop(mut self) {
        drop(self.0.stdin.take());
        let _ = self.0.wait();
    }
}

/// About 2 MB (under the host's 2 MiB text limit) of words no other page has.
fn unique_words(page: usize) -> String {
    let mut s = String::with_capacity(2 << 20);
    let mut i = 0usize;
    while s.len() < (2 << 20) - 64 {
        let mut n = i * 64 + page;
        let mut w = String::from("q");
        while n > 0 {
            w.push((b'a' + (n % 26) as u8) as char);
            n /= 26;
        }
        s.push_str(&w);
        s.push(' ');
        i += 1;
    }
    s
}

fn main() {
    let home = std::env::temp_dir().join(format!("forager-hostmem-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&home);
    std::fs::create_dir_all(&home).unwrap();
    let mut host = Host::start(&home);
    assert_eq!(
        host.request(json!({"id":1,"type":"hello","version":1}))["ok"],
        true
    );
    let topics = host.request(json!({"id":2,"type":"topics"}));
    let topic = topics["result"]["topics"][1]["id"].as_u64().unwrap();
    let t = Instant::now();
    let mut refused = 0;
    for i in 0..30 {
        let r = host.request(json!({"id": 10 + i, "type": "add_example", "topic": topic,
            "url": format!("https://big.test/example/{i}"), "text": unique_words(i)}));
        refused += usize::from(r["ok"] != true);
    }
    for i in 0..30 {
        let r = host.request(json!({"id": 100 + i, "type": "mark_not_relevant",
            "url": format!("https://big.test/marked/{i}"), "text": unique_words(1000 + i)}));
        refused += usize::from(r["ok"] != true);
    }
    let edits = t.elapsed().as_secs_f64();
    let peak = host.peak_mb();
    host.stop();
    let model = std::fs::metadata(home.join("model.fgm")).unwrap().len();
    let t = Instant::now();
    let mut fresh = Host::start(&home);
    let hello = fresh.request(json!({"id":1,"type":"hello","version":1}));
    let hello_s = t.elapsed().as_secs_f64();
    assert_eq!(hello["ok"], true, "{hello}");
    let fresh_peak = fresh.peak_mb();
    fresh.stop();
    println!(
        "host memory: 30 examples + 30 marks of 2 MB unique words: peak RSS {peak} MB \
         ({edits:.1} s, {refused} refused); model {:.1} MB (budget {} MB); a fresh host \
         answers hello in {hello_s:.2} s at {fresh_peak} MB",
        model as f64 / (1 << 20) as f64,
        forager_classifier::codec::MODEL_BUDGET_BYTES >> 20,
    );
    let _ = std::fs::remove_dir_all(&home);
}
