//! A PostgreSQL server for a bench: `FORAGER_TEST_PG` when set, else a throwaway cluster from
//! scripts/pg-cluster.sh, stopped and deleted when dropped.
#![allow(dead_code)]

use std::path::PathBuf;
use std::process::Command;

/// The repository root.
fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// A server to run a bench on.
pub struct Pg {
    /// Its URL.
    pub url: String,
    state: Option<PathBuf>,
}

impl Pg {
    /// The given server, or a new throwaway cluster.
    pub fn get() -> Pg {
        if let Ok(url) = std::env::var("FORAGER_TEST_PG") {
            if !url.is_empty() {
                return Pg { url, state: None };
            }
        }
        let state = std::env::temp_dir().join(format!("forager-bench-pg-{}", std::process::id()));
        let out = Command::new(repo().join("scripts/pg-cluster.sh"))
            .arg("start")
            .env("FORAGER_PG_STATE", &state)
            .output()
            .expect("scripts/pg-cluster.sh");
        assert!(
            out.status.success(),
            "pg-cluster.sh start: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let url = String::from_utf8(out.stdout).unwrap().trim().to_owned();
        Pg {
            url,
            state: Some(state),
        }
    }
}

impl Drop for Pg {
    fn drop(&mut self) {
        if let Some(state) = &self.state {
            let _ = Command::new(repo().join("scripts/pg-cluster.sh"))
                .arg("stop")
                .env("FORAGER_PG_STATE", state)
                .status();
        }
    }
}
