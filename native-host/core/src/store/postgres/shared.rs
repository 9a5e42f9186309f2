//! The shared side of a crawl on PostgreSQL ([`SharedDb`]): the model's and the apprentice's
//! versions (the number in `meta.value` beside the bytes in `meta.blob`), the job's values
//! (`meta` keys `job.*`), and the periodic job elected by a session advisory lock held on one
//! connection for the run (a worker that dies running it loses its connection, and the lock
//! with it), each run logged in `job_run`.

use super::{off_runtime, rows, PgStore};
use crate::store::{
    now, ApprenticeEvidence, DocStatus, JobRun, Result, SharedDb, StoreError, Versioned,
};
use forager_classifier::apprentice::Apprentice;
use r2d2_postgres::postgres;

/// The advisory lock key of the periodic job ("jobs").
pub(super) const JOB_LOCK: i64 = 0x6a6f_6273;

/// `meta.value` as a version number (a row written before versions counts as version 0).
const VERSION: &str = "COALESCE(value::bigint, 0)";

/// Stores `blob` under `key` with a new version when it differs from what is stored (inside
/// the caller's transaction); returns the version now stored.
pub(super) fn put_versioned(
    tx: &mut postgres::Transaction<'_>,
    key: &str,
    blob: &[u8],
) -> Result<i64> {
    tx.execute(
        "INSERT INTO meta(key, value, blob) VALUES($1, '1', $2)
         ON CONFLICT(key) DO UPDATE SET blob = excluded.blob,
           value = (COALESCE(meta.value::bigint, 0) + 1)::text
         WHERE meta.blob IS DISTINCT FROM excluded.blob",
        &[&key, &blob],
    )?;
    let row = tx.query_one(
        &format!("SELECT {VERSION} FROM meta WHERE key = $1"),
        &[&key],
    )?;
    Ok(row.get(0))
}

impl PgStore {
    /// The bytes stored under `key` when their version is not `known`.
    fn versioned_since(&self, key: &str, known: i64) -> Result<Option<Versioned<Vec<u8>>>> {
        self.with(|c| {
            let row = c.query_opt(
                &format!(
                    "SELECT {VERSION}, blob FROM meta
                     WHERE key = $1 AND blob IS NOT NULL AND {VERSION} <> $2"
                ),
                &[&key, &known],
            )?;
            Ok(row.map(|r| Versioned {
                version: r.get(0),
                value: r.get(1),
            }))
        })
    }
}

impl SharedDb for PgStore {
    fn pages_taken(&self) -> Result<(i64, i64)> {
        self.with(|c| {
            let r = c.query_one(
                "SELECT CASE WHEN is_called THEN last_value ELSE last_value - 1 END,
                   (SELECT count(*) FROM doc WHERE status = 1)
                 FROM fetch_seq",
                &[],
            )?;
            Ok((r.get(0), r.get(1)))
        })
    }

    fn model_since(&self, known: i64) -> Result<Option<Versioned<Vec<u8>>>> {
        self.versioned_since("model", known)
    }

    fn apprentice_since(&self, known: i64) -> Result<Option<Versioned<Apprentice>>> {
        let Some(v) = self.versioned_since("apprentice", known)? else {
            return Ok(None);
        };
        let mut a = Apprentice::from_bytes(&v.value)
            .map_err(|e| StoreError::Schema(format!("the shared apprentice: {e}")))?;
        if let Some(t) = (self.meta("apprentice_trust")?).and_then(|t| t.parse::<f64>().ok()) {
            a.set_trust(t);
        }
        Ok(Some(Versioned {
            version: v.version,
            value: a,
        }))
    }

    fn publish_apprentice(&mut self, apprentice: &Apprentice) -> Result<i64> {
        let bytes = apprentice.to_bytes();
        let trust = apprentice.measured_trust().map(|t| t.to_string());
        self.with(|c| {
            let mut tx = c.transaction()?;
            // The trust first: a worker reading the new bytes reads the trust they came with.
            tx.execute(
                "INSERT INTO meta(key, value) VALUES('apprentice_trust', $1)
                 ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                &[&trust],
            )?;
            let v = put_versioned(&mut tx, "apprentice", &bytes)?;
            tx.commit()?;
            Ok(v)
        })
    }

    fn job_value(&self, key: &str) -> Result<Option<String>> {
        self.meta(&format!("job.{key}"))
    }

    fn set_job_value(&mut self, key: &str, value: &str) -> Result<()> {
        self.set_meta(&format!("job.{key}"), value)
    }

