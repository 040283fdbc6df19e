//! A server started outside any project (no repository, no roots) says
//! where its store is: in its `instructions` and in the first tool answer
//! of a session, not in the ones after (issue 27).

use std::io::Write;
use std::process::{Command, Stdio};

#[test]
fn a_scratch_server_says_where_it_writes() {
    let dir = tempfile::tempdir().unwrap();
    let (work, data) = (dir.path().join("w"), dir.path().join("data"));
    std::fs::create_dir_all(&work).unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_cairn"))
        .arg("serve")
        .current_dir(&work)
        .env_remove("CAIRN_DB")
        .env("XDG_DATA_HOME", &data)
        .env("HOME", dir.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let call = |id: u32| {
        format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"task_query","arguments":{{"query":"(-> (all) (:count))"}}}}}}"#
        )
    };
    let input = [
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#.to_string(),
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#.to_string(),
        call(2),
        call(3),
    ]
    .join("\n");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(format!("{input}\n").as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    let lines: Vec<serde_json::Value> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let db = data.join("cairn").join("cairn.db");
    let note = format!(
        "Note: this server was started outside any project (no repository, no roots), so it writes to the global scratch store at {}; start it in your project's directory to keep the plan with the project.",
        db.display()
    );
    let instructions = lines[0]["result"]["instructions"].as_str().unwrap();
    assert!(
        instructions.ends_with(&format!("\n{note}")),
        "{instructions}"
    );
    assert_eq!(
        lines[1]["result"]["content"][0]["text"],
        format!("{note}\n\n0")
    );
    assert_eq!(lines[2]["result"]["content"][0]["text"], "0");
}
