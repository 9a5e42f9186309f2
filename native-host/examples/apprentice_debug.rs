//! Prints apprentice scores of the links into pages fetched in a range of fetch order:
//! `cargo run --release --example apprentice_debug -- DB FROM TO`.

use forager_classifier::apprentice::Apprentice;

fn main() {
    let a: Vec<String> = std::env::args().collect();
    let store = forager::store::Store::open(std::path::Path::new(&a[1])).expect("open");
    let mut ap = Apprentice::new();
    for (f, h) in store.all_instances().expect("instances") {
        ap.add(&f, h);
    }
    let mut st = store
        .conn()
        .prepare(
            "SELECT d.url, d.relevance, s.url, s.relevance, l.anchor, l.features FROM doc d
             JOIN link l ON l.oid_dst = d.oid JOIN doc s ON s.oid = l.oid_src
             WHERE d.fetch_seq BETWEEN ?1 AND ?2 ORDER BY d.fetch_seq",
        )
        .expect("prepare");
    let mut rows = st.query([&a[2], &a[3]]).expect("query");
    while let Some(r) = rows.next().expect("row") {
        let f = forager::store::features_from_blob(&r.get::<_, Vec<u8>>(5).unwrap_or_default());
        println!(
            "{} R={:.2} <- {} R={:.2} anchor={:?} nfeat={} p_high={:.3}",
            r.get::<_, String>(0).unwrap_or_default(),
            r.get::<_, f64>(1).unwrap_or(0.0),
            r.get::<_, String>(2).unwrap_or_default(),
            r.get::<_, f64>(3).unwrap_or(0.0),
            r.get::<_, String>(4).unwrap_or_default(),
            f.len(),
            ap.p_high(&f)
        );
    }
}
