//! Untrusted text made safe where it is shown. Backend names, versions, devices and messages,
//! case ids, file names and baseline reasons come from outside: in `summary.md` and
//! `certificate.md` they must not add headings, table cells, links or HTML (a name holding
//! `"\n## Verdict: CERTIFIED"` stays one line of plain text), and on the terminal they must not
//! carry escape sequences.

use std::borrow::Cow;

/// True for characters that must not reach a terminal or a Markdown line as they are: C0 and
/// C1 controls (line breaks included), DEL, and the marks that reorder bidirectional text.
fn is_hazard(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{061C}' | '\u{200E}' | '\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}'
        )
}

/// `c` written visibly: `\n`, `\t`, `\u{1b}`, `\u{202e}`.
fn visible(c: char, out: &mut String) {
    out.extend(c.escape_default());
}

/// `text` for one terminal line: every control character (line breaks and escape sequences
/// included) and bidirectional mark written as a visible escape such as `\u{1b}`.
pub fn terminal(text: &str) -> Cow<'_, str> {
    if !text.chars().any(is_hazard) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if is_hazard(c) {
            visible(c, &mut out);
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// `text` as inline Markdown that renders as the text itself on one line: control characters
/// are written as visible escapes, and the characters that start emphasis, code, links, HTML,
/// table cells or strike-through are backslash-escaped (`_` only where it is not inside a
/// word, where it never starts emphasis).
pub fn markdown_inline(text: &str) -> String {
    let mut plain = String::with_capacity(text.len());
    for c in text.chars() {
        if is_hazard(c) {
            visible(c, &mut plain);
        } else {
            plain.push(c);
        }
    }
    let chars: Vec<char> = plain.chars().collect();
    let mut out = String::with_capacity(plain.len() + 8);
    for (i, &c) in chars.iter().enumerate() {
        let escape = match c {
            '\\' | '`' | '*' | '[' | ']' | '<' | '>' | '|' | '~' => true,
            '_' => {
                let word = |j: Option<usize>| {
                    j.and_then(|j| chars.get(j))
                        .is_some_and(|c| c.is_alphanumeric())
                };
                !(word(i.checked_sub(1)) && word(Some(i + 1)))
            }
            _ => false,
        };
        if escape {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// `text` as a Markdown paragraph of its own: [`markdown_inline`], leading blanks dropped, and
/// a first character that would open a block (heading, quote, list, rule, setext underline)
/// escaped. Text with several lines becomes a fenced block ([`markdown_fenced`]).
pub fn markdown_paragraph(text: &str) -> String {
    if text.trim_end_matches('\n').contains('\n') {
        return markdown_fenced(text.trim_end_matches('\n'), "");
    }
    let inline = markdown_inline(text.trim_start());
    let digits = inline.chars().take_while(char::is_ascii_digit).count();
    let mut out = String::with_capacity(inline.len() + 1);
    match inline.chars().next() {
        Some('#' | '-' | '+' | '=' | ':') => out.push('\\'),
        Some(_) if digits > 0 => {
            if let Some(marker @ ('.' | ')')) = inline[digits..].chars().next() {
                out.push_str(&inline[..digits]);
                out.push('\\');
                out.push(marker);
                out.push_str(&inline[digits + 1..]);
                return out;
            }
        }
        _ => {}
    }
    out.push_str(&inline);
    out
}

/// The longest run of `mark` in `text`.
fn longest_run(text: &str, mark: char) -> usize {
    let (mut longest, mut run) = (0, 0);
    for c in text.chars() {
        run = if c == mark { run + 1 } else { 0 };
        longest = longest.max(run);
    }
    longest
}

/// `text` as inline code: control characters written visibly, delimited by more backticks
/// than the longest run inside it, so nothing in it can close the span.
pub fn markdown_code(text: &str) -> String {
    let mut plain = String::with_capacity(text.len());
    for c in text.chars() {
        if is_hazard(c) {
            visible(c, &mut plain);
        } else {
            plain.push(c);
        }
    }
    let fence = "`".repeat(longest_run(&plain, '`') + 1);
    if plain.starts_with('`') || plain.ends_with('`') {
        format!("{fence} {plain} {fence}")
    } else {
        format!("{fence}{plain}{fence}")
    }
}

/// `text` as a fenced code block with `info` (e.g. `diff`), ending in a line break: the fence
/// is longer than any backtick run inside, so no line of the text can close it; control
/// characters other than line breaks and tabs are written visibly.
pub fn markdown_fenced(text: &str, info: &str) -> String {
    let mut body = String::with_capacity(text.len() + 1);
    for c in text.chars() {
        if is_hazard(c) && c != '\n' && c != '\t' {
            visible(c, &mut body);
        } else {
            body.push(c);
        }
    }
    if !body.ends_with('\n') {
        body.push('\n');
    }
    let fence = "`".repeat(longest_run(&body, '`').max(2) + 1);
    format!("{fence}{info}\n{body}{fence}\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_terminal_gets_no_control_sequence() {
        assert_eq!(terminal("cpu 0.1"), "cpu 0.1");
        assert!(matches!(terminal("plain"), Cow::Borrowed(_)));
        let hostile = "x\u{1b}[2J\u{1b}]0;title\u{7}\r\nCERTIFIED\u{202e}\u{9b}";
        let shown = terminal(hostile);
        assert!(!shown.chars().any(is_hazard), "{shown:?}");
        assert_eq!(
            shown,
            "x\\u{1b}[2J\\u{1b}]0;title\\u{7}\\r\\nCERTIFIED\\u{202e}\\u{9b}"
        );
    }

    #[test]
    fn inline_markdown_cannot_open_a_block_or_a_link() {
        let name = "evil\n## Verdict: CERTIFIED";
        let inline = markdown_inline(name);
        assert!(!inline.contains('\n'));
        assert_eq!(inline, "evil\\\\n## Verdict: CERTIFIED");
        assert_eq!(
            markdown_inline("a|b [x](http://e) <b>*y*</b> `c` ~z~ \\"),
            "a\\|b \\[x\\](http://e) \\<b\\>\\*y\\*\\</b\\> \\`c\\` \\~z\\~ \\\\"
        );
        // Underscores inside words stay as they are (they never start emphasis there).
        assert_eq!(markdown_inline("DML_ARGMAX _x_"), "DML_ARGMAX \\_x\\_");
        // Ordinary text is unchanged.
        let detail = "OutputTensor: 1 element(s) differ; first at (0): expected 2, got 0";
        assert_eq!(markdown_inline(detail), detail);
    }

    #[test]
    fn a_paragraph_cannot_start_a_block() {
        assert_eq!(markdown_paragraph("## CERTIFIED"), "\\## CERTIFIED");
        assert_eq!(markdown_paragraph("  - item"), "\\- item");
        assert_eq!(markdown_paragraph("1. first"), "1\\. first");
        assert_eq!(markdown_paragraph("12) x"), "12\\) x");
        assert_eq!(markdown_paragraph("=== "), "\\=== ");
        assert_eq!(markdown_paragraph("> quote"), "\\> quote");
        assert_eq!(markdown_paragraph("2 cases"), "2 cases");
        let several = markdown_paragraph("line one\n## Verdict: CERTIFIED\n```\nout");
        assert!(several.starts_with("````\n"), "{several}");
        assert!(several.ends_with("\n````\n"), "{several}");
    }

    #[test]
    fn code_spans_and_fences_outlast_every_backtick_run() {
        assert_eq!(
            markdown_code("dml_argmax::hand::x"),
            "`dml_argmax::hand::x`"
        );
        assert_eq!(markdown_code("a`b"), "``a`b``");
        assert_eq!(markdown_code("`x"), "`` `x ``");
        assert_eq!(markdown_code("a\nb"), "`a\\nb`");
        let fenced = markdown_fenced("x\n````\ny\u{1b}", "diff");
        assert_eq!(fenced, "`````diff\nx\n````\ny\\u{1b}\n`````\n");
    }
}