    fn begin_job(&mut self, worker: &str, gap: f64) -> Result<Option<i64>> {
        if !matches!(self.job.get_mut(), Ok(None)) {
            return Ok(None); // this door runs it now
        }
        let worker = self.who(worker).to_owned();
        let run = off_runtime(|| -> Result<_> {
            let mut c = self.conn()?;
            let got: bool = c
                .query_one("SELECT pg_try_advisory_lock($1)", &[&JOB_LOCK])?
                .get(0);
            if !got {
                return Ok(None);
            }
            let at = now();
            let last: Option<f64> = c
                .query_one("SELECT max(ended_at) FROM job_run", &[])?
                .get(0);
            if last.is_some_and(|t| at - t < gap) {
                c.execute("SELECT pg_advisory_unlock($1)", &[&JOB_LOCK])?;
                return Ok(None);
            }
            let id: i64 = c
                .query_one(
                    "INSERT INTO job_run(worker, started_at) VALUES($1, $2) RETURNING id",
                    &[&worker, &at],
                )?
                .get(0);
            Ok(Some((id, c)))
        })?;
        Ok(run.map(|(id, c)| {
            *self.job.get_mut().unwrap_or_else(|p| p.into_inner()) = Some(c);
            id
        }))
    }

    fn end_job(&mut self, run: i64, did: &str) -> Result<()> {
        let job = self.job.get_mut().unwrap_or_else(|p| p.into_inner());
        let Some(mut c) = job.take() else {
            return Err(StoreError::Unsupported(
                format!("job run {run}"),
                "this door is not running the job",
            ));
        };
        off_runtime(move || -> Result<()> {
            let logged = c.execute(
                "UPDATE job_run SET ended_at = $2, did = $3 WHERE id = $1",
                &[&run, &now(), &did],
            );
            // Unlocked whatever the log did: a lock left on a pooled connection would stop
            // every worker's job for as long as the pool keeps it.
            c.execute("SELECT pg_advisory_unlock($1)", &[&JOB_LOCK])?;
            logged?;
            Ok(())
        })
    }

    fn evidence_since(&self, since: Option<&str>) -> Result<(Vec<ApprenticeEvidence>, String)> {
        self.with(|c| super::mining::evidence_since(c, since))
    }

    fn job_state(&self, key: &str) -> Result<Option<Vec<u8>>> {
        self.with(|c| {
            let row = c.query_opt("SELECT value FROM job_state WHERE key = $1", &[&key])?;
            Ok(row.map(|r| r.get(0)))
        })
    }

    fn set_job_state(&mut self, key: &str, value: &[u8]) -> Result<()> {
        self.with(|c| {
            c.execute(
                "INSERT INTO job_state(key, value) VALUES($1, $2)
                 ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                &[&key, &value],
            )?;
            Ok(())
        })
    }

    fn door_name(&self) -> String {
        self.name.clone()
    }

    fn give_back_dry_hosts(&mut self, worker: &str) -> Result<usize> {
        let worker = self.who(worker).to_owned();
        self.with(|c| {
            let mut tx = c.transaction()?;
            // Under the claims' lock: a host is never given back while being claimed.
            tx.execute(
                "SELECT pg_advisory_xact_lock($1)",
                &[&super::lease::CLAIM_LOCK],
            )?;
            let n = tx.execute(
                "UPDATE server s SET lease_owner = NULL WHERE s.lease_owner = $1
                 AND NOT EXISTS (SELECT 1 FROM doc d WHERE d.sid = s.sid AND d.status IN ($2, $3))",
                &[
                    &worker,
                    &DocStatus::Unvisited.code(),
                    &DocStatus::InFlight.code(),
                ],
            )?;
            tx.commit()?;
            Ok(rows(n))
        })
    }

