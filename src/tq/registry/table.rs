//! The form table: every source, step, predicate and write form of
//! spec/tq.md §2 as one row (name, category, kind, signature, usage, op, doc).

use super::{Arg, Category, FormEntry, Kind, Op};

const fn form(
    name: &'static str,
    category: Category,
    kind: Option<Kind>,
    args: &'static [Arg],
    usage: &'static str,
    op: Op,
    doc: &'static str,
) -> FormEntry {
    FormEntry {
        name,
        category,
        kind,
        doc,
        args,
        usage,
        op,
    }
}

use Category as C;

const T: Option<Kind> = Some(Kind::Transformer);
const SH: Option<Kind> = Some(Kind::Shaper);
const MU: Option<Kind> = Some(Kind::Mutation);
const LF: Option<Kind> = Some(Kind::Leaf);
const CO: Option<Kind> = Some(Kind::Combinator);
const QU: Option<Kind> = Some(Kind::Quantifier);

/// The rows, in `(schema)` order: sources, steps, predicates, write forms.
#[rustfmt::skip]
pub(super) static FORMS: &[FormEntry] = &[
    form("all", C::Source, None, &[], "(all)", Op::All, "Every task, reserved @-prefixed nodes excluded."),
    form("active", C::Source, None, &[], "(active)", Op::Active, "Tasks whose status is open, active or blocked."),
    form("dormant", C::Source, None, &[], "(dormant)", Op::Dormant, "Tasks whose status is completed or abandoned."),
    form("current", C::Source, None, &[], "(current)", Op::Current, "The session's current task."),
    form("mine", C::Source, None, &[], "(mine)", Op::Mine, "The tasks this agent holds a live claim on."),
    form("node", C::Source, None, &[Arg::LitStr], "(node \"substr\")", Op::Node, "Tasks whose slug contains the substring, case-insensitive; reserved nodes included."),
    form("search", C::Source, None, &[Arg::LitStr], "(search \"text\")", Op::Search, "Tasks whose name, description, observations or handoffs match the text (task_search's rules), most relevant first; sets :relevance."),
    form("query", C::Source, None, &[Arg::LitStr], "(query \"name\")", Op::View, "The tasks of a named view (built-in or user-defined)."),
    form("schema", C::Source, None, &[], "(schema)", Op::Schema, "Every source, step, predicate and write form as rows."),
    form("views", C::Source, None, &[], "(views)", Op::Views, "The named views as rows, built-in and user."),
    form("fields", C::Source, None, &[], "(fields)", Op::Fields, "The queryable fields as rows, declared and metadata."),
    form("edges", C::Source, None, &[], "(edges)", Op::Edges, "The edge types as rows, with their class."),
    form("follow", C::Step, T, &[Arg::Edge], "(:follow EDGE)", Op::Follow, "Tasks one EDGE hop forward."),
    form("back", C::Step, T, &[Arg::Edge], "(:back EDGE)", Op::Back, "Tasks one EDGE hop backward."),
    form("where", C::Step, T, &[Arg::Pred], "(:where PRED)", Op::Where, "Tasks satisfying PRED."),
    form("sort", C::Step, T, &[Arg::Field, Arg::OptDir], "(:sort FIELD [:asc|:desc])", Op::Sort, "Order by FIELD, descending by default; ties by slug ascending."),
    form("take", C::Step, T, &[Arg::Int], "(:take N)", Op::Take, "The first N tasks (negative means 0)."),
    form("enrich", C::Step, T, &[], "(:enrich)", Op::Enrich, "Attach obs-count, edge-count and every metadata key for rendering."),
    form("union", C::Step, T, &[Arg::Query], "(:union Q)", Op::Union, "Tasks in the pipeline or in Q."),
    form("intersect", C::Step, T, &[Arg::Query], "(:intersect Q)", Op::Intersect, "Tasks both in the pipeline and in Q."),
    form("minus", C::Step, T, &[Arg::Query], "(:minus Q)", Op::Minus, "Pipeline tasks not in Q."),
    form("or-else", C::Step, T, &[Arg::Query], "(:or-else Q)", Op::OrElse, "The pipeline if non-empty, else Q."),
    form("closure", C::Step, T, &[Arg::Edges], "(:closure EDGE...)", Op::Closure, "Forward transitive closure over the EDGEs, cycle-safe, starting tasks excluded."),
    form("select", C::Step, SH, &[Arg::Fields], "(:select FIELD...)", Op::Select, "Projection of the named fields."),
    form("group-by", C::Step, SH, &[Arg::Field], "(:group-by FIELD)", Op::GroupBy, "Buckets by FIELD value, largest first."),
    form("ids", C::Step, SH, &[], "(:ids)", Op::Ids, "The slugs."),
    form("count", C::Step, SH, &[], "(:count)", Op::Count, "The number of tasks."),
    form("set-status!", C::Step, MU, &[Arg::Status], "(:set-status! STATUS)", Op::SetStatus, "Set each task's status."),
    form("set!", C::Step, MU, &[Arg::Lit, Arg::Lit], "(:set! :key \"value\")", Op::SetMeta, "Set a metadata key on each task (not :slug, :status or another computed field; :display-name is settable)."),
    form("link!", C::Step, MU, &[Arg::LinkEdge, Arg::LitStr], "(:link! :EDGE \"target\")", Op::Link, "Add EDGE from each task to the target."),
    form("unlink!", C::Step, MU, &[Arg::LinkEdge, Arg::LitStr], "(:unlink! :EDGE \"target\")", Op::Unlink, "Remove EDGE from each task to the target."),
    form("claim!", C::Step, MU, &[Arg::Int], "(:claim! SECONDS)", Op::Claim, "Claim each task for this agent for 1 to 86400 seconds (a re-claim renews); keeps only the tasks the agent now holds."),
    form("release!", C::Step, MU, &[], "(:release!)", Op::Release, "Release the claims this agent holds on the tasks; returns them."),
    form("=", C::Predicate, LF, &[Arg::Value, Arg::Lit], "(= VALUE LIT)", Op::Eq, "VALUE equals LIT."),
    form("has", C::Predicate, LF, &[Arg::Field], "(has FIELD)", Op::Has, "FIELD has a value."),
    form("matches", C::Predicate, LF, &[Arg::FieldText, Arg::LitStr], "(matches FIELD \"s\")", Op::Matches, "FIELD contains s, case-insensitive."),
    form(">", C::Predicate, LF, &[Arg::ValueNum, Arg::LitReal], "(> VALUE N)", Op::Gt, "VALUE is greater than N."),
    form("<", C::Predicate, LF, &[Arg::ValueNum, Arg::LitReal], "(< VALUE N)", Op::Lt, "VALUE is less than N."),
    form(">=", C::Predicate, LF, &[Arg::ValueNum, Arg::LitReal], "(>= VALUE N)", Op::Ge, "VALUE is at least N."),
    form("<=", C::Predicate, LF, &[Arg::ValueNum, Arg::LitReal], "(<= VALUE N)", Op::Le, "VALUE is at most N."),
    form("on", C::Predicate, LF, &[Arg::FieldTs, Arg::LitDate], "(on TS \"YYYY-MM-DD\")", Op::On, "TS falls on that UTC day."),
    form("since", C::Predicate, LF, &[Arg::FieldTs, Arg::LitDate], "(since TS \"YYYY-MM-DD\")", Op::Since, "TS is on or after that UTC day."),
    form("before", C::Predicate, LF, &[Arg::FieldTs, Arg::LitDate], "(before TS \"YYYY-MM-DD\")", Op::Before, "TS is before that UTC day."),
    form("and", C::Predicate, CO, &[Arg::Preds], "(and PRED...)", Op::And, "Every PRED holds."),
    form("or", C::Predicate, CO, &[Arg::Preds], "(or PRED...)", Op::Or, "Some PRED holds."),
    form("not", C::Predicate, CO, &[Arg::Pred], "(not PRED)", Op::Not, "PRED does not hold."),
    form("all", C::Predicate, QU, &[Arg::Traversal, Arg::Pred], "(all TRAV PRED)", Op::QAll, "Every task one hop away satisfies PRED (true when none)."),
    form("any", C::Predicate, QU, &[Arg::Traversal, Arg::Pred], "(any TRAV PRED)", Op::QAny, "Some task one hop away satisfies PRED (false when none)."),
    form("none", C::Predicate, QU, &[Arg::Traversal, Arg::Pred], "(none TRAV PRED)", Op::QNone, "No task one hop away satisfies PRED (true when none)."),
    form("define!", C::Write, None, &[Arg::LitStr, Arg::Query], "(define! \"name\" Q)", Op::Define, "Record Q as the named view NAME; returns Q's tasks."),
    form("undefine!", C::Write, None, &[Arg::LitStr], "(undefine! \"name\")", Op::Undefine, "Remove the user view NAME; a built-in of that name reappears."),
];
