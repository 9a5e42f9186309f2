//! The browser's crawls reuse the apprentice too (#25): the host saves what its apprentice
//! learned beside the model in its data directory, keyed by the taxonomy and the good topics,
//! and a crawl of other good topics starts a new one that replaces it. It learns on every
//! crawl, also when the user turned its guiding off.

mod common;
use common::host::{mark_astronomy_good, serve_generated_web, topic_id, until_stopped, Host};
use common::tmp;
use forager::reuse::{self, Key, Loaded};
use serde_json::json;

/// The key of the host's model as it is now on disk.
fn key(dir: &std::path::Path) -> Key {
    let bytes = std::fs::read(dir.join("model.fgm")).unwrap();
    Key::of(&forager_classifier::Model::from_bytes(&bytes).unwrap())
}

#[test]
fn the_hosts_crawls_save_their_apprentice_beside_the_model_and_reset_on_new_topics() {
    let home = tmp("native-reuse");
    let dir = home.join("host");
    let (mut server, proxy, seeds) = serve_generated_web(&home);
    let mut h = Host::start(&dir);
    h.request(json!({"id": 1, "type": "hello", "version": 1}));
    mark_astronomy_good(&mut h);
    let start = |h: &mut Host, id: u64, guide: bool| {
        let r = h.request(json!({"id": id, "type": "start_crawl", "seeds": seeds,
            "pages": 300, "proxy": proxy, "delay": 0, "apprentice": guide}));
        assert_eq!(r["ok"], true, "{r}");
        until_stopped(h);
    };
    start(&mut h, 2, true);
    let saved = dir.join(reuse::FILE_NAME);
    let astronomy = key(&dir);
    let Loaded::Reused(a) = reuse::load(&saved, astronomy) else {
        panic!("no apprentice saved for astronomy")
    };
    assert!(a.is_trained() && a.measured_trust().is_some(), "{a:?}");
    // Other good topics: the next crawl learns a new apprentice and saves it in its place,
    // guiding or not.
    let bio = topic_id(&mut h, "/Science/Biology");
    h.request(json!({"id": 3, "type": "set_good", "topic": bio, "good": true}));
    let r = h.request(json!({"id": 4, "type": "new_crawl"}));
    assert_eq!(r["ok"], true, "{r}");
    start(&mut h, 5, false);
    let both = key(&dir);
    assert_ne!(both, astronomy);
    assert!(matches!(
        reuse::load(&saved, astronomy),
        Loaded::TopicsChanged
    ));
    assert!(matches!(reuse::load(&saved, both), Loaded::Reused(_)));
    assert_eq!(h.exit_code(), 0);
    let _ = server.kill();
    let _ = server.wait();
    let _ = std::fs::remove_dir_all(&home);
}
