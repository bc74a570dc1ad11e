//! Secondary indexes kept from a watch, next to kube's reflector store (issue 17).
//!
//! kube's store finds an object by namespace and name only; a question such as "the children of this owner" or "the
//! services claiming this hostname" would walk every cached object, on every reconcile: quadratic work across a
//! fleet. A [`WatchIndex`] answers it from the same watch events, applied right after the store took them, and, like
//! the store, serves its last complete state while a relist runs and swaps the new one in when the list is done.

use kube::runtime::watcher::Event;

/// What an index does with the objects of a watch.
pub trait Indexer<K> {
    /// A new, empty index with the same settings (what a relist fills).
    fn empty(&self) -> Self;
    /// Records `object`, created or changed (replacing what it recorded of it before).
    fn upsert(&mut self, object: &K);
    /// Forgets `object` (deleted).
    fn remove(&mut self, object: &K);
}

/// An index `I` kept from one watch's events ([`WatchIndex::observe`]); usable once that watch's first list is in.
#[derive(Debug)]
pub struct WatchIndex<I> {
    live: I,
    ready: bool,
    relist: Option<I>,
}

impl<I> WatchIndex<I> {
    /// An index that is not ready until the watch has listed: `empty` is what it starts from.
    pub fn new(empty: I) -> Self {
        Self {
            live: empty,
            ready: false,
            relist: None,
        }
    }

    /// Applies one watch event: changes and deletions to the live index; a list (`Init`, `InitApply`s, `InitDone`)
    /// into a new index that replaces the live one when complete.
    pub fn observe<K>(&mut self, event: &Event<K>)
    where
        I: Indexer<K>,
    {
        match event {
            Event::Apply(object) => self.live.upsert(object),
            Event::Delete(object) => self.live.remove(object),
            Event::Init => self.relist = Some(self.live.empty()),
            Event::InitApply(object) => {
                if let Some(relist) = self.relist.as_mut() {
                    relist.upsert(object);
                }
            }
            Event::InitDone => {
                if let Some(relist) = self.relist.take() {
                    self.live = relist;
                    self.ready = true;
                }
            }
        }
    }

    /// The index, once the watch's first list is in (`None` before: the caller falls back to the whole store).
    pub fn get(&self) -> Option<&I> {
        self.ready.then_some(&self.live)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    /// Indexes the even numbers of the watch.
    #[derive(Debug, Default, PartialEq)]
    struct Evens(BTreeSet<u32>);

    impl Indexer<u32> for Evens {
        fn empty(&self) -> Self {
            Evens::default()
        }
        fn upsert(&mut self, n: &u32) {
            if n.is_multiple_of(2) {
                self.0.insert(*n);
            }
        }
        fn remove(&mut self, n: &u32) {
            self.0.remove(n);
        }
    }

    fn evens(list: &[u32]) -> Evens {
        Evens(list.iter().copied().collect())
    }

    #[test]
    fn ready_after_the_first_list_and_the_last_complete_list_serves_while_a_relist_runs() {
        let mut index = WatchIndex::new(Evens::default());
        index.observe(&Event::Init);
        index.observe(&Event::InitApply(2));
        index.observe(&Event::InitApply(3));
        assert_eq!(index.get(), None, "listing");
        index.observe(&Event::InitDone);
        assert_eq!(index.get(), Some(&evens(&[2])));

        index.observe(&Event::Apply(4));
        index.observe(&Event::Delete(2));
        assert_eq!(index.get(), Some(&evens(&[4])));

        // A relist (after a watch error): the complete index serves until the new list is done, then replaces it.
        index.observe(&Event::Init);
        index.observe(&Event::InitApply(6));
        assert_eq!(index.get(), Some(&evens(&[4])));
        index.observe(&Event::InitDone);
        assert_eq!(index.get(), Some(&evens(&[6])));
    }
}
