//! Slug minting and name validation (spec/store.md "Slugs and names").
//!
//! A slug is `YYYY-MM-DD-<core>`. The core comes from the name, NFC-normalised
//! first (decomposed and composed accents give one slug): leading
//! `YYYY-MM-DD-` prefixes are stripped, `_` and `/` become spaces, characters
//! other than letters, digits, spaces and `-` are dropped, the name splits
//! into words at spaces and `-`, words are lower-cased, words under 3
//! characters and [`STOPWORDS`] are dropped, and the first 4 words are kept,
//! joined by `-`, at most [`MAX_CORE_CHARS`] characters (cut at a word
//! boundary; a single longer word is cut). Lower-casing never adds combining
//! marks (`İstanbul` → `istanbul`). Thin names are rejected first (see
//! [`core_of`]).

use unicode_normalization::UnicodeNormalization;
use unicode_normalization::char::is_combining_mark;

use super::error::StoreError;

/// Words dropped from a slug core (whole words only: a kebab-case word keeps
/// its parts).
pub const STOPWORDS: &[&str] = &[
    "a", "an", "the", "to", "of", "for", "with", "and", "or", "in", "on", "at", "by", "from",
    "into", "onto", "that", "this", "these", "those", "are", "was", "were", "its", "about", "via",
    "per", "then", "than", "some", "our", "your", "their", "is", "be", "as",
];

/// Words too vague to name a task on their own, whatever their length.
pub const VAGUE_WORDS: &[&str] = &[
    "stuff",
    "misc",
    "miscellaneous",
    "wip",
    "todo",
    "todos",
    "thing",
    "things",
    "tmp",
    "temp",
    "test",
    "tests",
    "testing",
    "work",
    "task",
    "tasks",
    "fix",
    "fixes",
    "update",
    "updates",
    "change",
    "changes",
    "various",
    "general",
    "other",
    "others",
    "notes",
    "cleanup",
    "random",
    "whatever",
    "something",
    "everything",
    "generic",
    "pending",
    "backlog",
    "followup",
    "followups",
    "placeholder",
    "untitled",
    "unnamed",
    "scratch",
    "tweaks",
    "improvements",
];

/// Structural prefixes that, followed only by numbers, name nothing (`phase-1`).
pub const STRUCTURAL_WORDS: &[&str] = &[
    "phase",
    "step",
    "stage",
    "part",
    "task",
    "item",
    "milestone",
    "sprint",
    "iteration",
    "round",
    "section",
    "chapter",
    "version",
    "ver",
    "v",
    "p",
    "t",
    "m",
    "s",
];

/// The shortest single word accepted as a whole name (`refactoring` is fine,
/// `stuff` is not).
pub const MIN_SINGLE_WORD: usize = 6;

/// The most words a core keeps.
pub const MAX_CORE_WORDS: usize = 4;

/// The most characters (Unicode scalar values) a core keeps: words are kept
/// whole while they fit; a single longer word is cut to this length.
pub const MAX_CORE_CHARS: usize = 60;

/// Strips a depot prefix `name:` from a slug argument (spec/store.md: "A depot
/// prefix `name:` before a slug argument is stripped before lookup").
/// `depot:2026-01-01-x` → `2026-01-01-x`; `2026-01-01-x` unchanged.
pub fn strip_depot(arg: &str) -> &str {
    match arg.rsplit_once(':') {
        Some((_, bare)) => bare,
        None => arg,
    }
}

/// Strips every leading `YYYY-MM-DD-` the caller wrote.
pub fn strip_date_prefixes(name: &str) -> &str {
    let mut rest = name.trim_start();
    while is_date_prefix(rest) {
        rest = rest[11..].trim_start();
    }
    rest
}

fn is_date_prefix(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() >= 11
        && b[..4].iter().all(u8::is_ascii_digit)
        && b[4] == b'-'
        && b[5..7].iter().all(u8::is_ascii_digit)
        && b[7] == b'-'
        && b[8..10].iter().all(u8::is_ascii_digit)
        && b[10] == b'-'
}

