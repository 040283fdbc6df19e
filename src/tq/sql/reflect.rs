//! The reflection relation (spec/tq.md §6): the rows of `(schema)`,
//! `(fields)`, `(edges)` and `(views)` as one CTE
//! `refl(id, rk, slug, category, kind, doc, signature, type, origin, source, class, unit, epoch)`.
//!
//! Registry rows are a `VALUES` list whose every text is a bound parameter;
//! live rows (metadata keys, user views) are read from the projection in the
//! same statement. Ids are negative and disjoint per kind, so they never
//! collide with `tasks.id` and traversals over them find nothing.

use super::Lower;
use crate::tq::ast::FieldType;
use crate::tq::plan::ReflKind;
use crate::tq::registry;

/// Id bases (negated): schema rows `-(1+i)`, declared fields `-(10001+i)`,
/// edges `-(20001+i)`, built-in views `-(30001+i)`, metadata keys
/// `-(4000000000 + the key's first task_metadata rowid)` (stable while a
/// query adds keys), user views `-(2000000000+rowid)`.
const FIELD_BASE: i64 = 10_001;
const EDGE_BASE: i64 = 20_001;
const VIEW_BASE: i64 = 30_001;

impl Lower {
    fn opt(&mut self, s: Option<&str>) -> String {
        match s {
            Some(s) => self.text(s),
            None => "NULL".to_string(),
        }
    }

    /// One `VALUES` row: id, rk, then the eleven text columns.
    fn values_row(&mut self, id: i64, rk: ReflKind, cols: [Option<&str>; 11]) -> String {
        let mut out = vec![format!("{}", -id), format!("'{}'", rk.as_str())];
        for c in cols {
            out.push(self.opt(c));
        }
        format!("({})", out.join(", "))
    }

    /// The `refl(...)` CTE holding the rows of `kinds`.
    pub(crate) fn reflection(&mut self, kinds: &[ReflKind]) -> String {
        let mut rows: Vec<String> = Vec::new();
        let mut live: Vec<String> = Vec::new();
        for k in kinds {
            match k {
                ReflKind::Schema => {
                    for (i, f) in registry::forms().iter().enumerate() {
                        let sig = f.signature_text();
                        let sig = (!sig.is_empty()).then_some(sig);
                        let row = self.values_row(
                            1 + i as i64,
                            *k,
                            [
                                Some(f.name),
                                Some(f.category.as_str()),
                                f.kind.map(|k| k.as_str()),
                                Some(f.doc),
                                sig.as_deref(),
                                None,
                                None,
                                None,
                                None,
                                None,
                                None,
                            ],
                        );
                        rows.push(row);
                    }
                }
                ReflKind::Fields => {
                    let mut declared = Vec::new();
                    for (i, f) in registry::fields().iter().enumerate() {
                        let (ty, unit, epoch) = match f.ty {
                            FieldType::Text => ("text", None, None),
                            FieldType::Number => ("number", None, None),
                            FieldType::Timestamp => (
                                "timestamp",
                                Some(registry::TS_UNIT),
                                Some(registry::TS_EPOCH),
                            ),
                        };
                        let row = self.values_row(
                            FIELD_BASE + i as i64,
                            *k,
                            [
                                Some(f.name),
                                None,
                                None,
                                Some(f.doc),
                                None,
                                Some(ty),
                                Some("declared"),
                                None,
                                None,
                                unit,
                                epoch,
                            ],
                        );
                        rows.push(row);
                        declared.push(self.text(f.name));
                    }
                    let text = self.text("text");
                    let origin = self.text("metadata");
                    let not_declared = if declared.is_empty() {
                        String::new()
                    } else {
                        format!(" WHERE key NOT IN ({})", declared.join(", "))
                    };
                    live.push(format!(
                        "SELECT -(4000000000 + {}), 'fields', key, NULL, NULL, NULL, NULL, {text}, {origin}, NULL, NULL, NULL, NULL FROM task_metadata{not_declared} GROUP BY key",
                        self.d.meta_key_ordinal()
                    ));
                }
                ReflKind::Edges => {
                    for (i, e) in registry::edges().iter().enumerate() {
                        let row = self.values_row(
                            EDGE_BASE + i as i64,
                            *k,
                            [
                                Some(e.edge.as_str()),
                                None,
                                None,
                                Some(e.doc),
                                None,
                                None,
                                None,
                                None,
                                Some(e.edge.class().as_str()),
                                None,
                                None,
                            ],
                        );
                        rows.push(row);
                    }
                }
                ReflKind::Views => {
                    let mut builtin = Vec::new();
                    for (i, v) in registry::builtin_views().iter().enumerate() {
                        builtin.push(self.values_row(
                            VIEW_BASE + i as i64,
                            *k,
                            [
                                Some(v.name),
                                None,
                                None,
                                Some(v.doc),
                                None,
                                None,
                                Some("builtin"),
                                Some(v.source),
                                None,
                                None,
                                None,
                            ],
                        ));
                    }
                    if !builtin.is_empty() {
                        let cols: Vec<String> = (1..=13).map(|i| format!("b.column{i}")).collect();
                        live.push(format!(
                            "SELECT {} FROM (VALUES {}) b WHERE b.column3 NOT IN (SELECT name FROM named_views)",
                            cols.join(", "),
                            builtin.join(", ")
                        ));
                    }
                    let user = self.text("user");
                    live.push(format!(
                        "SELECT -(2000000000 + {}), 'views', name, NULL, NULL, NULL, NULL, NULL, {user}, query, NULL, NULL, NULL FROM named_views",
                        self.d.view_ordinal()
                    ));
                }
            }
        }
        let mut arms = Vec::new();
        if !rows.is_empty() {
            arms.push(format!("VALUES {}", rows.join(", ")));
        }
        arms.extend(live);
        if arms.is_empty() {
            arms.push(format!("SELECT 0, '', '', NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL WHERE {}", self.no()));
        }
        format!(
            "refl(id, rk, slug, category, kind, doc, signature, type, origin, source, class, unit, epoch) AS ({})",
            arms.join(" UNION ALL ")
        )
    }
}
