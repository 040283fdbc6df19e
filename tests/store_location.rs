//! Store location, one test per resolution rule, in temporary directories
//! (spec/store.md "Where the store lives").

use std::path::Path;

use cairn::store::location::{Inputs, Location, Rule, resolve};

fn inputs<'a>(cwd: &'a Path, home: &'a Path) -> Inputs<'a> {
    Inputs {
        flag: None,
        env_db: None,
        cwd,
        xdg_data_home: None,
        home: Some(home),
    }
}

#[test]
fn flag_wins_over_everything() {
    let t = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(t.path().join("repo/.git")).unwrap();
    let cwd = t.path().join("repo");
    let mut i = inputs(&cwd, t.path());
    let env = t.path().join("env.db");
    i.env_db = Some(&env);
    i.flag = Some(Path::new("x/.cairn/cairn.db"));
    let loc = resolve(&i).unwrap();
    assert_eq!(
        loc,
        Location {
            db: cwd.join("x/.cairn/cairn.db"),
            project: cwd.join("x"),
            rule: Rule::Flag
        }
    );
    assert_eq!(
        loc.describe(),
        format!(
            "database: {}\nproject: {}\nrule: --db flag",
            cwd.join("x/.cairn/cairn.db").display(),
            cwd.join("x").display()
        )
    );
}

#[test]
fn env_wins_without_flag() {
    let t = tempfile::tempdir().unwrap();
    let env = t.path().join("elsewhere/my.db");
    let mut i = inputs(t.path(), t.path());
    i.env_db = Some(&env);
    let loc = resolve(&i).unwrap();
    assert_eq!(loc.db, env);
    assert_eq!(loc.project, t.path().join("elsewhere"));
    assert_eq!(loc.rule, Rule::Env);
    assert!(
        loc.describe()
            .ends_with("rule: CAIRN_DB environment variable")
    );
    // An empty CAIRN_DB counts as unset.
    i.env_db = Some(Path::new(""));
    assert_eq!(resolve(&i).unwrap().rule, Rule::GlobalScratch);
}

#[test]
fn nearest_cairn_dir_below_the_repository_root_wins() {
    let t = tempfile::tempdir().unwrap();
    let repo = t.path().join("repo");
    std::fs::create_dir_all(repo.join(".git")).unwrap();
    std::fs::create_dir_all(repo.join(".cairn")).unwrap();
    std::fs::create_dir_all(repo.join("pkg/.cairn")).unwrap();
    std::fs::create_dir_all(repo.join("pkg/src/deep")).unwrap();
    let cwd = repo.join("pkg/src/deep");
    let loc = resolve(&inputs(&cwd, t.path())).unwrap();
    assert_eq!(loc.db, repo.join("pkg/.cairn/cairn.db"));
    assert_eq!(loc.project, repo.join("pkg"));
    assert_eq!(loc.rule, Rule::CairnDir(repo.join("pkg/.cairn")));
    assert_eq!(
        loc.describe().lines().last().unwrap(),
        format!(
            "rule: .cairn directory found ({})",
            repo.join("pkg/.cairn").display()
        )
    );
}

#[test]
fn the_walk_stops_at_the_repository_root() {
    let t = tempfile::tempdir().unwrap();
    // A .cairn above the repository must not be used.
    std::fs::create_dir_all(t.path().join(".cairn")).unwrap();
    let repo = t.path().join("repo");
    std::fs::create_dir_all(repo.join("src")).unwrap();
    std::fs::write(repo.join(".git"), "gitdir: ../elsewhere\n").unwrap(); // a worktree's .git file
    let cwd = repo.join("src");
    let loc = resolve(&inputs(&cwd, t.path())).unwrap();
    assert_eq!(loc.db, repo.join(".cairn/cairn.db"));
    assert_eq!(loc.project, repo);
    assert_eq!(loc.rule, Rule::RepoRoot(repo.clone()));
    assert_eq!(
        loc.describe().lines().last().unwrap(),
        format!("rule: repository root (.git found at {})", repo.display())
    );
}

#[test]
fn outside_any_repository_the_global_scratch_is_used() {
    let t = tempfile::tempdir().unwrap();
    let cwd = t.path().join("loose");
    std::fs::create_dir_all(&cwd).unwrap();
    let home = t.path().join("home");
    let loc = resolve(&inputs(&cwd, &home)).unwrap();
    assert_eq!(loc.db, home.join(".local/share/cairn/cairn.db"));
    assert_eq!(loc.project, home.join(".local/share/cairn"));
    assert_eq!(
        loc.describe().lines().last().unwrap(),
        "rule: global scratch (outside any repository)"
    );
    let xdg = t.path().join("xdg");
    let mut i = inputs(&cwd, &home);
    i.xdg_data_home = Some(&xdg);
    assert_eq!(resolve(&i).unwrap().db, xdg.join("cairn/cairn.db"));
    // A relative XDG_DATA_HOME is ignored (XDG base directory spec).
    i.xdg_data_home = Some(Path::new("rel"));
    assert_eq!(
        resolve(&i).unwrap().db,
        home.join(".local/share/cairn/cairn.db")
    );
    i.home = None;
    assert_eq!(
        resolve(&i).unwrap_err().to_string(),
        "cannot place the global scratch store: neither XDG_DATA_HOME nor HOME is set; pass --db PATH or set CAIRN_DB."
    );
}
