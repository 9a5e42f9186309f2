//! Files the user names as inputs (a page to mark, a model): regular files only, read up to a
//! limit, so that a FIFO with no writer, `/dev/zero` or a huge file ends with a clear error
//! instead of hanging or eating memory.

use std::io::Read;
use std::path::Path;

/// Reads the regular file at `path` whole if it holds at most `max` bytes; refuses FIFOs,
/// devices, directories and sockets without blocking on them, and anything larger.
pub fn read_regular(path: &Path, max: usize) -> std::io::Result<Vec<u8>> {
    use std::os::unix::fs::OpenOptionsExt;
    let f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)?;
    let meta = f.metadata()?;
    if !meta.file_type().is_file() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            format!("{} is not a regular file", path.display()),
        ));
    }
    let mut out = Vec::with_capacity((meta.len() as usize).min(max) + 1);
    f.take(max as u64 + 1).read_to_end(&mut out)?;
    if out.len() > max {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!(
                "{} is larger than {} MB, more than Forager reads of such a file",
                path.display(),
                max >> 20
            ),
        ));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fifos_devices_and_large_files_are_refused_at_once() {
        let d = std::env::temp_dir().join(format!("forager-in-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        let fifo = d.join("fifo");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status();
        assert!(made.unwrap().success());
        let e = read_regular(&fifo, 100).unwrap_err();
        assert!(e.to_string().contains("not a regular file"), "{e}");
        assert!(read_regular(Path::new("/dev/zero"), 100).is_err());
        assert!(read_regular(&d, 100).is_err());
        let big = d.join("big");
        std::fs::write(&big, vec![b'a'; 101]).unwrap();
        assert!(read_regular(&big, 100).is_err());
        assert_eq!(read_regular(&big, 101).unwrap().len(), 101);
    }
}
