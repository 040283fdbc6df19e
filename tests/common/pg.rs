//! A real PostgreSQL for the tests (spec/team.md "Testing against a real
//! PostgreSQL"): Debian's server binaries, one throwaway cluster per test
//! process in a temporary directory, a Unix socket and no TCP, run as the
//! `postgres` user when the tests run as root (`initdb` refuses root).
//!
//! [`url`] hands every caller a fresh, empty schema of that cluster
//! (`…?host=DIR&options=-csearch_path%3Dt_N`). When the cluster cannot
//! start, [`url`] returns `None` with the reason printed, and PANICS under
//! `CI=true`: a suite that needs PostgreSQL never skips silently in CI.
//!
//! A watcher process stops the cluster and removes its directory when the
//! test process exits (statics are never dropped).

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicUsize, Ordering};

/// One running cluster: its directory (socket inside) and the base URL.
pub struct Cluster {
    pub dir: PathBuf,
    pub base: String,
    /// The data directory and the server options it was started with
    /// ([`stop`], [`start_again`]).
    pub data: String,
    pub opts: String,
}

/// The role that must give a password, and its password.
pub const PW_USER: &str = "cairn_pw";
/// [`PW_USER`]'s password.
pub const PW_RIGHT: &str = "right-horse-battery";

static CLUSTER: OnceLock<Result<Cluster, String>> = OnceLock::new();
static NEXT: AtomicUsize = AtomicUsize::new(0);

/// The directory holding `initdb` and `pg_ctl` (`/usr/lib/postgresql/N/bin`,
/// the newest N), or `None`.
fn bin_dir() -> Option<PathBuf> {
    let mut best: Option<(u32, PathBuf)> = None;
    for entry in std::fs::read_dir("/usr/lib/postgresql").ok()?.flatten() {
        let Some(v) = entry
            .file_name()
            .to_str()
            .and_then(|s| s.parse::<u32>().ok())
        else {
            continue;
        };
        let bin = entry.path().join("bin");
        if bin.join("initdb").exists() && best.as_ref().is_none_or(|(b, _)| v > *b) {
            best = Some((v, bin));
        }
    }
    best.map(|(_, b)| b)
}

fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

/// Runs `bin` with `args`, as `postgres` when we are root.
fn run_as(bin: &Path, args: &[&str]) -> Result<(), String> {
    let mut cmd = if is_root() {
        let mut c = Command::new("runuser");
        c.args(["-u", "postgres", "--"]).arg(bin);
        c
    } else {
        Command::new(bin)
    };
    let out = cmd
        .args(args)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("cannot run {}: {e}", bin.display()))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "{} failed: {}{}",
            bin.display(),
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ))
    }
}

fn start() -> Result<Cluster, String> {
    start_in("main", None)
}

/// A TLS listener for [`start_tls`]: the TCP port, the server's PEM
/// certificate and key files (readable by `postgres`).
pub struct Tls {
    pub port: u16,
    pub cert: PathBuf,
    pub key: PathBuf,
}

/// A second cluster of this test process, named `name`, that also listens
/// on 127.0.0.1:`tls.port` with TLS only (`hostssl`, trust).
pub fn start_tls(name: &str, tls: &Tls) -> Result<Cluster, String> {
    start_in(name, Some(tls))
}

