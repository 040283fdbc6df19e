//! Resource subscriptions on PostgreSQL (spec/team.md "Changes"): a
//! `cairn serve --db postgres://…` session subscribed to a task hears
//! `notifications/resources/updated` when ANOTHER process writes to that
//! task (the server LISTENs to the schema's channel), and nothing for a
//! write to another task.
#![allow(deprecated)] // resources/subscribe is "legacy-only" in rmcp.

mod common;

use std::process::Stdio;
use std::time::Duration;

use common::pg;
use rmcp::model::{
    ClientCapabilities, ClientConfig, Implementation, ResourceUpdatedNotificationParam,
    SubscribeRequestParams,
};
use rmcp::service::NotificationContext;
use rmcp::transport::TokioChildProcess;
use rmcp::{ClientHandler, RoleClient, ServiceExt};
use tokio::sync::mpsc::{UnboundedSender, unbounded_channel};

#[derive(Clone)]
struct Heard(UnboundedSender<String>);

impl ClientHandler for Heard {
    fn get_info(&self) -> ClientConfig {
        ClientConfig::new(
            ClientCapabilities::default(),
            Implementation::new("pg-sub", "1.0.0"),
        )
    }

    async fn on_resource_updated(
        &self,
        params: ResourceUpdatedNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        let _ = self.0.send(params.uri);
    }
}

async fn cairn(url: &str, dir: &std::path::Path, args: &[&str]) -> String {
    let out = tokio::process::Command::new(env!("CARGO_BIN_EXE_cairn"))
        .args(args)
        .env("CAIRN_DB", url)
        .env("HOME", dir)
        .env("CAIRN_NOW", "1767225600")
        .current_dir(dir)
        .output()
        .await
        .unwrap();
    assert!(out.status.success(), "{args:?}: {out:?}");
    String::from_utf8(out.stdout).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_write_elsewhere_notifies_the_subscriber() {
    let Some(url) = tokio::task::block_in_place(pg::url) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    assert_eq!(
        cairn(&url, dir.path(), &["add", "alpha task"]).await,
        "Created 2026-01-01-alpha-task.\n"
    );
    assert_eq!(
        cairn(&url, dir.path(), &["add", "beta task"]).await,
        "Created 2026-01-01-beta-task.\n"
    );
    let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_cairn"));
    cmd.arg("serve")
        .env("CAIRN_DB", &url)
        .env("HOME", dir.path())
        .current_dir(dir.path());
    let (transport, _) = TokioChildProcess::builder(cmd)
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let (tx, mut rx) = unbounded_channel();
    let c = Heard(tx).serve(transport).await.unwrap();
    let uri = "cairn://tasks/2026-01-01-alpha-task".to_string();
    c.subscribe(SubscribeRequestParams::new(uri.clone()))
        .await
        .unwrap();
    // A write to another task: nothing for alpha.
    cairn(
        &url,
        dir.path(),
        &["note", "2026-01-01-beta-task", "on beta"],
    )
    .await;
    let heard = tokio::time::timeout(Duration::from_millis(1500), rx.recv()).await;
    assert!(heard.is_err(), "{heard:?}");
    // A write to alpha from another process: heard.
    cairn(
        &url,
        dir.path(),
        &["note", "2026-01-01-alpha-task", "on alpha"],
    )
    .await;
    let heard = tokio::time::timeout(Duration::from_secs(5), rx.recv()).await;
    assert_eq!(heard.ok().flatten(), Some(uri));
    c.cancel().await.unwrap();
}
