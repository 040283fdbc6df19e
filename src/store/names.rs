//! The open tasks' name words, kept in memory for `task_create`'s
//! `possibleDuplicates` (issue 23): before, every create read every open
//! task and split every name into words (O(open tasks) per create, 4.9 ms
//! at 10k). [`NameIndex`] keeps each open task's words and a posting list
//! per word, and follows the store through the events appended since it
//! last looked (`seq` above its mark): the fold changes only the rows an
//! event names (its subject, `child_id`, `target_id`), so re-reading those
//! rows keeps it exact. A store that holds a `task.split` (a split moves
//! events between tasks, and lines a merge brings later may fold under
//! the split's new slug) is reloaded whole on every look, as before, and
//! so is a long gap (another process wrote a lot, a `rebuild
//! --from-logs`).
//!
//! [`NameIndex::similar`] scores only the open tasks that can share enough
//! words with a name: a task sharing at least `k` of the name's `a` words
//! shares at least one of any `a - k + 1` of them, so the posting lists of
//! the `a - k + 1` rarest words hold every task that can reach the score
//! (prefix filtering). The score is the one `possibleDuplicates` reports.
//! Each candidate is first bounded by a 64-bit signature of its words kept
//! beside the slots: a task with `b` words sharing `s` scores at least
//! `t` only when `s >= t (a + b) / (1 + t)`, and the signatures' common
//! bits bound `s`, so most candidates are passed over without reading
//! their words (at 10k open tasks that read was a fifth of a create).

use std::collections::{BTreeSet, HashMap};

use rusqlite::{Connection, params};

use super::error::StoreError;
use super::event::types;
use super::read::OpenTask;
use super::slug::{STOPWORDS, strip_date_prefixes};

/// `split::SPLITS_MARK` (the `schema_meta` key set once a store holds a
/// `task.split`), spelled here because this file sits below the fold's layer.
const SPLITS_MARK: &str = "log.splits";

/// More new events than this since the last look reload the index whole.
const RELOAD_AFTER: usize = 512;

/// The word set of a name: its letter/digit runs, lower-cased, stopwords
/// ([`STOPWORDS`]) dropped.
pub fn name_words(name: &str) -> BTreeSet<String> {
    name.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .filter(|w| !STOPWORDS.contains(&w.as_str()))
        .collect()
}

/// The name an open task is compared by: its typed name when its creating
/// event kept one, else its slug without the date.
pub fn compared_name(t: &OpenTask) -> &str {
    t.name
        .as_deref()
        .unwrap_or_else(|| strip_date_prefixes(&t.slug))
}

/// The open tasks' words (module doc). Words are interned (`u32` ids);
/// each open task keeps its sorted word ids in a slot, each word the slots
/// of the open tasks holding it.
#[derive(Debug, Default)]
pub struct NameIndex {
    /// The highest event `seq` reflected (`None`: never loaded).
    seq: Option<i64>,
    /// Word → id.
    vocab: HashMap<String, u32>,
    /// Open tasks, by slot; `None` for a freed slot.
    slots: Vec<Option<(OpenTask, Vec<u32>)>>,
    /// Freed slots, reused first.
    free: Vec<u32>,
    /// Slug → slot.
    by_slug: HashMap<String, u32>,
    /// Word id → the slots holding it.
    postings: Vec<Vec<u32>>,
    /// By slot: the task's word-set signature ([`signature`]) and word
    /// count, kept beside the slots so a candidate that cannot reach the
    /// score is passed over without reading its task (issue 23).
    sigs: Vec<(u64, u32)>,
}

/// A 64-bit signature of a set of word ids: one bit per word (by a
/// multiplicative hash of its id). Two sets share at most
/// `(sig_a & sig_b).count_ones()` words.
fn signature(ids: &[u32]) -> u64 {
    ids.iter().fold(0u64, |sig, &w| {
        sig | 1u64 << (w.wrapping_mul(0x9E37_79B9) >> 26)
    })
}

/// The open-task query of [`super::read::open_tasks`], for one slug.
const ONE_OPEN_TASK: &str = "SELECT t.slug, t.status,
        (SELECT json_extract(e.data, '$.name') FROM events e
         WHERE e.task_id = t.slug AND e.type = 'task.create'
         ORDER BY e.seq LIMIT 1)
 FROM tasks t
 WHERE t.slug = ?1 AND t.status IN ('open', 'active', 'blocked') AND t.slug NOT LIKE '@%'";

