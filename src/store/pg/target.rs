//! Where a PostgreSQL store lives (spec/team.md "Selecting PostgreSQL"): a
//! `postgres://`/`postgresql://` URL, the project's schema, the TLS mode and
//! the password's source, parsed once into a [`PgTarget`]. Nothing here
//! connects (see `pg/connect.rs`).
//!
//! The password comes from the URL, else `PGPASSWORD`, else the password
//! file (`PGPASSFILE` or `~/.pgpass`, libpq's format and matching rules).
//! [`PgTarget::shown`] is the URL with any password replaced by `***`: the
//! only form any message, log line or `where` output prints.

use std::str::FromStr;

use percent_encoding::percent_decode_str;

use crate::store::error::StoreError;

/// The schema a project lives in when neither `--pg-schema` nor the URL's
/// `options=-csearch_path=NAME` names one.
pub const DEFAULT_SCHEMA: &str = "cairn";

/// libpq's `sslmode` values (spec/team.md): what TLS a connection uses and
/// what it checks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SslMode {
    /// No TLS.
    Disable,
    /// TLS when the server offers it, unverified; plain otherwise (the default).
    Prefer,
    /// TLS, certificate not verified (verified as `verify-ca` when a root
    /// certificate file is given, as libpq does).
    Require,
    /// TLS, the certificate chains to a trusted root; the name is not checked.
    VerifyCa,
    /// TLS, the certificate chains to a trusted root and names the host.
    VerifyFull,
}

impl SslMode {
    fn parse(s: &str) -> Result<SslMode, StoreError> {
        Ok(match s {
            "disable" => SslMode::Disable,
            "prefer" | "allow" => SslMode::Prefer,
            "require" => SslMode::Require,
            "verify-ca" => SslMode::VerifyCa,
            "verify-full" => SslMode::VerifyFull,
            other => {
                return Err(StoreError::PgConfig(format!(
                    "sslmode {other:?} is not one of disable, prefer, require, verify-ca, verify-full."
                )));
            }
        })
    }
}

/// A parsed PostgreSQL location.
#[derive(Clone)]
pub struct PgTarget {
    /// The client configuration (hosts, user, database, password).
    pub config: postgres::Config,
    /// The project's schema (an identifier: letters, digits, `_`; ≤ 63 bytes).
    pub schema: String,
    /// The TLS mode.
    pub ssl: SslMode,
    /// `sslrootcert`: a PEM file of trusted roots (`None`: `~/.postgresql/root.crt`
    /// when present, else the system's web roots).
    pub root_cert: Option<String>,
    /// The URL as it may be printed: any password replaced by `***`.
    pub shown: String,
}

impl std::fmt::Debug for PgTarget {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "PgTarget({} schema {})", self.shown, self.schema)
    }
}

/// True when `s` names a PostgreSQL store (`postgres://` or `postgresql://`).
pub fn is_pg_url(s: &str) -> bool {
    let l = s.get(..13).unwrap_or(s).to_ascii_lowercase();
    l.starts_with("postgres://") || l.starts_with("postgresql://")
}

/// True when `s` starts like a PostgreSQL URL (`postgres:`/`postgresql:`,
/// any case) but is not one (`postgres:host/db`, a missing `//`): the CLI
/// refuses it rather than take it for a file name.
pub fn looks_like_pg_url(s: &str) -> bool {
    let l = s.get(..11).unwrap_or(s).to_ascii_lowercase();
    (l.starts_with("postgres:") || l.starts_with("postgresql:")) && !is_pg_url(s)
}

/// Checks a schema name: ASCII letters, digits and `_`, not starting with a
/// digit, 1–63 bytes. Errors: [`StoreError::PgConfig`] with the sentence.
pub fn check_schema(name: &str) -> Result<(), StoreError> {
    let l = name.to_ascii_lowercase();
    if l == "information_schema" || l.starts_with("pg_") {
        return Err(StoreError::PgConfig(format!(
            "The PostgreSQL schema {name:?} is a system schema; choose a name of your own (default: cairn)."
        )));
    }
    let ok = !name.is_empty()
        && name.len() <= 63
        && !name.starts_with(|c: char| c.is_ascii_digit())
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if ok {
        Ok(())
    } else {
        Err(StoreError::PgConfig(format!(
            "The PostgreSQL schema {name:?} is not a plain identifier (ASCII letters, digits and _, 1-63 bytes, not starting with a digit)."
        )))
    }
}

