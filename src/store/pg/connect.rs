//! Connecting to PostgreSQL (spec/team.md "Selecting PostgreSQL": TLS as
//! libpq means `sslmode`, through rustls with the `ring` provider).
//!
//! The blocking `postgres` client runs its own small runtime, so it must
//! not be called on a tokio worker thread; the MCP server calls the store
//! from `spawn_blocking` threads, where it is safe.

use std::sync::Arc;

use rustls::SignatureScheme;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::{WebPkiServerVerifier, verify_server_cert_signed_by_trust_anchor};
use rustls::crypto::{CryptoProvider, WebPkiSupportedAlgorithms};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{CertificateError, DigitallySignedStruct, Error as TlsError, RootCertStore};

use super::target::{PgTarget, SslMode};
use crate::store::error::StoreError;

/// Database outages this process noticed: bumped when a connection it
/// keeps (the tokens table's, the health probe's) is found broken. A
/// connection made before the last bump may be dead without knowing it
/// yet (the blocking client notices only at its next query).
static OUTAGES: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// How many database outages this process noticed ([`saw_outage`]).
pub fn outages() -> u64 {
    OUTAGES.load(std::sync::atomic::Ordering::SeqCst)
}

/// Records that a kept connection was found broken.
pub(crate) fn saw_outage() {
    OUTAGES.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
}

/// Drops `v` (something holding a blocking `postgres` connection) where
/// that is allowed: closing such a connection blocks on its own runtime,
/// which panics inside a tokio runtime (an MCP session ending), so there
/// it is dropped on a short-lived thread of its own. Outside a runtime it
/// is dropped here.
pub(crate) fn drop_off_runtime<T: Send + 'static>(v: T) {
    if tokio::runtime::Handle::try_current().is_err() {
        drop(v);
        return;
    }
    let (tx, rx) = std::sync::mpsc::channel::<T>();
    let spawned = std::thread::Builder::new()
        .name("cairn-pg-close".into())
        .spawn(move || drop(rx.recv()));
    match spawned {
        Ok(_) => {
            if let Err(std::sync::mpsc::SendError(v)) = tx.send(v) {
                std::mem::forget(v);
            }
        }
        // No thread to close it on: leave the socket to the OS rather than
        // panic.
        Err(_) => std::mem::forget(v),
    }
}

/// A PostgreSQL error as a store error: the server's message (never the
/// URL or a password).
pub(crate) fn pg_err(e: postgres::Error) -> StoreError {
    use std::error::Error as _;
    let text = match e.as_db_error() {
        Some(db) => db.message().to_string(),
        None => match e.source() {
            Some(src) => format!("{e}: {src}"),
            None => e.to_string(),
        },
    };
    StoreError::Postgres(text)
}

/// Opens one connection to `target` (TLS per its `sslmode`). Errors:
/// [`StoreError::Postgres`] with the redacted URL and why (a bad host, a
/// refused password, a certificate that fails its check).
pub fn connect(target: &PgTarget) -> Result<postgres::Client, StoreError> {
    let mut config = target.config.clone();
    // Over a Unix socket there is no TLS (libpq skips it there too).
    let socket_only = !config.get_hosts().is_empty()
        && config
            .get_hosts()
            .iter()
            .all(|h| !matches!(h, postgres::config::Host::Tcp(_)));
    let ssl = if socket_only {
        SslMode::Disable
    } else {
        target.ssl
    };
    let result = match ssl {
        SslMode::Disable => {
            config.ssl_mode(postgres::config::SslMode::Disable);
            config.connect(postgres::NoTls)
        }
        mode => {
            config.ssl_mode(if mode == SslMode::Prefer {
                postgres::config::SslMode::Prefer
            } else {
                postgres::config::SslMode::Require
            });
            let tls = tls_config(target)?;
            config.connect(tokio_postgres_rustls::MakeRustlsConnect::new(tls))
        }
    };
    result.map_err(|e| {
        let StoreError::Postgres(why) = pg_err(e) else {
            return StoreError::Postgres(String::new());
        };
        StoreError::Postgres(format!("cannot connect to {}: {why}", target.shown))
    })
}

/// Asks the server to cancel the statement running on the connection
/// `token` was taken from (`Client::cancel_token`), over a new connection
/// with `target`'s TLS mode (a cancelled query; `tq`'s MCP cancellation).
/// Errors: [`StoreError::Postgres`], [`StoreError::PgConfig`].
pub fn cancel_query(target: &PgTarget, token: &postgres::CancelToken) -> Result<(), StoreError> {
    match target.ssl {
        SslMode::Disable => token.cancel_query(postgres::NoTls),
        _ => token.cancel_query(tokio_postgres_rustls::MakeRustlsConnect::new(tls_config(
            target,
        )?)),
    }
    .map_err(pg_err)
}