impl NameIndex {
    /// Brings the index up to the store's events on `conn`. Errors:
    /// [`StoreError::Sqlite`].
    pub fn refresh(&mut self, conn: &Connection) -> Result<(), StoreError> {
        let splits: bool = conn
            .prepare_cached("SELECT EXISTS(SELECT 1 FROM schema_meta WHERE key = ?1)")?
            .query_row(params![SPLITS_MARK], |r| r.get(0))?;
        let Some(since) = self.seq.filter(|_| !splits) else {
            return self.reload(conn);
        };
        let mut stmt = conn.prepare_cached(
            "SELECT seq, task_id, type, json_extract(data, '$.child_id'),
                    json_extract(data, '$.target_id')
             FROM events WHERE seq > ?1 ORDER BY seq LIMIT ?2",
        )?;
        let limit = i64::try_from(RELOAD_AFTER + 1).unwrap_or(i64::MAX);
        let rows = stmt
            .query_map(params![since, limit], |r| {
                Ok((
                    r.get::<_, i64>(0)?,
                    r.get::<_, String>(1)?,
                    r.get::<_, String>(2)?,
                    r.get::<_, Option<String>>(3).ok().flatten(),
                    r.get::<_, Option<String>>(4).ok().flatten(),
                ))
            })?
            .collect::<Result<Vec<_>, _>>()?;
        if rows.len() > RELOAD_AFTER || rows.iter().any(|r| r.2 == types::SPLIT) {
            return self.reload(conn);
        }
        let mut named: BTreeSet<String> = BTreeSet::new();
        let mut last = since;
        for (seq, subject, _, child, target) in rows {
            last = last.max(seq);
            named.insert(subject);
            named.extend(child);
            named.extend(target);
        }
        let mut one = conn.prepare_cached(ONE_OPEN_TASK)?;
        for slug in named {
            self.remove(&slug);
            let row = one
                .query_map(params![slug], open_task)?
                .next()
                .transpose()?;
            if let Some(task) = row {
                self.insert(task);
            }
        }
        self.seq = Some(last);
        Ok(())
    }

    /// Reads every open task again.
    fn reload(&mut self, conn: &Connection) -> Result<(), StoreError> {
        // The mark first: events committed after it are re-read next time.
        let seq: Option<i64> = conn.query_row("SELECT max(seq) FROM events", [], |r| r.get(0))?;
        let open = super::read::open_tasks(conn)?;
        *self = NameIndex::default();
        for task in open {
            self.insert(task);
        }
        self.seq = Some(seq.unwrap_or(0));
        Ok(())
    }

    fn insert(&mut self, task: OpenTask) {
        let mut ids: Vec<u32> = name_words(compared_name(&task))
            .into_iter()
            .map(|w| {
                let next = u32::try_from(self.vocab.len()).unwrap_or(u32::MAX);
                *self.vocab.entry(w).or_insert(next)
            })
            .collect();
        ids.sort_unstable();
        ids.dedup();
        let slot = match self.free.pop() {
            Some(s) => s,
            None => {
                self.slots.push(None);
                u32::try_from(self.slots.len() - 1).unwrap_or(u32::MAX)
            }
        };
        for &w in &ids {
            let w = w as usize;
            if self.postings.len() <= w {
                self.postings.resize_with(w + 1, Vec::new);
            }
            self.postings[w].push(slot);
        }
        self.by_slug.insert(task.slug.clone(), slot);
        let entry = (
            signature(&ids),
            u32::try_from(ids.len()).unwrap_or(u32::MAX),
        );
        if self.sigs.len() <= slot as usize {
            self.sigs.resize(slot as usize + 1, (0, 0));
        }
        self.sigs[slot as usize] = entry;
        if let Some(place) = self.slots.get_mut(slot as usize) {
            *place = Some((task, ids));
        }
    }

