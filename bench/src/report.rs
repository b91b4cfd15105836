//! The results table: our medians beside numpy's and ONNX Runtime's, the bandwidth floor, and
//! the ratios, as plain text for the terminal and as Markdown for `docs/performance.md`.

use serde_json::Value;

/// One line of the table.
#[derive(Debug, Clone, PartialEq)]
pub struct Line {
    /// What was measured.
    pub label: String,
    /// Our median, ms.
    pub ours: f64,
    /// numpy's median, ms (None when it did not run).
    pub numpy: Option<f64>,
    /// ONNX Runtime's median, ms (None when it did not run).
    pub ort: Option<f64>,
    /// The bandwidth floor, ms.
    pub floor: f64,
    /// `ok`, or what disagreed.
    pub check: String,
}

/// Builds the lines from our results (`cpu` output) and the peers' (`bench_peers.py` output,
/// `Value::Null` when it was not run).
pub fn lines(ours: &Value, peers: &Value) -> Vec<Line> {
    let floor_gbs = ours["bandwidth_gbs"]["floor"].as_f64().unwrap_or(f64::NAN);
    let empty = Vec::new();
    let peer_rows = peers["rows"].as_array().unwrap_or(&empty);
    ours["rows"]
        .as_array()
        .unwrap_or(&empty)
        .iter()
        .map(|row| {
            let id = row["id"].as_str().unwrap_or("");
            let peer = peer_rows.iter().find(|p| p["id"].as_str() == Some(id));
            let median = |name: &str| peer.and_then(|p| p[name]["median_ms"].as_f64());
            let bytes = row["bytes_read"].as_f64().unwrap_or(0.0)
                + row["bytes_written"].as_f64().unwrap_or(0.0);
            let check = match peer.map(|p| &p["check"]) {
                None => "no peers".to_string(),
                Some(Value::Object(checks)) => {
                    let bad: Vec<String> = checks
                        .iter()
                        .filter(|(_, v)| v.as_str() != Some("ok"))
                        .map(|(k, v)| format!("{k}: {}", v.as_str().unwrap_or("?")))
                        .collect();
                    if bad.is_empty() {
                        "ok".to_string()
                    } else {
                        bad.join("; ")
                    }
                }
                Some(other) => other.to_string(),
            };
            Line {
                label: row["label"].as_str().unwrap_or(id).to_string(),
                ours: row["median_ms"].as_f64().unwrap_or(f64::NAN),
                numpy: median("numpy"),
                ort: median("ort"),
                floor: bytes / (floor_gbs * 1e6),
                check,
            }
        })
        .collect()
}

fn ms(v: Option<f64>) -> String {
    v.map_or("—".to_string(), |v| format!("{v:.1}"))
}

fn ratio(a: f64, b: Option<f64>) -> String {
    b.map_or("—".to_string(), |b| format!("{:.2}", a / b))
}

const HEADERS: [&str; 9] = [
    "row",
    "ours ms",
    "numpy ms",
    "ORT ms",
    "floor ms",
    "ours/numpy",
    "ours/ORT",
    "ours/floor",
    "check",
];

fn cells(line: &Line) -> [String; 9] {
    [
        line.label.clone(),
        format!("{:.1}", line.ours),
        ms(line.numpy),
        ms(line.ort),
        format!("{:.1}", line.floor),
        ratio(line.ours, line.numpy),
        ratio(line.ours, line.ort),
        ratio(line.ours, Some(line.floor)),
        line.check.clone(),
    ]
}

/// The table as aligned plain text.
pub fn text(lines: &[Line]) -> String {
    let rows: Vec<[String; 9]> = lines.iter().map(cells).collect();
    let width = |c: usize| {
        rows.iter()
            .map(|r| r[c].chars().count())
            .chain([HEADERS[c].len()])
            .max()
            .unwrap_or(0)
    };
    let widths: Vec<usize> = (0..9).map(width).collect();
    let format_row = |r: &[String]| {
        r.iter()
            .enumerate()
            .map(|(c, s)| {
                if c == 0 || c == 8 {
                    format!("{s:<w$}", w = widths[c])
                } else {
                    format!("{s:>w$}", w = widths[c])
                }
            })
            .collect::<Vec<_>>()
            .join("  ")
            .trim_end()
            .to_string()
    };
    let headers: Vec<String> = HEADERS.iter().map(|h| h.to_string()).collect();
    let mut out = format_row(&headers);
    out.push('\n');
    out.push_str(&"-".repeat(widths.iter().sum::<usize>() + 2 * 8));
    out.push('\n');
    for r in &rows {
        out.push_str(&format_row(r));
        out.push('\n');
    }
    out
}

/// The table as Markdown.
pub fn markdown(lines: &[Line]) -> String {
    let mut out = format!("| {} |\n", HEADERS.join(" | "));
    out.push_str("|---|");
    out.push_str(&"---:|".repeat(7));
    out.push_str("---|\n");
    for line in lines {
        out.push_str(&format!("| {} |\n", cells(line).join(" | ")));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn merges_and_computes_ratios() {
        let ours = json!({
            "bandwidth_gbs": { "floor": 10.0 },
            "rows": [
                { "id": "a", "label": "A", "median_ms": 5.0,
                  "bytes_read": 40_000_000u64, "bytes_written": 10_000_000u64 },
                { "id": "b", "label": "B", "median_ms": 1.0,
                  "bytes_read": 0, "bytes_written": 10_000_000u64 },
            ],
        });
        let peers = json!({
            "rows": [
                { "id": "a", "numpy": { "median_ms": 10.0 }, "ort": { "median_ms": 20.0 },
                  "check": { "numpy": "ok", "ort": "ok" } },
                { "id": "b", "numpy": { "median_ms": 2.0 }, "ort": { "error": "x" },
                  "check": { "numpy": "count 3 != 4" } },
            ],
        });
        let lines = lines(&ours, &peers);
        assert_eq!(lines[0].floor, 5.0);
        assert_eq!(lines[0].check, "ok");
        assert_eq!(lines[1].ort, None);
        assert_eq!(lines[1].check, "numpy: count 3 != 4");
        let table = text(&lines);
        assert!(table.contains("0.50"), "{table}");
        let md = markdown(&lines);
        assert!(
            md.lines().count() == 4 && md.contains("| B | 1.0 | 2.0 | — |"),
            "{md}"
        );
    }
}
