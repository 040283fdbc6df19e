//! Tables on the command line (issue 12; docs/cli.md "Tables"): `tabled`
//! lays out columns by display width (a CJK character or an emoji counts
//! two, an ANSI colour escape counts nothing), so styled cells stay
//! aligned. The layout is the one of `gh issue list`: no borders, two
//! spaces between columns, no trailing whitespace, a header row in the
//! header style.

use tabled::builder::Builder;
use tabled::settings::{Padding, Style};

use super::color::{header_style, paint};

/// Renders `rows` under `headers` (painted bold; colour stripped later by
/// `anstream` when off). Rows shorter than the header are padded with empty
/// cells. No trailing newline; an empty `headers` renders as `""`.
pub fn render(headers: &[&str], rows: &[Vec<String>]) -> String {
    if headers.is_empty() {
        return String::new();
    }
    let mut b = Builder::new();
    b.push_record(headers.iter().map(|h| paint(header_style(), h)));
    for r in rows {
        let mut cells = r.clone();
        cells.resize(headers.len(), String::new());
        b.push_record(cells);
    }
    let mut t = b.build();
    t.with(Style::empty()).with(Padding::new(0, 2, 0, 0));
    t.to_string()
        .lines()
        .map(str::trim_end)
        .collect::<Vec<_>>()
        .join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plain(s: &str) -> String {
        anstream::adapter::strip_str(s).to_string()
    }

    #[test]
    fn columns_align_by_display_width() {
        let rows = vec![
            vec!["日本語".to_string(), "x".to_string()],
            vec!["\x1b[32mab\x1b[0m".to_string(), "y".to_string()],
        ];
        assert_eq!(
            plain(&render(&["name", "v"], &rows)),
            "name    v\n日本語  x\nab      y"
        );
    }

    #[test]
    fn short_rows_are_padded() {
        assert_eq!(
            plain(&render(&["a", "b"], &[vec!["1".to_string()]])),
            "a  b\n1"
        );
        assert_eq!(render(&[], &[]), "");
    }
}
