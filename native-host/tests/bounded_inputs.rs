//! No command reads an unbounded input whole or waits on one forever (#28 defects 2 and 9):
//! `not-relevant` on a FIFO with no writer or on `/dev/zero` ends at once with a clear error;
//! a 4 MB request frame of tiny JSON values is refused before it is parsed; the host refuses
//! to start without a data directory instead of writing into the current one.

use std::process::Stdio;
use std::time::{Duration, Instant};

mod common;
use common::host::Host;
use common::{forager, tmp};

/// Runs `cmd`; it must end within `secs` (killed otherwise) and fail; returns its stderr.
fn fails_within(cmd: &mut std::process::Command, secs: u64) -> String {
    let mut child = cmd
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let t = Instant::now();
    loop {
        if let Some(s) = child.try_wait().unwrap() {
            let mut err = String::new();
            use std::io::Read;
            child
                .stderr
                .take()
                .unwrap()
                .read_to_string(&mut err)
                .unwrap();
            assert!(!s.success(), "{cmd:?} succeeded");
            return err;
        }
        if t.elapsed() > Duration::from_secs(secs) {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{cmd:?} still running after {secs} s");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn not_relevant_refuses_fifos_and_devices_at_once() {
    let dir = tmp("bounded-nr");
    let model = dir.join("m.fgm");
    common::run(forager().args(["starter-model", "--out"]).arg(&model));
    let before = std::fs::read(&model).unwrap();
    let fifo = dir.join("fifo");
    assert!(std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap()
        .success());
    for input in [fifo.to_str().unwrap(), "/dev/zero"] {
        let err = fails_within(
            forager()
                .args(["not-relevant", "--model"])
                .arg(&model)
                .arg(input),
            20,
        );
        assert!(err.contains("not a regular file"), "{input}: {err}");
    }
    let big = dir.join("big.html");
    std::fs::write(&big, vec![b'a'; 3 << 20]).unwrap();
    let err = fails_within(
        forager()
            .args(["not-relevant", "--model"])
            .arg(&model)
            .arg(&big),
        20,
    );
    assert!(err.contains("larger than"), "{err}");
    assert_eq!(
        std::fs::read(&model).unwrap(),
        before,
        "the model is unchanged"
    );
}

/// Peak resident memory of a process, in MB.
fn peak_mb(pid: u32) -> u64 {
    let s = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    (s.lines())
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .unwrap_or(0)
        >> 10
}

#[test]
fn a_four_megabyte_frame_of_tiny_values_is_refused_unparsed() {
    let home = tmp("bounded-frame");
    let mut host = Host::start(&home);
    let r = host.request(serde_json::json!({"id": 1, "type": "hello", "version": 1}));
    assert_eq!(r["ok"], true, "{r}");
    for tiny in ["{},", "0,", "[],"] {
        let mut body = br#"{"id":2,"type":"queue_links","urls":["#.to_vec();
        while body.len() < (4 << 20) - 64 {
            body.extend_from_slice(tiny.as_bytes());
        }
        body.extend_from_slice(b"0]}");
        let mut frame = (body.len() as u32).to_ne_bytes().to_vec();
        frame.extend(body);
        host.send_raw(&frame);
        let r = host.reply();
        assert_eq!(r["ok"], false, "{r}");
        assert!(r["error"].as_str().unwrap().contains("JSON values"), "{r}");
    }
    let peak = peak_mb(host.child.id());
    // Parsed, each such frame cost the host about 400 MB.
    assert!(peak < 150, "peak {peak} MB");
    let r = host.request(serde_json::json!({"id": 3, "type": "topics"}));
    assert_eq!(r["ok"], true, "still serving: {r}");
    assert_eq!(host.exit_code(), 0);
}

#[test]
fn the_host_refuses_to_start_without_a_data_directory() {
    let dir = tmp("bounded-nohome");
    let cwd = dir.join("cwd");
    std::fs::create_dir_all(&cwd).unwrap();
    let err = fails_within(
        forager()
            .arg("chrome-extension://abcdefghijklmnopabcdefghijklmnop/")
            .current_dir(&cwd)
            .env("HOME", "")
            .env("XDG_DATA_HOME", "")
            .env("FORAGER_HOME", "")
            .stdin(Stdio::null()),
        20,
    );
    assert!(err.contains("HOME"), "{err}");
    assert_eq!(
        std::fs::read_dir(&cwd).unwrap().count(),
        0,
        "nothing written in the cwd"
    );
}

#[test]
fn forager_sql_stops_a_query_at_its_time_limit() {
    let dir = tmp("bounded-sql");
    let db = dir.join("c.db");
    drop(forager::store::Store::open(&db).unwrap());
    let forever = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) \
                   SELECT count(*) FROM c";
    let t = Instant::now();
    let err = fails_within(
        forager()
            .arg("sql")
            .arg(&db)
            .arg(forever)
            .args(["--timeout", "1"]),
        30,
    );
    assert!(err.contains("ran past 1 s"), "{err}");
    assert!(t.elapsed() < Duration::from_secs(30));
    let ok = common::run(
        forager()
            .arg("sql")
            .arg(&db)
            .arg("SELECT count(*) FROM doc"),
    );
    assert!(ok.contains('0'));
}