    fn job_runs(&self) -> Result<Vec<JobRun>> {
        self.with(|c| {
            let rows = c.query(
                "SELECT worker, started_at, ended_at, did FROM job_run ORDER BY id",
                &[],
            )?;
            Ok(rows
                .iter()
                .map(|r| JobRun {
                    worker: r.get(0),
                    started_at: r.get(1),
                    ended_at: r.get(2),
                    did: r.get(3),
                })
                .collect())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{self, TestDb};
    use super::*;
    use crate::store::CrawlDb;
    use forager_classifier::{Model, Taxonomy, TextOptions, TrainOptions};

    fn model(good: &str) -> Model {
        let mut t = Taxonomy::new("root");
        for p in ["/A", "/B"] {
            t.ensure_path(p, p).unwrap();
        }
        let mut m = Model::new(t, TextOptions::default(), TrainOptions::default());
        m.set_good_paths(&[good.to_owned()]).unwrap();
        m
    }

    #[test]
    fn a_saved_model_gets_a_new_version_only_when_it_changed() {
        let Some(server) = testing::server() else {
            return;
        };
        let db = TestDb::create(&server, "model-version");
        let mut a = PgStore::open(db.url()).unwrap();
        let b = PgStore::open(db.url()).unwrap();
        assert_eq!(b.model_since(-1).unwrap(), None, "no model yet");
        a.save_taxonomy(&model("/A")).unwrap();
        let first = b.model_since(-1).unwrap().expect("a model");
        assert_eq!(first.value, model("/A").to_bytes());
        assert_eq!(b.model_since(first.version).unwrap(), None);
        // Saved again unchanged (a worker starting): no new version, nobody reloads.
        a.save_taxonomy(&model("/A")).unwrap();
        assert_eq!(b.model_since(first.version).unwrap(), None);
        // A good-topic change and a "not relevant" mark: each a new version.
        a.save_taxonomy(&model("/B")).unwrap();
        let second = b.model_since(first.version).unwrap().expect("changed");
        assert!(second.version > first.version);
        let mut marked = model("/B");
        marked
            .mark_not_relevant("http://x.test/", "nothing to do with it")
            .unwrap();
        a.save_taxonomy(&marked).unwrap();
        let third = b.model_since(second.version).unwrap().expect("marked");
        let got = Model::from_bytes(&third.value).unwrap();
        assert_eq!(got.not_relevant_urls(), vec!["http://x.test/".to_owned()]);
    }

    #[test]
    fn one_worker_runs_the_job_at_a_time_and_each_run_is_logged() {
        let Some(server) = testing::server() else {
            return;
        };
        let db = TestDb::create(&server, "job-lock");
        let (mut a, mut b) = (
            PgStore::open(db.url()).unwrap(),
            PgStore::open(db.url()).unwrap(),
        );
        let run = a.begin_job("a", 0.0).unwrap().expect("a is elected");
        assert_eq!(b.begin_job("b", 0.0).unwrap(), None, "a runs it");
        assert_eq!(a.begin_job("a", 0.0).unwrap(), None, "a runs it already");
        a.end_job(run, "did a").unwrap();
        let run = b.begin_job("b", 0.0).unwrap().expect("free again");
        b.end_job(run, "did b").unwrap();
        // Just ran: not again within the gap.
        assert_eq!(a.begin_job("a", 3600.0).unwrap(), None);
        // A door dropped while running lets the job go.
        let mut c = PgStore::open(db.url()).unwrap();
        assert!(c.begin_job("c", 0.0).unwrap().is_some());
        drop(c);
        let run = a
            .begin_job("a", 0.0)
            .unwrap()
            .expect("c's run ended with it");
        a.end_job(run, "did a again").unwrap();
        let runs = b.job_runs().unwrap();
        let who: Vec<_> = runs.iter().map(|r| r.worker.as_str()).collect();
        assert_eq!(who, ["a", "b", "c", "a"]);
        assert_eq!(runs[0].did.as_deref(), Some("did a"));
        assert_eq!(runs[2].ended_at, None, "c never ended its run");
        assert!(runs.windows(2).all(|w| w[0].started_at <= w[1].started_at));
    }

    #[test]
    fn a_worker_gives_back_the_hosts_that_ran_dry_and_keeps_the_others() {
        let Some(server) = testing::server() else {
            return;
        };
        let db = TestDb::create(&server, "dry-hosts");
        let mut s = PgStore::open(db.url()).unwrap();
        let seeds: Vec<_> = ["http://a.test/", "http://b.test/", "http://c.test/"]
            .iter()
            .map(|u| crate::store::NewUrl::seed(&url::Url::parse(u).unwrap()))
            .collect();
        s.add_seeds(&seeds).unwrap();
        let lease = std::time::Duration::from_secs(60);
        assert_eq!(s.checkout("w", 2, lease).unwrap().len(), 2);
        let mut held = s.held_hosts("w").unwrap();
        assert_eq!(held.len(), 2);
        let free: Vec<String> = (["a.test", "b.test", "c.test"].iter())
            .filter(|h| !held.iter().any(|x| x == *h))
            .map(|h| (*h).to_owned())
            .collect();
        // The first host's page is fetched (no links): it ran dry; the other is in flight.
        let dry = held.remove(0);
        s.with(|c| {
            let sql = "UPDATE doc SET status = 2 WHERE url = $1";
            Ok(c.execute(sql, &[&format!("http://{dry}/")])?)
        })
        .unwrap();
        assert_eq!(s.give_back_dry_hosts("w").unwrap(), 1);
        assert_eq!(s.held_hosts("w").unwrap(), held, "the host in flight stays");
        assert_eq!(s.give_back_dry_hosts("w").unwrap(), 0);
        // Another worker takes the third host; the given-back one has no work to claim.
        assert_eq!(s.claim_hosts("v", 5, lease).unwrap(), free);
    }

    #[test]
    fn evidence_since_a_read_counts_a_late_commit_once_and_nothing_twice() {
        let Some(server) = testing::server() else {
            return;
        };
        let db = TestDb::create(&server, "evidence-since");
        let mut s = PgStore::open(db.url()).unwrap();
        s.set_job_state("apprentice", b"x").unwrap();
        assert_eq!(
            s.job_state("apprentice").unwrap().as_deref(),
            Some(&b"x"[..])
        );
        let connect = || postgres::Client::connect(db.url(), postgres::NoTls).unwrap();
        let mut c = connect();
        c.batch_execute(
            "INSERT INTO server(host) VALUES('a.test');
             INSERT INTO doc(url, sid, rnd) SELECT 'http://a.test/' || i, 1, i
               FROM generate_series(1, 6) i",
        )
        .unwrap();
        // Fetched as `record` marks a page: its first fetch time set (the trigger marks it).
        let fetch = |c: &mut postgres::Client, oid: i64| {
            let sql = "UPDATE doc SET status = 2, first_fetched_at = 1 WHERE oid = $1";
            c.execute(sql, &[&oid]).unwrap();
        };
        fn link(c: &mut impl postgres::GenericClient, src: i64, dst: i64, f: u32) {
            let sql = "INSERT INTO link(oid_src, oid_dst, sid_src, sid_dst, features)
                       VALUES($1, $2, 1, 1, $3)";
            c.execute(sql, &[&src, &dst, &f.to_le_bytes().to_vec()])
                .unwrap();
        }
        for oid in [1, 2, 3] {
            fetch(&mut c, oid);
        }
        link(&mut c, 1, 2, 1);
        link(&mut c, 1, 4, 2); // into a page not fetched yet
        let got = |since: Option<&str>| {
            let (ev, mark) = s.evidence_since(since).unwrap();
            let mut f: Vec<u32> = ev.iter().map(|(f, _)| f[0]).collect();
            f.sort_unstable();
            (f, mark)
        };
        let (all, m1) = got(None);
        assert_eq!(all, [1]);
        // A worker's transaction that writes before the next read and commits after it.
        let mut late = connect();
        let mut tx = late.transaction().unwrap();
        link(&mut tx, 2, 3, 3);
        // Committed meanwhile by others: page 4 fetched (the link into it becomes evidence)
        // and a new link into a fetched page.
        fetch(&mut c, 4);
        link(&mut c, 3, 2, 4);
        let (new, m2) = got(Some(&m1));
        assert_eq!(new, [2, 4], "the late transaction is not committed yet");
        tx.commit().unwrap();
        let (new, m3) = got(Some(&m2));
        assert_eq!(
            new,
            [3],
            "committed after the read before: counted now, once"
        );
        assert_eq!(got(Some(&m3)).0, Vec::<u32>::new());
        assert_eq!(got(None).0, [1, 2, 3, 4], "the reads add up to a full read");
    }

    #[test]
    fn a_published_apprentice_reaches_other_doors_with_its_trust() {
        let Some(server) = testing::server() else {
            return;
        };
        let db = TestDb::create(&server, "apprentice");
        let (mut a, b) = (
            PgStore::open(db.url()).unwrap(),
            PgStore::open(db.url()).unwrap(),
        );
        assert!(b.apprentice_since(-1).unwrap().is_none());
        let mut ap = Apprentice::new();
        ap.add(&[1, 2], true);
        ap.add(&[3], false);
        ap.set_trust(0.25);
        let v = a.publish_apprentice(&ap).unwrap();
        let got = b.apprentice_since(-1).unwrap().expect("published");
        assert_eq!(got.version, v);
        assert_eq!(got.value.to_bytes(), ap.to_bytes());
        assert_eq!(got.value.measured_trust(), Some(0.25));
        assert!(b.apprentice_since(v).unwrap().is_none());
        ap.add(&[4], true);
        assert!(a.publish_apprentice(&ap).unwrap() > v);
        assert_eq!(b.job_value("x").unwrap(), None);
        a.set_job_value("x", "7").unwrap();
        assert_eq!(b.job_value("x").unwrap().as_deref(), Some("7"));
    }
}