/// The URL with the password (in the user part or a `password=` parameter)
/// replaced by `***`.
pub fn redact(url: &str) -> String {
    let url = match url.to_ascii_lowercase().find(" password") {
        // A libpq key/value string pasted after the URL: cut it off.
        Some(i) => &url[..i],
        None => url,
    };
    let (head, query) = match url.split_once('?') {
        Some((h, q)) => (h, Some(q)),
        None => (url, None),
    };
    let mut out = match head.split_once("://") {
        Some((scheme, rest)) => {
            let (auth, tail) = match rest.find('/') {
                Some(i) => (&rest[..i], &rest[i..]),
                None => (rest, ""),
            };
            let auth = match auth.rsplit_once('@') {
                Some((user, host)) => match user.split_once(':') {
                    Some((u, _)) => format!("{u}:***@{host}"),
                    None => format!("{user}@{host}"),
                },
                None => auth.to_string(),
            };
            format!("{scheme}://{auth}{tail}")
        }
        None => head.to_string(),
    };
    if let Some(q) = query {
        // Any parameter whose decoded text names a password is masked
        // whole: `password=`, `PASSWORD=`, `pass%77ord=`, `x;password=`,
        // and a malformed `password%3D...` without its `=`.
        let parts: Vec<String> = q
            .split('&')
            .map(|kv| {
                if decode(kv).to_ascii_lowercase().contains("password") {
                    "password=***".to_string()
                } else {
                    kv.to_string()
                }
            })
            .collect();
        out.push('?');
        out.push_str(&parts.join("&"));
    }
    out
}

fn decode(s: &str) -> String {
    percent_decode_str(s).decode_utf8_lossy().into_owned()
}

impl PgTarget {
    /// Parses `url`; `schema` (from `--pg-schema`) wins over the URL's
    /// `options=-csearch_path=NAME`, which wins over [`DEFAULT_SCHEMA`].
    /// Errors: [`StoreError::PgConfig`] naming what is wrong (the URL in
    /// its redacted form).
    pub fn parse(url: &str, schema: Option<&str>) -> Result<PgTarget, StoreError> {
        let shown = redact(url);
        if !is_pg_url(url) {
            return Err(StoreError::PgConfig(format!(
                "{shown} is not a postgres:// or postgresql:// URL."
            )));
        }
        let (head, query) = match url.split_once('?') {
            Some((h, q)) => (h, q),
            None => (url, ""),
        };
        let mut ssl = SslMode::Prefer;
        let mut root_cert = None;
        let mut url_schema = None;
        let mut keep = Vec::new();
        for kv in query.split('&').filter(|kv| !kv.is_empty()) {
            let (k, v) = kv.split_once('=').unwrap_or((kv, ""));
            match k {
                "sslmode" => ssl = SslMode::parse(&decode(v))?,
                "sslrootcert" => root_cert = Some(decode(v)),
                "options" => {
                    let opts = decode(v);
                    for opt in opts.split_whitespace() {
                        let opt = opt.trim_start_matches("-c").trim_start_matches("--");
                        if let Some(path) = opt.strip_prefix("search_path=") {
                            url_schema = Some(path.split(',').next().unwrap_or("").to_string());
                        }
                    }
                }
                _ => keep.push(kv),
            }
        }
        // The scheme in lower case (the client parses only that spelling).
        let head = match head.split_once("://") {
            Some((scheme, rest)) => format!("{}://{rest}", scheme.to_ascii_lowercase()),
            None => head.to_string(),
        };
        let rebuilt = if keep.is_empty() {
            head
        } else {
            format!("{head}?{}", keep.join("&"))
        };
        let mut config = postgres::Config::from_str(&rebuilt).map_err(|e| {
            StoreError::PgConfig(format!("{shown} is not a usable PostgreSQL URL: {e}."))
        })?;
        // Unquoted identifiers fold to lower case in PostgreSQL; so do ours.
        let schema = schema
            .map(str::to_string)
            .or(url_schema)
            .unwrap_or_else(|| DEFAULT_SCHEMA.to_string());
        check_schema(&schema)?;
        let schema = schema.to_ascii_lowercase();
        if config.get_user().is_none() {
            let user = std::env::var("PGUSER")
                .ok()
                .or_else(|| std::env::var("USER").ok())
                .unwrap_or_else(|| "postgres".to_string());
            config.user(&user);
        }
        if config.get_hosts().is_empty() {
            config.host("localhost");
        }
        if config.get_password().is_none() {
            if let Some(pw) = std::env::var("PGPASSWORD").ok().filter(|p| !p.is_empty()) {
                config.password(pw);
            } else if let Some(pw) = pgpass_lookup(&config) {
                config.password(pw);
            }
        }
        if config.get_connect_timeout().is_none() {
            config.connect_timeout(std::time::Duration::from_secs(10));
        }
        config.application_name("cairn");
        Ok(PgTarget {
            config,
            schema,
            ssl,
            root_cert,
            shown,
        })
    }