    fn remove(&mut self, slug: &str) {
        let Some(slot) = self.by_slug.remove(slug) else {
            return;
        };
        let Some((_, ids)) = self.slots.get_mut(slot as usize).and_then(Option::take) else {
            return;
        };
        for w in ids {
            if let Some(list) = self.postings.get_mut(w as usize)
                && let Some(i) = list.iter().position(|&s| s == slot)
            {
                list.swap_remove(i);
            }
        }
        self.free.push(slot);
    }

    /// Every open task whose name's words score at least `min_score`
    /// against `words` (shared words / all words, the score of
    /// `possibleDuplicates`), by slug. Only the tasks in the posting lists
    /// of the `a - k + 1` rarest of the `a` words are candidates, `k` being
    /// the fewest shared words the score allows, and a candidate whose
    /// signature shares too few bits is passed over unread (module doc).
    pub fn similar(&self, words: &BTreeSet<String>, min_score: f64) -> Vec<OpenTask> {
        let a = words.len();
        let mut mine: Vec<Option<u32>> = words.iter().map(|w| self.vocab.get(w).copied()).collect();
        let mut ids: Vec<u32> = mine.iter().flatten().copied().collect();
        ids.sort_unstable();
        let my_sig = signature(&ids);
        // The score of a task whose name has `b` words and shares `s`:
        // s / (a + b - s) >= min_score  <=>  s >= min_score (a + b) / (1 + min_score).
        let passes = |slot: u32| -> bool {
            let Some(&(sig, b)) = self.sigs.get(slot as usize) else {
                return false;
            };
            let b = b as usize;
            if min_score > 0.0 {
                let need = min_score * (a + b) as f64 / (1.0 + min_score) - 1e-9;
                // At most this many words shared: the signature's bound.
                if f64::from((sig & my_sig).count_ones()) < need {
                    return false;
                }
            }
            let Some((_, theirs)) = self.slots.get(slot as usize).and_then(Option::as_ref) else {
                return false;
            };
            let shared = ids
                .iter()
                .filter(|w| theirs.binary_search(w).is_ok())
                .count();
            let union = a + theirs.len() - shared;
            let score = if union == 0 {
                0.0
            } else {
                shared as f64 / union as f64
            };
            score >= min_score
        };
        let mut hits: Vec<u32> = if min_score <= 0.0 {
            (0..self.slots.len())
                .filter_map(|s| u32::try_from(s).ok())
                .filter(|&s| passes(s))
                .collect()
        } else {
            // shared / all >= min_score and all >= a: shared >= min_score * a
            // (rounded down by a hair: a float error only widens the net).
            let k = ((min_score * a as f64 - 1e-9).ceil().max(1.0)) as usize;
            mine.sort_by_key(|w| {
                w.map_or(0, |w| self.postings.get(w as usize).map_or(0, Vec::len))
            });
            let take = a.saturating_sub(k) + 1;
            mine.iter()
                .take(take)
                .flatten()
                .filter_map(|&w| self.postings.get(w as usize))
                .flatten()
                .copied()
                .filter(|&s| passes(s))
                .collect()
        };
        hits.sort_unstable();
        hits.dedup();
        let mut out: Vec<OpenTask> = hits
            .into_iter()
            .filter_map(|s| self.slots.get(s as usize).and_then(Option::as_ref))
            .map(|(t, _)| t.clone())
            .collect();
        out.sort_by(|x, y| x.slug.cmp(&y.slug));
        out
    }

    /// How many open tasks the index holds.
    pub fn len(&self) -> usize {
        self.by_slug.len()
    }

    /// True when it holds no open task.
    pub fn is_empty(&self) -> bool {
        self.by_slug.is_empty()
    }
}

