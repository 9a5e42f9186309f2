//! The topic taxonomy: a tree of topics with "good" marks (focused-crawling-1999 §2.3).
//!
//! Goodness is inherited: a topic is effectively good when it or an ancestor is marked good.
//! Relevance sums over the *maximal* good topics only, so a good subtree counts once.

use crate::error::{Error, Result};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Identifier of a topic; stable across renames and moves (the paper's `kcid`).
pub type TopicId = u32;

/// The root topic's id; the root always exists and cannot be moved, renamed or deleted.
pub const ROOT: TopicId = 0;

/// Id of the background pseudo-topic, "the rest of the web": a child of the root that is no
/// topic of the taxonomy, learned from pages about none of them (see `crate::background`).
pub const BACKGROUND: TopicId = TopicId::MAX;

/// Path shown for the background pseudo-topic.
pub const BACKGROUND_PATH: &str = "(none of your topics)";

/// One node of the taxonomy.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Topic {
    /// This topic's id.
    pub id: TopicId,
    /// Parent id; the root is its own parent.
    pub parent: TopicId,
    /// Path segment, unique among siblings (e.g. `Networking`).
    pub name: String,
    /// Human title shown in user interfaces (e.g. `Computer networking`).
    pub title: String,
    /// Marked good by the user.
    pub good: bool,
}

/// A tree of topics addressed by id or by path (`/Computing/Networking`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Taxonomy {
    topics: BTreeMap<TopicId, Topic>,
    next_id: TopicId,
}

impl Default for Taxonomy {
    fn default() -> Self {
        Self::new("Topics")
    }
}

/// Most topics an edit may leave (the whole taxonomy must fit in one reply to the browser).
pub const MAX_TOPICS: usize = 500;
/// Longest topic path an edit may leave, in bytes.
pub const MAX_PATH_BYTES: usize = 512;

fn check_name(name: &str) -> Result<()> {
    if name.is_empty() || name.contains('/') || name.len() > 200 {
        return Err(Error::InvalidEdit(format!(
            "topic name {name:?} must be 1-200 bytes without '/'"
        )));
    }
    Ok(())
}

impl Taxonomy {
    /// A taxonomy holding only the root, titled `title`.
    pub fn new(title: &str) -> Self {
        let mut topics = BTreeMap::new();
        topics.insert(
            ROOT,
            Topic {
                id: ROOT,
                parent: ROOT,
                name: String::new(),
                title: title.to_owned(),
                good: false,
            },
        );
        Taxonomy { topics, next_id: 1 }
    }

    /// Rebuilds a taxonomy from stored topics, checking that they form one tree under [`ROOT`].
    pub fn from_topics(list: Vec<Topic>) -> Result<Self> {
        let bad = |m: String| Error::BadModel(m);
        let mut topics = BTreeMap::new();
        for t in list {
            let id = t.id;
            if topics.insert(id, t).is_some() {
                return Err(bad(format!("duplicate topic id {id}")));
            }
        }
        match topics.get(&ROOT) {
            Some(r) if r.parent == ROOT => {}
            _ => return Err(bad("missing root topic".into())),
        }
        let next_id = topics.keys().next_back().map_or(1, |k| k.saturating_add(1));
        let tax = Taxonomy { topics, next_id };
        for t in tax.topics.values() {
            if t.id != ROOT {
                if !tax.topics.contains_key(&t.parent) {
                    return Err(bad(format!(
                        "topic {} has missing parent {}",
                        t.id, t.parent
                    )));
                }
                check_name(&t.name).map_err(|e| bad(e.to_string()))?;
            }
            // Walking up must reach the root within |topics| steps, or there is a cycle.
            let mut cur = t.id;
            let mut steps = 0usize;
            while cur != ROOT {
                cur = tax.topics[&cur].parent;
                steps += 1;
                if steps > tax.topics.len() {
                    return Err(bad(format!("cycle through topic {}", t.id)));
                }
            }
        }
        let mut seen = std::collections::HashSet::new();
        for t in tax.topics.values().filter(|t| t.id != ROOT) {
            if !seen.insert((t.parent, t.name.as_str())) {
                return Err(bad(format!("duplicate sibling name {:?}", t.name)));
            }
        }
        Ok(tax)
    }

    /// All topics in id order (the root first).
    pub fn topics(&self) -> impl Iterator<Item = &Topic> {
        self.topics.values()
    }

    /// Number of topics, the root included.
    pub fn len(&self) -> usize {
        self.topics.len()
    }

    /// Always false: the root exists. Present for API symmetry with `len`.
    pub fn is_empty(&self) -> bool {
        self.topics.is_empty()
    }

    /// The topic with this id.
    pub fn get(&self, id: TopicId) -> Result<&Topic> {
        self.topics
            .get(&id)
            .ok_or_else(|| Error::NoSuchTopic(id.to_string()))
    }

