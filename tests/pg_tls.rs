//! TLS to PostgreSQL (spec/team.md "Selecting PostgreSQL": `sslmode` as
//! libpq means it, through rustls): a server with a certificate from a
//! throwaway CA, made on the fly, for the name `db.example`; reached at
//! 127.0.0.1. `require` connects without checking the certificate;
//! `verify-ca` checks the chain only; `verify-full` also checks the name,
//! so it is refused at 127.0.0.1 and accepted once the host is `db.example`
//! (resolved to 127.0.0.1 through `hostaddr`); `disable` is refused by a
//! TLS-only server.

mod common;

use std::path::Path;
use std::process::Command;

use cairn::store::pg::{PgStore, PgTarget};
use common::pg;

fn openssl(dir: &Path, args: &[&str]) {
    let st = Command::new("openssl")
        .args(args)
        .current_dir(dir)
        .status()
        .unwrap();
    assert!(st.success(), "openssl {args:?}");
}

/// A CA and a server certificate for `db.example` signed by it.
fn certificates(dir: &Path) {
    openssl(
        dir,
        &[
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-days",
            "2",
            "-subj",
            "/CN=cairn test CA",
            "-keyout",
            "ca.key",
            "-out",
            "ca.crt",
        ],
    );
    openssl(
        dir,
        &[
            "req",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-subj",
            "/CN=db.example",
            "-keyout",
            "server.key",
            "-out",
            "server.csr",
        ],
    );
    std::fs::write(
        dir.join("ext.cnf"),
        "subjectAltName=DNS:db.example\nbasicConstraints=CA:FALSE\n",
    )
    .unwrap();
    openssl(
        dir,
        &[
            "x509",
            "-req",
            "-in",
            "server.csr",
            "-CA",
            "ca.crt",
            "-CAkey",
            "ca.key",
            "-CAcreateserial",
            "-days",
            "2",
            "-extfile",
            "ext.cnf",
            "-out",
            "server.crt",
        ],
    );
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

#[test]
fn sslmode_require_verify_ca_and_verify_full() {
    if pg::cluster().is_err() {
        let _ = pg::url(); // prints why, panics under CI
        return;
    }
    let certs = tempfile::tempdir().unwrap();
    certificates(certs.path());
    // The server reads its key as `postgres`: copy both into a directory it owns.
    let tls_dir = std::env::temp_dir().join(format!("cairn-pg-tls-{}", std::process::id()));
    std::fs::create_dir_all(&tls_dir).unwrap();
    for f in ["server.crt", "server.key"] {
        std::fs::copy(certs.path().join(f), tls_dir.join(f)).unwrap();
    }
    if unsafe { libc::geteuid() } == 0 {
        Command::new("chown")
            .args(["-R", "postgres:postgres"])
            .arg(&tls_dir)
            .status()
            .unwrap();
    }
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(
        tls_dir.join("server.key"),
        std::fs::Permissions::from_mode(0o600),
    )
    .unwrap();
    let port = free_port();
    let tls = pg::Tls {
        port,
        cert: tls_dir.join("server.crt"),
        key: tls_dir.join("server.key"),
    };
    pg::start_tls("tls", &tls).unwrap();
    let ca = certs.path().join("ca.crt");
    let ca = ca.to_str().unwrap();
    let open = |url: &str| PgStore::open(&PgTarget::parse(url, Some("tls_t")).unwrap());

    let require = format!("postgres://cairn@127.0.0.1:{port}/postgres?sslmode=require");
    let store = open(&require).unwrap();
    assert_eq!(store.schema_version().unwrap(), 5);
    let ssl: bool = store
        .client()
        .query_one(
            "SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()",
            &[],
        )
        .unwrap()
        .get(0);
    assert!(ssl, "the connection is encrypted");

    let verify_ca =
        format!("postgres://cairn@127.0.0.1:{port}/postgres?sslmode=verify-ca&sslrootcert={ca}");
    assert!(open(&verify_ca).is_ok());

    let wrong_name =
        format!("postgres://cairn@127.0.0.1:{port}/postgres?sslmode=verify-full&sslrootcert={ca}");
    let err = open(&wrong_name).unwrap_err().to_string();
    assert!(
        err.starts_with(&format!("PostgreSQL: cannot connect to postgres://cairn@127.0.0.1:{port}/postgres?sslmode=verify-full&sslrootcert={ca}: ")),
        "{err}"
    );
    assert!(err.contains("certificate not valid for name"), "{err}");

    let right_name = format!(
        "postgres://cairn@db.example:{port}/postgres?hostaddr=127.0.0.1&sslmode=verify-full&sslrootcert={ca}"
    );
    assert!(open(&right_name).is_ok(), "{:?}", open(&right_name).err());

    // A root that did not sign the server's certificate is refused by verify-ca.
    let other = tempfile::tempdir().unwrap();
    openssl(
        other.path(),
        &[
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-days",
            "2",
            "-subj",
            "/CN=other CA",
            "-keyout",
            "o.key",
            "-out",
            "o.crt",
        ],
    );
    let other_ca = other.path().join("o.crt");
    let untrusted = format!(
        "postgres://cairn@127.0.0.1:{port}/postgres?sslmode=verify-ca&sslrootcert={}",
        other_ca.display()
    );
    assert!(
        open(&untrusted)
            .unwrap_err()
            .to_string()
            .contains("UnknownIssuer")
    );

    let plain = format!("postgres://cairn@127.0.0.1:{port}/postgres?sslmode=disable");
    let err = open(&plain).unwrap_err().to_string();
    assert!(err.contains("no pg_hba.conf entry"), "{err}");
    let _ = std::fs::remove_dir_all(&tls_dir);
}

/// `sslrootcert` must be a regular file: a device or a directory is refused
/// with a sentence before any connection (it used to read /dev/zero
/// without end).
#[test]
fn sslrootcert_must_be_a_regular_file() {
    for (file, why) in [
        ("/dev/zero", "is not a regular file."),
        ("/tmp", "is not a regular file."),
    ] {
        let url = format!("postgres://cairn@127.0.0.1:1/db?sslmode=verify-full&sslrootcert={file}");
        let err = PgStore::open(&PgTarget::parse(&url, None).unwrap()).unwrap_err();
        assert_eq!(err.to_string(), format!("sslrootcert {file} {why}"));
    }
}