fn start_in(name: &str, tls: Option<&Tls>) -> Result<Cluster, String> {
    let bin = bin_dir().ok_or(
        "no PostgreSQL server binaries under /usr/lib/postgresql/*/bin (apt-get install postgresql)",
    )?;
    // A test crate may compile this file more than once (each copy has its
    // own statics and cluster): the static's address keeps their
    // directories apart.
    let copy = &CLUSTER as *const _ as usize;
    let dir = std::env::temp_dir().join(format!("cairn-pg-{}-{name}-{copy:x}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).map_err(|e| format!("cannot make {}: {e}", dir.display()))?;
    if is_root() {
        let st = Command::new("chown")
            .args(["postgres:postgres"])
            .arg(&dir)
            .status()
            .map_err(|e| format!("chown: {e}"))?;
        if !st.success() {
            return Err("chown postgres of the cluster directory failed".into());
        }
    }
    let d = dir.to_string_lossy().to_string();
    let data = format!("{d}/data");
    run_as(
        &bin.join("initdb"),
        &[
            "-D",
            &data,
            "-A",
            "trust",
            "-U",
            "cairn",
            "-E",
            "UTF8",
            "--locale=C.UTF-8",
        ],
    )?;
    // One role must give a password (scram), so tests can show that a
    // wrong one is refused without being printed; everyone else is trusted.
    let mut hba = format!("local all {PW_USER} scram-sha-256\nlocal all all trust\n");
    let mut opts = format!(
        "-k {d} -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200"
    );
    match tls {
        None => opts.push_str(" -c listen_addresses=''"),
        Some(t) => {
            hba.push_str("hostssl all all 127.0.0.1/32 trust\n");
            opts.push_str(&format!(
                " -c listen_addresses=127.0.0.1 -c port={} -c ssl=on -c ssl_cert_file={} -c ssl_key_file={}",
                t.port,
                t.cert.display(),
                t.key.display()
            ));
        }
    }
    std::fs::write(format!("{data}/pg_hba.conf"), hba)
        .map_err(|e| format!("cannot write pg_hba.conf: {e}"))?;
    run_as(
        &bin.join("pg_ctl"),
        &[
            "-D",
            &data,
            "-o",
            &opts,
            "-l",
            &format!("{d}/log"),
            "-w",
            "start",
        ],
    )?;
    // The watcher: when this process is gone, stop the cluster, remove it.
    let pg_ctl = bin.join("pg_ctl");
    let stop = if is_root() {
        format!(
            "runuser -u postgres -- {} -D {data} -m immediate stop",
            pg_ctl.display()
        )
    } else {
        format!("{} -D {data} -m immediate stop", pg_ctl.display())
    };
    let script = format!(
        "while kill -0 {pid} 2>/dev/null; do sleep 1; done; {stop} >/dev/null 2>&1; rm -rf {d}",
        pid = std::process::id()
    );
    Command::new("sh")
        .args(["-c", &script])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("cannot start the cluster watcher: {e}"))?;
    let port = tls.map_or(5432, |t| t.port);
    let base = if tls.is_some() {
        format!("postgres://cairn@/postgres?host={d}&port={port}")
    } else {
        format!("postgres://cairn@/postgres?host={d}")
    };
    let mut c = postgres::Client::connect(
        &format!("host={d} port={port} user=cairn dbname=postgres"),
        postgres::NoTls,
    )
    .map_err(|e| format!("cannot connect to the test cluster: {e:?}"))?;
    c.batch_execute(&format!(
        "CREATE ROLE {PW_USER} LOGIN SUPERUSER PASSWORD '{PW_RIGHT}'"
    ))
    .map_err(|e| format!("cannot create the password role: {e}"))?;
    Ok(Cluster {
        base,
        dir,
        data,
        opts,
    })
}

/// A cluster of its own for this test process, named `name`, without TLS:
/// for a test that stops and starts it ([`stop`], [`start_again`]).
pub fn start_named(name: &str) -> Result<Cluster, String> {
    start_in(name, None)
}

/// Stops `c` (`pg_ctl stop -m fast`): every connection to it breaks.
pub fn stop(c: &Cluster) -> Result<(), String> {
    let bin = bin_dir().ok_or("no PostgreSQL binaries")?;
    run_as(
        &bin.join("pg_ctl"),
        &["-D", &c.data, "-m", "fast", "-w", "stop"],
    )
}

/// Starts `c` again after [`stop`], with the options it first had.
pub fn start_again(c: &Cluster) -> Result<(), String> {
    let bin = bin_dir().ok_or("no PostgreSQL binaries")?;
    let log = format!("{}/log", c.dir.display());
    run_as(
        &bin.join("pg_ctl"),
        &["-D", &c.data, "-o", &c.opts, "-l", &log, "-w", "start"],
    )
}

/// A URL naming a fresh schema `t_N` of the cluster `c`.
pub fn url_in(c: &Cluster) -> String {
    let n = NEXT.fetch_add(1, Ordering::SeqCst);
    format!(
        "{}&options=-csearch_path%3Dt_{}_{n}",
        c.base,
        std::process::id()
    )
}

/// The cluster of this test process, started on first use.
pub fn cluster() -> Result<&'static Cluster, String> {
    CLUSTER.get_or_init(start).as_ref().map_err(Clone::clone)
}

/// A URL naming a fresh, empty schema `t_N` of the test cluster, or `None`
/// (reason printed) when PostgreSQL cannot start. Panics under `CI=true`.
pub fn url() -> Option<String> {
    match cluster() {
        Ok(c) => {
            let n = NEXT.fetch_add(1, Ordering::SeqCst);
            Some(format!(
                "{}&options=-csearch_path%3Dt_{}_{n}",
                c.base,
                std::process::id()
            ))
        }
        Err(why) => {
            let msg = format!("PostgreSQL could not start: {why}");
            if std::env::var("CI").is_ok_and(|v| v == "true") {
                panic!("{msg}");
            }
            eprintln!("skipped (not CI): {msg}");
            None
        }
    }
}