    /// True when `id` names a topic.
    pub fn contains(&self, id: TopicId) -> bool {
        self.topics.contains_key(&id)
    }

    /// Children of `id` in id order.
    pub fn children(&self, id: TopicId) -> Vec<TopicId> {
        self.topics
            .values()
            .filter(|t| t.parent == id && t.id != ROOT)
            .map(|t| t.id)
            .collect()
    }

    /// Children lists of every topic at once, indexed like [`Taxonomy::topics`] keys.
    pub fn children_map(&self) -> BTreeMap<TopicId, Vec<TopicId>> {
        let mut map: BTreeMap<TopicId, Vec<TopicId>> =
            self.topics.keys().map(|&k| (k, Vec::new())).collect();
        for t in self.topics.values().filter(|t| t.id != ROOT) {
            if let Some(v) = map.get_mut(&t.parent) {
                v.push(t.id);
            }
        }
        map
    }

    /// True when `id` has no children.
    pub fn is_leaf(&self, id: TopicId) -> bool {
        !self.topics.values().any(|t| t.parent == id && t.id != ROOT)
    }

    /// Ids from the root down to `id`, both included.
    pub fn ancestry(&self, id: TopicId) -> Result<Vec<TopicId>> {
        self.get(id)?;
        let mut out = vec![id];
        let mut cur = id;
        while cur != ROOT {
            cur = self.topics[&cur].parent;
            out.push(cur);
        }
        out.reverse();
        Ok(out)
    }

    /// True when `anc` is `id` or one of its ancestors.
    pub fn is_ancestor_or_self(&self, anc: TopicId, id: TopicId) -> bool {
        self.ancestry(id).map(|a| a.contains(&anc)).unwrap_or(false)
    }

    /// The topic's path, `/` for the root, `/A/B` below it.
    pub fn path(&self, id: TopicId) -> Result<String> {
        let anc = self.ancestry(id)?;
        if anc.len() == 1 {
            return Ok("/".into());
        }
        let mut s = String::new();
        for a in &anc[1..] {
            s.push('/');
            s.push_str(&self.topics[a].name);
        }
        Ok(s)
    }

    /// The topic at `path` (`/` is the root; a trailing slash is ignored).
    pub fn find(&self, path: &str) -> Result<TopicId> {
        let mut cur = ROOT;
        for seg in path.split('/').filter(|s| !s.is_empty()) {
            cur = self
                .topics
                .values()
                .find(|t| t.parent == cur && t.id != ROOT && t.name == seg)
                .map(|t| t.id)
                .ok_or_else(|| Error::NoSuchTopic(path.to_owned()))?;
        }
        Ok(cur)
    }

    /// Applies an edit only if the taxonomy stays within [`MAX_TOPICS`] and
    /// [`MAX_PATH_BYTES`], so that nothing is applied that cannot be shown.
    fn within_limits<T>(&mut self, edit: impl FnOnce(&mut Taxonomy) -> Result<T>) -> Result<T> {
        let mut next = self.clone();
        let r = edit(&mut next)?;
        if next.topics.len() > MAX_TOPICS + 1 && next.topics.len() > self.topics.len() {
            return Err(Error::InvalidEdit(format!(
                "a taxonomy holds at most {MAX_TOPICS} topics"
            )));
        }
        let longest = |t: &Taxonomy| {
            t.topics
                .keys()
                .filter_map(|&id| t.path(id).ok())
                .map(|p| p.len())
                .max()
                .unwrap_or(0)
        };
        let after = longest(&next);
        if after > MAX_PATH_BYTES && after > longest(self) {
            return Err(Error::InvalidEdit(format!(
                "topic paths may be at most {MAX_PATH_BYTES} bytes (this edit makes one {after})"
            )));
        }
        *self = next;
        Ok(r)
    }

    /// Adds a topic under `parent` and returns its id.
    pub fn add(&mut self, parent: TopicId, name: &str, title: &str) -> Result<TopicId> {
        self.within_limits(|t| t.add_unchecked(parent, name, title))
    }

    fn add_unchecked(&mut self, parent: TopicId, name: &str, title: &str) -> Result<TopicId> {
        check_name(name)?;
        self.get(parent)?;
        self.refuse_clash(parent, name, None)?;
        let id = self.next_id;
        self.next_id = self
            .next_id
            .checked_add(1)
            .ok_or_else(|| Error::InvalidEdit("topic ids exhausted".into()))?;
        let title = if title.is_empty() { name } else { title };
        self.topics.insert(
            id,
            Topic {
                id,
                parent,
                name: name.to_owned(),
                title: title.to_owned(),
                good: false,
            },
        );
        Ok(id)
    }

