//! A loopback HTTP/1.1 site for tests and benches (`#[path]`-included by benches): one thread
//! per connection, keep-alive, every request answered 200 by a function of its path.

use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::Arc;

/// What a site answers for one path: (Content-Type, body).
pub type Answer = (&'static str, String);

/// Serves `answer(path)` for every request on a fresh loopback port, until the process ends;
/// returns the port.
pub fn serve(answer: impl Fn(&str) -> Answer + Send + Sync + 'static) -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let answer = Arc::new(answer);
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let answer = answer.clone();
            std::thread::spawn(move || connection(stream, &*answer));
        }
    });
    port
}

/// Answers one connection's requests until it closes (request bodies are not read).
fn connection(stream: TcpStream, answer: &dyn Fn(&str) -> Answer) {
    let Ok(read_half) = stream.try_clone() else {
        return;
    };
    let mut reader = BufReader::new(read_half);
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
        let (kind, body) = answer(&path);
        let head = format!(
            "HTTP/1.1 200 OK\r\nContent-Type: {kind}\r\nContent-Length: {}\r\n\r\n",
            body.len()
        );
        if stream.write_all(head.as_bytes()).is_err() || stream.write_all(body.as_bytes()).is_err()
        {
            return;
        }
    }
}
