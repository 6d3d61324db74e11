//! A bounded cache of evaluations, keyed by the tool and the filled prompt (so by the query and
//! everything else the prompt says). The oldest entry goes first when it is full.

use std::collections::{HashMap, VecDeque};
use std::sync::{Mutex, PoisonError};

use serde_json::{Map, Value};

/// A cached evaluation: what the model answered.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Cached {
    pub score: u8,
    pub params: Map<String, Value>,
    pub raw: String,
}

type Key = (usize, String);

#[derive(Debug)]
pub(crate) struct EvaluationCache {
    capacity: usize,
    inner: Mutex<Inner>,
}

#[derive(Debug, Default)]
struct Inner {
    entries: HashMap<Key, Cached>,
    order: VecDeque<Key>,
}

impl EvaluationCache {
    pub(crate) fn new(capacity: usize) -> Self {
        EvaluationCache {
            capacity,
            inner: Mutex::new(Inner::default()),
        }
    }

    pub(crate) fn get(&self, tool: usize, prompt: &str) -> Option<Cached> {
        let inner = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
        inner.entries.get(&(tool, prompt.to_owned())).cloned()
    }

    pub(crate) fn insert(&self, tool: usize, prompt: String, cached: Cached) {
        if self.capacity == 0 {
            return;
        }
        let mut inner = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
        let key = (tool, prompt);
        if inner.entries.insert(key.clone(), cached).is_none() {
            inner.order.push_back(key);
        }
        while inner.entries.len() > self.capacity {
            match inner.order.pop_front() {
                Some(oldest) => {
                    inner.entries.remove(&oldest);
                }
                None => break,
            }
        }
    }

    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.inner
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .entries
            .len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cached(score: u8) -> Cached {
        Cached {
            score,
            params: Map::new(),
            raw: String::new(),
        }
    }

    #[test]
    fn keeps_at_most_its_capacity_dropping_the_oldest() {
        let cache = EvaluationCache::new(2);
        cache.insert(0, "a".into(), cached(1));
        cache.insert(1, "a".into(), cached(2));
        cache.insert(0, "b".into(), cached(3));
        assert_eq!(cache.len(), 2);
        assert_eq!(cache.get(0, "a"), None);
        assert_eq!(cache.get(1, "a").map(|c| c.score), Some(2));
        assert_eq!(cache.get(0, "b").map(|c| c.score), Some(3));
    }
}
