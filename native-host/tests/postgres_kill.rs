//! Crash safety of a shared crawl on PostgreSQL (issue #26; `FORAGER_TEST_PG`, see
//! scripts/pg-cluster.sh): `forager crawl` and three `forager worker`s crawl a small generated
//! web served with latency; random processes are SIGKILLed (each replaced by a new worker),
//! then all end by themselves: every page fetched is recorded once, the fetched set is the
//! one-process crawl's, the frontier is empty, no host is held and no URL is in flight. The
//! scenario is `benches/common/kills.rs`; `cargo bench --bench kills` runs it with ten kills.
//! `FORAGER_KILLS` sets the number of kills (3), `FORAGER_KILL_SEED` the random seed.

#[path = "../benches/common/kills.rs"]
mod kills;
#[path = "../benches/common/synth_model.rs"]
mod synth_model;

/// A number from the environment.
fn env<T: std::str::FromStr>(k: &str) -> Option<T> {
    std::env::var(k).ok().and_then(|v| v.parse().ok())
}

#[test]
fn sigkilled_workers_lose_nothing_and_the_crawl_finishes_as_one_process_would() {
    let Some(server) = forager::store::postgres::testing::server() else {
        return;
    };
    let n: usize = env("FORAGER_KILLS").unwrap_or(3);
    let seed: u64 = env("FORAGER_KILL_SEED").unwrap_or_else(|| u64::from(std::process::id()));
    eprintln!("kills {n}, seed {seed} (FORAGER_KILL_SEED repeats the run)");
    let dir = std::env::temp_dir().join(format!("forager-test-kill-{}", std::process::id()));
    let r = kills::run(&server, n, seed, &dir);
    eprintln!("{r}");
    assert_eq!(r.kills.len(), n, "the crawl ended before every kill:\n{r}");
    assert!(
        r.kills.iter().any(|k| k.held.0 > 0),
        "no victim held a host:\n{r}"
    );
    assert!(r.one_process > 500, "a small web, crawled whole:\n{r}");
    assert!(r.failed.is_empty(), "{:?}\n{r}", r.failed);
    assert_eq!(r.recorded_twice, 0, "a page recorded twice:\n{r}");
    assert_eq!(
        r.left,
        (0, 0, 0),
        "work left (frontier, leased hosts, in flight):\n{r}"
    );
    assert!(
        r.missing.is_empty() && r.extra.is_empty(),
        "not fetched {:?}; fetched only here {:?}\n{r}",
        &r.missing[..r.missing.len().min(10)],
        &r.extra[..r.extra.len().min(10)]
    );
    assert!(r.trapped >= kills::HOST_CAP, "{r}");
    assert!(r.sound());
    let _ = std::fs::remove_dir_all(&dir);
}
