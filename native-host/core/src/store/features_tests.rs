//! The link features' codec: exact lists back, smaller blobs, old databases migrated.

use super::*;
use crate::store::{remove_db, temp_db, DocStatus, NewUrl, Outcome, Reader, Store};

/// Feature lists as a crawl makes them: values from a small vocabulary (so they recur), in
/// no order, with repeats, of 0 to 90 features; `seed` varies them.
fn lists(n: usize, seed: u64) -> Vec<Vec<u32>> {
    let mut x = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    (0..n)
        .map(|_| {
            let len = (next() % 91) as usize;
            (0..len)
                .map(|_| crate::store::fnv64(&(next() % 3000).to_string()) as u32)
                .collect()
        })
        .collect()
}

#[test]
fn lists_come_back_exactly_in_order_with_repeats_and_smaller() {
    let mut d = FeatureDict::with_capacity(CAPACITY);
    let mut added = Vec::new();
    let all = lists(400, 1);
    let (mut raw_bytes, mut bytes) = (0, 0);
    for f in &all {
        let b = d.encode(f, &mut added);
        assert_eq!(d.decode(&b).as_ref(), Some(f), "{b:?}");
        assert!(
            f.is_empty() || !b.len().is_multiple_of(4),
            "looks like the four-byte form"
        );
        raw_bytes += raw::encode(f).len();
        bytes += b.len();
    }
    // Every value was given one id, in order of first use.
    assert_eq!(added.len(), d.len());
    assert!(added.iter().enumerate().all(|(i, a)| a.0 as usize == i));
    assert!(d.len() <= 3000);
    assert!(bytes * 2 < raw_bytes, "{bytes} B against {raw_bytes} B");
    // The four-byte form still reads (a database before the dictionary, a copied blob).
    let f = &all[3];
    assert_eq!(d.decode(&raw::encode(f)).as_ref(), Some(f));
}

#[test]
fn a_full_dictionary_stores_new_values_as_they_are() {
    let mut d = FeatureDict::with_capacity(2);
    let mut added = Vec::new();
    let f = vec![7, 8, 9, 7, u32::MAX, 0, 8];
    let b = d.encode(&f, &mut added);
    assert_eq!(added, vec![(0, 7), (1, 8)]);
    assert_eq!(d.decode(&b), Some(f));
}

#[test]
fn a_damaged_list_decodes_to_nothing_never_to_a_wrong_list() {
    let mut d = FeatureDict::with_capacity(CAPACITY);
    let b = d.encode(&[5, 6, 7], &mut Vec::new());
    assert_eq!(d.decode(&b), Some(vec![5, 6, 7]));
    // An id the dictionary does not hold (another file's), a cut value, a bad header.
    let other = FeatureDict::with_capacity(CAPACITY);
    assert_eq!(other.decode(&b), None);
    assert_eq!(d.decode(&[0, 0, 1, 2, 3, 4, 5]), None);
    assert_eq!(d.decode(&[0, 0x80]), None);
    assert_eq!(d.decode(&[7, 1]), None);
    assert_eq!(d.decode(&[]), Some(vec![]));
}

#[test]
fn values_of_an_undone_transaction_are_forgotten() {
    let mut conn = Connection::open_in_memory().unwrap();
    conn.execute_batch(crate::store::SCHEMA).unwrap();
    let mut d = FeatureDict::load(&conn).unwrap();
    {
        let tx = conn.transaction().unwrap();
        let mut added = Vec::new();
        d.encode(&[1, 2], &mut added);
        store_added(&tx, &added).unwrap();
        tx.commit().unwrap();
    }
    {
        let tx = conn.transaction().unwrap();
        let mut added = Vec::new();
        d.encode(&[3, 4], &mut added);
        store_added(&tx, &added).unwrap();
        // dropped: rolled back
    }
    assert_eq!(d.len(), 4);
    d.sync(&conn).unwrap();
    assert_eq!(d.len(), 2);
    let mut added = Vec::new();
    let b = d.encode(&[4, 1], &mut added);
    assert_eq!(added, vec![(2, 4)]);
    store_added(&conn, &added).unwrap();
    let again = FeatureDict::load(&conn).unwrap();
    assert_eq!(again.decode(&b), Some(vec![4, 1]));
}

/// (features, target's R) pairs.
type Evidence = Vec<(Vec<u32>, f64)>;

fn seed(u: &str) -> NewUrl {
    NewUrl::seed(&url::Url::parse(u).unwrap())
}