    /// Adds the topic at `path` and any missing ancestors; returns its id.
    pub fn ensure_path(&mut self, path: &str, title: &str) -> Result<TopicId> {
        let segs: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
        let mut cur = ROOT;
        for (i, seg) in segs.iter().enumerate() {
            cur = match self.find_child(cur, seg) {
                Some(id) => id,
                None => {
                    let t = if i + 1 == segs.len() { title } else { seg };
                    self.add(cur, seg, t)?
                }
            };
        }
        if cur == ROOT && !title.is_empty() {
            if let Some(r) = self.topics.get_mut(&ROOT) {
                r.title = title.to_owned();
            }
        }
        Ok(cur)
    }

    /// Refuses `name` under `parent` when a sibling other than `except` has it, or the same
    /// name in other letter case ("networking" beside "Networking" is a mistake, not a topic).
    fn refuse_clash(&self, parent: TopicId, name: &str, except: Option<TopicId>) -> Result<()> {
        let lower = name.to_lowercase();
        let clash = (self.topics.values()).find(|t| {
            t.parent == parent
                && t.id != ROOT
                && Some(t.id) != except
                && t.name.to_lowercase() == lower
        });
        match clash {
            Some(t) if t.name == name => {
                Err(Error::InvalidEdit(format!("{name:?} already exists there")))
            }
            Some(t) => Err(Error::InvalidEdit(format!(
                "{name:?} is {:?} in other letters, which exists there",
                t.name
            ))),
            None => Ok(()),
        }
    }

    fn find_child(&self, parent: TopicId, name: &str) -> Option<TopicId> {
        self.topics
            .values()
            .find(|t| t.parent == parent && t.id != ROOT && t.name == name)
            .map(|t| t.id)
    }

    /// Renames a topic (its path segment) and sets its title.
    pub fn rename(&mut self, id: TopicId, name: &str, title: &str) -> Result<()> {
        self.within_limits(|t| t.rename_unchecked(id, name, title))
    }

    fn rename_unchecked(&mut self, id: TopicId, name: &str, title: &str) -> Result<()> {
        if id == ROOT {
            return Err(Error::InvalidEdit("the root cannot be renamed".into()));
        }
        check_name(name)?;
        let parent = self.get(id)?.parent;
        self.refuse_clash(parent, name, Some(id))?;
        let t = self
            .topics
            .get_mut(&id)
            .ok_or_else(|| Error::NoSuchTopic(id.to_string()))?;
        t.name = name.to_owned();
        t.title = if title.is_empty() { name } else { title }.to_owned();
        Ok(())
    }

    /// Moves a topic (with its subtree) under a new parent.
    pub fn move_to(&mut self, id: TopicId, new_parent: TopicId) -> Result<()> {
        self.within_limits(|t| t.move_unchecked(id, new_parent))
    }

    fn move_unchecked(&mut self, id: TopicId, new_parent: TopicId) -> Result<()> {
        if id == ROOT {
            return Err(Error::InvalidEdit("the root cannot be moved".into()));
        }
        self.get(new_parent)?;
        if self.is_ancestor_or_self(id, new_parent) {
            return Err(Error::InvalidEdit(
                "a topic cannot move under itself or its own subtree".into(),
            ));
        }
        let name = self.get(id)?.name.clone();
        self.refuse_clash(new_parent, &name, Some(id))?;
        if let Some(t) = self.topics.get_mut(&id) {
            t.parent = new_parent;
        }
        Ok(())
    }

    /// Deletes a topic and its subtree; returns the deleted ids.
    pub fn delete(&mut self, id: TopicId) -> Result<Vec<TopicId>> {
        if id == ROOT {
            return Err(Error::InvalidEdit("the root cannot be deleted".into()));
        }
        self.get(id)?;
        let doomed: Vec<TopicId> = self
            .topics
            .keys()
            .copied()
            .filter(|&t| self.is_ancestor_or_self(id, t))
            .collect();
        for t in &doomed {
            self.topics.remove(t);
        }
        Ok(doomed)
    }

    /// Marks or unmarks a topic as good.
    pub fn set_good(&mut self, id: TopicId, good: bool) -> Result<()> {
        let t = self
            .topics
            .get_mut(&id)
            .ok_or_else(|| Error::NoSuchTopic(id.to_string()))?;
        t.good = good;
        Ok(())
    }

    /// Unmarks every topic.
    pub fn clear_good(&mut self) {
        for t in self.topics.values_mut() {
            t.good = false;
        }
    }

    /// True when the topic or one of its ancestors is marked good.
    pub fn is_effectively_good(&self, id: TopicId) -> bool {
        self.ancestry(id)
            .map(|a| a.iter().any(|x| self.topics[x].good))
            .unwrap_or(false)
    }

