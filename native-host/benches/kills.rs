//! Crash safety figures (issue #26): ten random SIGKILLs of random processes of a four-process
//! crawl on PostgreSQL (`benches/common/kills.rs`), each replaced; prints what each victim held
//! and the end state against a one-process crawl. `KILLS` (10) and `KILL_SEED` (1) change the
//! run; PostgreSQL: `FORAGER_TEST_PG`, else a throwaway cluster (scripts/pg-cluster.sh).

#[path = "common/kills.rs"]
mod kills;
#[path = "common/pg.rs"]
mod pg;
#[path = "common/synth_model.rs"]
mod synth_model;

/// A number from the environment.
fn env<T: std::str::FromStr>(k: &str) -> Option<T> {
    std::env::var(k).ok().and_then(|v| v.parse().ok())
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    let n: usize = env("KILLS").unwrap_or(10);
    let seed: u64 = env("KILL_SEED").unwrap_or(1);
    let server = pg::Pg::get();
    let dir = std::env::temp_dir().join(format!("forager-kills-{}", std::process::id()));
    let r = kills::run(&server.url, n, seed, &dir);
    println!("kills: seed {seed}");
    print!("{r}");
    println!(
        "sound (nothing lost, nothing twice, nothing left): {}",
        r.sound()
    );
    let _ = std::fs::remove_dir_all(&dir);
}