/// Crawls pages whose links carry `lists(.., seed)`, reopening the store between batches (the
/// dictionary is read back), then fetches every link's target; returns the evidence the
/// apprentice was given as the crawl went and the links' features as given.
fn crawl(path: &std::path::Path, seed_no: u64) -> (Evidence, Vec<Vec<u32>>) {
    let mut given = Vec::new();
    let mut taught = Vec::new();
    for round in 0..3u64 {
        let mut st = Store::open(path).unwrap();
        st.add_seeds(&[seed(&format!("http://s{round}.test/"))])
            .unwrap();
        let w = st.checkout(1).unwrap();
        let features = lists(40, seed_no * 10 + round);
        let links = (features.iter().enumerate())
            .map(|(i, f)| NewUrl {
                via: Some((w[0].oid, format!("l{i}"))),
                features: Some(f.clone()),
                score: 0.1,
                ..seed(&format!("http://t.test/{round}/{i}"))
            })
            .collect();
        given.extend(features);
        let page = Outcome {
            oid: w[0].oid,
            status: DocStatus::Fetched,
            relevance: 0.5,
            links,
            ..Outcome::default()
        };
        taught.extend(st.record(&[page]).unwrap().instances);
    }
    let mut st = Store::open(path).unwrap();
    loop {
        let w = st.checkout(16).unwrap();
        if w.is_empty() {
            break;
        }
        let batch: Vec<Outcome> = (w.iter())
            .map(|w| Outcome {
                oid: w.oid,
                status: DocStatus::Fetched,
                relevance: (w.oid.raw() % 10) as f64 / 10.0,
                ..Outcome::default()
            })
            .collect();
        taught.extend(st.record(&batch).unwrap().instances);
    }
    (taught, given)
}

fn sorted(mut v: Vec<Vec<u32>>) -> Vec<Vec<u32>> {
    v.sort();
    v
}

/// The apprentice learns from the stored lists exactly what it was given: the same lists as
/// the crawl went and from the file (a resumed crawl), so the same counts and scores.
#[test]
fn the_apprentice_learns_the_same_counts_from_the_stored_features() {
    let path = temp_db("feat", "same");
    let (taught, given) = crawl(&path, 1);
    let stored = Store::open(&path).unwrap().apprentice_evidence().unwrap();
    let lists = |e: &[(Vec<u32>, f64)]| sorted(e.iter().map(|x| x.0.clone()).collect());
    assert_eq!(lists(&taught), sorted(given.clone()));
    assert_eq!(lists(&stored), sorted(given.clone()));
    let mut a = taught.clone();
    let mut b = stored.clone();
    a.sort_by(|x, y| x.partial_cmp(y).unwrap());
    b.sort_by(|x, y| x.partial_cmp(y).unwrap());
    assert_eq!(a, b);
    let (ta, tb) = (
        crate::crawl::policy::trained_apprentice(a),
        crate::crawl::policy::trained_apprentice(b),
    );
    assert_eq!(ta.instances(), tb.instances());
    for f in &given {
        assert_eq!(ta.p_high(f).to_bits(), tb.p_high(f).to_bits());
    }
    // And the blobs are the dictionary's, about a third of the four-byte form.
    let conn = Store::open_read_only(&path).unwrap();
    let (bytes, raw_bytes): (i64, i64) = conn
        .query_row(
            "SELECT sum(length(features)), (SELECT count(*) FROM feature) FROM link",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    let four: usize = given.iter().map(|f| 4 * f.len()).sum();
    assert!(bytes * 2 < four as i64, "{bytes} B against {four} B");
    assert!(raw_bytes > 0);
    drop(conn);
    remove_db(&path);
}

/// A database written before the dictionary (four-byte lists, schema 3) is migrated when
/// opened for writing, losing nothing; a read-only reader reads it before and after.
#[test]
fn a_database_of_four_byte_features_moves_to_the_dictionary_losing_nothing() {
    let path = temp_db("feat", "old");
    let (_, given) = crawl(&path, 2);
    {
        // Back to the old form, as main wrote it.
        let conn = Connection::open(&path).unwrap();
        let rows: Vec<(i64, i64, Vec<u8>)> = {
            let dict = FeatureDict::load(&conn).unwrap();
            let mut st = conn
                .prepare("SELECT oid_src, oid_dst, features FROM link")
                .unwrap();
            let rows = st
                .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get::<_, Vec<u8>>(2)?)))
                .unwrap();
            rows.map(|r| r.unwrap())
                .map(|(s, d, b)| (s, d, raw::encode(&dict.decode(&b).unwrap())))
                .collect()
        };
        for (s, d, b) in rows {
            conn.execute(
                "UPDATE link SET features = ?3 WHERE oid_src = ?1 AND oid_dst = ?2",
                rusqlite::params![s, d, b],
            )
            .unwrap();
        }
        conn.execute_batch("DROP TABLE feature; UPDATE meta SET value = 3 WHERE key = 'schema'")
            .unwrap();
    }
    let evidence = |p: &std::path::Path| {
        let ro = crate::store::ReadOnly::open(p).unwrap();
        let e = ro.read().apprentice_evidence().unwrap();
        sorted(e.into_iter().map(|x| x.0).collect())
    };
    assert_eq!(evidence(&path), sorted(given.clone()), "read before");
    assert!(Store::upgrade(&path).unwrap());
    assert!(!Store::upgrade(&path).unwrap(), "migrated once");
    assert_eq!(evidence(&path), sorted(given.clone()), "read after");
    let conn = Store::open_read_only(&path).unwrap();
    let (odd, schema): (i64, i64) = conn
        .query_row(
            "SELECT (SELECT count(*) FROM link WHERE length(features) % 4 <> 0),
                    (SELECT value FROM meta WHERE key = 'schema')",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    let nonempty = given.iter().filter(|f| !f.is_empty()).count() as i64;
    assert_eq!((odd, schema), (nonempty, SINCE_SCHEMA));
    drop(conn);
    remove_db(&path);
}