fn provider() -> Arc<CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

/// The trusted roots: `sslrootcert`, else `~/.postgresql/root.crt`, else the
/// web's roots (`webpki-roots`). Also says whether a root file was given
/// (libpq verifies `require` as `verify-ca` then).
fn roots(target: &PgTarget) -> Result<(RootCertStore, bool), StoreError> {
    let file = target.root_cert.clone().or_else(|| {
        let home = std::env::var("HOME").ok()?;
        let p = std::path::Path::new(&home).join(".postgresql/root.crt");
        p.exists().then(|| p.to_string_lossy().into_owned())
    });
    let mut store = RootCertStore::empty();
    match &file {
        Some(f) if f != "system" => {
            // A regular file of at most 1 MiB: never a device, FIFO or
            // directory (which would block or grow without end).
            match std::fs::metadata(f) {
                Ok(m) if m.is_file() && m.len() <= 1 << 20 => {}
                Ok(m) if m.is_file() => {
                    return Err(StoreError::PgConfig(format!(
                        "sslrootcert {f} is larger than 1 MiB; it should hold a few PEM certificates."
                    )));
                }
                Ok(_) => {
                    return Err(StoreError::PgConfig(format!(
                        "sslrootcert {f} is not a regular file."
                    )));
                }
                Err(e) => {
                    return Err(StoreError::PgConfig(format!(
                        "cannot read sslrootcert {f}: {e}."
                    )));
                }
            }
            let certs = CertificateDer::pem_file_iter(f)
                .map_err(|e| StoreError::PgConfig(format!("cannot read sslrootcert {f}: {e}.")))?;
            for c in certs {
                let c = c.map_err(|e| {
                    StoreError::PgConfig(format!("cannot read sslrootcert {f}: {e}."))
                })?;
                store.add(c).map_err(|e| {
                    StoreError::PgConfig(format!(
                        "sslrootcert {f} holds an unusable certificate: {e}."
                    ))
                })?;
            }
            Ok((store, true))
        }
        _ => {
            store.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned());
            Ok((store, false))
        }
    }
}

fn tls_config(target: &PgTarget) -> Result<rustls::ClientConfig, StoreError> {
    let provider = provider();
    let algs = provider.signature_verification_algorithms;
    let builder = rustls::ClientConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .map_err(|e| StoreError::PgConfig(format!("TLS setup failed: {e}.")))?;
    let (roots, given) = roots(target)?;
    let roots = Arc::new(roots);
    let verifier: Arc<dyn ServerCertVerifier> = match target.ssl {
        SslMode::Prefer | SslMode::Require if !given => Arc::new(NoCheck { algs }),
        SslMode::VerifyFull => WebPkiServerVerifier::builder_with_provider(roots, provider)
            .build()
            .map_err(|e| StoreError::PgConfig(format!("TLS setup failed: {e}.")))?,
        _ => Arc::new(ChainOnly { roots, algs }),
    };
    Ok(builder
        .dangerous()
        .with_custom_certificate_verifier(verifier)
        .with_no_client_auth())
}

/// `sslmode=prefer|require` without a root file: encrypted, the server's
/// certificate not checked (libpq's meaning); handshake signatures still are.
#[derive(Debug)]
struct NoCheck {
    algs: WebPkiSupportedAlgorithms,
}

impl ServerCertVerifier for NoCheck {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, TlsError> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, TlsError> {
        rustls::crypto::verify_tls12_signature(message, cert, dss, &self.algs)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, TlsError> {
        rustls::crypto::verify_tls13_signature(message, cert, dss, &self.algs)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.algs.supported_schemes()
    }
}

/// `sslmode=verify-ca` (and `require` with a root file): the chain must
/// reach a trusted root; the host name is not compared.
#[derive(Debug)]
struct ChainOnly {
    roots: Arc<RootCertStore>,
    algs: WebPkiSupportedAlgorithms,
}

impl ServerCertVerifier for ChainOnly {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, TlsError> {
        let cert = rustls::server::ParsedCertificate::try_from(end_entity)?;
        match verify_server_cert_signed_by_trust_anchor(
            &cert,
            &self.roots,
            intermediates,
            now,
            self.algs.all,
        ) {
            Ok(()) => Ok(ServerCertVerified::assertion()),
            Err(TlsError::InvalidCertificate(
                CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
            )) => Ok(ServerCertVerified::assertion()),
            Err(e) => Err(e),
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, TlsError> {
        rustls::crypto::verify_tls12_signature(message, cert, dss, &self.algs)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, TlsError> {
        rustls::crypto::verify_tls13_signature(message, cert, dss, &self.algs)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.algs.supported_schemes()
    }
}