/// The slug core of `name`, or why the name is refused (spec/store.md
/// "Slugs and names", wave 2 rules).
///
/// Words split on whitespace only (after `_` and `/` became spaces), so a
/// kebab-case word such as `phase-2-wire-up-db` stays whole; a word's `-`
/// runs collapse to one and leading/trailing `-` go. [`STOPWORDS`] are
/// dropped; short words that are not stopwords are kept (`fix CI` →
/// `fix-ci`). At most [`MAX_CORE_WORDS`] words are kept.
///
/// Thinness is judged on the name's parts (words split further at `-`):
/// only numbers, a lone letter-number (`P1`), a structural prefix and
/// numbers (`phase-1`), or, when exactly one descriptive part remains (not a
/// stopword, not a number), a vague part (`stuff`, `fix`) or one under
/// [`MIN_SINGLE_WORD`] characters (`tune`).
///
/// Errors: [`StoreError::NameRequired`] when blank; [`StoreError::NameTooThin`]
/// with reason `only numbers`, `a lone letter-number`, `only a structural
/// prefix and numbers`, `a single vague word`, `a single short word` or `no
/// descriptive words after dropping stopwords`.
pub fn core_of(name: &str) -> Result<String, StoreError> {
    let thin = |reason: &'static str| StoreError::NameTooThin {
        name: name.trim().to_string(),
        reason,
    };
    if name.trim().is_empty() {
        return Err(StoreError::NameRequired);
    }
    let composed: String = name.nfc().collect();
    let stripped = strip_date_prefixes(&composed);
    let cleaned: String = stripped
        .chars()
        .map(|c| if c == '_' || c == '/' { ' ' } else { c })
        .filter(|c| c.is_alphanumeric() || c.is_whitespace() || *c == '-')
        .flat_map(lower)
        .collect::<String>()
        .nfc()
        .collect();
    let words: Vec<String> = cleaned
        .split_whitespace()
        .map(|w| {
            w.split('-')
                .filter(|p| !p.is_empty())
                .collect::<Vec<_>>()
                .join("-")
        })
        .filter(|w| !w.is_empty())
        .collect();
    let parts: Vec<&str> = words.iter().flat_map(|w| w.split('-')).collect();
    let is_number = |t: &str| t.chars().all(|c| c.is_ascii_digit());
    if parts.is_empty() {
        return Err(thin("no descriptive words after dropping stopwords"));
    }
    if parts.iter().all(|t| is_number(t)) {
        return Err(thin("only numbers"));
    }
    if parts.len() == 1 && is_letter_number(parts[0]) {
        return Err(thin("a lone letter-number"));
    }
    if parts.len() >= 2
        && STRUCTURAL_WORDS.contains(&parts[0])
        && parts[1..].iter().all(|t| is_number(t))
    {
        return Err(thin("only a structural prefix and numbers"));
    }
    let descriptive: Vec<&str> = parts
        .iter()
        .copied()
        .filter(|p| !STOPWORDS.contains(p) && !is_number(p))
        .collect();
    match descriptive.as_slice() {
        [] => return Err(thin("no descriptive words after dropping stopwords")),
        [one] if VAGUE_WORDS.contains(one) => return Err(thin("a single vague word")),
        [one] if one.chars().count() < MIN_SINGLE_WORD => {
            return Err(thin("a single short word"));
        }
        _ => {}
    }
    let kept: Vec<&str> = words
        .iter()
        .map(String::as_str)
        .filter(|w| !STOPWORDS.contains(w))
        .take(MAX_CORE_WORDS)
        .collect();
    Ok(cap_core(&kept))
}

/// The lower-case form of `c` without the combining marks lower-casing
/// itself adds (`İ` lower-cases to `i` + U+0307; the slug keeps `i`).
/// Marks that were in the name stay (they were composed by NFC first).
fn lower(c: char) -> impl Iterator<Item = char> {
    c.to_lowercase()
        .enumerate()
        .filter(|(i, m)| *i == 0 || !is_combining_mark(*m))
        .map(|(_, m)| m)
}

/// Joins `words` with `-`, keeping at most [`MAX_CORE_CHARS`] characters:
/// whole words while they fit; a first word longer than the cap is cut to it.
fn cap_core(words: &[&str]) -> String {
    let mut out = String::new();
    let mut len = 0;
    for w in words {
        let n = w.chars().count();
        let sep = usize::from(!out.is_empty());
        if len + sep + n > MAX_CORE_CHARS {
            if out.is_empty() {
                let cut: String = w.chars().take(MAX_CORE_CHARS).collect();
                out = cut.trim_end_matches('-').to_string();
            }
            break;
        }
        if sep == 1 {
            out.push('-');
        }
        out.push_str(w);
        len += sep + n;
    }
    out
}

/// Letters then digits (`p1`, `v12`, `phase2`), or digits then letters (`1a`).
fn is_letter_number(t: &str) -> bool {
    let letters_then_digits = {
        let rest = t.trim_start_matches(|c: char| c.is_alphabetic());
        rest.len() < t.len() && !rest.is_empty() && rest.chars().all(|c| c.is_ascii_digit())
    };
    let digits_then_letters = {
        let rest = t.trim_start_matches(|c: char| c.is_ascii_digit());
        rest.len() < t.len() && !rest.is_empty() && rest.chars().all(char::is_alphabetic)
    };
    letters_then_digits || digits_then_letters
}

/// `YYYY-MM-DD-core` for `today` (no collision handling; see
/// `Store::mint_slug`). Errors as [`core_of`].
pub fn slug_for(name: &str, today: time::Date) -> Result<String, StoreError> {
    let core = core_of(name)?;
    let day = today
        .format(time::macros::format_description!("[year]-[month]-[day]"))
        .unwrap_or_default();
    Ok(format!("{day}-{core}"))
}

/// The slug a split moves the creation with content key `key` to:
/// `SLUG-XXXXXX`, the key's first six hex digits.
/// (Names of tasks `crate::store::split` moves, docs/store.md "Same name in two clones".)
pub(crate) fn moved_slug(slug: &str, key: &str) -> String {
    format!("{slug}-{}", key.get(..6).unwrap_or(key))
}

/// `SLUG` of a moved slug `SLUG-XXXXXX` (six lower-hex digits, the form of
/// [`moved_slug`]); `None` for any other slug.
pub(crate) fn base_of_moved(slug: &str) -> Option<&str> {
    let (base, tail) = slug.rsplit_once('-')?;
    (tail.len() == 6 && tail.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')))
        .then_some(base)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn depot_prefix_is_stripped() {
        assert_eq!(strip_depot("work:2026-01-01-x"), "2026-01-01-x");
        assert_eq!(strip_depot("2026-01-01-x"), "2026-01-01-x");
    }

    #[test]
    fn date_prefixes_are_stripped_repeatedly() {
        assert_eq!(strip_date_prefixes("2026-01-01-2025-12-31-tune"), "tune");
        assert_eq!(strip_date_prefixes("2026-01-01"), "2026-01-01");
    }
}