    /// Good topics with no good proper ancestor: the terms of the relevance sum.
    pub fn maximal_good(&self) -> Vec<TopicId> {
        self.topics
            .values()
            .filter(|t| t.good)
            .filter(|t| {
                self.ancestry(t.id)
                    .map(|a| a[..a.len() - 1].iter().all(|x| !self.topics[x].good))
                    .unwrap_or(false)
            })
            .map(|t| t.id)
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Taxonomy {
        let mut t = Taxonomy::new("root");
        t.ensure_path("/A/A1", "a one").unwrap();
        t.ensure_path("/A/A2", "").unwrap();
        t.ensure_path("/B", "").unwrap();
        t
    }

    #[test]
    fn paths_round_trip() {
        let t = sample();
        for topic in t.topics() {
            let p = t.path(topic.id).unwrap();
            assert_eq!(t.find(&p).unwrap(), topic.id, "{p}");
        }
        assert_eq!(t.get(t.find("/A/A1").unwrap()).unwrap().title, "a one");
    }

    #[test]
    fn edits_keep_a_tree() {
        let mut t = sample();
        let a = t.find("/A").unwrap();
        let a1 = t.find("/A/A1").unwrap();
        let b = t.find("/B").unwrap();
        assert!(t.move_to(a, a1).is_err(), "cycle refused");
        t.move_to(a1, b).unwrap();
        assert_eq!(t.path(a1).unwrap(), "/B/A1");
        t.rename(b, "Bee", "").unwrap();
        assert_eq!(t.find("/Bee/A1").unwrap(), a1);
        assert!(t.rename(b, "A", "").is_err(), "duplicate sibling refused");
        let gone = t.delete(b).unwrap();
        assert_eq!(gone.len(), 2);
        assert!(t.find("/Bee/A1").is_err());
        assert!(Taxonomy::from_topics(t.topics().cloned().collect()).is_ok());
    }

    #[test]
    fn a_sibling_name_in_other_letter_case_is_refused() {
        let mut t = sample();
        let before: Vec<Topic> = t.topics().cloned().collect();
        let e = t.add(ROOT, "a", "").unwrap_err().to_string();
        assert!(e.contains("\"A\" in other letters"), "{e}");
        let b = t.find("/B").unwrap();
        assert!(t.rename(b, "a", "").is_err());
        let a = t.find("/A").unwrap();
        let a1 = t.find("/A/A1").unwrap();
        t.rename(a1, "x", "").unwrap();
        t.rename(a1, "X", "").unwrap();
        t.rename(a1, "A1", "").unwrap();
        assert_eq!(
            t.path(a1).unwrap(),
            "/A/A1",
            "a topic may change its own letter case"
        );
        let other = t.add(b, "a1", "").unwrap();
        assert!(t.move_to(other, a).is_err(), "moving next to /A/A1 refused");
        t.delete(other).unwrap();
        let after: Vec<Topic> = t.topics().cloned().collect();
        assert_eq!(before.len(), after.len());
    }

    #[test]
    fn goodness_is_inherited_and_counted_once() {
        let mut t = sample();
        let a = t.find("/A").unwrap();
        let a1 = t.find("/A/A1").unwrap();
        t.set_good(a, true).unwrap();
        t.set_good(a1, true).unwrap();
        assert!(t.is_effectively_good(t.find("/A/A2").unwrap()));
        assert!(!t.is_effectively_good(t.find("/B").unwrap()));
        assert_eq!(t.maximal_good(), vec![a]);
    }

    #[test]
    fn from_topics_rejects_cycles() {
        let mut list: Vec<Topic> = sample().topics().cloned().collect();
        list[1].parent = 2; // A under A1, A1 under A
        assert!(Taxonomy::from_topics(list).is_err());
    }

    #[test]
    fn edits_past_the_size_limits_are_refused_and_change_nothing() {
        let mut t = Taxonomy::new("root");
        for i in 0..MAX_TOPICS {
            t.add(ROOT, &format!("t{i}"), "").unwrap();
        }
        let before = t.topics().count();
        let e = t.add(ROOT, "one-too-many", "").unwrap_err();
        assert!(e.to_string().contains("at most"), "{e}");
        assert_eq!(t.topics().count(), before);
        // A chain of long names: the edit that makes a path too long is refused whole.
        let mut t = Taxonomy::new("root");
        let name = "n".repeat(200);
        let top = t.add(ROOT, &name, "").unwrap();
        let parent = t.add(top, &name, "").unwrap();
        assert!(t.add(parent, &name, "").is_err());
        let short = t.add(ROOT, "short", "").unwrap();
        assert!(t.move_to(top, short).is_ok(), "under the limit still moves");
        let deep = t.find(&format!("/short/{name}/{name}")).unwrap();
        assert!(t.rename(short, &"s".repeat(200), "").is_err());
        assert_eq!(t.path(deep).unwrap(), format!("/short/{name}/{name}"));
    }
}