fn open_task(r: &rusqlite::Row<'_>) -> rusqlite::Result<OpenTask> {
    Ok(OpenTask {
        slug: r.get(0)?,
        status: r.get(1)?,
        name: r.get::<_, Option<String>>(2).ok().flatten(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_splits_mark_is_the_fold_layers() {
        assert_eq!(SPLITS_MARK, crate::store::split::SPLITS_MARK);
    }

    fn task(slug: &str, name: &str) -> OpenTask {
        OpenTask {
            slug: slug.into(),
            status: "active".into(),
            name: Some(name.into()),
        }
    }

    /// The reference: every task scored (what `possibleDuplicates` did).
    fn scan(tasks: &[OpenTask], words: &BTreeSet<String>, min: f64) -> Vec<String> {
        let mut out: Vec<String> = tasks
            .iter()
            .filter(|t| {
                let theirs = name_words(compared_name(t));
                let union = words.union(&theirs).count();
                let shared = words.intersection(&theirs).count();
                let score = if union == 0 {
                    0.0
                } else {
                    shared as f64 / union as f64
                };
                score >= min
            })
            .map(|t| t.slug.clone())
            .collect();
        out.sort();
        out
    }

    /// Many names from a small vocabulary (most candidates share one or
    /// two words, the signature bound passes them over): every probe and
    /// threshold gives the full scan's answer, after removals too.
    #[test]
    fn the_signature_bound_never_drops_a_match() {
        let vocab = [
            "wire",
            "port",
            "tune",
            "cache",
            "index",
            "parser",
            "router",
            "journal",
            "search",
            "storage",
            "billing",
            "sync",
            "module",
            "ranking",
            "tokenizer",
            "auth",
            "planner",
        ];
        let mut rng: u64 = 7;
        let mut next = |n: usize| {
            rng = rng
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            ((rng >> 33) as usize) % n
        };
        let mut idx = NameIndex::default();
        let mut tasks = Vec::new();
        for i in 0..1500 {
            let len = 1 + next(7);
            let mut name: Vec<String> = (0..len)
                .map(|_| vocab[next(vocab.len())].to_string())
                .collect();
            if next(3) == 0 {
                name.push(format!("n{i}"));
            }
            let t = task(&format!("2026-01-01-t{i:04}"), &name.join(" "));
            idx.insert(t.clone());
            tasks.push(t);
        }
        for _ in 0..300 {
            let gone = tasks.remove(next(tasks.len()));
            idx.remove(&gone.slug);
        }
        for p in 0..100 {
            let len = 1 + next(7);
            let mut probe: Vec<String> = (0..len)
                .map(|_| vocab[next(vocab.len())].to_string())
                .collect();
            if p % 4 == 0 {
                probe.push("unseen".to_string());
            }
            let words = name_words(&probe.join(" "));
            for min in [0.5, 0.34, 0.75, 1.0] {
                let got: Vec<String> = idx
                    .similar(&words, min)
                    .into_iter()
                    .map(|t| t.slug)
                    .collect();
                assert_eq!(got, scan(&tasks, &words, min), "{probe:?} at {min}");
            }
        }
    }

    #[test]
    fn similar_is_the_full_scan_on_fewer_tasks() {
        let names = [
            "tune search ranking",
            "tune parser cache",
            "tune search cache",
            "fix search ranking",
            "search ranking",
            "wire the tokenizer cache for the search module",
            "tokenizer",
            "Tune the Search: ranking (again)",
        ];
        let mut idx = NameIndex::default();
        let mut tasks = Vec::new();
        for (i, n) in names.iter().enumerate() {
            let t = task(&format!("2026-01-01-t{i}"), n);
            idx.insert(t.clone());
            tasks.push(t);
        }
        tasks.push(OpenTask {
            slug: "2026-01-01-search-ranking-weights".into(),
            status: "open".into(),
            name: None,
        });
        idx.insert(tasks[tasks.len() - 1].clone());
        idx.remove("2026-01-01-t1");
        tasks.remove(1);
        for probe in names
            .iter()
            .chain(&["search ranking weights", "nothing shared", "the"])
        {
            let words = name_words(probe);
            for min in [0.5, 0.34, 1.0, 0.0] {
                let got: Vec<String> = idx
                    .similar(&words, min)
                    .into_iter()
                    .map(|t| t.slug)
                    .collect();
                assert_eq!(got, scan(&tasks, &words, min), "{probe} at {min}");
            }
        }
        assert_eq!(idx.len(), 8);
        assert_eq!(
            idx.similar(&name_words("tune search ranking"), 0.5)
                .into_iter()
                .map(|t| t.slug)
                .collect::<Vec<_>>(),
            [
                "2026-01-01-search-ranking-weights",
                "2026-01-01-t0",
                "2026-01-01-t2",
                "2026-01-01-t3",
                "2026-01-01-t4",
                "2026-01-01-t7"
            ]
        );
    }
}
