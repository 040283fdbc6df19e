//! Text the read tools share: the `task_get` state block (also the top of
//! `task_bootstrap` and the handoff skeleton), one-line digests, UTC dates.

use time::{OffsetDateTime, macros::format_description};

use crate::fence::quote;
use crate::store::read::TaskState;

/// How many recent observations the state block shows (seed 000 `task_get`).
pub const RECENT_OBS: usize = 5;

/// How many handoffs `task_bootstrap` lists (spec/mcp.md).
pub const BOOTSTRAP_HANDOFFS: usize = 3;

/// The longest digest in characters before it is cut with `…` (spec/mcp.md).
pub const DIGEST_CHARS: usize = 140;

/// Unix seconds → UTC date-time (out-of-range values clamp to the epoch).
pub fn datetime(ts: i64) -> OffsetDateTime {
    OffsetDateTime::from_unix_timestamp(ts).unwrap_or(OffsetDateTime::UNIX_EPOCH)
}

/// `YYYY-MM-DD` (UTC) of Unix seconds `ts`.
pub fn date(ts: i64) -> String {
    datetime(ts)
        .format(format_description!("[year]-[month]-[day]"))
        .unwrap_or_default()
}

/// `YYYY-MM-DD HH:MM` (UTC) of Unix seconds `ts`.
pub fn minute(ts: i64) -> String {
    datetime(ts)
        .format(format_description!("[year]-[month]-[day] [hour]:[minute]"))
        .unwrap_or_default()
}

/// `text` on one line (whitespace runs collapsed to one space), at most
/// `max` characters, then `…` when cut.
pub fn one_line(text: &str, max: usize) -> String {
    let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if flat.chars().count() <= max {
        flat
    } else {
        let mut cut: String = flat.chars().take(max).collect();
        cut.push('…');
        cut
    }
}

/// The state block of seed 000 `task_get`:
///
/// ```text
/// SLUG  [STATUS]
///   DESCRIPTION (else the typed name)
///   claimed: OWNER until YYYY-MM-DD HH:MM UTC   (a live claim, spec/tq.md §9)
///   parent: PARENT
///   children:
///     - CHILD [STATUS]
///   edges:
///     EDGE DEST
///   metadata:
///     key = value
///   recent:
///     - OBSERVATION (one line, at most 140 chars)
///   … N earlier observations — call timeline with full=true, types=observation to read them all
/// ```
///
/// Written text (the description or name lines, metadata values, the
/// observations) goes through [`quote`] (fenced when the server fences,
/// docs/mcp.md "Fenced text"). Sections without content are left out; `now` (Unix seconds) judges the
/// claim live. No trailing newline.
pub fn state_block(s: &TaskState, now: i64) -> String {
    let mut out = format!("{}  [{}]", s.slug, s.status);
    let description = s.description.as_deref().filter(|d| !d.trim().is_empty());
    // Without a description, the typed name takes its line (spec/store.md
    // "Slugs and names"; the seed's task_get example shows the name there).
    let shown = description.or(s.name.as_deref().filter(|n| !n.trim().is_empty()));
    if let Some(d) = shown {
        for line in d.lines() {
            out.push_str("\n  ");
            out.push_str(&quote(line));
        }
    }
    if let Some((owner, until)) = s.live_claim(now) {
        out.push_str(&format!("\n  claimed: {owner} until {} UTC", minute(until)));
    }
    if let Some(p) = &s.parent {
        out.push_str(&format!("\n  parent: {p}"));
    }
    if !s.children.is_empty() {
        out.push_str("\n  children:");
        for (slug, status) in &s.children {
            out.push_str(&format!("\n    - {slug} [{status}]"));
        }
    }
    if !s.edges.is_empty() {
        out.push_str("\n  edges:");
        for (edge, dst) in &s.edges {
            out.push_str(&format!("\n    {edge} {dst}"));
        }
    }
    if !s.metadata.is_empty() {
        out.push_str("\n  metadata:");
        for (k, v) in &s.metadata {
            out.push_str(&format!("\n    {k} = {}", quote(v)));
        }
    }
    if !s.recent.is_empty() {
        out.push_str("\n  recent:");
        for (i, text) in s.recent.iter().enumerate() {
            let by = s.recent_by.get(i).map_or(String::new(), |w| {
                crate::fence::byline(&w.session, Some(&minute(w.ts)))
            });
            out.push_str(&format!(
                "\n    - {}{by}",
                quote(&one_line(text, DIGEST_CHARS))
            ));
        }
    }
    let shown = i64::try_from(s.recent.len()).unwrap_or(i64::MAX);
    if s.obs_count > shown {
        let n = s.obs_count - shown;
        let noun = if n == 1 {
            "observation"
        } else {
            "observations"
        };
        out.push_str(&format!(
            "\n  … {n} earlier {noun} — call timeline with full=true, types=observation to read them all"
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_line_cuts_at_140_with_ellipsis() {
        let long = "x".repeat(150);
        let got = one_line(&long, DIGEST_CHARS);
        assert_eq!(got.chars().count(), 141);
        assert!(got.ends_with('…'));
        assert_eq!(one_line("a\n  b\tc", 140), "a b c");
    }

    #[test]
    fn dates_are_utc() {
        assert_eq!(date(1_764_460_800), "2025-11-30");
        assert_eq!(minute(1_764_460_800 + 3_661), "2025-11-30 01:01");
    }
}