    /// The host as libpq's password file names it: `localhost` for a Unix
    /// socket, else the first host name.
    fn pgpass_host(config: &postgres::Config) -> String {
        match config.get_hosts().first() {
            Some(postgres::config::Host::Tcp(h)) => h.clone(),
            _ => "localhost".to_string(),
        }
    }
}

/// The password for `config` from the password file (`PGPASSFILE`, else
/// `~/.pgpass`): the first line `host:port:database:user:password` whose
/// fields match (`*` matches anything; `\:` and `\\` are escapes).
fn pgpass_lookup(config: &postgres::Config) -> Option<String> {
    let path = std::env::var("PGPASSFILE")
        .ok()
        .map(std::path::PathBuf::from)
        .or_else(|| {
            std::env::var("HOME")
                .ok()
                .map(|h| std::path::Path::new(&h).join(".pgpass"))
        })?;
    // libpq ignores a password file that others can read or write.
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&path).ok()?.permissions().mode();
        if mode & 0o077 != 0 {
            return None;
        }
    }
    let text = std::fs::read_to_string(path).ok()?;
    let host = PgTarget::pgpass_host(config);
    let port = config
        .get_ports()
        .first()
        .copied()
        .unwrap_or(5432)
        .to_string();
    let user = config.get_user().unwrap_or("").to_string();
    let db = config.get_dbname().unwrap_or(&user).to_string();
    for line in text.lines() {
        if line.starts_with('#') || line.trim().is_empty() {
            continue;
        }
        let fields = split_pgpass(line);
        if fields.len() != 5 {
            continue;
        }
        let want = [&host, &port, &db, &user];
        if fields[..4]
            .iter()
            .zip(want)
            .all(|(f, w)| f == "*" || f == w)
        {
            return Some(fields[4].clone());
        }
    }
    None
}

fn split_pgpass(line: &str) -> Vec<String> {
    let mut out = vec![String::new()];
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                if let Some(n) = chars.next()
                    && let Some(last) = out.last_mut()
                {
                    last.push(n);
                }
            }
            ':' if out.len() < 5 => out.push(String::new()),
            c => {
                if let Some(last) = out.last_mut() {
                    last.push(c);
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redact_hides_passwords_in_both_places() {
        assert_eq!(
            redact("postgres://bob:s3cret@db.example:5432/plans?sslmode=require"),
            "postgres://bob:***@db.example:5432/plans?sslmode=require"
        );
        assert_eq!(
            redact("postgresql://bob@h/db?password=s3cret&sslmode=disable"),
            "postgresql://bob@h/db?password=***&sslmode=disable"
        );
        assert_eq!(redact("postgres://h/db"), "postgres://h/db");
        for hidden in [
            "postgres://u@h/db?pass%77ord=S3CRET",
            "postgres://u@h/db?%70assword=S3CRET&sslmode=disable",
            "postgres://u@h/db?PASSWORD=S3CRET",
            "postgres://u@h/db?x;password=S3CRET",
            "postgres://u@h/db?password%3DS3CRET",
            "postgres://u@h/db password=S3CRET",
        ] {
            let shown = redact(hidden);
            assert!(!shown.contains("S3CRET"), "{hidden} -> {shown}");
        }
    }

    #[test]
    fn schema_from_flag_then_options_then_default() {
        let u = "postgres://u@/db?host=/tmp&options=-csearch_path%3Dteam_a";
        assert_eq!(PgTarget::parse(u, None).unwrap().schema, "team_a");
        assert_eq!(PgTarget::parse(u, Some("b")).unwrap().schema, "b");
        assert_eq!(
            PgTarget::parse("postgres://u@h/db", None).unwrap().schema,
            "cairn"
        );
        let bad = PgTarget::parse("postgres://u@h/db", Some("x;drop")).unwrap_err();
        assert_eq!(
            bad.to_string(),
            "The PostgreSQL schema \"x;drop\" is not a plain identifier (ASCII letters, digits and _, 1-63 bytes, not starting with a digit)."
        );
    }

    #[test]
    fn sslmode_values() {
        let t = PgTarget::parse("postgres://u@h/db?sslmode=verify-full", None).unwrap();
        assert_eq!(t.ssl, SslMode::VerifyFull);
        let e = PgTarget::parse("postgres://u:pw@h/db?sslmode=sometimes", None).unwrap_err();
        assert_eq!(
            e.to_string(),
            "sslmode \"sometimes\" is not one of disable, prefer, require, verify-ca, verify-full."
        );
    }

    #[test]
    fn pgpass_fields_and_escapes() {
        assert_eq!(
            split_pgpass(r"h\:x:5432:*:bob:p\:w"),
            vec!["h:x", "5432", "*", "bob", "p:w"]
        );
    }
}
