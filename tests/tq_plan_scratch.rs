// Pre-integration sanity tests over hand-built ASTs (replaced by conformance tests).
use cairn::store::schema::DDL_V1;
use cairn::tq::ast::*;
use cairn::tq::exec;
use cairn::tq::plan::{Catalog, plan};
use cairn::tq::render::render;
use rusqlite::Connection;

fn sp<T>(t: T) -> Spanned<T> { Spanned::new(t, 0..0) }
fn q(src: Source, steps: Vec<Step>) -> Query { Query { source: sp(src), steps: steps.into_iter().map(sp).collect() } }

fn db() -> Connection {
    let c = Connection::open_in_memory().unwrap();
    c.execute_batch(DDL_V1).unwrap();
    c.execute_batch("
      INSERT INTO tasks(id, slug, status, created_ts, updated_ts, parent_task_id) VALUES
        (1,'a','active',100,1764460800,NULL),(2,'b','active',100,200,1),(3,'c','completed',100,300,1),(4,'@cairn','active',1,1,NULL);
      INSERT INTO edges(src_id,dst_id,type,created_ts) VALUES (2,3,'depends-on',1),(1,2,'related',1),(2,1,'related',1);
      INSERT INTO task_metadata(task_id,key,value,ts,eid) VALUES (1,'priority','high',1,'x'),(1,'display-name','Alpha',1,'y');
      INSERT INTO observations(event_id,task_id,text,ts) VALUES ('e1',1,'hello',1),('e2',1,'world',2);
    ").unwrap();
    exec::register_functions(&c).unwrap();
    c
}

fn run(c: &Connection, query: Query, cur: Option<&str>) -> String {
    let cat = Catalog { current: cur.map(String::from), ..Default::default() };
    let p = plan(&query, Surface::Read, &cat).unwrap();
    let st = exec::read_statement(&p);
    eprintln!("{}", st.sql);
    match exec::run_read(c, &p) { Ok(o) => render(&o), Err(e) => format!("ERR {e}") }
}

#[test]
fn scratch() {
    let c = db();
    assert_eq!(run(&c, q(Source::All, vec![]), None), "3 tasks:\n- a [Alpha] (active)\n- b (active)\n- c (completed)");
    assert_eq!(run(&c, q(Source::All, vec![Step::Count]), None), "3");
    assert_eq!(run(&c, q(Source::Current, vec![Step::Traverse(Trav{dir: TravDir::Follow, edge: EdgeType::PhaseOf}), Step::Ids]), Some("a")), "2 tasks:\n- b\n- c");
    assert_eq!(run(&c, q(Source::Current, vec![]), Some("zz")), "ERR The current task zz is not in the store.");
    assert_eq!(run(&c, q(Source::All, vec![Step::Enrich, Step::Take(1)]), None), "1 task:\n- a [Alpha] (active) obs=2 edges=4\n    display-name: Alpha\n    priority: high");
    assert_eq!(run(&c, q(Source::All, vec![Step::Select(vec![Field::Parent, Field::UpdatedTs, Field::Meta("priority".into()), Field::ObsCount])]), None),
      "3 tasks:\n- a  parent=∅  updated-ts=1764460800 (2025-11-30)  priority=high  obs-count=2\n- b  parent=a  updated-ts=200 (1970-01-01)  priority=∅  obs-count=0\n- c  parent=a  updated-ts=300 (1970-01-01)  priority=∅  obs-count=0");
    assert_eq!(run(&c, q(Source::All, vec![Step::Where(Pred::Quantified(Quant::All, Trav{dir: TravDir::Follow, edge: EdgeType::DependsOn}, Box::new(Pred::Eq(Value::Field(Field::Status), Lit::Str("completed".into()))))), Step::Ids]), None), "3 tasks:\n- a\n- b\n- c");
    assert_eq!(run(&c, q(Source::Node("a".into()), vec![Step::Closure(vec![EdgeType::Related]), Step::Ids]), None), "2 tasks:\n- a\n- b");
    assert_eq!(run(&c, q(Source::All, vec![Step::GroupBy(Field::Status)]), None), "2 groups:\n\n## active (2)\n- a [Alpha] (active)\n- b (active)\n\n## completed (1)\n- c (completed)");
    assert_eq!(run(&c, q(Source::Fields, vec![Step::Where(Pred::Eq(Value::Field(Field::Slug), Lit::Str("updated-ts".into()))), Step::Select(vec![Field::Prop(Prop::Unit)])]), None), "1 task:\n- updated-ts  unit=seconds");
    assert_eq!(run(&c, q(Source::Fields, vec![Step::Traverse(Trav{dir: TravDir::Follow, edge: EdgeType::PhaseOf})]), None), "No matching tasks.");
    assert_eq!(run(&c, q(Source::Fields, vec![Step::SetOp(SetOp::Union, Box::new(q(Source::Dormant, vec![]))), Step::Ids]), None), "12 tasks:\n- c\n- description\n- display-name\n- edge-count\n- obs-count\n- origin\n- parent\n- priority\n- slug\n- status\n- unit\n- updated-ts");
    assert_eq!(run(&c, q(Source::Active, vec![Step::Sort(Field::UpdatedTs, Dir::Desc), Step::SetOp(SetOp::OrElse, Box::new(q(Source::Dormant, vec![]))), Step::Ids]), None), "2 tasks:\n- a\n- b");
    assert_eq!(run(&c, q(Source::Views, vec![Step::Select(vec![Field::Prop(Prop::Origin)])]), None), "2 tasks:\n- active-roots  origin=builtin\n- orphans  origin=builtin");
}