/// A crawl of one page whose 30 links carry features; returns the lists.
fn one_page(path: &std::path::Path) -> Vec<Vec<u32>> {
    let mut st = Store::open(path).unwrap();
    st.add_seeds(&[seed("http://a.test/")]).unwrap();
    let w = st.checkout(1).unwrap();
    let features = lists(30, 7);
    let links = (features.iter().enumerate())
        .map(|(i, f)| NewUrl {
            via: Some((w[0].oid, format!("l{i}"))),
            features: Some(f.clone()),
            ..seed(&format!("http://b.test/{i}"))
        })
        .collect();
    let page = Outcome {
        oid: w[0].oid,
        status: DocStatus::Fetched,
        relevance: 0.5,
        links,
        ..Outcome::default()
    };
    st.record(&[page]).unwrap();
    features
}

/// The links' features as a door reads them, sorted.
fn in_links(db: &dyn crate::store::CrawlDb) -> Vec<Vec<u32>> {
    let l = db.frontier_in_links(None, 100).unwrap();
    sorted(l.into_iter().map(|l| l.features.unwrap()).collect())
}

/// `forager db copy` moves features in the four-byte form and stores them through the
/// target's dictionary: the copy's links carry the same lists.
#[test]
fn a_copied_crawl_keeps_its_links_features() {
    let (a, b) = (temp_db("feat", "copy-a"), temp_db("feat", "copy-b"));
    let features = one_page(&a);
    let st = Store::open(&a).unwrap();
    let mut to = Store::open(&b).unwrap();
    crate::store::copy::copy(&st, &mut to, "b", false, &mut |_, _| {}).unwrap();
    assert_eq!(in_links(&to), sorted(features.clone()));
    drop(to);
    assert_eq!(in_links(&Store::open(&b).unwrap()), sorted(features));
    remove_db(&a);
    remove_db(&b);
}

/// Through a PostgreSQL server (four-byte lists there) and back: the same lists everywhere.
#[test]
fn a_crawl_copied_through_postgres_keeps_its_links_features() {
    use crate::store::postgres::{testing, PgStore};
    let Some(server) = testing::server() else {
        return;
    };
    let (a, c) = (temp_db("feat", "pg-a"), temp_db("feat", "pg-c"));
    let features = one_page(&a);
    let st = Store::open(&a).unwrap();
    let db = testing::TestDb::create(&server, "features");
    let mut pg = PgStore::open(db.url()).unwrap();
    crate::store::copy::copy(&st, &mut pg, "pg", false, &mut |_, _| {}).unwrap();
    assert_eq!(in_links(&pg), sorted(features.clone()));
    let mut back = Store::open(&c).unwrap();
    crate::store::copy::copy(&pg, &mut back, "c", false, &mut |_, _| {}).unwrap();
    assert_eq!(in_links(&back), sorted(features));
    remove_db(&a);
    remove_db(&c);
}

/// A second connection's dictionary, loaded before a crawl wrote more, reads the new values
/// when a list needs them.
#[test]
fn a_reader_with_an_older_dictionary_reads_the_new_values() {
    let path = temp_db("feat", "reader");
    let mut st = Store::open(&path).unwrap();
    let reader = Store::open_read_only(&path).unwrap();
    let mut dict = FeatureDict::load(&reader).unwrap();
    st.add_seeds(&[seed("http://a.test/")]).unwrap();
    let w = st.checkout(1).unwrap();
    let link = NewUrl {
        via: Some((w[0].oid, "x".into())),
        features: Some(vec![11, 12, 11]),
        ..seed("http://a.test/x")
    };
    let page = Outcome {
        oid: w[0].oid,
        status: DocStatus::Fetched,
        links: vec![link],
        ..Outcome::default()
    };
    st.record(&[page]).unwrap();
    let b: Vec<u8> = reader
        .query_row("SELECT features FROM link", [], |r| r.get(0))
        .unwrap();
    assert_eq!(dict.decode(&b), None);
    assert_eq!(dict.decode_on(&reader, &b).unwrap(), Some(vec![11, 12, 11]));
    drop((st, reader));
    remove_db(&path);
}
